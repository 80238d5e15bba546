// The method tables: the params check and role check of the control endpoint, agent.schema from
// the table, and the method tables of docs/ regenerated from the tables (so they cannot drift).
// TAKT_UPDATE_DOCS=1 rewrites the docs sections instead of comparing them.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "agent_methods.h"
#include "control_session.h"
#include "method_table.h"
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
        session = std::make_unique<ControlSession>(*service, detail::PeerInfo{"test", "uid:0", true}, sink);
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

} // namespace
} // namespace takt::agent
