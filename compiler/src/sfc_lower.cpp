// Lowering an SFC chart (sfc.h) to the POU's own variables and Structured Text statements, so
// that analysis, code generation, the debugger and `var.read` see an ordinary POU: step S is
// the variable `S : SFC_STEP` (X, T and the chart's bookkeeping), a stored action A the BOOL
// `A$S` ('$' cannot occur in an ST name, so no user variable can clash). Generated nodes carry
// the span of the step, association or transition they come from, so diagnostics point there.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sfc.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

namespace {

using ast::ExprPtr;
using ast::StmtPtr;

ast::Identifier ident(std::string name, Span span) {
    return ast::Identifier{std::move(name), span};
}

ExprPtr nameOf(const ast::Identifier& id) {
    auto e = std::make_unique<ast::NameExpr>(id.span);
    e->name = id;
    return e;
}

// `step.field`
ExprPtr field(const ast::Identifier& step, const char* member) {
    auto m = std::make_unique<ast::MemberExpr>(step.span);
    m->object = nameOf(step);
    m->member = ident(member, step.span);
    return m;
}

ExprPtr boolean(bool value, Span span) {
    auto lit = std::make_unique<ast::LiteralExpr>(span);
    lit->literalKind = ast::LiteralKind::Bool;
    lit->boolValue = value;
    return lit;
}

ExprPtr binary(ast::BinaryOp op, ExprPtr lhs, ExprPtr rhs) {
    auto b = std::make_unique<ast::BinaryExpr>(lhs->span);
    b->op = op;
    b->lhs = std::move(lhs);
    b->rhs = std::move(rhs);
    return b;
}

ExprPtr notOf(ExprPtr e) {
    auto u = std::make_unique<ast::UnaryExpr>(e->span);
    u->op = ast::UnaryOp::Not;
    u->operand = std::move(e);
    return u;
}

// TIME(): the cycle's clock (fixed for the cycle, virtual in the harness).
ExprPtr plcTime(Span span) {
    auto c = std::make_unique<ast::CallExpr>(span);
    c->callee = nameOf(ident("TIME", span));
    return c;
}

StmtPtr assign(ExprPtr target, ExprPtr value) {
    auto a = std::make_unique<ast::AssignStmt>(target->span);
    a->target = std::move(target);
    a->value = std::move(value);
    return a;
}

StmtPtr ifThen(ExprPtr condition, ast::StmtList body) {
    auto s = std::make_unique<ast::IfStmt>(condition->span);
    ast::CondBlock b;
    b.span = condition->span;
    b.condition = std::move(condition);
    b.body = std::move(body);
    s->branches.push_back(std::move(b));
    return s;
}

template <typename... S> ast::StmtList list(S&&... stmts) {
    ast::StmtList out;
    (out.push_back(std::forward<S>(stmts)), ...);
    return out;
}

enum class Qualifier : std::uint8_t { N, R, S, P, P0, P1, L, D, SD, DS, SL, Unknown };

// The qualifiers that take a time (IEC 61131-3 table 45: L, D, SD, DS, SL).
bool timed(Qualifier q) {
    return q == Qualifier::L || q == Qualifier::D || q == Qualifier::SD || q == Qualifier::DS || q == Qualifier::SL;
}

// The stored qualifiers whose flag has a time of its own: one association of each per action.
constexpr Qualifier kTimedStores[] = {Qualifier::SD, Qualifier::DS, Qualifier::SL};

std::string_view storeSuffix(Qualifier q) {
    switch (q) {
    case Qualifier::SD: return "$SD";
    case Qualifier::DS: return "$DS";
    case Qualifier::SL: return "$SL";
    default: return "$S";
    }
}

Qualifier qualifierOf(std::string_view q) {
    static constexpr std::pair<std::string_view, Qualifier> kQualifiers[] = {
        {"", Qualifier::N},    {"N", Qualifier::N},   {"R", Qualifier::R},   {"S", Qualifier::S},
        {"P", Qualifier::P},   {"L", Qualifier::L},   {"D", Qualifier::D},   {"P0", Qualifier::P0},
        {"P1", Qualifier::P1}, {"SD", Qualifier::SD}, {"DS", Qualifier::DS}, {"SL", Qualifier::SL},
    };
    for (const auto& [name, value] : kQualifiers) {
        if (sameName(q, name)) {
            return value;
        }
    }
    return Qualifier::Unknown;
}

struct Lowering {
    ast::PouDecl& pou;
    SfcChart& chart;
    DiagnosticSink& diags;

