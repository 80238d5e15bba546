// The method tables: the params check and role check of the control endpoint, agent.schema from
// the table, and the method tables of docs/ regenerated from the tables (so they cannot drift).
// TAKT_UPDATE_DOCS=1 rewrites the docs sections instead of comparing them.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "api/agent_methods.h"
#include "control/control_session.h"
#include "harness/harness_support.h"
#include "rpc/method_table.h"
#include "support/paths.h"
#include "takt/agent/control_runtime.h"

namespace takt::agent {
namespace {

using detail::ControlService;
using detail::ControlSession;

// The runtime's real table (schemas, roles), with handlers that only record the call.
class SchemaTarget final : public ControlTarget {
public:
    SchemaTarget() {
        for (ControlMethod m : RuntimeControl::methodTable()) {
            m.handler = [](ControlTarget& t, std::string_view method, const rapidjson::Value&, ControlReplyFn reply) {
                static_cast<SchemaTarget&>(t).called.emplace_back(method);
                reply(ControlAnswer::result("{}"));
            };
            table_.push_back(m);
        }
    }
    [[nodiscard]] std::span<const ControlMethod> methods() const override { return table_; }
    void poll(std::vector<std::string>&) override {}
    std::vector<std::string> called;

private:
    std::vector<ControlMethod> table_;
};

class Lines final : public detail::SessionSink {
public:
    void sendLine(std::string line) override { lines.push_back(std::move(line)); }
    std::vector<std::string> lines;
};

struct Endpoint {
    explicit Endpoint(Role role = Role::Admin) {
        ControlOptions o;
        o.endpoint = "unix:///test.sock";
        o.version = "1.2.3";
        if (role != Role::Admin) {
            o.tokens = {{role, "test-token-0123456789abcdef"}};
        }
        service = std::make_unique<ControlService>(o, target, "unix");
        session =
            std::make_unique<ControlSession>(*service, detail::PeerInfo{"test", "uid:0", true, std::nullopt}, sink);
        if (role != Role::Admin) {
            (void)call(
                R"({"jsonrpc":"2.0","id":0,"method":"auth.login","params":{"token":"test-token-0123456789abcdef"}})");
        }
    }
    rapidjson::Document call(const std::string& line) {
        sink.lines.clear();
        session->handleLine(line);
        rapidjson::Document d;
        EXPECT_EQ(sink.lines.size(), 1u) << line;
        if (!sink.lines.empty()) {
            d.Parse(sink.lines.back().c_str());
        }
        return d;
    }
    rapidjson::Document call(const std::string& method, const std::string& params) {
        return call(R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"(","params":)" + params + "}");
    }
    SchemaTarget target;
    Lines sink;
    std::unique_ptr<ControlService> service;
    std::unique_ptr<ControlSession> session;
};

std::string errorParam(const rapidjson::Document& d) {
    if (!d.IsObject() || !d.HasMember("error") || d["error"]["code"].GetInt() != -32602 ||
        !d["error"].HasMember("data")) {
        return "<not a -32602 with data>";
    }
    return d["error"]["data"]["param"].GetString();
}

TEST(RpcMethodTable, ControlParamsAreCheckedAgainstTheSchemaBeforeTheHandler) {
    Endpoint e;
    struct Case {
        const char* method;
        const char* params;
        const char* param;
    };
    const Case cases[] = {
        {"var.write", R"({"value":{"type":"INT","value":1}})", "name"},      // missing
        {"var.write", R"({"name":"P.x"})", "value"},                         // missing
        {"var.write", R"({"name":7,"value":{}})", "name"},                   // mistyped
        {"var.write", R"({"name":"P.x","value":{},"force":true})", "force"}, // unknown
        {"var.read", R"({"names":"P.x"})", "names"},                         // not an array
        {"var.read", R"({"names":["P.x",3]})", "names[1]"},                  // item mistyped
        {"io.write", R"({"address":"%QX0.0"})", "value"},                    //
        {"io.unforce", R"({})", "address"},                                  //
        {"runtime.step", R"({"count":0})", "count"},                         // below minimum
        {"runtime.step", R"({"count":1000001})", "count"},                   // above maximum
        {"runtime.step", R"({"count":"2"})", "count"},                       //
        {"runtime.restart", R"({"mode":"hot"})", "mode"},                    // not in enum
        {"runtime.status", R"({"verbose":true})", "verbose"},                // takes none
        {"bytecode.reload", R"({"idempotency_key":"k"})", "bytes"},          //
        {"bytecode.reload", R"({"bytes":"AA==","idempotency_key":5})", "idempotency_key"},
        {"events.subscribe", R"({"types":"fault"})", "types"},             //
        {"events.subscribe", R"({"types":["fault",3]})", "types[1]"},      // schema
        {"events.subscribe", R"({"types":["fault","nope"]})", "types[1]"}, // not an event
        {"agent.schema", R"({"method":1})", "method"},                     //
        {"auth.login", R"({})", "token"},                                  //
    };
    for (const Case& c : cases) {
        const rapidjson::Document d = e.call(c.method, c.params);
        EXPECT_EQ(errorParam(d), c.param) << c.method << " " << c.params << " -> " << e.sink.lines.back();
    }
    EXPECT_TRUE(e.target.called.empty()) << e.target.called.front();
    // Valid params reach the handler.
    for (const auto& [method, params] : std::vector<std::pair<std::string, std::string>>{
             {"var.write", R"({"name":"P.x","value":{"type":"INT","value":1}})"},
             {"var.read", R"({"names":["P.x"]})"},
             {"var.read", R"({"name":"P.x"})"},
             {"runtime.step", R"({"count":5})"},
             {"runtime.restart", R"({"mode":"cold"})"},
             {"runtime.status", R"({})"},
             {"bytecode.reload", R"({"bytes":"AA==","idempotency_key":"k"})"}}) {
        const rapidjson::Document d = e.call(method, params);
        EXPECT_TRUE(d.HasMember("result")) << method << " " << params << " -> " << e.sink.lines.back();
    }
    EXPECT_EQ(e.target.called.size(), 7u);
}

TEST(RpcMethodTable, RolesComeFromTheTableAndAreCheckedBeforeParams) {
    Endpoint viewer(Role::Viewer);
    // A viewer may read, not write: -32011 even with bad params (the role is checked first).
    EXPECT_EQ(viewer.call("var.write", "{}")["error"]["code"].GetInt(), kForbidden);
    EXPECT_EQ(viewer.call("runtime.pause", "{}")["error"]["code"].GetInt(), kForbidden);
    EXPECT_TRUE(viewer.call("var.read", R"({"names":["a"]})").HasMember("result"));
    Endpoint op(Role::Operator);
    EXPECT_TRUE(op.call("runtime.pause", "{}").HasMember("result"));
    EXPECT_EQ(op.call("bytecode.reload", R"({"bytes":""})")["error"]["code"].GetInt(), kForbidden);
    for (const ControlMethod& m : RuntimeControl::methodTable()) {
        ASSERT_TRUE(m.role.has_value()) << m.name << ": every runtime method needs a role";
    }
}

TEST(RpcMethodTable, ControlSchemaAndDescribeComeFromTheTable) {
    Endpoint e;
    const rapidjson::Document one = e.call("agent.schema", R"({"method":"var.write"})");
    ASSERT_TRUE(one.HasMember("result")) << e.sink.lines.back();
    EXPECT_STREQ(one["result"]["role"].GetString(), "engineer");
    EXPECT_STREQ(one["result"]["params"]["required"][0].GetString(), "name");
    EXPECT_TRUE(one["result"]["result"].IsObject());
    const rapidjson::Document all = e.call("agent.schema", "{}");
    const rapidjson::Document described = e.call("agent.describe", "{}");
    const auto& names = described["result"]["methods"];
    ASSERT_EQ(all["result"]["methods"].Size(), names.Size());
    ASSERT_EQ(names.Size(), e.service->methods().size());
    for (rapidjson::SizeType i = 0; i < names.Size(); ++i) {
        EXPECT_STREQ(all["result"]["methods"][i]["method"].GetString(), names[i].GetString());
        EXPECT_TRUE(all["result"]["methods"][i]["params"].IsObject());
    }
    EXPECT_EQ(e.call("agent.schema", R"({"method":"nope"})")["error"]["code"].GetInt(), -32602);
}

TEST(RpcMethodTable, EverySchemaOfEveryTableParses) {
    std::vector<rpc::MethodFacts> all = rpc::factsOf(detail::methodTable());
    for (const rpc::MethodFacts& f : rpc::factsOf(ControlSession::builtins())) {
        all.push_back(f);
    }
    for (const rpc::MethodFacts& f : rpc::factsOf(RuntimeControl::methodTable())) {
        all.push_back(f);
    }
    for (const rpc::MethodFacts& m : all) {
        for (const std::string_view schema : {m.paramsSchema, m.resultSchema}) {
            rapidjson::Document d;
            d.Parse(schema.data(), schema.size());
            EXPECT_FALSE(d.HasParseError()) << m.name << ": " << schema;
            EXPECT_TRUE(d.IsObject()) << m.name;
        }
        EXPECT_FALSE(m.summary.empty()) << m.name;
    }
}

// The section of `file` between the generated-table markers must be `table`.
void expectDocTable(const std::string& file, const std::string& table) {
    const std::string path = std::string(TAKT_SOURCE_DIR) + "/" + file;
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    std::stringstream buf;
    buf << in.rdbuf();
    std::string text = buf.str();
    const std::string begin = "<!-- method table: generated from the method table, see rpc_method_table_test -->\n";
    const std::string end = "<!-- end of method table -->";
    const std::size_t a = text.find(begin);
    const std::size_t b = text.find(end);
    ASSERT_NE(a, std::string::npos) << file << " has no generated method table";
    ASSERT_NE(b, std::string::npos) << file;
    const std::string current = text.substr(a + begin.size(), b - a - begin.size());
    if (std::getenv("TAKT_UPDATE_DOCS") != nullptr) {
        text.replace(a + begin.size(), b - a - begin.size(), table);
        std::ofstream(path) << text;
        return;
    }
    EXPECT_EQ(current, table) << file
                              << " differs from the method table; run the test with TAKT_UPDATE_DOCS=1 to "
                                 "regenerate it";
}

TEST(RpcMethodTable, AgentApiDocsListTheAgentTable) {
    expectDocTable("docs/agent-api.md", rpc::markdownTable(rpc::factsOf(detail::methodTable()), false));
}

TEST(RpcMethodTable, ControlDocsListTheControlTable) {
    Endpoint e;
    expectDocTable("docs/control.md", rpc::markdownTable(rpc::factsOf(e.service->methods()), true));
}

std::vector<rpc::MethodFacts> harnessFacts() {
    std::vector<rpc::MethodFacts> out;
    for (const Harness::CommandFacts& c : Harness::commandFacts()) {
        out.push_back(c.facts);
    }
    return out;
}

TEST(RpcMethodTable, HarnessDocsListTheHarnessTable) {
    expectDocTable("docs/harness.md", rpc::markdownTable(harnessFacts(), false));
}

// The harness schemas are documentation (the NDJSON protocol ignores unknown members), so they
// are held to every request takt's own tests send and expect answered: the seed 001 replay and
// every conformance script. A schema that refuses one of them fails here.
TEST(RpcMethodTable, EveryHarnessRequestOfTheSeedReplayAndTheConformanceScriptsFitsItsSchema) {
    rpc::ParamsSchemas schemas;
    for (const rpc::MethodFacts& f : harnessFacts()) {
        schemas.add(f);
    }
    std::vector<std::pair<std::string, std::string>> requests; // where, request line
    {
        std::ifstream in(std::string(TAKT_SOURCE_DIR) + "/tests/protocol/seed001_replay.json");
        std::stringstream buf;
        buf << in.rdbuf();
        rapidjson::Document d;
        d.Parse(buf.str().c_str());
        ASSERT_TRUE(d.IsObject());
        for (const auto& step : d["steps"].GetArray()) {
            const bool refused =
                step.HasMember("expect") && step["expect"].HasMember("ok") && !step["expect"]["ok"].GetBool();
            if (!refused) {
                requests.emplace_back("seed001_replay.json", step["request"].GetString());
            }
        }
    }
    const std::filesystem::path root = std::filesystem::path(TAKT_SOURCE_DIR) / "tests/st/conformance";
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
        if (entry.path().extension() != ".script") {
            continue;
        }
        std::ifstream in(entry.path());
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line);) {
            lines.push_back(line);
        }
        for (std::size_t n = 0; n < lines.size(); ++n) {
            // A request the script expects refused (`{"expect":{"ok":false…`) may break its schema.
            const bool refused = n + 1 < lines.size() && lines[n + 1].find(R"("ok":false)") != std::string::npos;
            if (lines[n].starts_with("{\"cmd\"") && !refused) {
                requests.emplace_back(fmt::format("{}:{}", entry.path().lexically_relative(root).string(), n + 1),
                                      lines[n]);
            }
        }
    }
    ASSERT_GT(requests.size(), 250u);
    std::size_t checked = 0;
    for (const auto& [where, text] : requests) {
        rapidjson::Document req;
        req.Parse(text.c_str());
        if (!req.IsObject() || !req.HasMember("cmd") || !req["cmd"].IsString()) {
            continue; // malformed on purpose: the protocol tests check the answer
        }
        const std::string cmd = req["cmd"].GetString();
        const std::vector<rpc::MethodFacts> facts = harnessFacts();
        if (std::none_of(facts.begin(), facts.end(), [&](const rpc::MethodFacts& f) { return f.name == cmd; })) {
            continue; // an unknown command on purpose (invalid_request is asserted by the script)
        }
        req.RemoveMember("cmd");
        // The conformance runner replaces these with source / sources before sending.
        if (req.HasMember("source_file")) {
            req.RemoveMember("source_file");
            req.AddMember("source", "text", req.GetAllocator());
        }
        if (req.HasMember("source_files")) {
            req.RemoveMember("source_files");
            rapidjson::Value list(rapidjson::kArrayType);
            list.PushBack("text", req.GetAllocator());
            req.AddMember("sources", list, req.GetAllocator());
        }
        rpc::Error error;
        EXPECT_TRUE(schemas.check(cmd, req, error)) << where << ": " << cmd << ": " << error.message;
        ++checked;
    }
    EXPECT_GT(checked, 250u);
}

} // namespace
} // namespace takt::agent
