// Replays the seed 001 examples (tests/protocol/seed001_replay.json) through the harness: once
// in-process over a hand-built plant module, once through the real `takt harness` binary with
// the compiled ST plant. Plus the protocol's robustness rules (bad lines, limits).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "support/json.h"
#include "support/paths.h"
#include "support/temp_dir.h"
#include "takt/agent/harness.h"
#include "unit/engine/module_builder.h"

namespace takt::agent {
namespace {

using bytecode::ValueKind;
using test::toJson;
using testing::peek;
using testing::poke;

// Every member of `expected` is in `actual` with an equal value (objects recursively).
bool subset(const rapidjson::Value& expected, const rapidjson::Value& actual) {
    if (expected.IsObject()) {
        if (!actual.IsObject()) {
            return false;
        }
        for (auto it = expected.MemberBegin(); it != expected.MemberEnd(); ++it) {
            auto found = actual.FindMember(it->name);
            if (found == actual.MemberEnd() || !subset(it->value, found->value)) {
                return false;
            }
        }
        return true;
    }
    return expected == actual;
}

struct Step {
    std::string note;
    std::string request;
    std::string expect;
};

std::vector<Step> loadSteps() {
    rapidjson::Document d;
    d.Parse(test::readText(std::string(TAKT_SOURCE_DIR) + "/tests/protocol/seed001_replay.json").c_str());
    std::vector<Step> steps;
    if (d.HasParseError() || !d.IsObject()) {
        return steps;
    }
    for (const auto& s : d["steps"].GetArray()) {
        steps.push_back({s["note"].GetString(), s["request"].GetString(), toJson(s["expect"])});
    }
    return steps;
}

void checkResponses(const std::vector<Step>& steps, const std::vector<std::string>& responses) {
    ASSERT_EQ(responses.size(), steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
        rapidjson::Document exp;
        rapidjson::Document act;
        exp.Parse(steps[i].expect.c_str());
        act.Parse(responses[i].c_str());
        ASSERT_FALSE(act.HasParseError()) << responses[i];
        EXPECT_TRUE(subset(exp, act)) << "step " << i << " (" << steps[i].note << "): " << steps[i].request
                                      << "\n  expected ⊆ " << steps[i].expect << "\n  got " << responses[i];
    }
}

// The plant of the replay file as a hand-built module: Main with a TON-like timer in C++.
struct Plant {
    testing::ModuleBuilder b;
    std::uint32_t pou = 0;
    std::uint32_t fStart = 0, fRun = 0, fFault = 0, fQ = 0, fEt = 0, fSpeed = 0, fT0 = 0, fPrev = 0;
    Plant() {
        const std::uint32_t tBool = b.elementary(ValueKind::Bool, "BOOL", 1);
        const std::uint32_t tTime = b.elementary(ValueKind::Time, "TIME", 8);
        const std::uint32_t tInt = b.elementary(ValueKind::Int, "INT", 2);
        const std::uint32_t prog = b.composite(ValueKind::Program, "Main",
                                               {{"start_pb", tBool},
                                                {"motor_run", tBool},
                                                {"fault", tBool},
                                                {"q", tBool},
                                                {"et", tTime},
                                                {"speed", tInt},
                                                {"t0", tTime},
                                                {"prev", tBool}});
        pou = b.program("Main", prog);
        const auto& f = b.m.types[prog].fields;
        const std::uint32_t base = b.m.programs[0].offset;
        fStart = base + f[0].offset;
        fRun = base + f[1].offset;
        fFault = base + f[2].offset;
        fQ = base + f[3].offset;
        fEt = base + f[4].offset;
        fSpeed = base + f[5].offset;
        fT0 = base + f[6].offset;
        fPrev = base + f[7].offset;
        b.m.access.push_back({"RemoteSpeed", "Main.speed", tInt, fSpeed, false});
        b.m.access.push_back({"Status", "Main.speed", tInt, fSpeed, true});
    }
};

HarnessDeps fakeDeps() {
    auto plant = std::make_shared<Plant>();
    HarnessDeps deps;
    deps.compile = [plant](const std::vector<compiler::SourceText>& sources, const compiler::BuildOptions&) {
        CompileOutcome out;
        if (sources.front().text.find("SYNTAX ERROR") != std::string::npos) {
            out.status = CompileOutcome::Status::CompileError;
            out.diagnosticsJson = R"([{"path":"source.st","line":1,"column":1,"end_line":1,"end_column":7,)"
                                  R"("severity":"error","code":"E0001","message":"unexpected 'SYNTAX'"}])";
            return out;
        }
        out.status = CompileOutcome::Status::Ok;
        out.module = plant->b.build();
        out.hash = "plant";
        return out;
    };
    deps.makeRunner = [plant] {
        auto r = std::make_unique<testing::ScriptedRunner>();
        const Plant& p = *plant;
        r->bodies[p.pou] = [&p](std::uint8_t* img, std::uint32_t, std::int64_t now, engine::Fault&) {
            const bool in = img[p.fStart] != 0;
            img[p.fRun] = static_cast<std::uint8_t>(in && img[p.fFault] == 0);
            constexpr std::int64_t kPt = 100'000'000;
            std::int64_t et = 0;
            if (in) {
                if (img[p.fPrev] == 0) {
                    poke<std::int64_t>(img, p.fT0, now);
                }
                et = std::min(now - peek<std::int64_t>(img, p.fT0), kPt);
            }
            img[p.fPrev] = static_cast<std::uint8_t>(in);
            poke<std::int64_t>(img, p.fEt, et);
            img[p.fQ] = static_cast<std::uint8_t>(in && et >= kPt);
            return true;
        };
        return std::unique_ptr<engine::CodeRunner>(std::move(r));
    };
    return deps;
}

TEST(HarnessReplay, SeedExamplesInProcess) {
    const std::vector<Step> steps = loadSteps();
    ASSERT_GE(steps.size(), 20u);
    Harness h(fakeDeps());
    std::vector<std::string> responses;
    for (const Step& s : steps) {
        responses.push_back(h.handleLine(s.request));
    }
    checkResponses(steps, responses);
}

TEST(HarnessReplay, SeedExamplesThroughBinary) {
    const std::vector<Step> steps = loadSteps();
    ASSERT_FALSE(steps.empty());
    const std::string dir = ::testing::TempDir();
    const std::string in = dir + "/harness_replay_in.ndjson";
    const std::string out = dir + "/harness_replay_out.ndjson";
    {
        std::ofstream f(in, std::ios::binary);
        for (const Step& s : steps) {
            f << s.request << '\n';
        }
    }
    const std::string cmd = std::string(TAKT_BINARY) + " harness < " + in + " > " + out;
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::ifstream f(out);
    std::vector<std::string> responses;
    for (std::string line; std::getline(f, line);) {
        responses.push_back(line);
    }
    checkResponses(steps, responses);
}

TEST(HarnessProtocol, ErrorKindsAndShapes) {
    Harness h(fakeDeps());
    EXPECT_NE(h.handleLine(R"({"cmd":"snapshot"})").find(R"("kind":"not_loaded")"), std::string::npos);
    const std::string ce = h.handleLine(R"({"cmd":"load","source":"SYNTAX ERROR"})");
    EXPECT_NE(ce.find(R"("kind":"compile_error")"), std::string::npos) << ce;
    EXPECT_NE(ce.find(R"("diagnostics":[{"path":"source.st","line":1)"), std::string::npos) << ce;
    EXPECT_NE(h.handleLine(R"({"cmd":"load"})").find(R"("kind":"invalid_argument")"), std::string::npos);
    ASSERT_NE(h.handleLine(R"({"cmd":"load","source":"x"})").find(R"("ok":true)"), std::string::npos);
    // A reload that does not compile leaves the program loaded.
    EXPECT_NE(h.handleLine(R"({"cmd":"reload","source":"SYNTAX ERROR"})").find("compile_error"), std::string::npos);
    EXPECT_NE(h.handleLine(R"({"cmd":"snapshot","watch":["q"]})").find(R"("ok":true)"), std::string::npos);
    // READ_ONLY access refuses writes; values that do not fit are refused.
    EXPECT_NE(
        h.handleLine(R"({"cmd":"set_access","name":"Status","value":{"type":"INT","value":1}})").find("READ_ONLY"),
        std::string::npos);
    EXPECT_NE(h.handleLine(R"({"cmd":"set_input","name":"speed","value":{"type":"INT","value":40000}})")
                  .find("invalid_argument"),
              std::string::npos);
    EXPECT_NE(h.handleLine(R"({"cmd":"set_input","name":"speed","value":{"type":"BOOL","value":true}})")
                  .find("invalid_argument"),
              std::string::npos);
    EXPECT_NE(h.handleLine(R"({"cmd":"bind_direct","name":"speed","address":"%IX0.0"})").find("invalid_argument"),
              std::string::npos);
    EXPECT_NE(h.handleLine(R"({"cmd":"bind_direct","name":"speed","address":"%IW3"})").find(R"("ok":true)"),
              std::string::npos);
    EXPECT_NE(h.handleLine(R"({"cmd":"set_direct_input","address":"%IW3","value":{"type":"WORD","value":513}})")
                  .find(R"("ok":true)"),
              std::string::npos);
    ASSERT_NE(h.handleLine(R"({"cmd":"cycle"})").find(R"("ok":true)"), std::string::npos);
    EXPECT_NE(h.handleLine(R"({"cmd":"get_output","name":"SPEED"})").find(R"({"type":"INT","value":513})"),
              std::string::npos);
    EXPECT_NE(h.handleLine(R"({"cmd":"restart","mode":"hot"})").find("invalid_argument"), std::string::npos);
    EXPECT_NE(h.handleLine(R"({"cmd":"advance_time"})").find("invalid_argument"), std::string::npos);
}

TEST(HarnessProtocol, BadLinesDoNotStopTheServer) {
    Harness h(fakeDeps());
    std::string deep(100, '[');
    deep += std::string(100, ']');
    std::string huge = R"({"cmd":"snapshot","pad":")" + std::string(kMaxLineBytes + 10, 'x') + "\"}";
    std::istringstream in("not json\n" + deep + "\n" + huge +
                          "\n{\"cmd\":\"warp\"}\n\n{\"cmd\":\"advance_time\",\"duration_ms\":1}");
    std::ostringstream out;
    h.serve(in, out);
    std::vector<std::string> lines;
    std::istringstream res(out.str());
    for (std::string l; std::getline(res, l);) {
        lines.push_back(l);
    }
    ASSERT_EQ(lines.size(), 6u) << out.str().substr(0, 500);
    for (int i = 0; i < 5; ++i) {
        EXPECT_NE(lines[i].find(R"("kind":"invalid_request")"), std::string::npos) << lines[i];
    }
    EXPECT_NE(lines[1].find("64"), std::string::npos);
    EXPECT_NE(lines[2].find("1 MiB"), std::string::npos);
    EXPECT_NE(lines[4].find("empty line"), std::string::npos) << lines[4]; // the blank line
    EXPECT_EQ(lines[5], R"({"ok":true,"data":{}})");
}

// An unpaired surrogate escape is no character, and a NUL byte ended the line early (the command
// before it ran): both are invalid_request naming the offset.
TEST(HarnessProtocol, UnpairedSurrogateAndNulByteAreRefused) {
    Harness h(fakeDeps());
    for (const std::string& line :
         {std::string(R"({"cmd":"load","source":"\udc00"})"), std::string(R"({"cmd":"load","source":"\ud800"})"),
          std::string(R"({"cmd":"load","source":"x"})") + std::string(1, '\0') + "garbage"}) {
        const std::string r = h.handleLine(line);
        EXPECT_NE(r.find(R"("kind":"invalid_request")"), std::string::npos) << r;
        EXPECT_NE(r.find(line.find('\\') != std::string::npos ? "offset 24" : "offset 27"), std::string::npos) << r;
    }
    EXPECT_NE(h.handleLine(R"({"cmd":"cycle"})").find("not_loaded"), std::string::npos);
}

TEST(HarnessProtocol, FailedLoadNamesTheFirstErrorNotAnEarlierWarning) {
    Harness h(defaultHarnessDeps());
    // W0001 (unused) on line 3 comes before the error on line 5 in source order.
    const std::string reply = h.handleLine(
        R"({"cmd":"load","source":"PROGRAM Main\nVAR\n  unused : INT;\n  x : INT;\nEND_VAR\nx := nowhere;\nEND_PROGRAM\n"})");
    rapidjson::Document d;
    d.Parse(reply.c_str());
    ASSERT_TRUE(d.IsObject()) << reply;
    ASSERT_FALSE(d["ok"].GetBool()) << reply;
    EXPECT_STREQ(d["error"]["kind"].GetString(), "compile_error");
    const auto& diags = d["error"]["data"]["diagnostics"];
    ASSERT_GE(diags.Size(), 2U) << reply;
    EXPECT_STREQ(diags[0]["severity"].GetString(), "warning") << reply; // the case this test is about
    std::string firstError;
    for (const auto& x : diags.GetArray()) {
        if (std::string(x["severity"].GetString()) == "error") {
            firstError = x["message"].GetString();
            break;
        }
    }
    ASSERT_FALSE(firstError.empty()) << reply;
    EXPECT_EQ(std::string(d["error"]["message"].GetString()), "compilation failed: " + firstError) << reply;
}

// A load that compiles but faults while initialising, or in its initial cycle, changes nothing:
// the program loaded before keeps running where it was, in its own virtual time (it used to be
// dropped, and the harness answered not_loaded).
TEST(HarnessProtocol, ALoadThatFaultsKeepsTheProgramLoadedBefore) {
    Harness h(defaultHarnessDeps());
    ASSERT_NE(
        h.handleLine(R"({"cmd":"load","source":"PROGRAM Main\nVAR n : INT; END_VAR\nn := n + 1;\nEND_PROGRAM\n"})")
            .find(R"("ok":true)"),
        std::string::npos);
    ASSERT_NE(h.handleLine(R"({"cmd":"cycle","count":4,"dt_ms":10})").find(R"("ok":true)"), std::string::npos);
    const std::string before = h.handleLine(R"({"cmd":"snapshot","watch":["Main.n"]})");
    ASSERT_NE(before.find(R"("cycle":5,"time_nanos":40000000)"), std::string::npos) << before;

    const std::string initFault = h.handleLine(
        R"({"cmd":"load","source":"FUNCTION Div : INT\nVAR_INPUT a : INT; END_VAR\nDiv := 10 / a;\nEND_FUNCTION\n)"
        R"(PROGRAM Main\nVAR d : INT := Div(0); END_VAR\nd := d + 1;\nEND_PROGRAM\n"})");
    EXPECT_NE(initFault.find(R"("kind":"runtime_error")"), std::string::npos) << initFault;
    EXPECT_EQ(h.handleLine(R"({"cmd":"snapshot","watch":["Main.n"]})"), before);

    const std::string cycleFault = h.handleLine(
        R"({"cmd":"load","source":"PROGRAM Main\nVAR z : INT; q : INT; END_VAR\nq := 10 / z;\nEND_PROGRAM\n"})");
    EXPECT_NE(cycleFault.find(R"("kind":"runtime_cycle_error")"), std::string::npos) << cycleFault;
    EXPECT_NE(cycleFault.find(R"("cycle":1)"), std::string::npos) << cycleFault;
    EXPECT_EQ(h.handleLine(R"({"cmd":"snapshot","watch":["Main.n"]})"), before);

    const std::string next = h.handleLine(R"({"cmd":"cycle","dt_ms":10,"watch":["Main.n"]})");
    EXPECT_NE(next.find(R"("cycle":6,"time_nanos":50000000)"), std::string::npos) << next;
    EXPECT_NE(next.find(R"("Main.n":{"type":"INT","value":6})"), std::string::npos) << next;
}