    const SfcStep* findStep(std::string_view name) const {
        for (const SfcStep& s : chart.steps) {
            if (sameName(s.name.name, name)) {
                return &s;
            }
        }
        return nullptr;
    }

    bool isAction(std::string_view name) const {
        for (const auto& m : pou.methods) {
            if (m->isAction && sameName(m->name.name, name)) {
                return true;
            }
        }
        return false;
    }

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

    // A RETURN, label or JMP in a transition's body: it would leave the chart's evolution
    // half done (the body is spliced into the POU's statements).
    static const ast::Stmt* escape(const ast::StmtList& body) {
        for (const StmtPtr& st : body) {
            const ast::Stmt* found = nullptr;
            switch (st->kind) {
            case ast::StmtKind::Return:
            case ast::StmtKind::Label:
            case ast::StmtKind::Jump: return st.get();
            case ast::StmtKind::If: {
                const auto& s = static_cast<const ast::IfStmt&>(*st);
                for (const ast::CondBlock& b : s.branches) {
                    found = found != nullptr ? found : escape(b.body);
                }
                found = found != nullptr ? found : escape(s.elseBody);
                break;
            }
            case ast::StmtKind::Case: {
                const auto& s = static_cast<const ast::CaseStmt&>(*st);
                for (const ast::CaseBranch& b : s.branches) {
                    found = found != nullptr ? found : escape(b.body);
                }
                found = found != nullptr ? found : escape(s.elseBody);
                break;
            }
            case ast::StmtKind::For: found = escape(static_cast<const ast::ForStmt&>(*st).body); break;
            case ast::StmtKind::While: found = escape(static_cast<const ast::WhileStmt&>(*st).body); break;
            case ast::StmtKind::Repeat: found = escape(static_cast<const ast::RepeatStmt&>(*st).body); break;
            default: break;
            }
            if (found != nullptr) {
                return found;
            }
        }
        return nullptr;
    }

