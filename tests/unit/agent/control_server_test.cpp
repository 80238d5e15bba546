// The control endpoint over real sockets (loopback TCP and Unix sockets in a temp dir): framing,
// size and depth caps, the auth matrix, roles, back-off, rate limit, connection cap, idle
// timeout, events, the audit log.
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/control_test_support.h"
#include "support/temp_dir.h"
#include "takt/agent/control.h"

namespace takt::agent {
namespace {

using test::errorCode;
using test::isResult;
using test::LineClient;
using test::parseJson;
using test::request;

const std::string kViewer = "viewer-0123456789abcdef";
const std::string kEngineer = "engineer-fedcba9876543210";

struct Server {
    explicit Server(ControlOptions o) : server(std::move(o), target) {}
    bool start() { return server.start(error); }
    test::RecordingTarget target;
    ControlServer server;
    std::string error;
};

ControlOptions tcpOptions() {
    ControlOptions o;
    o.endpoint = "tcp://127.0.0.1:0";
    o.tokens = {{Role::Viewer, kViewer}, {Role::Engineer, kEngineer}};
    o.version = "9.9.9";
    return o;
}

std::unique_ptr<Server> startTcp(ControlOptions o = tcpOptions()) {
    auto s = std::make_unique<Server>(std::move(o));
    EXPECT_TRUE(s->start()) << s->error;
    return s;
}

TEST(ControlServer, BoundEndpointReportsTheEphemeralPort) {
    auto s = startTcp();
    const std::string bound = s->server.boundEndpoint();
    EXPECT_TRUE(bound.starts_with("tcp://127.0.0.1:")) << bound;
    EXPECT_NE(bound, "tcp://127.0.0.1:0");
    LineClient c(bound);
    ASSERT_TRUE(c.connected());
    const auto d = parseJson(c.call(request(1, "agent.ping")));
    ASSERT_TRUE(d.HasMember("result"));
    EXPECT_TRUE(d["result"]["ok"].GetBool());
    EXPECT_STREQ(d["result"]["version"].GetString(), "9.9.9");
    EXPECT_TRUE(d["result"]["uptime_s"].IsNumber());
}

TEST(ControlServer, FramingSplitJoinedNotificationsAndBatches) {
    auto s = startTcp();
    LineClient c(s->server.boundEndpoint());
    // Two requests in one write, the second split across two writes; a notification and a blank
    // line in between.
    ASSERT_TRUE(c.send(request(1, "agent.ping") + "\n" + R"({"jsonrpc":"2.0","method":"agent.ping"})" + "\n\n" +
                       R"({"jsonrpc":"2.0","id":"two","met)"));
    ASSERT_TRUE(c.send(R"(hod":"agent.describe"})"
                       "\r\n"));
    auto first = parseJson(c.line());
    ASSERT_TRUE(first.IsObject());
    EXPECT_EQ(first["id"].GetInt(), 1);
    // The blank line is answered like the agent API answers it, never skipped in silence.
    auto blank = parseJson(c.line());
    ASSERT_TRUE(blank.IsObject());
    EXPECT_TRUE(blank["id"].IsNull());
    EXPECT_EQ(blank["error"]["code"].GetInt(), -32600);
    EXPECT_STREQ(blank["error"]["message"].GetString(), "empty line: send one JSON request per line");
    auto second = parseJson(c.line());
    ASSERT_TRUE(second.IsObject());
    EXPECT_STREQ(second["id"].GetString(), "two");
    EXPECT_STREQ(second["result"]["transport"].GetString(), "tcp");
    EXPECT_STREQ(second["result"]["notifications"][0].GetString(), "event");
    // A batch is one -32600; invalid JSON is -32700 with id null; ids are echoed as written.
    EXPECT_EQ(errorCode(c.call("[" + request(3, "agent.ping") + "," + request(4, "agent.ping") + "]")), -32600);
    const std::string parseError = c.call("{not json");
    EXPECT_EQ(errorCode(parseError), -32700);
    EXPECT_NE(parseError.find("\"id\":null"), std::string::npos);
    EXPECT_NE(c.call(R"({"jsonrpc":"2.0","id":1.50,"method":"agent.ping"})").find("\"id\":1.50"), std::string::npos);
    EXPECT_EQ(errorCode(c.call(R"({"jsonrpc":"1.0","id":5,"method":"agent.ping"})")), -32600);
    EXPECT_EQ(errorCode(c.call(R"({"jsonrpc":"2.0","id":6,"method":"no.such"})")), -32601);
    EXPECT_EQ(errorCode(c.call(R"({"jsonrpc":"2.0","id":7,"method":"agent.ping","params":[1]})")), -32602);
}

// An unpaired surrogate escape and a NUL byte (which ended the request early: the ping before it
// ran) are -32700 with id null; the connection serves the next line.
TEST(ControlServer, UnpairedSurrogateAndNulByteAreParseErrors) {
    auto s = startTcp();
    LineClient c(s->server.boundEndpoint());
    const std::string surrogate = R"({"jsonrpc":"2.0","id":1,"method":"agent.ping","params":{"\udc00":1}})";
    const std::string lone = c.call(surrogate);
    EXPECT_EQ(errorCode(lone), -32700) << lone;
    EXPECT_NE(lone.find("offset 57"), std::string::npos) << lone;
    const std::string nul = c.call(request(2, "agent.ping") + std::string(1, '\0') + "garbage");
    EXPECT_EQ(errorCode(nul), -32700) << nul;
    EXPECT_NE(nul.find("\"id\":null"), std::string::npos) << nul;
    EXPECT_EQ(parseJson(c.call(request(3, "agent.ping")))["id"].GetInt(), 3);
}

TEST(ControlServer, OversizeLineGetsOneErrorAndTheNextLineIsServed) {
    auto s = startTcp();
    LineClient c(s->server.boundEndpoint());
    const std::string huge(std::size_t{1} << 20, 'a');
    ASSERT_TRUE(c.send("{\"x\":\"" + huge));
    ASSERT_TRUE(c.send(huge + "\"}\n" + request(9, "agent.ping") + "\n"));
    const std::string e = c.line();
    EXPECT_EQ(errorCode(e), -32600) << e.substr(0, 200);
    EXPECT_NE(e.find("1 MiB"), std::string::npos);
    const auto ping = parseJson(c.line());
    ASSERT_TRUE(ping.IsObject());
    EXPECT_EQ(ping["id"].GetInt(), 9);
    EXPECT_TRUE(ping.HasMember("result"));
}

// A session with the engineer role takes lines up to 32 MiB (bytecode.reload carries a large
// program's bytecode in one line); before login, as a viewer and after a failed login the limit
// is 1 MiB.
TEST(ControlServer, AnEngineersSessionTakesLinesUpTo32MiB) {
    auto s = startTcp();
    LineClient c(s->server.boundEndpoint());
    const auto ping = [&c](int id, std::size_t padding) {
        return c.call(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"agent.ping","params":{"pad":")" +
                      std::string(padding, 'p') + R"("}})");
    };
    const std::size_t large = std::size_t{3} << 20;
    std::string refused = ping(1, large);
    EXPECT_EQ(errorCode(refused), -32600) << refused.substr(0, 200);
    EXPECT_NE(refused.find("1 MiB"), std::string::npos);
    ASSERT_EQ(parseJson(c.login(kViewer, 2))["result"]["role"].GetString(), std::string("viewer"));
    EXPECT_EQ(errorCode(ping(3, large)), -32600);

