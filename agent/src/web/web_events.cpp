#include "web/web_events.h"

#include <fmt/format.h>

#include "rpc/rpc_envelope.h"
#include "rpc/rpc_json.h"
#include "takt/agent/rpc_limits.h"

namespace takt::agent::web {

std::optional<Response> eventsCall(const Request& request, Call& call) {
    rpc::ParsedLine parsed;
    rpc::parseLine(request.body().empty() ? std::string_view("{}") : std::string_view(request.body()), kMaxJsonDepth,
                   parsed);
    if (parsed.status != rpc::ParsedLine::Status::Ok || !parsed.doc.IsObject()) {
        return refused(request, MethodAnswer::error(rpc::kInvalidParams,
                                                    "the body of /api/events must be var.subscribe's params: a JSON "
                                                    "object such as {\"names\":[\"Main.x\"]}"));
    }
    call.events = true;
    call.method = "var.subscribe";
    call.params = std::move(parsed.doc);
    return std::nullopt;
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

} // namespace takt::agent::web
