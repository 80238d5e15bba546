// trace.*: up to kMaxTraces traces of up to 32 variables each, sampled at the end of every cycle
// of one task (takt/engine/trace_recorder.h). Everything that can fail is checked here, off the
// cycle: names resolved, the trigger's variable and level checked, the ring sized; the scan side
// only copies bytes. An online change carries each trace's variables into the new program
// (traceLayouts) or ends the trace, named in trace.list.
#include <cmath>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "control/control_runtime_internal.h"
#include "takt/agent/iec_literal.h"
#include "takt/engine/path_index.h"

namespace takt::agent {

namespace {

// The triggers a variable's kind allows: a BOOL's edge, a number's crossing of a level.
std::optional<engine::TraceNumber> triggerNumber(const bytecode::Module& m, std::uint32_t type) {
    using K = bytecode::ValueKind;
    const bytecode::TypeDesc* t = &m.types[type];
    if (t->kind == K::Subrange && t->element != bytecode::kNone) {
        t = &m.types[t->element];
    }
    switch (t->kind) {
    case K::Bool: return engine::TraceNumber::Bool;
    case K::SInt:
    case K::Int:
    case K::DInt:
    case K::LInt:
    case K::Enum: return engine::TraceNumber::Signed;
    case K::USInt:
    case K::UInt:
    case K::UDInt:
    case K::ULInt:
    case K::Byte:
    case K::Word:
    case K::DWord:
    case K::LWord: return engine::TraceNumber::Unsigned;
    case K::Real:
    case K::LReal: return engine::TraceNumber::Float;
    default: return std::nullopt;
    }
}

bool traceable(bytecode::ValueKind k) {
    using K = bytecode::ValueKind;
    return k != K::Array && k != K::Struct && k != K::Ref && k != K::FunctionBlock && k != K::Program &&
           k != K::Interface;
}

const char* stateName(engine::TraceState s) {
    switch (s) {
    case engine::TraceState::Armed: return "armed";
    case engine::TraceState::Triggered: return "triggered";
    case engine::TraceState::Done: return "done";
    }
    return "done";
}

std::string nullOrQuoted(const std::string& s) {
    return s.empty() ? "null" : ctl::quoted(s);
}

// A trace's variables as `{name, type}` objects, comma-separated.
std::string variablesJson(const RuntimeControl::Trace& t) {
    std::string out;
    for (const ctl::Target& v : t.targets) {
        out += fmt::format("{}{{\"name\":{},\"type\":{}}}", out.empty() ? "" : ",", ctl::quoted(v.name),
                           ctl::quoted(t.program->types[v.type].name));
    }
    return out;
}

// The index of the task named `name` in `m` (names ignore case), or std::nullopt.
std::optional<std::uint32_t> taskNamed(const bytecode::Module& m, std::string_view name) {
    for (std::uint32_t t = 0; t < m.tasks.size(); ++t) {
        if (engine::PathIndex::FoldEqual{}(m.tasks[t].name, name)) {
            return t;
        }
    }
    return std::nullopt;
}

// A CSV field: quoted when it holds a separator, a quote or a line break.
std::string csvField(std::string_view s) {
    if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
        return std::string(s);
    }
    std::string out = "\"";
    for (const char c : s) {
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    }
    return out + "\"";
}

} // namespace

RuntimeControl::Trace* RuntimeControl::findTrace(const rapidjson::Value& params, ControlReplyFn& reply) {
    const std::uint32_t id = params["id"].GetUint();
    for (const std::unique_ptr<Trace>& t : traces_) {
        if (t != nullptr && t->id == id) {
            return t.get();
        }
    }
    reply(ctl::badParam("id", fmt::format("no trace {}: trace.list lists them", id)));
    return nullptr;
}