    ASSERT_EQ(parseJson(c.login(kEngineer, 4))["result"]["role"].GetString(), std::string("engineer"));
    const auto taken = parseJson(ping(5, large));
    ASSERT_TRUE(taken.IsObject());
    EXPECT_EQ(taken["id"].GetInt(), 5);
    EXPECT_TRUE(taken.HasMember("result"));
    refused = ping(6, (std::size_t{32} << 20) + 1);
    EXPECT_EQ(errorCode(refused), -32600) << refused.substr(0, 200);
    EXPECT_NE(refused.find("32 MiB"), std::string::npos);
    EXPECT_TRUE(isResult(ping(7, 10))); // the next line is served

    EXPECT_EQ(errorCode(c.login("not-the-token-xxxxxxxxxx", 8)), -32010);
    EXPECT_EQ(errorCode(ping(9, large)), -32600);
}

TEST(ControlServer, NestingDeeperThan64IsRefused) {
    auto s = startTcp();
    LineClient c(s->server.boundEndpoint());
    const std::string deep = std::string(65, '[') + std::string(65, ']');
    EXPECT_EQ(errorCode(c.call(R"({"jsonrpc":"2.0","id":1,"method":"agent.ping","params":{"a":)" + deep + "}}")),
              -32600);
    const std::string ok = std::string(10, '[') + std::string(10, ']');
    EXPECT_TRUE(isResult(c.call(R"({"jsonrpc":"2.0","id":2,"method":"agent.ping","params":{"a":)" + ok + "}}")));
}

