// Statements: assignments, calls, IF/CASE/FOR/WHILE/REPEAT, EXIT/CONTINUE/RETURN, reachability.
#include <algorithm>

#include "sema/body.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

struct LabelRange {
    std::int64_t lower;
    std::int64_t upper;
    Span span;
};

} // namespace

void BodyChecker::checkStmts(ast::StmtList& list) {
    bool terminated = false;
    bool warned = false;
    const char* terminator = "";
    for (auto& s : list) {
        if (s == nullptr) {
            continue;
        }
        if (s->kind == ast::StmtKind::Label) {
            terminated = false; // a jump may land here
            warned = false;
        }
        if (terminated && !warned && s->kind != ast::StmtKind::Empty) {
            cx_.diags.report(DiagCode::UnreachableCode, s->span,
                             std::string("this statement can never run: it follows ") + terminator);
            warned = true;
        }
        checkStmt(*s);
        if (s->kind == ast::StmtKind::Return || s->kind == ast::StmtKind::Exit || s->kind == ast::StmtKind::Continue ||
            s->kind == ast::StmtKind::Jump) {
            terminated = true;
            terminator = s->kind == ast::StmtKind::Return ? "RETURN"
                         : s->kind == ast::StmtKind::Exit ? "EXIT"
                         : s->kind == ast::StmtKind::Jump ? "JMP"
                                                          : "CONTINUE";
        }
    }
}

void BodyChecker::checkCondition(ast::Expr& e, const char* what) {
    const Type* t = checkExpr(e, cx_.model.types.get(TypeKind::Bool));
    if (!isError(t) && stripAlias(t)->kind() != TypeKind::Bool) {
        cx_.error(DiagCode::ConditionNotBool, e.span,
                  std::string("the ") + what + " condition '" + text(e.span) + "' has type " + typeName(t) +
                      ", not BOOL");
        return;
    }
    if (!isError(t)) {
        std::optional<ConstValue> v = evaluateConstant(cx_, e, pc_.scope, false);
        if (v && v->kind == ConstValue::Kind::Bool) {
            cx_.diags.report(DiagCode::ConstantCondition, e.span,
                             std::string("the ") + what + " condition '" + text(e.span) + "' is always " +
                                 (v->i != 0 ? "TRUE" : "FALSE"));
        }
    }
}

