// `takt dap` (dap_adapter.h): the Debug Adapter Protocol on one side, the control endpoint's
// debug.* methods on the other. Requests are answered one at a time, each with the calls it needs
// on the one control connection; the runtime's debug_stopped events arrive on the same connection
// (events.subscribe) and become `stopped` events. A DAP client names variables by reference
// numbers, which stand for a frame's scope or a STRUCT / FB path until the task runs on.
#include "takt/agent/dap_adapter.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <set>

#include <poll.h>
#include <unistd.h>

#include <fmt/format.h>

#include "dap/dap_launch.h"
#include "rpc/rpc_framer.h"
#include "rpc/rpc_json.h"
#include "takt/agent/control.h"
#include "takt/agent/control_client.h"
#include "takt/agent/iec_literal.h"
#include "takt/common/fd_io.h"
#include "takt/vm/debug.h"

namespace takt::agent {

namespace {

using rpc::quoted;

constexpr std::uint32_t kFramesPerThread = 100'000;       // frame id = thread * this + index + 1
constexpr int kKeepAliveMs = 10'000;                      // below the endpoint's idle timeout (30 s)
constexpr auto kLaunchTimeout = std::chrono::seconds(60); // compiling a large project natively takes a while

std::string dapFrame(std::string_view body) {
    return fmt::format("Content-Length: {}\r\n\r\n{}", body.size(), body);
}

const rapidjson::Value* memberOf(const rapidjson::Value& v, const char* name) {
    if (!v.IsObject()) {
        return nullptr;
    }
    const auto it = v.FindMember(name);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string stringOf(const rapidjson::Value& v, const char* name) {
    const rapidjson::Value* m = memberOf(v, name);
    return m != nullptr && m->IsString() ? std::string(m->GetString(), m->GetStringLength()) : std::string();
}

std::int64_t intOf(const rapidjson::Value& v, const char* name, std::int64_t fallback = 0) {
    const rapidjson::Value* m = memberOf(v, name);
    return m != nullptr && m->IsInt64() ? m->GetInt64() : fallback;
}

// What a variables reference stands for.
struct VarRef {
    std::uint32_t thread = 0;
    std::uint32_t frame = 0;
    std::string scope; // locals | inputs | outputs | globals; empty: `path`
    std::string path;
    bool inFrame = false; // `path` starts at a variable of the frame (thread, frame): a FUNCTION's local
};

// The debug.* params that name a path: in the scope of its frame when it starts at one of the
// frame's variables.
std::string pathParams(const VarRef& r) {
    return r.inFrame ? fmt::format(R"({{"thread":{},"frame":{},"path":{})", r.thread, r.frame, quoted(r.path))
                     : fmt::format(R"({{"path":{})", quoted(r.path));
}

} // namespace

struct DapAdapter::State {
    std::string runExecutable; // the takt binary launch starts; empty: launch is refused
    // Declared before `client`, so that on the way out the connection closes (the runtime
    // resumes its halted tasks) before the launched runtime is stopped.
    std::unique_ptr<detail::LaunchedRuntime> launched;
    std::unique_ptr<ControlClient> client;
    int seq = 1;
    bool finished = false;
    std::vector<std::string> outbox; // bodies to send
    // Client paths by the program's file names, learned from setBreakpoints, so frames name the
    // files the editor opened; `sourceRoot` (attach) for the rest.
    std::map<std::string, std::string> paths;
    std::string sourceRoot;
    std::vector<VarRef> refs; // variablesReference - 1; valid while the tasks stay halted
    // Per reference: the listed variables by name, for setVariable.
    std::map<std::pair<std::int64_t, std::string>, VarRef> listed;
    std::chrono::steady_clock::time_point lastCall = std::chrono::steady_clock::now();
    // Where the verified function breakpoints halt (program file, line): a halt there is told as a
    // function breakpoint's.
    std::set<std::pair<std::string, std::int64_t>> functionStops;
    bool exceptionsSet = false;        // the runtime was given exception filters (an empty list needs no call before)
    bool stopOnEntry = false;          // launch's stopOnEntry, until configurationDone pauses every task
    bool startPending = false;         // a launched program waits before its first cycle for configurationDone
    std::set<std::int64_t> entryStops; // threads paused for stopOnEntry: their halt is told as `entry`
    const volatile std::sig_atomic_t* stopFlag = nullptr; // serve's `stop`: a launch's wait ends with it

    void event(std::string_view name, const std::string& bodyJson) {
        outbox.push_back(fmt::format(R"({{"seq":{},"type":"event","event":"{}","body":{}}})", seq++, name, bodyJson));
    }
    void respond(const rapidjson::Value& request, const std::string& bodyJson) {
        outbox.push_back(fmt::format(R"({{"seq":{},"type":"response","request_seq":{},"success":true,"command":{},)"
                                     R"("body":{}}})",
                                     seq++, intOf(request, "seq"), quoted(stringOf(request, "command")), bodyJson));
    }
    void fail(const rapidjson::Value& request, const std::string& message) {
        outbox.push_back(fmt::format(R"({{"seq":{},"type":"response","request_seq":{},"success":false,"command":{},)"
                                     R"("message":{},"body":{{"error":{{"id":1,"format":{}}}}}}})",
                                     seq++, intOf(request, "seq"), quoted(stringOf(request, "command")),
                                     quoted(message), quoted(message)));
    }

