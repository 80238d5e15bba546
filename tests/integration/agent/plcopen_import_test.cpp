// `takt import plcopen FILE.xml DIR` on a PLCopen XML of the kind the OpenPLC Editor and Beremiz
// write (tests/plcopen/mixer.xml: a PROGRAM, an FB, a function, a STRUCT, an ENUM, a subrange,
// located variables, two tasks): the project it writes builds, its tests pass under `takt test`,
// and the XML's program runs cycle by cycle in `takt harness` with the values its logic gives.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
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
    xml.replace(at, st.size(), "<IL>\n            <xhtml:p>LD TRUE</xhtml:p>\n          </IL>");
    tmp.write("heartbeat.xml", xml);
    const std::size_t line =
        std::count(xml.begin(), xml.begin() + static_cast<std::ptrdiff_t>(xml.find("<IL>")), '\n') + 1;
    const fs::path dir = tmp.path() / "beat";
    const test::RunResult r =
        test::runTakt("import plcopen " + quoted((tmp.path() / "heartbeat.xml").string()) + " " + quoted(dir.string()));
    EXPECT_EQ(r.exitCode, 10);
    const std::size_t column = xml.find("<IL>") - xml.rfind('\n', xml.find("<IL>"));
    EXPECT_NE(r.err.find("heartbeat.xml:" + std::to_string(line) + ":" + std::to_string(column) +
                         ": error[E0027]: POU 'Heartbeat': a body in IL is not supported yet (only ST, FBD, LD and SFC "
                         "bodies are read)"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir));
    EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1); // no staging left
}

