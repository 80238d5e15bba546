// The debug.* methods of the control endpoint (docs/debugging.md): line breakpoints in the
// running program's stop map, the tasks on threads of their own (or the base cycle, for a program
// that runs there) as threads that halt at them, stepping, the halted call chain and the
// variables of a frame's instance.
//
// One session at a time debugs a runtime: the first that sets a breakpoint or halts a task owns
// the debugger until it calls debug.detach or its connection ends; then its breakpoints go and
// every task it halted runs on (sessionClosed). Everything here runs on the control server's
// thread; the scan threads are reached only through their vm::Debugger (atomics and a futex word)
// and the program's StopMap, so no request can make a task wait.
#include <algorithm>
#include <atomic>
#include <cstring>

#include <fmt/format.h>

#include "control/control_runtime_internal.h"
#include "control/debug_expr.h"
#include "takt/agent/iec_literal.h"
#include "takt/vm/debug.h"
#include "takt/vm/vm.h"

namespace takt::agent {

namespace {

constexpr std::size_t kMaxListed = 1000; // variables in one debug.variables answer

const char* reasonName(vm::HaltReason r) {
    switch (r) {
    case vm::HaltReason::Breakpoint: return "breakpoint";
    case vm::HaltReason::Step: return "step";
    case vm::HaltReason::Pause: return "pause";
    case vm::HaltReason::Exception: return "exception";
    }
    return "breakpoint";
}

// The instance path a frame runs on: the PROGRAM instance or the FB instance whose data lies at
// `thisOffset` with the POU's instance type ("" for a FUNCTION, which has none).
std::string instancePath(const bytecode::Module& m, const vm::HaltFrame& f) {
    if (f.pou >= m.pous.size()) {
        return {};
    }
    const bytecode::PouEntry& pou = m.pous[f.pou];
    if (pou.kind == bytecode::PouKind::Program) {
        for (const bytecode::ProgramInstance& p : m.programs) {
            if (p.offset == f.thisOffset && p.pou == f.pou) {
                return p.name;
            }
        }
        return {};
    }
    if (pou.instanceType == bytecode::kNone || pou.kind == bytecode::PouKind::Function) {
        return {};
    }
    for (const bytecode::VarEntry& v : m.variables) {
        if (v.offset == f.thisOffset && v.type == pou.instanceType) {
            return v.path;
        }
    }
    return {};
}

std::string frameJson(const bytecode::Module& m, const vm::HaltFrame& f, std::size_t id) {
    const vm::SourcePosition at = vm::sourceAt(m, f.pc);
    const std::string pou = f.pou < m.pous.size() ? m.pous[f.pou].name : std::string("?");
    return fmt::format("{{\"id\":{},\"pou\":{},\"instance\":{},\"file\":{},\"line\":{},\"column\":{}}}", id,
                       ctl::quoted(pou), ctl::quoted(instancePath(m, f)),
                       ctl::quoted(at.file < m.files.size() ? m.files[at.file] : std::string()), at.line, at.column);
}

// The variables a scope lists: the members of `prefix` (an instance or a STRUCT/FB variable
// path) of the kinds asked for, or the globals.
enum class Scope : std::uint8_t { Locals, Inputs, Outputs, Members, Globals };

bool inScope(bytecode::VarKind kind, Scope scope) {
    switch (scope) {
    case Scope::Locals: return kind == bytecode::VarKind::ProgramVar || kind == bytecode::VarKind::Temp;
    case Scope::Inputs: return kind == bytecode::VarKind::Input;
    case Scope::Outputs: return kind == bytecode::VarKind::Output || kind == bytecode::VarKind::InOut;
    case Scope::Members: return true;
    case Scope::Globals: return kind == bytecode::VarKind::Global || kind == bytecode::VarKind::Constant;
    }
    return false;
}

bool scopeOf(std::string_view name, Scope& out) {
    static constexpr std::pair<std::string_view, Scope> kNames[] = {
        {"locals", Scope::Locals}, {"inputs", Scope::Inputs}, {"outputs", Scope::Outputs}, {"globals", Scope::Globals}};
    for (const auto& [n, s] : kNames) {
        if (n == name) {
            out = s;
            return true;
        }
    }
    return false;
}

// A listed variable: its path and place, and whether the path starts at a frame variable.
struct ListedVar {
    ctl::Target target;
    bool inFrame = false;
};

// Whether the VAR_IN_OUT slot at image offset `slot` was bound by a call in the halted chain: a
// FUNCTION's or METHOD's own in-out (in a frame of the chain), or an in-out member of an instance
// the chain runs (every call binds every in-out). Such a slot may point into a caller's frame on
// the stack, which is live while the chain stands.
bool boundByTheChain(const bytecode::Module& m, const vm::Debugger& d, std::uint32_t slot) {
    for (const vm::HaltFrame& f : d.frames()) {
        if (f.pou >= m.pous.size()) {
            continue;
        }
        const bytecode::PouEntry& pou = m.pous[f.pou];
        if (slot >= f.frameOffset && slot - f.frameOffset < pou.frameSize) {
            return true;
        }
        if (pou.instanceType < m.types.size() && slot >= f.thisOffset) {
            for (const bytecode::FieldDesc& field : m.types[pou.instanceType].fields) {
                if (field.offset == slot - f.thisOffset && inOutMember(m, pou.instanceType, field)) {
                    return true;
                }
            }
        }
    }
    return false;
}

// What the VAR_IN_OUT slot at image offset `slot` (of type `refType`, a REF_TO) refers to. The slot
// is written by the halted thread's code only (a caller passing the in-out), so while it stands
// still it is peeked (vm::Debugger::peek); what it refers to is read by a scan command like any
// variable. The offset is in the slot's low 4 bytes, as the code writes and reads it (the image is
// little-endian, as the host). False when it refers to no variable: a slot no call has bound yet
// (0, in the constants), or a place on the stack bound by a call that has returned (an FB's
// in-out passed a FUNCTION's local), which belongs to whatever runs there now.
bool referentOf(const bytecode::Module& m, const vm::Debugger& d, std::uint32_t slot, std::uint32_t refType,
                engine::VarRef& out) {
    std::uint32_t referent = 0;
    if (refType >= m.types.size() || m.types[refType].element >= m.types.size() || !d.peek(slot, &referent, 4) ||
        referent == 0 || referent < m.constSize ||
        (referent - m.constSize >= m.globalSize && !boundByTheChain(m, d, slot))) {
        return false;
    }
    out = engine::VarRef{referent, m.types[refType].element, false};
    return true;
}

// A frame variable's place in the halted frame `f`: its own, or for a VAR_IN_OUT what its slot
// refers to.
bool frameVarRef(const bytecode::Module& m, const vm::Debugger& d, const vm::HaltFrame& f, const bytecode::FrameVar& v,
                 engine::VarRef& out) {
    if (v.type >= m.types.size()) {
        return false;
    }
    if (v.kind != bytecode::VarKind::InOut) {
        out = engine::VarRef{f.frameOffset + v.offset, v.type, v.constant};
        return true;
    }
    return referentOf(m, d, f.frameOffset + v.offset, v.type, out);
}

// The VAR_IN_OUT slots of the halted frame `f`, read for the expressions compiled in its scope.
SlotReader slotsOf(const bytecode::Module& m, const vm::Debugger& d, const vm::HaltFrame& f) {
    return [&m, &d, f](ExprRead::Base base, std::uint32_t offset, std::uint32_t refType, std::uint32_t& referent) {
        const std::uint32_t from = base == ExprRead::Base::This    ? f.thisOffset
                                   : base == ExprRead::Base::Frame ? f.frameOffset
                                                                   : 0;
        engine::VarRef ref;
        if (!referentOf(m, d, from + offset, refType, ref)) {
            return false;
        }
        referent = ref.offset;
        return true;
    };
}

// An FB's VAR_IN_OUT member reached at `ref` (its slot) becomes what it refers to; false when that
// cannot be read. Anything else stays as it is.
bool followInOut(const bytecode::Module& m, const vm::Debugger& d, std::uint32_t owner,
                 const bytecode::FieldDesc& field, engine::VarRef& ref, bool& followed) {
    followed = m.types[owner].kind != bytecode::ValueKind::Struct && inOutMember(m, owner, field);
    return !followed || referentOf(m, d, ref.offset, field.type, ref);
}

// A path in the scope of the halted frame `f`: starting at one of its frame variables, else
// resolved as var.read resolves it; through a VAR_IN_OUT (of the frame, or an FB's member) to what
// it refers to. `inFrame`: the path means that only while `f` stands where it is.
bool resolveInFrame(const bytecode::Module& m, const vm::Debugger& d, const vm::HaltFrame& f, std::string_view path,
                    engine::VarRef& out, bool& inFrame, std::string& error) {
    inFrame = false;
    const auto local = [&](std::string_view name, engine::VarRef& ref) {
        const bytecode::FrameVar* v = frameVarNamed(m.pous[f.pou], name);
        inFrame = v != nullptr && frameVarRef(m, d, f, *v, ref);
        return inFrame;
    };
    const auto member = [&](std::uint32_t owner, const bytecode::FieldDesc& field, engine::VarRef& ref,
                            std::string& why) {
        bool followed = false;
        if (!followInOut(m, d, owner, field, ref, followed)) {
            why = fmt::format("'{}': what the VAR_IN_OUT '{}' refers to is not known here", path, field.name);
            return false;
        }
        inFrame = inFrame || followed;
        return true;
    };
    return engine::resolvePathIn(m, path, local, member, out, error);
}

bool expandable(const bytecode::Module& m, std::uint32_t type) {
    if (type >= m.types.size()) {
        return false;
    }
    const bytecode::ValueKind k = m.types[type].kind;
    return k == bytecode::ValueKind::Struct || k == bytecode::ValueKind::FunctionBlock ||
           k == bytecode::ValueKind::Program;
}

} // namespace

std::uint32_t ctl::fileIndex(const bytecode::Module& m, std::string_view name) {
    std::uint32_t found = bytecode::kNone;
    for (std::uint32_t i = 0; i < m.files.size(); ++i) {
        const std::string& f = m.files[i];
        if (f == name) {
            return i;
        }
        const std::string_view tail = std::string_view(f).starts_with("./") ? std::string_view(f).substr(2) : f;
        if (name.size() > tail.size() && name.ends_with(tail) && name[name.size() - tail.size() - 1] == '/') {
            if (found != bytecode::kNone) {
                return bytecode::kNone;
            }
            found = i;
        }
    }
    return found;
}

bool RuntimeControl::debugRefused(ControlReplyFn& reply) {
    if (!options_.debugEnabled) {
        reply(ControlAnswer::error(rpc::kCommandFailed,
                                   "debugging is off on this runtime: set [runtime.control] debug_enabled = true "
                                   "in runtime.toml"));
        return true;
    }
    return false;
}

// The threads a session sees: the tasks on threads of their own (thread t + 1 is task t), or the
// base cycle as thread 1 when the program runs there (one task, or none): it halts as a whole.
std::size_t RuntimeControl::debugThreadCount() const {
    return loop_.baseDebugger() != nullptr ? 1 : module_->tasks.size();
}

vm::Debugger* RuntimeControl::threadDebugger(std::size_t t) const {
    if (vm::Debugger* base = loop_.baseDebugger()) {
        return t == 0 ? base : nullptr;
    }
    return loop_.taskDebugger(t);
}

// The task's name; the base cycle takes its one task's name, "base cycle" when it has none.
std::string RuntimeControl::threadName(std::size_t t) const {
    if (loop_.baseDebugger() != nullptr && module_->tasks.size() != 1) {
        return "base cycle";
    }
    return t < module_->tasks.size() ? module_->tasks[t].name : std::string();
}

// The calling session owns the debugger from now on, unless another one does.
bool RuntimeControl::claimDebugger(ControlReplyFn& reply) {
    if (debugRefused(reply)) {
        return true;
    }
    const std::uint64_t caller = callerSession();
    if (debugOwner_ != 0 && debugOwner_ != caller) {
        reply(ControlAnswer::error(rpc::kCommandFailed,
                                   "another session debugs this runtime; it must detach (debug.detach) or disconnect "
                                   "first"));
        return true;
    }
    if (debugOwner_ == 0) {
        debugOwner_ = caller;
        haltsSeen_.assign(debugThreadCount(), 0);
        for (std::size_t t = 0; t < debugThreadCount(); ++t) {
            if (vm::Debugger* d = threadDebugger(t)) {
                haltsSeen_[t] = d->haltCount();
            }
        }
    }
    attachDebuggers();
    return false;
}

// Task threads started again (runtime.start after a stop) come with debuggers of their own.
void RuntimeControl::attachDebuggers() {
    for (std::size_t t = 0; t < debugThreadCount(); ++t) {
        if (vm::Debugger* d = threadDebugger(t); d != nullptr && !d->attached()) {
            d->attach();
        }
    }
}

std::vector<std::uint32_t> RuntimeControl::runCounts() const {
    // After the unlink the caller made: no thread's count may be read before it (StoreLoad).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::vector<std::uint32_t> counts;
    for (std::size_t t = 0; t < debugThreadCount(); ++t) {
        const vm::Debugger* d = threadDebugger(t);
        counts.push_back(d != nullptr ? d->runCount() : 0);
    }
    return counts;
}

void RuntimeControl::retire(std::vector<std::shared_ptr<const void>> objects) {
    retired_.retire(std::move(objects), runCounts());
    retired_.reclaim(runCounts()); // what no run was reading goes at once
}

void RuntimeControl::releaseDebugger() {
    if (debugOwner_ == 0) {
        return;
    }
    debugOwner_ = 0;
    breakpoints_.clear();
    functionBreakpoints_.clear();
    exceptionTraps_ = 0;
    logFormats_.clear();
    stopFlow();
    stops_->clearBreakpoints();
    retire(stops_->takeKept());
    stops_->setTrapMask(0);
    for (std::size_t t = 0; t < debugThreadCount(); ++t) {
        if (vm::Debugger* d = threadDebugger(t)) {
            d->detach(); // a halted task runs on
        }
    }
}

void RuntimeControl::sessionClosed(std::uint64_t session) {
    if (session != 0 && session == debugOwner_) {
        releaseDebugger();
    }
}

// Sets the breakpoints of every file the owner asked for in `stops` (the running program's, or a
// new one's before an online change) and answers how each line resolved there.
std::string RuntimeControl::applyBreakpoints(const bytecode::Module& m, vm::StopMap& stops, const std::string& file,
                                             const std::vector<Breakpoint>& lines) {
    std::string out = "[";
    const std::uint32_t index = ctl::fileIndex(m, file);
    const std::string notHalting = haltsNot();
    for (const Breakpoint& b : lines) {
        const std::uint32_t line = b.line;
        std::string entry;
        vm::HitCondition hit;
        std::string why;
        std::uint32_t slot = vm::StopMap::kSlots;
        const auto unverified = [line](std::uint32_t resolved, const std::string& reason) {
            return resolved == 0
                       ? fmt::format("{{\"line\":{},\"verified\":false,\"reason\":{}}}", line, ctl::quoted(reason))
                       : fmt::format("{{\"line\":{},\"verified\":false,\"resolved_line\":{},\"reason\":{}}}", line,
                                     resolved, ctl::quoted(reason));
        };
        if (!b.hitCondition.empty() && !vm::parseHitCondition(b.hitCondition, hit, why)) {
            entry = unverified(0, why);
        } else if (index == bytecode::kNone) {
            entry = unverified(0, fmt::format("no file {} in the running program", file));
        } else if (const vm::ResolvedLine r = vm::resolveLine(m, index, line); !r.verified) {
            entry = unverified(0, r.reason);
        } else if (!notHalting.empty()) {
            entry = unverified(r.line, notHalting);
        } else if (!breakpointRule(m, b, r, hit, stops, slot, why)) {
            entry = unverified(r.line, why);
        } else {
            // The statement starts of one line share the slot: its hits are the breakpoint's.
            bool set = true;
            for (const std::uint32_t pc : r.pcs) {
                set = (slot == vm::StopMap::kSlots ? stops.setBreakpoint(pc, true) : stops.setBreakpoint(pc, slot)) &&
                      set;
            }
            entry = set ? fmt::format("{{\"line\":{},\"verified\":true,\"resolved_line\":{}}}", line, r.line)
                        : unverified(r.line, std::string(ctl::kSlotsUsedUp));
        }
        out += (out.size() > 1 ? "," : "") + entry;
    }
    return out + "]";
}

std::string RuntimeControl::haltsNot() const {
    if (threadDebugger(0) == nullptr) {
        return "the runtime is not cycling: no task can halt";
    }
    // The native tier's code has no stop map, but its runners interpret the program while the
    // session can halt it (debuggingNative).
    return {};
}

bool RuntimeControl::debuggingNative() const {
    if (debugOwner_ == 0 || stops_ == nullptr) {
        return false;
    }
    for (std::size_t t = 0; t < debugThreadCount(); ++t) {
        const vm::Debugger* d = threadDebugger(t);
        if (d != nullptr && d->attached() &&
            (stops_->breakpointCount() != 0 || stops_->trapMask() != 0 || stops_->flow() != nullptr || d->halted())) {
            return true;
        }
    }
    return false;
}

std::map<std::string, std::string> RuntimeControl::rebuildBreakpoints(const bytecode::Module& m, vm::StopMap& stops,
                                                                      std::string* functionAnswer) {
    stops.clearBreakpoints();
    retire(stops.takeKept()); // what the breakpoints' slots pointed to (nothing in a new map)
    std::map<std::string, std::string> answers;
    for (const auto& [file, lines] : breakpoints_) {
        answers[file] = applyBreakpoints(m, stops, file, lines);
    }
    std::string functions = applyFunctionBreakpoints(m, stops);
    if (functionAnswer != nullptr) {
        *functionAnswer = std::move(functions);
    }
    stops.setTrapMask(haltsNot().empty() ? exceptionTraps_ : 0);
    return answers;
}

// The StopMap of the program that becomes current with a reload: the owner's breakpoints are
// set in it before the swap, by file and line (function breakpoints by name), so they stay across
// an online change.
void RuntimeControl::carryBreakpoints(const bytecode::Module& m, vm::StopMap& next) {
    (void)rebuildBreakpoints(m, next);
    carryFlow(m, next);
    stops_ = &next;
}

void RuntimeControl::debugSetBreakpoints(const rapidjson::Value& params, ControlReplyFn& reply) {
    if (reloadInFlight_) {
        reply(ControlAnswer::error(rpc::kCommandFailed, "a reload is in progress; retry when it is answered"));
        return;
    }
    if (claimDebugger(reply)) {
        return;
    }
    const std::string asked = ctl::member(params, "file")->GetString(); // the schema has checked both
    // Kept by the program's name of the file, however a client spells it.
    const std::uint32_t index = ctl::fileIndex(*module_, asked);
    const std::string file = index == bytecode::kNone ? asked : module_->files[index];
    // `lines`, or `breakpoints` with a hit condition each (the schema has checked their types).
    std::vector<Breakpoint> lines;
    if (const rapidjson::Value* plain = ctl::member(params, "lines")) {
        for (const rapidjson::Value& l : plain->GetArray()) {
            lines.push_back(Breakpoint{l.GetUint(), {}, {}, {}});
        }
    }
    if (const rapidjson::Value* full = ctl::member(params, "breakpoints")) {
        for (const rapidjson::Value& b : full->GetArray()) {
            lines.push_back(Breakpoint{b["line"].GetUint(), ctl::text(b, "hitCondition"), ctl::text(b, "condition"),
                                       ctl::text(b, "logMessage")});
        }
    } else if (ctl::member(params, "lines") == nullptr) {
        reply(ctl::badParam("lines", "give \"lines\" or \"breakpoints\""));
        return;
    }
    // The file's breakpoints are replaced as a whole (as a DAP client sends them): the map is
    // rebuilt from every file's lines.
    if (lines.empty()) {
        breakpoints_.erase(file);
    } else {
        breakpoints_[file] = lines;
    }
    const std::map<std::string, std::string> answers = rebuildBreakpoints(*module_, *stops_);
    const auto found = answers.find(file);
    const std::string answer = found != answers.end() ? found->second : std::string();
    // `source`: the program's name of the file (relative to the project), null when none matched.
    reply(ControlAnswer::result(fmt::format("{{\"file\":{},\"source\":{},\"breakpoints\":{}}}", ctl::quoted(asked),
                                            index == bytecode::kNone ? "null" : ctl::quoted(module_->files[index]),
                                            answer.empty() ? "[]" : answer)));
}

// debug.continue / next / stepIn / stepOut / pause on one task (thread = task index + 1).
void RuntimeControl::debugRun(const std::string& method, const rapidjson::Value& params, ControlReplyFn& reply) {
    if (claimDebugger(reply)) {
        return;
    }
    const std::uint32_t thread = ctl::member(params, "thread")->GetUint();
    vm::Debugger* d = thread >= 1 && thread <= debugThreadCount() ? threadDebugger(thread - 1) : nullptr;
    if (d == nullptr) {
        reply(ctl::badParam("thread", fmt::format("no task thread {} (debug.threads lists them)", thread)));
        return;
    }
    const std::string task = threadName(thread - 1);
    if (method == "debug.pause") {
        d->pause();
        reply(ControlAnswer::result(fmt::format("{{\"thread\":{},\"task\":{}}}", thread, ctl::quoted(task))));
        return;
    }
    vm::StepMode step = vm::StepMode::None;
    if (method == "debug.next") {
        step = vm::StepMode::Over;
    } else if (method == "debug.stepIn") {
        step = vm::StepMode::Into;
    } else if (method == "debug.stepOut") {
        step = vm::StepMode::Out;
    }
    if (!d->resume(step)) {
        reply(ControlAnswer::error(rpc::kCommandFailed, fmt::format("task {} is not halted", task)));
        return;
    }
    reply(ControlAnswer::result(fmt::format("{{\"thread\":{},\"task\":{}}}", thread, ctl::quoted(task))));
}

void RuntimeControl::debugDetach(ControlReplyFn& reply) {
    if (debugRefused(reply)) {
        return;
    }
    if (debugOwner_ != 0 && debugOwner_ != callerSession()) {
        reply(ControlAnswer::error(rpc::kCommandFailed, "another session debugs this runtime"));
        return;
    }
    releaseDebugger();
    reply(ControlAnswer::result("{}"));
}

void RuntimeControl::debugThreads(ControlReplyFn& reply) {
    if (debugRefused(reply)) {
        return;
    }
    std::string out;
    for (std::size_t t = 0; t < debugThreadCount(); ++t) {
        const vm::Debugger* d = threadDebugger(t);
        out += fmt::format("{}{{\"id\":{},\"name\":{},\"halts\":{},\"halted\":{}}}", out.empty() ? "" : ",", t + 1,
                           ctl::quoted(threadName(t)), d != nullptr, d != nullptr && d->halted());
    }
    reply(ControlAnswer::result(fmt::format("{{\"threads\":[{}]}}", out)));
}

// The halted debugger of params.thread, or an error answer.
vm::Debugger* RuntimeControl::haltedThread(const rapidjson::Value& params, ControlReplyFn& reply) {
    const std::uint32_t thread = ctl::member(params, "thread")->GetUint();
    vm::Debugger* d = thread >= 1 && thread <= debugThreadCount() ? threadDebugger(thread - 1) : nullptr;
    if (d == nullptr) {
        reply(ctl::badParam("thread", fmt::format("no task thread {} (debug.threads lists them)", thread)));
        return nullptr;
    }
    if (!d->halted()) {
        reply(ControlAnswer::error(rpc::kCommandFailed, fmt::format("task {} is not halted", threadName(thread - 1))));
        return nullptr;
    }
    return d;
}

const vm::HaltFrame* RuntimeControl::haltedFrame(const rapidjson::Value& params, ControlReplyFn& reply,
                                                 vm::Debugger*& debugger) {
    debugger = haltedThread(params, reply);
    if (debugger == nullptr) {
        return nullptr;
    }
    const std::span<const vm::HaltFrame> frames = debugger->frames();
    const rapidjson::Value* frame = ctl::member(params, "frame");
    const std::uint32_t id = frame != nullptr ? frame->GetUint() : 0;
    if (id >= frames.size()) {
        reply(ctl::badParam("frame", fmt::format("the task has {} frames", frames.size())));
        return nullptr;
    }
    const vm::HaltFrame& f = frames[frames.size() - 1 - id];
    if (f.pou >= module_->pous.size()) {
        reply(ctl::badParam("frame", "the frame runs no POU of this program"));
        return nullptr;
    }
    return &f;
}

// The call chain of a halted task, innermost frame first (id 0), as DAP lists it.
void RuntimeControl::debugStackTrace(const rapidjson::Value& params, ControlReplyFn& reply) {
    if (debugRefused(reply)) {
        return;
    }
    const vm::Debugger* d = haltedThread(params, reply);
    if (d == nullptr) {
        return;
    }
    const std::span<const vm::HaltFrame> frames = d->frames();
    std::string out;
    for (std::size_t i = 0; i < frames.size(); ++i) {
        out += (out.empty() ? "" : ",") + frameJson(*module_, frames[frames.size() - 1 - i], i);
    }
    // Halted on an exception breakpoint: the fault the statement ran into.
    const std::string exception = d->trap() == vm::Trap::None
                                      ? std::string()
                                      : fmt::format(",\"exception\":{{\"filter\":{},\"trap\":{},\"text\":{}}}",
                                                    ctl::quoted(std::string(vm::exceptionFilterOf(d->trap()))),
                                                    ctl::quoted(std::string(vm::trapName(d->trap()))),
                                                    ctl::quoted(std::string(vm::trapMessage(d->trap()))));
    reply(ControlAnswer::result(
        fmt::format("{{\"reason\":\"{}\"{},\"frames\":[{}]}}", reasonName(d->reason()), exception, out)));
}

// The variables of a frame's scope (its own variables and its instance's locals, inputs or
// outputs, or the globals), or the members of a STRUCT or FB variable (`path`; with `thread` and
// `frame`, a path that may start at one of the frame's variables), read at one cycle boundary as
// var.read reads them: the halted task does not write them meanwhile.
void RuntimeControl::debugVariables(const rapidjson::Value& params, ControlReplyFn& reply) {
    if (debugRefused(reply)) {
        return;
    }
    Scope scope = Scope::Members;
    std::string prefix;
    bool prefixInFrame = false;
    vm::Debugger* d = nullptr;
    const vm::HaltFrame* frame = nullptr;
    const rapidjson::Value* path = ctl::member(params, "path");
    if (path == nullptr) {
        const rapidjson::Value* name = ctl::member(params, "scope");
        if (name == nullptr || !scopeOf(name->GetString(), scope)) {
            reply(ctl::badParam("scope", "give \"path\", or \"scope\" (locals, inputs, outputs, globals)"));
            return;
        }
    }
    if (scope != Scope::Globals && (path == nullptr || ctl::member(params, "thread") != nullptr)) {
        if (ctl::member(params, "thread") == nullptr) {
            reply(ctl::badParam("thread", "a frame's scope needs \"thread\" (and \"frame\", 0 when left out)"));
            return;
        }
        frame = haltedFrame(params, reply, d);
        if (frame == nullptr) {
            return;
        }
    }
    auto targets = std::make_shared<std::vector<ListedVar>>();
    auto p = std::make_unique<Pending>();
    bool truncated = false;
    const auto add = [&](const std::string& name, std::uint32_t type, std::uint32_t offset, bool inFrame) {
        if (targets->size() == kMaxListed) {
            truncated = true;
            return;
        }
        ListedVar v{ctl::targetOf(*module_, name, engine::VarRef{offset, type, false}), inFrame};
        p->ranges.push_back(v.target.range);
        targets->push_back(std::move(v));
    };
    if (scope == Scope::Members) {
        // The members of a STRUCT or an instance, by its type's fields (a STRUCT's fields have no
        // entries of their own in the variable table).
        prefix = path->GetString();
        engine::VarRef ref;
        std::string why;
        if (!(frame != nullptr ? resolveInFrame(*module_, *d, *frame, prefix, ref, prefixInFrame, why)
                               : engine::resolvePath(*module_, prefix, ref, why))) {
            reply(ctl::badParam("path", why));
            return;
        }
        if (!expandable(*module_, ref.type)) {
            reply(ctl::badParam("path", fmt::format("'{}' is no STRUCT or FB instance", prefix)));
            return;
        }
        for (const bytecode::FieldDesc& f : module_->types[ref.type].fields) {
            if (engine::bookkeepingMember(module_->types[ref.type], f.name)) {
                continue;
            }
            // An FB's VAR_IN_OUT is what it refers to while its thread is halted (its slot otherwise).
            engine::VarRef place{ref.offset + f.offset, f.type, false};
            bool followed = false;
            if (frame == nullptr || !followInOut(*module_, *d, ref.type, f, place, followed)) {
                place = engine::VarRef{ref.offset + f.offset, f.type, false};
                followed = false;
            }
            add(prefix + "." + f.name, place.type, place.offset, prefixInFrame || followed);
        }
        prefix += '.';
    } else if (scope == Scope::Globals) {
        for (const bytecode::VarEntry& v : module_->variables) {
            if (v.path.find('.') == std::string::npos && inScope(v.kind, scope) && !engine::bookkeepingPath(v.path)) {
                add(v.path, v.type, v.offset, false);
            }
        }
    } else {
        // A frame's scope: its own variables of the section asked for (a FUNCTION's or METHOD's,
        // an FB's or PROGRAM's VAR_TEMP), then its instance's members of that section (the
        // variable table knows the sections).
        const bytecode::PouEntry& pou = module_->pous[frame->pou];
        for (const bytecode::FrameVar& v : pou.frame) {
            engine::VarRef ref;
            if (inScope(v.kind, scope) && !engine::bookkeepingPath(v.name) &&
                frameVarRef(*module_, *d, *frame, v, ref)) {
                add(v.name, ref.type, ref.offset, true);
            }
        }
        // A member a METHOD's own variable of the same name hides is not in its scope.
        const auto hidden = [&pou](std::string_view member) { return frameVarNamed(pou, member) != nullptr; };
        const std::string instance = instancePath(*module_, *frame);
        if (!instance.empty()) {
            const std::string dotted = instance + ".";
            for (const bytecode::VarEntry& v : module_->variables) {
                if (v.path.starts_with(dotted) && v.path.size() > dotted.size() &&
                    v.path.find('.', dotted.size()) == std::string::npos && inScope(v.kind, scope) &&
                    !engine::bookkeepingPath(v.path) && !hidden(std::string_view(v.path).substr(dotted.size()))) {
                    engine::VarRef ref{v.offset, v.type, false};
                    const bool followed =
                        v.kind == bytecode::VarKind::InOut && referentOf(*module_, *d, v.offset, v.type, ref);
                    add(v.path, ref.type, ref.offset, followed);
                }
            }
        }
        prefix = instance.empty() ? std::string() : instance + ".";
    }
    std::size_t bytes = 0;
    for (const engine::ImageRange& r : p->ranges) {
        bytes += r.valueBytes();
    }
    const std::string instance = prefix.empty() ? std::string() : prefix.substr(0, prefix.size() - 1);
    if (targets->empty()) {
        reply(ControlAnswer::result(fmt::format("{{\"instance\":{},\"variables\":[]}}", ctl::quoted(instance))));
        return;
    }
    p->bytes.assign(bytes, 0);
    p->command.kind = engine::ScanCommandKind::Read;
    p->command.readBytes = p->bytes.data();
    p->module = module_;
    p->finish = [targets, prefix, instance, truncated](Pending& done) {
        const bytecode::Module& m = *done.module;
        std::string list;
        std::size_t at = 0;
        for (const ListedVar& v : *targets) {
            const ctl::Target& t = v.target;
            rapidjson::Document doc;
            rapidjson::Value value;
            ctl::encodeTyped(m, t, done.bytes.data() + at, value, doc.GetAllocator());
            at += t.range.valueBytes();
            // Values as IEC literal text (what a watch shows); a STRUCT or an FB instance is
            // named by its type and expanded by its path.
            const bool expand = expandable(m, t.type);
            const std::string text = expand ? m.types[t.type].name : formatIecLiteral(value);
            const std::string name = t.name.starts_with(prefix) ? t.name.substr(prefix.size()) : t.name;
            list +=
                fmt::format("{}{{\"name\":{},\"path\":{},\"inFrame\":{},\"type\":{},\"value\":{},\"expandable\":{}}}",
                            list.empty() ? "" : ",", ctl::quoted(name), ctl::quoted(t.name), v.inFrame,
                            ctl::quoted(m.types[t.type].name), ctl::quoted(text), expand);
        }
        return ControlAnswer::result(fmt::format("{{\"cycle\":{},\"instance\":{},\"truncated\":{},\"variables\":[{}]}}",
                                                 done.result.cycle, ctl::quoted(instance), truncated, list));
    };
    submit(std::move(p), reply);
}

// A variable in the scope of a halted frame (a FUNCTION's or METHOD's local or parameter, what a
// VAR_IN_OUT refers to, or any path var.write takes), written as var.write writes it (its type
// checks, IEC literals) at the next cycle boundary of the base cycle, which keeps serving commands
// while a task is halted; the halted task reads it when it runs on.
void RuntimeControl::debugSetVariable(const rapidjson::Value& params, ControlReplyFn& reply) {
    if (debugRefused(reply)) {
        return;
    }
    vm::Debugger* d = nullptr;
    const vm::HaltFrame* f = haltedFrame(params, reply, d);
    if (f == nullptr) {
        return;
    }
    const rapidjson::Value* path = ctl::member(params, "path");
    engine::VarRef ref;
    bool inFrame = false;
    std::string why;
    if (!resolveInFrame(*module_, *d, *f, path->GetString(), ref, inFrame, why)) {
        reply(ctl::badParam("path", why));
        return;
    }
    const ctl::Target t = ctl::targetOf(*module_, path->GetString(), ref);
    auto p = std::make_unique<Pending>();
    ControlAnswer error;
    if (!ctl::prepareWrite(*module_, t, params, *p, error, "path")) {
        reply(std::move(error));
        return;
    }
    p->module = module_;
    // What lies in the halted frame itself is the halted thread's alone: written now, before the
    // thread can run on (a scan command would apply at the base cycle's next boundary, which may
    // come after a debug.continue sent right behind this write, into a frame in use again).
    // Anything else (what a VAR_IN_OUT refers to, a global) other tasks may use: a scan command.
    const std::uint64_t frameEnd = std::uint64_t{f->frameOffset} + module_->pous[f->pou].frameSize;
    if (ref.offset >= f->frameOffset && ref.offset + std::uint64_t{t.range.valueBytes()} <= frameEnd) {
        if (!d->poke(ref.offset, p->bytes.data(), t.range.valueBytes())) {
            reply(ControlAnswer::error(rpc::kCommandFailed, "the task is no longer halted"));
            return;
        }
        p->result.cycle = loop_.snapshot().cycles;
        reply(ctl::writeAnswer("path", t, *p));
        return;
    }
    p->finish = [t](Pending& done) { return ctl::writeAnswer("path", t, done); };
    submit(std::move(p), reply);
}

// An ST expression in the scope of a halted frame's POU (or of the globals without a thread):
// compiled against the running module (debug_expr.h), the parts of the image it reads copied at
// one cycle boundary as var.read copies them, then run on that copy, so nothing is written.
void RuntimeControl::debugEvaluate(const rapidjson::Value& params, ControlReplyFn& reply) {
    if (debugRefused(reply)) {
        return;
    }
    std::uint32_t pou = bytecode::kNone;
    vm::HaltFrame at;
    std::string instance;
    SlotReader slots;
    if (ctl::member(params, "thread") != nullptr) {
        vm::Debugger* d = nullptr;
        const vm::HaltFrame* f = haltedFrame(params, reply, d);
        if (f == nullptr) {
            return;
        }
        at = *f;
        pou = f->pou;
        instance = instancePath(*module_, *f);
        slots = slotsOf(*module_, *d, *f);
    }
    auto compiled = std::make_shared<CompiledExpr>();
    ExprError error;
    const rapidjson::Value* text = ctl::member(params, "expression");
    if (!compileDebugExpr(*module_, pou, instance, std::string_view(text->GetString(), text->GetStringLength()),
                          *compiled, error, false, slots)) {
        reply(ctl::badParam("expression", error.text()));
        return;
    }
    auto p = std::make_unique<Pending>();
    std::size_t bytes = 0;
    for (const ExprRead& r : compiled->reads) {
        const std::uint32_t base = r.base == ExprRead::Base::This    ? at.thisOffset
                                   : r.base == ExprRead::Base::Frame ? at.frameOffset
                                                                     : 0;
        p->ranges.push_back(engine::ImageRange{engine::ImageArea::Data, false, 0, base + r.offset, r.size});
        bytes += r.size;
    }
    p->bytes.assign(bytes, 0);
    p->command.kind = engine::ScanCommandKind::Read;
    p->command.readBytes = p->bytes.data();
    p->module = module_;
    p->finish = [compiled, frame = at](Pending& done) {
        const bytecode::Module& m = *done.module;
        // The copied parts at their own offsets: the code addresses the image as the task does.
        std::uint32_t end = 0;
        for (const engine::ImageRange& r : done.ranges) {
            end = std::max(end, r.offset + r.size);
        }
        std::vector<std::uint8_t> image(end, 0);
        std::size_t at = 0;
        for (const engine::ImageRange& r : done.ranges) {
            std::memcpy(image.data() + r.offset, done.bytes.data() + at, r.size);
            at += r.size;
        }
        vm::ExprSlot v{0};
        if (const vm::ExprStatus s =
                vm::eval(compiled->code, vm::ExprScope{image.data(), end, frame.thisOffset, frame.frameOffset}, v);
            s != vm::ExprStatus::Ok) {
            return ControlAnswer::error(rpc::kCommandFailed,
                                        fmt::format("the expression cannot be evaluated: {}", vm::exprStatusText(s)));
        }
        ctl::Target t;
        std::uint8_t scalar[8] = {};
        const std::uint8_t* data = scalar;
        if (compiled->place) {
            t.type = compiled->type;
            // Within a copied part: eval checked the index bounds, and a VAR_IN_OUT's referent
            // was copied with its slot.
            if (v.u > end || end - v.u < m.types[t.type].size) {
                return ControlAnswer::error(rpc::kCommandFailed, "the expression cannot be evaluated: "
                                                                 "it refers outside what was read");
            }
            data = image.data() + v.u;
        } else {
            t.kind = compiled->code.kind;
            vm::storeSlot(t.kind, v, scalar);
        }
        const bool expand = compiled->place && expandable(m, t.type);
        rapidjson::Document doc;
        rapidjson::Value typed;
        if (!expand) {
            ctl::encodeTyped(m, t, data, typed, doc.GetAllocator());
        }
        const std::string type = compiled->place ? m.types[t.type].name : std::string(typed["type"].GetString());
        return ControlAnswer::result(
            fmt::format("{{\"value\":{},\"type\":{},\"expandable\":{},\"path\":{},\"inFrame\":{}}}",
                        ctl::quoted(expand ? type : formatIecLiteral(typed)), ctl::quoted(type), expand,
                        ctl::quoted(compiled->path), compiled->framePath));
    };
    submit(std::move(p), reply);
}

// A halted task's frames and why, for runtime.status: [{task, thread, pou, instance, file, line}].
std::string RuntimeControl::haltedJson() const {
    std::string out;
    for (std::size_t t = 0; t < debugThreadCount(); ++t) {
        const vm::Debugger* d = threadDebugger(t);
        if (d == nullptr || !d->halted() || d->frames().empty()) {
            continue;
        }
        const vm::HaltFrame& f = d->frames().back();
        const vm::SourcePosition at = vm::sourceAt(*module_, f.pc);
        out += fmt::format("{}{{\"task\":{},\"thread\":{},\"reason\":\"{}\",\"pou\":{},\"instance\":{},\"file\":{},"
                           "\"line\":{}}}",
                           out.empty() ? "" : ",", ctl::quoted(threadName(t)), t + 1, reasonName(d->reason()),
                           ctl::quoted(f.pou < module_->pous.size() ? module_->pous[f.pou].name : ""),
                           ctl::quoted(instancePath(*module_, f)),
                           ctl::quoted(at.file < module_->files.size() ? module_->files[at.file] : ""), at.line);
    }
    return "[" + out + "]";
}

bool RuntimeControl::anyHalted() const {
    for (std::size_t t = 0; t < debugThreadCount(); ++t) {
        if (const vm::Debugger* d = threadDebugger(t); d != nullptr && d->halted()) {
            return true;
        }
    }
    return false;
}

// A debug_stopped event for every halt since the last poll, while a session debugs.
void RuntimeControl::emitDebugEvents(std::vector<std::string>& events) {
    if (debugOwner_ == 0) {
        return;
    }
    attachDebuggers();
    emitLogOutput(events); // first: what a task logged before it halted comes before the halt
    haltsSeen_.resize(debugThreadCount(), 0);
    for (std::size_t t = 0; t < debugThreadCount(); ++t) {
        const vm::Debugger* d = threadDebugger(t);
        if (d == nullptr || d->haltCount() == haltsSeen_[t]) {
            continue;
        }
        haltsSeen_[t] = d->haltCount();
        if (!d->halted() || d->frames().empty()) {
            continue; // resumed meanwhile (runtime.stop)
        }
        const vm::HaltFrame& f = d->frames().back();
        const vm::SourcePosition at = vm::sourceAt(*module_, f.pc);
        // A condition that faulted halts the task and says why (`fault`), as does a run-time fault
        // an exception breakpoint caught (with the filter that caught it).
        std::string fault;
        if (d->conditionFault() != vm::ExprStatus::Ok) {
            fault = fmt::format(",\"fault\":{}", ctl::quoted(fmt::format("the condition failed: {}",
                                                                         vm::exprStatusText(d->conditionFault()))));
        } else if (d->trap() != vm::Trap::None) {
            fault = fmt::format(",\"fault\":{},\"exception\":{}", ctl::quoted(std::string(vm::trapMessage(d->trap()))),
                                ctl::quoted(std::string(vm::exceptionFilterOf(d->trap()))));
        }
        emit(events, "debug_stopped",
             fmt::format("\"thread\":{},\"task\":{},\"reason\":\"{}\",\"pou\":{},\"file\":{},\"line\":{}{}", t + 1,
                         ctl::quoted(threadName(t)), reasonName(d->reason()),
                         ctl::quoted(f.pou < module_->pous.size() ? module_->pous[f.pou].name : ""),
                         ctl::quoted(at.file < module_->files.size() ? module_->files[at.file] : ""), at.line, fault));
    }
}

} // namespace takt::agent
