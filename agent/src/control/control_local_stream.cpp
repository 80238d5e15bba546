#include "control/control_local_stream.h"

namespace takt::agent::detail {

void LocalStreamSession::run(ControlServer::Call& call) {
    session_.dispatchCall(call.method, call.params, [this](const ControlAnswer& a) {
        open_ = a.ok;
        if (consumer_.answer) {
            consumer_.answer(a);
        }
    });
}

void LocalStreamSession::sendNotification(std::string_view method, std::string params) {
    if (open_ && consumer_.notification) {
        consumer_.notification(method, std::move(params));
    }
}

} // namespace takt::agent::detail
