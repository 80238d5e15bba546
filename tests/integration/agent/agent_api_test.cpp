// `takt agent serve` (seed 000): the seed's examples replayed through the real binary
// (tests/protocol/seed000_replay.json), the JSON-RPC conformance table, and the line caps.
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "support/agent_process.h"
#include "support/json.h"
#include "support/paths.h"
#include "support/temp_dir.h"
#include "takt/agent/agent_server.h"
#include "takt/agent/harness.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;

using test::at;
using test::toJson;

// Every member of `expected` is in `actual` with a matching value (objects recursively,
// arrays element by element with the same length).
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
    if (expected.IsArray()) {
        if (!actual.IsArray() || actual.Size() != expected.Size()) {
            return false;
        }
        for (rapidjson::SizeType i = 0; i < expected.Size(); ++i) {
            if (!subset(expected[i], actual[i])) {
                return false;
            }
        }
        return true;
    }
    return expected == actual;
}

rapidjson::Document parse(const std::string& text) {
    rapidjson::Document d;
    d.Parse(text.c_str());
    return d;
}

class Replay : public ::testing::Test {
protected:
    void SetUp() override {
        spec_.Parse(test::readText(fs::path(TAKT_SOURCE_DIR) / "tests/protocol/seed000_replay.json").c_str());
        ASSERT_FALSE(spec_.HasParseError());
        for (auto it = at(spec_, {"fixture"}).MemberBegin(); it != at(spec_, {"fixture"}).MemberEnd(); ++it) {
            dir_.write(it->name.GetString(), it->value.GetString());
        }
    }
    rapidjson::Document spec_;
    test::TempDir dir_;
};

TEST_F(Replay, SeedExamplesThroughBinary) {
    test::AgentProcess agent(TAKT_BINARY, dir_.path().string());
    ASSERT_TRUE(agent.running());
    std::string ready;
    ASSERT_TRUE(agent.readLine(ready));
    EXPECT_TRUE(subset(at(spec_, {"ready"}), parse(ready))) << ready;
    std::size_t seedSteps = 0;
    for (const auto& step : at(spec_, {"steps"}).GetArray()) {
        const std::string request = at(step, {"request"}).GetString();
        const std::string response = agent.call(request);
        const rapidjson::Document parsed = parse(response);
        const rapidjson::Value& actual = parsed;
        ASSERT_FALSE(parsed.HasParseError()) << request << "\n -> " << response;
        const bool exact = step.HasMember("exact") && at(step, {"exact"}).GetBool();
        EXPECT_TRUE(exact ? at(step, {"expect"}) == actual : subset(at(step, {"expect"}), actual))
            << at(step, {"note"}).GetString() << ": " << request << "\n  expected " << toJson(at(step, {"expect"}))
            << "\n  got      " << response;
        seedSteps += std::string(at(step, {"note"}).GetString()).starts_with("seed") ? 1 : 0;
        if (at(actual, {"id"}).IsInt() && at(actual, {"id"}).GetInt() == 9) {
            // runtime.validate: the `takt validate --ci` document of the same project.
            ASSERT_TRUE(actual.HasMember("result")) << response;
            EXPECT_STREQ(at(actual, {"result", "command"}).GetString(), "validate") << response;
        }
    }
    EXPECT_GE(seedSteps, 28u);
    EXPECT_EQ(agent.finish(), 0);
    // lsp.format never writes; runtime.build wrote program.stbc.
    EXPECT_TRUE(fs::exists(dir_.path() / "runtime-a/program.stbc"));
    EXPECT_EQ(test::readText(dir_.path() / "runtime-a/src/main.st"),
              at(spec_, {"fixture", "runtime-a/src/main.st"}).GetString());
}