void RuntimeControl::traceStart(const rapidjson::Value& params, ControlReplyFn& reply) {
    if (reloadInFlight_) {
        reply(ControlAnswer::error(rpc::kCommandFailed, "an online change is being applied: start the trace after it"));
        return;
    }
    std::size_t slot = traces_.size();
    for (std::size_t i = 0; i < traces_.size(); ++i) {
        if (traces_[i] == nullptr) {
            slot = i;
            break;
        }
    }
    if (slot == traces_.size()) {
        reply(ControlAnswer::error(rpc::kCommandFailed,
                                   fmt::format("{} traces exist, the most the runtime keeps: remove one with "
                                               "trace.remove first",
                                               traces_.size())));
        return;
    }
    const bytecode::Module& m = *module_;
    auto trace = std::make_unique<Trace>();
    // The task: named, or the only one.
    std::uint32_t task = engine::TraceSlot::kBaseCycle;
    std::string taskNames;
    for (const bytecode::TaskEntry& t : m.tasks) {
        taskNames += (taskNames.empty() ? "" : ", ") + t.name;
    }
    if (const rapidjson::Value* name = ctl::member(params, "task")) {
        const std::string_view want(name->GetString(), name->GetStringLength());
        const std::optional<std::uint32_t> named = taskNamed(m, want);
        task = named.value_or(engine::TraceSlot::kBaseCycle);
        if (!named) {
            reply(ctl::badParam("task", fmt::format("no task '{}' in the program (its tasks: {})", want,
                                                    taskNames.empty() ? "none" : taskNames)));
            return;
        }
    } else if (m.tasks.size() == 1) {
        task = 0;
    } else if (m.tasks.size() > 1) {
        reply(ctl::badParam("task", fmt::format("the program has more than one task: name the one whose cycles to "
                                                "sample (its tasks: {})",
                                                taskNames)));
        return;
    }
    trace->task = task == engine::TraceSlot::kBaseCycle ? std::string() : m.tasks[task].name;
    // The variables, and the trigger's among them (added when not listed).
    std::vector<std::string> names;
    for (const rapidjson::Value& v : params["variables"].GetArray()) {
        names.emplace_back(v.GetString(), v.GetStringLength());
    }
    const rapidjson::Value* trig = params.HasMember("trigger") ? &params["trigger"] : nullptr;
    std::size_t trigIndex = 0;
    if (trig != nullptr) {
        const std::string tv = (*trig)["variable"].GetString();
        trigIndex = static_cast<std::size_t>(
            std::find_if(names.begin(), names.end(),
                         [&](const std::string& n) { return engine::PathIndex::FoldEqual{}(n, tv); }) -
            names.begin());
        if (trigIndex == names.size()) {
            names.push_back(tv);
        }
    }
    if (names.size() > engine::kMaxTraceChannels) {
        reply(ctl::badParam("variables", fmt::format("{} variables with the trigger's: a trace samples at most {}",
                                                     names.size(), engine::kMaxTraceChannels)));
        return;
    }
    engine::TraceLayout layout;
    layout.module = &m;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string where = i < params["variables"].Size() ? fmt::format("variables[{}]", i) : "trigger.variable";
        ctl::Target t;
        ControlAnswer error;
        if (!ctl::resolveVar(paths(), names[i], t, error, where)) {
            reply(std::move(error));
            return;
        }
        const bytecode::TypeDesc& type = m.types[t.type];
        if (!traceable(type.kind)) {
            reply(ctl::badParam(
                where, fmt::format("'{}' is a {}: trace its elements or members one by one", names[i], type.name)));
            return;
        }
        layout.ranges[i] = t.range;
        trace->signatures.push_back(engine::typeSignature(m, t.type));
        trace->targets.push_back(std::move(t));
    }
    layout.count = static_cast<std::uint32_t>(names.size());
    engine::TraceTrigger trigger;
    if (trig != nullptr) {
        const ctl::Target& t = trace->targets[trigIndex];
        const std::optional<engine::TraceNumber> number = triggerNumber(m, t.type);
        if (!number) {
            reply(ctl::badParam("trigger.variable", fmt::format("'{}' is a {}: a trigger watches a BOOL or a number",
                                                                t.name, m.types[t.type].name)));
            return;
        }
        trigger.channel = static_cast<std::uint32_t>(trigIndex);
        trigger.number = *number;
        const std::string edge = (*trig)["edge"].GetString();
        trigger.edge = edge == "rising"    ? engine::TraceTrigger::Edge::Rising
                       : edge == "falling" ? engine::TraceTrigger::Edge::Falling
                                           : engine::TraceTrigger::Edge::Both;
        if (*number == engine::TraceNumber::Bool) {
            if (trig->HasMember("level")) {
                reply(ctl::badParam("trigger.level",
                                    fmt::format("'{}' is a BOOL: its edge triggers, without a level", t.name)));
                return;
            }
        } else if (!trig->HasMember("level") || !(*trig)["level"].IsNumber()) {
            reply(ctl::badParam("trigger.level",
                                fmt::format("'{}' is a number: give the level whose crossing triggers", t.name)));
            return;
        } else {
            trigger.level = (*trig)["level"].GetDouble();
        }
        trace->trigger = fmt::format("{} {}{}", t.name, edge,
                                     *number == engine::TraceNumber::Bool ? "" : fmt::format(" {}", trigger.level));
    }
    const std::uint32_t pre = params.HasMember("pre") ? params["pre"].GetUint() : 0;
    const std::uint32_t post = params.HasMember("post") ? params["post"].GetUint() : 1000;
    if (trig == nullptr && pre > 0) {
        reply(ctl::badParam("pre", "samples before the trigger need a trigger"));
        return;
    }
    const std::span<const engine::ImageRange> ranges(layout.ranges.data(), layout.count);
    if (!engine::TraceRecorder::fits(ranges, std::uint64_t{pre} + post)) {
        reply(ctl::badParam("post", fmt::format("{} samples of these variables exceed what one trace keeps ({} "
                                                "samples, {} MiB)",
                                                std::uint64_t{pre} + post, engine::TraceRecorder::kMaxSamples,
                                                engine::TraceRecorder::kMaxBytes >> 20)));
        return;
    }
    trace->id = nextTraceId_++;
    trace->program = module_;
    layout.task = task;
    trace->recorder = std::make_unique<engine::TraceRecorder>(layout, trigger, pre, post);
    trace->attached = true;
    Trace& t = *(traces_[slot] = std::move(trace)); // owned before a thread can sample it
    loop_.traceSlot(slot).attach(t.recorder.get(), task);
    reply(ControlAnswer::result(traceJson(t)));
}

