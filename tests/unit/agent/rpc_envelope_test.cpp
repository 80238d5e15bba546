// The JSON-RPC envelope shared by the agent API, the control endpoint and the `takt ctl` client.
#include <string>

#include <gtest/gtest.h>

#include "rpc/rpc_envelope.h"

namespace takt::agent::rpc {
namespace {

struct Checked {
    bool ok = false;
    Request request;
    Error error;
};

Checked check(std::string_view line) {
    static ParsedLine scratch;
    Checked c;
    c.ok = parseRequest(line, scratch, c.request, c.error);
    return c;
}

TEST(RpcEnvelope, AValidRequestGivesIdMethodAndParams) {
    Checked c = check(R"({"jsonrpc":"2.0","id":7,"method":"var.read","params":{"names":["a"]}})");
    ASSERT_TRUE(c.ok) << c.error.message;
    EXPECT_FALSE(c.request.notification);
    EXPECT_EQ(c.request.id.kind, RequestId::Kind::Number);
    EXPECT_EQ(c.request.id.text, "7");
    EXPECT_EQ(c.request.method, "var.read");
    ASSERT_TRUE(c.request.params->IsObject());
    EXPECT_TRUE(c.request.params->HasMember("names"));
    EXPECT_FALSE(c.request.paramsError);

    c = check("{\"jsonrpc\":\"2.0\",\"method\":\"agent.ping\"}\r \t");
    ASSERT_TRUE(c.ok);
    EXPECT_TRUE(c.request.notification);
    EXPECT_TRUE(c.request.params->IsObject());
    EXPECT_EQ(c.request.params->MemberCount(), 0u);

    c = check(R"({"jsonrpc":"2.0","id":null,"method":"m"})");
    ASSERT_TRUE(c.ok);
    EXPECT_FALSE(c.request.notification); // an id of null is still an id
    EXPECT_EQ(c.request.id.kind, RequestId::Kind::Null);
}

TEST(RpcEnvelope, IdsAreKeptExactlyAsWritten) {
    for (const char* id : {"1.50", "1e2", "-0", "123456789012345678901234567890"}) {
        const Checked c = check(std::string(R"({"jsonrpc":"2.0","id":)") + id + R"(,"method":"m"})");
        ASSERT_TRUE(c.ok) << id;
        EXPECT_EQ(c.request.id.text, id);
        EXPECT_EQ(resultLine(c.request.id, "{}"), std::string(R"({"jsonrpc":"2.0","id":)") + id + R"(,"result":{}})");
    }
    const Checked s = check(R"({"jsonrpc":"2.0","id":"a\"b","method":"m"})");
    ASSERT_TRUE(s.ok);
    EXPECT_EQ(s.request.id.kind, RequestId::Kind::String);
    EXPECT_EQ(s.request.id.text, "a\"b");
    EXPECT_EQ(resultLine(s.request.id, "1"), R"({"jsonrpc":"2.0","id":"a\"b","result":1})");
}

TEST(RpcEnvelope, EveryMalformedFormHasItsCodeAndAnIdOnlyWhenOneWasRead) {
    struct Case {
        std::string line;
        int code;
        bool idKnown;
    };
    const Case cases[] = {
        {"", kInvalidRequest, false},
        {" \t\r", kInvalidRequest, false},
        {std::string(kMaxLineBytes + 1, ' ') + "{}", kInvalidRequest, false},
        {"{not json", kParseError, false},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", kParseError, false},
        {R"({"jsonrpc":"2.0","id":1e999,"method":"m"})", kParseError, false},
        {std::string(65, '[') + std::string(65, ']'), kInvalidRequest, false},
        {R"([{"jsonrpc":"2.0","id":1,"method":"m"}])", kInvalidRequest, false},
        {R"("text")", kInvalidRequest, false},
        {"7", kInvalidRequest, false},
        {R"({"jsonrpc":"2.0","id":{},"method":"m"})", kInvalidRequest, false},
        {R"({"jsonrpc":"2.0","id":true,"method":"m"})", kInvalidRequest, false},
        {R"({"jsonrpc":"2.0","id":[1],"method":"m"})", kInvalidRequest, false},
        {R"({"id":3,"method":"m"})", kInvalidRequest, true},
        {R"({"jsonrpc":"1.0","id":3,"method":"m"})", kInvalidRequest, true},
        {R"({"jsonrpc":2.0,"id":3,"method":"m"})", kInvalidRequest, true},
        {R"({"jsonrpc":"2.0","id":3})", kInvalidRequest, true},
        {R"({"jsonrpc":"2.0","id":3,"method":7})", kInvalidRequest, true},
        {R"({"jsonrpc":"2.0","id":3,"method":"m","params":"x"})", kInvalidRequest, true},
        {R"({"jsonrpc":"2.0","id":3,"method":"m","params":null})", kInvalidRequest, true},
        {R"({"jsonrpc":"2.0","id":3,"method":"m","params":5})", kInvalidRequest, true},
    };
    for (const Case& c : cases) {
        const Checked r = check(c.line);
        const std::string shown = c.line.substr(0, 80);
        EXPECT_FALSE(r.ok) << shown;
        EXPECT_EQ(r.error.code, c.code) << shown;
        EXPECT_FALSE(r.error.message.empty()) << shown;
        EXPECT_EQ(r.request.id.kind == RequestId::Kind::Number, c.idKnown) << shown;
    }
    EXPECT_EQ(check("").error.message, kBlankLineMessage);
    EXPECT_EQ(check(std::string(kMaxLineBytes + 1, 'x')).error.message, kOversizeLineMessage);
}

