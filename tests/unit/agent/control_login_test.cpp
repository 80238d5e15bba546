// auth.login over real loopback sockets: every login that does not log in (malformed, backed off,
// wrong token) drops the session's earlier role, and the back-off counts every loopback address
// (127.0.0.2, 127.0.0.3, ...) as one peer.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "control/control_auth.h"
#include "support/control_test_support.h"
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
    Server() : server(options(), target) {}
    static ControlOptions options() {
        ControlOptions o;
        o.endpoint = "tcp://127.0.0.1:0";
        o.tokens = {{Role::Viewer, kViewer}, {Role::Engineer, kEngineer}};
        return o;
    }
    test::RecordingTarget target;
    ControlServer server;
};

std::unique_ptr<Server> start() {
    auto s = std::make_unique<Server>();
    std::string error;
    EXPECT_TRUE(s->server.start(error)) << error;
    return s;
}

const char* const kWrite = R"({"name":"x","value":1})";

TEST(ControlLogin, MalformedLoginDropsTheEarlierRole) {
    auto s = start();
    // A token that is not a string, no token, params that are not an object.
    const char* const kMalformed[] = {R"({"token":42})", R"({"token":null})", R"({})", R"(["engineer"])"};
    for (const char* params : kMalformed) {
        SCOPED_TRACE(params);
        LineClient c(s->server.boundEndpoint());
        ASSERT_TRUE(c.connected());
        ASSERT_EQ(parseJson(c.login(kEngineer, 1))["result"]["role"].GetString(), std::string("engineer"));
        ASSERT_TRUE(isResult(c.call(request(2, "var.write", kWrite))));
        ASSERT_TRUE(isResult(c.call(request(3, "events.subscribe"))));
        EXPECT_EQ(errorCode(c.call(request(4, "auth.login", params))), -32602);
        EXPECT_EQ(errorCode(c.call(request(5, "var.write", kWrite))), -32010);
        EXPECT_EQ(errorCode(c.call(request(6, "runtime.status"))), -32010);
    }
    EXPECT_EQ(s->target.calls().size(), std::size(kMalformed)); // only the writes made while logged in
}

TEST(ControlLogin, WrongTokenDropsTheEarlierRole) {
    auto s = start();
    LineClient c(s->server.boundEndpoint());
    ASSERT_EQ(parseJson(c.login(kEngineer, 1))["result"]["role"].GetString(), std::string("engineer"));
    EXPECT_EQ(errorCode(c.login("not-the-engineer-token", 2)), -32010);
    EXPECT_EQ(errorCode(c.call(request(3, "var.write", kWrite))), -32010);
    EXPECT_TRUE(s->target.calls().empty());
}

TEST(ControlLogin, LoopbackAddressesShareOneBackoff) {
    auto s = start();
    // Five failures, each from another loopback address: together they start the back-off.
    for (int i = 0; i < 5; ++i) {
        const std::string from = "127.0.0." + std::to_string(2 + i);
        SCOPED_TRACE(from);
        LineClient c(s->server.boundEndpoint(), from);
        ASSERT_TRUE(c.connected());
        EXPECT_EQ(errorCode(c.login("guess-number-" + std::to_string(i) + "-abcdef", i)), -32010);
    }
    for (const char* from : {"127.0.0.7", "127.0.0.255", "127.1.2.3", "127.0.0.1"}) {
        SCOPED_TRACE(from);
        LineClient c(s->server.boundEndpoint(), from);
        ASSERT_TRUE(c.connected());
        const auto refused = parseJson(c.login(kEngineer));
        ASSERT_TRUE(refused.HasMember("error"));
        EXPECT_EQ(refused["error"]["code"].GetInt(), -32005);
        EXPECT_GT(refused["error"]["data"]["retry_after_ms"].GetInt64(), 0);
    }
    EXPECT_TRUE(s->target.calls().empty());
}

TEST(ControlLogin, LoginPeerKeyJoinsLoopbackOnly) {
    EXPECT_EQ(detail::loginPeerKey("127.0.0.1"), "ip:loopback");
    EXPECT_EQ(detail::loginPeerKey("127.0.0.2"), "ip:loopback");
    EXPECT_EQ(detail::loginPeerKey("127.255.255.254"), "ip:loopback");
    EXPECT_EQ(detail::loginPeerKey("::1"), "ip:loopback");
    EXPECT_EQ(detail::loginPeerKey("::ffff:127.0.0.9"), "ip:loopback");
    EXPECT_EQ(detail::loginPeerKey("192.0.2.7"), "ip:192.0.2.7");
    EXPECT_EQ(detail::loginPeerKey("::ffff:192.0.2.7"), "ip:::ffff:192.0.2.7");
    EXPECT_EQ(detail::loginPeerKey("2001:db8::127"), "ip:2001:db8::127");
    EXPECT_EQ(detail::loginPeerKey("1127.0.0.1"), "ip:1127.0.0.1");
}

} // namespace
} // namespace takt::agent
