// Lowering an SFC chart (sfc.h) to the POU's own variables and Structured Text statements, so
// that analysis, code generation, the debugger and `var.read` see an ordinary POU: step S is
// the variable `S : SFC_STEP` (X, T and the chart's bookkeeping), a stored action A the BOOL
// `A$S` ('$' cannot occur in an ST name, so no user variable can clash). Generated nodes carry
// the span of the step, association or transition they come from, so diagnostics point there.
#include <algorithm>
#include <string>

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

enum class Qualifier : std::uint8_t { N, R, S, P, L, D, Unsupported, Unknown };

Qualifier qualifierOf(std::string_view q) {
    static constexpr std::pair<std::string_view, Qualifier> kQualifiers[] = {
        {"", Qualifier::N},
        {"N", Qualifier::N},
        {"R", Qualifier::R},
        {"S", Qualifier::S},
        {"P", Qualifier::P},
        {"L", Qualifier::L},
        {"D", Qualifier::D},
        {"P0", Qualifier::Unsupported},
        {"P1", Qualifier::Unsupported},
        {"SD", Qualifier::Unsupported},
        {"DS", Qualifier::Unsupported},
        {"SL", Qualifier::Unsupported},
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

    // E0025/E0020 for what cannot run; true when the chart is sound.
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
                } else if (q == Qualifier::Unsupported) {
                    diags.report(DiagCode::SfcNotSupported, a.qualifier.span,
                                 fmt::format("action qualifier '{}' is not supported yet (takt has N, R, S, P, L, D)",
                                             a.qualifier.name));
                    ok = false;
                } else if ((q == Qualifier::L || q == Qualifier::D) != (a.duration != nullptr)) {
                    diags.report(DiagCode::SfcInvalid, a.span,
                                 a.duration == nullptr
                                     ? fmt::format("qualifier {} needs a time: {}({}, T#5s)",
                                                   upperName(a.qualifier.name), a.action.name,
                                                   upperName(a.qualifier.name))
                                     : fmt::format("qualifier {} takes no time", upperName(a.qualifier.name)));
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
        if (chart.steps.empty()) {
            diags.report(
                DiagCode::SfcInvalid, chart.transitions.front().span,
                fmt::format("{} '{}' has transitions but no steps", ast::pouKeyword(pou.pouKind), pou.name.name));
            ok = false;
        }
        return ok;
    }

    // One VAR block: the steps and the stored-action flags.
    void declare() {
        ast::VarBlock block;
        block.section = ast::VarSection::Var;
        block.span = chart.steps.front().span;
        for (const SfcStep& s : chart.steps) {
            ast::VarDecl d;
            d.span = s.name.span;
            d.names.push_back(s.name);
            auto type = std::make_unique<ast::NamedTypeSpec>(s.name.span);
            type->name.parts.push_back(ident("SFC_STEP", s.name.span));
            type->name.span = s.name.span;
            d.type = std::move(type);
            if (s.initial) {
                auto init = std::make_unique<ast::StructInitExpr>(s.name.span);
                init->fields.push_back(ast::FieldInit{ident("X", s.name.span), boolean(true, s.name.span)});
                init->fields.push_back(ast::FieldInit{ident("_entered", s.name.span), boolean(true, s.name.span)});
                d.init = std::move(init);
            }
            block.vars.push_back(std::move(d));
        }
        for (const std::string& action : storedActions()) {
            const SfcAssociation& first = *firstAssociation(action);
            ast::VarDecl d;
            d.span = first.action.span;
            d.names.push_back(ident(first.action.name + "$S", first.action.span));
            auto type = std::make_unique<ast::NamedTypeSpec>(first.action.span);
            type->name.parts.push_back(ident("BOOL", first.action.span));
            type->name.span = first.action.span;
            d.type = std::move(type);
            block.vars.push_back(std::move(d));
        }
        pou.varBlocks.push_back(std::move(block));
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

    std::vector<std::string> storedActions() const {
        std::vector<std::string> out;
        for (const std::string& action : actionOrder()) {
            for (const SfcStep& s : chart.steps) {
                for (const SfcAssociation& a : s.actions) {
                    const Qualifier q = qualifierOf(a.qualifier.name);
                    if (upperName(a.action.name) == action && (q == Qualifier::S || q == Qualifier::R) &&
                        std::find(out.begin(), out.end(), action) == out.end()) {
                        out.push_back(action);
                    }
                }
            }
        }
        return out;
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

    // Phase 2 for one action: the stored flag's set and reset, then the action while active.
    void lowerAction(const std::string& action, bool stored, ast::StmtList& out) {
        const SfcAssociation& first = *firstAssociation(action);
        const ast::Identifier flag = ident(first.action.name + "$S", first.action.span);
        ExprPtr active;
        auto orInto = [&active](ExprPtr term) {
            active =
                active == nullptr ? std::move(term) : binary(ast::BinaryOp::Or, std::move(active), std::move(term));
        };
        for (const Qualifier pass : {Qualifier::S, Qualifier::R}) { // R after S: reset wins
            for (const SfcStep& s : chart.steps) {
                for (const SfcAssociation& a : s.actions) {
                    if (sameName(a.action.name, action) && qualifierOf(a.qualifier.name) == pass) {
                        out.push_back(ifThen(field(s.name, "X"),
                                             list(assign(nameOf(flag), boolean(pass == Qualifier::S, a.span)))));
                    }
                }
            }
        }
        for (SfcStep& s : chart.steps) {
            for (SfcAssociation& a : s.actions) {
                if (!sameName(a.action.name, action)) {
                    continue;
                }
                switch (qualifierOf(a.qualifier.name)) {
                case Qualifier::N: orInto(field(s.name, "X")); break;
                case Qualifier::P:
                    orInto(binary(ast::BinaryOp::And, field(s.name, "X"), field(s.name, "_entered")));
                    break;
                case Qualifier::L:
                case Qualifier::D: {
                    const bool limited = qualifierOf(a.qualifier.name) == Qualifier::L;
                    orInto(binary(ast::BinaryOp::And, field(s.name, "X"),
                                  binary(limited ? ast::BinaryOp::Lt : ast::BinaryOp::Ge, field(s.name, "T"),
                                         std::move(a.duration))));
                    break;
                }
                default: break;
                }
            }
        }
        if (stored) {
            orInto(nameOf(flag));
        }
        if (active == nullptr) {
            return; // only R associations and nothing stored: never active
        }
        if (isAction(action)) {
            auto call = std::make_unique<ast::CallExpr>(first.action.span);
            call->callee = nameOf(first.action);
            auto stmt = std::make_unique<ast::ExprStmt>(first.action.span);
            stmt->expr = std::move(call);
            out.push_back(ifThen(std::move(active), list(std::move(stmt))));
        } else {
            out.push_back(assign(nameOf(first.action), std::move(active))); // a Boolean variable as action
        }
    }

    void lower() {
        ast::StmtList& body = pou.body;
        // 1. step times
        for (const SfcStep& s : chart.steps) {
            body.push_back(
                ifThen(field(s.name, "_entered"), list(assign(field(s.name, "_start"), plcTime(s.name.span)))));
            body.push_back(ifThen(field(s.name, "X"),
                                  list(assign(field(s.name, "T"), binary(ast::BinaryOp::Sub, plcTime(s.name.span),
                                                                         field(s.name, "_start"))))));
        }
        // 2. actions
        const std::vector<std::string> stored = storedActions();
        for (const std::string& action : actionOrder()) {
            lowerAction(action, std::find(stored.begin(), stored.end(), action) != stored.end(), body);
        }
        for (const SfcStep& s : chart.steps) {
            body.push_back(assign(field(s.name, "_entered"), boolean(false, s.name.span)));
        }
        // 3. transitions, in declaration order: a step left by one is not left again by the next
        for (SfcTransition& t : chart.transitions) {
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
            body.push_back(ifThen(std::move(enabled), list(ifThen(std::move(t.condition), std::move(fire)))));
        }
        for (const SfcStep& s : chart.steps) {
            body.push_back(
                ifThen(field(s.name, "_leave"), list(assign(field(s.name, "X"), boolean(false, s.span)),
                                                     assign(field(s.name, "_leave"), boolean(false, s.span)))));
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
        return; // nothing half-lowered: the errors name what to fix
    }
    const std::size_t first = pou.body.size();
    l.declare();
    l.lower();
    if (chart.extent.valid() && pou.body.size() > first) {
        pou.body[first]->span.begin = chart.extent.begin;
        pou.body.back()->span.end = chart.extent.end;
    }
}

} // namespace takt::compiler