// Why a trace ended early ("" when it did not): an online change it could not follow. Between the
// scan thread ending it and the control thread settling the change, the reason prepared for the
// change.
std::string RuntimeControl::traceEnded(const Trace& t) const {
    if (!t.ended.empty() || t.recorder->end() != engine::TraceEnd::ProgramChanged) {
        return t.ended;
    }
    return t.nextLoss.empty() ? "the program changed" : t.nextLoss;
}

std::string RuntimeControl::traceJson(const Trace& t) const {
    const std::string vars = variablesJson(t);
    const engine::TraceRecorder& r = *t.recorder;
    return fmt::format("{{\"id\":{},\"task\":{},\"variables\":[{}],\"trigger\":{},\"pre\":{},\"post\":{},"
                       "\"state\":\"{}\",\"running\":{},\"samples_taken\":{},\"ended\":{}}}",
                       t.id, ctl::quoted(t.task), vars, t.trigger.empty() ? "null" : ctl::quoted(t.trigger), r.pre(),
                       r.post(), stateName(r.state()), t.attached && r.state() != engine::TraceState::Done, r.taken(),
                       nullOrQuoted(traceEnded(t)));
}

void RuntimeControl::traceList(ControlReplyFn& reply) {
    std::string out;
    for (const std::unique_ptr<Trace>& t : traces_) {
        if (t != nullptr) {
            out += (out.empty() ? "" : ",") + traceJson(*t);
        }
    }
    reply(ControlAnswer::result(fmt::format("{{\"traces\":[{}]}}", out)));
}

void RuntimeControl::traceStop(const rapidjson::Value& params, ControlReplyFn& reply) {
    Trace* t = findTrace(params, reply);
    if (t == nullptr) {
        return;
    }
    detachTrace(*t);
    reply(ControlAnswer::result(traceJson(*t)));
}

