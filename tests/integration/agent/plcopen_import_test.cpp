// `takt import plcopen FILE.xml DIR` on a PLCopen XML of the kind the OpenPLC Editor and Beremiz
// write (tests/plcopen/mixer.xml: a PROGRAM, an FB, a function, a STRUCT, an ENUM, a subrange,
// located variables, two tasks): the project it writes builds, its tests pass under `takt test`,
// and the XML's program runs cycle by cycle in `takt harness` with the values its logic gives.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "support/agent_process.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "takt/compiler/plcopen.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;

fs::path fixturePath() {
    return fs::path(TAKT_SOURCE_DIR) / "tests/plcopen/mixer.xml";
}

std::string readAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string quoted(const std::string& s) {
    return test::shellQuote(s);
}

// TEST_PROGRAMs over the XML's FB, function and types, as a user adds them beside the import.
constexpr const char* kTests = R"(TEST_PROGRAM CounterCountsRisingEdges
VAR
  c : PulseCounter;
END_VAR
c(Pulse := TRUE);
c(Pulse := FALSE);
c(Pulse := TRUE);
ASSERT_EQUAL(2, c.Count);
c(Reset := TRUE);
ASSERT_EQUAL(0, c.Count);
END_TEST_PROGRAM

TEST_PROGRAM TypesFromTheXml
VAR
  r : Recipe;
  s : MixerState;
  p : Percent := 50;
END_VAR
ASSERT_EQUAL(500, r.FillLevel);
ASSERT_EQUAL(3, r.MixCycles);
ASSERT_EQUAL(MixerState#IDLE, s);
ASSERT_EQUAL(45, ToPercent(450));
ASSERT_EQUAL(100, ToPercent(2000));
ASSERT_EQUAL(50, p);
END_TEST_PROGRAM
)";

