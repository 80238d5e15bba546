// `takt validate` on io.toml as a user runs it (the real binary on a temp project): which drivers
// may share image bytes, and where a bad driver parameter is reported.
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "support/validate_report.h"

namespace takt::io::test {
namespace {

using takt::test::hasDiagnostic;
using takt::test::RunResult;
using takt::test::runTakt;
using takt::test::TempDir;
using takt::test::validateReport;

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
    rapidjson::Document doc = validateReport(r);
    EXPECT_TRUE(hasDiagnostic(doc, "error", "io.drivers[1]",
                              "writes %QB0..%QB2047 which io.drivers[0] (modbus-server) also writes"))
        << r.out;
}

// A bad driver parameter is reported at its own key, not at `driver =`.
TEST(ValidateIo, DriverParamErrorsCarryTheKeysLineAndColumn) {
    TempDir dir;
    writeProject(dir, "[io]\ndriver = \"modbus-tcp\"\n\n[io.params]\nunit_id = 1\n  address = \"127.0.0.1:99999\"\n");
    const RunResult r = runTakt("validate", dir.path());
    EXPECT_EQ(r.exitCode, 10) << r.out << r.err;
    EXPECT_NE(r.err.find("io.toml:6:3: error: io.params.address:"), std::string::npos) << r.err;

    // Inside an array of tables: the element's key.
    writeProject(dir, R"([io]
driver = "modbus-tcp"
[io.params]
address = "127.0.0.1:502"
inputs = [
  { area = "coils", start = 0, count = 8, address = "%IX0.0" },
  { start = 8, count = 8, address = "%IX1.0", area = "bits" },
]
)");
    const RunResult nested = runTakt("validate --ci", dir.path());
    EXPECT_EQ(nested.exitCode, 10) << nested.out;
    rapidjson::Document doc = validateReport(nested);
    bool found = false;
    for (const auto& d : doc["diagnostics"].GetArray()) {
        if (std::string(d["key"].GetString()) == "io.params.inputs[1].area") {
            found = true;
            EXPECT_EQ(d["line"].GetUint(), 7U) << nested.out;
            EXPECT_EQ(d["column"].GetUint(), 47U) << nested.out;
        }
    }
    EXPECT_TRUE(found) << nested.out;
}

} // namespace
} // namespace takt::io::test
