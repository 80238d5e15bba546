// Flow control (docs/debugging.md): for one POU the debugging session names, the values each
// statement read and wrote the last time its task ran it, by source line, for an editor to show
// inline while the program runs. The recorder (takt/vm/flow.h) is filled by the task thread in the
// loop that can halt; this side plans it off the scan thread, hangs it in the program's stop map
// and reads the latest record the thread published.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "control/control_runtime_internal.h"
#include "takt/engine/values.h"
#include "takt/vm/debug.h"
#include "takt/vm/flow.h"

namespace takt::agent {

namespace {

// The POU that holds `line` of `file` (the first statement at or after it, as a breakpoint).
bool pouAtLine(const bytecode::Module& m, const std::string& file, std::uint32_t line, std::string& pou,
               std::string& why) {
    const std::uint32_t index = ctl::fileIndex(m, file);
    if (index == bytecode::kNone) {
        why = fmt::format("no file {} in the running program", file);
        return false;
    }
    const vm::ResolvedLine r = vm::resolveLine(m, index, line);
    if (!r.verified) {
        why = r.reason;
        return false;
    }
    pou = m.pous[vm::pouAt(m, r.pcs.front())].name;
    return true;
}

// The image offset of `instance`, which must be an instance of `pou` (its PROGRAM instance, an
// FB instance of its type, or of the FB a METHOD belongs to).
bool instanceOffset(const bytecode::Module& m, const bytecode::PouEntry& pou, const std::string& instance,
                    std::uint32_t& offset, std::string& why) {
    if (pou.instanceType == bytecode::kNone || pou.kind == bytecode::PouKind::Function) {
        why = fmt::format("{} is a FUNCTION: it has no instances to choose from", pou.name);
        return false;
    }
    engine::VarRef ref;
    if (!engine::resolvePath(m, instance, ref, why)) {
        return false;
    }
    if (ref.type != pou.instanceType) {
        why = fmt::format("{} is not an instance of {}", instance, pou.name);
        return false;
    }
    offset = ref.offset;
    return true;
}

} // namespace

// The recorder for `pou` (and `instance`) in `m`, planned off the scan thread; null with `why`.
std::shared_ptr<vm::FlowRecorder> RuntimeControl::planFlow(const bytecode::Module& m, const std::string& pou,
                                                           const std::string& instance, std::string& why) const {
    const vm::ResolvedLine first = vm::resolveFunction(m, pou);
    if (!first.verified) {
        why = first.reason;
        return nullptr;
    }
    const std::uint32_t index = vm::pouAt(m, first.pcs.front());
    std::uint32_t offset = vm::kAnyInstance;
    if (!instance.empty() && !instanceOffset(m, m.pous[index], instance, offset, why)) {
        return nullptr;
    }
    vm::FlowPlan plan;
    if (!vm::planFlow(m, index, plan, why)) {
        return nullptr;
    }
    return std::make_shared<vm::FlowRecorder>(std::move(plan), offset);
}

// The map owns the recorder it points to; the one it replaces is retired, since a task thread may
// still be filling it.
void RuntimeControl::hangFlow(vm::StopMap& stops, std::shared_ptr<vm::FlowRecorder> recorder) {
    retire({stops.replaceFlow(std::move(recorder))});
}

void RuntimeControl::stopFlow() {
    flowPou_.clear();
    flowInstance_.clear();
    flowEnded_.clear();
    if (stops_ != nullptr) {
        retire({stops_->replaceFlow(nullptr)});
    }
}

// An online change: the same POU (and instance) in the program it brings, or the reason it ends.
void RuntimeControl::carryFlow(const bytecode::Module& m, vm::StopMap& next) {
    if (flowPou_.empty()) {
        return;
    }
    std::string why;
    if (std::shared_ptr<vm::FlowRecorder> recorder = planFlow(m, flowPou_, flowInstance_, why)) {
        hangFlow(next, std::move(recorder));
    } else {
        flowEnded_ = fmt::format("the online change ended flow control: {}", why);
    }
}

// debug.setFlow: watch one POU (by name, or the POU holding a file's line), optionally on one
// instance; without either, flow control ends.
void RuntimeControl::debugSetFlow(const rapidjson::Value& params, ControlReplyFn& reply) {
    if (reloadInFlight_) {
        reply(ControlAnswer::error(rpc::kCommandFailed, "a reload is in progress; retry when it is answered"));
        return;
    }
    std::string pou = ctl::text(params, "pou");
    const std::string file = ctl::text(params, "file");
    const rapidjson::Value* line = ctl::member(params, "line");
    const std::string instance = ctl::text(params, "instance");
    if (!pou.empty() && !file.empty()) {
        reply(ctl::badParam("file", "name the POU by \"pou\" or by \"file\" and \"line\", not both"));
        return;
    }
    if (!file.empty() && line == nullptr) {
        reply(ctl::badParam("line", "\"file\" needs the \"line\" of a statement in the POU"));
        return;
    }
    std::string why;
    if (!file.empty() && !pouAtLine(*module_, file, line->GetUint(), pou, why)) {
        reply(ctl::badParam("line", why));
        return;
    }
    if (pou.empty() && !instance.empty()) {
        reply(ctl::badParam("instance", "an instance needs the POU (\"pou\", or \"file\" and \"line\")"));
        return;
    }
    // Checked and planned before the session claims the debugger: a refused request changes nothing.
    std::shared_ptr<vm::FlowRecorder> recorder;
    if (!pou.empty()) {
        recorder = planFlow(*module_, pou, instance, why);
        if (recorder == nullptr) {
            reply(ctl::badParam(file.empty() ? (instance.empty() ? "pou" : "instance") : "line", why));
            return;
        }
    }
    if (claimDebugger(reply)) {
        return;
    }
    if (recorder == nullptr) {
        stopFlow();
        reply(ControlAnswer::result(R"({"pou":null})"));
        return;
    }
    hangFlow(*stops_, recorder);
    const vm::FlowPlan& plan = recorder->plan();
    flowPou_ = module_->pous[plan.pou].name;
    flowInstance_ = instance;
    flowEnded_.clear();
    std::vector<std::uint32_t> lines;
    for (const vm::FlowStatement& s : plan.statements) {
        lines.push_back(s.line);
    }
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    const std::uint32_t f = plan.statements.front().file;
    reply(ControlAnswer::result(fmt::format(R"({{"pou":{},"instance":{},"file":{},"lines":[{}]}})",
                                            ctl::quoted(flowPou_), instance.empty() ? "null" : ctl::quoted(instance),
                                            ctl::quoted(f < module_->files.size() ? module_->files[f] : std::string()),
                                            fmt::join(lines, ","))));
}

// debug.flowValues: the last run of the POU by line, each line with how often it ran and what its
// statements read and wrote (from the statement of the line that ran last, for a line with several).
void RuntimeControl::debugFlowValues(ControlReplyFn& reply) {
    vm::FlowRecorder* flow = stops_ != nullptr ? stops_->flow() : nullptr;
    if (flow == nullptr) {
        reply(ControlAnswer::error(rpc::kCommandFailed, flowEnded_.empty()
                                                            ? std::string("no flow control is on: debug.setFlow first")
                                                            : flowEnded_));
        return;
    }
    const vm::FlowPlan& plan = flow->plan();
    vm::FlowRecorder::View view;
    const bool recorded = flow->latest(view);
    std::string task = "null";
    for (std::size_t t = 0; t < debugThreadCount(); ++t) {
        if (threadDebugger(t) != nullptr && threadDebugger(t) == flow->owner()) {
            task = ctl::quoted(threadName(t));
        }
    }
    // Per line: the statements that ran, latest last.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint32_t>> lines;
    for (std::uint32_t i = 0; recorded && i < plan.statements.size(); ++i) {
        if (view.counts[i] != 0) {
            lines[{plan.statements[i].file, plan.statements[i].line}].push_back(i);
        }
    }
    rapidjson::Document doc;
    std::string out;
    for (auto& [where, statements] : lines) {
        std::sort(statements.begin(), statements.end(),
                  [&view](std::uint32_t a, std::uint32_t b) { return view.order[a] < view.order[b]; });
        std::uint32_t count = 0;
        // name + access -> its value text, the latest statement's winning.
        std::map<std::pair<std::string, bool>, std::string> values;
        std::vector<std::pair<std::string, bool>> order;
        for (const std::uint32_t i : statements) {
            count = std::max(count, view.counts[i]);
            const vm::FlowStatement& s = plan.statements[i];
            for (std::uint32_t k = s.firstAccess; k < s.firstAccess + s.accessCount; ++k) {
                const vm::FlowAccess& a = plan.accesses[k];
                rapidjson::Value v;
                engine::encodeValue(*module_, a.type, view.values.data() + a.slot, v, doc.GetAllocator());
                const std::pair<std::string, bool> key{a.name, a.written};
                if (values.find(key) == values.end()) {
                    order.push_back(key);
                }
                values[key] = fmt::format(R"({{"name":{},"access":"{}","type":{},"value":{}}})", ctl::quoted(a.name),
                                          a.written ? "write" : "read", ctl::quoted(module_->types[a.type].name),
                                          ctl::jsonText(v));
            }
        }
        std::string entries;
        for (const auto& key : order) {
            entries += (entries.empty() ? "" : ",") + values[key];
        }
        out += fmt::format(R"({}{{"file":{},"line":{},"count":{},"values":[{}]}})", out.empty() ? "" : ",",
                           ctl::quoted(where.first < module_->files.size() ? module_->files[where.first] : ""),
                           where.second, count, entries);
    }
    reply(ControlAnswer::result(fmt::format(
        R"({{"pou":{},"instance":{},"task":{},"run":{},"lines":[{}]}})", ctl::quoted(module_->pous[plan.pou].name),
        flowInstance_.empty() ? "null" : ctl::quoted(flowInstance_), task, recorded ? view.run : 0, out)));
}

} // namespace takt::agent