// A warning (here W0017: a statement in a loop reads an FB called after it) is printed with the
// element's line and column, and the project is written all the same.
TEST(PlcopenImport, AWarningIsPrintedAndTheProjectIsWritten) {
    test::TempDir tmp;
    const std::string xml =
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
        "<project xmlns=\"http://www.plcopen.org/xml/tc6_0201\" xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">\n"
        "  <fileHeader companyName=\"c\" productName=\"p\" productVersion=\"1\" "
        "creationDateTime=\"2024-01-01T00:00:00\"/>\n"
        "  <contentHeader name=\"plant\"/>\n"
        "  <types><dataTypes/><pous>\n"
        "    <pou name=\"J\" pouType=\"program\"><interface><localVars>"
        "<variable name=\"A\"><type><BOOL/></type></variable><variable name=\"B\"><type><BOOL/></type></variable>"
        "<variable name=\"C\"><type><derived name=\"TON\"/></type></variable></localVars></interface>\n"
        "      <body><FBD>\n"
        "        <inVariable localId=\"1\"><expression>A</expression></inVariable>\n"
        "        <inVariable localId=\"9\"><expression>T#1s</expression></inVariable>\n"
        "        <label localId=\"3\" label=\"L\"/>\n"
        "        <outVariable localId=\"2\"><connectionPointIn><connection refLocalId=\"5\" formalParameter=\"Q\"/>"
        "</connectionPointIn><expression>B</expression></outVariable>\n"
        "        <jump localId=\"4\" label=\"L\"><connectionPointIn><connection refLocalId=\"1\"/>"
        "</connectionPointIn></jump>\n"
        "        <block localId=\"5\" typeName=\"TON\" instanceName=\"C\"><inputVariables>"
        "<variable formalParameter=\"IN\"><connectionPointIn><connection refLocalId=\"1\"/></connectionPointIn>"
        "</variable><variable formalParameter=\"PT\"><connectionPointIn><connection refLocalId=\"9\"/>"
        "</connectionPointIn></variable></inputVariables><inOutVariables/><outputVariables>"
        "<variable formalParameter=\"Q\"><connectionPointOut/></variable></outputVariables></block>\n"
        "      </FBD></body></pou>\n"
        "  </pous></types>\n"
        "</project>\n";
    tmp.write("loop.xml", xml);
    const std::size_t block = xml.find("<block localId=\"5\"");
    const std::size_t line = std::count(xml.begin(), xml.begin() + static_cast<std::ptrdiff_t>(block), '\n') + 1;
    const std::size_t column = block - xml.rfind('\n', block);
    const fs::path dir = tmp.path() / "plant";
    const test::RunResult r =
        test::runTakt("import plcopen " + quoted((tmp.path() / "loop.xml").string()) + " " + quoted(dir.string()));
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("loop.xml:" + std::to_string(line) + ":" + std::to_string(column) +
                         ": warning[W0017]: POU 'J': the statement at localId 2"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(fs::exists(dir / "src" / "loop.xml"));
    EXPECT_TRUE(fs::exists(dir / "runtime.toml"));
    // A file without located variables says so in io.toml, rather than announcing an empty list.
    const std::string io = readAll(dir / "io.toml");
    EXPECT_NE(io.find("The file declares no located variables.\n[io]"), std::string::npos) << io;
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

// Runs `takt harness` on `requests`, one a line, and returns its answers, one a line, each of
// which must be a success.
std::vector<std::string> harnessAnswers(const std::vector<std::string>& requests) {
    test::TempDir tmp;
    std::string script;
    for (const std::string& line : requests) {
        script += line + "\n";
    }
    tmp.write("requests.ndjson", script);
    const test::RunResult r = test::runTakt("harness < " + quoted((tmp.path() / "requests.ndjson").string()));
    EXPECT_EQ(r.exitCode, 0) << r.err;
    std::vector<std::string> answers;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        EXPECT_TRUE(line.starts_with("{\"ok\":true")) << line;
        answers.push_back(line);
    }
    EXPECT_EQ(answers.size(), requests.size()) << r.out;
    return answers;
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
    const std::vector<std::string> answers = harnessAnswers(requests);
    ASSERT_EQ(answers.size(), requests.size());
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

// Loads the program `xmlProgram` of the PLCopen XML `fixture` (tests/plcopen/) beside its
// hand-written ST twin `StMain` into one `takt harness`, runs `cycles` cycles of 10 ms setting the
// BOOL inputs `inputs` gives for a cycle in both programs, and compares each of `names` in both
// after every cycle. Returns, per name, the values seen in the XML's program, cycle by cycle.
std::map<std::string, std::vector<std::string>>
runBesideTwin(const std::string& fixture, const std::string& xmlProgram, const char* twin,
              const std::vector<std::string>& names,
              const std::map<int, std::vector<std::pair<std::string, bool>>>& inputs, int cycles) {
    std::map<std::string, std::vector<std::string>> seen;
    const compiler::PlcopenTranslation t =
        compiler::translatePlcopen(readAll(fs::path(TAKT_SOURCE_DIR) / "tests/plcopen" / fixture));
    EXPECT_TRUE(t.problems.empty()) << (t.problems.empty() ? "" : t.problems[0].message);
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    w.StartObject();
    w.Key("cmd");
    w.String("load");
    w.Key("sources");
    w.StartArray();
    w.String(t.text.c_str(), static_cast<rapidjson::SizeType>(t.text.size()));
    w.String(twin);
    w.EndArray();
    w.EndObject();
    std::string watch;
    for (const std::string& n : names) {
        watch += fmt::format("{}\"{}.{}\",\"StMain.{}\"", watch.empty() ? "" : ",", xmlProgram, n, n);
    }
    std::vector<std::string> requests = {b.GetString()};
    for (int i = 0; i < cycles; ++i) {
        if (const auto it = inputs.find(i); it != inputs.end()) {
            for (const auto& [name, on] : it->second) {
                for (const std::string& prog : {xmlProgram, std::string("StMain")}) {
                    requests.push_back(
                        fmt::format(R"({{"cmd":"set_input","name":"{}.{}","value":{{"type":"BOOL","value":{}}}}})",
                                    prog, name, on ? "true" : "false"));
                }
            }
        }
        requests.push_back(fmt::format(R"({{"cmd":"cycle","dt_ms":10,"watch":[{}]}})", watch));
    }
    int cycle = 0;
    for (const std::string& line : harnessAnswers(requests)) {
        rapidjson::Document d;
        d.Parse(line.c_str());
        if (d.HasParseError() || !d.IsObject() || !d["ok"].GetBool()) {
            ADD_FAILURE() << line;
            return seen;
        }
        if (!d.HasMember("data") || !d["data"].IsObject() || !d["data"].HasMember("watch")) {
            continue;
        }
        ++cycle;
        const auto& v = d["data"]["watch"];
        for (const std::string& n : names) {
            const std::string xml = xmlProgram + "." + n;
            const std::string st = "StMain." + n;
            if (!v.HasMember(xml.c_str()) || !v.HasMember(st.c_str())) {
                ADD_FAILURE() << n << " not watched: " << line;
                return seen;
            }
            EXPECT_TRUE(v[xml.c_str()]["value"] == v[st.c_str()]["value"]) << "cycle " << cycle << ": " << line;
            rapidjson::StringBuffer value;
            rapidjson::Writer<rapidjson::StringBuffer> vw(value);
            v[xml.c_str()]["value"].Accept(vw);
            seen[n].push_back(value.GetString());
        }
    }
    EXPECT_EQ(cycle, cycles);
    return seen;
}

bool ever(const std::vector<std::string>& values, const std::string& value) {
    return std::find(values.begin(), values.end(), value) != values.end();
}

// The FBD network of tests/plcopen/fbd_network.xml beside its hand-written ST twin: the TON, the
// negated AND through a connector, the in-out counter and the function reading it give the same
// values in every cycle.
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
    auto seen = runBesideTwin("fbd_network.xml", "FbdMain", kFbdTwin, {"Lamp", "Alarm", "Count", "Scaled"},
                              {{2, {{"Start", true}}}, {9, {{"Start", false}}}}, 12);
    EXPECT_TRUE(ever(seen["Lamp"], "true"));  // the TON elapsed while Start was on
    EXPECT_TRUE(ever(seen["Alarm"], "true")); // and the alarm showed before it did
}

// The LD network of tests/plcopen/ld_network.xml beside its hand-written ST twin: a seal-in rung
// (parallel contacts, a negated one), set and reset coils on a rising-edge contact, a negated and
// a rising-edge coil, ADD under EN on a falling-edge contact with ENO on a coil, a TON, and a CTU
// under EN.
constexpr const char* kLdTwin = R"(PROGRAM StMain
VAR
  Start, Stop, Jog, Run, Latch, Idle, RunPulse, Stopped, Lamp, JogOn : BOOL;
  Count, PulseCount : INT;
  Delay : TON;
  Pulses : CTU;
  StartRise, RunRise : R_TRIG;
  RunFall : F_TRIG;
END_VAR
Run := (Start OR Run) AND NOT Stop;
StartRise(CLK := Start);
IF StartRise.Q THEN
  Latch := TRUE;
END_IF;
IF Stop THEN
  Latch := FALSE;
END_IF;
Idle := NOT Run;
RunRise(CLK := Run);
RunPulse := RunRise.Q;
RunFall(CLK := Run);
IF RunFall.Q THEN
  Count := Count + 1;
END_IF;
Stopped := RunFall.Q;
Delay(IN := Run, PT := T#30ms);
Lamp := Delay.Q;
IF Jog THEN
  Pulses(CU := Start, PV := 100);
END_IF;
JogOn := Jog;
PulseCount := Pulses.CV;
END_PROGRAM
)";

TEST(PlcopenImport, AnLdNetworkRunsLikeItsStTwinCycleByCycle) {
    auto seen = runBesideTwin("ld_network.xml", "LdMain", kLdTwin,
                              {"Run", "Latch", "Idle", "RunPulse", "Stopped", "Lamp", "JogOn", "Count", "PulseCount"},
                              {{1, {{"Start", true}}},
                               {2, {{"Start", false}}},
                               {3, {{"Jog", true}}},
                               {4, {{"Start", true}}},
                               {5, {{"Start", false}}},
                               {6, {{"Start", true}}},
                               {7, {{"Start", false}, {"Jog", false}}},
                               {9, {{"Stop", true}}},
                               {10, {{"Stop", false}, {"Start", true}}},
                               {11, {{"Start", false}}},
                               {12, {{"Start", true}}},
                               {13, {{"Start", false}}}},
                              18);
    for (const char* n : {"Run", "Latch", "Idle", "RunPulse", "Stopped", "Lamp", "JogOn"}) {
        EXPECT_TRUE(ever(seen[n], "true")) << n;
        EXPECT_TRUE(ever(seen[n], "false")) << n;
    }
    // Two falling edges of Run: the stop, and the first cycle, where the F_TRIG (as the
    // standard's, and as the OpenPLC Editor lowers a falling-edge contact) sees a FALSE input as
    // fallen; two rises of Start while Jog was on (the third one, with Jog off, did not call the
    // CTU).
    ASSERT_FALSE(seen["Count"].empty());
    EXPECT_EQ(seen["Count"].front(), "1");
    EXPECT_EQ(seen["Count"].back(), "2");
    EXPECT_EQ(seen["PulseCount"].back(), "2");
}

// The jumps, labels and returns of tests/plcopen/jumps.xml, in LD and in FBD, beside their ST twins.
constexpr const char* kLdJumpsTwin = R"(PROGRAM StMain
VAR
  Skip, Halt, Start, Lamp, Beyond : BOOL;
  Count : INT;
END_VAR
IF NOT Skip THEN
  Lamp := Start;
  Count := Count + 1;
END_IF;
IF Halt THEN
  RETURN;
END_IF;
Beyond := Start;
END_PROGRAM
)";