void BodyChecker::checkStmt(ast::Stmt& s) {
    switch (s.kind) {
    case ast::StmtKind::Assign: {
        auto& a = static_cast<ast::AssignStmt&>(s);
        if (a.bindReference) {
            checkBindReference(a);
            return;
        }
        const Type* t = checkExpr(*a.target);
        assignedValue_ = a.value.get(); // `x := f(EN := c)` may skip the call (body_enable.cpp)
        checkExpr(*a.value, t);
        assignedValue_ = nullptr;
        if (checkWritable(*a.target)) {
            convert(*a.value, t);
            warnTemporaryAddressKept(*a.target, *a.value, false);
        }
        return;
    }
    case ast::StmtKind::Expr: {
        auto& x = static_cast<ast::ExprStmt&>(s);
        if (x.expr == nullptr) {
            return;
        }
        if (x.expr->kind == ast::ExprKind::Call) {
            x.expr->type = checkCall(static_cast<ast::CallExpr&>(*x.expr), nullptr, true);
            return;
        }
        checkExpr(*x.expr);
        if (x.expr->kind != ast::ExprKind::Error) {
            const ast::Expr* inner = stripParen(x.expr.get());
            const bool looksLikeAssign = inner->kind == ast::ExprKind::Binary &&
                                         static_cast<const ast::BinaryExpr*>(inner)->op == ast::BinaryOp::Eq;
            cx_.error(DiagCode::StatementNoEffect, x.expr->span,
                      "'" + text(x.expr->span) + "' has no effect as a statement" +
                          (looksLikeAssign ? "; did you mean := ?" : ""));
        }
        return;
    }
    case ast::StmtKind::If: {
        auto& i = static_cast<ast::IfStmt&>(s);
        bool first = true;
        for (auto& b : i.branches) {
            if (b.condition) {
                checkCondition(*b.condition, first ? "IF" : "ELSIF");
            }
            first = false;
            checkStmts(b.body);
        }
        checkStmts(i.elseBody);
        return;
    }
    case ast::StmtKind::Case: checkCase(static_cast<ast::CaseStmt&>(s)); return;
    case ast::StmtKind::For: checkFor(static_cast<ast::ForStmt&>(s)); return;
    case ast::StmtKind::While: {
        auto& w = static_cast<ast::WhileStmt&>(s);
        if (w.condition) {
            checkCondition(*w.condition, "WHILE");
        }
        ++pc_.loopDepth;
        checkStmts(w.body);
        --pc_.loopDepth;
        return;
    }
    case ast::StmtKind::Repeat: {
        auto& r = static_cast<ast::RepeatStmt&>(s);
        ++pc_.loopDepth;
        checkStmts(r.body);
        --pc_.loopDepth;
        if (r.condition) {
            checkCondition(*r.condition, "REPEAT … UNTIL");
        }
        return;
    }
    case ast::StmtKind::Exit:
        if (pc_.loopDepth == 0) {
            cx_.error(DiagCode::ExitOutsideLoop, s.span, "EXIT is only allowed inside FOR, WHILE or REPEAT");
        }
        return;
    case ast::StmtKind::Continue:
        if (pc_.loopDepth == 0) {
            cx_.error(DiagCode::ContinueOutsideLoop, s.span, "CONTINUE is only allowed inside FOR, WHILE or REPEAT");
        }
        return;
    case ast::StmtKind::Empty:
        cx_.diags.report(DiagCode::EmptyStatement, s.span, "a stray ';' makes an empty statement");
        return;
    case ast::StmtKind::Return: return;
    case ast::StmtKind::Label: {
        const auto& l = static_cast<const ast::LabelStmt&>(s);
        if (auto [it, fresh] = pc_.labels.emplace(upperName(l.name.name), l.name.span); !fresh) {
            if (Diagnostic* d = cx_.error(DiagCode::DuplicateLabel, l.name.span,
                                          "label '" + l.name.name + "' is declared twice in this body")) {
                d->relate(it->second, "the first '" + l.name.name + "' is here");
            }
        }
        return;
    }
    case ast::StmtKind::Jump: pc_.jumps.push_back(&static_cast<const ast::LabelStmt&>(s)); return;
    }
}

void BodyChecker::checkCase(ast::CaseStmt& s) {
    const Type* sel = s.selector ? checkExpr(*s.selector) : errorType();
    const Type* st = isError(sel) ? nullptr : stripAlias(sel);
    const bool selOk = st != nullptr && (isInteger(st) || st->kind() == TypeKind::Enum ||
                                         lenientWordSelector(*s.selector, sel, "CASE selector"));
    if (st != nullptr && !selOk) {
        cx_.error(DiagCode::CaseSelectorInvalid, s.selector->span,
                  "the CASE selector '" + text(s.selector->span) + "' has type " + typeName(sel) +
                      "; it must be an integer or an enumeration");
    }
    std::vector<LabelRange> seen;
    auto labelValue = [&](ast::Expr& e) -> std::optional<std::int64_t> {
        const Type* lt = checkExpr(e, selOk ? sel : nullptr);
        if (isError(lt)) {
            return std::nullopt;
        }
        std::optional<ConstValue> v = evaluateConstant(cx_, e, pc_.scope, false);
        if (!v || (v->kind != ConstValue::Kind::Int && v->kind != ConstValue::Kind::Enum)) {
            cx_.error(DiagCode::CaseLabelNotConstant, e.span,
                      "the CASE label '" + text(e.span) + "' is not a constant" +
                          (selOk ? " of type " + typeName(sel) : std::string()));
            return std::nullopt;
        }
        if (selOk) {
            const Type* slt = stripAlias(lt);
            if (st->kind() == TypeKind::Enum ? slt != st : !(isInteger(slt))) {
                cx_.error(DiagCode::CaseLabelNotConstant, e.span,
                          "the CASE label '" + text(e.span) + "' has type " + typeName(lt) + ", but the selector is " +
                              typeName(sel));
                return std::nullopt;
            }
            if (st->kind() != TypeKind::Enum) {
                convert(e, sel);
            }
        }
        return v->i;
    };
    for (auto& branch : s.branches) {
        for (auto& label : branch.labels) {
            std::optional<std::int64_t> lo = label.lower ? labelValue(*label.lower) : std::nullopt;
            std::optional<std::int64_t> hi = label.upper ? labelValue(*label.upper) : lo;
            if (!lo || !hi) {
                continue;
            }
            if (*hi < *lo) {
                cx_.error(DiagCode::DuplicateCaseLabel, label.span,
                          "the CASE range '" + text(label.span) + "' is empty (upper bound below lower bound)");
                continue;
            }
            for (const LabelRange& r : seen) {
                if (*lo <= r.upper && r.lower <= *hi) {
                    Diagnostic* d = cx_.error(DiagCode::DuplicateCaseLabel, label.span,
                                              "the CASE label '" + text(label.span) +
                                                  "' covers a value already covered by '" + text(r.span) + "'");
                    if (d != nullptr) {
                        d->relate(r.span, "first covered here");
                    }
                    break;
                }
            }
            seen.push_back({*lo, *hi, label.span});
        }
        checkStmts(branch.body);
    }
    checkStmts(s.elseBody);
    if (selOk && st->kind() == TypeKind::Enum && !s.hasElse) {
        const auto* et = static_cast<const EnumType*>(st);
        std::string missing;
        for (const EnumValue& v : et->values) {
            const bool covered = std::any_of(seen.begin(), seen.end(), [&](const LabelRange& r) {
                return r.lower <= v.value && v.value <= r.upper;
            });
            if (!covered) {
                missing += (missing.empty() ? "" : ", ") + v.name;
            }
        }
        if (!missing.empty()) {
            cx_.diags.report(DiagCode::CaseMissingEnumValues, s.selector->span,
                             "CASE over '" + et->name() + "' has no ELSE and does not handle " + missing);
        }
    }
}