TEST(PlcopenImport, WritesAProjectThatBuildsAndPassesItsTests) {
    test::TempDir tmp;
    const fs::path dir = tmp.path() / "mixer";
    const test::RunResult r =
        test::runTakt("import plcopen " + quoted(fixturePath().string()) + " " + quoted(dir.string()));
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(readAll(dir / "src/mixer.xml"), readAll(fixturePath())); // the XML itself, unchanged
    const std::string runtime = readAll(dir / "runtime.toml");
    EXPECT_NE(runtime.find("name = \"Res0\""), std::string::npos) << runtime;
    EXPECT_NE(runtime.find("cycle_interval_ms = 10 "), std::string::npos) << runtime; // the fastest task
    const std::string io = readAll(dir / "io.toml");
    EXPECT_NE(io.find("driver = \"simulated\""), std::string::npos) << io;
    EXPECT_NE(io.find("address = \"%QX0.0\"    # MixerControl.InletValve\nvalue = \"FALSE\""), std::string::npos) << io;
    EXPECT_NE(io.find("address = \"%QW2\"    # MixerControl.FillPercent\nvalue = \"0\""), std::string::npos) << io;
    EXPECT_EQ(io.find("%IX0.0\"\n"), std::string::npos) << "inputs get no safe state: " << io;

    const test::RunResult validate = test::runTakt("validate --project " + quoted(dir.string()));
    EXPECT_EQ(validate.exitCode, 0) << validate.out << validate.err;
    const test::RunResult build = test::runTakt("build --project " + quoted(dir.string()));
    ASSERT_EQ(build.exitCode, 0) << build.out << build.err;
    EXPECT_TRUE(fs::exists(dir / "program.stbc"));

    // `takt run` runs both of the XML's tasks on their own intervals.
    const test::RunResult run =
        test::runTakt("run --for 300ms --project " + quoted(dir.string()), {.capture = test::Capture::Merged});
    ASSERT_EQ(run.exitCode, 0) << run.out;
    EXPECT_NE(run.out.find("running Res0"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("| FastTask cycles="), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("| MainTask cycles="), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find("MainTask cycles=0 "), std::string::npos) << run.out;

    std::ofstream(dir / "src/mixer_test.st") << kTests;
    const test::RunResult tests = test::runTakt("test --project " + quoted(dir.string()) + " --output json");
    ASSERT_EQ(tests.exitCode, 0) << tests.out << tests.err;
    rapidjson::Document d;
    d.Parse(tests.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << tests.out;
    EXPECT_EQ(d["summary"]["passed"].GetUint(), 2u) << tests.out;
}

TEST(PlcopenImport, RefusesAnExistingProjectAndWritesNothing) {
    test::TempDir tmp;
    tmp.write("mixer/runtime.toml", "[resource]\nname = \"mine\"\n");
    const fs::path dir = tmp.path() / "mixer";
    const test::RunResult r =
        test::runTakt("import plcopen " + quoted(fixturePath().string()) + " " + quoted(dir.string()));
    EXPECT_EQ(r.exitCode, 10);
    EXPECT_NE(r.err.find("exists and is not an empty directory; nothing was written"), std::string::npos) << r.err;
    EXPECT_EQ(readAll(dir / "runtime.toml"), "[resource]\nname = \"mine\"\n");
    EXPECT_FALSE(fs::exists(dir / "src"));
}

TEST(PlcopenImport, AnUnsupportedBodyIsACodedErrorAndNothingIsWritten) {
    test::TempDir tmp;
    std::string xml = readAll(fixturePath());
    const std::string st =
        "<ST>\n            <xhtml:p><![CDATA[Ticks := Ticks + 1;\nBeat := NOT Beat;]]></xhtml:p>\n          </ST>";
    const std::size_t at = xml.find(st);
    ASSERT_NE(at, std::string::npos);
    xml.replace(at, st.size(), "<LD>\n            <leftPowerRail localId=\"7\"/>\n          </LD>");
    tmp.write("heartbeat.xml", xml);
    const std::size_t line =
        std::count(xml.begin(), xml.begin() + static_cast<std::ptrdiff_t>(xml.find("<leftPowerRail")), '\n') + 1;
    const fs::path dir = tmp.path() / "beat";
    const test::RunResult r =
        test::runTakt("import plcopen " + quoted((tmp.path() / "heartbeat.xml").string()) + " " + quoted(dir.string()));
    EXPECT_EQ(r.exitCode, 10);
    EXPECT_NE(r.err.find("heartbeat.xml:" + std::to_string(line) +
                         ": error[E0027]: POU 'Heartbeat': a body in LD is not supported yet (only ST and FBD bodies "
                         "are read) (localId 7)"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir));
    EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1); // no staging left
}

// One NDJSON request line with `source` set to `text`.
std::string loadRequest(const std::string& text) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    w.StartObject();
    w.Key("cmd");
    w.String("load");
    w.Key("source");
    w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
    w.Key("initial_cycle");
    w.Bool(false);
    w.EndObject();
    return b.GetString();
}

