// `takt validate` on io.toml as a user runs it (the real binary on a temp project): which drivers
// may share image bytes.
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace takt::io::test {
namespace {

using takt::test::RunResult;
using takt::test::runTakt;
using takt::test::TempDir;

rapidjson::Document json(const RunResult& r) {
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    EXPECT_FALSE(doc.HasParseError()) << r.out << r.err;
    EXPECT_TRUE(doc.IsObject()) << r.out;
    return doc;
}

bool hasDiagnostic(const rapidjson::Document& doc, const char* severity, const std::string& key,
                   const std::string& text) {
    for (const auto& d : doc["diagnostics"].GetArray()) {
        if (std::string(d["severity"].GetString()) == severity && std::string(d["key"].GetString()) == key &&
            std::string(d["message"].GetString()).find(text) != std::string::npos) {
            return true;
        }
    }
    return false;
}

// A project with runtime.toml, `io` as io.toml and a program using %QX0.0, built with `takt build`.
void writeProject(const TempDir& dir, const std::string& io) {
    dir.write("runtime.toml", "[bundle]\nversion = 1\n[resource]\nname = \"cell\"\ncycle_interval_ms = 10\n");
    dir.write("io.toml", io);
    dir.write("src/main.st", "PROGRAM Main\nVAR\n  motor AT %QX0.0 : BOOL;\nEND_VAR\nmotor := TRUE;\nEND_PROGRAM\n");
    const RunResult built = runTakt("build --ci", dir.path());
    ASSERT_EQ(built.exitCode, 0) << built.out << built.err;
}

// What every plant has: outputs served to SCADA by modbus-server and published as telemetry by
// mqtt (per variable and as the whole image). mqtt only reads %Q, so it shares the bytes.
TEST(ValidateIo, ADriverThatOnlyReadsOutputsSharesThem) {
    TempDir dir;
    writeProject(dir, R"([io]
drivers = [
  { name = "modbus-server", params = { listen = "127.0.0.1:15020" } },
  { name = "mqtt", params = { broker = "127.0.0.1:1883", client_id = "plc", topic_out = "line1/out", publish = [{ address = "%QX0.0", type = "BOOL", topic = "line1/motor" }] } },
]
)");
    const RunResult r = runTakt("validate --ci", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
}

// Two writers of the same bytes stay an error naming both: two servers whose masters may write
// the same coils.
TEST(ValidateIo, TwoWritersOfTheSameOutputsAreRejected) {
    TempDir dir;
    writeProject(dir, R"([io]
drivers = [
  { name = "modbus-server", params = { listen = "127.0.0.1:15020" } },
  { name = "modbus-server", params = { listen = "127.0.0.1:15021", map = [{ table = "coils", start = 0, count = 16, address = "%QX0.0" }] } },
]
)");
    const RunResult r = runTakt("validate --ci", dir.path());
    EXPECT_EQ(r.exitCode, 10) << r.out;
    rapidjson::Document doc = json(r);
    EXPECT_TRUE(hasDiagnostic(doc, "error", "io.drivers[1]",
                              "writes %QB0..%QB2047 which io.drivers[0] (modbus-server) also writes"))
        << r.out;
}

} // namespace
} // namespace takt::io::test
