#include "web/web_http.h"

#include <string_view>

#include <boost/beast/http/error.hpp>
#include <fmt/format.h>

#include "rpc/rpc_envelope.h"
#include "takt/agent/control.h"
#include "web/web_events.h"

namespace takt::agent::web {

namespace {

namespace beast = boost::beast;

// The page loads nothing but its own files and talks to nothing but its own origin.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

std::string_view pathOf(const http::request_header<>& header) {
    const std::string_view target(header.target().data(), header.target().size());
    return target.substr(0, target.find('?'));
}

const WebAsset* assetAt(std::string_view path, const WebOptions& options) {
    for (const WebAsset& asset : options.assets) {
        if (asset.path == path || (path == "/" && asset.path == "/index.html")) {
            return &asset;
        }
    }
    return nullptr;
}

// The methods a path answers ("" for a path that is not served).
std::string_view allowedAt(std::string_view path, const WebOptions& options) {
    if (path == "/api/rpc" || path == "/api/events") {
        return "POST";
    }
    if (path == "/metrics" || path == "/" || assetAt(path, options) != nullptr) {
        return "GET, HEAD";
    }
    return {};
}

bool methodAllowed(http::verb method, std::string_view allowed) {
    return allowed == "POST" ? method == http::verb::post : method == http::verb::get || method == http::verb::head;
}

// What an answer depends on in the request it answers.
struct Asked {
    unsigned version = 11;
    bool keepAlive = false; // false for a request whose body was not read
    bool head = false;
};

Asked askedBy(const Request& req) {
    return {req.version(), req.keep_alive(), req.method() == http::verb::head};
}

Asked askedBy(const http::request_header<>& header) {
    return {header.version(), false, header.method() == http::verb::head};
}

// Length, keep-alive and a HEAD's empty body, for any answer.
Response finish(const Asked& request, Response res) {
    res.version(request.version == 10 ? 10 : 11);
    res.keep_alive(request.keepAlive);
    res.set("X-Content-Type-Options", "nosniff");
    res.prepare_payload();
    if (request.head) {
        const std::size_t size = res.body().size();
        res.body().clear();
        res.content_length(size);
    }
    return res;
}

Response text(const Asked& request, http::status status, std::string body,
              std::string_view type = "text/plain; charset=utf-8") {
    Response res{status, 11};
    res.set(http::field::content_type, beast::string_view(type.data(), type.size()));
    res.body() = std::move(body);
    return finish(request, std::move(res));
}

Response unauthorized(const Asked& request) {
    Response res =
        text(request, http::status::unauthorized, "a control token is required: Authorization: Bearer <token>\n");
    res.set(http::field::www_authenticate, "Bearer");
    return res;
}

Response serveAsset(const Request& req, const WebAsset& asset) {
    Response res{http::status::ok, 11};
    res.set("Content-Security-Policy", kContentSecurityPolicy);
    res.set("Referrer-Policy", "no-referrer");
    res.set(http::field::etag, beast::string_view(asset.etag.data(), asset.etag.size()));
    res.set(http::field::cache_control, asset.immutable ? "public, max-age=31536000, immutable" : "no-cache");
    // Whole files only: a Range is ignored (RFC 9110 allows it), so no request turns a small
    // file into a large answer.
    res.set(http::field::accept_ranges, "none");
    const auto match = req.find(http::field::if_none_match);
    if (match != req.end() && std::string_view(match->value().data(), match->value().size()) == asset.etag) {
        res.result(http::status::not_modified);
        Response done = finish(askedBy(req), std::move(res));
        done.erase(http::field::content_length);
        return done;
    }
    res.set(http::field::content_type, beast::string_view(asset.contentType.data(), asset.contentType.size()));
    res.body().assign(asset.body);
    return finish(askedBy(req), std::move(res));
}

std::string bearerOf(const http::request_header<>& header) {
    const auto it = header.find(http::field::authorization);
    if (it == header.end()) {
        return {};
    }
    const std::string_view value(it->value().data(), it->value().size());
    constexpr std::string_view kPrefix = "Bearer ";
    return value.starts_with(kPrefix) ? std::string(value.substr(kPrefix.size())) : std::string();
}

// The body of a POST to /api/rpc: its envelope read with the body's limit (a reload's program
// is larger than a control line may be), its params moved, not copied, into the call.
Routed readCall(const Request& req) {
    rpc::ParsedLine parsed;
    rpc::Request request;
    rpc::Error invalid;
    if (!rpc::parseRequest(req.body(), parsed, request, invalid, kMaxBody)) {
        return {text(askedBy(req), http::status::ok, rpc::errorLine(request.id, invalid) + "\n", "application/json"),
                std::nullopt};
    }
    Call call;
    call.id = request.id;
    call.notification = request.notification;
    call.method = std::string(request.method);
    // The params value lives in the parsed document's allocator: the document moves into the
    // call and the params become its root.
    call.params = std::move(parsed.doc);
    rapidjson::Value params;
    if (const auto it = call.params.FindMember("params"); it != call.params.MemberEnd()) {
        params.Swap(it->value);
    } else {
        params.SetObject();
    }
    static_cast<rapidjson::Value&>(call.params).Swap(params);
    return {std::nullopt, std::move(call)};
}

} // namespace

void limitParser(RequestParser& parser) {
    parser.header_limit(static_cast<std::uint32_t>(kMaxHeaderBytes));
    parser.body_limit(kMaxBody);
}

std::optional<unsigned> statusOfReadError(const boost::beast::error_code& ec) {
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
        return 431;
    }
    if (ec == http::error::body_limit) {
        return 413;
    }
    for (const http::error bad :
         {http::error::bad_line_ending, http::error::bad_method, http::error::bad_target, http::error::bad_version,
          http::error::bad_field, http::error::bad_value, http::error::bad_content_length,
          http::error::bad_transfer_encoding, http::error::bad_chunk, http::error::bad_chunk_extension,
          http::error::bad_obs_fold, http::error::unexpected_body}) {
        if (ec == bad) {
            return 400;
        }
    }
    return std::nullopt;
}

