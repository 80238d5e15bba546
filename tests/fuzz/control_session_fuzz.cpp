// libFuzzer target: the control endpoint's session (framing, envelope, auth.login, roles, rate
// limit, events.subscribe, dispatch) on arbitrary bytes, as a connection would receive them,
// without sockets. Every line the session writes must be one JSON object. The input's lines are
// also offered as target events, so the event filter sees arbitrary text too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "control/control_session.h"
#include "takt/agent/control.h"

namespace {

using takt::agent::ControlAnswer;
using takt::agent::Role;

class FuzzTarget final : public takt::agent::ControlTarget {
public:
    std::vector<std::string> pendingEvents;

    [[nodiscard]] std::span<const takt::agent::ControlMethod> methods() const override {
        static constexpr std::string_view kAny = R"({"type":"object"})";
        constexpr takt::agent::ControlHandler call = [](takt::agent::ControlTarget& t, std::string_view m,
                                                        const rapidjson::Value& p, takt::agent::ControlReplyFn r) {
            static_cast<FuzzTarget&>(t).call(std::string(m), p, std::move(r));
        };
        // var.write also has a real schema, so the server's params check is fuzzed too.
        static const takt::agent::ControlMethod kTable[] = {
            {"runtime.status", "", kAny, kAny, Role::Viewer, call},
            {"runtime.pause", "", kAny, kAny, Role::Operator, call},
            {"var.write", "",
             R"({"type":"object","required":["name"],"properties":{"name":{"type":"string"},"value":{}},)"
             R"("additionalProperties":false})",
             kAny, Role::Engineer, call},
        };
        return kTable;
    }
    void call(const std::string& method, const rapidjson::Value& params, takt::agent::ControlReplyFn reply) {
        if (method == "runtime.pause") {
            deferred_.push_back(std::move(reply)); // answered at the next poll
            return;
        }
        if (method == "var.write" && !params.HasMember("name")) {
            reply(ControlAnswer::error(-32602, "invalid params: 'name' is required", R"({"param":"name"})"));
            return;
        }
        reply(ControlAnswer::result("{\"state\":\"running\"}\n"));
    }
    void poll(std::vector<std::string>& events) override {
        for (auto& r : deferred_) {
            r(ControlAnswer::result("{}"));
        }
        deferred_.clear();
        events.swap(pendingEvents);
        pendingEvents.clear();
    }

private:
    std::vector<takt::agent::ControlReplyFn> deferred_;
};

class CheckingSink final : public takt::agent::detail::SessionSink {
public:
    void sendLine(std::string line) override {
        rapidjson::Document d;
        d.Parse(line.c_str(), line.size());
        if (d.HasParseError() || !d.IsObject() || line.find('\n') != std::string::npos) {
            std::abort(); // a reply that is not one JSON object on one line
        }
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    FuzzTarget target;
    takt::agent::ControlOptions options;
    options.endpoint = "unix:///fuzz.sock";
    options.tokens = {{Role::Operator, "fuzz-token-0123456789"}};
    options.maxRequestsPerSecond = 50;
    options.version = "fuzz";
    takt::agent::detail::ControlService service(options, target, "unix");
    CheckingSink sink;
    takt::agent::detail::PeerInfo peer{"fuzz", "uid:0", true, std::nullopt};
    takt::agent::detail::ControlSession session(service, peer, sink);
    // Split where the first byte says, so framing across reads is exercised.
    const std::size_t cut = size == 0 ? 0 : static_cast<std::size_t>(data[0]) % (size + 1);
    session.feed(input.substr(0, cut));
    session.feed(input.substr(cut));
    session.finish();
    std::string_view rest = input;
    while (!rest.empty()) {
        const std::size_t nl = rest.find('\n');
        target.pendingEvents.emplace_back(rest.substr(0, nl));
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
    service.pollEvents([&](int type, const std::string& /*params*/, const std::string& line) {
        if (session.subscribed(type)) {
            sink.sendLine(line);
        }
    });
    return 0;
}