// No token, wrong, prefix, suffix, padded: all -32010, the session stays unauthorised and the
// target sees no call.
TEST(ControlServer, AuthMatrixRejectsEveryNearMiss) {
    const std::vector<std::string> bad = {"",
                                          "wrong-token-0000000000",
                                          kEngineer.substr(0, kEngineer.size() - 1),
                                          kEngineer.substr(1),
                                          kEngineer + "0",
                                          kEngineer + " ",
                                          " " + kEngineer,
                                          kEngineer + "\\u0000",
                                          kViewer + kEngineer};
    for (const std::string& token : bad) {
        auto s = startTcp(); // a fresh server each time: the back-off starts at five failures
        LineClient c(s->server.boundEndpoint());
        EXPECT_EQ(errorCode(c.call(request(1, "var.write", R"({"name":"x","value":1})"))), -32010);
        EXPECT_EQ(errorCode(c.login(token, 2)), -32010) << "token '" << token << "'";
        EXPECT_EQ(errorCode(c.call(request(3, "var.write", R"({"name":"x","value":1})"))), -32010);
        EXPECT_EQ(errorCode(c.call(request(4, "runtime.status"))), -32010);
        // Allowed before login: ping, describe, schema.
        EXPECT_TRUE(isResult(c.call(request(5, "agent.describe"))));
        EXPECT_TRUE(isResult(c.call(request(6, "agent.schema", R"({"method":"var.write"})"))));
        EXPECT_TRUE(s->target.calls().empty()) << "token '" << token << "'";
    }
}

TEST(ControlServer, RolesAreCheckedBeforeTheTargetIsCalled) {
    auto s = startTcp();
    LineClient c(s->server.boundEndpoint());
    EXPECT_EQ(parseJson(c.login(kViewer))["result"]["role"].GetString(), std::string("viewer"));
    const std::string forbidden = c.call(request(2, "var.write", R"({"name":"x","value":1})"));
    EXPECT_EQ(errorCode(forbidden), -32011);
    EXPECT_NE(forbidden.find("var.write"), std::string::npos);
    EXPECT_NE(forbidden.find("engineer"), std::string::npos);
    EXPECT_EQ(errorCode(c.call(request(3, "runtime.pause"))), -32011);
    EXPECT_TRUE(s->target.calls().empty());
    EXPECT_TRUE(isResult(c.call(request(4, "runtime.status"))));
    EXPECT_EQ(parseJson(c.login(kEngineer, 5))["result"]["role"].GetString(), std::string("engineer"));
    EXPECT_TRUE(isResult(c.call(request(6, "var.write", R"({"name":"x","value":1})"))));
    // An answer that comes later (at the target's next poll) still reaches the client.
    EXPECT_EQ(parseJson(c.call(request(7, "runtime.pause")))["result"]["state"].GetString(), std::string("paused"));
    EXPECT_EQ(s->target.calls(), (std::vector<std::string>{"runtime.status", "var.write", "runtime.pause"}));
}