TEST(HarnessProtocol, CycleFaultReportsPosition) {
    HarnessDeps deps = fakeDeps();
    deps.makeRunner = [] {
        auto r = std::make_unique<testing::ScriptedRunner>();
        r->bodies[0] = [](std::uint8_t*, std::uint32_t, std::int64_t, engine::Fault& f) {
            f.message = "integer division or MOD by zero";
            f.pou = 0;
            return false;
        };
        return std::unique_ptr<engine::CodeRunner>(std::move(r));
    };
    Harness h(deps);
    const std::string r = h.handleLine(R"({"cmd":"load","source":"x"})");
    EXPECT_NE(r.find(R"("kind":"runtime_cycle_error")"), std::string::npos) << r;
    EXPECT_NE(r.find(R"("errors":[{"message":"integer division or MOD by zero","pou":"Main")"), std::string::npos) << r;
    EXPECT_NE(h.handleLine(R"({"cmd":"cycle"})").find("not_loaded"), std::string::npos);
}

// `load` with "initial_cycle": false runs no cycle, so inputs written after it are what the
// program's first cycle sees; without it the first cycle has already run with them FALSE.
TEST(HarnessProtocol, LoadWithoutInitialCycleLetsATestSetFirstCycleInputs) {
    const std::string source = R"(PROGRAM Main\nVAR start AT %IX0.0 : BOOL; first : BOOL := TRUE; )"
                               R"(sawStart : BOOL; cycles : INT; END_VAR\nIF first THEN sawStart := start; )"
                               R"(first := FALSE; END_IF;\ncycles := cycles + 1;\nEND_PROGRAM\n)";
    for (const bool initial : {true, false}) {
        Harness h(defaultHarnessDeps());
        const std::string load = h.handleLine(R"({"cmd":"load","source":")" + source + R"(","initial_cycle":)" +
                                              (initial ? "true" : "false") + "}");
        ASSERT_NE(load.find(R"("ok":true)"), std::string::npos) << load;
        EXPECT_NE(load.find(initial ? R"("cycle":1)" : R"("cycle":0)"), std::string::npos) << load;
        const std::string get = h.handleLine(R"({"cmd":"get_output","name":"Main.cycles"})");
        EXPECT_NE(get.find(initial ? R"("value":1)" : R"("value":0)"), std::string::npos) << get;
        ASSERT_NE(h.handleLine(R"({"cmd":"set_direct_input","address":"%IX0.0","value":{"type":"BOOL","value":true}})")
                      .find(R"("ok":true)"),
                  std::string::npos);
        const std::string c = h.handleLine(R"({"cmd":"cycle","watch":["Main.sawStart"]})");
        EXPECT_NE(c.find(initial ? R"({"type":"BOOL","value":false})" : R"({"type":"BOOL","value":true})"),
                  std::string::npos)
            << c;
    }
    Harness h(defaultHarnessDeps());
    EXPECT_NE(h.handleLine(R"({"cmd":"load","source":"x","initial_cycle":"no"})").find("invalid_argument"),
              std::string::npos);
}