TEST_F(Replay, HundredMebibyteLineIsRejectedAndTheNextServed) {
    test::AgentProcess agent(TAKT_BINARY, dir_.path().string());
    std::string line;
    ASSERT_TRUE(agent.readLine(line));
    std::string big = R"({"jsonrpc":"2.0","id":1,"method":"agent.ping","params":{"pad":")";
    big.append(std::size_t{100} << 20, 'x');
    big += "\"}}\n";
    ASSERT_TRUE(agent.send(big));
    ASSERT_TRUE(agent.send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"agent.ping\"}\n"));
    ASSERT_TRUE(agent.readLine(line));
    const rapidjson::Document rejected = parse(line);
    EXPECT_EQ(at(rejected, {"error", "code"}).GetInt(), -32600) << line;
    EXPECT_TRUE(at(rejected, {"id"}).IsNull());
    EXPECT_NE(line.find("1 MiB"), std::string::npos);
    ASSERT_TRUE(agent.readLine(line));
    const rapidjson::Document pong = parse(line);
    EXPECT_EQ(at(pong, {"id"}).GetInt(), 2) << line;
    EXPECT_TRUE(at(pong, {"result", "ok"}).GetBool());
    EXPECT_EQ(agent.finish(), 0);
}

// A NUL byte ended a request early: the ping before it ran and the rest was ignored.
TEST_F(Replay, RequestLineWithNulIsAParseError) {
    test::AgentProcess agent(TAKT_BINARY, dir_.path().string());
    std::string line;
    ASSERT_TRUE(agent.readLine(line));
    const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"agent.ping"})";
    const rapidjson::Document d = parse(agent.call(ping + std::string(1, '\0') + "garbage"));
    EXPECT_EQ(at(d, {"error", "code"}).GetInt(), -32700);
    EXPECT_TRUE(at(d, {"id"}).IsNull());
    EXPECT_NE(std::string(at(d, {"error", "message"}).GetString()).find("offset 46"), std::string::npos);
    EXPECT_EQ(at(parse(agent.call(R"({"jsonrpc":"2.0","id":2,"method":"agent.ping"})")), {"id"}).GetInt(), 2);
    EXPECT_EQ(agent.finish(), 0);
}

class Conformance : public ::testing::Test {
protected:
    Conformance() : server_(options()) {}
    AgentOptions options() {
        dir_.write("src/main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := x + 1;\nEND_PROGRAM\n");
        AgentOptions o;
        o.workspace = dir_.path();
        return o;
    }
    rapidjson::Document call(const std::string& line) {
        const std::optional<std::string> r = server_.handleLine(line);
        rapidjson::Document d;
        if (r) {
            d.Parse(r->c_str());
        }
        return d;
    }
    int code(const std::string& line) {
        const rapidjson::Document d = call(line);
        return d.IsObject() && d.HasMember("error") ? at(d, {"error", "code"}).GetInt() : 0;
    }
    test::TempDir dir_;
    AgentServer server_;
};

