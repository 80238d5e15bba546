#pragma once
// The JSON-RPC 2.0 envelope of the agent API and the control endpoint: one request line checked
// into (id, method, params), and the response and notification lines written back. Both servers
// and the `takt ctl` client go through here, so they agree on every malformed form and its code.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rpc/rpc_json.h"
#include "takt/agent/rpc_limits.h"

namespace takt::agent::rpc {

// The id of a request as it is echoed: a string, a number exactly as written, or null.
struct RequestId {
    enum class Kind : std::uint8_t { Null, String, Number } kind = Kind::Null;
    std::string text;
};

struct Request {
    RequestId id;
    bool notification = true;       // no "id" member: executed, never answered
    std::string_view method;        // empty until the envelope had a string "method"
    const rapidjson::Value* params; // an object (an empty one when absent); into the ParsedLine
    // "params" given as an array: an error of the call rather than of the envelope (-32602), so it
    // follows the notification rule, and a server answers it after its own gates (rate limit).
    std::optional<Error> paramsError;
};

// Checks one request line: blanks, the 1 MiB cap, JSON (-32700), depth, batch, object, id,
// "jsonrpc", "method", "params". False when the envelope is invalid: `error` is the answer, sent
// to `out.id` (null unless a valid id was read) whether or not the request is a notification.
// The language server passes its message body with the body cap (kMaxBodyBytes) instead.
// `"params": null` is an invalid request in JSON-RPC 2.0 (params are an object or an array), as
// the Agent API and the control endpoint answer it; the language server protocol types the params
// of shutdown and exit as void and its clients send null there, so the language server reads null
// as absent (NullParams::Absent).
enum class NullParams : std::uint8_t { Invalid, Absent };
[[nodiscard]] bool parseRequest(std::string_view line, ParsedLine& scratch, Request& out, Error& error,
                                std::size_t maxBytes = kMaxLineBytes, NullParams nullParams = NullParams::Invalid);

// A reply as a client reads it.
struct Response {
    RequestId id;          // a string's text, a number exactly as written, or null
    bool ok = false;       // "result" present
    std::string result;    // its JSON text
    std::string errorJson; // the "error" member's JSON text ("null" when it has none)
    Error error;           // code and message from "error", when they are of the right type
};
// False for what is not a reply: not JSON, not an object, a notification (no "id").
[[nodiscard]] bool parseResponse(std::string_view line, ParsedLine& scratch, Response& out);

// Response lines, without their newline. A result or error data is raw JSON text that the
// caller vouches for; newlines in it (reports shared with the CLI end with one) become spaces so
// the response stays one line. An empty result is null.
[[nodiscard]] std::string resultLine(const RequestId& id, std::string_view resultJson);
[[nodiscard]] std::string errorLine(const RequestId& id, const Error& error);
[[nodiscard]] std::string notificationLine(std::string_view method, std::string_view paramsJson);
// A request line as the control client sends it (with its newline); empty params are left out.
[[nodiscard]] std::string requestLine(std::int64_t id, std::string_view method, std::string_view paramsJson);

} // namespace takt::agent::rpc