void BodyChecker::checkFor(ast::ForStmt& s) {
    const Type* vt = s.variable ? checkExpr(*s.variable) : errorType();
    const Symbol* var = nullptr;
    if (!isError(vt)) {
        const ast::Expr* v = stripParen(s.variable.get());
        const Symbol* sym = v->kind == ast::ExprKind::Name ? static_cast<const ast::NameExpr*>(v)->symbol : nullptr;
        // Local: declared by this POU, or (in a METHOD) by its FUNCTION_BLOCK or one of its bases.
        bool ownMember = sym != nullptr && pc_.pou != nullptr && sym->owner == pc_.pou;
        for (const Symbol* fb = pc_.fb; fb != nullptr && sym != nullptr && !ownMember; fb = fb->base) {
            ownMember = sym->owner == fb;
        }
        const bool local = ownMember && sym->kind == SymbolKind::Variable &&
                           sym->section != ast::VarSection::External && sym->section != ast::VarSection::Global;
        if (!local || !isInteger(stripAlias(vt))) {
            cx_.error(DiagCode::ForVariableInvalid, s.variable->span,
                      "the FOR control variable '" + text(s.variable->span) +
                          "' must be a local variable of an integer type" +
                          (local ? ", not " + typeName(vt) : std::string()));
        } else {
            checkWritable(*s.variable);
            var = sym;
        }
    }
    const Type* bound = isError(vt) ? nullptr : vt;
    for (ast::Expr* e : {s.from.get(), s.to.get(), s.step.get()}) {
        if (e != nullptr) {
            checkExpr(*e, bound);
            if (bound != nullptr) {
                convert(*e, bound);
            }
        }
    }
    if (s.step) {
        std::optional<ConstValue> step = evaluateConstant(cx_, *s.step, pc_.scope, false);
        if (step && step->kind == ConstValue::Kind::Int && step->i == 0) {
            cx_.error(DiagCode::ForStepZero, s.step->span,
                      "the FOR loop over '" + text(s.variable->span) + "' has the constant step 0 and would never end");
        }
    }
    if (var != nullptr) {
        pc_.forVariables.push_back(var);
    }
    ++pc_.loopDepth;
    checkStmts(s.body);
    --pc_.loopDepth;
    if (var != nullptr) {
        pc_.forVariables.pop_back();
    }
}

} // namespace takt::compiler::sema
