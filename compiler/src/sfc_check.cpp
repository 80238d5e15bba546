// Checking an SFC chart before it is lowered (sfc_chart.h): E0025 for what cannot run, each at
// the step, association or transition to fix. Nothing of a chart with an error is lowered.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sfc_chart.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sfc {

namespace {

struct Checker {
    const ChartView& view;
    DiagnosticSink& diags;
    const ast::PouDecl& pou = view.pou;
    const SfcChart& chart = view.chart;

    // The step of an earlier SD, DS or SL association of a's action with the same qualifier.
    const SfcStep* timedStoreBefore(const SfcAssociation& a, Qualifier q) const {
        if (std::find(std::begin(kTimedStores), std::end(kTimedStores), q) == std::end(kTimedStores)) {
            return nullptr;
        }
        for (const SfcStep& s : chart.steps) {
            for (const SfcAssociation& b : s.actions) {
                if (&b == &a) {
                    return nullptr;
                }
                if (sameName(b.action.name, a.action.name) && qualifierOf(b.qualifier.name) == q) {
                    return &s;
                }
            }
        }
        return nullptr;
    }

    // A transition's name (unique, no step's) and body (named, no RETURN or JMP).
    bool checkTransition(const SfcTransition& t, std::size_t index) {
        bool ok = true;
        if (t.name.name.empty()) {
            if (t.hasBody) {
                diags.report(DiagCode::SfcInvalid, t.span,
                             "a transition with a body needs a name for the body to assign its condition to: "
                             "TRANSITION Go FROM a TO b : Go := …; END_TRANSITION");
                ok = false;
            }
        } else if (view.findStep(t.name.name) != nullptr) {
            diags.report(DiagCode::SfcInvalid, t.name.span,
                         fmt::format("transition '{}' is named like a step", t.name.name));
            ok = false;
        } else {
            for (std::size_t j = 0; j < index; ++j) {
                if (sameName(chart.transitions[j].name.name, t.name.name)) {
                    diags.report(DiagCode::SfcInvalid, t.name.span,
                                 fmt::format("transition '{}' is declared twice", t.name.name));
                    ok = false;
                    break;
                }
            }
        }
        if (t.priority != nullptr &&
            (t.priority->kind != ast::ExprKind::Literal ||
             static_cast<const ast::LiteralExpr&>(*t.priority).literalKind != ast::LiteralKind::Int ||
             static_cast<const ast::LiteralExpr&>(*t.priority).negative)) {
            diags.report(DiagCode::SfcInvalid, t.priority->span,
                         "a transition's PRIORITY is a number, 0 or more: TRANSITION (PRIORITY := 1) FROM a TO b");
            ok = false;
        }
        if (const ast::Stmt* e = escapeOf(t.body); e != nullptr) {
            diags.report(DiagCode::SfcInvalid, e->span,
                         "RETURN, a label or JMP in a transition's body: the body only computes the condition");
            ok = false;
        }
        return ok;
    }

    bool checkAssociation(const SfcAssociation& a) {
        const Qualifier q = qualifierOf(a.qualifier.name);
        if (q == Qualifier::Unknown) {
            diags.report(DiagCode::SfcInvalid, a.qualifier.span,
                         fmt::format("'{}' is no action qualifier ({})", a.qualifier.name, qualifierNames()));
            return false;
        }
        if (timed(q) != (a.duration != nullptr)) {
            diags.report(DiagCode::SfcInvalid, a.span,
                         a.duration == nullptr
                             ? fmt::format("qualifier {} needs a time: {}({}, T#5s)", upperName(a.qualifier.name),
                                           a.action.name, upperName(a.qualifier.name))
                             : fmt::format("qualifier {} takes no time", upperName(a.qualifier.name)));
            return false;
        }
        if (const SfcStep* other = timedStoreBefore(a, q); other != nullptr) {
            diags.report(DiagCode::SfcInvalid, a.span,
                         fmt::format("action '{}' has a second {} association (the first is in step '{}'): "
                                     "an action has one {} flag and one time",
                                     a.action.name, upperName(a.qualifier.name), other->name.name,
                                     upperName(a.qualifier.name)));
            return false;
        }
        return true;
    }

