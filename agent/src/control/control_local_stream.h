#pragma once
// A session of the control endpoint that another surface of the runtime keeps open (ControlServer::
// openStream: the web page's /api/events, the OPC UA server's value and event feeds). It serves
// the surface's one typed call (var.subscribe or events.subscribe) through
// ControlSession::dispatchCall, as ControlServer::call serves a call, with the role the surface
// established and the caller's rate-limit budget, and then hands on the session's notifications
// (var.changed, event) typed: method and params, no line to parse back. The consumer says when it
// has not written the last notification yet (backlogged), so the subscriptions hold their changes
// back and merge them as for a slow connection.
#include <string>
#include <string_view>

#include "control/control_session.h"
#include "takt/agent/control.h"

namespace takt::agent::detail {

class LocalStreamSession final : public SessionSink {
public:
    LocalStreamSession(ControlService& service, PeerInfo peer, RateLimiter& limiter, ControlServer::Stream consumer)
        : session_(service, std::move(peer), *this, &limiter), consumer_(std::move(consumer)) {}

    // The call: its answer goes to the consumer; notifications follow only an answer that is ok.
    void run(ControlServer::Call& call);
    // Nothing goes out as lines: the answer comes through dispatch, notifications typed.
    void sendLine(std::string /*line*/) override {}
    void sendNotification(std::string_view method, std::string params) override;
    [[nodiscard]] bool backlogged() const override { return consumer_.backlogged && consumer_.backlogged(); }
    ControlSession& session() { return session_; }

private:
    ControlSession session_;
    ControlServer::Stream consumer_;
    bool open_ = false; // the call was answered ok
};

} // namespace takt::agent::detail