constexpr const char* kFbdJumpsTwin = R"(PROGRAM StMain
VAR
  Skip, Halt : BOOL;
  Count, Shown : INT;
END_VAR
IF NOT Skip THEN
  Count := Count + 1;
END_IF;
IF Halt THEN
  RETURN;
END_IF;
Shown := Count;
END_PROGRAM
)";

TEST(PlcopenImport, JumpsAndReturnsRunLikeTheirStTwinsCycleByCycle) {
    const std::map<int, std::vector<std::pair<std::string, bool>>> inputs = {
        {1, {{"Start", true}}}, {3, {{"Skip", true}}},  {4, {{"Start", false}}}, {6, {{"Halt", true}}},
        {7, {{"Skip", false}}}, {9, {{"Start", true}}}, {11, {{"Halt", false}}}};
    auto ld = runBesideTwin("jumps.xml", "LdJumps", kLdJumpsTwin, {"Lamp", "Beyond", "Count"}, inputs, 14);
    // Count stood still while Skip was on (cycles 3 to 6); Beyond stayed while Halt was on.
    ASSERT_EQ(ld["Count"].size(), 14u);
    EXPECT_EQ(ld["Count"][2], ld["Count"][6]);
    EXPECT_NE(ld["Count"][7], ld["Count"][6]);
    EXPECT_EQ(ld["Beyond"][9], "false"); // Start rose in cycle 9 while Halt returned first
    EXPECT_EQ(ld["Beyond"][12], "true");
    std::map<int, std::vector<std::pair<std::string, bool>>> fbdInputs = inputs;
    for (auto& [cycle, list] : fbdInputs) {
        std::erase_if(list, [](const auto& in) { return in.first == "Start"; });
    }
    auto fbd = runBesideTwin("jumps.xml", "FbdJumps", kFbdJumpsTwin, {"Count", "Shown"}, fbdInputs, 14);
    ASSERT_EQ(fbd["Shown"].size(), 14u);
    EXPECT_EQ(fbd["Shown"][5], fbd["Shown"][10]); // returned before Shown while Halt was on
    EXPECT_NE(fbd["Shown"][12], fbd["Shown"][10]);
}

