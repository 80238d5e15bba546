#include "control/control_local_stream.h"

#include "rpc/rpc_envelope.h"

namespace takt::agent::detail {

void LocalStreamSession::run(const ControlServer::LocalCall& call) {
    if (!call.token.empty()) {
        rapidjson::StringBuffer params;
        rpc::JsonWriter w(params);
        w.StartObject();
        w.Key("token");
        rpc::writeString(w, call.token);
        w.EndObject();
        loggingIn_ = true;
        session_.handleLine(rpc::requestLine(0, "auth.login", std::string_view(params.GetString(), params.GetSize())));
        loggingIn_ = false;
        if (failed_) {
            return; // the login failed and was answered
        }
    }
    session_.handleLine(call.line);
}

void LocalStreamSession::sendLine(std::string line) {
    if (loggingIn_) {
        if (line.find(R"("error")") == std::string::npos) {
            return; // the login's result; the request's answer comes next
        }
        failed_ = true;
    }
    if (consumer_.line) {
        consumer_.line(std::move(line));
    }
}

} // namespace takt::agent::detail