    // One control call; false (and the request failed with the runtime's message) on an error.
    bool call(const rapidjson::Value& request, std::string_view method, const std::string& params,
              rapidjson::Document& result) {
        if (client == nullptr) {
            fail(request, "not attached: send attach with the runtime's endpoint first");
            return false;
        }
        const ControlReply r = client->call(method, params);
        lastCall = std::chrono::steady_clock::now();
        if (!r.reached || !r.ok) {
            fail(request, fmt::format("{}: {}", method, r.message));
            return false;
        }
        result.Parse(r.json.c_str());
        return true;
    }

    std::string clientPath(const std::string& file) const {
        if (const auto it = paths.find(file); it != paths.end()) {
            return it->second;
        }
        if (!sourceRoot.empty() && !file.empty() && file[0] != '/') {
            return sourceRoot + "/" + file;
        }
        return file;
    }

    std::int64_t newRef(VarRef r) {
        refs.push_back(std::move(r));
        return static_cast<std::int64_t>(refs.size());
    }

    void attach(const rapidjson::Value& request, const rapidjson::Value& args);
    void launch(const rapidjson::Value& request, const rapidjson::Value& args);
    bool connected(const rapidjson::Value& request, std::unique_ptr<ControlClient> c);
    void forwardOutput();
    void configurationDone(const rapidjson::Value& request);
    void endLaunched(bool events);
    void setBreakpoints(const rapidjson::Value& request, const rapidjson::Value& args);
    void setFunctionBreakpoints(const rapidjson::Value& request, const rapidjson::Value& args);
    void setExceptionBreakpoints(const rapidjson::Value& request, const rapidjson::Value& args);
    void exceptionInfo(const rapidjson::Value& request, const rapidjson::Value& args);
    void stackTrace(const rapidjson::Value& request, const rapidjson::Value& args);
    void scopes(const rapidjson::Value& request, const rapidjson::Value& args);
    void variables(const rapidjson::Value& request, const rapidjson::Value& args);
    void setVariable(const rapidjson::Value& request, const rapidjson::Value& args);
    void evaluate(const rapidjson::Value& request, const rapidjson::Value& args);
    void run(const rapidjson::Value& request, const rapidjson::Value& args, std::string_view method);
    void flowControl(const rapidjson::Value& request, const rapidjson::Value& args);
    void flowValues(const rapidjson::Value& request);
    void runtimeLine(const std::string& line);
};

void DapAdapter::State::attach(const rapidjson::Value& request, const rapidjson::Value& args) {
    if (client != nullptr || launched != nullptr) {
        fail(request, "attach: this session has a runtime already");
        return;
    }
    ControlClientOptions options;
    options.endpoint = stringOf(args, "endpoint");
    if (options.endpoint.empty()) {
        fail(request, "attach: give \"endpoint\", the runtime's control endpoint (as takt ctl --endpoint)");
        return;
    }
    if (const std::string tokenFile = stringOf(args, "tokenFile"); !tokenFile.empty()) {
        std::string error;
        if (!readTokenFile(tokenFile, options.token, error)) {
            fail(request, "attach: tokenFile: " + error);
            return;
        }
    }
    sourceRoot = stringOf(args, "sourceRoot");
    auto c = std::make_unique<ControlClient>(options);
    const ControlReply r = c->connect();
    if (!r.reached || !r.ok) {
        fail(request, "attach: " + r.message);
        return;
    }
    (void)connected(request, std::move(c));
}

// An attach or a launch whose runtime answered: subscribe to its debug events, then answer.
bool DapAdapter::State::connected(const rapidjson::Value& request, std::unique_ptr<ControlClient> c) {
    c->keepNotifications(true);
    client = std::move(c);
    rapidjson::Document d;
    if (!call(request, "debug.threads", "", d) ||
        !call(request, "events.subscribe", R"({"types":["debug_stopped","debug_output","runtime_stopped"]})", d)) {
        client.reset();
        return false;
    }
    respond(request, "{}");
    event("initialized", "{}");
    return true;
}

// The project run as `takt run --project` runs it, by this same binary, on a private endpoint with
// debugging on (dap_launch.h); once it serves that endpoint the session goes on as an attach.
void DapAdapter::State::launch(const rapidjson::Value& request, const rapidjson::Value& args) {
    if (client != nullptr || launched != nullptr) {
        fail(request, "launch: this session has a runtime already");
        return;
    }
    if (runExecutable.empty()) {
        fail(request, "launch: this adapter cannot start a runtime; attach to a running one");
        return;
    }
    const std::string project = stringOf(args, "project");
    if (project.empty()) {
        fail(request, "launch: give \"project\", the project directory (as takt run --project)");
        return;
    }
    const std::string execution = stringOf(args, "execution");
    if (!execution.empty() && execution != "interpreter" && execution != "native") {
        fail(request, fmt::format("launch: execution '{}': expected \"interpreter\" or \"native\"", execution));
        return;
    }
    std::string error;
    launched = detail::LaunchedRuntime::start({runExecutable, project, execution}, error);
    if (launched == nullptr) {
        fail(request, "launch: " + error);
        return;
    }
    std::unique_ptr<ControlClient> c = launched->connectWhenServing(kLaunchTimeout, stopFlag, error);
    forwardOutput(); // what it wrote while it started: its log, or why it did not start
    if (c == nullptr) {
        fail(request, fmt::format("launch: takt run --project {} {}", launched->project(), error));
        launched.reset();
        return;
    }
    if (!connected(request, std::move(c))) {
        launched.reset();
        return;
    }
    // Only for a session that has its runtime: a failed launch leaves the session as it was.
    sourceRoot = launched->project();
    const rapidjson::Value* entry = memberOf(args, "stopOnEntry");
    stopOnEntry = entry != nullptr && entry->IsBool() && entry->GetBool();
    startPending = true;
    event("process", fmt::format(R"({{"name":{},"systemProcessId":{},"isLocalProcess":true,"startMethod":"launch"}})",
                                 quoted(launched->name()), launched->pid()));
}

// The client has set its breakpoints: with stopOnEntry every task halts at the next statement it
// runs. A launched program waits paused before its first cycle until now, so that statement is
// the first of its first cycle, and a breakpoint in code of the first cycle halts it; an attached
// one has been running all along.
void DapAdapter::State::configurationDone(const rapidjson::Value& request) {
    rapidjson::Document d;
    if (stopOnEntry && client != nullptr) {
        stopOnEntry = false;
        if (!call(request, "debug.threads", "", d)) {
            return;
        }
        for (const rapidjson::Value& t : d["threads"].GetArray()) {
            rapidjson::Document paused;
            entryStops.insert(t["id"].GetInt64());
            if (!call(request, "debug.pause", fmt::format(R"({{"thread":{}}})", t["id"].GetInt64()), paused)) {
                return;
            }
        }
    }
    if (startPending && client != nullptr) {
        startPending = false; // once: a later configurationDone must not end a runtime.step
        rapidjson::Document resumed;
        if (!call(request, "runtime.resume", "", resumed)) {
            return;
        }
    }
    respond(request, "{}");
}

// What the launched runtime wrote, as `output` events (stdout and stderr kept apart).
void DapAdapter::State::forwardOutput() {
    for (const auto& [category, text] : launched->takeOutput()) {
        event("output", fmt::format(R"({{"category":"{}","output":{}}})", category, quoted(text)));
    }
}

// The launched runtime stopped (or is stopped now): with `events`, the client hears how it ended.
void DapAdapter::State::endLaunched(bool events) {
    if (client != nullptr) { // what it told before it ended (runtime_stopped, a last logpoint) first
        for (const std::string& line : client->takeNotifications()) {
            runtimeLine(line);
        }
        std::string line;
        while (client->readLine(line, 0)) {
            runtimeLine(line);
        }
        client.reset();
    }
    const int code = launched->stop(detail::kStopGraceMs);
    forwardOutput();
    launched.reset();
    if (events) {
        event("exited", fmt::format(R"({{"exitCode":{}}})", code));
        event("terminated", "{}");
    }
}

void DapAdapter::State::setBreakpoints(const rapidjson::Value& request, const rapidjson::Value& args) {
    const rapidjson::Value* source = memberOf(args, "source");
    const std::string path = source != nullptr ? stringOf(*source, "path") : std::string();
    if (path.empty()) {
        fail(request, "setBreakpoints: the source has no path");
        return;
    }
    std::string lines;
    if (const rapidjson::Value* bps = memberOf(args, "breakpoints"); bps != nullptr && bps->IsArray()) {
        for (const rapidjson::Value& b : bps->GetArray()) {
            std::string rule;
            for (const char* name : {"hitCondition", "condition", "logMessage"}) {
                if (const std::string text = stringOf(b, name); !text.empty()) {
                    rule += fmt::format(R"(,"{}":{})", name, quoted(text));
                }
            }
            lines += fmt::format("{}{{\"line\":{}{}}}", lines.empty() ? "" : ",", intOf(b, "line", 1), rule);
        }
    }
    rapidjson::Document d;
    if (!call(request, "debug.setBreakpoints", fmt::format(R"({{"file":{},"breakpoints":[{}]}})", quoted(path), lines),
              d)) {
        return;
    }
    if (const std::string program = stringOf(d, "source"); !program.empty()) {
        paths[program] = path; // frames in that file name the editor's path
    }
    std::string out;
    for (const rapidjson::Value& b : d["breakpoints"].GetArray()) {
        const bool verified = b["verified"].GetBool();
        const std::int64_t line = intOf(b, "resolved_line", intOf(b, "line"));
        out += fmt::format(R"({}{{"verified":{},"line":{},"source":{{"path":{}}}{}}})", out.empty() ? "" : ",",
                           verified, line, quoted(path),
                           verified ? "" : fmt::format(R"(,"message":{})", quoted(stringOf(b, "reason"))));
    }
    respond(request, fmt::format(R"({{"breakpoints":[{}]}})", out));
}

// Function breakpoints by POU name: the runtime resolves each to its POU's first statement.
void DapAdapter::State::setFunctionBreakpoints(const rapidjson::Value& request, const rapidjson::Value& args) {
    std::string list;
    if (const rapidjson::Value* bps = memberOf(args, "breakpoints"); bps != nullptr && bps->IsArray()) {
        for (const rapidjson::Value& b : bps->GetArray()) {
            std::string rule;
            for (const char* name : {"hitCondition", "condition"}) {
                if (const std::string text = stringOf(b, name); !text.empty()) {
                    rule += fmt::format(R"(,"{}":{})", name, quoted(text));
                }
            }
            list += fmt::format("{}{{\"name\":{}{}}}", list.empty() ? "" : ",", quoted(stringOf(b, "name")), rule);
        }
    }
    rapidjson::Document d;
    if (!call(request, "debug.setFunctionBreakpoints", fmt::format(R"({{"breakpoints":[{}]}})", list), d)) {
        return;
    }
    std::string out;
    functionStops.clear();
    for (const rapidjson::Value& b : d["breakpoints"].GetArray()) {
        std::string body = fmt::format(R"("verified":{})", b["verified"].GetBool());
        if (b["verified"].GetBool()) {
            functionStops.emplace(stringOf(b, "file"), intOf(b, "line"));
        }
        if (const std::string file = stringOf(b, "file"); !file.empty()) {
            body += fmt::format(R"(,"line":{},"source":{{"name":{},"path":{}}})", intOf(b, "line"),
                                quoted(file.substr(file.rfind('/') + 1)), quoted(clientPath(file)));
        }
        if (!b["verified"].GetBool()) {
            body += fmt::format(R"(,"message":{})", quoted(stringOf(b, "reason")));
        }
        out += fmt::format("{}{{{}}}", out.empty() ? "" : ",", body);
    }
    respond(request, fmt::format(R"({{"breakpoints":[{}]}})", out));
}

// Exception breakpoints: the filters the client checked (initialize offered vm::kExceptionFilters).
void DapAdapter::State::setExceptionBreakpoints(const rapidjson::Value& request, const rapidjson::Value& args) {
    std::string list;
    std::size_t count = 0;
    if (const rapidjson::Value* filters = memberOf(args, "filters"); filters != nullptr && filters->IsArray()) {
        for (const rapidjson::Value& f : filters->GetArray()) {
            if (f.IsString()) {
                list += (list.empty() ? "" : ",") + quoted(std::string(f.GetString(), f.GetStringLength()));
                ++count;
            }
        }
    }
    if (count == 0 && !exceptionsSet) {
        respond(request, R"({"breakpoints":[]})"); // nothing to remove: a viewer's session may send this too
        return;
    }
    rapidjson::Document d;
    if (!call(request, "debug.setExceptionBreakpoints", fmt::format(R"({{"filters":[{}]}})", list), d)) {
        return;
    }
    exceptionsSet = count != 0;
    std::string out;
    for (const rapidjson::Value& f : d["filters"].GetArray()) {
        const bool verified = f["verified"].GetBool();
        out += fmt::format(R"({}{{"verified":{}{}}})", out.empty() ? "" : ",", verified,
                           verified ? "" : fmt::format(R"(,"message":{})", quoted(stringOf(f, "reason"))));
    }
    respond(request, fmt::format(R"({{"breakpoints":[{}]}})", out));
}

// What the task halted on an exception breakpoint ran into.
void DapAdapter::State::exceptionInfo(const rapidjson::Value& request, const rapidjson::Value& args) {
    rapidjson::Document d;
    if (!call(request, "debug.stackTrace", fmt::format(R"({{"thread":{}}})", intOf(args, "threadId")), d)) {
        return;
    }
    const rapidjson::Value* e = memberOf(d, "exception");
    if (e == nullptr) {
        fail(request, "exceptionInfo: the task is not halted on an exception");
        return;
    }
    respond(request,
            fmt::format(R"({{"exceptionId":{},"description":{},"breakMode":"always","details":{{"typeName":{}}}}})",
                        quoted(stringOf(*e, "filter")), quoted(stringOf(*e, "text")), quoted(stringOf(*e, "trap"))));
}

// Flow control, two requests of takt's own (a client sends them as custom requests; the VS Code
// extension draws the values beside the lines): flowControl names the POU (`pou`, or the `source`
// and `line` of one of its statements, optionally one `instance`) or, with neither, ends it;
// flowValues answers the lines its task ran the last time, with what each read and wrote.
void DapAdapter::State::flowControl(const rapidjson::Value& request, const rapidjson::Value& args) {
    std::string params;
    const rapidjson::Value* source = memberOf(args, "source");
    const std::string path = source != nullptr ? stringOf(*source, "path") : std::string();
    if (!path.empty()) {
        params = fmt::format(R"("file":{},"line":{})", quoted(path), intOf(args, "line", 1));
    } else if (const std::string pou = stringOf(args, "pou"); !pou.empty()) {
        params = fmt::format(R"("pou":{})", quoted(pou));
    }
    if (const std::string instance = stringOf(args, "instance"); !instance.empty()) {
        params += fmt::format(R"({}"instance":{})", params.empty() ? "" : ",", quoted(instance));
    }
    rapidjson::Document d;
    if (!call(request, "debug.setFlow", "{" + params + "}", d)) {
        return;
    }
    if (!d["pou"].IsString()) {
        respond(request, R"({"pou":null})");
        return;
    }
    const std::string file = stringOf(d, "file");
    if (!path.empty()) {
        paths[file] = path;
    }
    respond(request,
            fmt::format(R"({{"pou":{},"instance":{},"source":{{"path":{}}},"lines":{}}})", quoted(stringOf(d, "pou")),
                        rpc::toJson(d["instance"]), quoted(clientPath(file)), rpc::toJson(d["lines"])));
}

void DapAdapter::State::flowValues(const rapidjson::Value& request) {
    rapidjson::Document d;
    if (!call(request, "debug.flowValues", "", d)) {
        return;
    }
    std::string lines;
    for (const rapidjson::Value& l : d["lines"].GetArray()) {
        std::string values;
        for (const rapidjson::Value& v : l["values"].GetArray()) {
            values += fmt::format(R"({}{{"name":{},"access":{},"type":{},"value":{}}})", values.empty() ? "" : ",",
                                  quoted(stringOf(v, "name")), quoted(stringOf(v, "access")),
                                  quoted(stringOf(v, "type")), quoted(formatIecLiteral(v["value"])));
        }
        lines +=
            fmt::format(R"({}{{"source":{{"path":{}}},"line":{},"count":{},"values":[{}]}})", lines.empty() ? "" : ",",
                        quoted(clientPath(stringOf(l, "file"))), intOf(l, "line"), intOf(l, "count"), values);
    }
    respond(request, fmt::format(R"({{"pou":{},"task":{},"run":{},"lines":[{}]}})", quoted(stringOf(d, "pou")),
                                 rpc::toJson(d["task"]), intOf(d, "run"), lines));
}

void DapAdapter::State::stackTrace(const rapidjson::Value& request, const rapidjson::Value& args) {
    const std::int64_t thread = intOf(args, "threadId");
    rapidjson::Document d;
    if (!call(request, "debug.stackTrace", fmt::format(R"({{"thread":{}}})", thread), d)) {
        return;
    }
    std::string out;
    const rapidjson::Value& frames = d["frames"];
    for (rapidjson::SizeType i = 0; i < frames.Size(); ++i) {
        const rapidjson::Value& f = frames[i];
        const std::string file = stringOf(f, "file");
        const std::string instance = stringOf(f, "instance");
        const std::string name =
            instance.empty() ? stringOf(f, "pou") : fmt::format("{} ({})", stringOf(f, "pou"), instance);
        out += fmt::format(R"({}{{"id":{},"name":{},"source":{{"name":{},"path":{}}},"line":{},"column":{}}})",
                           out.empty() ? "" : ",", thread * kFramesPerThread + i + 1, quoted(name),
                           quoted(file.substr(file.rfind('/') + 1)), quoted(clientPath(file)), intOf(f, "line"),
                           std::max<std::int64_t>(1, intOf(f, "column")));
    }
    respond(request, fmt::format(R"({{"stackFrames":[{}],"totalFrames":{}}})", out, frames.Size()));
}

void DapAdapter::State::scopes(const rapidjson::Value& request, const rapidjson::Value& args) {
    const std::int64_t id = intOf(args, "frameId");
    if (id <= 0) {
        fail(request, "scopes: no such frame");
        return;
    }
    const auto thread = static_cast<std::uint32_t>((id - 1) / kFramesPerThread);
    const auto frame = static_cast<std::uint32_t>((id - 1) % kFramesPerThread);
    std::string out;
    for (const char* scope : {"locals", "inputs", "outputs", "globals"}) {
        const std::int64_t ref = newRef(VarRef{thread, frame, scope, {}});
        std::string name = scope;
        name[0] = static_cast<char>(name[0] - 'a' + 'A');
        out += fmt::format(R"({}{{"name":{},"variablesReference":{},"expensive":{}}})", out.empty() ? "" : ",",
                           quoted(name), ref, std::string_view(scope) == "globals");
    }
    respond(request, fmt::format(R"({{"scopes":[{}]}})", out));
}

void DapAdapter::State::variables(const rapidjson::Value& request, const rapidjson::Value& args) {
    const std::int64_t ref = intOf(args, "variablesReference");
    if (ref <= 0 || static_cast<std::size_t>(ref) > refs.size()) {
        fail(request, "variables: the reference is no longer valid (the task ran on)");
        return;
    }
    const VarRef r = refs[static_cast<std::size_t>(ref) - 1];
    const std::string params =
        !r.scope.empty() && r.scope != "globals"
            ? fmt::format(R"({{"thread":{},"frame":{},"scope":{}}})", r.thread, r.frame, quoted(r.scope))
        : r.scope == "globals" ? std::string(R"({"scope":"globals"})")
                               : pathParams(r) + "}";
    rapidjson::Document d;
    if (!call(request, "debug.variables", params, d)) {
        return;
    }
    std::string out;
    for (const rapidjson::Value& v : d["variables"].GetArray()) {
        const std::string path = stringOf(v, "path");
        const std::string name = stringOf(v, "name");
        const VarRef named{r.thread, r.frame, {}, path, memberOf(v, "inFrame") != nullptr && v["inFrame"].GetBool()};
        listed[{ref, name}] = named;
        const std::int64_t child = v["expandable"].GetBool() ? newRef(named) : 0;
        out += fmt::format(R"({}{{"name":{},"value":{},"type":{},"evaluateName":{},"variablesReference":{}}})",
                           out.empty() ? "" : ",", quoted(name), quoted(stringOf(v, "value")),
                           quoted(stringOf(v, "type")), quoted(path), child);
    }
    respond(request, fmt::format(R"({{"variables":[{}]}})", out));
}

// A value written as var.write writes it (its type checks, IEC literal text) at the next cycle
// boundary of the base cycle, which keeps running while a task is halted (a halted base cycle
// applies it within a base period); a frame's own variable (a FUNCTION's local) through
// debug.setVariable in the scope of that frame.
void DapAdapter::State::setVariable(const rapidjson::Value& request, const rapidjson::Value& args) {
    const std::int64_t ref = intOf(args, "variablesReference");
    const auto it = listed.find({ref, stringOf(args, "name")});
    if (it == listed.end()) {
        fail(request, "setVariable: list the variables of this scope first");
        return;
    }
    const VarRef& target = it->second;
    const std::string value = quoted(stringOf(args, "value"));
    rapidjson::Document d;
    if (!(target.inFrame
              ? call(request, "debug.setVariable", fmt::format(R"({},"value":{}}})", pathParams(target), value), d)
              : call(request, "var.write", fmt::format(R"({{"name":{},"value":{}}})", quoted(target.path), value),
                     d))) {
        return;
    }
    respond(request, fmt::format(R"({{"value":{}}})", quoted(formatIecLiteral(d["value"]))));
}

// Watch, hover and the debug console: an ST expression in the scope of the frame (the globals'
// without one), evaluated by the runtime (debug.evaluate); a STRUCT or FB instance expands.
void DapAdapter::State::evaluate(const rapidjson::Value& request, const rapidjson::Value& args) {
    std::string params = fmt::format(R"({{"expression":{})", quoted(stringOf(args, "expression")));
    VarRef at;
    if (const std::int64_t id = intOf(args, "frameId"); id > 0) {
        at.thread = static_cast<std::uint32_t>((id - 1) / kFramesPerThread);
        at.frame = static_cast<std::uint32_t>((id - 1) % kFramesPerThread);
        params += fmt::format(R"(,"thread":{},"frame":{})", at.thread, at.frame);
    }
    rapidjson::Document d;
    if (!call(request, "debug.evaluate", params + "}", d)) {
        return;
    }
    at.path = stringOf(d, "path");
    at.inFrame = memberOf(d, "inFrame") != nullptr && d["inFrame"].GetBool();
    const bool expand = memberOf(d, "expandable") != nullptr && d["expandable"].GetBool() && !at.path.empty();
    respond(request, fmt::format(R"({{"result":{},"type":{},"variablesReference":{}}})", quoted(stringOf(d, "value")),
                                 quoted(stringOf(d, "type")), expand ? newRef(at) : 0));
}

void DapAdapter::State::run(const rapidjson::Value& request, const rapidjson::Value& args, std::string_view method) {
    rapidjson::Document d;
    if (!call(request, method, fmt::format(R"({{"thread":{}}})", intOf(args, "threadId")), d)) {
        return;
    }
    if (method != "debug.pause") {
        refs.clear(); // what they named may change now
        listed.clear();
    }
    respond(request, method == "debug.continue" ? R"({"allThreadsContinued":false})" : "{}");
}

// A line from the runtime: a debug_stopped event becomes `stopped`, the runtime stopping ends the
// session.
void DapAdapter::State::runtimeLine(const std::string& line) {
    rapidjson::Document d;
    d.Parse(line.c_str());
    const rapidjson::Value* params = d.HasParseError() ? nullptr : memberOf(d, "params");
    if (params == nullptr || stringOf(d, "method") != "event") {
        return;
    }
    const std::string type = stringOf(*params, "type");
    if (type == "debug_stopped") {
        refs.clear();
        listed.clear();
        // A breakpoint whose condition faulted says so (the client shows `text` beside the frame),
        // as does a fault an exception breakpoint caught.
        const std::string fault = stringOf(*params, "fault");
        std::string reason = stringOf(*params, "reason");
        // Any halt of a thread ends its entry stop: a later pause of it is the user's.
        if (entryStops.erase(intOf(*params, "thread")) > 0 && reason == "pause") {
            reason = "entry";
        }
        if (reason == "breakpoint" && functionStops.contains({stringOf(*params, "file"), intOf(*params, "line")})) {
            reason = "function breakpoint";
        }
        event("stopped", fmt::format(R"({{"reason":{},"threadId":{},"allThreadsStopped":false,"description":{}{}}})",
                                     quoted(reason), intOf(*params, "thread"),
                                     quoted(fmt::format("{} in {} at line {}{}", stringOf(*params, "task"),
                                                        stringOf(*params, "pou"), intOf(*params, "line"),
                                                        fault.empty() ? "" : ": " + fault)),
                                     fault.empty() ? "" : fmt::format(R"(,"text":{})", quoted(fault))));
    } else if (type == "debug_output") {
        // A logpoint's message (or a note of messages dropped), placed at its line when it has one.
        const std::string file = stringOf(*params, "file");
        const auto editor = paths.find(file);
        const std::string source =
            file.empty() ? std::string()
                         : fmt::format(R"(,"source":{{"path":{}}},"line":{})",
                                       quoted(editor != paths.end() ? editor->second : file), intOf(*params, "line"));
        event("output", fmt::format(R"({{"category":"console","output":{}{}}})",
                                    quoted(stringOf(*params, "output") + "\n"), source));
    } else if (type == "runtime_stopped") {
        event("output", R"({"category":"console","output":"the runtime stopped\n"})");
    }
}

DapAdapter::DapAdapter(std::string runExecutable) : state_(std::make_unique<State>()) {
    state_->runExecutable = std::move(runExecutable);
}
DapAdapter::~DapAdapter() = default;

bool DapAdapter::finished() const {
    return state_->finished;
}

std::vector<std::string> DapAdapter::handleMessage(std::string_view body) {
    State& s = *state_;
    rpc::ParsedLine parsed;
    rpc::parseLine(body, 64, parsed);
    const rapidjson::Value& request = parsed.doc;
    if (parsed.status != rpc::ParsedLine::Status::Ok || !request.IsObject() || stringOf(request, "type") != "request") {
        s.event("output", fmt::format(R"({{"category":"stderr","output":{}}})",
                                      quoted("takt dap: not a request: " + parsed.error + "\n")));
        return std::exchange(s.outbox, {});
    }
    static const rapidjson::Value kNoArgs(rapidjson::kObjectType);
    const rapidjson::Value* a = memberOf(request, "arguments");
    const rapidjson::Value& args = a != nullptr && a->IsObject() ? *a : kNoArgs;
    const std::string command = stringOf(request, "command");
    rapidjson::Document d;
    if (command == "initialize") {
        std::string filters;
        for (const vm::ExceptionFilter& f : vm::kExceptionFilters) {
            filters += fmt::format(R"({}{{"filter":{},"label":{},"default":false}})", filters.empty() ? "" : ",",
                                   quoted(std::string(f.id)), quoted(std::string(f.label)));
        }
        s.respond(
            request,
            fmt::format(
                R"({{"supportsConfigurationDoneRequest":true,"supportsSetVariable":true,)"
                R"("supportsEvaluateForHovers":true,"supportsTerminateRequest":true,)"
                R"("supportsConditionalBreakpoints":true,"supportsHitConditionalBreakpoints":true,)"
                R"("supportsLogPoints":true,"supportsFunctionBreakpoints":true,"supportsExceptionInfoRequest":true,)"
                R"("exceptionBreakpointFilters":[{}]}})",
                filters));
    } else if (command == "attach") {
        s.attach(request, args);
    } else if (command == "launch") {
        s.launch(request, args);
    } else if (command == "setBreakpoints") {
        s.setBreakpoints(request, args);
    } else if (command == "setFunctionBreakpoints") {
        s.setFunctionBreakpoints(request, args);
    } else if (command == "setExceptionBreakpoints") {
        s.setExceptionBreakpoints(request, args);
    } else if (command == "exceptionInfo") {
        s.exceptionInfo(request, args);
    } else if (command == "configurationDone") {
        s.configurationDone(request);
    } else if (command == "threads") {
        if (s.call(request, "debug.threads", "", d)) {
            std::string out;
            for (const rapidjson::Value& t : d["threads"].GetArray()) {
                out += fmt::format(R"({}{{"id":{},"name":{}}})", out.empty() ? "" : ",", t["id"].GetInt64(),
                                   quoted(stringOf(t, "name")));
            }
            s.respond(request, fmt::format(R"({{"threads":[{}]}})", out));
        }
    } else if (command == "stackTrace") {
        s.stackTrace(request, args);
    } else if (command == "scopes") {
        s.scopes(request, args);
    } else if (command == "variables") {
        s.variables(request, args);
    } else if (command == "setVariable") {
        s.setVariable(request, args);
    } else if (command == "evaluate") {
        s.evaluate(request, args);
    } else if (command == "continue") {
        s.run(request, args, "debug.continue");
    } else if (command == "next") {
        s.run(request, args, "debug.next");
    } else if (command == "stepIn") {
        s.run(request, args, "debug.stepIn");
    } else if (command == "stepOut") {
        s.run(request, args, "debug.stepOut");
    } else if (command == "pause") {
        s.run(request, args, "debug.pause");
    } else if (command == "flowControl") {
        s.flowControl(request, args);
    } else if (command == "flowValues") {
        s.flowValues(request);
    } else if (command == "disconnect" || command == "terminate") {
        // A launched runtime ends with the session, whatever terminateDebuggee says: nothing the
        // adapter started outlives it. An attached one runs on, its tasks resumed. A refused
        // terminate leaves an attached session as it was.
        if (command == "terminate" && s.launched == nullptr) {
            s.fail(request, "terminate: no launched runtime (disconnect detaches from an attached one)");
        } else {
            if (s.client != nullptr) {
                (void)s.client->call("debug.detach", "");
                s.client.reset();
            }
            s.respond(request, "{}");
            if (s.launched != nullptr) {
                s.endLaunched(command == "terminate");
            }
            s.finished = command == "disconnect";
        }
    } else {
        s.fail(request, fmt::format("takt dap does not support '{}'", command));
    }
    if (s.client != nullptr) {
        for (const std::string& line : s.client->takeNotifications()) {
            s.runtimeLine(line);
        }
    }
    return std::exchange(s.outbox, {});
}

std::vector<std::string> DapAdapter::pollRuntime() {
    State& s = *state_;
    if (s.launched != nullptr) {
        s.forwardOutput();
        if (s.launched->exitCode()) {
            s.endLaunched(true); // the client ends the session with disconnect
            return std::exchange(s.outbox, {});
        }
    }
    if (s.client == nullptr) {
        return std::exchange(s.outbox, {});
    }
    for (const std::string& line : s.client->takeNotifications()) {
        s.runtimeLine(line);
    }
    std::string line;
    while (s.client->readLine(line, 0)) {
        s.runtimeLine(line);
    }
    if (s.client->closed()) {
        s.client.reset();
        if (s.launched != nullptr) {
            s.endLaunched(true); // it is stopping: its exit code comes within the grace period
        } else {
            s.event("terminated", "{}");
            s.finished = true;
        }
    } else if (std::chrono::steady_clock::now() - s.lastCall > std::chrono::milliseconds(kKeepAliveMs)) {
        // The endpoint closes a connection idle for 30 s, and with it this debugging session.
        (void)s.client->call("agent.ping", "");
        s.lastCall = std::chrono::steady_clock::now();
        for (const std::string& l : s.client->takeNotifications()) {
            s.runtimeLine(l);
        }
    }
    return std::exchange(s.outbox, {});
}

int DapAdapter::serve(int inFd, int outFd, const volatile std::sig_atomic_t* stop) {
    state_->stopFlag = stop;
    rpc::HeaderFramer framer;
    std::vector<char> buf(1 << 16);
    const auto send = [&](const std::vector<std::string>& bodies) {
        for (const std::string& b : bodies) {
            if (!common::writeAll(outFd, dapFrame(b))) {
                return false;
            }
        }
        return true;
    };
    while (!finished()) {
        // The client's requests, the runtime's lines (a halt is told when it comes) and a launched
        // runtime's output, waited for together. The wait ends every 100 ms while a runtime is
        // there (its exit, the endpoint's keep-alive) and every 250 ms otherwise, so a signal
        // that came just before it ends the session soon.
        std::array<pollfd, 4> fds{};
        nfds_t waited = 0;
        fds[waited++] = pollfd{inFd, POLLIN, 0};
        if (state_->client != nullptr && state_->client->pollFd() >= 0) {
            fds[waited++] = pollfd{state_->client->pollFd(), POLLIN, 0};
        }
        if (state_->launched != nullptr) {
            for (const int fd : state_->launched->outputFds()) {
                if (fd >= 0) {
                    fds[waited++] = pollfd{fd, POLLIN, 0};
                }
            }
        }
        const bool live = state_->client != nullptr || state_->launched != nullptr;
        const int ready = ::poll(fds.data(), waited, live ? 100 : 250);
        if (stop != nullptr && *stop != 0) {
            return 0; // SIGTERM, SIGINT or SIGHUP: the launched runtime is stopped on the way out
        }
        if (ready < 0 && errno != EINTR) {
            return 1;
        }
        if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            const ssize_t n = ::read(inFd, buf.data(), buf.size());
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                return 0; // the client went away: closing the connection resumes its tasks
            }
            std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
            while (!chunk.empty()) {
                using Status = rpc::HeaderFramer::Status;
                const Status status = framer.next(chunk);
                if (status == Status::Message) {
                    if (!send(handleMessage(framer.body()))) {
                        return 1;
                    }
                } else if (status == Status::BadHeader || status == Status::TooLarge) {
                    std::fprintf(stderr, "takt dap: %s\n", framer.error().c_str());
                }
                if (finished()) {
                    return 0;
                }
            }
        }
        if (!send(pollRuntime())) {
            return 1;
        }
    }
    return 0;
}

} // namespace takt::agent