TEST(PlcopenImport, TheXmlsProgramRunsCycleByCycleInTheHarness) {
    const compiler::PlcopenTranslation t = compiler::translatePlcopen(readAll(fixturePath()));
    ASSERT_TRUE(t.problems.empty());
    const std::vector<std::string> requests = {
        loadRequest(t.text),
        R"({"cmd":"set_direct_input","address":"%IX0.0","value":{"type":"BOOL","value":true}})",
        R"({"cmd":"cycle","count":4,"dt_ms":10})",
        R"({"cmd":"get_direct_output","address":"%QX0.0"})",
        R"({"cmd":"set_direct_input","address":"%IW1","value":{"type":"INT","value":450}})",
        R"({"cmd":"run_until","name":"Mixer0.State","equals":{"type":"ENUM","type_name":"MixerState","variant":"DRAINING"},"dt_ms":10,"max_cycles":40,"watch":["Mixer0.Turns.Count"]})",
        R"({"cmd":"get_direct_output","address":"%QW2"})",
        R"({"cmd":"get_direct_output","address":"%QX0.2"})",
        R"({"cmd":"set_direct_input","address":"%IW1","value":{"type":"INT","value":0}})",
        R"({"cmd":"set_direct_input","address":"%IX0.0","value":{"type":"BOOL","value":false}})",
        R"({"cmd":"run_until","name":"Mixer0.Batches","equals":{"type":"INT","value":1},"dt_ms":10,"max_cycles":10,"watch":["Mixer0.State","Mixer0.History"]})",
    };
    test::TempDir tmp;
    std::string script;
    for (const std::string& line : requests) {
        script += line + "\n";
    }
    tmp.write("requests.ndjson", script);
    const test::RunResult r = test::runTakt("harness < " + quoted((tmp.path() / "requests.ndjson").string()));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::vector<std::string> answers;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        answers.push_back(line);
    }
    ASSERT_EQ(answers.size(), requests.size()) << r.out;
    for (const std::string& a : answers) {
        EXPECT_TRUE(a.starts_with("{\"ok\":true")) << a;
    }
    // Four 10 ms cycles: the 10 ms task four times, the PT0.02S task twice; the start filled.
    EXPECT_NE(answers[2].find(R"("tasks":[{"name":"FastTask","cycles":4},{"name":"MainTask","cycles":2}])"),
              std::string::npos)
        << answers[2];
    EXPECT_NE(answers[3].find(R"("value":{"type":"BOOL","value":true})"), std::string::npos) << answers[3];
    // Mixed for the recipe's two turns of the counter, then draining with 45 % shown.
    EXPECT_NE(answers[5].find(R"("Mixer0.Turns.Count":{"type":"INT","value":2})"), std::string::npos) << answers[5];
    EXPECT_NE(answers[6].find(R"("value":{"type":"WORD","value":45})"), std::string::npos) << answers[6];
    EXPECT_NE(answers[7].find(R"("value":{"type":"BOOL","value":true})"), std::string::npos) << answers[7];
    // Drained: one batch, logged in the history the XML initialised to -1, back to IDLE.
    EXPECT_NE(answers[10].find(R"("variant":"IDLE")"), std::string::npos) << answers[10];
    EXPECT_NE(
        answers[10].find(
            R"("elements":[{"type":"INT","value":1},{"type":"INT","value":-1},{"type":"INT","value":-1},{"type":"INT","value":-1}])"),
        std::string::npos)
        << answers[10];
}

// The FBD network of tests/plcopen/fbd_network.xml beside its hand-written ST twin, loaded together
// into `takt harness` and compared cycle by cycle: the TON, the negated AND through a connector,
// the in-out counter and the function reading it give the same values in every cycle.
constexpr const char* kFbdTwin = R"(PROGRAM StMain
VAR
  Start, Lamp, Alarm : BOOL;
  Count, Scaled : INT;
  Delay : TON;
END_VAR
Delay(IN := Start, PT := T#30ms);
Lamp := Delay.Q;
Alarm := Start AND NOT Delay.Q;
Count := Count + 1;
Scaled := Count * 1;
END_PROGRAM
)";