TEST_F(Conformance, ErrorCodeTable) {
    struct Row {
        const char* line;
        int code;
    };
    const Row rows[] = {
        {"not json", -32700},
        {R"({"jsonrpc":"2.0","id":1,"method":"agent.ping")", -32700},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"agent.\xff\"}", -32700},
        {R"({"jsonrpc":"2.0","id":1e999,"method":"agent.ping"})", -32700},
        {"[]", -32600},
        {R"([{"jsonrpc":"2.0","id":1,"method":"agent.ping"}])", -32600},
        {R"("agent.ping")", -32600},
        {"42", -32600},
        {"null", -32600},
        {R"({"id":1,"method":"agent.ping"})", -32600},
        {R"({"jsonrpc":"1.0","id":1,"method":"agent.ping"})", -32600},
        {R"({"jsonrpc":2.0,"id":1,"method":"agent.ping"})", -32600},
        {R"({"jsonrpc":"2.0","id":1})", -32600},
        {R"({"jsonrpc":"2.0","id":1,"method":7})", -32600},
        {R"({"jsonrpc":"2.0","id":{},"method":"agent.ping"})", -32600},
        {R"({"jsonrpc":"2.0","id":[1],"method":"agent.ping"})", -32600},
        {R"({"jsonrpc":"2.0","id":true,"method":"agent.ping"})", -32600},
        {R"({"jsonrpc":"2.0","id":1,"method":"agent.ping","params":"x"})", -32600},
        {R"({"jsonrpc":"2.0","id":1,"method":"agent.ping","params":null})", -32600},
        {R"({"jsonrpc":"2.0","id":1,"method":"agent.ping","params":[]})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"nope"})", -32601},
        {R"({"jsonrpc":"2.0","id":1,"method":"workspace.read"})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"workspace.read","params":{"path":5}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"workspace.read","params":{"path":"a","bogus":1}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"workspace.read","params":{"path":""}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"workspace.write","params":{"path":"a"}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"workspace.write","params":{"path":"a","text":"x","create_parents":1}})",
         -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"harness.cycle","params":{"count":-1}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"harness.cycle","params":{"count":"10"}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"harness.cycle","params":{"watch":["q",3]}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"harness.load","params":{"inline_sources":[{}]}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"harness.load","params":{}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"harness.load","params":{"files":["a"],"project":"."}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"harness.reload","params":{"mode":"hot","files":["a"]}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"lsp.diagnostics","params":{"content":"x"}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"lsp.format","params":{}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"agent.schema","params":{"method":"nope"}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"runtime.test","params":{"timeout_seconds":-1}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"runtime.test","params":{"cycle_time_ms":0}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"runtime.test","params":{"max_cycles":0}})", -32602},
        {R"({"jsonrpc":"2.0","id":1,"method":"workspace.read","params":{"path":"../x"}})", -32001},
        {R"({"jsonrpc":"2.0","id":1,"method":"workspace.read","params":{"path":"missing.st"}})", -32002},
        {R"({"jsonrpc":"2.0","id":1,"method":"project_info"})", -32601},
        {R"({"jsonrpc":"2.0","id":1,"method":"harness.cycle","params":{}})", -32003},
        {R"({"jsonrpc":"2.0","id":1,"method":"harness.get_output","params":{"name":"x"}})", -32003},
        {R"({"jsonrpc":"2.0","id":1,"method":"harness.reload","params":{"files":["src/main.st"]}})", -32003},
    };
    for (const Row& row : rows) {
        EXPECT_EQ(code(row.line), row.code) << row.line;
    }
}

// An unpaired UTF-16 surrogate escape is no character: refused before any method runs, so
// workspace.write never writes the bytes RapidJSON decoded it into (not UTF-8).
TEST_F(Conformance, UnpairedSurrogatesAreParseErrorsAndWriteNothing) {
    for (const char* text : {R"(\uDC00)", R"(a\uD800)", R"(\uD800\u0041)", R"(\uDFFF\uD800)"}) {
        const std::string line =
            R"({"jsonrpc":"2.0","id":1,"method":"workspace.write","params":{"path":"s.txt","text":")" +
            std::string(text) + "\"}}";
        const rapidjson::Document d = call(line);
        EXPECT_EQ(at(d, {"error", "code"}).GetInt(), -32700) << line;
        const std::string where = "offset " + std::to_string(line.find('\\'));
        EXPECT_NE(std::string(at(d, {"error", "message"}).GetString()).find(where), std::string::npos) << line;
        EXPECT_FALSE(fs::exists(dir_.path() / "s.txt")) << line;
    }
    const rapidjson::Document pair =
        call(R"({"jsonrpc":"2.0","id":1,"method":"workspace.write","params":{"path":"s.txt","text":"\uD83D\uDE00"}})");
    EXPECT_TRUE(pair.HasMember("result"));
    EXPECT_EQ(test::readText(dir_.path() / "s.txt"), "\xF0\x9F\x98\x80");
}

