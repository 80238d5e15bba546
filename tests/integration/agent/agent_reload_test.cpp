// runtime.reload / runtime.compile_reload against a stand-in control endpoint on loopback: the
// client logs in with the token, sends bytecode.reload with program.stbc as base64, and the
// endpoint's reply comes back in the result.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "takt/agent/agent_server.h"
#include "takt/agent/control_client.h"

namespace takt::agent {
namespace {

// Accepts one connection, answers auth.login and bytecode.reload, records the requests.
class FakeEndpoint {
public:
    FakeEndpoint() {
        listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener_, 1) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            return;
        }
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~FakeEndpoint() {
        if (thread_.joinable()) {
            thread_.join();
        }
        ::close(listener_);
    }
    FakeEndpoint(const FakeEndpoint&) = delete;
    FakeEndpoint& operator=(const FakeEndpoint&) = delete;

    [[nodiscard]] int port() const { return port_; }
    std::vector<std::string> requests;

private:
    void serve() {
        const int c = ::accept(listener_, nullptr, nullptr);
        if (c < 0) {
            return;
        }
        std::string buf;
        char chunk[65536];
        for (int answered = 0; answered < 2;) {
            const ssize_t n = ::read(c, chunk, sizeof chunk);
            if (n <= 0) {
                break;
            }
            buf.append(chunk, static_cast<std::size_t>(n));
            for (std::size_t nl; (nl = buf.find('\n')) != std::string::npos; ++answered) {
                requests.push_back(buf.substr(0, nl));
                buf.erase(0, nl + 1);
                const bool login = requests.back().find("auth.login") != std::string::npos;
                const std::string reply =
                    login ? R"({"jsonrpc":"2.0","method":"event","params":{"type":"noise"}})"
                            "\n"
                            R"({"jsonrpc":"2.0","id":1,"result":{"role":"engineer"}})"
                            "\n"
                          : R"({"jsonrpc":"2.0","id":2,"result":{"old_hash":"a","new_hash":"b","kept":3}})"
                            "\n";
                (void)::write(c, reply.data(), reply.size());
            }
        }
        ::close(c);
    }

