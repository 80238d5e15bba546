// `takt run --state-dir DIR`: the packaged service keeps its project read-only in /etc/takt and
// its state in /var/lib/takt. A relative runtime.retain.path and the control audit log go under
// DIR, nothing is written into the project, and a warm restart reads the retain slots from DIR.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/paths.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace takt::test {
namespace {

namespace fs = std::filesystem;

TEST(RunStateDir, RetainAndAuditLogGoUnderTheStateDirectoryNotTheProject) {
    TempDir dir;
    const fs::path project = dir.path() / "project";
    fs::copy(fs::path(TAKT_SOURCE_DIR) / "examples/demo", project, fs::copy_options::recursive);
    fs::remove_all(project / ".takt"); // left by a `takt run` of the demo in this checkout
    std::string toml = readText(project / "runtime.toml");
    const std::string endpoint = "endpoint = \"unix:///tmp/takt-demo.sock\"";
    ASSERT_NE(toml.find(endpoint), std::string::npos) << "examples/demo/runtime.toml changed";
    toml.replace(toml.find(endpoint), endpoint.size(),
                 "endpoint = \"unix://" + (dir.path() / "c.sock").string() + "\"");
    dir.write("project/runtime.toml", toml);
    // The demo retains nothing; one RETAIN variable makes the run save its slots.
    dir.write("project/src/retained.st", "VAR_GLOBAL RETAIN\n    g_starts : DINT := 7;\nEND_VAR\n");
    const fs::path state = dir.path() / "state";

    const RunResult r =
        runTakt("run --for 1s --project " + shellQuote(project.string()) + " --state-dir " + shellQuote(state.string()),
                {.capture = Capture::Merged});
    ASSERT_EQ(r.exitCode, 0) << r.out;
    EXPECT_TRUE(fs::exists(state / ".takt/retain.a") || fs::exists(state / ".takt/retain.b")) << r.out;
    EXPECT_TRUE(fs::exists(state / ".takt/audit.log")) << r.out;
    EXPECT_FALSE(fs::exists(project / ".takt")) << "state written into the project";

    const RunResult warm = runTakt("run --for 1s --restart warm --project " + shellQuote(project.string()) +
                                       " --state-dir " + shellQuote(state.string()),
                                   {.capture = Capture::Merged});
    ASSERT_EQ(warm.exitCode, 0) << warm.out;
    EXPECT_NE(warm.out.find("RETAIN variables restored from " + (state / ".takt/retain").string()), std::string::npos)
        << warm.out;
    EXPECT_FALSE(fs::exists(project / ".takt"));
}

} // namespace
} // namespace takt::test
