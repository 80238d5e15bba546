// libFuzzer target: arbitrary bytes through the web server's request path without sockets, as
// web_server.cpp drives it: a parser with the server's limits fed the bytes in chunks (the first
// byte picks their size), the header screened (framing, route, method, token), the body read,
// the request routed, and a call's answer made from a canned control reply. Every request that
// is refused must be refused with a status the server sends (400, 401, 404, 405, 413, 431), and
// every answer must serialise.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>

#include "web/web_http.h"

namespace {

using namespace takt::agent;
namespace http = boost::beast::http;

void require(bool ok) {
    if (!ok) {
        std::abort();
    }
}

constexpr std::string_view kIndex = "<!doctype html><script src=\"/app-0123456789ab.js\"></script>";
constexpr std::string_view kScript = "console.log(1)";
const WebAsset kAssets[] = {
    {"/index.html", "text/html; charset=utf-8", "\"i1\"", false, kIndex},
    {"/app-0123456789ab.js", "text/javascript; charset=utf-8", "\"s1\"", true, kScript},
};

// The answer's bytes as sent; it must serialise whole.
void serialise(web::Response& response) {
    std::string out;
    http::serializer<false, http::string_body> sr(response);
    boost::beast::error_code ec;
    while (!sr.is_done() && !ec) {
        sr.next(ec, [&](boost::beast::error_code&, const auto& buffers) {
            std::size_t n = 0;
            for (const auto b : boost::beast::buffers_range_ref(buffers)) {
                out.append(static_cast<const char*>(b.data()), b.size());
                n += b.size();
            }
            sr.consume(n);
        });
    }
    require(!ec);
    require(out.starts_with("HTTP/1."));
    require(out.size() < web::kMaxBody + 4096);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::size_t step = 1 + data[0] % 64;
    const bool tokenAuth = (data[0] & 0x80) != 0;
    std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
    WebOptions options;
    options.tokenAuth = tokenAuth;
    options.assets = kAssets;
    options.metrics = [] { return std::string("takt_cycles_total 1\n"); };

    web::RequestParser parser;
    web::limitParser(parser);
    boost::beast::error_code ec;
    bool screened = false;
    std::string pending; // what the parser has not taken yet, as in the server's buffer
    while (!parser.is_done()) {
        if (pending.size() > web::kMaxHeaderBytes + 8192) {
            return 0; // the server's buffer is full: 431 (buffer_overflow)
        }
        const std::size_t take = std::min(step, in.size());
        pending.append(in.substr(0, take));
        in.remove_prefix(take);
        if (pending.empty()) {
            if (take == 0) {
                return 0; // nothing more comes: the deadline closes the connection
            }
            continue;
        }
        // The server's read loop hands the parser only what it has read, never an empty buffer.
        const std::size_t used = parser.put(boost::asio::buffer(pending), ec);
        pending.erase(0, used);
        if (!ec && used == 0 && take == 0 && !parser.is_done() && !(parser.is_header_done() && !screened)) {
            return 0; // nothing more comes: the deadline closes the connection
        }
        if (ec == http::error::need_more) {
            ec = {};
            if (take == 0) {
                return 0; // the client stopped sending: the deadline closes the connection
            }
            continue;
        }
        if (ec) {
            const std::optional<unsigned> status = web::statusOfReadError(ec);
            require(status && (*status == 400 || *status == 413 || *status == 431));
            web::Response res = web::plain(static_cast<http::status>(*status), ec.message());
            serialise(res);
            return 0;
        }
        if (parser.is_header_done() && !screened) {
            screened = true;
            parser.eager(true); // as http::async_read reads the body
            if (std::optional<web::Response> refused = web::screenHeader(parser, options)) {
                const unsigned s = refused->result_int();
                require(s == 400 || s == 401 || s == 404 || s == 405);
                require(!refused->keep_alive());
                serialise(*refused);
                return 0;
            }
        }
    }
    web::Request request = parser.release();
    require(request.body().size() <= web::kMaxBody);
    web::Routed routed = web::route(request, options);
    require(routed.response.has_value() != routed.call.has_value());
    if (routed.response) {
        serialise(*routed.response);
        return 0;
    }
    for (const MethodAnswer& answer : {MethodAnswer::result("{}"), MethodAnswer::error(kUnauthorized, "unauthorized"),
                                       MethodAnswer::error(kRateLimited, "rate limited", R"({"retry_after_ms":10})")}) {
        web::Response res = web::answerCall(request, *routed.call, answer);
        serialise(res);
    }
    return 0;
}
