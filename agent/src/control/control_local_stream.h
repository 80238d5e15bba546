#pragma once
// A session of the control endpoint whose lines go to another surface of the runtime for as long
// as that surface keeps it open (ControlServer::openStream: the web page's /api/events). It logs
// in with the caller's token as a connection would, handles the caller's one request (var.subscribe)
// and then hands on every line the session sends: the request's answer first, then the var.changed
// notifications. The consumer says when it has not written the last line yet (backlogged), so the
// subscriptions hold their changes back and merge them as for a slow connection.
#include <functional>
#include <string>

#include "control/control_session.h"
#include "takt/agent/control.h"

namespace takt::agent::detail {

class LocalStreamSession final : public SessionSink {
public:
    LocalStreamSession(ControlService& service, PeerInfo peer, ControlServer::LocalStream consumer)
        : session_(service, std::move(peer), *this), consumer_(std::move(consumer)) {}

    // The login (when the call has a token) and the call's request.
    void run(const ControlServer::LocalCall& call);
    void sendLine(std::string line) override;
    [[nodiscard]] bool backlogged() const override { return consumer_.backlogged && consumer_.backlogged(); }
    ControlSession& session() { return session_; }

private:
    ControlSession session_;
    ControlServer::LocalStream consumer_;
    bool loggingIn_ = false;
    bool failed_ = false;
};

} // namespace takt::agent::detail
