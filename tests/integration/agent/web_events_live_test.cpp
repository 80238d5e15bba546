// POST /api/events through the real `takt run` (docs/web.md "Live values"): the value changes of
// a subscription as Server-Sent Events, refused requests answered with their status and the
// JSON-RPC error naming the param, token auth as for /api/rpc, and a stream that outlives the
// server's idle deadlines (a comment heartbeat) and still delivers a change made after a quiet while.
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "support/control_live_support.h"
#include "support/net.h"

namespace takt::agent::live {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kProgram = R"(PROGRAM Main
VAR
    cnt : UDINT;
    setpoint : INT := 7;
END_VAR
cnt := cnt + 1;
END_PROGRAM
)";
constexpr const char* kEngineerToken = "engineer-8d27e4c1f0b9a63d52e7";

void writeProject(const TempDir& dir, std::uint16_t port, const std::string& web = {}) {
    dir.write("engineer.token", std::string(kEngineerToken) + "\n", 0600);
    dir.write("runtime.toml", fmt::format(R"([bundle]
version = 1

[resource]
name = "cell"
cycle_interval_ms = 10

[[runtime.control.tokens]]
role = "engineer"
token_file = "engineer.token"

[runtime.web]
listen = "127.0.0.1:{}"
{}
)",
                                          port, web));
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("src/main.st", kProgram);
}

bool waitWeb(Runtime& rt, std::uint16_t port) {
    const auto end = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < end) {
        if (test::tcpPortOpen(port)) {
            return true;
        }
        if (rt.waitForExit(std::chrono::milliseconds(0))) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

// An HTTP client of one event stream: the request written by hand on a socket (the stream has no
// end for a library client to wait for), the answer read as it comes.
class EventClient {
public:
    // `declared`: the Content-Length sent, when not the body's (a body announced and never sent).
    EventClient(std::uint16_t port, const std::string& body, const std::string& token = {},
                std::optional<std::size_t> declared = std::nullopt) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            return;
        }
        const std::string request = fmt::format(
            "POST /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{}"
            "Content-Length: {}\r\n\r\n{}",
            token.empty() ? "" : "Authorization: Bearer " + token + "\r\n", declared.value_or(body.size()), body);
        sent_ = ::write(fd_, request.data(), request.size()) == static_cast<ssize_t>(request.size());
    }
    ~EventClient() { ::close(fd_); }
    EventClient(const EventClient&) = delete;
    EventClient& operator=(const EventClient&) = delete;

    // Reads until `text` holds `what` (or the connection closes, or `ms` pass).
    bool readUntil(const std::string& what, int ms) {
        const auto end = Clock::now() + std::chrono::milliseconds(ms);
        while (text.find(what, seen_) == std::string::npos && Clock::now() < end) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) {
                continue;
            }
            char buf[8192];
            const ssize_t n = ::read(fd_, buf, sizeof buf);
            if (n <= 0) {
                closed = true;
                break;
            }
            text.append(buf, static_cast<std::size_t>(n));
        }
        const std::size_t at = text.find(what, seen_);
        if (at == std::string::npos) {
            return false;
        }
        seen_ = at + what.size();
        return true;
    }
    // The data of every `event: <name>` frame read so far.
    std::vector<rapidjson::Document> events(const std::string& name) const {
        std::vector<rapidjson::Document> out;
        const std::string head = "event: " + name + "\ndata: ";
        for (std::size_t at = text.find(head); at != std::string::npos; at = text.find(head, at + 1)) {
            const std::size_t from = at + head.size();
            const std::size_t to = text.find('\n', from);
            if (to == std::string::npos) {
                break;
            }
            out.push_back(parse(text.substr(from, to - from)));
        }
        return out;
    }

    bool sent_ = false;
    bool closed = false;
    std::string text;

private:
    int fd_ = -1;
    std::size_t seen_ = 0;
};

TEST(WebEventsLive, TheStreamDeliversChangesAndOutlivesTheIdleDeadlines) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, port);
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();

    EventClient cnt(port, R"({"names":["Main.cnt"],"interval_ms":50})");
    ASSERT_TRUE(cnt.sent_);
    ASSERT_TRUE(cnt.readUntil("\r\n\r\n", 5000)) << cnt.text;
    EXPECT_TRUE(cnt.text.starts_with("HTTP/1.1 200")) << cnt.text;
    EXPECT_NE(cnt.text.find("Content-Type: text/event-stream"), std::string::npos) << cnt.text;
    ASSERT_TRUE(cnt.readUntil("event: subscribed\n", 5000)) << cnt.text;
    for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(cnt.readUntil("event: var.changed\n", 5000)) << cnt.text;
    }
    ASSERT_TRUE(cnt.readUntil("\n\n", 1000));
    const std::vector<rapidjson::Document> changes = cnt.events("var.changed");
    ASSERT_GE(changes.size(), 4u) << cnt.text;
    for (std::size_t i = 1; i < changes.size(); ++i) {
        EXPECT_GT(changes[i]["cycle"].GetInt64(), changes[i - 1]["cycle"].GetInt64());
        EXPECT_GT(changes[i]["values"]["Main.cnt"]["value"].GetInt64(),
                  changes[i - 1]["values"]["Main.cnt"]["value"].GetInt64());
    }

    // A value that does not change: the first notification, then nothing but the heartbeat for
    // longer than the keep-alive, header and body deadlines; then a write reaches it.
    EventClient quiet(port, R"({"names":["Main.setpoint"],"interval_ms":20})");
    ASSERT_TRUE(quiet.readUntil("event: var.changed\n", 5000)) << quiet.text;
    ASSERT_TRUE(quiet.readUntil(": keep-alive\n\n", 15000)) << "no heartbeat: " << quiet.text;
    EXPECT_FALSE(quiet.closed);
    httplib::Client http("127.0.0.1", port);
    const httplib::Result w =
        http.Post("/api/rpc", {{"Authorization", std::string("Bearer ") + kEngineerToken}},
                  R"({"jsonrpc":"2.0","id":1,"method":"var.write","params":{"name":"Main.setpoint","value":"42"}})",
                  "application/json");
    ASSERT_TRUE(w);
    EXPECT_NE(w->body.find(R"("result")"), std::string::npos) << w->body;
    ASSERT_TRUE(quiet.readUntil("event: var.changed\n", 5000)) << quiet.text;
    ASSERT_TRUE(quiet.readUntil("\n\n", 1000));
    const std::vector<rapidjson::Document> seen = quiet.events("var.changed");
    ASSERT_EQ(seen.size(), 2u) << quiet.text;
    EXPECT_EQ(seen[0]["values"]["Main.setpoint"]["value"].GetInt(), 7);
    EXPECT_EQ(seen[1]["values"]["Main.setpoint"]["value"].GetInt(), 42);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

