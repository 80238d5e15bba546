// Logpoints (docs/debugging.md): a breakpoint's condition and log message compiled into the
// code its task's thread evaluates where it reaches the breakpoint (takt/vm/debug_expr.h), and the
// records that thread leaves in its Debugger's ring turned into debug_output events here, on the
// control thread, with the text around the values and the values as IEC literals.
#include <fmt/format.h>

#include "control/control_runtime_internal.h"
#include "control/debug_expr.h"
#include "takt/agent/iec_literal.h"
#include "takt/engine/values.h"
#include "takt/vm/debug.h"

namespace takt::agent {

// What a logpoint's record becomes: the text around its values, each value's kind and, for an
// enumeration, its values' names (copied: the record may outlive the program at an online change).
struct DebugLogFormat {
    std::vector<std::string> texts; // one more than the values
    std::vector<bytecode::ValueKind> kinds;
    std::vector<std::string> enumTypes; // "" unless an enumeration
    std::vector<std::vector<bytecode::EnumValueDesc>> enumValues;
    std::string file;
    std::uint32_t line = 0;
};

namespace {

std::string formatLogValue(const DebugLogFormat& f, std::size_t i, const vm::LogRecord& r) {
    if (r.status[i] != vm::ExprStatus::Ok) {
        return fmt::format("<{}>", vm::exprStatusText(r.status[i]));
    }
    for (const bytecode::EnumValueDesc& e : f.enumValues[i]) {
        if (e.value == r.values[i].i) {
            return f.enumTypes[i] + "#" + e.name;
        }
    }
    std::uint8_t bytes[8] = {};
    vm::storeSlot(f.kinds[i], r.values[i], bytes);
    rapidjson::Document doc;
    rapidjson::Value typed;
    engine::encodeElementary(f.kinds[i], bytes, typed, doc.GetAllocator());
    return formatIecLiteral(typed);
}

} // namespace

// A breakpoint's hit condition, condition and log message compiled into a slot of `stops` (none
// for a plain breakpoint: slot = kSlots). The condition and the log message's expressions are
// compiled here, on the control thread, in the scope of the POU the line is in, into code the
// task's thread runs where it reaches the breakpoint with no allocation, lock or exception.
bool RuntimeControl::breakpointRule(const bytecode::Module& m, const Breakpoint& b, const vm::ResolvedLine& r,
                                    const vm::HitCondition& hit, vm::StopMap& stops, std::uint32_t& slot,
                                    std::string& why) {
    slot = vm::StopMap::kSlots;
    if (b.hitCondition.empty() && b.condition.empty() && b.logMessage.empty()) {
        return true;
    }
    const std::uint32_t pou = vm::pouAt(m, r.pcs.front());
    std::shared_ptr<vm::DebugExpr> condition;
    if (!b.condition.empty()) {
        CompiledExpr c;
        ExprError e;
        if (!compileDebugExpr(m, pou, "", b.condition, c, e, true)) {
            why = "condition: " + e.text();
            return false;
        }
        if (c.code.kind != bytecode::ValueKind::Bool) {
            why = fmt::format("condition: E0201 at column 1: '{}' is no BOOL expression", b.condition);
            return false;
        }
        condition = std::make_shared<vm::DebugExpr>(std::move(c.code));
    }
    std::shared_ptr<vm::LogPoint> log;
    auto format = std::make_shared<DebugLogFormat>();
    if (!b.logMessage.empty()) {
        std::vector<std::pair<std::string, std::uint32_t>> parts;
        if (!splitLogMessage(b.logMessage, format->texts, parts, why)) {
            return false;
        }
        log = std::make_shared<vm::LogPoint>();
        log->id = nextLogId_++;
        for (const auto& [text, column] : parts) {
            CompiledExpr c;
            ExprError e;
            if (!compileDebugExpr(m, pou, "", text, c, e, true)) {
                why = fmt::format("log message: {} at column {}: {}", e.code, e.column + column, e.message);
                return false;
            }
            format->kinds.push_back(c.code.kind);
            const bool isEnum = c.valueType < m.types.size() && m.types[c.valueType].kind == bytecode::ValueKind::Enum;
            format->enumTypes.push_back(isEnum ? m.types[c.valueType].name : std::string());
            format->enumValues.push_back(isEnum ? m.types[c.valueType].enumValues
                                                : std::vector<bytecode::EnumValueDesc>());
            log->parts.push_back(std::move(c.code));
        }
        const vm::SourcePosition at = vm::sourceAt(m, r.pcs.front());
        format->file = at.file < m.files.size() ? m.files[at.file] : std::string();
        format->line = r.line;
    }
    slot = stops.addSlot(hit, condition.get(), log.get());
    if (slot == vm::StopMap::kSlots) {
        why = ctl::kSlotsUsedUp;
        return false;
    }
    stops.keep(condition);
    stops.keep(log);
    if (log != nullptr) {
        logFormats_[log->id] = std::move(format);
    }
    return true;
}

// Logpoints reached since the last poll, as debug_output events, and what a full ring dropped.
void RuntimeControl::emitLogOutput(std::vector<std::string>& events) {
    logsDroppedSeen_.resize(debugThreadCount(), 0);
    for (std::size_t t = 0; t < debugThreadCount(); ++t) {
        vm::Debugger* d = threadDebugger(t);
        if (d == nullptr) {
            continue;
        }
        vm::LogRecord rec;
        while (d->takeLog(rec)) {
            const auto it = logFormats_.find(rec.id);
            if (it == logFormats_.end()) {
                continue; // its breakpoint was set again meanwhile
            }
            const DebugLogFormat& f = *it->second;
            std::string text = f.texts.front();
            for (std::size_t i = 0; i < rec.count && i + 1 < f.texts.size(); ++i) {
                text += formatLogValue(f, i, rec) + f.texts[i + 1];
            }
            emit(events, "debug_output",
                 fmt::format("\"thread\":{},\"task\":{},\"output\":{},\"file\":{},\"line\":{}", t + 1,
                             ctl::quoted(threadName(t)), ctl::quoted(text), ctl::quoted(f.file), f.line));
        }
        if (const std::uint64_t dropped = d->logsDropped(); dropped < logsDroppedSeen_[t]) {
            logsDroppedSeen_[t] = dropped; // the task's thread was started again, with a new debugger
        } else if (dropped != logsDroppedSeen_[t]) {
            emit(events, "debug_output",
                 fmt::format("\"thread\":{},\"task\":{},\"output\":{},\"file\":\"\",\"line\":0", t + 1,
                             ctl::quoted(threadName(t)),
                             ctl::quoted(fmt::format("{} logpoint messages dropped: the task's queue of {} was full",
                                                     dropped - logsDroppedSeen_[t], vm::Debugger::kLogCapacity))));
            logsDroppedSeen_[t] = dropped;
        }
    }
}

} // namespace takt::agent