    int listener_ = -1;
    int port_ = 0;
    std::thread thread_;
};

rapidjson::Document call(AgentServer& s, const std::string& line) {
    rapidjson::Document d;
    d.Parse(s.handleLine(line).value_or("null").c_str());
    return d;
}

TEST(AgentReload, SendsProgramToTheEndpointAndReturnsItsReply) {
    test::TempDir dir;
    dir.write("p/src/main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := x + 1;\nEND_PROGRAM\n");
    FakeEndpoint endpoint;
    ASSERT_GT(endpoint.port(), 0);
    dir.write("p/runtime.toml", "[runtime.control]\nendpoint = \"tcp://127.0.0.1:" + std::to_string(endpoint.port()) +
                                    "\"\nauth_token = \"0123456789abcdef0123\"\n");
    AgentOptions o;
    o.workspace = dir.path();
    AgentServer server(o);
    const rapidjson::Document d =
        call(server, R"({"jsonrpc":"2.0","id":1,"method":"runtime.reload","params":{"project":"p"}})");
    ASSERT_TRUE(d.IsObject() && d.HasMember("result")) << d.IsObject();
    EXPECT_EQ(d["result"]["reload"]["kept"].GetInt(), 3);
    EXPECT_STREQ(d["result"]["build"]["status"].GetString(), "ok");
    ASSERT_EQ(endpoint.requests.size(), 2u);
    EXPECT_NE(endpoint.requests[0].find(R"("token":"0123456789abcdef0123")"), std::string::npos);
    EXPECT_NE(endpoint.requests[1].find(R"("method":"bytecode.reload")"), std::string::npos);
    // The bytes are program.stbc as written, base64: 4 characters per 3 bytes.
    const auto size = std::filesystem::file_size(dir.path() / "p/program.stbc");
    const std::size_t at = endpoint.requests[1].find(R"("bytes":")");
    ASSERT_NE(at, std::string::npos);
    const std::size_t end = endpoint.requests[1].find('"', at + 9);
    EXPECT_EQ(end - (at + 9), 4 * ((size + 2) / 3));
}

TEST(AgentReload, DryRunAsksTheEndpointForAPreview) {
    test::TempDir dir;
    dir.write("p/src/main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := x + 1;\nEND_PROGRAM\n");
    FakeEndpoint endpoint;
    ASSERT_GT(endpoint.port(), 0);
    dir.write("p/runtime.toml", "[runtime.control]\nendpoint = \"tcp://127.0.0.1:" + std::to_string(endpoint.port()) +
                                    "\"\nauth_token = \"0123456789abcdef0123\"\n");
    AgentOptions o;
    o.workspace = dir.path();
    AgentServer server(o);
    const rapidjson::Document d =
        call(server, R"({"jsonrpc":"2.0","id":1,"method":"runtime.reload","params":{"project":"p","dry_run":true}})");
    ASSERT_TRUE(d.IsObject() && d.HasMember("result"));
    ASSERT_EQ(endpoint.requests.size(), 2u);
    EXPECT_NE(endpoint.requests[1].find(R"("dry_run":true)"), std::string::npos) << endpoint.requests[1];
    const rapidjson::Document bad =
        call(server, R"({"jsonrpc":"2.0","id":2,"method":"runtime.reload","params":{"project":"p","dry_run":"yes"}})");
    EXPECT_EQ(bad["error"]["code"].GetInt(), -32602);
}

TEST(AgentReload, CompileReloadBlocksOnErrorsAndReportsUnreachable) {
    test::TempDir dir;
    dir.write("p/src/main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := undefined_thing;\nEND_PROGRAM\n");
    AgentOptions o;
    o.workspace = dir.path();
    AgentServer server(o);
    rapidjson::Document d = call(
        server,
        R"({"jsonrpc":"2.0","id":1,"method":"runtime.compile_reload","params":{"project":"p","endpoint":"tcp://127.0.0.1:1"}})");
    ASSERT_TRUE(d.HasMember("result"));
    EXPECT_STREQ(d["result"]["runtimeStatus"].GetString(), "blocked");
    EXPECT_GE(d["result"]["errors"].GetUint(), 1u);
    EXPECT_FALSE(d["result"]["dirty"].GetBool());
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "p/program.stbc"));
    dir.write("p/src/main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := x + 1;\nEND_PROGRAM\n");
    d = call(server, R"({"jsonrpc":"2.0","id":2,"method":"runtime.compile_reload","params":{"project":"p"}})");
    EXPECT_STREQ(d["result"]["runtimeStatus"].GetString(), "no_endpoint");
    d = call(
        server,
        R"({"jsonrpc":"2.0","id":3,"method":"runtime.compile_reload","params":{"project":"p","endpoint":"tcp://127.0.0.1:1"}})");
    EXPECT_STREQ(d["result"]["runtimeStatus"].GetString(), "unreachable");
    EXPECT_STREQ(d["result"]["build"]["status"].GetString(), "ok");
}

// The whole path a developer uses: `takt agent serve`'s runtime.compile_reload builds the edited
// project and reloads it into a real `takt run` through its Unix control endpoint; the running
// program changes without a restart and keeps its state.
TEST(AgentReload, CompileReloadChangesARunningRuntime) {
    test::TempDir dir;
    const std::string socket = (dir.path() / "p/takt.sock").string();
    dir.write("p/runtime.toml", "[resource]\nname = \"r\"\ncycle_interval_ms = 5\n[runtime.control]\nendpoint = "
                                "\"unix://" +
                                    socket + "\"\n");
    dir.write("p/io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("p/src/main.st",
              "PROGRAM Main\nVAR cnt : UDINT; version : INT := 1; END_VAR\ncnt := cnt + 1;\nEND_PROGRAM\n");
    test::Process run(test::taktArgv({"run", "--project", (dir.path() / "p").string(), "--for", "60s"}),
                      {.log = dir.path() / "run.log"});
    ASSERT_TRUE(run.started());
    ASSERT_FALSE(run.waitForLine({"control endpoint"}).empty()) << run.log();
    ControlClientOptions client;
    client.endpoint = "unix://" + socket;
    const ControlReply before = controlCall(client, "runtime.status", "{}");
    ASSERT_TRUE(before.ok) << before.message;

    dir.write("p/src/main.st",
              "PROGRAM Main\nVAR cnt : UDINT; version : INT := 2; added : INT := 7; END_VAR\ncnt := cnt + 1;\n"
              "END_PROGRAM\n");
    AgentOptions o;
    o.workspace = dir.path();
    AgentServer server(o);
    const rapidjson::Document d =
        call(server, R"({"jsonrpc":"2.0","id":1,"method":"runtime.compile_reload","params":{"project":"p"}})");
    ASSERT_TRUE(d.IsObject() && d.HasMember("result")) << (d.IsObject() ? "no result" : "not an object");
    const rapidjson::Value& r = d["result"];
    ASSERT_TRUE(r.HasMember("reload")) << run.log();
    EXPECT_GE(r["reload"]["initialised"].GetInt(), 1); // `added`
    EXPECT_EQ(r["reload"]["retyped"].GetInt(), 0);

    const ControlReply after = controlCall(client, "var.read", R"({"names":["version","added","cnt"]})");
    ASSERT_TRUE(after.ok) << after.message;
    rapidjson::Document v;
    v.Parse(after.json.c_str());
    // Online change keeps the values of variables that still exist (a new initial value does not
    // reset a running variable) and initialises the new ones.
    EXPECT_EQ(v["values"]["version"]["value"].GetInt(), 1);
    EXPECT_EQ(v["values"]["added"]["value"].GetInt(), 7);
    EXPECT_EQ(v["values"]["cnt"]["value"].GetInt64(), v["cycle"].GetInt64()); // counted on across the swap
}

} // namespace
} // namespace takt::agent