// The loop of tests/plcopen/loops.xml (a jump back to a label above it, inside a forward jump's
// range) beside its ST twin: I counts to N within each cycle, Total adds 1 + 2 + 3 per cycle.
constexpr const char* kLoopTwin = R"(PROGRAM StMain
VAR
  Idle : BOOL;
  N : INT := 3;
  I, Total, Passes : INT;
END_VAR
IF NOT Idle THEN
  I := 0;
  REPEAT
    I := I + 1;
    Total := Total + I;
  UNTIL NOT (I < N)
  END_REPEAT;
END_IF;
Passes := Passes + 1;
END_PROGRAM
)";

TEST(PlcopenImport, AJumpBackLoopsLikeItsStTwinCycleByCycle) {
    auto seen = runBesideTwin("loops.xml", "FbdLoop", kLoopTwin, {"I", "Total", "Passes"},
                              {{3, {{"Idle", true}}}, {5, {{"Idle", false}}}}, 8);
    ASSERT_EQ(seen["Total"].size(), 8u);
    const auto at = [&](const char* name, int cycle) { return std::stoi(seen[name][cycle]); };
    EXPECT_EQ(at("I", 0), 3); // the loop ran three times in a cycle: Total grew by 1 + 2 + 3
    EXPECT_EQ(at("Total", 1), at("Total", 0) + 6);
    EXPECT_EQ(at("Total", 3), at("Total", 2)); // Idle in cycles 3 and 4 skipped the loop
    EXPECT_EQ(at("Total", 4), at("Total", 2));
    EXPECT_EQ(at("Total", 5), at("Total", 4) + 6);
    EXPECT_EQ(at("Passes", 7), at("Passes", 0) + 7); // what follows the label ran every cycle
}

