// The outline of a checked chart (ast::SfcOutline), taken before the lowering moves its
// expressions into the POU's statements.
#include "sfc.h"

namespace takt::compiler {

namespace {

// A checked chart's PRIORITY is an integer literal (sfc_check.cpp): its value, whatever its form
// (`16#A`, `1_0`).
std::optional<std::uint64_t> priorityOf(const SfcTransition& t) {
    if (t.priority == nullptr) {
        return std::nullopt;
    }
    return static_cast<const ast::LiteralExpr&>(*t.priority).intValue;
}

} // namespace

std::shared_ptr<const ast::SfcOutline> outlineSfc(const SfcChart& chart, bool statements) {
    auto out = std::make_shared<ast::SfcOutline>();
    out->statements = statements;
    for (const SfcStep& s : chart.steps) {
        ast::SfcOutline::Step step{s.name, s.initial, {}};
        for (const SfcAssociation& a : s.actions) {
            step.actions.push_back({a.action, a.qualifier.name, a.duration != nullptr ? a.duration->span : Span{}});
        }
        out->steps.push_back(std::move(step));
    }
    for (const SfcTransition& t : chart.transitions) {
        out->transitions.push_back({t.name, t.from, t.to,
                                    t.hasBody || t.condition == nullptr ? Span{} : t.condition->span, priorityOf(t),
                                    t.span});
    }
    return out;
}

} // namespace takt::compiler
