// The control endpoint's methods on the live runtime: dispatch, status and statistics, run
// control, and the completion of commands the scan loop applied (control_runtime.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

#include <fmt/format.h>
#include <unistd.h>

#include "control/control_runtime_internal.h"

namespace takt::agent {

namespace ctl {

ControlAnswer badParam(std::string_view member, const std::string& message) {
    const rpc::Error e = rpc::invalidParam(member, std::string(member) + ": " + message);
    return ControlAnswer::error(e.code, e.message, e.data);
}

const rapidjson::Value* member(const rapidjson::Value& params, const char* name) {
    if (!params.IsObject()) {
        return nullptr;
    }
    const auto it = params.FindMember(name);
    return it == params.MemberEnd() ? nullptr : &it->value;
}

std::string text(const rapidjson::Value& params, const char* name) {
    const rapidjson::Value* v = member(params, name);
    return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : std::string();
}

std::string jsonText(const rapidjson::Value& v) {
    return rpc::toJson(v);
}

std::string quoted(std::string_view s) {
    return rpc::quoted(s);
}

} // namespace ctl

namespace {

std::int64_t wallMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

const char* stateName(engine::ScanState s) {
    switch (s) {
    case engine::ScanState::Running: return "running";
    case engine::ScanState::Paused: return "paused";
    case engine::ScanState::Stopped: return "stopped";
    case engine::ScanState::Halted: return "faulted";
    }
    return "stopped";
}

const char* stateName(const engine::ScanLoop& loop, engine::ScanState s) {
    if (!loop.running()) {
        return loop.snapshot().cycles == 0 ? "booting" : "stopped";
    }
    return stateName(s);
}

ControlAnswer runStateAnswer(engine::ScanState state, std::uint64_t cycle) {
    return ControlAnswer::result(fmt::format("{{\"state\":\"{}\",\"cycle\":{}}}", stateName(state), cycle));
}

// min/avg/p50/p99/p99.9/max in microseconds, for execution time and start lateness alike.
std::string histogramJson(const engine::HistogramSummary& h) {
    const auto us = [](std::int64_t ns) { return static_cast<double>(ns) / 1000.0; };
    return fmt::format("{{\"min_us\":{:.3f},\"avg_us\":{:.3f},\"p50_us\":{:.3f},\"p99_us\":{:.3f},"
                       "\"p999_us\":{:.3f},\"max_us\":{:.3f}}}",
                       us(h.min), us(h.mean), us(h.p50), us(h.p99), us(h.p999), us(h.max));
}

std::uint64_t residentBytes() {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) {
        return 0;
    }
    unsigned long size = 0;
    unsigned long resident = 0;
    const int n = std::fscanf(f, "%lu %lu", &size, &resident);
    std::fclose(f);
    return n == 2 ? static_cast<std::uint64_t>(resident) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

} // namespace

RuntimeControl::RuntimeControl(engine::ScanLoop& loop, engine::Engine& engine, RuntimeControlOptions options)
    : loop_(loop), engine_(engine), options_(std::move(options)), startedNs_(engine::monotonicNs()),
      module_(engine.program().modulePtr()), hash_(engine.program().hash()), previous_(options_.rollbackProgram),
      previousHash_(options_.rollbackHash), stops_(&engine.program().stops()) {}

RuntimeControl::~RuntimeControl() {
    releaseDebugger(); // no task stays halted without a session to resume it
    detachTraces();    // the scan loop may outlive this
}

namespace {

#define TAKT_NONE R"({"type":"object","properties":{},"additionalProperties":false})"
#define TAKT_TRACE_ID                                                                                                  \
    R"({"type":"object","required":["id"],"properties":{"id":{"type":"integer","minimum":1,"maximum":4294967295}},)"   \
    R"("additionalProperties":false})"
#define TAKT_TRACE_ANSWER R"({"type":"object","required":["id","task","variables","state","samples_taken"]})"
#define TAKT_VALUE                                                                                                     \
    R"("value":{"type":["object","string"],"description":"typed value, or IEC literal text such as T#330ms"})"
#define TAKT_NAME R"("name":{"type":"string","description":"variable path: P1.x, fb.Q, arr[2], s.f"})"
#define TAKT_ADDRESS R"("address":{"type":"string","description":"direct address such as %QX0.1"})"
// {target, value} and {target} params of the write, force and unforce methods; the params of a read.
#define TAKT_SET(key, member)                                                                                          \
    R"({"type":"object","required":[")" key R"(","value"],"properties":{)" member "," TAKT_VALUE                       \
    R"(},"additionalProperties":false})"
#define TAKT_ONE(key, member)                                                                                          \
    R"({"type":"object","required":[")" key R"("],"properties":{)" member R"(},"additionalProperties":false})"
#define TAKT_READ(plural, member)                                                                                      \
    R"({"type":"object","properties":{")" plural R"(":{"type":"array","items":{"type":"string"}},)" member             \
    R"(,"format":{"enum":["typed","iec"],"description":"iec: each value as IEC literal text"}},)"                      \
    R"("additionalProperties":false})"
#define TAKT_RUN_STATE                                                                                                 \
    R"({"type":"object","required":["state","cycle"],"properties":{"state":{"type":"string"},)"                        \
    R"("cycle":{"type":"integer"}}})"
#define TAKT_VALUES                                                                                                    \
    R"({"type":"object","required":["cycle","values"],"properties":{"cycle":{"type":"integer"},)"                      \
    R"("values":{"type":"object"}}})"
#define TAKT_FORCED                                                                                                    \
    R"({"type":"object","required":["name","forced","count","cycle"],"properties":{"name":{"type":"string"},)"         \
    R"("forced":{"type":"boolean"},"count":{"type":"integer"},"cycle":{"type":"integer"}}})"

#define TAKT_THREAD                                                                                                    \
    R"({"type":"object","required":["thread"],"properties":{"thread":{"type":"integer","minimum":1,)"                  \
    R"("maximum":4294967295}},"additionalProperties":false})"
#define TAKT_THREAD_ANSWER R"({"type":"object","required":["thread","task"]})"

RuntimeControl& self(ControlTarget& t) {
    return static_cast<RuntimeControl&>(t);
}

} // namespace

std::span<const ControlMethod> RuntimeControl::methodTable() {
    using V = const rapidjson::Value&;
    using R = ControlReplyFn;
    using T = ControlTarget&;
    using M = std::string_view;
    const auto run = [](T t, M m, V p, R r) { self(t).runControl(std::string(m), p, r); };
    const auto force = [](T t, M m, V p, R r) { self(t).force(std::string(m), p, r); };
    const auto step = [](T t, M m, V p, R r) { self(t).debugRun(std::string(m), p, r); };
    static const ControlMethod kTable[] = {
        {"runtime.status",
         "State, fault, program hash, uptime, cycles, driver health, execution tier and the tasks halted in the "
         "debugger",
         TAKT_NONE,
         R"({"type":"object","required":["state","fault","program_hash","uptime_ms","cycles","drivers","execution",)"
         R"("halted"],"properties":{"state":{"enum":["booting","running","paused","stopped","faulted"]},)"
         R"("fault":{"type":["object","null"]},"program_hash":{"type":"string"},"uptime_ms":{"type":"integer"},)"
         R"("cycles":{"type":"integer"},"drivers":{"type":"array"},"execution":{"type":"string"},)"
         R"("halted":{"type":"array"}}})",
         Role::Viewer, [](T t, M, V, R r) { self(t).status(r); }},
        {"runtime.stats", "Cycle, execution-time and jitter figures per task and overall", TAKT_NONE,
         R"({"type":"object","required":["cycles","exec","lateness","overruns","tasks","rss_bytes","queue_depth"]})",
         Role::Viewer, [](T t, M, V, R r) { self(t).stats(r); }},
        {"runtime.histogram",
         "Execution time and lateness of all scans as histograms: [low_us, high_us, count] per bucket", TAKT_NONE,
         R"({"type":"object","required":["exec","lateness"],"properties":{"exec":{"type":"array"},)"
         R"("lateness":{"type":"array"}}})",
         Role::Viewer, [](T t, M, V, R r) { self(t).histogram(r); }},
        {"runtime.pause", "Pause cycling at the next cycle boundary", TAKT_NONE, TAKT_RUN_STATE, Role::Operator, run},
        {"runtime.resume", "Resume cycling", TAKT_NONE, TAKT_RUN_STATE, Role::Operator, run},
        {"runtime.step", "Run `count` cycles (default 1) while paused; answered once they have run",
         R"({"type":"object","properties":{"count":{"type":"integer","minimum":1,"maximum":1000000}},)"
         R"("additionalProperties":false})",
         TAKT_RUN_STATE, Role::Operator, run},
        {"runtime.stop", "Stop cycling and apply the safe state", TAKT_NONE, TAKT_RUN_STATE, Role::Operator, run},
        {"runtime.start", "Start cycling again after a stop", TAKT_NONE, TAKT_RUN_STATE, Role::Operator, run},
        {"runtime.restart", "Warm (RETAIN kept, the default) or cold restart",
         R"({"type":"object","properties":{"mode":{"enum":["warm","cold"]}},"additionalProperties":false})",
         TAKT_RUN_STATE, Role::Operator, run},
        {"var.list",
         "Browse the program's variables: path, type, address, retain, forced; `pattern` filters "
         "(a glob with * and ?, else a substring), `offset`/`limit` page",
         R"({"type":"object","properties":{"pattern":{"type":"string"},)"
         R"("offset":{"type":"integer","minimum":0,"maximum":4294967295},)"
         R"("limit":{"type":"integer","minimum":1,"maximum":1000}},"additionalProperties":false})",
         R"({"type":"object","required":["total","offset","variables"],"properties":{"total":{"type":"integer"},)"
         R"("offset":{"type":"integer"},"variables":{"type":"array","items":{"type":"object","required":)"
         R"(["path","type","address","retain","constant","forced"]}}}})",
         Role::Viewer, [](T t, M, V p, R r) { self(t).varList(p, r); }},
        {"var.read", "Read variables by path (`names`, or one `name`) at one cycle boundary",
         TAKT_READ("names", TAKT_NAME), TAKT_VALUES, Role::Viewer, [](T t, M, V p, R r) { self(t).varRead(p, r); }},
        {"var.write", "Write a variable at the next cycle boundary", TAKT_SET("name", TAKT_NAME),
         R"({"type":"object","required":["name","cycle","value"]})", Role::Engineer,
         [](T t, M, V p, R r) { self(t).varWrite(p, r); }},
        {"var.writeMany",
         "Write several variables (`items`, 1 to 1024) at one cycle boundary: each is checked as var.write checks "
         "it, a refused one is answered with its error and not written, the others are written together",
         R"({"type":"object","required":["items"],"properties":{"items":{"type":"array","items":)" TAKT_SET(
             "name", TAKT_NAME) R"(}},"additionalProperties":false})",
         R"({"type":"object","required":["cycle","results"],"properties":{"cycle":{"type":"integer"},)"
         R"("results":{"type":"array","items":{"type":"object","required":["name"]}}}})",
         Role::Engineer, [](T t, M, V p, R r) { self(t).varWriteMany(p, r); }},
        {"var.force", "Force a variable to a value every cycle until unforced", TAKT_SET("name", TAKT_NAME),
         TAKT_FORCED, Role::Engineer, force},
        {"var.unforce", "Release a forced variable", TAKT_ONE("name", TAKT_NAME), TAKT_FORCED, Role::Engineer, force},
        {"var.forced", "The forced variables and addresses", TAKT_NONE,
         R"({"type":"object","required":["forced"],"properties":{"forced":{"type":"array"}}})", Role::Viewer,
         [](T t, M, V, R r) { self(t).listForced(r); }},
        {"io.read", "Read process-image addresses (`addresses`, or one `address`) at one cycle boundary",
         TAKT_READ("addresses", TAKT_ADDRESS), TAKT_VALUES, Role::Viewer,
         [](T t, M, V p, R r) { self(t).ioRead(p, r); }},
        {"io.write", "Write a process-image address at the next cycle boundary", TAKT_SET("address", TAKT_ADDRESS),
         R"({"type":"object","required":["address","cycle","value"]})", Role::Engineer,
         [](T t, M, V p, R r) { self(t).ioWrite(p, r); }},
        {"io.force", "Force a process-image address every cycle until unforced", TAKT_SET("address", TAKT_ADDRESS),
         TAKT_FORCED, Role::Engineer, force},
        {"io.unforce", "Release a forced address", TAKT_ONE("address", TAKT_ADDRESS), TAKT_FORCED, Role::Engineer,
         force},
        {"bytecode.reload", "Online change to a new program.stbc at a cycle boundary (dry_run: its report only)",
         R"({"type":"object","required":["bytes"],"properties":{"bytes":{"type":"string",)"
         R"("description":"base64 of program.stbc"},"dry_run":{"type":"boolean"},"expected_hash":{"type":"string"},)"
         R"("idempotency_key":{"type":"string"}},"additionalProperties":false})",
         R"({"type":"object","required":["old_hash","new_hash","dry_run","kept","converted","reinitialised","dropped",)"
         R"("added","loses_state","variables"]})",
         Role::Engineer, [](T t, M, V p, R r) { self(t).reload(p, r); }},
        {"runtime.rollback",
         "Online change back to the program the last online change replaced (dry_run: its report only)",
         R"({"type":"object","properties":{"dry_run":{"type":"boolean"},"expected_hash":{"type":"string"},)"
         R"("idempotency_key":{"type":"string"}},"additionalProperties":false})",
         R"({"type":"object","required":["old_hash","new_hash","dry_run","kept","converted","reinitialised","dropped",)"
         R"("added","loses_state","variables"]})",
         Role::Engineer, [](T t, M, V p, R r) { self(t).rollback(p, r); }},
        {"debug.setBreakpoints",
         "Set the line breakpoints of one source file (replacing its earlier ones), optionally with hit counts "
         "(`5`, `>= 5`, `% 10`), an ST condition in the line's POU scope, or a log message with {expressions} "
         "that logs as debug_output events instead of halting; each line answers whether it halts and at which "
         "line, or why not (a bad condition: its code and column)",
         R"({"type":"object","required":["file"],"properties":{"file":{"type":"string","minLength":1},)"
         R"("lines":{"type":"array","maxItems":1000,"items":{"type":"integer","minimum":1,"maximum":4294967295}},)"
         R"("breakpoints":{"type":"array","maxItems":1000,"items":{"type":"object","required":["line"],)"
         R"("properties":{"line":{"type":"integer","minimum":1,"maximum":4294967295},)"
         R"("hitCondition":{"type":"string","maxLength":100},"condition":{"type":"string","maxLength":4096},)"
         R"("logMessage":{"type":"string","maxLength":4096}},"additionalProperties":false}}},)"
         R"("additionalProperties":false})",
         R"({"type":"object","required":["file","breakpoints"],"properties":{"file":{"type":"string"},)"
         R"("breakpoints":{"type":"array","items":{"type":"object","required":["line","verified"]}}}})",
         Role::Engineer, [](T t, M, V p, R r) { self(t).debugSetBreakpoints(p, r); }},
        {"debug.setFunctionBreakpoints",
         "Set the function breakpoints (replacing the earlier ones): halt at the first statement of the POU "
         "named (a program, FB, function, method or action as FB.Name), optionally with a hit count or an ST "
         "condition in its scope; each answers the POU, file and line, or why not",
         R"({"type":"object","required":["breakpoints"],"properties":{"breakpoints":{"type":"array",)"
         R"("maxItems":1000,"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string",)"
         R"("minLength":1,"maxLength":256},"hitCondition":{"type":"string","maxLength":100},)"
         R"("condition":{"type":"string","maxLength":4096}},"additionalProperties":false}}},)"
         R"("additionalProperties":false})",
         R"({"type":"object","required":["breakpoints"],"properties":{"breakpoints":{"type":"array",)"
         R"("items":{"type":"object","required":["name","verified"]}}}})",
         Role::Engineer, [](T t, M, V p, R r) { self(t).debugSetFunctionBreakpoints(p, r); }},
        {"debug.setExceptionBreakpoints",
         "Set the run-time faults that halt the task running into them at the faulting statement, before the "
         "fault policy acts, by filter ids such as divide_by_zero, bounds or all (docs/debugging.md lists them); [] "
         "removes them",
         R"({"type":"object","required":["filters"],"properties":{"filters":{"type":"array","maxItems":32,)"
         R"("items":{"type":"string","minLength":1,"maxLength":64}}},"additionalProperties":false})",
         R"({"type":"object","required":["filters"],"properties":{"filters":{"type":"array",)"
         R"("items":{"type":"object","required":["filter","verified"]}}}})",
         Role::Engineer, [](T t, M, V p, R r) { self(t).debugSetExceptionBreakpoints(p, r); }},
        {"debug.setFlow",
         "Flow control: record, every time its task runs it, what each statement of one POU read and wrote "
         "(named by pou, or by the file and line of one of its statements; instance: one instance only); "
         "without pou or file it ends; answers the POU and its lines",
         R"({"type":"object","properties":{"pou":{"type":"string","minLength":1,"maxLength":256},)"
         R"("file":{"type":"string","minLength":1,"maxLength":4096},)"
         R"("line":{"type":"integer","minimum":1,"maximum":4294967295},)"
         R"("instance":{"type":"string","minLength":1,"maxLength":1024}},"additionalProperties":false})",
         R"({"type":"object","required":["pou"]})", Role::Engineer,
         [](T t, M, V p, R r) { self(t).debugSetFlow(p, r); }},
        {"debug.flowValues",
         "Flow control's last record: the lines of the POU its task ran the last time it ran it, each with how "
         "often it ran and the values its statements read and wrote (run: records so far, 0 before the first)",
         TAKT_NONE,
         R"({"type":"object","required":["pou","task","run","lines"],"properties":{"lines":{"type":"array",)"
         R"("items":{"type":"object","required":["file","line","count","values"]}}}})",
         Role::Viewer, [](T t, M, V, R r) { self(t).debugFlowValues(r); }},
        {"debug.continue", "Run a halted task on until a breakpoint", TAKT_THREAD, TAKT_THREAD_ANSWER, Role::Engineer,
         step},
        {"debug.next", "Step a halted task over to its next statement", TAKT_THREAD, TAKT_THREAD_ANSWER, Role::Engineer,
         step},
        {"debug.stepIn", "Step a halted task into what its statement calls", TAKT_THREAD, TAKT_THREAD_ANSWER,
         Role::Engineer, step},
        {"debug.stepOut", "Step a halted task out to its caller", TAKT_THREAD, TAKT_THREAD_ANSWER, Role::Engineer,
         step},
        {"debug.pause", "Halt a task at the next statement it runs", TAKT_THREAD, TAKT_THREAD_ANSWER, Role::Engineer,
         step},
        {"debug.detach", "End this session's debugging: breakpoints removed, halted tasks resumed", TAKT_NONE,
         R"({"type":"object"})", Role::Engineer, [](T t, M, V, R r) { self(t).debugDetach(r); }},
        {"debug.threads", "The tasks as threads: id, name, whether breakpoints halt it, whether it is halted",
         TAKT_NONE, R"({"type":"object","required":["threads"],"properties":{"threads":{"type":"array"}}})",
         Role::Viewer, [](T t, M, V, R r) { self(t).debugThreads(r); }},
        {"debug.stackTrace", "The call chain of a halted task, innermost first: POU, instance path, file, line",
         TAKT_THREAD, R"({"type":"object","required":["reason","frames"],"properties":{"frames":{"type":"array"}}})",
         Role::Viewer, [](T t, M, V p, R r) { self(t).debugStackTrace(p, r); }},
        {"debug.variables",
         "The variables of a halted frame (scope locals, inputs, outputs: its own, a FUNCTION's or METHOD's and "
         "VAR_TEMP, then its instance's), the globals, or the members of a STRUCT or FB variable (path; with "
         "thread and frame, a path may start at one of the frame's variables), read at one cycle boundary",
         R"({"type":"object","properties":{"thread":{"type":"integer","minimum":1,"maximum":4294967295},)"
         R"("frame":{"type":"integer","minimum":0,"maximum":4294967295},)"
         R"("scope":{"enum":["locals","inputs","outputs","globals"]},"path":{"type":"string","minLength":1}},)"
         R"("additionalProperties":false})",
         R"({"type":"object","required":["instance","variables"],"properties":{"variables":{"type":"array"}}})",
         Role::Viewer, [](T t, M, V p, R r) { self(t).debugVariables(p, r); }},
        {"debug.evaluate",
         "The value of an ST expression in the scope of a halted frame's POU (thread, frame), or of the globals; "
         "variables, literals and operators only: it never writes; a bad expression is -32602 naming the code "
         "and column",
         R"({"type":"object","required":["expression"],"properties":{"expression":{"type":"string","minLength":1,)"
         R"("maxLength":4096},"thread":{"type":"integer","minimum":1,"maximum":4294967295},)"
         R"("frame":{"type":"integer","minimum":0,"maximum":4294967295}},"additionalProperties":false})",
         R"({"type":"object","required":["value","type","expandable","path"]})", Role::Viewer,
         [](T t, M, V p, R r) { self(t).debugEvaluate(p, r); }},
        {"debug.setVariable",
         "Writes a variable in the scope of a halted frame (path: one of the frame's variables, what a VAR_IN_OUT "
         "refers to, or any var.write path) with var.write's checks and IEC literals: the frame's own variables at "
         "once, while the task stands still, anything else at the next cycle boundary",
         R"({"type":"object","required":["thread","path","value"],"properties":{)"
         R"("thread":{"type":"integer","minimum":1,"maximum":4294967295},)"
         R"("frame":{"type":"integer","minimum":0,"maximum":4294967295},"path":{"type":"string","minLength":1},)" TAKT_VALUE
         R"(},"additionalProperties":false})",
         R"({"type":"object","required":["path","cycle","value"]})", Role::Engineer,
         [](T t, M, V p, R r) { self(t).debugSetVariable(p, r); }},
        {"trace.start",
         "Start a trace: up to 32 variables sampled at the end of every cycle of a task into a ring, optionally "
         "with a trigger (a BOOL's edge, a number crossing a level) and samples kept before it (pre) and from it "
         "on (post, default 1000); at most 4 traces at once",
         R"({"type":"object","required":["variables"],"properties":{"variables":{"type":"array","minItems":1,)"
         R"("maxItems":32,"items":{"type":"string","minLength":1,"maxLength":1024}},"task":{"type":"string",)"
         R"("minLength":1,"maxLength":256},"trigger":{"type":"object","required":["variable","edge"],)"
         R"("properties":{"variable":{"type":"string","minLength":1,"maxLength":1024},)"
         R"("edge":{"enum":["rising","falling","both"]},"level":{"type":"number"}},"additionalProperties":false},)"
         R"("pre":{"type":"integer","minimum":0,"maximum":1000000},"post":{"type":"integer","minimum":1,)"
         R"("maximum":1000000}},"additionalProperties":false})",
         TAKT_TRACE_ANSWER, Role::Engineer, [](T t, M, V p, R r) { self(t).traceStart(p, r); }},
        {"trace.list", "The traces: id, task, variables, trigger, state (armed, triggered, done), samples taken",
         TAKT_NONE, R"({"type":"object","required":["traces"],"properties":{"traces":{"type":"array"}}})", Role::Viewer,
         [](T t, M, V, R r) { self(t).traceList(r); }},
        {"trace.read",
         "The samples of a trace that is done or stopped, oldest first: rows of cycle, time from the trigger in "
         "ms and each variable's value (a page: offset, limit, default 10000 rows), or the same as CSV text (format "
         "csv)",
         R"({"type":"object","required":["id"],"properties":{"id":{"type":"integer","minimum":1,)"
         R"("maximum":4294967295},"format":{"enum":["json","csv"]},"offset":{"type":"integer","minimum":0,)"
         R"("maximum":1000000},"limit":{"type":"integer","minimum":1,"maximum":100000}},)"
         R"("additionalProperties":false})",
         R"({"type":"object","required":["id","state","samples","variables"]})", Role::Viewer,
         [](T t, M, V p, R r) { self(t).traceRead(p, r); }},
        {"trace.stop", "Stop a trace where it is; its samples stay readable until trace.remove", TAKT_TRACE_ID,
         TAKT_TRACE_ANSWER, Role::Engineer, [](T t, M, V p, R r) { self(t).traceStop(p, r); }},
        {"trace.remove", "Stop a trace and drop its samples", TAKT_TRACE_ID, R"({"type":"object"})", Role::Engineer,
         [](T t, M, V p, R r) { self(t).traceRemove(p, r); }},
    };
    return kTable;
}

void RuntimeControl::status(ControlReplyFn& reply) {
    const engine::ScanSnapshot s = loop_.snapshot();
    std::string fault = "null";
    if (const std::optional<engine::FaultRecord> f = loop_.lastFault(); f && s.state == engine::ScanState::Halted) {
        fault = fmt::format("{{\"kind\":{},\"message\":{},\"pou\":{},\"path\":{},\"line\":{},\"column\":{},"
                            "\"cycle\":{},\"action\":{}}}",
                            ctl::quoted(f->kind), ctl::quoted(f->report.message), ctl::quoted(f->report.pou),
                            ctl::quoted(f->report.path), f->report.line, f->report.column, f->cycle,
                            ctl::quoted(engine::faultActionName(f->action)));
    }
    std::string drivers = "[";
    if (options_.driverHealth) {
        for (const DriverHealthView& d : options_.driverHealth()) {
            drivers += fmt::format("{}{{\"name\":{},\"health\":{},\"reason\":{}}}", drivers.size() > 1 ? "," : "",
                                   ctl::quoted(d.name), ctl::quoted(d.health), ctl::quoted(d.reason));
        }
    }
    drivers += "]";
    std::string execution = options_.execution ? options_.execution() : std::string("interpreter");
    if (execution == "native" && debuggingNative()) {
        execution = "native (interpreter while debugging)";
    }
    std::string surfaces; // the OPC UA server's and the Sparkplug node's health, when they run
    if (options_.opcua) {
        const OpcuaHealth h = options_.opcua();
        surfaces = fmt::format(",\"opcua\":{{\"state\":{},\"endpoint\":{},\"restarts\":{},\"reason\":{},\"pid\":{},"
                               "\"sessions\":{},\"subscriptions\":{},\"monitored_items\":{}}}",
                               ctl::quoted(h.state), ctl::quoted(h.endpoint), h.restarts, ctl::quoted(h.reason), h.pid,
                               h.sessions, h.subscriptions, h.monitoredItems);
    }
    if (options_.sparkplug) {
        const SparkplugHealth h = options_.sparkplug();
        surfaces +=
            fmt::format(",\"sparkplug\":{{\"state\":{},\"server\":{},\"bd_seq\":{},\"births\":{},\"reason\":{}}}",
                        ctl::quoted(h.state), ctl::quoted(h.server), h.bdSeq, h.births, ctl::quoted(h.reason));
    }
    reply(ControlAnswer::result(
        fmt::format("{{\"state\":\"{}\",\"fault\":{},\"program_hash\":{},\"uptime_ms\":{},\"cycles\":{},\"faults\":{},"
                    "\"restarts\":{},\"reloads\":{},\"forced\":{},\"drivers\":{},\"execution\":{},\"halted\":{}{}}}",
                    stateName(loop_, s.state), fault, ctl::quoted(hash_),
                    (engine::monotonicNs() - startedNs_) / 1'000'000, s.cycles, s.faults, s.restarts, s.reloads,
                    forced_.size(), drivers, ctl::quoted(execution), haltedJson(), surfaces)));
}

void RuntimeControl::stats(ControlReplyFn& reply) {
    const engine::ScanSnapshot s = loop_.snapshot();
    const bytecode::Module& m = *module_;
    const std::vector<std::uint64_t> overruns = loop_.taskOverruns();
    std::string tasks = "[";
    for (std::size_t t = 0; t < m.tasks.size(); ++t) {
        const engine::LatencyHistogram* exec = loop_.taskExecTime(t);
        const engine::LatencyHistogram* late = loop_.taskLateness(t);
        if (exec == nullptr || late == nullptr) {
            break; // beyond kMaxTaskStats: in the overall figures only
        }
        // With task threads: the task's own thread, its last cycle's execution time, its skipped
        // releases and its longest park. In the base cycle a task has no last time of its own
        // that another thread may read (null).
        const engine::TaskThread* own = loop_.taskThread(t);
        const std::string last =
            own != nullptr ? fmt::format("{:.1f}", static_cast<double>(own->lastExecNs.load()) / 1e3) : "null";
        tasks += fmt::format(
            "{}{{\"name\":{},\"interval_ms\":{:.3f},\"priority\":{},\"cycles\":{},\"exec\":{},"
            "\"last_exec_us\":{},\"lateness\":{},\"overruns\":{},\"thread\":{},\"missed_releases\":{},"
            "\"max_pause_us\":{:.1f}}}",
            t == 0 ? "" : ",", ctl::quoted(m.tasks[t].name), static_cast<double>(m.tasks[t].intervalNs) / 1e6,
            m.tasks[t].priority, exec->count(), histogramJson(exec->summary()), last, histogramJson(late->summary()),
            t < overruns.size() ? overruns[t] : 0, own != nullptr, own != nullptr ? own->missed.load() : 0,
            own != nullptr ? static_cast<double>(own->maxPauseNs.load()) / 1e3 : 0.0);
    }
    tasks += "]";
    reply(ControlAnswer::result(fmt::format(
        "{{\"cycles\":{},\"period_ms\":{:.3f},\"exec\":{},\"lateness\":{},\"overruns\":{},\"missed_releases\":{},"
        "\"faults\":{},\"watchdog_trips\":{},\"tasks\":{},\"rss_bytes\":{},\"queue_depth\":{},"
        "\"retain_saves\":{},\"retain_failures\":{}}}",
        s.cycles, static_cast<double>(loop_.options().periodNs) / 1e6, histogramJson(loop_.execTime().summary()),
        histogramJson(loop_.lateness().summary()), s.overruns, s.missedReleases, s.faults, s.watchdogTrips, tasks,
        residentBytes(), loop_.queueDepth(), loop_.retainSaves(), loop_.retainFailures())));
}

// The loop's own buckets (3 % wide), only those that counted something: a page draws them on a
// log axis without the loss of a fixed set of bounds.
void RuntimeControl::histogram(ControlReplyFn& reply) {
    const auto json = [](const engine::LatencyHistogram& h) {
        std::string out = "[";
        for (const engine::HistogramBucket& b : h.buckets()) {
            out += fmt::format("{}[{:.3f},{:.3f},{}]", out.size() > 1 ? "," : "", static_cast<double>(b.low) / 1e3,
                               static_cast<double>(b.high) / 1e3, b.count);
        }
        return out + "]";
    };
    reply(ControlAnswer::result(
        fmt::format("{{\"exec\":{},\"lateness\":{}}}", json(loop_.execTime()), json(loop_.lateness()))));
}

void RuntimeControl::runControl(const std::string& method, const rapidjson::Value& params, ControlReplyFn& reply) {
    auto p = std::make_unique<Pending>();
    engine::ScanCommand& c = p->command;
    if (method == "runtime.pause") {
        c.kind = engine::ScanCommandKind::Pause;
    } else if (method == "runtime.resume") {
        c.kind = engine::ScanCommandKind::Resume;
    } else if (method == "runtime.stop") {
        c.kind = engine::ScanCommandKind::Stop;
        if (anyHalted()) {
            releaseDebugger(); // stopping never waits for a debugger: the halted cycle runs to its end
        }
    } else if (method == "runtime.start") {
        c.kind = engine::ScanCommandKind::Start;
    } else if (method == "runtime.step") {
        // The server has checked params against the table's schemas: count is 1..1000000.
        c.kind = engine::ScanCommandKind::Step;
        const rapidjson::Value* n = ctl::member(params, "count");
        c.count = n != nullptr ? n->GetUint() : 1;
    } else { // runtime.restart; mode is "warm" (the default) or "cold"
        c.kind = engine::ScanCommandKind::Restart;
        const rapidjson::Value* mode = ctl::member(params, "mode");
        c.mode = mode != nullptr && std::string_view(mode->GetString()) == "cold" ? engine::RestartMode::Cold
                                                                                  : engine::RestartMode::Warm;
    }
    // The state the command left, as the scan thread recorded it when applying it; a step is
    // answered from poll() once its cycles have run (stepUntil).
    p->finish = [](Pending& done) { return runStateAnswer(done.result.state, done.result.cycle); };
    submit(std::move(p), reply);
}

bool RuntimeControl::submit(std::unique_ptr<Pending> p, ControlReplyFn& reply) {
    if (!loop_.running()) {
        reply(ControlAnswer::error(rpc::kCommandFailed, "the runtime is not cycling; the command cannot be applied"));
        return false;
    }
    if (const vm::Debugger* base = loop_.baseDebugger();
        base != nullptr && base->halted() && !engine::ScanLoop::servedWhileHalted(p->command.kind)) {
        // The base cycle is halted mid-cycle: pausing, stopping or restarting it, or an online
        // change, would not apply before it runs on.
        reply(ControlAnswer::error(rpc::kCommandFailed, "the program is halted in the debugger; continue it "
                                                        "(debug.continue) first"));
        return false;
    }
    p->command.result = &p->result;
    if (!p->ranges.empty()) {
        p->command.ranges = p->ranges.data();
        p->command.rangeCount = static_cast<std::uint32_t>(p->ranges.size());
    }
    if (!loop_.submit(p->command)) {
        reply(ControlAnswer::error(kRateLimited, "the runtime's command queue is full; retry shortly",
                                   "{\"retry_after_ms\":10}"));
        return false;
    }
    p->ticket = loop_.commandsSubmitted();
    p->deadlineNs = engine::monotonicNs() + options_.commandTimeoutMs * 1'000'000;
    p->reply = std::move(reply);
    pending_.push_back(std::move(p));
    return true;
}

void RuntimeControl::complete(Pending& p) {
    ControlAnswer answer;
    if (!p.result.ok) {
        answer = ControlAnswer::error(rpc::kCommandFailed, p.result.refusal != nullptr ? p.result.refusal : "refused");
    } else {
        answer = p.command.kind == engine::ScanCommandKind::Reload ? finishReload(p)
                 : p.finish                                        ? p.finish(p)
                                                                   : ControlAnswer::result("{}");
    }
    if (p.command.kind == engine::ScanCommandKind::Reload) {
        reloadInFlight_ = false;
        settleTraces(p, p.result.ok);
        if (!p.result.ok) {
            // The running program stays: the requests after this one are resolved in it again.
            module_ = p.moduleBefore;
            hash_ = p.hashBefore;
            if (p.stopsBefore != nullptr) {
                stops_ = p.stopsBefore; // the new program, and its stop map, are freed with `p`
            }
        }
    }
    // What the scan thread handed back is freed here, off the cycle.
    p.change = {};
    if (p.forces != nullptr || p.command.kind == engine::ScanCommandKind::SetForces) {
        forces_ = std::move(p.forces);
    }
    if (!p.replied) {
        p.replied = true;
        p.reply(std::move(answer));
    }
}

void RuntimeControl::poll(std::vector<std::string>& events) {
    const std::uint64_t done = loop_.commandsDone();
    while (!pending_.empty() && pending_.front()->ticket <= done) {
        Pending& p = *pending_.front();
        if (p.command.kind == engine::ScanCommandKind::Step && p.result.ok) {
            // Accepted: the answer waits for the steps (or the command timeout, from now).
            p.stepUntil = p.result.cycle + p.command.count;
            p.deadlineNs = engine::monotonicNs() + options_.commandTimeoutMs * 1'000'000;
            stepping_.push_back(std::move(pending_.front()));
        } else {
            complete(p);
        }
        pending_.pop_front();
    }
    answerSteps();
    emitDebugEvents(events);
    emitTraceEvents(events);
    if (!retired_.empty()) {
        retired_.reclaim(runCounts());
    }
    // A command the loop has not applied in time is answered now; its buffers stay alive until
    // the loop reports it done (above), since the scan thread may still read them.
    const std::int64_t now = engine::monotonicNs();
    for (const std::unique_ptr<Pending>& p : pending_) {
        if (!p->replied && now > p->deadlineNs) {
            p->replied = true;
            p->reply(ControlAnswer::error(
                rpc::kCommandFailed,
                fmt::format("the scan loop did not apply the command within {} ms", options_.commandTimeoutMs)));
        }
    }
    translateScanEvents(events);
}

// The scan loop signals commands applied, events and RETAIN saves; what it does not signal is
// time passing: a command's deadline, the boot event (the loop may not run yet at the first
// poll), the driver health compared ten times a second. Overrun summaries fall due within the
// server's one-second poll.
std::chrono::steady_clock::time_point RuntimeControl::pollDeadline() const {
    std::int64_t due = std::numeric_limits<std::int64_t>::max();
    for (const auto* list : {&pending_, &stepping_}) {
        for (const std::unique_ptr<Pending>& p : *list) {
            if (!p->replied) {
                due = std::min(due, p->deadlineNs);
            }
        }
    }
    const std::int64_t now = engine::monotonicNs();
    // A debugging session: its logpoints' output is looked for every 10 ms (a halting task wakes
    // this thread at once through the loop's eventfd), and what it unlinked freed once no run
    // reads it.
    if (!startedSent_ || debugOwner_ != 0 || !retired_.empty()) {
        due = std::min(due, now + 10'000'000);
    }
    if (options_.driverHealth) {
        due = std::min(due, nextHealthNs_);
    }
    if (due == std::numeric_limits<std::int64_t>::max()) {
        return std::chrono::steady_clock::time_point::max();
    }
    // CLOCK_MONOTONIC both: the steady clock's now plus what is left.
    return std::chrono::steady_clock::now() +
           std::chrono::nanoseconds(std::max<std::int64_t>(due - now, 0) + 1'000'000);
}

// A step's answer is the state after its cycles: paused at the cycle it stopped at, or what a
// pause, resume, stop or fault made of it meanwhile. The snapshot shows state and cycle count of
// one boundary together; one that takes longer than the command timeout is answered as it is then.
void RuntimeControl::answerSteps() {
    if (stepping_.empty()) {
        return;
    }
    const engine::ScanSnapshot s = loop_.snapshot();
    const std::int64_t now = engine::monotonicNs();
    for (auto it = stepping_.begin(); it != stepping_.end();) {
        Pending& p = **it;
        if (s.state == engine::ScanState::Running && s.cycles < p.stepUntil && now <= p.deadlineNs) {
            ++it;
            continue;
        }
        p.replied = true;
        p.reply(runStateAnswer(s.state, s.cycles));
        it = stepping_.erase(it);
    }
}

void RuntimeControl::emit(std::vector<std::string>& events, const std::string& type, const std::string& fields) {
    events.push_back(
        fmt::format("{{\"type\":\"{}\",\"ts\":{}{}{}}}", type, wallMs(), fields.empty() ? "" : ",", fields));
}

// The overruns counted since the last one reported, once their interval has passed at `nowNs`:
// a cycle_overrun event with their count, causes and worst figures.
void RuntimeControl::emitOverrunSummary(std::vector<std::string>& events, std::int64_t nowNs) {
    engine::OverrunSummary s;
    if (!overruns_.due(nowNs, s)) {
        return;
    }
    emit(events, "cycle_overrun",
         fmt::format("\"cycle\":{},\"count\":{},\"late_release\":{},\"long_execution\":{},\"max_exec_us\":{:.3f},"
                     "\"max_late_us\":{:.3f},\"missed\":{},\"interval_s\":{}",
                     s.lastCycle, s.count, s.lateRelease, s.longExecution, static_cast<double>(s.maxExecNs) / 1000.0,
                     static_cast<double>(s.maxLateNs) / 1000.0, s.missed, s.intervalNs / 1'000'000'000));
}

void RuntimeControl::translateScanEvents(std::vector<std::string>& events) {
    if (!startedSent_ && loop_.running()) {
        startedSent_ = true;
        emit(events, "runtime_started", fmt::format("\"reason\":\"boot\",\"program_hash\":{}", ctl::quoted(hash_)));
    }
    for (std::string& e : localEvents_) {
        events.push_back(std::move(e));
    }
    localEvents_.clear();
    const std::uint64_t total = loop_.eventCount();
    if (total != eventsSeen_) {
        const std::vector<engine::ScanEvent> ring = loop_.events();
        const std::uint64_t fresh = std::min<std::uint64_t>(total - eventsSeen_, ring.size());
        for (std::size_t i = ring.size() - static_cast<std::size_t>(fresh); i < ring.size(); ++i) {
            const engine::ScanEvent& e = ring[i];
            const std::string cycle = fmt::format("\"cycle\":{}", e.cycle);
            switch (e.kind) {
            case engine::ScanEventKind::CycleOverrun:
                // The first of a burst on its own, the rest as one summary per interval.
                emitOverrunSummary(events, e.timeNs);
                if (overruns_.add(e)) {
                    emit(events, "cycle_overrun",
                         fmt::format("{},\"count\":1,\"cause\":\"{}\",\"exec_us\":{:.3f},\"late_us\":{:.3f},"
                                     "\"missed\":{}",
                                     cycle, engine::overrunCauseName(engine::overrunCause(e)),
                                     static_cast<double>(e.valueNs) / 1000.0, static_cast<double>(e.lateNs) / 1000.0,
                                     e.missed));
                }
                break;
            case engine::ScanEventKind::RuntimeFault:
            case engine::ScanEventKind::WatchdogTimeout:
            case engine::ScanEventKind::IoFault: {
                const std::optional<engine::FaultRecord> f = loop_.lastFault();
                emit(events, "fault",
                     fmt::format("{},\"kind\":\"{}\",\"message\":{}", cycle, engine::faultKindName(e.kind),
                                 ctl::quoted(f && f->cycle == e.cycle ? f->report.message : std::string())));
                break;
            }
            case engine::ScanEventKind::Restart:
                emit(events, "runtime_started", cycle + ",\"reason\":\"restart\"");
                break;
            case engine::ScanEventKind::Halt: emit(events, "runtime_stopped", cycle + ",\"reason\":\"fault\""); break;
            case engine::ScanEventKind::Paused: emit(events, "paused", cycle); break;
            case engine::ScanEventKind::Resumed: emit(events, "resumed", cycle); break;
            case engine::ScanEventKind::Stopped: emit(events, "runtime_stopped", cycle + ",\"reason\":\"stop\""); break;
            case engine::ScanEventKind::Started:
                emit(events, "runtime_started", cycle + ",\"reason\":\"start\"");
                break;
            case engine::ScanEventKind::ReloadApplied:
                // hash_ names the program the reload submitted (it is set when the reload is queued).
                emit(events, "reload_applied",
                     fmt::format("{},\"swap_pause_us\":{:.3f},\"program_hash\":{}", cycle,
                                 static_cast<double>(e.valueNs) / 1000.0, ctl::quoted(hash_)));
                break;
            }
        }
        eventsSeen_ = total;
    }
    emitOverrunSummary(events, engine::monotonicNs());
    if (const std::uint64_t saves = loop_.retainSaves(); saves != retainSavesSeen_) {
        emit(events, "retain_saved", fmt::format("\"saves\":{}", saves));
        retainSavesSeen_ = saves;
    }
    if (const std::uint64_t failures = loop_.retainFailures(); failures != retainFailuresSeen_) {
        emit(events, "retain_failed", fmt::format("\"failures\":{}", failures));
        retainFailuresSeen_ = failures;
    }
    // Driver health changes are found by comparing a rendering ten times a second; the first
    // one is the baseline (the boot event already says the runtime is up).
    if (options_.driverHealth && engine::monotonicNs() >= nextHealthNs_) {
        nextHealthNs_ = engine::monotonicNs() + 100'000'000;
        std::string health;
        for (const DriverHealthView& d : options_.driverHealth()) {
            health += fmt::format("{}{{\"name\":{},\"health\":{},\"reason\":{}}}", health.empty() ? "" : ",",
                                  ctl::quoted(d.name), ctl::quoted(d.health), ctl::quoted(d.reason));
        }
        if (healthPolled_ && health != healthSeen_) {
            emit(events, "driver_health", "\"drivers\":[" + health + "]");
        }
        healthSeen_ = std::move(health);
        healthPolled_ = true;
    }
}

} // namespace takt::agent
