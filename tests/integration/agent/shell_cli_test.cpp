// The engineer's shell end to end: `takt init` projects that run and test at once, `takt
// --version`, and status / vars / watch / write / force / unforce / events against a real `takt
// run` whose endpoint they read from the project's runtime.toml.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "support/control_live_support.h"
#include "support/wait.h"
#include "takt/bytecode/version.h"

namespace takt::agent::live {
namespace {

using test::Capture;
using test::runShell;
using test::shellQuote;

// `takt ARGS` run in `dir` (the default project), stdout and stderr apart.
test::RunResult taktIn(const fs::path& dir, const std::string& args) {
    return runShell("cd " + shellQuote(dir.string()) + " && " + shellQuote(TAKT_BINARY) + " " + args,
                    {.capture = Capture::Separate});
}

TEST(TaktVersion, NamesCommitBuildTypeAndBytecodeFormat) {
    TempDir dir;
    for (const char* args : {"--version", "version"}) {
        const test::RunResult r = taktIn(dir.path(), args);
        ASSERT_EQ(r.exitCode, 0) << r.err;
        EXPECT_NE(r.out.find("takt 0.1.0 (commit "), std::string::npos) << r.out;
        EXPECT_NE(r.out.find(" build, bytecode format " + std::to_string(bytecode::kFormatVersion) + ")"),
                  std::string::npos)
            << r.out;
    }
    const test::RunResult unknown = taktIn(dir.path(), "stat");
    EXPECT_EQ(unknown.exitCode, 10);
    EXPECT_NE(unknown.err.find("unknown command 'stat'; the commands are: "), std::string::npos) << unknown.err;
    EXPECT_NE(unknown.err.find("status"), std::string::npos) << unknown.err;
    EXPECT_EQ(unknown.err.find("retain-stress"), std::string::npos) << unknown.err; // hidden stays hidden
}

TEST(TaktInit, EveryTemplateRunsAndTestsAtOnce) {
    TempDir dir;
    for (const std::string t : {"blank", "motor", "modbus", "gpio"}) {
        const fs::path project = dir.path() / t;
        const test::RunResult init = taktIn(dir.path(), "init " + t + " --template " + t);
        ASSERT_EQ(init.exitCode, 0) << init.err;
        for (const char* file : {"runtime.toml", "io.toml", "src/main.st", "src/tests.st", ".gitignore"}) {
            EXPECT_TRUE(fs::exists(project / file)) << t << ": " << file;
        }
        EXPECT_NE(readText(project / ".gitignore").find("program.stbc\n.takt/\n"), std::string::npos);
        const test::RunResult tests = taktIn(project, "test");
        EXPECT_EQ(tests.exitCode, 0) << t << "\n" << tests.out << tests.err;
        EXPECT_NE(tests.out.find(" passed, 0 failed, 0 errors"), std::string::npos) << tests.out;
        const test::RunResult run = taktIn(project, "run --for 1500ms 2>&1");
        EXPECT_EQ(run.exitCode, 0) << t << "\n" << run.out;
        EXPECT_NE(run.out.find("I/O from io.toml"), std::string::npos) << run.out;
        EXPECT_NE(run.out.find("stopped (--for elapsed)"), std::string::npos) << run.out;
        EXPECT_EQ(run.out.find(" error "), std::string::npos) << run.out;
    }
    // The gpio template's field block, once uncommented, is a valid gpio io.toml.
    std::string io = readText(dir.path() / "gpio" / "io.toml");
    std::string gpio;
    for (std::size_t at = io.find("# [io]"); at != std::string::npos && at < io.size();) {
        const std::size_t end = io.find('\n', at);
        const std::string line = io.substr(at, end - at);
        if (!line.starts_with("#")) {
            break;
        }
        gpio += (line.size() > 2 ? line.substr(2) : std::string()) + "\n";
        at = end + 1;
    }
    ASSERT_NE(gpio.find("driver = \"gpio\""), std::string::npos) << gpio;
    const fs::path board = dir.path() / "gpio-board";
    fs::create_directories(board);
    fs::copy(dir.path() / "gpio" / "runtime.toml", board / "runtime.toml");
    fs::copy(dir.path() / "gpio" / "src", board / "src");
    std::ofstream(board / "io.toml") << gpio;
    const test::RunResult validate = taktIn(board, "validate");
    EXPECT_EQ(validate.exitCode, 0) << validate.out << validate.err;
    // An existing project is never overwritten; an unknown template is named.
    const test::RunResult again = taktIn(dir.path(), "init blank");
    EXPECT_EQ(again.exitCode, 10);
    EXPECT_NE(again.err.find("exists and is not an empty directory"), std::string::npos) << again.err;
    const test::RunResult bad = taktIn(dir.path(), "init x --template plc");
    EXPECT_EQ(bad.exitCode, 10);
    EXPECT_NE(bad.err.find("expected one of blank, motor, modbus, gpio"), std::string::npos) << bad.err;
}

// The modbus template reads its slave's status block: with no slave at its address the level is
// bad (not an empty tank), the code says why and the alarm is on.
TEST(TaktInit, TheModbusTemplateSeesItsSlaveMissing) {
    TempDir dir;
    ASSERT_EQ(taktIn(dir.path(), "init m --template modbus").exitCode, 0);
    const fs::path project = dir.path() / "m";
    Runtime runtime(project);
    ASSERT_TRUE(waitServing(runtime, clientOptions("unix://" + (project / ".takt" / "control.sock").string())))
        << runtime.log();
    std::string out;
    const bool seen = test::waitUntil(
        [&] {
            out = taktIn(project, "watch Main.SlaveOk Main.SlaveBad Main.SlaveError Main.HighAlarm --count 1").out;
            return out.find("Main.SlaveError=7") != std::string::npos; // communication lost, after 1 s
        },
        std::chrono::seconds(15), std::chrono::milliseconds(100));
    EXPECT_TRUE(seen) << out << runtime.log();
    EXPECT_NE(out.find("Main.SlaveOk=FALSE Main.SlaveBad=TRUE Main.SlaveError=7 Main.HighAlarm=TRUE"),
              std::string::npos)
        << out;
    EXPECT_EQ(runtime.stop(), 0) << runtime.log();
}

TEST(TaktJsonFlag, OneSpellingAcrossCommands) {
    TempDir dir;
    ASSERT_EQ(taktIn(dir.path(), "init p").exitCode, 0);
    const fs::path p = dir.path() / "p";
    for (const char* args : {"build --json", "validate --json", "test --json", "check --json", "build --ci"}) {
        const test::RunResult r = taktIn(p, args);
        EXPECT_EQ(r.exitCode, 0) << args << "\n" << r.out << r.err;
        rapidjson::Document d;
        d.Parse(r.out.c_str());
        EXPECT_TRUE(!d.HasParseError() && d.IsObject()) << args << ": " << r.out;
    }
    // --ci still works and is not advertised.
    EXPECT_EQ(taktIn(p, "build --help").out.find("--ci"), std::string::npos);
}

TEST(TaktRunIo, AProjectWithoutIoTomlSaysWhichBoardItRunsOn) {
    TempDir dir;
    ASSERT_EQ(taktIn(dir.path(), "init p").exitCode, 0);
    fs::remove(dir.path() / "p" / "io.toml");
    const test::RunResult run = taktIn(dir.path() / "p", "run --for 300ms 2>&1");
    EXPECT_EQ(run.exitCode, 0) << run.out;
    EXPECT_NE(run.out.find("warning no io.toml in "), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("the I/O is board host-sim's"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("--board NAME"), std::string::npos) << run.out;
}

// The motor template under `takt run`, the shell commands run from its directory.
class ShellCommands : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(taktIn(dir.path(), "init m --template motor").exitCode, 0);
        project = dir.path() / "m";
        runtime = std::make_unique<Runtime>(project);
        options = clientOptions("unix://" + (project / ".takt" / "control.sock").string());
        ASSERT_TRUE(waitServing(*runtime, options)) << runtime->log();
    }
    void TearDown() override { EXPECT_EQ(runtime->stop(), 0) << runtime->log(); }

