// Lowering an SFC chart (sfc.h) to the POU's own variables and Structured Text statements, so
// that analysis, code generation, the debugger and `var.read` see an ordinary POU: step S is
// the variable `S : SFC_STEP` (X, T and the chart's bookkeeping), a stored action A the BOOL
// `A$S` ('$' cannot occur in an ST name, so no user variable can clash). Generated nodes carry
// the span of the step, association or transition they come from, so diagnostics point there.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sfc_chart.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

namespace {

using sfc::escapeOf;
using sfc::kTimedStores;
using sfc::Qualifier;
using sfc::qualifierOf;

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

std::string_view storeSuffix(Qualifier q) {
    switch (q) {
    case Qualifier::SD: return "$SD";
    case Qualifier::DS: return "$DS";
    case Qualifier::SL: return "$SL";
    default: return "$S";
    }
}

struct Lowering {
    ast::PouDecl& pou;
    SfcChart& chart;
    sfc::ChartView view{pou, chart};

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
        for (const std::string& action : view.actionOrder()) {
            const SfcAssociation& first = *view.firstAssociation(action);
            const Span at = first.action.span;
            for (const Qualifier q : {Qualifier::S, Qualifier::SD, Qualifier::DS, Qualifier::SL}) {
                if (view.uses(action, q)) {
                    out.push_back(
                        assign(nameOf(ident(first.action.name + std::string(storeSuffix(q)), at)), boolean(false, at)));
                }
            }
            if (view.isAction(action)) {
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
        const SfcStep& initial = *view.initialStep();
        block.vars.push_back(variable(initial.name.name + "$run", "BOOL", initial.name.span));
        for (const SfcTransition& t : chart.transitions) {
            if (!t.name.name.empty()) {
                block.vars.push_back(variable(t.name.name, "BOOL", t.name.span));
            }
        }
        for (const std::string& action : view.actionOrder()) {
            const SfcAssociation& first = *view.firstAssociation(action);
            const std::string& name = first.action.name;
            if (view.uses(action, Qualifier::S)) {
                block.vars.push_back(variable(name + "$S", "BOOL", first.action.span));
            }
            for (const Qualifier q : kTimedStores) {
                if (view.uses(action, q)) {
                    block.vars.push_back(variable(name + std::string(storeSuffix(q)), "BOOL", first.action.span));
                    if (q != Qualifier::DS) {
                        block.vars.push_back(
                            variable(name + std::string(storeSuffix(q)) + "t", "TIME", first.action.span));
                    }
                }
            }
            if (view.isAction(action)) {
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

    // A chart with errors is not lowered, but what the rest of the POU and the editor see of it
    // stays, so that one error in the chart brings no others elsewhere: its steps (`Heat.X` read
    // in an action is no E0104), its named transitions, the Q and A of the ACTIONs its steps
    // associate (an association in error is kept in its step; an action no step associates has
    // none, as in a chart without errors: E0105), and what it reads and writes (a variable only
    // the chart uses is no W0001). Its conditions, durations, flags and Boolean actions become
    // statements that are checked like the lowered chart's but never run: a POU with an error is
    // not compiled.
    void declareRefused() {
        ast::VarBlock block;
        block.section = ast::VarSection::Var;
        for (const SfcStep& s : chart.steps) {
            if (view.findStep(s.name.name) == &s) {
                block.vars.push_back(variable(s.name.name, "SFC_STEP", s.name.span));
            }
        }
        std::vector<const SfcTransition*> named; // whose BOOL is declared
        for (const SfcTransition& t : chart.transitions) {
            if (!t.name.name.empty() && view.findStep(t.name.name) == nullptr &&
                std::none_of(named.begin(), named.end(),
                             [&](const SfcTransition* n) { return sameName(n->name.name, t.name.name); })) {
                named.push_back(&t);
                block.vars.push_back(variable(t.name.name, "BOOL", t.name.span));
            }
        }
        for (const std::string& action : view.actionOrder()) {
            if (view.isAction(action)) {
                pushActionFlags(block, *view.firstAssociation(action));
            }
        }
        if (!block.vars.empty()) {
            block.span = block.vars.front().span;
            pou.varBlocks.push_back(std::move(block));
        }
        const std::size_t first = pou.body.size();
        // `IF e THEN END_IF`: e read as a condition; a literal reads nothing (and would be W0005)
        const auto read = [&](ExprPtr e) {
            if (e != nullptr && e->kind != ast::ExprKind::Literal) {
                pou.body.push_back(ifThen(std::move(e), {}));
            }
        };
        for (const SfcStep& s : chart.steps) { // read, as the lowered chart reads them
            if (view.findStep(s.name.name) == &s) {
                read(field(s.name, "X"));
            }
        }
        for (const SfcTransition* t : named) {
            read(nameOf(t->name));
        }
        for (const char* flag : sfc::kChartFlags) {
            if (const ast::VarDecl* d = view.userVariable(flag); d != nullptr) {
                // one that is no BOOL (E0025) is assigned to itself where W0001 would name it (a
                // writable local): used, and no type error besides
                const ast::Identifier f = view.chartFlag(flag);
                if (sfc::isBool(*d)) {
                    read(nameOf(f));
                } else if (writableLocal(*d)) {
                    pou.body.push_back(assign(nameOf(f), nameOf(f)));
                }
            }
        }
        for (SfcStep& s : chart.steps) { // a step named twice: its first declaration's T
            for (SfcAssociation& a : s.actions) {
                if (a.duration != nullptr && a.duration->kind != ast::ExprKind::Literal) {
                    read(binary(ast::BinaryOp::Ge, field(s.name, "T"), std::move(a.duration)));
                }
            }
        }
        for (const std::string& action : view.actionOrder()) {
            const SfcAssociation& a = *view.firstAssociation(action);
            if (!view.isAction(action)) {
                pou.body.push_back(assign(nameOf(a.action), boolean(false, a.action.span))); // a Boolean action
            }
        }
        for (SfcTransition& t : chart.transitions) {
            // its BOOL is declared (by the first transition of that name); a body without a
            // name (E0025) would assign what is not declared, and is left out
            const bool declared = std::any_of(named.begin(), named.end(), [&](const SfcTransition* n) {
                return sameName(n->name.name, t.name.name);
            });
            if (declared && t.hasBody && escapeOf(t.body) == nullptr) {
                for (StmtPtr& st : t.body) {
                    pou.body.push_back(std::move(st));
                }
            } else if (declared && t.condition != nullptr) {
                pou.body.push_back(assign(nameOf(t.name), std::move(t.condition)));
            } else {
                read(std::move(t.condition));
            }
        }
        cover(first);
    }

    // Whether `d` is in a VAR or VAR_TEMP block that is not CONSTANT.
    [[nodiscard]] bool writableLocal(const ast::VarDecl& d) const {
        for (const ast::VarBlock& b : pou.varBlocks) {
            for (const ast::VarDecl& v : b.vars) {
                if (&v == &d) {
                    return !b.constant && (b.section == ast::VarSection::Var || b.section == ast::VarSection::Temp);
                }
            }
        }
        return false;
    }

    // The statements from `first` on together cover the chart's extent (sfc.h).
    void cover(std::size_t first) {
        if (chart.extent.valid() && pou.body.size() > first) {
            pou.body[first]->span.begin = chart.extent.begin;
            pou.body.back()->span.end = chart.extent.end;
        }
    }

    // Phase 2 for one action, its action control (IEC 61131-3 2nd ed. figure 15): the stored
    // flags are set by their steps and reset by an active R (R after the sets: reset wins), then
    // Q is the OR of every association's part, then the action runs while Q is TRUE and once
    // more in the cycle Q falls (the final scan); a Boolean action is assigned Q.
    void lowerAction(const std::string& action, ast::StmtList& out) {
        const SfcAssociation& first = *view.firstAssociation(action);
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
                        if (view.uses(action, stored)) {
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
            if (view.uses(action, stored)) {
                orInto(flag(stored));
            }
        }
        if (q == nullptr) {
            q = boolean(false, at); // only R associations: never active
        }
        if (!view.isAction(action)) {
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

    // The initial step's X starts TRUE (declare()), so `var.read` shows the chart at its initial
    // step before the first cycle, as CODESYS does. An online change that renames the initial step
    // adds it with that X = TRUE even while the chart stands in another step: two active steps.
    // `<initial>$run` is named after the initial step, so it too comes in new (FALSE) exactly when
    // the initial step's name changed: the first cycle that sees it FALSE takes the initial step
    // back out if any other step is active.
    void guardInitialStep() {
        const SfcStep& first = *view.initialStep();
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
        const ast::Identifier init = view.chartFlag("SFCInit");
        const ast::Identifier reset = view.chartFlag("SFCReset");
        const ast::Identifier pause = view.chartFlag("SFCPause");
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
        for (const std::string& action : view.actionOrder()) {
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
    Lowering l{pou, chart};
    if (!sfc::checkChart(l.view, diags)) {
        l.declareRefused(); // nothing half-lowered: the errors name what to fix
        return;
    }
    const std::size_t first = pou.body.size();
    pou.chart = outlineSfc(chart, first > 0);
    l.declare();
    l.lower();
    l.cover(first);
}

} // namespace takt::compiler