TEST_F(Conformance, InvalidParamsNameTheMember) {
    rapidjson::Document d = call(R"({"jsonrpc":"2.0","id":1,"method":"workspace.read","params":{"path":5}})");
    EXPECT_STREQ(at(d, {"error", "data", "param"}).GetString(), "path");
    EXPECT_NE(std::string(at(d, {"error", "message"}).GetString()).find("'path' must be a string"), std::string::npos);
    d = call(R"({"jsonrpc":"2.0","id":1,"method":"harness.load","params":{"inline_sources":[{"text":1}]}})");
    EXPECT_STREQ(at(d, {"error", "data", "param"}).GetString(), "inline_sources[0].text");
    d = call(R"({"jsonrpc":"2.0","id":1,"method":"workspace.write","params":{"text":"x"}})");
    EXPECT_STREQ(at(d, {"error", "data", "param"}).GetString(), "path");
    d = call(R"({"jsonrpc":"2.0","id":1,"method":"harness.cycle","params":{"cout":1}})");
    EXPECT_STREQ(at(d, {"error", "data", "param"}).GetString(), "cout");
}

TEST_F(Conformance, IdsAreEchoedVerbatim) {
    const char* ids[] = {"1",
                         "0",
                         "-7",
                         "\"abc\"",
                         "\"\"",
                         "null",
                         "1.50",
                         "-0",
                         "1e2",
                         "12345678901234567890123",
                         "18446744073709551615",
                         "\"\\u00e9\\n\""};
    for (const char* id : ids) {
        const std::string line = std::string(R"({"jsonrpc":"2.0","id":)") + id + R"(,"method":"agent.ping"})";
        const std::optional<std::string> r = server_.handleLine(line);
        ASSERT_TRUE(r.has_value()) << id;
        const std::string prefix = std::string(R"({"jsonrpc":"2.0","id":)");
        if (std::string(id).starts_with("\"\\u")) {
            EXPECT_EQ(r->substr(0, prefix.size() + 6), prefix + "\"\xc3\xa9\\n\"") << *r; // same string, re-escaped
        } else {
            EXPECT_EQ(r->substr(0, prefix.size() + std::strlen(id) + 1), prefix + id + ",") << *r;
        }
    }
    // The id of an invalid request that still has a valid id is echoed too.
    EXPECT_EQ(call(R"({"jsonrpc":"1.0","id":"k","method":"agent.ping"})")["id"], "k");
}

TEST_F(Conformance, NotificationsGetNoResponseButRun) {
    EXPECT_FALSE(server_.handleLine(R"({"jsonrpc":"2.0","method":"agent.ping"})").has_value());
    EXPECT_FALSE(server_.handleLine(R"({"jsonrpc":"2.0","method":"nope"})").has_value());
    EXPECT_FALSE(server_.handleLine(R"({"jsonrpc":"2.0","method":"workspace.read","params":{}})").has_value());
    EXPECT_FALSE(
        server_.handleLine(R"({"jsonrpc":"2.0","method":"workspace.write","params":{"path":"n.txt","text":"hi"}})")
            .has_value());
    EXPECT_EQ(test::readText(dir_.path() / "n.txt"), "hi");
    // An invalid envelope without an id is still answered (id null), as JSON-RPC 2.0 says.
    const rapidjson::Document d = call(R"({"method":"agent.ping"})");
    EXPECT_EQ(at(d, {"error", "code"}).GetInt(), -32600);
    EXPECT_TRUE(at(d, {"id"}).IsNull());
}

TEST_F(Conformance, BlankLinesAreInvalidRequestsWithIdNull) {
    for (const char* blank : {"", "  ", "\t", "  \r", "\r"}) {
        const std::optional<std::string> r = server_.handleLine(blank);
        ASSERT_TRUE(r.has_value()) << "'" << blank << "'";
        rapidjson::Document d;
        d.Parse(r->c_str());
        EXPECT_EQ(at(d, {"error", "code"}).GetInt(), -32600) << *r;
        EXPECT_TRUE(at(d, {"id"}).IsNull()) << *r;
        EXPECT_NE(std::string(at(d, {"error", "message"}).GetString()).find("empty line"), std::string::npos) << *r;
    }
}