    test::RunResult takt(const std::string& args) { return taktIn(project, args); }

    TempDir dir;
    fs::path project;
    std::unique_ptr<Runtime> runtime;
    ControlClientOptions options;
};

TEST_F(ShellCommands, StatusSummarisesTheRun) {
    const test::RunResult r = takt("status");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("state      running"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("task       MainTask every 10.000 ms"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("drivers    simulated ok"), std::string::npos) << r.out;
    const rapidjson::Document d = parse(takt("status --json").out);
    EXPECT_STREQ(d["status"]["state"].GetString(), "running");
    EXPECT_TRUE(d["stats"]["tasks"].IsArray());
    // --endpoint overrides the project's; a wrong one is unreachable (15).
    EXPECT_EQ(takt("status --endpoint unix:///nonexistent/x.sock").exitCode, 15);
}

TEST_F(ShellCommands, VarsListsPathsTypesAndAddresses) {
    const test::RunResult r = takt("vars Starter");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("Main.Starter.FeedbackTime"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("Main.StartButton"), std::string::npos) << r.out;       // filtered out
    EXPECT_EQ(r.out.find("StarterSealsInAndStops"), std::string::npos) << r.out; // tests never run in a scan
    const rapidjson::Document d = parse(takt("vars --json").out);
    bool found = false;
    for (const rapidjson::Value& v : d["variables"].GetArray()) {
        if (std::string_view(v["path"].GetString()) == "Main.StartButton") {
            found = true;
            EXPECT_STREQ(v["address"].GetString(), "%IX0.0");
            EXPECT_STREQ(v["type"].GetString(), "BOOL");
        }
    }
    EXPECT_TRUE(found);
}

TEST_F(ShellCommands, WatchWriteForceAndUnforceSpeakIecLiterals) {
    test::RunResult r = takt("write Main.OpMode Mode#Off");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("Main.OpMode := Mode#Off (cycle "), std::string::npos) << r.out;
    ASSERT_EQ(takt("write Main.Starter.FeedbackTime T#2s500ms").exitCode, 0);
    r = takt("watch Main.OpMode Main.Starter.FeedbackTime --count 2 --interval 50ms");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
    EXPECT_NE(r.out.find("cycle="), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" Main.OpMode=Mode#Off Main.Starter.FeedbackTime=T#2s500ms\n"), std::string::npos) << r.out;
    const rapidjson::Document w = parse(takt("watch Main.Starter.FeedbackTime --count 1 --json").out);
    EXPECT_STREQ(w["values"]["Main.Starter.FeedbackTime"]["literal"].GetString(), "T#2s500ms");
    EXPECT_EQ(w["values"]["Main.Starter.FeedbackTime"]["value"]["nanos"].GetInt64(), 2'500'000'000);

    r = takt("force Main.StopOk FALSE");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("Main.StopOk forced to FALSE"), std::string::npos) << r.out;
    ASSERT_EQ(takt("force %QX0.1 TRUE").exitCode, 0);
    auto client = connected(options);
    rapidjson::Document forced = result(*client, "var.forced", "");
    EXPECT_EQ(forced["forced"].Size(), 2u);
    EXPECT_NE(takt("vars StopOk").out.find("forced"), std::string::npos);
    r = takt("unforce --all");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("Main.StopOk released\n%QX0.1 released\n"), std::string::npos) << r.out;
    EXPECT_EQ(result(*client, "var.forced", "")["forced"].Size(), 0u);
    EXPECT_EQ(takt("unforce Main.StopOk").exitCode, 14); // not forced

    r = takt("write Main.OpMode T#1s");
    EXPECT_EQ(r.exitCode, 14);
    EXPECT_NE(r.err.find("value: 'T#1s' is not a value of Mode; expected one of Mode#Off, Mode#Manual, Mode#Auto"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(takt("write Main.NoSuch 1").exitCode, 14);
    EXPECT_EQ(takt("unforce").exitCode, 10);
}

// A write to a variable the inputs overwrite every cycle prints the value written, then says that
// it reads otherwise again: it used to print only the read-back (`:= FALSE`), a failed write to
// the eye. The same for a direct address.
TEST_F(ShellCommands, WritePrintsTheValueWrittenAndWhatItReadsSince) {
    // The read-back comes at a later cycle boundary; the input copy overwrote the write by then
    // unless the task was not due in between (a loaded machine): a few tries.
    test::RunResult r;
    bool noted = false;
    for (int i = 0; i < 5 && !noted; ++i) {
        r = takt("write Main.StartButton TRUE");
        ASSERT_EQ(r.exitCode, 0) << r.err;
        EXPECT_NE(r.out.find("Main.StartButton := TRUE (cycle "), std::string::npos) << r.out;
        noted = r.out.find("Main.StartButton reads FALSE at cycle ") != std::string::npos;
    }
    EXPECT_TRUE(noted) << r.out;
    EXPECT_NE(r.out.find("the inputs or the program changed it since"), std::string::npos) << r.out;
    r = takt("write %IX0.0 TRUE");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("%IX0.0 := TRUE (cycle "), std::string::npos) << r.out;
    // A variable nothing else assigns reads what was written: one line.
    r = takt("write Main.Starter.FeedbackTime T#750ms");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out.find("reads"), std::string::npos) << r.out;
    auto client = connected(options);
    const rapidjson::Document w =
        result(*client, "var.write", R"({"name":"Main.Starter.FeedbackTime","value":"T#1s"})");
    EXPECT_EQ(w["value"]["nanos"].GetInt64(), 1'000'000'000);
}

// stop, start and restart from the shell: each prints the state the runtime says it left.
TEST_F(ShellCommands, StopStartAndRestartPrintTheStateTheyLeft) {
    test::RunResult r = takt("stop");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("stopped at cycle "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(outputs in the safe state)"), std::string::npos) << r.out;
    EXPECT_NE(takt("status").out.find("state      stopped"), std::string::npos);
    r = takt("start");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("running at cycle "), std::string::npos) << r.out;
    ASSERT_EQ(takt("write Main.Starter.FeedbackTime T#2s500ms").exitCode, 0);
    r = takt("restart");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("running at cycle "), std::string::npos) << r.out;
    r = takt("restart --cold");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("running at cycle "), std::string::npos) << r.out;
    // A restart re-initialises the program: the written value is gone.
    EXPECT_EQ(takt("watch Main.Starter.FeedbackTime --count 1").out.find("T#2s500ms"), std::string::npos);
    EXPECT_EQ(takt("restart --warm").exitCode, 10); // an unknown option
}

TEST_F(ShellCommands, EventsStreamUntilSigterm) {
    test::Process events(test::taktArgv({"events", "--project", project.string()}), {.log = project / "events.log"});
    ASSERT_FALSE(events.waitForLine({"streaming from unix://"}).empty()) << events.log();
    auto client = connected(options);
    (void)result(*client, "runtime.pause", "");
    (void)result(*client, "runtime.resume", "");
    EXPECT_FALSE(events.waitForLine({"Z paused cycle="}).empty()) << events.log();
    EXPECT_FALSE(events.waitForLine({"Z resumed cycle="}).empty()) << events.log();
    EXPECT_EQ(events.terminate(std::chrono::seconds(5)), 0) << events.log();
}

} // namespace
} // namespace takt::agent::live
