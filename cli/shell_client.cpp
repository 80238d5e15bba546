// The shell commands' connection (shell_client.h).
#include "shell_client.h"

#include <csignal>
#include <cstdio>
#include <ctime>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "commands.h"

namespace takt::cli {

int ShellClient::connect(const ControlConnectOptions& options, agent::Role role) {
    agent::ControlClientOptions client;
    if (const int rc = clientOptions(command_, options, client, role); rc != kExitOk) {
        return rc;
    }
    endpoint_ = client.endpoint;
    client_ = std::make_unique<agent::ControlClient>(client);
    return replyFailure(command_, "auth.login", client_->connect());
}

int ShellClient::call(const std::string& method, const std::string& params, rapidjson::Document& result) {
    const agent::ControlReply reply = client_->call(method, params);
    if (const int rc = replyFailure(command_, method, reply); rc != kExitOk) {
        return rc;
    }
    result.Parse(reply.json.c_str(), reply.json.size());
    if (result.HasParseError()) {
        std::fprintf(stderr, "%s: %s: the reply is not JSON\n", command_, method.c_str());
        return kExitControlError;
    }
    return kExitOk;
}

namespace {

sigset_t stopSignals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}

} // namespace

void takeStopSignals() {
    const sigset_t set = stopSignals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool stopRequested(int waitMs) {
    const sigset_t set = stopSignals();
    const timespec wait{waitMs / 1000, static_cast<long>(waitMs % 1000) * 1'000'000L};
    return sigtimedwait(&set, nullptr, &wait) > 0;
}

std::string jsonQuoted(const std::string& s) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    writer.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
    return buffer.GetString();
}

std::string jsonText(const rapidjson::Value& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    v.Accept(writer);
    return buffer.GetString();
}

} // namespace takt::cli