TEST(ControlServer, FiveFailedLoginsStartTheBackoff) {
    auto s = startTcp();
    LineClient c(s->server.boundEndpoint());
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(errorCode(c.login("not-the-token-" + std::to_string(i) + "xxxxxxxx", i)), -32010);
    }
    // Even the right token is refused now, on this connection and on a new one from the same peer.
    const auto refused = parseJson(c.login(kEngineer, 10));
    ASSERT_TRUE(refused.HasMember("error"));
    EXPECT_EQ(refused["error"]["code"].GetInt(), -32005);
    EXPECT_GT(refused["error"]["data"]["retry_after_ms"].GetInt64(), 0);
    LineClient other(s->server.boundEndpoint());
    EXPECT_EQ(errorCode(other.login(kEngineer)), -32005);
    EXPECT_EQ(errorCode(other.call(request(2, "runtime.status"))), -32010);
    EXPECT_TRUE(s->target.calls().empty());
}

TEST(ControlServer, AViewerLoginBetweenGuessesDoesNotResetTheBackoff) {
    auto s = startTcp();
    LineClient c(s->server.boundEndpoint());
    // Someone with a viewer token guessing at the engineer token: the valid viewer logins in
    // between must not wipe the failures out.
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(errorCode(c.login("guess-at-the-engineer-" + std::to_string(i), 2 * i)), -32010);
        if (i < 4) {
            EXPECT_EQ(parseJson(c.login(kViewer, 2 * i + 1))["result"]["role"].GetString(), std::string("viewer"));
        }
    }
    EXPECT_EQ(errorCode(c.login(kEngineer, 20)), -32005);
}

TEST(ControlServer, RateLimitAnswers32005WithRetryAfter) {
    ControlOptions o = tcpOptions();
    o.maxRequestsPerSecond = 5;
    auto s = startTcp(o);
    LineClient c(s->server.boundEndpoint());
    std::string burst;
    for (int i = 0; i < 40; ++i) {
        burst += request(i, "agent.ping") + "\n";
    }
    ASSERT_TRUE(c.send(burst));
    int ok = 0;
    int limited = 0;
    for (int i = 0; i < 40; ++i) {
        const std::string line = c.line();
        ASSERT_FALSE(line.empty()) << "reply " << i;
        const auto d = parseJson(line);
        EXPECT_EQ(d["id"].GetInt(), i); // every request answered, in order
        if (d.HasMember("result")) {
            ++ok;
        } else if (d["error"]["code"].GetInt() == -32005) {
            ++limited;
            EXPECT_GT(d["error"]["data"]["retry_after_ms"].GetInt64(), 0);
        }
    }
    EXPECT_GE(ok, 5);
    EXPECT_GT(limited, 0);
    EXPECT_EQ(ok + limited, 40);
}

TEST(ControlServer, ConnectionCapRefusesANewcomerWhenEverySessionIsLoggedIn) {
    ControlOptions o = tcpOptions();
    o.maxConnections = 2;
    auto s = startTcp(o);
    LineClient a(s->server.boundEndpoint());
    LineClient b(s->server.boundEndpoint());
    ASSERT_TRUE(isResult(a.login(kViewer)));
    ASSERT_TRUE(isResult(b.login(kViewer)));
    LineClient extra(s->server.boundEndpoint());
    std::string line;
    ASSERT_EQ(extra.read(line), LineClient::Read::Line);
    EXPECT_EQ(errorCode(line), -32005);
    EXPECT_NE(line.find("too many connections"), std::string::npos);
    EXPECT_EQ(extra.read(line), LineClient::Read::Eof);
    EXPECT_TRUE(isResult(a.call(request(2, "runtime.status"))));
}