// Two jumps back to one label (tests/plcopen/loops_twice.xml), the nearer until I reaches 3, the
// farther until 5, beside their ST twin: the inner REPEAT closes at the nearer jump, so Count (between
// the jumps) grows 3 times a cycle; with the UNTILs swapped it would grow once.
constexpr const char* kTwiceTwin = R"(PROGRAM StMain
VAR
  I, Count : INT;
END_VAR
I := 0;
Count := 0;
REPEAT
  REPEAT
    I := I + 1;
  UNTIL NOT (I < 3)
  END_REPEAT;
  Count := Count + 1;
UNTIL NOT (I < 5)
END_REPEAT;
END_PROGRAM
)";

TEST(PlcopenImport, TwoJumpsBackToOneLabelLoopLikeTheirStTwin) {
    auto seen = runBesideTwin("loops_twice.xml", "FbdTwice", kTwiceTwin, {"I", "Count"}, {}, 3);
    ASSERT_EQ(seen["Count"].size(), 3u);
    EXPECT_EQ(seen["I"][0], "5");
    EXPECT_EQ(seen["Count"][0], "3");
    EXPECT_EQ(seen["Count"][2], "3");
}

// The actions of tests/plcopen/actions.xml (in FBD, LD and ST), called from the POU's ST body,
// beside their ST twin.
constexpr const char* kActionsTwin = R"(PROGRAM StMain
VAR
  Tick, Flag : BOOL;
  Count : INT;
END_VAR
IF Tick THEN
  Count := Count + 1;
  Flag := NOT Flag;
END_IF;
IF Count >= 5 THEN
  Count := 0;
END_IF;
END_PROGRAM
)";

TEST(PlcopenImport, PouActionsRunLikeTheirStTwinCycleByCycle) {
    auto seen = runBesideTwin("actions.xml", "ActMain", kActionsTwin, {"Flag", "Count"},
                              {{2, {{"Tick", true}}}, {12, {{"Tick", false}}}}, 14);
    ASSERT_EQ(seen["Count"].size(), 14u);
    EXPECT_EQ(seen["Count"][1], "0");
    EXPECT_EQ(seen["Count"][4], "3");
    EXPECT_EQ(seen["Count"][6], "0"); // cleared at 5
    EXPECT_NE(seen["Flag"][2], seen["Flag"][3]);
}

// The SFC chart of tests/plcopen/sfc_chart.xml beside its twin in textual SFC: simultaneous and
// selection divergence and convergence, a jump step, N, P, L, S and R associations, a condition
// through an LD contact.
constexpr const char* kSfcTwin = R"(PROGRAM StMain
VAR
  Start, Stop, Full, FillValve, Mixer, Alarm, DrainValve : BOOL;
  Count : INT;
END_VAR
INITIAL_STEP Idle: DrainValve(R); END_STEP
TRANSITION FROM Idle TO (Fill, Heat) := Start; END_TRANSITION
STEP Fill: FillValve(N); END_STEP
STEP Heat: Bump(P); END_STEP
TRANSITION FROM (Fill, Heat) TO Mix := Full; END_TRANSITION
STEP Mix: Mixer(N); Alarm(L, T#20ms); END_STEP
TRANSITION FROM Mix TO Idle := Stop; END_TRANSITION
TRANSITION FROM Mix TO Drain := Mix.T >= T#40ms; END_TRANSITION
STEP Drain: DrainValve(S); END_STEP
TRANSITION FROM Drain TO Idle := NOT Full; END_TRANSITION
ACTION Bump: Count := Count + 1; END_ACTION
END_PROGRAM
)";

TEST(PlcopenImport, AnSfcChartRunsLikeItsTextualTwinCycleByCycle) {
    auto seen = runBesideTwin(
        "sfc_chart.xml", "SfcMain", kSfcTwin,
        {"Idle.X", "Fill.X", "Heat.X", "Mix.X", "Drain.X", "FillValve", "Mixer", "Alarm", "DrainValve", "Count"},
        {{1, {{"Start", true}}},
         {3, {{"Start", false}}},
         {5, {{"Full", true}}},
         {13, {{"Full", false}}},
         {15, {{"Start", true}}},
         {16, {{"Start", false}}},
         {17, {{"Full", true}}},
         {19, {{"Stop", true}}}},
        24);
    for (const char* n :
         {"Idle.X", "Fill.X", "Heat.X", "Mix.X", "Drain.X", "FillValve", "Mixer", "Alarm", "DrainValve"}) {
        EXPECT_TRUE(ever(seen[n], "true")) << n;
        EXPECT_TRUE(ever(seen[n], "false")) << n;
    }
    ASSERT_FALSE(seen["Count"].empty());
    // Heat entered twice, and a P action runs twice per entry: as the step is entered and once
    // more as its Q falls (the final scan, as CODESYS runs a P action "exactly two times").
    EXPECT_EQ(seen["Count"].back(), "4");
    EXPECT_EQ(seen["Idle.X"].back(), "true");
}