TEST_F(Conformance, DepthIsCappedAndTheServerGoesOn) {
    const auto nested = [](int depth) {
        return std::string(R"({"jsonrpc":"2.0","id":1,"method":"agent.ping","params":{"p":)") +
               std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']') +
               "}}";
    };
    // params is level 2, "p" opens level 3: 62 more arrays reach exactly 64.
    EXPECT_EQ(code(nested(62)), -32602); // accepted by the parser; "p" is not a ping param
    const rapidjson::Document deep = call(nested(63));
    EXPECT_EQ(at(deep, {"error", "code"}).GetInt(), -32600);
    EXPECT_NE(std::string(at(deep, {"error", "message"}).GetString()).find("64"), std::string::npos);
    EXPECT_EQ(code(std::string(500000, '[')), -32600);
    EXPECT_EQ(code(std::string(500000, '{')), -32700); // '{' must be followed by a key
    EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"agent.ping"})"), 0);
}

TEST_F(Conformance, OversizeLineInProcess) {
    std::string big = R"({"jsonrpc":"2.0","id":1,"method":"agent.ping","params":{"pad":")";
    big.append(kMaxLineBytes, 'x');
    big += "\"}}";
    EXPECT_EQ(code(big), -32600);
    std::string fits = R"({"jsonrpc":"2.0","id":1,"method":"workspace.write","params":{"path":"big.txt","text":")";
    fits.append(kMaxLineBytes - fits.size() - 4, 'y');
    fits += "\"}}";
    ASSERT_LE(fits.size(), kMaxLineBytes);
    EXPECT_EQ(code(fits), 0);
}

TEST_F(Conformance, DescribePingSchema) {
    rapidjson::Document d = call(R"({"jsonrpc":"2.0","id":1,"method":"agent.describe","params":{}})");
    const auto& r = at(d, {"result"});
    EXPECT_STREQ(at(r, {"transport"}).GetString(), "stdio");
    EXPECT_EQ(fs::path(at(r, {"workspace_root"}).GetString()), fs::canonical(dir_.path()));
    EXPECT_STREQ(at(r, {"version"}).GetString(), std::string(taktVersion()).c_str());
    std::vector<std::string> methods;
    for (const auto& m : at(r, {"methods"}).GetArray()) {
        methods.emplace_back(m.GetString());
    }
    for (const char* m : {"agent.describe",
                          "workspace.read",
                          "workspace.write",
                          "workspace.project_info",
                          "lsp.diagnostics",
                          "lsp.format",
                          "runtime.build",
                          "runtime.compile_reload",
                          "runtime.validate",
                          "runtime.test",
                          "runtime.reload",
                          "harness.load",
                          "harness.reload",
                          "harness.cycle",
                          "harness.set_input",
                          "harness.get_output",
                          "harness.advance_time",
                          "harness.run_until",
                          "agent.ping",
                          "agent.schema",
                          "harness.set_direct_input",
                          "harness.set_direct_memory",
                          "harness.get_direct_output",
                          "harness.set_wall_clock"}) {
        EXPECT_NE(std::find(methods.begin(), methods.end(), m), methods.end()) << m;
    }
    EXPECT_EQ(methods.size(), 24u);
    ASSERT_EQ(at(r, {"notifications"}).Size(), 1u);
    EXPECT_STREQ(at(r, {"notifications"})[0].GetString(), "agent.ready");
    d = call(R"({"jsonrpc":"2.0","id":2,"method":"agent.ping"})");
    EXPECT_TRUE(at(d, {"result", "ok"}).GetBool());
    EXPECT_TRUE(at(d, {"result", "uptime_s"}).IsNumber());
    // Every method has a schema; harness.cycle's names its params.
    for (const std::string& m : methods) {
        d = call(R"({"jsonrpc":"2.0","id":3,"method":"agent.schema","params":{"method":")" + m + "\"}}");
        ASSERT_TRUE(d.HasMember("result")) << m;
        EXPECT_TRUE(at(d, {"result", "params", "type"}) == "object") << m;
        EXPECT_TRUE(at(d, {"result", "result"}).IsObject()) << m;
    }
    d = call(R"({"jsonrpc":"2.0","id":3,"method":"agent.schema","params":{"method":"harness.cycle"}})");
    for (const char* p : {"count", "dt_ms", "watch"}) {
        EXPECT_TRUE(at(d, {"result", "params", "properties"}).HasMember(p)) << p;
    }
}

