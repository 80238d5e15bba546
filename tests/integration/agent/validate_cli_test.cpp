// `takt validate` and `takt boards` as a user runs them: the real binary on projects written to
// a temp directory; exit codes and the --ci document.
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/paths.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "support/validate_report.h"

namespace {

using takt::test::TempDir;

using takt::test::hasDiagnostic;
using takt::test::RunResult;
using takt::test::runTakt;
using takt::test::shellQuote;
using takt::test::validateReport;

constexpr const char* kRuntime = "[bundle]\nversion = 1\n[resource]\nname = \"cell\"\ncycle_interval_ms = 10\n"
                                 "[runtime.control]\nendpoint = \"unix:///tmp/takt-validate-test.sock\"\n";
constexpr const char* kIo = "[io]\ndriver = \"loopback\"\n[io.params]\nbytes = 4\n"
                            "[[io.safe_state]]\naddress = \"%QX0.0\"\nvalue = \"FALSE\"\n";
constexpr const char* kMain = "PROGRAM Main\nVAR\n  start AT %IX0.0 : BOOL;\n  motor AT %QX0.0 : BOOL;\nEND_VAR\n"
                              "motor := start;\nEND_PROGRAM\n";

// kRuntime with the control endpoint in `dir`: for the tests that also `takt run`, which listens
// there (the fixed path of kRuntime would collide with another test running at the same time).
std::string runtimeListeningIn(const TempDir& dir) {
    std::string toml = kRuntime;
    const std::string fixed = "unix:///tmp/takt-validate-test.sock";
    toml.replace(toml.find(fixed), fixed.size(), "unix://" + (dir.path() / "c.sock").string());
    return toml;
}

// A project with runtime.toml, io.toml and src/, built with `takt build`.
void writeProject(const TempDir& dir, const std::string& io = kIo, const std::string& main = kMain) {
    dir.write("runtime.toml", kRuntime);
    if (!io.empty()) {
        dir.write("io.toml", io);
    }
    dir.write("src/main.st", main);
    const RunResult built = runTakt("build --ci", dir.path());
    ASSERT_EQ(built.exitCode, 0) << built.out << built.err;
}

TEST(ValidateCli, GoodProjectIsOk) {
    TempDir dir;
    writeProject(dir);
    const RunResult r = runTakt("validate --ci", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    rapidjson::Document doc = validateReport(r);
    EXPECT_EQ(doc["version"].GetInt(), 1);
    EXPECT_STREQ(doc["command"].GetString(), "validate");
    EXPECT_STREQ(doc["status"].GetString(), "ok");
    EXPECT_STREQ(doc["resource"].GetString(), "cell");
    EXPECT_STREQ(doc["control_endpoint"].GetString(), "unix:///tmp/takt-validate-test.sock");
    EXPECT_STREQ(doc["io_driver"].GetString(), "loopback");
    ASSERT_EQ(doc["io_drivers"].Size(), 1U);
    EXPECT_STREQ(doc["io_source"].GetString(), "io.toml");
    EXPECT_TRUE(doc["program"].IsString());
    EXPECT_EQ(std::string(doc["program_hash"].GetString()).size(), 64U);
    EXPECT_EQ(doc["diagnostics"].Size(), 0U) << r.out;
    EXPECT_EQ(std::filesystem::path(doc["project"].GetString()), std::filesystem::canonical(dir.path()));
}

TEST(ValidateCli, HumanOutputSaysOk) {
    TempDir dir;
    writeProject(dir);
    const RunResult r = runTakt("validate --project " + shellQuote(dir.path().string()), "/");
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("takt validate: ok"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("loopback"), std::string::npos) << r.out;
}

TEST(ValidateCli, UnknownRuntimeKeyIsExit10WithPosition) {
    TempDir dir;
    writeProject(dir);
    dir.write("runtime.toml", std::string(kRuntime) + "[runtime.watchdog]\ntimeout = 5\n");
    const RunResult r = runTakt("validate --ci", dir.path());
    EXPECT_EQ(r.exitCode, 10) << r.out;
    rapidjson::Document doc = validateReport(r);
    EXPECT_STREQ(doc["status"].GetString(), "error");
    EXPECT_TRUE(doc["resource"].IsNull());
    ASSERT_TRUE(hasDiagnostic(doc, "error", "runtime.watchdog.timeout", "unknown key")) << r.out;
    for (const auto& d : doc["diagnostics"].GetArray()) {
        EXPECT_EQ(d["line"].GetUint(), 9U);
    }
    const RunResult human = runTakt("validate", dir.path());
    EXPECT_EQ(human.exitCode, 10);
    EXPECT_NE(human.err.find("runtime.toml:9:1: error: runtime.watchdog.timeout: unknown key"), std::string::npos)
        << human.err;
}

TEST(ValidateCli, DriverParamsAreCheckedByTheDriver) {
    TempDir dir;
    writeProject(dir, "[io]\ndriver = \"loopback\"\n[io.params]\nbytes = 0\n");
    const RunResult r = runTakt("validate --ci", dir.path());
    EXPECT_EQ(r.exitCode, 10) << r.out;
    rapidjson::Document doc = validateReport(r);
    EXPECT_TRUE(hasDiagnostic(doc, "error", "io.params.bytes", "1..65536")) << r.out;
}

TEST(ValidateCli, OverlappingDriversAreRejected) {
    TempDir dir;
    writeProject(dir, "[io]\ndrivers = [{ name = \"loopback\" }, { name = \"loopback\" }]\n");
    const RunResult r = runTakt("validate --ci", dir.path());
    EXPECT_EQ(r.exitCode, 10) << r.out;
    rapidjson::Document doc = validateReport(r);
    EXPECT_TRUE(
        hasDiagnostic(doc, "error", "io.drivers[1]", "writes %IB0..%IB63 which io.drivers[0] (loopback) also writes"))
        << r.out;
    EXPECT_EQ(doc["io_drivers"].Size(), 2U);
}

TEST(ValidateCli, UnwiredAddressAndUndrivenSafeStateWarn) {
    TempDir dir;
    writeProject(dir,
                 "[io]\ndriver = \"loopback\"\n[io.params]\nbytes = 2\n"
                 "[[io.safe_state]]\naddress = \"%QX7.0\"\nvalue = \"TRUE\"\n",
                 "PROGRAM Main\nVAR\n  far AT %IX5.0 : BOOL;\nEND_VAR\nEND_PROGRAM\n");
    const RunResult r = runTakt("validate --ci", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.out;
    rapidjson::Document doc = validateReport(r);
    EXPECT_STREQ(doc["status"].GetString(), "ok");
    EXPECT_TRUE(hasDiagnostic(doc, "warning", "io.safe_state", "%QX7.0")) << r.out;
    EXPECT_TRUE(hasDiagnostic(doc, "warning", "Main.far", "%IX5.0")) << r.out;
}

// A project shipped as program.stbc alone runs that file: a corrupt one cannot run.
TEST(ValidateCli, CorruptProgramWithoutSourcesIsExit10) {
    TempDir dir;
    writeProject(dir);
    std::filesystem::remove_all(dir.path() / "src");
    dir.write("program.stbc", "STBC but not really");
    const RunResult r = runTakt("validate --ci", dir.path());
    EXPECT_EQ(r.exitCode, 10) << r.out;
    rapidjson::Document doc = validateReport(r);
    EXPECT_TRUE(doc["program"].IsNull());
    ASSERT_GE(doc["diagnostics"].Size(), 1U);
}

// With sources beside it, `takt run` and `takt build` write program.stbc again: one left by an
// older takt (another format version) or damaged is a warning, and the wiring is checked on
// what the sources compile to.
TEST(ValidateCli, StaleProgramBesideSourcesIsAWarning) {
    TempDir dir;
    writeProject(dir, "[io]\ndriver = \"loopback\"\n[io.params]\nbytes = 2\n",
                 "PROGRAM Main\nVAR\n  far AT %IX5.0 : BOOL;\nEND_VAR\nEND_PROGRAM\n");
    dir.write("program.stbc", "STBC but not really");
    dir.write("runtime.toml", runtimeListeningIn(dir));
    const RunResult r = runTakt("validate --ci", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.out;
    rapidjson::Document doc = validateReport(r);
    EXPECT_TRUE(hasDiagnostic(doc, "warning", "", "write it again from the sources")) << r.out;
    EXPECT_TRUE(hasDiagnostic(doc, "warning", "Main.far", "%IX5.0 is not wired")) << r.out;
    const RunResult run = runTakt("run --for 50ms", dir.path());
    EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
}

// [build] sources_root names the ST folder for takt validate and takt run as for takt build:
// validate compiles it (the wiring warning comes from the sources) and run runs what it compiles
// to. Both used to look for src/ alone (and runtime.toml refused the key).
TEST(ValidateCli, SourcesRootIsCompiledByValidateAndRun) {
    TempDir dir;
    dir.write("runtime.toml", runtimeListeningIn(dir) + "[build]\nsources_root = \"plc/st\"\n");
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n[io.params]\nbytes = 2\n");
    dir.write("plc/st/main.st", "PROGRAM Main\nVAR\n  far AT %IX5.0 : BOOL;\nEND_VAR\nEND_PROGRAM\n");
    const RunResult r = runTakt("validate --ci", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.out;
    rapidjson::Document doc = validateReport(r);
    EXPECT_TRUE(hasDiagnostic(doc, "warning", "Main.far", "%IX5.0 is not wired")) << r.out;
    const RunResult run = runTakt("run --for 50ms", dir.path());
    EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
    EXPECT_NE((run.out + run.err).find("plc/st (1 sources)"), std::string::npos) << run.out << run.err;
}

TEST(ValidateCli, MissingRuntimeTomlIsExit10) {
    TempDir dir;
    dir.write("io.toml", kIo);
    const RunResult r = runTakt("validate --ci", dir.path());
    EXPECT_EQ(r.exitCode, 10) << r.out;
    rapidjson::Document doc = validateReport(r);
    EXPECT_TRUE(hasDiagnostic(doc, "error", "", "missing runtime.toml")) << r.out;
}

TEST(ValidateCli, BoardSuppliesTheIoWhenTheProjectHasNone) {
    TempDir dir;
    writeProject(dir, "");
    const RunResult r = runTakt("validate --ci --board raspberry-pi-4", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    rapidjson::Document doc = validateReport(r);
    EXPECT_STREQ(doc["io_source"].GetString(), "board raspberry-pi-4");
    EXPECT_STREQ(doc["board"].GetString(), "raspberry-pi-4");
    EXPECT_STREQ(doc["io_driver"].GetString(), "gpio");
}

TEST(ValidateCli, UnknownBoardIsExit10) {
    TempDir dir;
    writeProject(dir, "");
    const RunResult r = runTakt("validate --ci --board amiga-500", dir.path());
    EXPECT_EQ(r.exitCode, 10) << r.out;
    rapidjson::Document doc = validateReport(r);
    EXPECT_TRUE(hasDiagnostic(doc, "error", "", "no board \"amiga-500\"")) << r.out;
}

TEST(ValidateCli, BoardAloneOutsideAProject) {
    TempDir dir;
    const RunResult r = runTakt("validate --ci --board x86-ipc-modbus", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    rapidjson::Document doc = validateReport(r);
    EXPECT_TRUE(doc["project"].IsNull());
    EXPECT_EQ(doc["io_drivers"].Size(), 2U);
    // A broken board file given by path is reported with its line.
    dir.write("bad.toml",
              "name = \"bad\"\ndescription = \"x\"\narch = \"x86_64\"\n[io]\ndriver = \"gpio\"\nchip = 1\n");
    const RunResult bad = runTakt("validate --ci --board ./bad.toml", dir.path());
    EXPECT_EQ(bad.exitCode, 10) << bad.out;
    rapidjson::Document badDoc = validateReport(bad);
    EXPECT_TRUE(hasDiagnostic(badDoc, "error", "io.chip", "unknown key")) << bad.out;
}

TEST(ValidateCli, DemoProjectValidates) {
    const RunResult r =
        runTakt("validate --ci --project " + shellQuote(std::string(TAKT_SOURCE_DIR) + "/examples/demo"), "/");
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    rapidjson::Document doc = validateReport(r);
    EXPECT_STREQ(doc["resource"].GetString(), "filling_line");
    EXPECT_STREQ(doc["io_driver"].GetString(), "simulated");
    for (const auto& d : doc["diagnostics"].GetArray()) {
        EXPECT_STREQ(d["severity"].GetString(), "warning") << r.out;
    }
}

TEST(BoardsCli, ListsEveryBoard) {
    const RunResult r = runTakt("boards", "/");
    EXPECT_EQ(r.exitCode, 0) << r.err;
    for (const char* name : {"host-sim", "raspberry-pi-4", "raspberry-pi-5", "beaglebone-black", "x86-ipc-modbus"}) {
        EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
    }
    EXPECT_EQ(r.out.find("invalid"), std::string::npos) << r.out;
}

} // namespace