// tests/plcopen/sfc_priority.xml: of the two transitions leaving Idle, the first in the XML has
// priority 2, the second priority 1, so with both conditions TRUE the second's branch is taken, as
// in its twin, which declares them the other way round (the textual SFC tests in declaration order).
constexpr const char* kSfcPriorityTwin = R"(PROGRAM StMain
VAR
  Go, Urgent : BOOL;
  Count : INT;
END_VAR
INITIAL_STEP Idle: END_STEP
TRANSITION FROM Idle TO Rush := Go AND Urgent; END_TRANSITION
TRANSITION FROM Idle TO Normal := Go; END_TRANSITION
STEP Normal: END_STEP
STEP Rush: Bump(P); END_STEP
TRANSITION FROM Normal TO Idle := NOT Go; END_TRANSITION
TRANSITION FROM Rush TO Idle := NOT Go; END_TRANSITION
ACTION Bump: Count := Count + 1; END_ACTION
END_PROGRAM
)";

TEST(PlcopenImport, AnSfcSelectionTakesTheTransitionOfHighestPriority) {
    auto seen = runBesideTwin(
        "sfc_priority.xml", "SfcPrio", kSfcPriorityTwin, {"Idle.X", "Normal.X", "Rush.X", "Count"},
        {{1, {{"Go", true}}}, {3, {{"Go", false}}}, {5, {{"Go", true}, {"Urgent", true}}}, {7, {{"Go", false}}}}, 9);
    ASSERT_EQ(seen["Rush.X"].size(), 9u);
    EXPECT_EQ(seen["Normal.X"][2], "true"); // Go alone: only the priority-2 branch's condition holds
    EXPECT_EQ(seen["Rush.X"][2], "false");
    EXPECT_EQ(seen["Rush.X"][6], "true"); // both hold: priority 1 wins over the XML's order
    EXPECT_EQ(seen["Normal.X"][6], "false");
    EXPECT_EQ(seen["Count"].back(), "2");
}

// tests/plcopen/sfc_macro.xml: macro step Work holds Fill, a parallel branch of a macro step
// Heating (Heat, Hold) beside step Stir, and Drain; the chart runs like its twin, where the macros' steps are written
// out in the chart (a macro only hides part of the chart). The transition into Work enters Fill, the one into Heating
// enters Heat, and the transition after each leaves its last step.
constexpr const char* kSfcMacroTwin = R"(PROGRAM StMain
VAR
  Start, Full, Hot, Done, Heater, DrainValve : BOOL;
  Count : INT;
END_VAR
INITIAL_STEP Idle: END_STEP
TRANSITION FROM Idle TO Fill := Start; END_TRANSITION
STEP Fill: Bump(P); END_STEP
TRANSITION FROM Fill TO (Heat, Stir) := Full; END_TRANSITION
STEP Heat: Heater(N); END_STEP
TRANSITION FROM Heat TO Hold := Hot; END_TRANSITION
STEP Hold: END_STEP
STEP Stir: END_STEP
TRANSITION FROM (Hold, Stir) TO Drain := NOT Hot; END_TRANSITION
STEP Drain: DrainValve(N); END_STEP
TRANSITION FROM Drain TO Idle := Done; END_TRANSITION
ACTION Bump: Count := Count + 1; END_ACTION
END_PROGRAM
)";