TEST_F(Conformance, HarnessThroughTheSharedCore) {
    const rapidjson::Document load =
        call(R"({"jsonrpc":"2.0","id":1,"method":"harness.load","params":{"files":["src/main.st"]}})");
    ASSERT_TRUE(load.HasMember("result")) << toJson(load);
    const rapidjson::Document c =
        call(R"({"jsonrpc":"2.0","id":2,"method":"harness.cycle","params":{"count":4,"watch":["x"]}})");
    EXPECT_EQ(at(c, {"result", "watch", "x", "value"}).GetInt(), 5) << toJson(c);
    EXPECT_TRUE(at(c, {"result", "tasks"}).IsArray()) << toJson(c); // the program has no TASK: []
    // A compile error is -32002 with the harness's diagnostics as data; the old program stays.
    const rapidjson::Document bad =
        call(R"({"jsonrpc":"2.0","id":3,"method":"harness.reload","params":{"inline_sources":[{"text":"PROGRAM"}]}})");
    EXPECT_EQ(at(bad, {"error", "code"}).GetInt(), -32002);
    EXPECT_STREQ(at(bad, {"error", "data", "kind"}).GetString(), "compile_error");
    EXPECT_TRUE(at(bad, {"error", "data", "diagnostics"}).IsArray());
    EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":4,"method":"harness.get_output","params":{"name":"nope"}})"), -32602);
    EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":5,"method":"harness.set_input","params":{"name":"x","value":)"
                   R"({"type":"INT","value":70000}}})"),
              -32602);
    const rapidjson::Document reload =
        call(R"({"jsonrpc":"2.0","id":6,"method":"harness.reload","params":{"files":["src/main.st"]}})");
    EXPECT_EQ(at(reload, {"result", "kept"}).GetUint(), 1u) << toJson(reload);
}