// set_direct_memory writes %M from outside; a variable located there reads it the next cycle.
TEST(HarnessProtocol, SetDirectMemoryReachesLocatedVariables) {
    Harness h(defaultHarnessDeps());
    const std::string load = h.handleLine(
        R"({"cmd":"load","source":"PROGRAM Main\nVAR m AT %MW2 : INT; flag AT %MX0.3 : BOOL; out : INT; END_VAR\n)"
        R"(out := m + 1;\nIF flag THEN out := out + 100; END_IF;\nEND_PROGRAM\n"})");
    ASSERT_NE(load.find(R"("ok":true)"), std::string::npos) << load;
    EXPECT_NE(h.handleLine(R"({"cmd":"set_direct_memory","address":"%MW2","value":{"type":"INT","value":41}})")
                  .find(R"("ok":true)"),
              std::string::npos);
    EXPECT_NE(h.handleLine(R"({"cmd":"set_direct_memory","address":"%MX0.3","value":{"type":"BOOL","value":true}})")
                  .find(R"("ok":true)"),
              std::string::npos);
    const std::string c = h.handleLine(R"({"cmd":"cycle","watch":["Main.out"]})");
    EXPECT_NE(c.find(R"({"type":"INT","value":142})"), std::string::npos) << c;
    const std::string read = h.handleLine(R"({"cmd":"get_direct_output","address":"%MW2"})");
    EXPECT_NE(read.find(R"("value":41)"), std::string::npos) << read;
    // Only %M addresses; a value that does not fit is refused and writes nothing.
    EXPECT_NE(h.handleLine(R"({"cmd":"set_direct_memory","address":"%IX0.0","value":{"type":"BOOL","value":true}})")
                  .find("not a memory address"),
              std::string::npos);
    EXPECT_NE(h.handleLine(R"({"cmd":"set_direct_memory","address":"%MB9","value":{"type":"BYTE","value":300}})")
                  .find("invalid_argument"),
              std::string::npos);
}