TEST(PlcopenImport, AnSfcMacroStepRunsLikeItsStepsWrittenOutInTheChart) {
    auto seen =
        runBesideTwin("sfc_macro.xml", "SfcMacro", kSfcMacroTwin,
                      {"Idle.X", "Fill.X", "Heat.X", "Hold.X", "Stir.X", "Drain.X", "Heater", "DrainValve", "Count"},
                      {{1, {{"Start", true}}},
                       {3, {{"Start", false}}},
                       {4, {{"Full", true}}},
                       {6, {{"Hot", true}}},
                       {8, {{"Hot", false}}},
                       {10, {{"Done", true}}},
                       {11, {{"Done", false}, {"Full", false}}},
                       {12, {{"Start", true}}}},
                      15);
    for (const char* n : {"Idle.X", "Fill.X", "Heat.X", "Hold.X", "Stir.X", "Drain.X", "Heater", "DrainValve"}) {
        EXPECT_TRUE(ever(seen[n], "true")) << n;
        EXPECT_TRUE(ever(seen[n], "false")) << n;
    }
    ASSERT_EQ(seen["Fill.X"].size(), 15u);
    EXPECT_EQ(seen["Fill.X"][2], "true") << "the transition into Work enters Fill";
    EXPECT_EQ(seen["Heat.X"][5], "true") << "the transition into Heating enters Heat";
    EXPECT_EQ(seen["Stir.X"][7], "true") << "beside Heating, in the parallel branch";
    EXPECT_EQ(seen["Drain.X"][9], "true") << "the transition after Heating leaves Hold";
    EXPECT_EQ(seen["Idle.X"][11], "true") << "the transition after Work leaves Drain, to Idle by the jump";
    EXPECT_EQ(seen["Fill.X"].back(), "true") << "entered again";
}

// tests/plcopen/codesys_property.xml is shaped as CODESYS 3.5 exports a function block with a
// PROPERTY and a METHOD (both in addData, the SetAccessor before the GetAccessor, a local variable
// in the setter's own interface): it runs like its ST twin, the setter clipping at 100.
constexpr const char* kPropertyTwin = R"(FUNCTION_BLOCK TankSt
VAR lvl : INT; writes : INT; END_VAR
PROPERTY Level : INT
SET
VAR clipped : INT; END_VAR
clipped := LIMIT(0, Level, 100);
lvl := clipped;
writes := writes + 1;
END_SET
GET
Level := lvl;
END_GET
END_PROPERTY
METHOD WriteCount : INT
WriteCount := writes;
END_METHOD
END_FUNCTION_BLOCK
PROGRAM StMain
VAR Go : BOOL; Level : INT; Writes : INT; t : TankSt; END_VAR
IF Go THEN
  t.Level := t.Level + 30;
END_IF;
Level := t.Level;
Writes := t.WriteCount();
END_PROGRAM
)";

TEST(PlcopenImport, ACodesysPropertyRunsLikeItsStTwin) {
    auto seen = runBesideTwin("codesys_property.xml", "TankMain", kPropertyTwin, {"Level", "Writes"},
                              {{1, {{"Go", true}}}, {6, {{"Go", false}}}}, 8);
    ASSERT_EQ(seen["Level"].size(), 8u);
    EXPECT_EQ(seen["Level"][1], "30"); // the setter ran once
    EXPECT_EQ(seen["Level"][4], "100") << "clipped by the setter";
    EXPECT_EQ(seen["Writes"].back(), "5");
}

// tests/plcopen/openplc_bottler.xml is shaped as the OpenPLC Editor (Beremiz) writes a project: an
// LD function block (a seal-in rung, a rising-edge contact enabling ADD, a constant from the
// configuration's globals), an SFC function block (inline actions all with localId 0, a reference
// action, a selection divergence, a jump step), a program in FBD calling both, executionOrderId 0
// on every element, wires with their points, comments. It imports, builds, runs in its task, its
// function blocks pass tests written beside it, and the program bottles in the harness.
constexpr const char* kBottlerTests = R"(TEST_PROGRAM SealInLatchesAndCountsStarts
VAR
  s : SealIn;
END_VAR
s(Start := TRUE, Stop := FALSE);
ASSERT_TRUE(s.Run);
ASSERT_EQUAL(1, s.Starts);
s(Start := FALSE);
ASSERT_TRUE(s.Run);
s(Stop := TRUE);
ASSERT_FALSE(s.Run);
s(Stop := FALSE, Start := TRUE);
ASSERT_TRUE(s.Run);
ASSERT_EQUAL(2, s.Starts);
END_TEST_PROGRAM

TEST_PROGRAM FillerFillsThreeCyclesAndCountsABottle
VAR
  f : Filler;