    // E0025 for a transition's name (unique, no step's) and body (named, no RETURN or JMP).
    bool checkTransition(const SfcTransition& t, std::size_t index) {
        bool ok = true;
        if (t.name.name.empty()) {
            if (t.hasBody) {
                diags.report(DiagCode::SfcInvalid, t.span,
                             "a transition with a body needs a name for the body to assign its condition to: "
                             "TRANSITION Go FROM a TO b : Go := …; END_TRANSITION");
                ok = false;
            }
        } else if (findStep(t.name.name) != nullptr) {
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
        if (const ast::Stmt* e = escape(t.body); e != nullptr) {
            diags.report(DiagCode::SfcInvalid, e->span,
                         "RETURN, a label or JMP in a transition's body: the body only computes the condition");
            ok = false;
        }
        return ok;
    }

    // E0025 for what cannot run; true when the chart is sound.
    bool check() {
        bool ok = true;
        const SfcStep* initial = nullptr;
        for (std::size_t i = 0; i < chart.steps.size(); ++i) {
            const SfcStep& s = chart.steps[i];
            if (findStep(s.name.name) != &s) {
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
                const Qualifier q = qualifierOf(a.qualifier.name);
                if (q == Qualifier::Unknown) {
                    diags.report(DiagCode::SfcInvalid, a.qualifier.span,
                                 fmt::format("'{}' is no action qualifier (N, R, S, P, L, D, P0, P1, SD, DS, SL)",
                                             a.qualifier.name));
                    ok = false;
                } else if (timed(q) != (a.duration != nullptr)) {
                    diags.report(DiagCode::SfcInvalid, a.span,
                                 a.duration == nullptr
                                     ? fmt::format("qualifier {} needs a time: {}({}, T#5s)",
                                                   upperName(a.qualifier.name), a.action.name,
                                                   upperName(a.qualifier.name))
                                     : fmt::format("qualifier {} takes no time", upperName(a.qualifier.name)));
                    ok = false;
                } else if (const SfcStep* other = timedStoreBefore(a, q); other != nullptr) {
                    diags.report(DiagCode::SfcInvalid, a.span,
                                 fmt::format("action '{}' has a second {} association (the first is in step '{}'): "
                                             "an action has one {} flag and one time",
                                             a.action.name, upperName(a.qualifier.name), other->name.name,
                                             upperName(a.qualifier.name)));
                    ok = false;
                }
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
                for (const ast::Identifier& n : *names) {
                    if (!n.name.empty() && findStep(n.name) == nullptr) {
                        diags.report(DiagCode::SfcInvalid, n.span,
                                     fmt::format("transition names '{}', which is no step of {} '{}'", n.name,
                                                 ast::pouKeyword(pou.pouKind), pou.name.name));
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
            if (const ast::VarDecl* d = userVariable(flag); d != nullptr && !isBool(*d)) {
                diags.report(DiagCode::SfcInvalid, d->span,
                             fmt::format("'{}' controls the chart of {} '{}' and must be a BOOL", flag,
                                         ast::pouKeyword(pou.pouKind), pou.name.name));
                ok = false;
            }
        }
        return ok;
    }

    // Where a step lies: the simultaneous branches it is inside, outermost first, each as the
    // index of the transition that opened it (its divergence) and the branch's index there.
    using BranchPath = std::vector<std::pair<std::size_t, std::size_t>>;

    std::string describe(const BranchPath& p) const {
        if (p.empty()) {
            return "outside any simultaneous branch";
        }
        const SfcTransition& d = chart.transitions[p.back().first];
        return fmt::format("in the branch of '{}' that the simultaneous divergence from '{}' opens",
                           d.to[p.back().second].name, d.from.front().name);
    }

    // IEC 61131-3 requires safe charts: following the transitions from the initial step, every
    // step lies in one place of the nesting of simultaneous branches, and a simultaneous
    // convergence closes exactly the branches one divergence opened. A transition that leaves
    // a branch otherwise (a jump out of it) would leave the other branches' steps active for
    // ever, or let a step be activated twice. E0025 at the transition that breaks it.
    bool checkSafe() {
        std::vector<std::optional<BranchPath>> at(chart.steps.size());
        auto index = [&](const ast::Identifier& n) {
            return static_cast<std::size_t>(findStep(n.name) - chart.steps.data());
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
                for (std::size_t k = 0; k < t.to.size(); ++k) {
                    BranchPath p = base;
                    if (t.to.size() > 1) {
                        p.emplace_back(ti, k);
                    }
                    std::optional<BranchPath>& target = at[index(t.to[k])];
                    if (!target) {
                        target = std::move(p);
                    } else if (*target != p) {
                        diags.report(
                            DiagCode::SfcInvalid, t.to[k].span,
                            fmt::format(
                                "step '{}' lies {}, but this transition would put it {}: a transition may leave a "
                                "simultaneous branch only through the convergence that closes it "
                                "(IEC 61131-3 requires a safe chart)",
                                t.to[k].name, describe(*target), describe(p)));
                        ok = false;
                    }
                }
            }
        }
        return ok;
    }

    // CODESYS's implicit chart flags, honoured when the POU declares them.
    static constexpr const char* kChartFlags[] = {"SFCInit", "SFCReset", "SFCPause"};

    // The POU's own declaration of `name`, if any.
    const ast::VarDecl* userVariable(std::string_view name) const {
        for (const ast::VarBlock& b : pou.varBlocks) {
            for (const ast::VarDecl& d : b.vars) {
                for (const ast::Identifier& n : d.names) {
                    if (sameName(n.name, name)) {
                        return &d;
                    }
                }
            }
        }
        return nullptr;
    }

    static bool isBool(const ast::VarDecl& d) {
        return d.type != nullptr && d.type->kind == ast::TypeSpecKind::Named &&
               static_cast<const ast::NamedTypeSpec&>(*d.type).name.parts.size() == 1 &&
               sameName(static_cast<const ast::NamedTypeSpec&>(*d.type).name.parts[0].name, "BOOL");
    }

    // The declared flag's name (as the user spelled it), or an empty identifier.
    ast::Identifier chartFlag(std::string_view name) const {
        const ast::VarDecl* d = userVariable(name);
        if (d == nullptr) {
            return {};
        }
        for (const ast::Identifier& n : d->names) {
            if (sameName(n.name, name)) {
                return n;
            }
        }
        return {};
    }

    // SFCInit / SFCReset: every step back to its initial state (only the initial step active,
    // as entered now), every action's flags and every Boolean action FALSE. No final scan: the
    // chart starts afresh, as CODESYS resets its actions.
    ast::StmtList resetStatements() {
        ast::StmtList out;
        for (const SfcStep& s : chart.steps) {
            out.push_back(assign(field(s.name, "X"), boolean(s.initial, s.span)));
            out.push_back(assign(field(s.name, "_entered"), boolean(s.initial, s.span)));
            for (const char* member : {"_enter", "_leave", "_left"}) {
                out.push_back(assign(field(s.name, member), boolean(false, s.span)));
            }
        }
        for (const std::string& action : actionOrder()) {
            const SfcAssociation& first = *firstAssociation(action);
            const Span at = first.action.span;
            for (const Qualifier q : {Qualifier::S, Qualifier::SD, Qualifier::DS, Qualifier::SL}) {
                if (uses(action, q)) {
                    out.push_back(
                        assign(nameOf(ident(first.action.name + std::string(storeSuffix(q)), at)), boolean(false, at)));
                }
            }
            if (isAction(action)) {
                out.push_back(assign(nameOf(ident(first.action.name + "$Q", at)), boolean(false, at)));
                out.push_back(assign(nameOf(ident(first.action.name + "$A", at)), boolean(false, at)));
            } else {
                out.push_back(assign(nameOf(first.action), boolean(false, at)));
            }
        }
        return out;
    }

    // `name : type` declared at `at`.
    static ast::VarDecl variable(std::string name, const char* type, Span at) {
        ast::VarDecl d;
        d.span = at;
        d.names.push_back(ident(std::move(name), at));
        auto spec = std::make_unique<ast::NamedTypeSpec>(at);
        spec->name.parts.push_back(ident(type, at));
        spec->name.span = at;
        d.type = std::move(spec);
        return d;
    }

    // One VAR block: the steps, then per action its control flags (sfc.h).
    void declare() {
        ast::VarBlock block;
        block.section = ast::VarSection::Var;
        block.span = chart.steps.front().span;
        for (const SfcStep& s : chart.steps) {
            ast::VarDecl d = variable(s.name.name, "SFC_STEP", s.name.span);
            if (s.initial) {
                auto init = std::make_unique<ast::StructInitExpr>(s.name.span);
                init->fields.push_back(ast::FieldInit{ident("X", s.name.span), boolean(true, s.name.span)});
                init->fields.push_back(ast::FieldInit{ident("_entered", s.name.span), boolean(true, s.name.span)});
                d.init = std::move(init);
            }
            block.vars.push_back(std::move(d));
        }
        const SfcStep& initial = initialStep();
        block.vars.push_back(variable(initial.name.name + "$run", "BOOL", initial.name.span));
        for (const SfcTransition& t : chart.transitions) {
            if (!t.name.name.empty()) {
                block.vars.push_back(variable(t.name.name, "BOOL", t.name.span));
            }
        }
        for (const std::string& action : actionOrder()) {
            const SfcAssociation& first = *firstAssociation(action);
            const std::string& name = first.action.name;
            if (uses(action, Qualifier::S)) {
                block.vars.push_back(variable(name + "$S", "BOOL", first.action.span));
            }
            for (const Qualifier q : kTimedStores) {
                if (uses(action, q)) {
                    block.vars.push_back(variable(name + std::string(storeSuffix(q)), "BOOL", first.action.span));
                    if (q != Qualifier::DS) {
                        block.vars.push_back(
                            variable(name + std::string(storeSuffix(q)) + "t", "TIME", first.action.span));
                    }
                }
            }
            if (isAction(action)) {
                pushActionFlags(block, first);
            }
        }
        pou.varBlocks.push_back(std::move(block));
    }

    // An associated ACTION's Q and A (`a.Q` reads `a$Q`), at its first association.
    void pushActionFlags(ast::VarBlock& block, const SfcAssociation& first) const {
        block.vars.push_back(variable(first.action.name + "$Q", "BOOL", first.action.span));
        block.vars.push_back(variable(first.action.name + "$A", "BOOL", first.action.span));
    }

    // A chart with errors: the Q and A of the ACTIONs its steps associate (an association in
    // error is kept in its step), so that reading them is no follow-on error; an action no step
    // associates has none, as in a chart without errors (E0105).
    void declareActionFlags() {
        ast::VarBlock block;
        block.section = ast::VarSection::Var;
        for (const std::string& action : actionOrder()) {
            if (isAction(action)) {
                const SfcAssociation& first = *firstAssociation(action);
                block.span = block.vars.empty() ? first.action.span : block.span;
                pushActionFlags(block, first);
            }
        }
        if (!block.vars.empty()) {
            pou.varBlocks.push_back(std::move(block));
        }
    }

    // The actions in the order they are first associated (upper-case names).
    std::vector<std::string> actionOrder() const {
        std::vector<std::string> out;
        for (const SfcStep& s : chart.steps) {
            for (const SfcAssociation& a : s.actions) {
                const std::string key = upperName(a.action.name);
                if (std::find(out.begin(), out.end(), key) == out.end()) {
                    out.push_back(key);
                }
            }
        }
        return out;
    }

    // Whether some step associates `action` with qualifier q.
    bool uses(std::string_view action, Qualifier q) const {
        for (const SfcStep& s : chart.steps) {
            for (const SfcAssociation& a : s.actions) {
                if (sameName(a.action.name, action) && qualifierOf(a.qualifier.name) == q) {
                    return true;
                }
            }
        }
        return false;
    }

    const SfcAssociation* firstAssociation(std::string_view action) const {
        for (const SfcStep& s : chart.steps) {
            for (const SfcAssociation& a : s.actions) {
                if (sameName(a.action.name, action)) {
                    return &a;
                }
            }
        }
        return nullptr;
    }

    // Phase 2 for one action, its action control (IEC 61131-3 2nd ed. figure 15): the stored
    // flags are set by their steps and reset by an active R (R after the sets: reset wins), then
    // Q is the OR of every association's part, then the action runs while Q is TRUE and once
    // more in the cycle Q falls (the final scan); a Boolean action is assigned Q.
    void lowerAction(const std::string& action, ast::StmtList& out) {
        const SfcAssociation& first = *firstAssociation(action);
        const Span at = first.action.span;
        auto flag = [&](Qualifier q, std::string_view suffix = "") {
            return nameOf(ident(first.action.name + std::string(storeSuffix(q)) + std::string(suffix), at));
        };
        ExprPtr q;
        auto orInto = [&q](ExprPtr term) {
            q = q == nullptr ? std::move(term) : binary(ast::BinaryOp::Or, std::move(q), std::move(term));
        };
        auto since = [&](Qualifier k) { return binary(ast::BinaryOp::Sub, plcTime(at), flag(k, "t")); };
        ast::StmtList resets;
        for (SfcStep& s : chart.steps) {
            for (SfcAssociation& a : s.actions) {
                if (!sameName(a.action.name, action)) {
                    continue;
                }
                const Qualifier k = qualifierOf(a.qualifier.name);
                switch (k) {
                case Qualifier::N: orInto(field(s.name, "X")); break;
                case Qualifier::P:
                case Qualifier::P1:
                    orInto(binary(ast::BinaryOp::And, field(s.name, "X"), field(s.name, "_entered")));
                    break;
                case Qualifier::P0: orInto(field(s.name, "_left")); break;
                case Qualifier::L:
                case Qualifier::D:
                    orInto(binary(ast::BinaryOp::And, field(s.name, "X"),
                                  binary(k == Qualifier::L ? ast::BinaryOp::Lt : ast::BinaryOp::Ge, field(s.name, "T"),
                                         std::move(a.duration))));
                    break;
                case Qualifier::S:
                    out.push_back(ifThen(field(s.name, "X"), list(assign(flag(k), boolean(true, at)))));
                    break;
                case Qualifier::SD:
                case Qualifier::SL: {
                    // the flag's timer runs from the cycle it is set, whatever its step does then
                    out.push_back(ifThen(binary(ast::BinaryOp::And, field(s.name, "X"), notOf(flag(k))),
                                         list(assign(flag(k, "t"), plcTime(at)), assign(flag(k), boolean(true, at)))));
                    orInto(binary(ast::BinaryOp::And, flag(k),
                                  binary(k == Qualifier::SD ? ast::BinaryOp::Ge : ast::BinaryOp::Lt, since(k),
                                         std::move(a.duration))));
                    break;
                }
                case Qualifier::DS:
                    // stored once its step has been active for the time
                    out.push_back(ifThen(binary(ast::BinaryOp::And, field(s.name, "X"),
                                                binary(ast::BinaryOp::Ge, field(s.name, "T"), std::move(a.duration))),
                                         list(assign(flag(k), boolean(true, at)))));
                    break;
                case Qualifier::R: {
                    ast::StmtList clear;
                    for (const Qualifier stored : {Qualifier::S, Qualifier::SD, Qualifier::DS, Qualifier::SL}) {
                        if (uses(action, stored)) {
                            clear.push_back(assign(flag(stored), boolean(false, a.span)));
                        }
                    }
                    if (!clear.empty()) {
                        resets.push_back(ifThen(field(s.name, "X"), std::move(clear)));
                    }
                    break;
                }
                default: break;
                }
            }
        }
        for (StmtPtr& r : resets) {
            out.push_back(std::move(r));
        }
        for (const Qualifier stored : {Qualifier::S, Qualifier::DS}) {
            if (uses(action, stored)) {
                orInto(flag(stored));
            }
        }
        if (q == nullptr) {
            q = boolean(false, at); // only R associations: never active
        }
        if (!isAction(action)) {
            out.push_back(assign(nameOf(first.action), std::move(q))); // a Boolean variable as action
            return;
        }
        // A$A holds the last cycle's Q until Q is computed, then Q OR that: the activity flag
        const ast::Identifier qFlag = ident(first.action.name + "$Q", at);
        const ast::Identifier aFlag = ident(first.action.name + "$A", at);
        out.push_back(assign(nameOf(aFlag), nameOf(qFlag)));
        out.push_back(assign(nameOf(qFlag), std::move(q)));
        out.push_back(assign(nameOf(aFlag), binary(ast::BinaryOp::Or, nameOf(aFlag), nameOf(qFlag))));
        auto call = std::make_unique<ast::CallExpr>(at);
        call->callee = nameOf(first.action);
        auto stmt = std::make_unique<ast::ExprStmt>(at);
        stmt->expr = std::move(call);
        out.push_back(ifThen(nameOf(aFlag), list(std::move(stmt))));
    }

    const SfcStep& initialStep() const {
        return *std::find_if(chart.steps.begin(), chart.steps.end(), [](const SfcStep& s) { return s.initial; });
    }

    // The initial step's X starts TRUE (declare()), so `var.read` shows the chart at its initial
    // step before the first cycle, as CODESYS does. An online change that renames the initial step
    // adds it with that X = TRUE even while the chart stands in another step: two active steps.
    // `<initial>$run` is named after the initial step, so it too comes in new (FALSE) exactly when
    // the initial step's name changed: the first cycle that sees it FALSE takes the initial step
    // back out if any other step is active.
    void guardInitialStep() {
        const SfcStep& first = initialStep();
        const ast::Identifier run = ident(first.name.name + "$run", first.name.span);
        ExprPtr others;
        for (const SfcStep& st : chart.steps) {
            if (&st != &first) {
                ExprPtr x = field(st.name, "X");
                others = others == nullptr ? std::move(x) : binary(ast::BinaryOp::Or, std::move(others), std::move(x));
            }
        }
        ast::StmtList body = list(assign(nameOf(run), boolean(true, first.name.span)));
        if (others != nullptr) {
            body.push_back(
                ifThen(std::move(others), list(assign(field(first.name, "X"), boolean(false, first.span)),
                                               assign(field(first.name, "_entered"), boolean(false, first.span)))));
        }
        pou.body.push_back(ifThen(notOf(nameOf(run)), std::move(body)));
    }

    void lower() {
        guardInitialStep();
        const ast::Identifier init = chartFlag("SFCInit");
        const ast::Identifier reset = chartFlag("SFCReset");
        const ast::Identifier pause = chartFlag("SFCPause");
        auto any = [](std::initializer_list<const ast::Identifier*> flags, bool negate) {
            ExprPtr out;
            for (const ast::Identifier* f : flags) {
                if (f->name.empty()) {
                    continue;
                }
                ExprPtr term = negate ? notOf(nameOf(*f)) : nameOf(*f);
                out = out == nullptr
                          ? std::move(term)
                          : binary(negate ? ast::BinaryOp::And : ast::BinaryOp::Or, std::move(out), std::move(term));
            }
            return out;
        };
        if (ExprPtr resetting = any({&init, &reset}, false); resetting != nullptr) {
            pou.body.push_back(ifThen(std::move(resetting), resetStatements()));
        }
        // A chart always has an active step, except after an online change that removed or renamed
        // the steps that were active: it then starts again at its initial step, as after SFCReset,
        // rather than standing dead until a cold restart.
        ExprPtr active;
        for (const SfcStep& st : chart.steps) {
            ExprPtr x = field(st.name, "X");
            active = active == nullptr ? std::move(x) : binary(ast::BinaryOp::Or, std::move(active), std::move(x));
        }
        pou.body.push_back(ifThen(notOf(std::move(active)), resetStatements()));
        ast::StmtList phases;
        lowerPhases(phases);
        if (ExprPtr running = any({&init, &pause}, true); running != nullptr) {
            pou.body.push_back(ifThen(std::move(running), std::move(phases)));
        } else {
            for (StmtPtr& st : phases) {
                pou.body.push_back(std::move(st));
            }
        }
    }

    // The transitions in the order they are tested. IEC 61131-3's PRIORITY orders the transitions
    // that leave the same step(s) only: those sharing a source step (directly or through another)
    // form a group, tested at the place of its first-declared member, within it the lowest
    // PRIORITY first, then those without one, equals in declaration order.
    std::vector<SfcTransition*> byPriority() {
        const std::size_t n = chart.transitions.size();
        std::vector<std::size_t> group(n); // union-find over the shared source steps
        for (std::size_t i = 0; i < n; ++i) {
            group[i] = i;
        }
        const auto root = [&](std::size_t i) {
            while (group[i] != i) {
                i = group[i] = group[group[i]];
            }
            return i;
        };
        std::map<std::string, std::size_t> firstFrom; // step (upper case) -> a transition leaving it
        for (std::size_t i = 0; i < n; ++i) {
            for (const ast::Identifier& f : chart.transitions[i].from) {
                const auto [at, added] = firstFrom.emplace(upperName(f.name), i);
                if (!added) {
                    const std::size_t a = root(at->second);
                    const std::size_t b = root(i);
                    group[std::max(a, b)] = std::min(a, b); // the root is the first-declared member
                }
            }
        }
        const auto rank = [](const SfcTransition* t) {
            return t->priority == nullptr ? std::pair<bool, std::uint64_t>{true, 0}
                                          : std::pair<bool, std::uint64_t>{
                                                false, static_cast<const ast::LiteralExpr&>(*t->priority).intValue};
        };
        std::vector<SfcTransition*> order;
        for (std::size_t i = 0; i < n; ++i) {
            if (root(i) != i) {
                continue; // tested with its group's first member
            }
            const std::size_t begin = order.size();
            for (std::size_t j = i; j < n; ++j) {
                if (root(j) == i) {
                    order.push_back(&chart.transitions[j]);
                }
            }
            std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(begin), order.end(),
                             [&](const SfcTransition* a, const SfcTransition* b) { return rank(a) < rank(b); });
        }
        return order;
    }

    // The three phases of a cycle (sfc.h) into `body`.
    void lowerPhases(ast::StmtList& body) {
        // 1. step times
        for (const SfcStep& s : chart.steps) {
            body.push_back(
                ifThen(field(s.name, "_entered"), list(assign(field(s.name, "_start"), plcTime(s.name.span)))));
            body.push_back(ifThen(field(s.name, "X"),
                                  list(assign(field(s.name, "T"), binary(ast::BinaryOp::Sub, plcTime(s.name.span),
                                                                         field(s.name, "_start"))))));
        }
        // 2. actions
        for (const std::string& action : actionOrder()) {
            lowerAction(action, body);
        }
        for (const SfcStep& s : chart.steps) {
            body.push_back(assign(field(s.name, "_entered"), boolean(false, s.name.span)));
            body.push_back(assign(field(s.name, "_left"), boolean(false, s.name.span)));
        }
        // 3. transitions, in declaration order but those leaving the same step(s) by PRIORITY
        // (byPriority): a step left by one is not left again by the next
        for (SfcTransition* each : byPriority()) {
            SfcTransition& t = *each;
            ExprPtr enabled;
            for (const ast::Identifier& f : t.from) {
                ExprPtr term = binary(ast::BinaryOp::And, field(f, "X"), notOf(field(f, "_leave")));
                enabled = enabled == nullptr ? std::move(term)
                                             : binary(ast::BinaryOp::And, std::move(enabled), std::move(term));
            }
            ast::StmtList fire;
            for (const ast::Identifier& f : t.from) {
                fire.push_back(assign(field(f, "_leave"), boolean(true, f.span)));
            }
            for (const ast::Identifier& to : t.to) {
                fire.push_back(assign(field(to, "_enter"), boolean(true, to.span)));
            }
            if (t.name.name.empty()) {
                // `:= TRUE` (a step that only waits a cycle) fires without an IF on a constant,
                // which would warn W0005 about what the user did not write
                const bool always =
                    t.condition->kind == ast::ExprKind::Literal &&
                    static_cast<const ast::LiteralExpr&>(*t.condition).literalKind == ast::LiteralKind::Bool &&
                    static_cast<const ast::LiteralExpr&>(*t.condition).boolValue;
                body.push_back(ifThen(std::move(enabled), always
                                                              ? std::move(fire)
                                                              : list(ifThen(std::move(t.condition), std::move(fire)))));
                continue;
            }
            // A named transition: its BOOL is FALSE unless evaluated TRUE (and so fired) this cycle.
            ast::StmtList evaluate = std::move(t.body);
            if (!t.hasBody) {
                evaluate.push_back(assign(nameOf(t.name), std::move(t.condition)));
            }
            evaluate.push_back(ifThen(nameOf(t.name), std::move(fire)));
            body.push_back(assign(nameOf(t.name), boolean(false, t.name.span)));
            body.push_back(ifThen(std::move(enabled), std::move(evaluate)));
        }
        for (const SfcStep& s : chart.steps) {
            body.push_back(
                ifThen(field(s.name, "_leave"), list(assign(field(s.name, "X"), boolean(false, s.span)),
                                                     assign(field(s.name, "_leave"), boolean(false, s.span)),
                                                     assign(field(s.name, "_left"), boolean(true, s.span)))));
            body.push_back(
                ifThen(field(s.name, "_enter"), list(assign(field(s.name, "X"), boolean(true, s.span)),
                                                     assign(field(s.name, "_enter"), boolean(false, s.span)),
                                                     assign(field(s.name, "_entered"), boolean(true, s.span)))));
        }
    }
};

} // namespace

void lowerSfc(ast::PouDecl& pou, SfcChart& chart, DiagnosticSink& diags) {
    Lowering l{pou, chart, diags};
    if (!l.check()) {
        // Nothing half-lowered: the errors name what to fix. Only the ACTIONs' Q and A are
        // declared, so that reading one is no follow-on E0105 and writing one still E0403.
        l.declareActionFlags();
        return;
    }
    const std::size_t first = pou.body.size();
    pou.chart = outlineSfc(chart, first > 0);
    l.declare();
    l.lower();
    if (chart.extent.valid() && pou.body.size() > first) {
        pou.body[first]->span.begin = chart.extent.begin;
        pou.body.back()->span.end = chart.extent.end;
    }
}

} // namespace takt::compiler
