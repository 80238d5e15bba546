#pragma once
// What the web surface does with one HTTP request, without sockets: the limits a request's
// parser gets, the framing rules checked once its header is in, the routes (the page's files,
// /metrics, /api/rpc) and the answer to each, the status each malformed or oversized request
// gets. The server (web_server.cpp) reads and writes; the fuzz target (tests/fuzz/web_request_fuzz)
// feeds arbitrary bytes through exactly this.
#include <cstddef>
#include <optional>
#include <string>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

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
// token auth that a token is there (401), so nobody without one makes the server read a body.
std::optional<Response> screenHeader(RequestParser& parser, const WebOptions& options);

// A control call a request needs before it can be answered.
struct Call {
    enum class Kind { Rpc, MetricsLogin, Events } kind = Kind::Rpc; // Events: web_events.h
    std::string line;                                               // one JSON-RPC request
    std::string token;                                              // from Authorization: Bearer, or empty
};

// The answer to a whole request, or the call to make first (then answerCall).
struct Routed {
    std::optional<Response> response;
    std::optional<Call> call;
};
Routed route(const Request& request, const WebOptions& options);
Response answerCall(const Request& request, const Call& call, const std::string& reply, const WebOptions& options);

// A plain-text answer with `status` (and the headers every answer carries).
Response plain(const Request& request, http::status status, std::string text);
// The same for a request that could not be parsed (HTTP/1.1, closing).
Response plain(http::status status, std::string text);

// The token of `Authorization: Bearer <token>`, or empty.
std::string bearer(const Request& request);

} // namespace takt::agent::web