// overflow "trap" compiles the program as runtime.toml's [build] overflow = "trap" does: an
// addition or assignment that overflows faults instead of wrapping.
TEST(HarnessProtocol, OverflowTrapOnLoadAndReload) {
    const std::string source = R"(PROGRAM Main\nVAR a : DINT := 2147483646; b : DINT := 1; q : DINT; )"
                               R"(go : BOOL; END_VAR\nIF go THEN a := a + b; q := a + b; END_IF;\nEND_PROGRAM\n)";
    const std::string go = R"({"cmd":"set_input","name":"Main.go","value":{"type":"BOOL","value":true}})";
    {
        Harness h(defaultHarnessDeps()); // default: wrap
        ASSERT_NE(h.handleLine(R"({"cmd":"load","source":")" + source + "\"}").find(R"("ok":true)"), std::string::npos);
        ASSERT_NE(h.handleLine(go).find(R"("ok":true)"), std::string::npos);
        const std::string c = h.handleLine(R"({"cmd":"cycle","watch":["Main.q"]})");
        EXPECT_NE(c.find(R"({"type":"DINT","value":-2147483648})"), std::string::npos) << c;
    }
    {
        Harness h(defaultHarnessDeps());
        ASSERT_NE(h.handleLine(R"({"cmd":"load","overflow":"trap","source":")" + source + "\"}").find(R"("ok":true)"),
                  std::string::npos);
        ASSERT_NE(h.handleLine(go).find(R"("ok":true)"), std::string::npos);
        const std::string c = h.handleLine(R"({"cmd":"cycle"})");
        EXPECT_NE(c.find(R"("kind":"runtime_cycle_error")"), std::string::npos) << c;
        EXPECT_NE(c.find("overflow"), std::string::npos) << c;
        // A reload keeps the load's mode unless it names one.
        ASSERT_NE(h.handleLine(R"({"cmd":"load","overflow":"trap","source":")" + source + "\"}").find(R"("ok":true)"),
                  std::string::npos);
        ASSERT_NE(h.handleLine(R"({"cmd":"reload","overflow":"wrap","source":")" + source + "\"}").find(R"("ok":true)"),
                  std::string::npos);
        ASSERT_NE(h.handleLine(go).find(R"("ok":true)"), std::string::npos);
        EXPECT_NE(h.handleLine(R"({"cmd":"cycle"})").find(R"("ok":true)"), std::string::npos);
    }
    Harness h(defaultHarnessDeps());
    EXPECT_NE(h.handleLine(R"({"cmd":"load","overflow":"saturate","source":"x"})").find("invalid_argument"),
              std::string::npos);
}