TEST(ControlServer, ConnectionCapEvictsTheOldestSessionThatNeverLoggedIn) {
    ControlOptions o = tcpOptions();
    o.maxConnections = 2;
    auto s = startTcp(o);
    LineClient proven(s->server.boundEndpoint());
    ASSERT_TRUE(isResult(proven.login(kViewer)));
    LineClient idle(s->server.boundEndpoint());
    ASSERT_TRUE(isResult(idle.call(request(1, "agent.ping")))); // connected, never logged in
    LineClient newcomer(s->server.boundEndpoint());
    ASSERT_TRUE(isResult(newcomer.login(kViewer)));
    std::string line;
    ASSERT_EQ(idle.read(line), LineClient::Read::Line);
    EXPECT_EQ(errorCode(line), -32005);
    EXPECT_EQ(idle.read(line), LineClient::Read::Eof);
    EXPECT_TRUE(isResult(proven.call(request(2, "runtime.status"))));
    EXPECT_TRUE(isResult(newcomer.call(request(3, "runtime.status"))));
}

TEST(ControlServer, IdleSessionsAreClosed) {
    ControlOptions o = tcpOptions();
    o.idleTimeoutMs = 100;
    auto s = startTcp(o);
    LineClient c(s->server.boundEndpoint());
    ASSERT_TRUE(isResult(c.login(kViewer)));
    std::string line;
    EXPECT_EQ(c.read(line, 10000), LineClient::Read::Eof);
}

TEST(ControlServer, AClientThatDoesNotReadIsDisconnected) {
    ControlOptions o = tcpOptions();
    o.maxRequestsPerSecond = 100000;
    auto s = startTcp(o);
    LineClient c(s->server.boundEndpoint());
    ASSERT_TRUE(isResult(c.login(kViewer)));
    // 400 replies of 64 KiB (25 MiB) while the client reads nothing: the queue passes 1 MiB.
    std::string burst;
    for (int i = 0; i < 400; ++i) {
        burst += request(i, "big") + "\n";
    }
    (void)c.send(burst); // may fail once the server has closed the connection
    int replies = 0;
    std::string line;
    LineClient::Read r;
    while ((r = c.read(line, 10000)) == LineClient::Read::Line) {
        ++replies;
    }
    EXPECT_EQ(r, LineClient::Read::Eof);
    EXPECT_LT(replies, 400);
}

TEST(ControlServer, EventsReachSubscribedSessionsOnly) {
    auto s = startTcp();
    LineClient c(s->server.boundEndpoint());
    LineClient other(s->server.boundEndpoint());
    ASSERT_TRUE(isResult(c.login(kViewer)));
    ASSERT_TRUE(isResult(other.login(kViewer)));
    EXPECT_EQ(errorCode(c.call(request(2, "events.subscribe", R"({"types":["fault","nonsense"]})"))), -32602);
    const auto sub = parseJson(c.call(request(3, "events.subscribe", R"({"types":["fault","reload_applied"]})")));
    ASSERT_TRUE(sub.HasMember("result"));
    EXPECT_EQ(sub["result"]["subscribed"].Size(), 2U);
    s->target.emit(R"({"type":"runtime_started","ts":1})");
    s->target.emit(R"({"type":"fault","ts":2,"message":"division by zero"})");
    s->target.emit(R"({"type":"reload_applied","ts":3})");
    const auto first = parseJson(c.line());
    ASSERT_TRUE(first.IsObject());
    EXPECT_STREQ(first["method"].GetString(), "event");
    EXPECT_STREQ(first["params"]["type"].GetString(), "fault");
    EXPECT_STREQ(first["params"]["message"].GetString(), "division by zero");
    EXPECT_STREQ(parseJson(c.line())["params"]["type"].GetString(), "reload_applied");
    std::string line;
    EXPECT_EQ(other.read(line, 200), LineClient::Read::Timeout); // not subscribed: nothing
}