std::optional<Response> screenHeader(RequestParser& parser, const WebOptions& options) {
    const http::request_header<>& header = parser.get();
    const Asked asked = askedBy(header);
    if (header.find(http::field::transfer_encoding) != header.end() && !parser.chunked()) {
        Response res = text(asked, http::status::bad_request,
                            "bad request: a Transfer-Encoding other than chunked is not accepted\n");
        res.keep_alive(false);
        return res;
    }
    const std::string_view allowed = allowedAt(pathOf(header), options);
    std::optional<Response> refused;
    if (allowed.empty()) {
        refused = text(asked, http::status::not_found, "not found\n");
    } else if (!methodAllowed(header.method(), allowed)) {
        refused = text(asked, http::status::method_not_allowed, fmt::format("method not allowed: {}\n", allowed));
        refused->set(http::field::allow, beast::string_view(allowed.data(), allowed.size()));
    } else if (options.tokenAuth && allowed == "POST" && bearerOf(header).empty()) {
        refused = unauthorized(asked);
    } else if (options.tokenAuth && pathOf(header) == "/metrics" && bearerOf(header).empty()) {
        refused = unauthorized(asked);
    }
    if (refused) {
        // Its body is not read: the connection cannot be used for another request.
        refused->keep_alive(false);
        return refused;
    }
    if (parser.chunked()) {
        parser.body_limit(kMaxChunkedBody);
    }
    return std::nullopt;
}

Routed route(const Request& req, const WebOptions& options) {
    const std::string_view path = pathOf(req);
    if (path == "/api/rpc") {
        return readCall(req);
    }
    if (path == "/api/events") {
        Call call;
        if (std::optional<Response> refused = eventsCall(req, call)) {
            return {std::move(refused), std::nullopt};
        }
        return {std::nullopt, std::move(call)};
    }
    if (path == "/metrics") {
        // With token auth, the token was checked with the header (refused otherwise).
        return {text(askedBy(req), http::status::ok, options.metrics ? options.metrics() : std::string(),
                     "text/plain; version=0.0.4"),
                std::nullopt};
    }
    if (const WebAsset* asset = assetAt(path, options)) {
        return {serveAsset(req, *asset), std::nullopt};
    }
    if (path == "/") {
        return {text(askedBy(req), http::status::not_found,
                     "takt: this takt was built without its web page (node and npm were missing when it was "
                     "built; see docs/web.md); /metrics and /api/rpc are served\n"),
                std::nullopt};
    }
    return {text(askedBy(req), http::status::not_found, "not found\n"), std::nullopt};
}

Response answerCall(const Request& req, const Call& call, const MethodAnswer& answer) {
    if (call.notification) {
        Response res{http::status::no_content, 11};
        Response done = finish(askedBy(req), std::move(res));
        done.erase(http::field::content_length);
        return done;
    }
    // Only what the HTTP client acts on gets a status of its own; other errors are JSON-RPC's.
    const bool ownStatus = !answer.ok && (answer.code == kUnauthorized || answer.code == kRateLimited);
    const http::status status = ownStatus ? statusOfRefusal(answer.code) : http::status::ok;
    Response res = text(askedBy(req), status,
                        (answer.ok ? rpc::resultLine(call.id, answer.json)
                                   : rpc::errorLine(call.id, rpc::Error{answer.code, answer.message, answer.data})) +
                            "\n",
                        "application/json");
    if (status == http::status::too_many_requests) {
        res.set(http::field::retry_after, "1");
    }
    return res;
}

Response plain(const Request& request, http::status status, std::string body) {
    return text(askedBy(request), status, std::move(body));
}

Response plain(http::status status, std::string body) {
    return text(Asked{}, status, std::move(body));
}

http::status statusOfRefusal(int code) {
    switch (code) {
    case kUnauthorized: return http::status::unauthorized;
    case kForbidden: return http::status::forbidden;
    case kRateLimited: return http::status::too_many_requests;
    case rpc::kInvalidParams:
    case rpc::kParseError:
    case rpc::kInvalidRequest: return http::status::bad_request;
    default: return http::status::service_unavailable;
    }
}

Response refused(const http::request_header<>& header, const MethodAnswer& refusal) {
    const std::string body =
        rpc::errorLine(rpc::RequestId{}, rpc::Error{refusal.code, refusal.message, refusal.data}) + "\n";
    const http::status status = statusOfRefusal(refusal.code);
    Response res = text(askedBy(header), status, body, "application/json");
    if (status == http::status::unauthorized) {
        res.set(http::field::www_authenticate, "Bearer");
    } else if (status == http::status::too_many_requests || status == http::status::service_unavailable) {
        res.set(http::field::retry_after, "1");
    }
    res.keep_alive(false);
    return res;
}

std::string bearer(const http::request_header<>& header) {
    return bearerOf(header);
}

} // namespace takt::agent::web