// The wall clock is virtual in the harness: DT#2024-01-01-00:00:00 at load, running on with the
// virtual time; set_wall_clock moves it. NOW_DT() and RTC read it.
TEST(HarnessProtocol, VirtualWallClockForNowDtAndRtc) {
    Harness h(defaultHarnessDeps());
    const std::string load =
        h.handleLine(R"({"cmd":"load","source":"PROGRAM Main\nVAR now : DT; lnow : LDT; clk : RTC; set : BOOL; )"
                     R"(preset : DT := DT#2030-06-01-12:00:00; END_VAR\nnow := NOW_DT(); lnow := NOW_LDT();\n)"
                     R"(clk(IN := set, PDT := preset);\nEND_PROGRAM\n"})");
    ASSERT_NE(load.find(R"("ok":true)"), std::string::npos) << load;
    constexpr long long kEpoch = 1'704'067'200'000'000'000; // DT#2024-01-01-00:00:00
    std::string c = h.handleLine(R"({"cmd":"cycle","dt_ms":1500,"watch":["Main.now","Main.lnow","Main.clk.CDT"]})");
    const std::string at1500 = std::to_string(kEpoch + 1'500'000'000);
    EXPECT_NE(c.find(R"("Main.now":{"type":"DT","nanos":)" + at1500), std::string::npos) << c;
    EXPECT_NE(c.find(R"("Main.lnow":{"type":"LDT","nanos":)" + at1500), std::string::npos) << c;
    EXPECT_NE(c.find(R"("Main.clk.CDT":{"type":"DT","nanos":)" + at1500), std::string::npos) << c;
    // IN rises: CDT starts from PDT and runs on with the clock.
    ASSERT_NE(h.handleLine(R"({"cmd":"set_input","name":"Main.set","value":{"type":"BOOL","value":true}})")
                  .find(R"("ok":true)"),
              std::string::npos);
    constexpr long long kPreset = 1'906'545'600'000'000'000; // DT#2030-06-01-12:00:00
    c = h.handleLine(R"({"cmd":"cycle","dt_ms":10,"watch":["Main.clk.CDT","Main.clk.Q"]})");
    EXPECT_NE(c.find(R"("Main.clk.CDT":{"type":"DT","nanos":)" + std::to_string(kPreset) + "}"), std::string::npos)
        << c;
    EXPECT_NE(c.find(R"("Main.clk.Q":{"type":"BOOL","value":true})"), std::string::npos) << c;
    c = h.handleLine(R"({"cmd":"cycle","dt_ms":250,"watch":["Main.clk.CDT"]})");
    EXPECT_NE(c.find(std::to_string(kPreset + 250'000'000) + "}"), std::string::npos) << c;
    // set_wall_clock: the date now; NOW_DT() reads it in the next cycle.
    ASSERT_NE(
        h.handleLine(R"({"cmd":"set_wall_clock","value":{"type":"DT","nanos":86400000000000}})").find(R"("ok":true)"),
        std::string::npos);
    c = h.handleLine(R"({"cmd":"cycle","dt_ms":5,"watch":["Main.now"]})");
    EXPECT_NE(c.find(R"("Main.now":{"type":"DT","nanos":86400005000000})"), std::string::npos) << c;
    EXPECT_NE(h.handleLine(R"({"cmd":"set_wall_clock","value":{"type":"BOOL","value":true}})").find("invalid_argument"),
              std::string::npos);
}

// An initial value that reads the clock reads the same date as the first cycle, not 1970: the
// initialisation runs with the wall clock set, on a load as on a cold restart.
TEST(HarnessProtocol, InitialValuesReadTheWallClock) {
    Harness h(defaultHarnessDeps());
    const std::string load =
        h.handleLine(R"({"cmd":"load","initial_cycle":false,"source":"PROGRAM Main\nVAR started : DT := NOW_DT(); )"
                     R"(lstarted : LDT := NOW_LDT(); END_VAR\nEND_PROGRAM\n"})");
    ASSERT_NE(load.find(R"("ok":true)"), std::string::npos) << load;
    constexpr long long kEpoch = 1'704'067'200'000'000'000; // DT#2024-01-01-00:00:00
    const std::string c = h.handleLine(R"({"cmd":"cycle","watch":["Main.started","Main.lstarted"]})");
    EXPECT_NE(c.find(R"("Main.started":{"type":"DT","nanos":)" + std::to_string(kEpoch) + "}"), std::string::npos) << c;
    EXPECT_NE(c.find(R"("Main.lstarted":{"type":"LDT","nanos":)" + std::to_string(kEpoch) + "}"), std::string::npos)
        << c;
}

} // namespace
} // namespace takt::agent