// An unpaired UTF-16 surrogate escape names no character (RapidJSON 1.1 decoded a lone low one into
// bytes that are not UTF-8), and a NUL byte ended the text early, so the request before it ran:
// both are the parse error, which says at what offset.
TEST(RpcEnvelope, UnpairedSurrogatesAndNulBytesAreParseErrors) {
    const std::string head = R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"t":")";
    struct Case {
        std::string line;
        std::size_t offset;
    };
    const Case cases[] = {
        {head + R"(ab\uDC00"}})", head.size() + 2},
        {head + R"(\uDFFF\uD800"}})", head.size()},
        {head + R"(\uD800"}})", head.size()},
        {head + R"(\uD800\u0041"}})", head.size()},
        {head + R"(\uDBFF x"}})", head.size()},
        {R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"\udc00":1}})", 48},
        {std::string(R"({"jsonrpc":"2.0","id":1,"method":"m"})") + '\0' + "garbage", 37},
        {std::string(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"a)") + '\0' + "\"}}", 53},
    };
    for (const Case& c : cases) {
        const Checked r = check(c.line);
        EXPECT_FALSE(r.ok) << c.line;
        EXPECT_EQ(r.error.code, kParseError) << c.line;
        EXPECT_NE(r.error.message.find("offset " + std::to_string(c.offset)), std::string::npos)
            << c.line << ": " << r.error.message;
    }
    // A pair is one character (U+1F600), and an escaped backslash before "uDC00" no escape.
    EXPECT_TRUE(check(head + R"(\uD83D\uDE00 \\uDC00"}})").ok);
}

TEST(RpcEnvelope, ExactlyTheLineCapIsParsed) {
    std::string line = R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"pad":")";
    line.append(kMaxLineBytes - line.size() - 3, 'p');
    line += "\"}}";
    ASSERT_EQ(line.size(), kMaxLineBytes);
    EXPECT_TRUE(check(line).ok);
}

TEST(RpcEnvelope, ArrayParamsAreAnErrorOfTheCallNotOfTheEnvelope) {
    const Checked c = check(R"({"jsonrpc":"2.0","id":4,"method":"m","params":[1]})");
    ASSERT_TRUE(c.ok);
    ASSERT_TRUE(c.request.paramsError);
    EXPECT_EQ(c.request.paramsError->code, kInvalidParams);
    EXPECT_EQ(c.request.paramsError->data, R"({"param":"params"})");
    EXPECT_EQ(c.request.method, "m");
}

TEST(RpcEnvelope, ResponseLinesStayOnOneLine) {
    const RequestId id{RequestId::Kind::Number, "2"};
    EXPECT_EQ(resultLine(id, "{\"a\":\n1}\n"), R"({"jsonrpc":"2.0","id":2,"result":{"a": 1}})");
    EXPECT_EQ(resultLine(id, ""), R"({"jsonrpc":"2.0","id":2,"result":null})");
    EXPECT_EQ(
        errorLine(RequestId{}, Error{-32005, "slow \"down\"", "{\"retry_after_ms\":\r\n5}"}),
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"slow \"down\"","data":{"retry_after_ms":  5}}})");
    EXPECT_EQ(errorLine(id, Error{-32601, "no", {}}),
              R"({"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}})");
    EXPECT_EQ(notificationLine("event", R"({"type":"paused"})"),
              R"({"jsonrpc":"2.0","method":"event","params":{"type":"paused"}})");
    EXPECT_EQ(requestLine(9, "runtime.status", ""), "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"runtime.status\"}\n");
}

TEST(RpcEnvelope, ResponsesAreReadBackByTheClient) {
    ParsedLine scratch;
    Response r;
    ASSERT_TRUE(parseResponse(R"({"jsonrpc":"2.0","id":3,"result":{"ok":true}})", scratch, r));
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(r.id.text, "3");
    EXPECT_EQ(r.result, R"({"ok":true})");
    ASSERT_TRUE(parseResponse(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"busy"}})", scratch, r));
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.id.kind, RequestId::Kind::Null);
    EXPECT_EQ(r.error.code, -32005);
    EXPECT_EQ(r.error.message, "busy");
    EXPECT_EQ(r.errorJson, R"({"code":-32005,"message":"busy"})");
    ASSERT_TRUE(parseResponse(R"({"id":4,"error":"odd"})", scratch, r));
    EXPECT_EQ(r.error.code, 0);
    EXPECT_TRUE(r.error.message.empty());
    EXPECT_FALSE(parseResponse(R"({"jsonrpc":"2.0","method":"event","params":{}})", scratch, r));
    EXPECT_FALSE(parseResponse("{oops", scratch, r));
    EXPECT_FALSE(parseResponse("[1]", scratch, r));
}

} // namespace
} // namespace takt::agent::rpc