TEST(ControlServer, UnixSocketWithoutTokensTreatsPeersAsAdmin) {
    test::TempDir dir;
    const std::string path = (dir.path() / "takt.sock").string();
    // A stale socket file (its process died) is replaced.
    {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
        ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        ::close(fd);
    }
    ControlOptions o;
    o.endpoint = "unix://" + path;
    auto s = std::make_unique<Server>(o);
    ASSERT_TRUE(s->start()) << s->error;
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600U);
    LineClient c("unix://" + path);
    EXPECT_TRUE(isResult(c.call(request(1, "var.write", R"({"name":"x","value":1})"))));
    EXPECT_STREQ(parseJson(c.call(request(2, "agent.describe")))["result"]["transport"].GetString(), "unix");
    // A second server on the same live socket is refused and leaves the first one alone.
    Server second(o);
    EXPECT_FALSE(second.start());
    EXPECT_NE(second.error.find("another process"), std::string::npos) << second.error;
    EXPECT_TRUE(isResult(c.call(request(3, "runtime.status"))));
    s->server.stop();
    EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ControlServer, UnixSocketWithTokensNeedsLogin) {
    test::TempDir dir;
    ControlOptions o;
    o.endpoint = "unix://" + (dir.path() / "t.sock").string();
    o.tokens = {{Role::Operator, kViewer}};
    Server s(o);
    ASSERT_TRUE(s.start()) << s.error;
    LineClient c(o.endpoint);
    EXPECT_EQ(errorCode(c.call(request(1, "runtime.status"))), -32010);
    EXPECT_EQ(parseJson(c.login(kViewer, 2))["result"]["role"].GetString(), std::string("operator"));
    EXPECT_TRUE(isResult(c.call(request(3, "runtime.pause"))));
}

// Without an endpoint the server listens on nothing and serves typed calls from inside the
// process (the web server) with the caller's role, through the same table, role check, params
// schema, rate limit and audit log; a token is checked as auth.login checks it.
TEST(ControlServer, WithoutAnEndpointServesInProcessCallsOnly) {
    test::TempDir dir;
    ControlOptions o;
    o.tokens = {{Role::Engineer, kEngineer}};
    o.auditLog = (dir.path() / "audit.log").string();
    o.maxRequestsPerSecond = 20;
    Server s(o);
    ASSERT_TRUE(s.start()) << s.error;
    EXPECT_EQ(s.server.boundEndpoint(), "");
    const ControlServer::Caller caller{"web", "127.0.0.1:50312", "127.0.0.1"};
    const auto call = [&](std::optional<Role> role, std::string method, std::string params = "{}",
                          ControlServer::Caller who = {"web", "127.0.0.1:50312", "127.0.0.1"}) {
        std::promise<MethodAnswer> reply;
        std::future<MethodAnswer> got = reply.get_future();
        ControlServer::Call c;
        c.caller = std::move(who);
        c.role = role;
        c.method = std::move(method);
        c.params.Parse(params.c_str());
        s.server.call(std::move(c), [&reply](MethodAnswer a) { reply.set_value(std::move(a)); });
        EXPECT_EQ(got.wait_for(std::chrono::seconds(5)), std::future_status::ready);
        return got.get();
    };
    const auto check = [&](std::string token) {
        std::promise<ControlServer::TokenCheck> reply;
        std::future<ControlServer::TokenCheck> got = reply.get_future();
        s.server.authenticate(caller, std::move(token),
                              [&reply](ControlServer::TokenCheck c) { reply.set_value(std::move(c)); });
        EXPECT_EQ(got.wait_for(std::chrono::seconds(5)), std::future_status::ready);
        return got.get();
    };
    // A viewer reads, cannot pause; without a role only the methods without one.
    const MethodAnswer status = call(Role::Viewer, "runtime.status");
    ASSERT_TRUE(status.ok) << status.message;
    EXPECT_EQ(status.json, R"({"state":"running","method":"runtime.status"})");
    EXPECT_EQ(call(Role::Viewer, "runtime.pause").code, kForbidden);
    EXPECT_EQ(call(std::nullopt, "runtime.status").code, kUnauthorized);
    EXPECT_TRUE(call(std::nullopt, "agent.ping").ok);
    EXPECT_EQ(call(Role::Viewer, "no.such").code, -32601);
    EXPECT_EQ(call(Role::Viewer, "agent.schema", R"({"method":7})").code, -32602);
    EXPECT_EQ(call(Role::Viewer, "runtime.status", "[1]").code, -32602);
    // An answer that comes later (runtime.pause answers at the target's next poll).
    EXPECT_TRUE(call(Role::Engineer, "runtime.pause").ok);
    // The token check: the role, or auth.login's refusal; failed checks back off per address.
    const ControlServer::TokenCheck good = check(kEngineer);
    EXPECT_TRUE(good.answer.ok);
    EXPECT_EQ(good.role, Role::Engineer);
    for (int i = 0; i < 5; ++i) {
        const ControlServer::TokenCheck wrong = check("guess-" + std::to_string(i) + "-0000000000000000");
        EXPECT_FALSE(wrong.role);
        EXPECT_EQ(wrong.answer.code, kUnauthorized);
    }
    EXPECT_EQ(check(kEngineer).answer.code, kRateLimited);
    // The rate limit is the endpoint's, per caller: a burst over it is refused for this caller
    // and not for another.
    int limited = 0;
    for (int i = 0; i < 40; ++i) {
        limited += call(Role::Viewer, "runtime.status").code == kRateLimited ? 1 : 0;
    }
    EXPECT_GT(limited, 0);
    EXPECT_TRUE(call(Role::Viewer, "runtime.status", "{}", {"web", "127.0.0.1:50313", "127.0.0.1"}).ok);
    // The audit log has the calls under the caller's origin and peer.
    std::ifstream in(o.auditLog);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("peer=web:127.0.0.1:50312 role=viewer method=runtime.status ok"), std::string::npos)
        << text.str();
    EXPECT_NE(text.str().find("peer=web:127.0.0.1:50312 role=viewer method=runtime.pause error=-32011"),
              std::string::npos);
    EXPECT_NE(text.str().find("method=auth.login error=-32010"), std::string::npos);
}