    bool check() {
        bool ok = true;
        const SfcStep* initial = nullptr;
        for (const SfcStep& s : chart.steps) {
            if (view.findStep(s.name.name) != &s) {
                diags.report(DiagCode::SfcInvalid, s.name.span,
                             fmt::format("step '{}' is declared twice", s.name.name));
                ok = false;
            }
            if (s.initial && initial != nullptr) {
                diags.report(DiagCode::SfcInvalid, s.name.span,
                             fmt::format("a second INITIAL_STEP '{}': '{}' is the chart's initial step", s.name.name,
                                         initial->name.name));
                ok = false;
            } else if (s.initial) {
                initial = &s;
            }
            for (const SfcAssociation& a : s.actions) {
                ok = checkAssociation(a) && ok;
            }
        }
        if (initial == nullptr && !chart.steps.empty()) {
            diags.report(
                DiagCode::SfcInvalid, chart.steps.front().name.span,
                fmt::format("the chart of {} '{}' has no INITIAL_STEP", ast::pouKeyword(pou.pouKind), pou.name.name));
            ok = false;
        }
        for (const SfcTransition& t : chart.transitions) {
            for (const auto* names : {&t.from, &t.to}) {
                for (std::size_t i = 0; i < names->size(); ++i) {
                    const ast::Identifier& n = (*names)[i];
                    if (n.name.empty()) {
                        ok = false; // a syntax error, reported where the name is missing
                    } else if (view.findStep(n.name) == nullptr) {
                        diags.report(DiagCode::SfcInvalid, n.span,
                                     fmt::format("transition names '{}', which is no step of {} '{}'", n.name,
                                                 ast::pouKeyword(pou.pouKind), pou.name.name));
                        ok = false;
                    } else if (position(*names, n.name) < i) {
                        diags.report(DiagCode::SfcInvalid, n.span,
                                     fmt::format("step '{}' is named twice in this transition's {} list", n.name,
                                                 names == &t.from ? "FROM" : "TO"));
                        ok = false;
                    }
                }
            }
        }
        for (std::size_t i = 0; i < chart.transitions.size(); ++i) {
            ok = checkTransition(chart.transitions[i], i) && ok;
        }
        if (chart.steps.empty()) {
            diags.report(
                DiagCode::SfcInvalid, chart.transitions.front().span,
                fmt::format("{} '{}' has transitions but no steps", ast::pouKeyword(pou.pouKind), pou.name.name));
            ok = false;
        }
        if (ok) {
            ok = checkSafe();
        }
        for (const char* flag : kChartFlags) {
            if (const ast::VarDecl* d = view.userVariable(flag); d != nullptr && !isBool(*d)) {
                diags.report(DiagCode::SfcInvalid, d->span,
                             fmt::format("'{}' controls the chart of {} '{}' and must be a BOOL", flag,
                                         ast::pouKeyword(pou.pouKind), pou.name.name));
                ok = false;
            }
        }
        return ok;
    }

    // Where a step lies: the simultaneous branches it is inside, outermost first, each as the
    // index of the transition that opened it (its divergence, opener()) and the branch's index there.
    using BranchPath = std::vector<std::pair<std::size_t, std::size_t>>;

    // "in the branch of 'Heat' of the simultaneous divergence into (Heat, Mix), inside the branch
    // of 'FillA' of …": the whole nesting, innermost first; a divergence named by the steps it
    // enters (several transitions may open it).
    std::string describe(const BranchPath& p) const {
        if (p.empty()) {
            return "outside any simultaneous branch";
        }
        std::string s;
        for (auto it = p.rbegin(); it != p.rend(); ++it) {
            const SfcTransition& d = chart.transitions[it->first];
            std::string into;
            for (const ast::Identifier& to : d.to) {
                into += (into.empty() ? "" : ", ") + to.name;
            }
            s += fmt::format("{}the branch of '{}' of the simultaneous divergence into ({})",
                             it == p.rbegin() ? "in " : ", inside ", d.to[it->second].name, into);
        }
        return s;
    }

