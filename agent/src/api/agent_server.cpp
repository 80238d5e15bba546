// The JSON-RPC 2.0 envelope of `takt agent serve`: framing, envelope checks, dispatch through
// the method table, and the agent.* methods themselves.
#include "takt/agent/agent_server.h"

#include <cerrno>
#include <exception>

#include <unistd.h>

#include <fmt/format.h>

#include "api/agent_methods.h"
#include "rpc/method_table.h"
#include "rpc/rpc_envelope.h"
#include "rpc/rpc_framer.h"
#include "takt/bytecode/container.h"
#include "takt/common/fd_io.h"

#ifndef TAKT_VERSION
#define TAKT_VERSION "0.0.0"
#endif

namespace takt::agent {

using rapidjson::Value;

std::string_view taktVersion() {
    return TAKT_VERSION;
}

struct AgentServer::State {
    explicit State(AgentOptions o) : options(std::move(o)), harness(defaultHarnessDeps()) {}
    AgentOptions options;
    Workspace workspace;
    Harness harness;
    std::string error;
    bool ok = false;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    rpc::ParsedLine parsed; // reused between lines
};

AgentServer::AgentServer(AgentOptions options) : state_(std::make_unique<State>(std::move(options))) {
    state_->workspace.forceComponentWalk(state_->options.forceComponentWalk);
    const Workspace::Result r = state_->workspace.open(state_->options.workspace);
    state_->ok = r.ok();
    state_->error = r.message;
}

AgentServer::~AgentServer() = default;

bool AgentServer::ok() const {
    return state_->ok;
}

const std::string& AgentServer::error() const {
    return state_->error;
}

std::string AgentServer::readyLine() const {
    return rpc::notificationLine("agent.ready", fmt::format(R"({{"ok":true,"protocol":"agent-api-v1","version":{}}})",
                                                            rpc::quoted(taktVersion())));
}

std::string AgentServer::oversizeLine() const {
    return rpc::errorLine(rpc::RequestId{}, rpc::Error{rpc::kInvalidRequest, std::string(kOversizeLineMessage), {}});
}

std::optional<std::string> AgentServer::handleLine(std::string_view line) {
    rpc::Request request;
    rpc::Error invalid;
    if (!rpc::parseRequest(line, state_->parsed, request, invalid)) {
        return rpc::errorLine(request.id, invalid);
    }
    const std::string_view name = request.method;
    const detail::MethodSpec* method = detail::findMethod(name);
    detail::Outcome outcome;
    if (request.paramsError) {
        outcome = detail::failed(std::move(*request.paramsError));
    } else if (method == nullptr) {
        outcome = detail::failed(rpc::kMethodNotFound, fmt::format("Method '{}' is not available.", name));
    } else if (rpc::Error e; !detail::checkParams(*method, *request.params, e)) {
        outcome = detail::failed(std::move(e));
    } else if (!state_->ok) {
        outcome = detail::failed(rpc::kCommandFailed, "workspace unavailable: " + state_->error);
    } else {
        detail::Context ctx{state_->workspace, state_->harness, state_->options, state_->started};
        try {
            outcome = method->handler(ctx, *request.params);
        } catch (const std::exception& ex) {
            outcome = detail::failed(rpc::kInternalError, fmt::format("internal error in '{}': {}", name, ex.what()));
        }
    }
    if (request.notification) {
        return std::nullopt;
    }
    return outcome.ok ? rpc::resultLine(request.id, outcome.json)
                      : rpc::errorLine(request.id, rpc::Error{outcome.code, outcome.message, outcome.data});
}

int AgentServer::serve(int inFd, int outFd) {
    if (!common::writeAll(outFd, readyLine() + "\n")) {
        return 1;
    }
    rpc::LineFramer framer;
    std::vector<char> buf(1 << 16);
    const auto emit = [&](rpc::LineFramer::Status status) {
        using Status = rpc::LineFramer::Status;
        const std::optional<std::string> response = status == Status::TooLong ? std::optional(oversizeLine())
                                                    : status == Status::Line  ? handleLine(framer.line())
                                                                              : std::nullopt;
        return !response || common::writeAll(outFd, *response + "\n");
    };
    for (;;) {
        const ssize_t n = ::read(inFd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
        while (!chunk.empty()) {
            if (!emit(framer.next(chunk))) {
                return 1;
            }
        }
    }
    return emit(framer.finish()) ? 0 : 1;
}

namespace detail {

Outcome agentDescribe(Context& ctx, const Value&) {
    const std::vector<rpc::MethodFacts> methods = rpc::factsOf(methodTable());
    return success(
        fmt::format(R"({{"transport":"stdio","workspace_root":{},"version":{},"protocol":"agent-api-v1","methods":{},)"
                    R"("notifications":["agent.ready"]}})",
                    rpc::quoted(ctx.workspace.root().string()), rpc::quoted(taktVersion()), rpc::namesJson(methods)));
}

Outcome agentPing(Context& ctx, const Value&) {
    const double uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - ctx.started).count();
    return success(fmt::format(R"({{"ok":true,"version":"{}","uptime_s":{:.3f}}})", taktVersion(), uptime));
}

Outcome agentSchema(Context&, const Value& params) {
    const std::string name = stringParam(params, "method");
    const MethodSpec* m = findMethod(name);
    if (m == nullptr) {
        return failed(rpc::invalidParam("method", fmt::format("invalid params: no method '{}'", name)));
    }
    return success(rpc::schemaJson(rpc::factsOf(*m), false));
}

} // namespace detail

} // namespace takt::agent