void RuntimeControl::traceRemove(const rapidjson::Value& params, ControlReplyFn& reply) {
    Trace* t = findTrace(params, reply);
    if (t == nullptr) {
        return;
    }
    detachTrace(*t);
    for (std::unique_ptr<Trace>& slot : traces_) {
        if (slot.get() == t) {
            slot.reset();
        }
    }
    reply(ControlAnswer::result("{}"));
}

void RuntimeControl::detachTrace(Trace& t) {
    if (!t.attached) {
        return;
    }
    for (std::size_t i = 0; i < traces_.size(); ++i) {
        if (traces_[i].get() == &t) {
            loop_.traceSlot(i).detach();
        }
    }
    t.attached = false;
}

// trace.read: the samples of a trace that is done or stopped, oldest first, as rows of the
// cycle, the time from the trigger in ms and each variable's value; a page of them (offset,
// limit). CSV has one header line and the values as IEC literals but for numbers and BOOLs
// (1/0), which a spreadsheet reads as they are.
void RuntimeControl::traceRead(const rapidjson::Value& params, ControlReplyFn& reply) {
    Trace* t = findTrace(params, reply);
    if (t == nullptr) {
        return;
    }
    const engine::TraceRecorder& r = *t->recorder;
    if (t->attached && r.state() != engine::TraceState::Done) {
        reply(ControlAnswer::error(rpc::kCommandFailed,
                                   fmt::format("trace {} is {}: read it once it is done, or stop it first (trace.stop)",
                                               t->id, stateName(r.state()))));
        return;
    }
    const bool csv = params.HasMember("format") && std::string_view(params["format"].GetString()) == "csv";
    const std::size_t kept = r.kept();
    const std::size_t offset = params.HasMember("offset") ? params["offset"].GetUint() : 0;
    const std::size_t limit = params.HasMember("limit") ? params["limit"].GetUint() : 10'000;
    const std::size_t trigger = r.triggerAt();
    const std::int64_t zero = kept == 0 ? 0 : r.at(trigger < kept ? trigger : 0).timeNs;
    std::string rows;
    std::string columns; // after "cycle", "time_ms": the variables' names, as CSV or JSON
    for (const ctl::Target& v : t->targets) {
        columns += "," + (csv ? csvField(v.name) : ctl::quoted(v.name));
    }
    if (csv) {
        rows = "cycle,time_ms" + columns + "\n";
    }
    alignas(std::max_align_t) char scratch[4096];
    for (std::size_t i = offset; i < kept && i < offset + limit; ++i) {
        const engine::TraceRecorder::Sample s = r.at(i);
        const double ms = static_cast<double>(s.timeNs - zero) / 1e6;
        rows += csv ? fmt::format("{},{:.3f}", s.cycle, ms)
                    : fmt::format("{}[{},{:.3f}", i == offset ? "" : ",", s.cycle, ms);
        for (std::size_t c = 0; c < t->targets.size(); ++c) {
            engine::JsonAllocator alloc(scratch, sizeof scratch);
            rapidjson::Value v;
            ctl::encodeTyped(*t->program, t->targets[c], s.values + r.offset(c), v, alloc);
            // Numbers and BOOLs as they are (CSV: a BOOL as 1/0), everything else as its IEC
            // literal (T#1s, 'text', Mode#Auto).
            const rapidjson::Value* value = v.IsObject() && v.HasMember("value") ? &v["value"] : nullptr;
            if (value != nullptr && value->IsBool()) {
                rows += csv ? (value->GetBool() ? ",1" : ",0") : (value->GetBool() ? ",true" : ",false");
            } else if (value != nullptr && value->IsNumber()) {
                rows += "," + ctl::jsonText(*value);
            } else {
                rows += "," + (csv ? csvField(formatIecLiteral(v)) : ctl::quoted(formatIecLiteral(v)));
            }
        }
        rows += csv ? "\n" : "]";
    }
    const std::size_t count = offset < kept ? std::min(limit, kept - offset) : 0;
    const std::string head = fmt::format("\"id\":{},\"state\":\"{}\",\"ended\":{},\"samples\":{},\"trigger_index\":{},"
                                         "\"offset\":{},\"count\":{}",
                                         t->id, stateName(r.state()), nullOrQuoted(traceEnded(*t)), kept,
                                         trigger < kept ? std::to_string(trigger) : "null", offset, count);
    const std::string vars = variablesJson(*t);
    if (csv) {
        reply(
            ControlAnswer::result(fmt::format("{{{},\"variables\":[{}],\"csv\":{}}}", head, vars, ctl::quoted(rows))));
    } else {
        reply(ControlAnswer::result(
            fmt::format("{{{},\"variables\":[{}],\"columns\":[\"cycle\",\"time_ms\"{}],\"rows\":[{}]}}", head, vars,
                        columns, rows)));
    }
}

