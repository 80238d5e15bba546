#pragma once
// What the web surface does with one HTTP request, without sockets: the limits a request's
// parser gets, the framing rules checked once its header is in, the routes (the page's files,
// /metrics, /api/rpc, /api/events) and the answer to each, the status each malformed or oversized request
// gets. The server (web_server.cpp) reads and writes; the fuzz target (tests/fuzz/web_request_fuzz)
// feeds arbitrary bytes through exactly this.
#include <cstddef>
#include <optional>
#include <string>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "rpc/rpc_envelope.h"
#include "takt/agent/web.h"

namespace takt::agent::web {

namespace http = boost::beast::http;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using RequestParser = http::request_parser<http::string_body>;

// A request's header block (request line and fields): a browser sends under 2 KiB.
constexpr std::size_t kMaxHeaderBytes = std::size_t{16} << 10;
// A body with a Content-Length: one JSON-RPC request; a reload carries a base64 program.stbc.
constexpr std::size_t kMaxBody = std::size_t{8} << 20;
// A chunked body, whose size is not known before it is read: no browser chunks a fetch() body,
// and no JSON-RPC request of the page comes near this.
constexpr std::size_t kMaxChunkedBody = std::size_t{64} << 10;
// A body above this is held against a budget shared by all connections (web_server.cpp), so the
// memory large bodies take is bounded however many clients send them.
constexpr std::size_t kSmallBody = std::size_t{64} << 10;

// A parser with the limits above (the header limit; the body limit as for a Content-Length).
void limitParser(RequestParser& parser);

// The status for a request whose header could not be read or whose body broke a limit: 431 for
// a header over the limit, 413 for a body over it, 400 for bad framing (a Content-Length that is
// not a number, two different ones, one with Transfer-Encoding, bad chunks); nullopt when there is
// nothing to answer (the client closed, the deadline passed: the connection is just closed).
std::optional<unsigned> statusOfReadError(const boost::beast::error_code& ec);

// Once the header is in, before any of the body is read: a response to send instead (then the
// connection is closed), else nullopt with the parser's body limit set for the framing (chunked
// bodies get kMaxChunkedBody). Checks the framing the parser leaves to its user (a
// Transfer-Encoding other than chunked), the route and method (404, 405 with Allow), and with
// token auth that a token is there (401). A token that is there is checked next, by the server
// through the control service (ControlServer::authenticate), still before the body is read:
// nobody without a valid token makes the server read a body or reserve memory for one.
std::optional<Response> screenHeader(RequestParser& parser, const WebOptions& options);

// The HTTP status of a refusal by the control service, chosen by its code: 401 (kUnauthorized),
// 403 (kForbidden), 429 (kRateLimited), 400 (params or request not valid), 503 for the rest.
http::status statusOfRefusal(int code);

// The answer to a request the control service refused before anything was served for it: a token
// it refused (the body was not read), an event stream whose var.subscribe it refused. Its status
// from statusOfRefusal, with WWW-Authenticate for 401 and Retry-After for 429 and 503; the
// JSON-RPC error as its body. The connection closes.
Response refused(const http::request_header<>& header, const MethodAnswer& refusal);

// The control call a /api/rpc request makes: its JSON-RPC envelope read here, the method and
// params handed typed to the control service (ControlServer::call), the answer written back
// with the request's id.
struct Call {
    rpc::RequestId id;
    bool notification = false; // no id: called, answered 204 without a body
    std::string method;
    rapidjson::Document params; // the request's params object (an array is left for the call to refuse)
    bool events = false;        // /api/events: var.subscribe whose session stays open (web_events.h)
};

// The answer to a whole request, or the call to make first (then answerCall). A body that is not
// a JSON-RPC request is answered here, as the control endpoint answers such a line (HTTP 200 with
// the -32700/-32600 error); a body may be as large as kMaxBody (a reload's program).
struct Routed {
    std::optional<Response> response;
    std::optional<Call> call;
};
Routed route(const Request& request, const WebOptions& options);
// The call's answer: the JSON-RPC response with HTTP 200, except what is the HTTP client's to
// act on, chosen by the error's code: 401 (kUnauthorized: an auth.login with a wrong token) and
// 429 with Retry-After (kRateLimited: the caller's rate limit, the command queue, a backed-off
// login).
Response answerCall(const Request& request, const Call& call, const MethodAnswer& answer);

// A plain-text answer with `status` (and the headers every answer carries).
Response plain(const Request& request, http::status status, std::string text);
// The same for a request that could not be parsed (HTTP/1.1, closing).
Response plain(http::status status, std::string text);

// The token of `Authorization: Bearer <token>`, or empty.
std::string bearer(const http::request_header<>& header);

} // namespace takt::agent::web
