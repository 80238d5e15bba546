// The JSON-RPC 2.0 envelope of `takt agent serve`: framing, envelope checks, dispatch through
// the method table, and the agent.* methods themselves.
#include "takt/agent/agent_server.h"

#include <cerrno>
#include <exception>

#include <unistd.h>

#include <fmt/format.h>

#include "agent_methods.h"
#include "takt/bytecode/container.h"

#ifndef TAKT_VERSION
#define TAKT_VERSION "0.0.0"
#endif

namespace takt::agent {

namespace {

using rapidjson::Value;
using rpc::JsonWriter;

constexpr std::string_view kNotifications[] = {"agent.ready"};

// The id of a request as it will be echoed.
struct Id {
    enum class Kind : std::uint8_t { Null, String, Number } kind = Kind::Null;
    std::string text; // the string, or the number exactly as written
};

void writeId(JsonWriter& w, const Id& id) {
    w.Key("id");
    switch (id.kind) {
    case Id::Kind::Null: w.Null(); break;
    case Id::Kind::String: rpc::writeString(w, id.text); break;
    case Id::Kind::Number: w.RawValue(id.text.data(), id.text.size(), rapidjson::kNumberType); break;
    }
}

std::string errorResponse(const Id& id, const rpc::Error& e) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("jsonrpc");
    w.String("2.0");
    writeId(w, id);
    w.Key("error");
    w.StartObject();
    w.Key("code");
    w.Int(e.code);
    w.Key("message");
    rpc::writeString(w, e.message);
    if (!e.data.empty()) {
        w.Key("data");
        w.RawValue(e.data.data(), e.data.size(), rapidjson::kObjectType);
    }
    w.EndObject();
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::string resultResponse(const Id& id, std::string_view result) {
    // Reports shared with the CLI end with a newline there; inside a response it would split the line.
    while (!result.empty() && (result.back() == '\n' || result.back() == ' ')) {
        result.remove_suffix(1);
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("jsonrpc");
    w.String("2.0");
    writeId(w, id);
    w.Key("result");
    w.RawValue(result.data(), result.size(), rapidjson::kObjectType);
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

rpc::Error invalidRequest(std::string message) {
    return rpc::Error{rpc::kInvalidRequest, std::move(message), {}};
}

} // namespace

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
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("jsonrpc");
    w.String("2.0");
    w.Key("method");
    w.String("agent.ready");
    w.Key("params");
    w.StartObject();
    w.Key("ok");
    w.Bool(true);
    w.Key("protocol");
    w.String("agent-api-v1");
    w.Key("version");
    rpc::writeString(w, taktVersion());
    w.EndObject();
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::string AgentServer::oversizeLine() const {
    return errorResponse(Id{}, invalidRequest(fmt::format("request line exceeds {} bytes (1 MiB); the line was "
                                                          "skipped up to its newline",
                                                          kMaxLineBytes)));
}

std::optional<std::string> AgentServer::handleLine(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
        line.remove_suffix(1);
    }
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
        // One line, one request (seed 000): a blank line is a request that is not one, answered
        // like any other (the harness does the same), so a client never waits on a silent line.
        return errorResponse(Id{}, invalidRequest(std::string(kBlankLineMessage)));
    }
    if (line.size() > kMaxLineBytes) {
        return oversizeLine();
    }
    rpc::ParsedLine& parsed = state_->parsed;
    rpc::parseLine(line, kMaxJsonDepth, parsed);
    if (parsed.status == rpc::ParsedLine::Status::ParseError) {
        return errorResponse(Id{}, rpc::Error{rpc::kParseError, "Parse error: " + parsed.error, {}});
    }
    if (parsed.status == rpc::ParsedLine::Status::TooDeep) {
        return errorResponse(Id{}, invalidRequest(parsed.error));
    }
    const rapidjson::Document& doc = parsed.doc;
    if (doc.IsArray()) {
        return errorResponse(Id{}, invalidRequest("batch requests are not supported; send one request per line"));
    }
    if (!doc.IsObject()) {
        return errorResponse(Id{}, invalidRequest("a request must be a JSON object"));
    }
    Id id;
    bool notification = true;
    if (auto it = doc.FindMember("id"); it != doc.MemberEnd()) {
        notification = false;
        const Value& v = it->value;
        if (v.IsString()) {
            id.kind = Id::Kind::String;
            id.text.assign(v.GetString(), v.GetStringLength());
        } else if (v.IsNumber()) {
            id.kind = Id::Kind::Number;
            id.text = parsed.rawNumericId;
        } else if (!v.IsNull()) {
            return errorResponse(Id{}, invalidRequest("'id' must be a string, a number or null"));
        }
    }
    auto version = doc.FindMember("jsonrpc");
    if (version == doc.MemberEnd() || !version->value.IsString() || version->value != "2.0") {
        return errorResponse(id, invalidRequest("'jsonrpc' must be \"2.0\""));
    }
    auto methodIt = doc.FindMember("method");
    if (methodIt == doc.MemberEnd() || !methodIt->value.IsString()) {
        return errorResponse(id, invalidRequest("'method' must be a string"));
    }
    const std::string_view name(methodIt->value.GetString(), methodIt->value.GetStringLength());
    static const Value kNoParams(rapidjson::kObjectType);
    const Value* params = &kNoParams;
    if (auto it = doc.FindMember("params"); it != doc.MemberEnd()) {
        if (it->value.IsArray()) {
            const rpc::Error e = rpc::invalidParam("params", "invalid params: takt methods take named params "
                                                             "(an object), not an array");
            return notification ? std::nullopt : std::optional<std::string>(errorResponse(id, e));
        }
        if (!it->value.IsObject()) {
            return errorResponse(id, invalidRequest("'params' must be an object"));
        }
        params = &it->value;
    }
    const detail::MethodSpec* method = detail::findMethod(name);
    detail::Outcome outcome;
    if (method == nullptr) {
        outcome = detail::failed(rpc::kMethodNotFound, fmt::format("Method '{}' is not available.", name));
    } else if (rpc::Error e; !detail::checkParams(*method, *params, e)) {
        outcome = detail::failed(std::move(e));
    } else if (!state_->ok) {
        outcome = detail::failed(rpc::kCommandFailed, "workspace unavailable: " + state_->error);
    } else {
        detail::Context ctx{state_->workspace, state_->harness, state_->options, state_->started};
        try {
            outcome = method->handler(ctx, *params);
        } catch (const std::exception& ex) {
            outcome = detail::failed(rpc::kInternalError, fmt::format("internal error in '{}': {}", name, ex.what()));
        }
    }
    if (notification) {
        return std::nullopt;
    }
    return outcome.ok ? resultResponse(id, outcome.result) : errorResponse(id, outcome.error);
}

int AgentServer::serve(int inFd, int outFd) {
    if (!bytecode::writeAll(outFd, readyLine() + "\n")) {
        return 1;
    }
    std::string line;
    bool skipping = false; // inside a line longer than the cap: drop bytes up to its newline
    std::vector<char> buf(1 << 16);
    const auto emit = [&](const std::optional<std::string>& response) {
        return !response || bytecode::writeAll(outFd, *response + "\n");
    };
    for (;;) {
        const ssize_t n = ::read(inFd, buf.data(), buf.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        if (n == 0) {
            break;
        }
        std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
        while (!chunk.empty()) {
            const std::size_t nl = chunk.find('\n');
            const std::string_view part = chunk.substr(0, nl);
            if (!skipping) {
                if (line.size() + part.size() > kMaxLineBytes) {
                    skipping = true;
                    line.clear();
                    line.shrink_to_fit();
                } else {
                    line.append(part);
                }
            }
            if (nl == std::string_view::npos) {
                break;
            }
            chunk.remove_prefix(nl + 1);
            const bool ok = skipping ? emit(oversizeLine()) : emit(handleLine(line));
            skipping = false;
            line.clear();
            if (!ok) {
                return 1;
            }
        }
    }
    if (skipping) {
        return emit(oversizeLine()) ? 0 : 1;
    }
    // Input that ends with a newline leaves nothing here: end of input is not a blank line.
    return line.empty() || emit(handleLine(line)) ? 0 : 1;
}

namespace detail {

Outcome agentDescribe(Context& ctx, const Value&) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("transport");
    w.String("stdio");
    w.Key("workspace_root");
    rpc::writeString(w, ctx.workspace.root().string());
    w.Key("version");
    rpc::writeString(w, taktVersion());
    w.Key("protocol");
    w.String("agent-api-v1");
    w.Key("methods");
    w.StartArray();
    for (const MethodSpec& m : methodTable()) {
        rpc::writeString(w, m.name);
    }
    w.EndArray();
    w.Key("notifications");
    w.StartArray();
    for (std::string_view n : kNotifications) {
        rpc::writeString(w, n);
    }
    w.EndArray();
    w.EndObject();
    return success({buf.GetString(), buf.GetSize()});
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
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("method");
    rpc::writeString(w, m->name);
    w.Key("summary");
    rpc::writeString(w, m->summary);
    w.Key("params");
    w.RawValue(m->paramsSchema.data(), m->paramsSchema.size(), rapidjson::kObjectType);
    w.Key("result");
    w.RawValue(m->resultSchema.data(), m->resultSchema.size(), rapidjson::kObjectType);
    w.EndObject();
    return success({buf.GetString(), buf.GetSize()});
}

} // namespace detail

} // namespace takt::agent
