// `takt run` with [runtime.retain]: the real binary saves RETAIN variables into A/B slots,
// a warm start (the default) continues from them, a cold start does not. The test reads the
// newest slot back with the retain store, as the next start-up would.
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/io_test_support.h"
#include "support/takt_cli.h"
#include "takt/engine/retain.h"

namespace takt::io {
namespace {

namespace fs = std::filesystem;

// `starts` counts start-ups (first cycle of every run), `cycles` counts cycles; both RETAIN.
constexpr const char* kProgram = R"(PROGRAM Main
VAR RETAIN
    starts : DINT;
    cycles : DINT;
END_VAR
VAR
    first : BOOL := TRUE;
END_VAR
IF first THEN
    starts := starts + 1;
    first := FALSE;
END_IF;
cycles := cycles + 1;
END_PROGRAM
)";

constexpr const char* kRuntime = R"([bundle]
version = 1

[resource]
name = "cell"
cycle_interval_ms = 5

[runtime.retain]
mode = "file"
path = ".takt/retain"
save_interval_ms = 50
)";

constexpr const char* kIo = "[io]\ndriver = \"loopback\"\n";

int run(const fs::path& project, const std::string& restart) {
    return takt::test::runTakt("run --project " + project.string() + " --for 400ms --restart " + restart + " > " +
                               (project / "run.log").string() + " 2>&1")
        .exitCode;
}

// The value of a retained DINT in the newest valid slot.
std::int32_t retained(const fs::path& project, const std::string& name) {
    engine::RetainStore store(project / ".takt" / "retain");
    const engine::RetainLoadResult r = store.load();
    EXPECT_TRUE(r.found);
    EXPECT_TRUE(r.rejected.empty());
    for (const bytecode::VarEntry& v : r.image.layout.variables) {
        std::string path = v.path;
        for (char& c : path) {
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
        if (path == "MAIN." + name && v.offset + 4 <= r.image.payload.size()) {
            std::int32_t value = 0;
            std::memcpy(&value, r.image.payload.data() + v.offset, 4);
            return value;
        }
    }
    ADD_FAILURE() << name << " not in the retain image";
    return -1;
}

TEST(TaktRunRetain, WarmStartContinuesColdStartBeginsAgain) {
    test::TempDir dir;
    fs::create_directories(dir.path() / "src");
    dir.write("src/main.st", kProgram);
    dir.write("runtime.toml", kRuntime);
    dir.write("io.toml", kIo);

    ASSERT_EQ(run(dir.path(), "warm"), 0); // nothing saved yet: starts cold
    EXPECT_EQ(retained(dir.path(), "STARTS"), 1);
    const std::int32_t firstCycles = retained(dir.path(), "CYCLES");
    EXPECT_GT(firstCycles, 10); // saved on stop: the whole run's cycles

    ASSERT_EQ(run(dir.path(), "warm"), 0);
    EXPECT_EQ(retained(dir.path(), "STARTS"), 2);
    EXPECT_GT(retained(dir.path(), "CYCLES"), firstCycles);

    ASSERT_EQ(run(dir.path(), "cold"), 0);
    EXPECT_EQ(retained(dir.path(), "STARTS"), 1);
}

TEST(TaktRunRetain, ModeNoneWritesNoSlots) {
    test::TempDir dir;
    fs::create_directories(dir.path() / "src");
    dir.write("src/main.st", kProgram);
    std::string runtime = kRuntime;
    runtime.replace(runtime.find("mode = \"file\""), 13, "mode = \"none\"");
    dir.write("runtime.toml", runtime);
    dir.write("io.toml", kIo);
    ASSERT_EQ(run(dir.path(), "warm"), 0);
    EXPECT_FALSE(fs::exists(dir.path() / ".takt" / "retain.a"));
    EXPECT_FALSE(fs::exists(dir.path() / ".takt" / "retain.b"));
}

} // namespace
} // namespace takt::io
