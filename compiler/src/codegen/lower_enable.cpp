// EN / ENO on calls. Sema took them out of the arguments (ast::CallExpr::enable, enableOut), so
// a call without them compiles exactly as before; with them, the statement holding the call
// (a call statement or `x := f(…)`) is wrapped:
//
//     JMP_F en, skip          ; EN evaluated once, before any argument
//     <the statement>         ; the call and, for `x := f(…)`, the assignment
//     eno := TRUE             ; or the callee's own ENO, copied by the call's outputs
//     JMP end
//   skip:
//     eno := FALSE            ; outputs, result variable and `x` stay unchanged (CODESYS)
//   end:
#include "codegen/lower.h"
#include "takt/compiler/names.h"

namespace takt::compiler::codegen {

using bc::Opcode;

namespace {

const ast::CallExpr* callWithEnable(const ast::Expr* e) {
    while (e != nullptr && e->kind == ast::ExprKind::Paren) {
        e = static_cast<const ast::ParenExpr*>(e)->inner.get();
    }
    if (e == nullptr || e->kind != ast::ExprKind::Call) {
        return nullptr;
    }
    const auto* c = static_cast<const ast::CallExpr*>(e);
    return c->enable || c->enableOut ? c : nullptr;
}

} // namespace

const ast::CallExpr* enabledCall(const ast::Stmt& s) {
    if (s.kind == ast::StmtKind::Assign) {
        return callWithEnable(static_cast<const ast::AssignStmt&>(s).value.get());
    }
    if (s.kind == ast::StmtKind::Expr) {
        return callWithEnable(static_cast<const ast::ExprStmt&>(s).expr.get());
    }
    return nullptr;
}

void Lowerer::storeBool(const Loc& dst, bool value) {
    const Type* boolType = g_.model().types.get(TypeKind::Bool);
    store(dst, convert(Value{constant64(value ? 1 : 0), Calc::Bool, boolType}, dst.type));
}

void Lowerer::lowerEnabled(const ast::Stmt& s, const ast::CallExpr& c) {
    std::vector<std::uint32_t> skip;
    if (c.enable) {
        span_ = c.enable->span;
        condJump(*c.enable, false, skip);
    }
    guarded_ = &c;
    lowerStmt(s);
    guarded_ = nullptr;
    const std::uint32_t mark = frameTop_;
    if (c.enableOut) {
        storeBool(locate(*c.enableOut), true);
    }
    frameTop_ = mark;
    if (!c.enable) {
        return;
    }
    std::vector<std::uint32_t> end;
    emitJump(Opcode::JMP, {}, end);
    patch(skip, here());
    if (c.enableOut) {
        storeBool(locate(*c.enableOut), false);
    }
    if (const Symbol* eno = c.enableOutParam) {
        // The callee's own ENO: the `ENO => v` argument, and an FB instance's member (fb.ENO).
        for (const ast::Argument& a : c.args) {
            if (a.output && a.name && sameName(a.name->name, eno->name) && a.value != nullptr) {
                storeBool(locate(*a.value), a.negated);
            }
        }
        const Type* calleeType = c.callee->type != nullptr ? stripAlias(c.callee->type) : nullptr;
        if (const Symbol* fb = calleeType != nullptr ? instancePou(calleeType) : nullptr; fb == eno->owner) {
            Loc member = locate(*c.callee);
            const MemberSlot& slot = g_.members(fb).at(eno);
            if (member.indirect) {
                member.extra += slot.offset;
            } else {
                member.at.word += slot.offset;
            }
            member.type = eno->type;
            storeBool(member, false);
        }
    }
    frameTop_ = mark;
    patch(end, here());
}

void Lowerer::setOwnEnable(const ast::CallExpr& c, const std::function<Loc(const Symbol*)>& param) {
    if (c.enableParam != nullptr) {
        storeBool(param(c.enableParam), true); // the call runs: EN was TRUE
    }
}

void Lowerer::ownEnoPrologue() {
    // A POU declaring `ENO : BOOL` as VAR_OUTPUT starts every call with ENO = TRUE; its body may
    // clear it (IEC 61131-3 2.5.1.2).
    for (const Symbol* p : pou_->params) {
        if (p->section == ast::VarSection::Output && sameName(p->name, "ENO") && p->type != nullptr &&
            stripAlias(p->type)->kind() == TypeKind::Bool) {
            storeBool(locateSymbol(p, p->span), true);
        }
    }
}

} // namespace takt::compiler::codegen
