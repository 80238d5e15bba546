#include "web/web_events.h"

#include <fmt/format.h>

#include "rpc/rpc_envelope.h"
#include "rpc/rpc_json.h"
#include "takt/agent/rpc_limits.h"

namespace takt::agent::web {

namespace {

Response jsonAnswer(const Request& request, http::status status, std::string body) {
    Response res{status, request.version() == 10 ? 10u : 11u};
    res.set(http::field::content_type, "application/json");
    res.set("X-Content-Type-Options", "nosniff");
    res.keep_alive(false);
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
}

http::status statusOfCode(int code) {
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

} // namespace

std::optional<Response> eventsCall(const Request& request, Call& call) {
    // The body is parsed here and written out again, so the line carries exactly one object as
    // its params whatever the body holds.
    rpc::ParsedLine parsed;
    rpc::parseLine(request.body().empty() ? std::string_view("{}") : std::string_view(request.body()), kMaxJsonDepth,
                   parsed);
    if (parsed.status != rpc::ParsedLine::Status::Ok || !parsed.doc.IsObject()) {
        return jsonAnswer(request, http::status::bad_request,
                          rpc::errorLine(rpc::RequestId{},
                                         rpc::Error{rpc::kInvalidParams,
                                                    "the body of /api/events must be var.subscribe's params: a JSON "
                                                    "object such as {\"names\":[\"Main.x\"]}",
                                                    {}}) +
                              "\n");
    }
    call.kind = Call::Kind::Events;
    call.line = rpc::requestLine(1, "var.subscribe", rpc::toJson(parsed.doc));
    call.token = bearer(request);
    return std::nullopt;
}

EventsStart eventsStart(const Request& request, const std::string& line) {
    rpc::ParsedLine parsed;
    rpc::parseLine(line, kMaxJsonDepth, parsed);
    EventsStart out;
    if (parsed.status == rpc::ParsedLine::Status::Ok && parsed.doc.IsObject() && parsed.doc.HasMember("result")) {
        out.subscribed = rpc::toJson(parsed.doc["result"]);
        return out;
    }
    int code = rpc::kInternalError;
    if (parsed.status == rpc::ParsedLine::Status::Ok && parsed.doc.IsObject() && parsed.doc.HasMember("error") &&
        parsed.doc["error"].IsObject() && parsed.doc["error"].HasMember("code") &&
        parsed.doc["error"]["code"].IsInt()) {
        code = parsed.doc["error"]["code"].GetInt();
    }
    out.refused = jsonAnswer(request, statusOfCode(code), line + "\n");
    return out;
}

http::response<http::empty_body> eventsHeader(const Request& request) {
    http::response<http::empty_body> res{http::status::ok, request.version() == 10 ? 10u : 11u};
    res.set(http::field::content_type, "text/event-stream");
    res.set(http::field::cache_control, "no-store");
    res.set("X-Content-Type-Options", "nosniff");
    res.keep_alive(false); // the body ends when the stream does
    return res;
}

std::string eventFrame(std::string_view name, std::string_view data) {
    return fmt::format("event: {}\ndata: {}\n\n", name, data);
}

std::optional<std::string> notificationFrame(const std::string& line) {
    rpc::ParsedLine parsed;
    rpc::parseLine(line, kMaxJsonDepth, parsed);
    if (parsed.status != rpc::ParsedLine::Status::Ok || !parsed.doc.IsObject() || !parsed.doc.HasMember("method") ||
        !parsed.doc["method"].IsString() || !parsed.doc.HasMember("params")) {
        return std::nullopt;
    }
    const std::string_view method(parsed.doc["method"].GetString(), parsed.doc["method"].GetStringLength());
    if (method != "var.changed") {
        return std::nullopt;
    }
    return eventFrame(method, rpc::toJson(parsed.doc["params"]));
}

} // namespace takt::agent::web