    // Where `name` is in `steps` (any case); steps.size() when it is not.
    static std::size_t position(const std::vector<ast::Identifier>& steps, std::string_view name) {
        return static_cast<std::size_t>(
            std::find_if(steps.begin(), steps.end(), [&](const ast::Identifier& s) { return sameName(s.name, name); }) -
            steps.begin());
    }

    // The transition whose simultaneous divergence transition ti enters: the first one entering
    // the same steps (each list names a step once: check()). Exclusive steps joined by a selection convergence right
    // before a simultaneous divergence (CODESYS draws `FROM FillA TO (Heat, Mix)` and `FROM FillB TO (Heat, Mix)` so)
    // have a transition each, which all open the one divergence.
    std::size_t opener(std::size_t ti) const {
        for (std::size_t j = 0; j < ti; ++j) {
            if (sameSteps(chart.transitions[j].to, chart.transitions[ti].to)) {
                return j;
            }
        }
        return ti;
    }

    // IEC 61131-3 requires safe charts: following the transitions from the initial step, every
    // step lies in one place of the nesting of simultaneous branches, and a simultaneous
    // convergence closes exactly the branches one divergence opened. A transition that leaves
    // a branch otherwise (a jump out of it) would leave the other branches' steps active for
    // ever, or let a step be activated twice. E0025 at the transition that breaks it.
    bool checkSafe() {
        std::vector<std::optional<BranchPath>> at(chart.steps.size());
        auto index = [&](const ast::Identifier& n) {
            return static_cast<std::size_t>(view.findStep(n.name) - chart.steps.data());
        };
        for (std::size_t i = 0; i < chart.steps.size(); ++i) {
            if (chart.steps[i].initial) {
                at[i] = BranchPath{};
            }
        }
        bool ok = true;
        std::vector<bool> done(chart.transitions.size(), false);
        for (bool progress = true; progress;) { // each pass settles at least one transition
            progress = false;
            for (std::size_t ti = 0; ti < chart.transitions.size(); ++ti) {
                const SfcTransition& t = chart.transitions[ti];
                if (done[ti] || !std::all_of(t.from.begin(), t.from.end(),
                                             [&](const ast::Identifier& f) { return at[index(f)].has_value(); })) {
                    continue;
                }
                done[ti] = true;
                progress = true;
                BranchPath base = *at[index(t.from.front())];
                if (t.from.size() > 1) {
                    bool joins = !base.empty() && chart.transitions[base.back().first].to.size() == t.from.size();
                    std::vector<bool> seen(joins ? t.from.size() : 0, false);
                    for (const ast::Identifier& f : t.from) {
                        const BranchPath& p = *at[index(f)];
                        joins = joins && p.size() == base.size() && std::equal(p.begin(), p.end() - 1, base.begin()) &&
                                p.back().first == base.back().first && !seen[p.back().second];
                        if (joins) {
                            seen[p.back().second] = true;
                        }
                    }
                    if (!joins) {
                        diags.report(DiagCode::SfcInvalid, t.span,
                                     "this simultaneous convergence does not join exactly the branches of one "
                                     "simultaneous divergence: IEC 61131-3 requires a safe chart, where a "
                                     "convergence closes every branch a divergence opened, and nothing else");
                        ok = false;
                        continue;
                    }
                    base.pop_back();
                }
                const std::size_t divergence = opener(ti);
                for (const ast::Identifier& to : t.to) {
                    BranchPath p = base;
                    if (t.to.size() > 1) {
                        p.emplace_back(divergence, position(chart.transitions[divergence].to, to.name));
                    }
                    std::optional<BranchPath>& target = at[index(to)];
                    if (!target) {
                        target = std::move(p);
                    } else if (*target != p) {
                        diags.report(
                            DiagCode::SfcInvalid, to.span,
                            fmt::format(
                                "step '{}' lies {}, but this transition would put it {}: a transition may enter a "
                                "simultaneous branch only through the divergence that opens it and leave it only "
                                "through the convergence that closes it (IEC 61131-3 requires a safe chart)",
                                to.name, describe(*target), describe(p)));
                        ok = false;
                    }
                }
            }
        }
        return ok;
    }
};

} // namespace

bool checkChart(const ChartView& view, DiagnosticSink& diags) {
    Checker c{view, diags};
    return c.check();
}

} // namespace takt::compiler::sfc