TEST(WebEventsLive, ARefusedSubscriptionIsAnsweredWithItsStatusAndTheParam) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, port);
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    httplib::Client http("127.0.0.1", port);
    const httplib::Result unknown =
        http.Post("/api/events", R"({"names":["Main.cnt","Main.nosuch"]})", "application/json");
    ASSERT_TRUE(unknown);
    EXPECT_EQ(unknown->status, 400);
    EXPECT_NE(unknown->body.find(R"("param":"names[1]")"), std::string::npos) << unknown->body;
    EXPECT_NE(unknown->body.find("nosuch"), std::string::npos) << unknown->body;
    const httplib::Result notJson = http.Post("/api/events", "[1,2]", "application/json");
    ASSERT_TRUE(notJson);
    EXPECT_EQ(notJson->status, 400);
    const httplib::Result get = http.Get("/api/events");
    ASSERT_TRUE(get);
    EXPECT_EQ(get->status, 405);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

TEST(WebEventsLive, WithTokenAuthTheStreamNeedsAToken) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, port, "auth = \"token\"");
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    httplib::Client http("127.0.0.1", port);
    const httplib::Result none = http.Post("/api/events", R"({"names":["Main.cnt"]})", "application/json");
    ASSERT_TRUE(none);
    EXPECT_EQ(none->status, 401);
    const httplib::Result wrong = http.Post("/api/events", {{"Authorization", "Bearer engineer-wrong-token-000000000"}},
                                            R"({"names":["Main.cnt"]})", "application/json");
    ASSERT_TRUE(wrong);
    EXPECT_EQ(wrong->status, 401) << wrong->body;
    EventClient ok(port, R"({"names":["Main.cnt"]})", kEngineerToken);
    ASSERT_TRUE(ok.readUntil("event: var.changed\n", 5000)) << ok.text;
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// The token of a stream is checked with its header, as for /api/rpc: a wrong one is 401 before
// any of the body is read (the body announced here never comes, and the answer does not wait for
// the 15 s body deadline). The stream's var.subscribe goes through the control service's
// dispatch: the audit log has it with the web client's peer and the token's role.
TEST(WebEventsLive, AWrongTokenIsRefusedBeforeTheBodyAndTheSubscriptionIsAudited) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, port, "auth = \"token\"");
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    const auto asked = Clock::now();
    EventClient wrong(port, "", "engineer-wrong-token-000000000", 4096);
    ASSERT_TRUE(wrong.sent_);
    ASSERT_TRUE(wrong.readUntil("\r\n\r\n", 5000)) << wrong.text;
    EXPECT_EQ(wrong.text.rfind("HTTP/1.1 401", 0), 0u) << wrong.text;
    EXPECT_NE(wrong.text.find("WWW-Authenticate: Bearer"), std::string::npos) << wrong.text;
    EXPECT_LT(Clock::now() - asked, std::chrono::seconds(5));

    EventClient ok(port, R"({"names":["Main.cnt"]})", kEngineerToken);
    ASSERT_TRUE(ok.readUntil("event: var.changed\n", 5000)) << ok.text;
    EXPECT_EQ(rt.stop(), 0) << rt.log();

    const std::string audit = readText(project.path() / ".takt" / "audit.log");
    const auto line = [&audit](const std::string& role, const std::string& method, const std::string& outcome) {
        for (std::size_t at = 0; at < audit.size();) {
            const std::size_t end = std::min(audit.find('\n', at), audit.size());
            const std::string l = audit.substr(at, end - at);
            if (l.find(" peer=web:127.0.0.1:") != std::string::npos &&
                l.find(" role=" + role + " method=" + method + " " + outcome) != std::string::npos) {
                return true;
            }
            at = end + 1;
        }
        return false;
    };
    EXPECT_TRUE(line("none", "auth.login", "error=")) << audit;
    EXPECT_TRUE(line("engineer", "auth.login", "ok")) << audit;
    EXPECT_TRUE(line("engineer", "var.subscribe", "ok")) << audit;
    EXPECT_EQ(audit.find(kEngineerToken), std::string::npos);
}

} // namespace
} // namespace takt::agent::live