TEST(PlcopenImport, AnFbdNetworkRunsLikeItsStTwinCycleByCycle) {
    const compiler::PlcopenTranslation t =
        compiler::translatePlcopen(readAll(fs::path(TAKT_SOURCE_DIR) / "tests/plcopen/fbd_network.xml"));
    ASSERT_TRUE(t.problems.empty());
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    w.StartObject();
    w.Key("cmd");
    w.String("load");
    w.Key("sources");
    w.StartArray();
    w.String(t.text.c_str(), static_cast<rapidjson::SizeType>(t.text.size()));
    w.String(kFbdTwin);
    w.EndArray();
    w.EndObject();
    const std::vector<std::string> names = {"Lamp", "Alarm", "Count", "Scaled"};
    std::string watch;
    for (const std::string& n : names) {
        watch += fmt::format("{}\"FbdMain.{}\",\"StMain.{}\"", watch.empty() ? "" : ",", n, n);
    }
    std::string script = std::string(b.GetString()) + "\n";
    constexpr int kCycles = 12;
    for (int i = 0; i < kCycles; ++i) {
        if (i == 2 || i == 9) { // Start rises, later falls
            const bool on = i == 2;
            for (const char* prog : {"FbdMain", "StMain"}) {
                script += fmt::format(R"({{"cmd":"set_input","name":"{}.Start","value":{{"type":"BOOL","value":{}}}}})",
                                      prog, on ? "true" : "false") +
                          "\n";
            }
        }
        script += fmt::format(R"({{"cmd":"cycle","dt_ms":10,"watch":[{}]}})", watch) + "\n";
    }
    test::TempDir tmp;
    tmp.write("requests.ndjson", script);
    const test::RunResult r = test::runTakt("harness < " + quoted((tmp.path() / "requests.ndjson").string()));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::istringstream lines(r.out);
    int cycles = 0;
    bool lampSeen = false;
    bool alarmSeen = false;
    for (std::string line; std::getline(lines, line);) {
        rapidjson::Document d;
        d.Parse(line.c_str());
        ASSERT_FALSE(d.HasParseError()) << line;
        ASSERT_TRUE(d["ok"].GetBool()) << line;
        if (!d["data"].HasMember("watch")) {
            continue;
        }
        ++cycles;
        const auto& v = d["data"]["watch"];
        for (const std::string& n : names) {
            const std::string fbd = "FbdMain." + n;
            const std::string st = "StMain." + n;
            ASSERT_TRUE(v.HasMember(fbd.c_str()) && v.HasMember(st.c_str())) << line;
            EXPECT_TRUE(v[fbd.c_str()]["value"] == v[st.c_str()]["value"]) << "cycle " << cycles << ": " << line;
        }
        lampSeen = lampSeen || v["FbdMain.Lamp"]["value"].GetBool();
        alarmSeen = alarmSeen || v["FbdMain.Alarm"]["value"].GetBool();
    }
    EXPECT_EQ(cycles, kCycles);
    EXPECT_TRUE(lampSeen);  // the TON elapsed while Start was on
    EXPECT_TRUE(alarmSeen); // and the alarm showed before it did
}

// The Agent API's lsp.format refuses a PLCopen XML file: its text is not ST, and the formatted
// translation would replace the XML.
TEST(PlcopenImport, TheAgentApiDoesNotFormatXml) {
    test::TempDir tmp;
    tmp.write("src/mixer.xml", readAll(fixturePath()));
    test::AgentProcess agent(TAKT_BINARY, tmp.path().string());
    ASSERT_TRUE(agent.running());
    std::string ready;
    ASSERT_TRUE(agent.readLine(ready));
    const std::string response =
        agent.call(R"({"jsonrpc":"2.0","id":1,"method":"lsp.format","params":{"path":"src/mixer.xml"}})");
    EXPECT_NE(response.find("'src/mixer.xml' is PLCopen XML: takt formats ST files only"), std::string::npos)
        << response;
    EXPECT_EQ(agent.finish(), 0);
    EXPECT_EQ(readAll(tmp.path() / "src/mixer.xml"), readAll(fixturePath()));
}

TEST(PlcopenImport, TaktFmtRefusesXmlAndLeavesItAlone) {
    test::TempDir tmp;
    const fs::path xml = tmp.write("mixer.xml", readAll(fixturePath()));
    const test::RunResult r = test::runTakt("fmt " + quoted(xml.string()));
    EXPECT_EQ(r.exitCode, 10);
    EXPECT_NE(r.err.find("is PLCopen XML: takt formats ST files only"), std::string::npos) << r.err;
    EXPECT_EQ(readAll(xml), readAll(fixturePath()));
}

} // namespace
} // namespace takt::agent
