// The outline of a checked chart (ast::SfcOutline), taken before the lowering moves its
// expressions into the POU's statements.
#include "sfc.h"

namespace takt::compiler {

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
                                    t.hasBody || t.condition == nullptr ? Span{} : t.condition->span,
                                    t.priority != nullptr ? t.priority->span : Span{}, t.span});
    }
    return out;
}

} // namespace takt::compiler
