// CODESYS pointers and references: ADR, SIZEOF, __ISVALIDREF, the implicit dereference of a
// REFERENCE TO, REF= binding and the check before a POINTER TO dereference. A pointer is the
// same 4-byte image offset as a REF_TO; LDI/STI refuse any access outside the image, and
// CHK_PTR adds alignment for pointers that arithmetic or an integer produced.
#include "codegen/lower.h"

namespace takt::compiler::codegen {

using bc::Opcode;

Loc Lowerer::locate(const ast::Expr& e) {
    Loc l = locateStorage(e);
    if (!isReference(l.type) || e.type == nullptr || isReference(e.type)) {
        return l;
    }
    // A REFERENCE TO named where sema typed the expression as its target: go through it.
    const Type* target = static_cast<const RefType*>(stripAlias(l.type))->target;
    if (!l.indirect) {
        return Loc{true, l.at, 0, target};
    }
    const Operand p = frameSlot(4, 4);
    debugAt(e.span);
    emit(Opcode::LDI_32, {p, l.at, imm(l.extra)});
    return Loc{true, p, 0, target};
}

void Lowerer::checkPointer(Operand pointer, const Type* target, Span span) {
    const Type* t = stripAlias(target);
    debugAt(span);
    emit(Opcode::CHK_PTR, {pointer, imm(std::max<std::uint32_t>(t->align, 1)), imm(t->size)});
}

std::optional<Value> Lowerer::builtinCall(const ast::CallExpr& e, const Type* want, std::optional<Operand> dest) {
    using B = ast::CallExpr::Builtin;
    if (e.builtin == B::None) {
        return std::nullopt;
    }
    const ast::Expr& arg = *e.args[0].value; // sema let the call through with exactly one operand
    Value v;
    switch (e.builtin) {
    case B::None: return std::nullopt;
    case B::Adr: v = Value{pointerOf(locate(arg)), Calc::U32, e.type}; break;
    case B::SizeOf: {
        const Calc c = calcOf(e.type);
        v = Value{constant64(stripAlias(e.genericType)->size), c, e.type};
        break;
    }
    case B::IsValidRef: {
        const Value r = eval(arg, arg.type);
        const Operand d = dest && calcOf(want) == Calc::Bool ? *dest : frameSlot(4, 4);
        v = compareInto(ast::BinaryOp::Ne, r, Value{constant64(0), Calc::U32, arg.type}, Calc::U32, d);
        break;
    }
    }
    return want == nullptr ? v : convert(v, want, dest);
}

void Lowerer::bindReference(const ast::AssignStmt& a) {
    const Loc target = locate(*a.target);
    const Operand p = pointerOf(locate(*a.value));
    store(target, Value{p, Calc::U32, a.target->type});
}

// An integer of 64 bits converted to a POINTER: an address above 32 bits stays out of reach
// (saturated to an offset no image has) instead of wrapping onto a valid one.
Value Lowerer::toPointer(Value v, const Type* to, Operand d) {
    const Operand w = frameSlot(8, 8);
    emit(Opcode::MIN_U64, {w, v.at, constant64(0xFFFFFFFFull)});
    emit(Opcode::MOV_32, {d, w});
    return Value{d, Calc::U32, to};
}

} // namespace takt::compiler::codegen
