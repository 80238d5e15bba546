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

#include "../compiler/temp_dir.h"
#include "takt/agent/agent_server.h"

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

} // namespace
} // namespace takt::agent