// Before an online change is submitted, with module_ already its program: every running trace's
// task and variables in that program, or an empty layout (the trace ends) when the task or one
// of the variables is gone or a variable changed its type. Without task threads a change may add,
// remove or reorder tasks, so the task is found again by its name.
void RuntimeControl::traceLayouts(std::span<engine::TraceLayout> out) {
    const bytecode::Module& m = *module_;
    for (std::size_t i = 0; i < traces_.size() && i < out.size(); ++i) {
        out[i] = engine::TraceLayout{};
        Trace* t = traces_[i].get();
        if (t == nullptr || !t->attached || t->recorder->state() == engine::TraceState::Done) {
            continue;
        }
        t->nextTargets.clear();
        t->nextLoss.clear();
        out[i].task = engine::TraceSlot::kBaseCycle;
        if (t->task.empty() && !m.tasks.empty()) {
            t->nextLoss = "the program an online change loaded has tasks: start the trace again naming one";
        } else if (!t->task.empty()) {
            if (const std::optional<std::uint32_t> named = taskNamed(m, t->task)) {
                out[i].task = *named;
            } else {
                t->nextLoss = fmt::format("task {} is not in the program an online change loaded", t->task);
            }
        }
        for (std::size_t c = 0; c < t->targets.size() && t->nextLoss.empty(); ++c) {
            ctl::Target moved;
            ControlAnswer ignored;
            if (!ctl::resolveVar(paths(), t->targets[c].name, moved, ignored, "variables")) {
                t->nextLoss = fmt::format("{} is not in the program an online change loaded", t->targets[c].name);
            } else if (engine::typeSignature(*module_, moved.type) != t->signatures[c]) {
                t->nextLoss = fmt::format("{} changed its type in an online change", t->targets[c].name);
            } else {
                out[i].ranges[c] = moved.range;
                t->nextTargets.push_back(std::move(moved));
            }
        }
        if (t->nextLoss.empty()) {
            out[i].module = module_.get();
            out[i].count = static_cast<std::uint32_t>(t->targets.size());
        }
    }
}

// After the online change (applied or refused): the traces that followed it resolve in its
// program; those it ended say why.
void RuntimeControl::settleTraces(const Pending& done, bool applied) {
    for (std::size_t i = 0; i < traces_.size(); ++i) {
        Trace* t = traces_[i].get();
        if (t == nullptr) {
            continue;
        }
        if (applied && done.traces[i].module != nullptr && t->recorder->end() != engine::TraceEnd::ProgramChanged) {
            t->targets = std::move(t->nextTargets);
            t->program = done.module;
        } else if (applied && t->recorder->end() == engine::TraceEnd::ProgramChanged && t->ended.empty()) {
            t->ended = t->nextLoss.empty() ? "the program changed" : t->nextLoss;
        }
        t->nextTargets.clear();
        t->nextLoss.clear();
    }
}

void RuntimeControl::emitTraceEvents(std::vector<std::string>& events) {
    for (const std::unique_ptr<Trace>& t : traces_) {
        if (t != nullptr && !t->announced && t->recorder->state() == engine::TraceState::Done) {
            t->announced = true;
            emit(events, "trace_done",
                 fmt::format("\"id\":{},\"samples\":{},\"ended\":{}", t->id, t->recorder->kept(),
                             nullOrQuoted(traceEnded(*t))));
        }
    }
}

void RuntimeControl::detachTraces() {
    for (const std::unique_ptr<Trace>& t : traces_) {
        if (t != nullptr) {
            detachTrace(*t);
        }
    }
}

} // namespace takt::agent