// The harness through the Agent API: direct inputs and %M written from outside, a load that runs
// no initial cycle, and the overflow mode from the project's runtime.toml unless the call names one.
TEST(AgentHarness, DirectAddressesInitialCycleAndOverflow) {
    test::TempDir dir;
    dir.write("plant/runtime.toml", "[build]\noverflow = \"trap\"\n");
    dir.write("plant/src/main.st", "PROGRAM Main\nVAR start AT %IX0.1 : BOOL; level AT %MW4 : INT; "
                                   "first : BOOL := TRUE; sawStart : BOOL; i : INT := 32766; out : INT; END_VAR\n"
                                   "IF first THEN sawStart := start; first := FALSE; END_IF;\n"
                                   "out := level * 2;\nIF start THEN i := i + 1; END_IF;\nEND_PROGRAM\n");
    AgentOptions o;
    o.workspace = dir.path();
    AgentServer server(o);
    const auto call = [&](const std::string& method, const std::string& params) {
        const std::optional<std::string> r =
            server.handleLine(R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"(","params":)" + params + "}");
        rapidjson::Document d;
        d.Parse(r.value_or("").c_str());
        return d;
    };
    rapidjson::Document d = call("harness.load", R"({"project":"plant","initial_cycle":false})");
    ASSERT_TRUE(d.HasMember("result")) << toJson(d);
    EXPECT_EQ(at(d, {"result", "cycle"}).GetUint(), 0u);
    d = call("harness.set_direct_input", R"({"address":"%IX0.1","value":{"type":"BOOL","value":true}})");
    ASSERT_TRUE(d.HasMember("result")) << toJson(d);
    d = call("harness.set_direct_memory", R"({"address":"%MW4","value":{"type":"INT","value":21}})");
    ASSERT_TRUE(d.HasMember("result")) << toJson(d);
    d = call("harness.cycle", R"({"watch":["Main.sawStart","Main.out","Main.i"]})");
    ASSERT_TRUE(d.HasMember("result")) << toJson(d);
    EXPECT_TRUE(at(d, {"result", "watch", "Main.sawStart", "value"}).GetBool()) << toJson(d);
    EXPECT_EQ(at(d, {"result", "watch", "Main.out", "value"}).GetInt(), 42) << toJson(d);
    EXPECT_EQ(at(d, {"result", "watch", "Main.i", "value"}).GetInt(), 32767) << toJson(d);
    d = call("harness.get_direct_output", R"({"address":"%MW4"})");
    EXPECT_EQ(at(d, {"result", "value", "value"}).GetInt(), 21) << toJson(d);
    d = call("harness.set_direct_memory", R"({"address":"%QX0.0","value":{"type":"BOOL","value":true}})");
    EXPECT_EQ(at(d, {"error", "code"}).GetInt(), -32602) << toJson(d);
    // runtime.toml says trap: INT 32767 + 1 stored into INT faults.
    d = call("harness.cycle", "{}");
    ASSERT_TRUE(d.HasMember("error")) << toJson(d);
    EXPECT_EQ(at(d, {"error", "code"}).GetInt(), -32002);
    EXPECT_STREQ(at(d, {"error", "data", "kind"}).GetString(), "runtime_cycle_error");
    // The call's overflow wins over the project's; the default load still runs its first cycle.
    d = call("harness.load", R"({"project":"plant","overflow":"wrap"})");
    ASSERT_TRUE(d.HasMember("result")) << toJson(d);
    EXPECT_EQ(at(d, {"result", "cycle"}).GetUint(), 1u);
    call("harness.set_direct_input", R"({"address":"%IX0.1","value":{"type":"BOOL","value":true}})");
    d = call("harness.cycle", R"({"count":2,"watch":["Main.i"]})");
    ASSERT_TRUE(d.HasMember("result")) << toJson(d);
    EXPECT_EQ(at(d, {"result", "watch", "Main.i", "value"}).GetInt(), -32768) << toJson(d);
    // Inline sources have no runtime.toml: wrap unless the call says trap.
    d = call(
        "harness.load",
        R"({"inline_sources":[{"text":"PROGRAM Main\nVAR i : INT := 32767; END_VAR\ni := i + 1;\nEND_PROGRAM\n"}]})");
    ASSERT_TRUE(d.HasMember("result")) << toJson(d);
    d = call(
        "harness.load",
        R"({"overflow":"trap","inline_sources":[{"text":"PROGRAM Main\nVAR i : INT := 32767; END_VAR\ni := i + 1;\nEND_PROGRAM\n"}]})");
    ASSERT_TRUE(d.HasMember("error")) << toJson(d);
    EXPECT_STREQ(at(d, {"error", "data", "kind"}).GetString(), "runtime_cycle_error");
    // runtime.test runs a TEST_FINISHED() test on the cycle time the call gives.
    dir.write("plant/src/tests.st", "TEST_PROGRAM Elapses\nVAR t : TON; n : INT; END_VAR\n"
                                    "t(IN := TRUE, PT := T#100ms);\nn := n + 1;\n"
                                    "IF t.Q THEN ASSERT_EQUAL(T#100ms, t.ET); TEST_FINISHED(); END_IF;\n"
                                    "END_TEST_PROGRAM\n");
    d = call("runtime.test", R"({"project":"plant"})");
    EXPECT_EQ(at(d, {"result", "summary", "passed"}).GetUint(), 1u) << toJson(d);
    d = call("runtime.test", R"({"project":"plant","cycle_time_ms":50,"max_cycles":3})");
    EXPECT_EQ(at(d, {"result", "summary", "passed"}).GetUint(), 1u) << toJson(d); // 100 ms in 3 cycles
    d = call("runtime.test", R"({"project":"plant","max_cycles":5})");
    EXPECT_EQ(at(d, {"result", "summary", "errors"}).GetUint(), 1u) << toJson(d);
    // Bad values are -32602 naming the member.
    d = call("harness.load", R"({"project":"plant","overflow":"saturate"})");
    EXPECT_EQ(at(d, {"error", "code"}).GetInt(), -32602) << toJson(d);
}

} // namespace
} // namespace takt::agent