// A target that signals when it has something: counts its polls, emits events and answers
// `runtime.pause` when the test says so, and signals its eventfd then.
class SignallingTarget final : public ControlTarget {
public:
    SignallingTarget() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
    ~SignallingTarget() override { ::close(fd_); }
    SignallingTarget(const SignallingTarget&) = delete;
    SignallingTarget& operator=(const SignallingTarget&) = delete;
    [[nodiscard]] std::span<const ControlMethod> methods() const override {
        static constexpr std::string_view kAny = R"({"type":"object"})";
        constexpr ControlHandler call = [](ControlTarget& t, std::string_view m, const rapidjson::Value& p,
                                           ControlReplyFn r) {
            static_cast<SignallingTarget&>(t).inner_.call(std::string(m), p, std::move(r));
        };
        static const ControlMethod kTable[] = {{"runtime.pause", "", kAny, kAny, Role::Operator, call}};
        return kTable;
    }
    void poll(std::vector<std::string>& events) override {
        polls_.fetch_add(1);
        inner_.poll(events);
    }
    [[nodiscard]] int completionFd() const override { return fd_; }
    void emit(std::string event) {
        inner_.emit(std::move(event));
        const std::uint64_t one = 1;
        (void)!::write(fd_, &one, sizeof one);
    }
    [[nodiscard]] int polls() const { return polls_.load(); }

private:
    test::RecordingTarget inner_;
    int fd_;
    std::atomic<int> polls_{0};
};

// With a completion descriptor the endpoint's thread sleeps until its target signals (or a
// second passes): it polled the target every millisecond, a thousand wake-ups a second on an
// idle runtime. What the target signals still goes out at once.
TEST(ControlServer, AnIdleTargetIsPolledWhenItSignalsNotEveryMillisecond) {
    SignallingTarget target;
    ControlOptions o;
    o.endpoint = "tcp://127.0.0.1:0";
    o.tokens = {{Role::Viewer, kViewer}, {Role::Engineer, kEngineer}};
    ControlServer server(o, target);
    std::string error;
    ASSERT_TRUE(server.start(error)) << error;
    LineClient c(server.boundEndpoint());
    ASSERT_TRUE(isResult(c.login(kEngineer)));
    ASSERT_TRUE(isResult(c.call(request(2, "events.subscribe"))));
    const int before = target.polls();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const int idle = target.polls() - before;
    EXPECT_LE(idle, 3) << "polls in 500 ms of an idle target";
    // A signalled event goes out at once; an answer the target gives at its next poll comes
    // right after the call.
    const auto start = std::chrono::steady_clock::now();
    target.emit(R"({"type":"paused","ts":1,"cycle":7})");
    const std::string event = c.line(2000);
    EXPECT_NE(event.find(R"("method":"event")"), std::string::npos) << event;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
    const auto asked = std::chrono::steady_clock::now();
    EXPECT_TRUE(isResult(c.call(request(3, "runtime.pause"))));
    EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::milliseconds(200));
}

