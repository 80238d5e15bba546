// Function and exception breakpoints (docs/debugging.md). A function breakpoint is a breakpoint
// at the first statement of a POU named by the client, with the same hit counts and conditions as
// a line breakpoint (one path: breakpointRule); an exception breakpoint is a mask of run-time
// faults in the program's StopMap that the running thread reads only where a run faults
// (takt/vm/debug.h, Debugger::catches). Both are the debugging session's, set again in the new
// program at an online change (rebuildBreakpoints) and removed when the session ends.
#include <fmt/format.h>

#include "control/control_runtime_internal.h"
#include "takt/vm/debug.h"
#include "takt/vm/vm.h"

namespace takt::agent {

// Sets the session's function breakpoints in `stops` and answers how each one resolved there.
std::string RuntimeControl::applyFunctionBreakpoints(const bytecode::Module& m, vm::StopMap& stops) {
    std::string out;
    const std::string notHalting = haltsNot();
    for (const auto& [name, rule] : functionBreakpoints_) {
        vm::HitCondition hit;
        std::string why;
        std::uint32_t slot = vm::StopMap::kSlots;
        const vm::ResolvedLine r = vm::resolveFunction(m, name);
        if (!rule.hitCondition.empty() && !vm::parseHitCondition(rule.hitCondition, hit, why)) {
            // `why` names what is wrong with it
        } else if (!r.verified) {
            why = r.reason;
        } else if (!notHalting.empty()) {
            why = notHalting;
        } else if (breakpointRule(m, rule, r, hit, stops, slot, why) &&
                   !(slot == vm::StopMap::kSlots ? stops.setBreakpoint(r.pcs.front(), true)
                                                 : stops.setBreakpoint(r.pcs.front(), slot))) {
            why = ctl::kSlotsUsedUp;
        }
        std::string where;
        if (r.verified) {
            const vm::SourcePosition at = vm::sourceAt(m, r.pcs.front());
            const std::uint32_t pou = vm::pouAt(m, r.pcs.front());
            where = fmt::format(",\"pou\":{},\"file\":{},\"line\":{}", ctl::quoted(m.pous[pou].name),
                                ctl::quoted(at.file < m.files.size() ? m.files[at.file] : std::string()), r.line);
        }
        out += fmt::format("{}{{\"name\":{},\"verified\":{}{}{}}}", out.empty() ? "" : ",", ctl::quoted(name),
                           why.empty(), where, why.empty() ? "" : fmt::format(",\"reason\":{}", ctl::quoted(why)));
    }
    return "[" + out + "]";
}

// debug.setFunctionBreakpoints: the session's function breakpoints, replaced as a whole (as a DAP
// client sends them).
void RuntimeControl::debugSetFunctionBreakpoints(const rapidjson::Value& params, ControlReplyFn& reply) {
    if (reloadInFlight_) {
        reply(ControlAnswer::error(rpc::kCommandFailed, "a reload is in progress; retry when it is answered"));
        return;
    }
    if (claimDebugger(reply)) {
        return;
    }
    functionBreakpoints_.clear();
    for (const rapidjson::Value& b : ctl::member(params, "breakpoints")->GetArray()) { // the schema checked them
        functionBreakpoints_.emplace_back(ctl::text(b, "name"),
                                          Breakpoint{0, ctl::text(b, "hitCondition"), ctl::text(b, "condition"), {}});
    }
    std::string answer;
    (void)rebuildBreakpoints(*module_, *stops_, &answer);
    reply(ControlAnswer::result(fmt::format("{{\"breakpoints\":{}}}", answer)));
}

// debug.setExceptionBreakpoints: the filters (vm::kExceptionFilters) whose faults halt the task
// that runs into them, replacing the earlier ones; an unknown filter changes nothing.
void RuntimeControl::debugSetExceptionBreakpoints(const rapidjson::Value& params, ControlReplyFn& reply) {
    if (reloadInFlight_) {
        reply(ControlAnswer::error(rpc::kCommandFailed, "a reload is in progress; retry when it is answered"));
        return;
    }
    if (debugRefused(reply)) {
        return;
    }
    std::uint32_t traps = 0;
    std::string known;
    for (const vm::ExceptionFilter& f : vm::kExceptionFilters) {
        known += (known.empty() ? "" : ", ") + std::string(f.id);
    }
    const rapidjson::Value& filters = *ctl::member(params, "filters");
    for (const rapidjson::Value& f : filters.GetArray()) {
        std::uint32_t t = 0;
        if (!vm::exceptionTraps(std::string_view(f.GetString(), f.GetStringLength()), t)) {
            reply(ctl::badParam("filters",
                                fmt::format("no exception filter '{}' (the filters: {})", f.GetString(), known)));
            return;
        }
        traps |= t;
    }
    if (claimDebugger(reply)) {
        return;
    }
    exceptionTraps_ = traps;
    const std::string notHalting = haltsNot();
    stops_->setTrapMask(notHalting.empty() ? traps : 0);
    std::string out;
    for (const rapidjson::Value& f : filters.GetArray()) {
        out += fmt::format("{}{{\"filter\":{},\"verified\":{}{}}}", out.empty() ? "" : ",",
                           ctl::quoted(std::string(f.GetString(), f.GetStringLength())), notHalting.empty(),
                           notHalting.empty() ? "" : fmt::format(",\"reason\":{}", ctl::quoted(notHalting)));
    }
    reply(ControlAnswer::result(fmt::format("{{\"filters\":[{}]}}", out)));
}

} // namespace takt::agent