END_VAR
f(Go := TRUE);
ASSERT_FALSE(f.Valve);
f();
ASSERT_TRUE(f.Valve);
f();
f();
ASSERT_TRUE(f.Done.X);
f();
ASSERT_FALSE(f.Valve);
ASSERT_EQUAL(1, f.Fills);
f(Go := FALSE);
f();
ASSERT_TRUE(f.Idle.X);
ASSERT_EQUAL(1, f.Fills);
END_TEST_PROGRAM
)";

TEST(PlcopenImport, AnOpenPlcEditorProjectWithLdSfcAndFbdImportsBuildsAndRuns) {
    const fs::path xml = fs::path(TAKT_SOURCE_DIR) / "tests/plcopen/openplc_bottler.xml";
    test::TempDir tmp;
    const fs::path dir = tmp.path() / "bottler";
    const test::RunResult r = test::runTakt("import plcopen " + quoted(xml.string()) + " " + quoted(dir.string()));
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const test::RunResult check = test::runTakt("check --project " + quoted(dir.string()));
    EXPECT_EQ(check.exitCode, 0) << check.out << check.err;
    EXPECT_NE((check.out + check.err).find("0 errors, 0 warnings"), std::string::npos) << check.out << check.err;
    const test::RunResult build = test::runTakt("build --project " + quoted(dir.string()));
    ASSERT_EQ(build.exitCode, 0) << build.out << build.err;
    const test::RunResult run =
        test::runTakt("run --for 200ms --project " + quoted(dir.string()), {.capture = test::Capture::Merged});
    ASSERT_EQ(run.exitCode, 0) << run.out;
    EXPECT_NE(run.out.find("running Res0"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("faults=0"), std::string::npos) << run.out;
    std::ofstream(dir / "src/bottler_test.st") << kBottlerTests;
    const test::RunResult tests = test::runTakt("test --project " + quoted(dir.string()) + " --output json");
    ASSERT_EQ(tests.exitCode, 0) << tests.out << tests.err;
    rapidjson::Document d;
    d.Parse(tests.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << tests.out;
    EXPECT_EQ(d["summary"]["passed"].GetUint(), 2u) << tests.out;

    // The program: the start button latches the motor, which runs the filler; a bottle is full
    // after three cycles of filling, and the next one starts; the stop button ends both.
    const compiler::PlcopenTranslation t = compiler::translatePlcopen(readAll(xml));
    ASSERT_TRUE(t.problems.empty());
    const std::vector<std::string> requests = {
        loadRequest(t.text),
        R"({"cmd":"set_input","name":"instance0.StartButton","value":{"type":"BOOL","value":true}})",
        R"({"cmd":"cycle","count":1,"dt_ms":20,"watch":["instance0.Motor","instance0.FillValve"]})",
        R"({"cmd":"set_input","name":"instance0.StartButton","value":{"type":"BOOL","value":false}})",
        R"({"cmd":"run_until","name":"instance0.Bottles","equals":{"type":"INT","value":2},"dt_ms":20,"max_cycles":20})",
        R"({"cmd":"cycle","count":1,"dt_ms":20,"watch":["instance0.Motor","instance0.StartCount","instance0.Fill0.Filling.X"]})",
        R"({"cmd":"set_input","name":"instance0.StopButton","value":{"type":"BOOL","value":true}})",
        R"({"cmd":"cycle","count":3,"dt_ms":20,"watch":["instance0.Motor","instance0.FillValve","instance0.Fill0.Idle.X"]})",
    };
    const std::vector<std::string> answers = harnessAnswers(requests);
    ASSERT_EQ(answers.size(), requests.size());
    EXPECT_NE(answers[2].find(R"("instance0.Motor":{"type":"BOOL","value":true})"), std::string::npos) << answers[2];
    EXPECT_NE(answers[5].find(R"("instance0.Motor":{"type":"BOOL","value":true})"), std::string::npos) << answers[5];
    EXPECT_NE(answers[5].find(R"("instance0.StartCount":{"type":"INT","value":1})"), std::string::npos) << answers[5];
    EXPECT_NE(answers[7].find(R"("instance0.Motor":{"type":"BOOL","value":false})"), std::string::npos) << answers[7];
    EXPECT_NE(answers[7].find(R"("instance0.FillValve":{"type":"BOOL","value":false})"), std::string::npos)
        << answers[7];
    EXPECT_NE(answers[7].find(R"("instance0.Fill0.Idle.X":{"type":"BOOL","value":true})"), std::string::npos)
        << answers[7];
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