TEST(ControlServer, RefusesUnsafeOrBrokenOptionsAtStart) {
    test::TempDir dir;
    const auto refused = [](ControlOptions o, std::string_view expect) {
        Server s(std::move(o));
        EXPECT_FALSE(s.start());
        EXPECT_NE(s.error.find(expect), std::string::npos) << s.error;
    };
    ControlOptions o = tcpOptions();
    o.endpoint = "tcp://0.0.0.0:0";
    refused(o, "not a loopback address");
    o.endpoint = "tcp://127.0.0.1:0";
    o.tokens.clear();
    refused(o, "need at least one token");
    o = tcpOptions();
    o.endpoint = "tls://127.0.0.1:0";
    refused(o, "cert and key");
    for (const char* bad : {"http://x:1", "tcp://127.0.0.1", "tcp://127.0.0.1:99999", "tcp://:80", "unix://",
                            "tcp://::1:80", "tcp://127.0.0.1:8x"}) {
        o = tcpOptions();
        o.endpoint = bad;
        refused(o, "endpoint '");
    }
    o = tcpOptions();
    o.tokens = {{Role::Admin, "short"}};
    refused(o, "shorter than 16");
    const std::string file = dir.write("not-a-socket", "x").string();
    o = ControlOptions{};
    o.endpoint = "unix://" + file;
    refused(o, "is not a socket");
    EXPECT_TRUE(std::filesystem::exists(file));
    o = tcpOptions();
    o.auditLog = (dir.path() / "no-such-dir" / "audit.log").string();
    refused(o, "audit log");
}

TEST(ControlServer, AuditLogHasOneLinePerRequestAndNeverTheToken) {
    test::TempDir dir;
    ControlOptions o = tcpOptions();
    o.auditLog = (dir.path() / "audit.log").string();
    {
        auto s = startTcp(o);
        LineClient c(s->server.boundEndpoint());
        EXPECT_EQ(errorCode(c.login("bad-token-value-123456", 1)), -32010);
        ASSERT_TRUE(isResult(c.login(kEngineer, 2)));
        ASSERT_TRUE(isResult(c.call(request(3, "var.write", R"({"name":"secretvar","value":1})"))));
        EXPECT_EQ(errorCode(c.call(request(4, "no.such"))), -32601);
    }
    std::ifstream in(o.auditLog);
    std::stringstream text;
    text << in.rdbuf();
    const std::string log = text.str();
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 4) << log;
    EXPECT_NE(log.find("role=none method=auth.login error=-32010"), std::string::npos) << log;
    EXPECT_NE(log.find("role=engineer method=var.write ok"), std::string::npos) << log;
    EXPECT_NE(log.find("method=no.such error=-32601"), std::string::npos) << log;
    EXPECT_NE(log.find("peer=tcp:127.0.0.1:"), std::string::npos) << log;
    EXPECT_EQ(log.find(kEngineer), std::string::npos);
    EXPECT_EQ(log.find("bad-token-value"), std::string::npos);
    EXPECT_EQ(log.find("secretvar"), std::string::npos); // params are not logged either
    EXPECT_TRUE(log.starts_with("20")) << log;
    struct stat st {};
    ASSERT_EQ(::stat(o.auditLog.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600U);
}

} // namespace
} // namespace takt::agent
