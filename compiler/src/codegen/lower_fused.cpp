// Fused forms of common idioms: a constant added to a subscript, a ring-buffer index
// `(a + b) MOD n`, an element added to a running sum, a REAL widened into LREAL arithmetic. Each saves a dispatch (and
// a temporary) per use in the loops PLC programs spend their scans in; the result is the one of the unfused
// instructions, bit for bit, including where and how a bad index traps.
#include <limits>

#include "codegen/lower.h"
#include "sema/stdlib.h"

namespace takt::compiler::codegen {

using bc::Opcode;

namespace {

const ast::Expr& withoutParens(const ast::Expr& e) {
    const ast::Expr* p = &e;
    while (p->kind == ast::ExprKind::Paren) {
        p = static_cast<const ast::ParenExpr*>(p)->inner.get();
    }
    return *p;
}

} // namespace

std::optional<ConstDivisor> Lowerer::constantDivisor(const ast::Expr& rhs, Calc c, bool mod) {
    if ((c != Calc::I32 && c != Calc::U32) || !isConstantCandidate(rhs)) {
        return std::nullopt;
    }
    const auto k = g_.constant(rhs, scope_);
    if (!k || k->kind != sema::ConstValue::Kind::Int) {
        return std::nullopt;
    }
    const bool isSigned = c == Calc::I32;
    const std::int64_t lo = isSigned ? std::numeric_limits<std::int32_t>::min() : 0;
    const std::int64_t hi =
        isSigned ? std::numeric_limits<std::int32_t>::max() : std::numeric_limits<std::uint32_t>::max();
    const auto word = static_cast<std::uint32_t>(k->i);
    const std::uint32_t mag = isSigned ? bc::divisorMagnitude(static_cast<std::int32_t>(word)) : word;
    if (k->i < lo || k->i > hi || mag == 0 || (!mod && mag < 2)) {
        return std::nullopt;
    }
    // a MOD d has the sign of a whatever the sign of d: the signed MOD forms take |d|.
    return ConstDivisor{mod && isSigned ? mag : word, bc::divisorReciprocal(mag)};
}

std::optional<Value> Lowerer::ringIndex(const ast::BinaryExpr& e, const Type* type, std::optional<Operand> dest) {
    const Calc c = calcOf(type);
    const ast::Expr& lhs = withoutParens(*e.lhs);
    if (e.op != ast::BinaryOp::Mod || g_.options().overflowTrap || lhs.kind != ast::ExprKind::Binary ||
        isConstantCandidate(lhs) || lhs.type == nullptr || stripAlias(lhs.type) != stripAlias(type)) {
        return std::nullopt;
    }
    const auto& sum = static_cast<const ast::BinaryExpr&>(lhs);
    if (sum.op != ast::BinaryOp::Add) {
        return std::nullopt;
    }
    const std::optional<ConstDivisor> k = constantDivisor(*e.rhs, c, true);
    if (!k) {
        return std::nullopt;
    }
    const Value a = eval(*sum.lhs, type);
    const Value b = eval(*sum.rhs, type);
    const Operand d = dest ? *dest : frameSlot(4, 4);
    debugAt(e.span);
    emit(c == Calc::I32 ? Opcode::ADDMOD_I32_IMM : Opcode::ADDMOD_U32_IMM,
         {d, a.at, b.at, imm(k->word), imm(static_cast<std::uint32_t>(k->reciprocal)),
          imm(static_cast<std::uint32_t>(k->reciprocal >> 32))});
    return Value{d, c, type};
}

std::optional<Value> Lowerer::addElement(const ast::BinaryExpr& e, const Type* type, std::optional<Operand> dest) {
    const Calc c = calcOf(type);
    const bool integer = c == Calc::I32 || c == Calc::U32;
    if (e.op != ast::BinaryOp::Add || (!integer && c != Calc::F32 && c != Calc::F64) ||
        (integer && g_.options().overflowTrap)) {
        return std::nullopt;
    }
    // An element read in the computation form as it is stored (no widening or conversion).
    const auto element = [&](const ast::Expr& x) {
        const ast::Expr& p = withoutParens(x);
        return (p.kind == ast::ExprKind::Index || p.kind == ast::ExprKind::Member) && !isConstantCandidate(p) &&
               p.type != nullptr && calcOf(p.type) == c && storeWidth(stripAlias(p.type)) == calcWidth(c);
    };
    // With the element on the left, the other operand is read after the element's index: only a
    // plain variable or constant, which has no side effect that could change the element.
    const auto plain = [](const ast::Expr& x) {
        const ast::Expr& p = withoutParens(x);
        return p.kind == ast::ExprKind::Name || isConstantCandidate(p);
    };
    const bool onRight = element(*e.rhs);
    if (!onRight && !(element(*e.lhs) && plain(*e.rhs))) {
        return std::nullopt;
    }
    Value other;
    Loc l;
    std::optional<std::uint32_t> at;
    if (onRight) {
        other = eval(*e.lhs, type);
        l = locate(*e.rhs);
        at = fusableIdx(l);
    } else {
        l = locate(*e.lhs);
        at = fusableIdx(l);
        const std::uint32_t mark = here();
        other = eval(*e.rhs, type);
        if (here() != mark) { // e.g. a VAR_IN_OUT read through its reference
            at.reset();
        }
    }
    const Operand d = dest ? *dest : frameSlot(std::max<std::uint32_t>(calcWidth(c), 4), 8);
    if (!at) {
        const Value el = onRight ? loadOnce(l, c) : load(l, c);
        lastIdx_ = kNoIdx;
        debugAt(e.span);
        emit(arithOpcode(ast::BinaryOp::Add, c, false), {d, onRight ? other.at : el.at, onRight ? el.at : other.at});
        return Value{d, c, type};
    }
    lastIdx_ = kNoIdx;
    // The IDX becomes the ADDX in place (its operands, global fixups and debug position stay); the
    // field offset moves into the array operand as for LDX_*, and the addend is appended.
    if (d.global) {
        g_.globalFixups.push_back(*at + 1);
    }
    out_.code[*at] = static_cast<std::uint32_t>(c == Calc::F32   ? Opcode::ADDX_F32
                                                : c == Calc::F64 ? Opcode::ADDX_F64
                                                                 : Opcode::ADDX_I32);
    out_.code[*at + 1] = d.word;
    out_.code[*at + 2] += l.extra;
    if (other.at.global) {
        g_.globalFixups.push_back(here());
    }
    out_.code.push_back(other.at.word);
    return Value{d, c, type};
}

const ast::Expr* Lowerer::realBeforeWidening(const ast::Expr& x) {
    const ast::Expr& p = withoutParens(x);
    if (p.type == nullptr || isConstantCandidate(p)) {
        return nullptr;
    }
    if (calcOf(p.type) == Calc::F32) {
        return &p; // widened by the operation
    }
    if (p.kind != ast::ExprKind::Call || calcOf(p.type) != Calc::F64) {
        return nullptr;
    }
    const auto& call = static_cast<const ast::CallExpr&>(p);
    const auto& sigs = sema::standardSignatures();
    if (call.target == nullptr || call.target->kind != SymbolKind::StandardFunction || call.stdOverload < 0 ||
        static_cast<std::size_t>(call.stdOverload) >= sigs.size() ||
        sigs[static_cast<std::size_t>(call.stdOverload)].op != sema::StdOp::Convert) {
        return nullptr;
    }
    const std::vector<const ast::Expr*> args = standardInputs(call, sigs[static_cast<std::size_t>(call.stdOverload)]);
    if (args.size() != 1 || args[0]->type == nullptr || calcOf(args[0]->type) != Calc::F32 ||
        isConstantCandidate(*args[0])) {
        return nullptr;
    }
    return args[0];
}

std::optional<Value> Lowerer::widenedReal(const ast::BinaryExpr& e, const Type* type, std::optional<Operand> dest) {
    const ast::Expr* left = realBeforeWidening(*e.lhs);
    const ast::Expr* right = left == nullptr && e.op != ast::BinaryOp::Div ? realBeforeWidening(*e.rhs) : nullptr;
    if (left == nullptr && right == nullptr) {
        return std::nullopt;
    }
    const Type* real = g_.model().types.get(TypeKind::Real);
    Value single;
    Value wide;
    if (left != nullptr) { // operands in source order
        single = eval(*left, real);
        wide = eval(*e.rhs, type);
    } else {
        wide = eval(*e.lhs, type);
        single = eval(*right, real);
    }
    const Operand d = dest ? *dest : frameSlot(8, 8);
    debugAt(e.span);
    emit(e.op == ast::BinaryOp::Mul   ? Opcode::MULW_F64
         : e.op == ast::BinaryOp::Div ? Opcode::DIVW_F64
                                      : Opcode::ADDW_F64,
         {d, single.at, wide.at});
    return Value{d, Calc::F64, type};
}

const ast::Expr& Lowerer::offsetSubscript(const ast::Expr& e, std::int64_t lower, std::int64_t& shift) {
    shift = 0;
    const ast::Expr& p = withoutParens(e);
    if (g_.options().overflowTrap || p.kind != ast::ExprKind::Binary || p.type == nullptr ||
        calcOf(p.type) != Calc::I32) {
        return e;
    }
    const auto& b = static_cast<const ast::BinaryExpr&>(p);
    if (b.op != ast::BinaryOp::Add && b.op != ast::BinaryOp::Sub) {
        return e;
    }
    const ast::Expr* x = b.lhs.get();
    std::optional<std::int64_t> k = constantIndex(*b.rhs);
    if (!k && b.op == ast::BinaryOp::Add) {
        k = constantIndex(*b.lhs);
        x = b.rhs.get();
    }
    if (!k || x->type == nullptr || calcOf(x->type) != Calc::I32 || isConstantCandidate(*x)) {
        return e;
    }
    // x + k - lower is computed exactly (in 64 bits) by the bounds check, so an x + k that would
    // wrap is out of bounds either way.
    constexpr std::int64_t kMaxShift = std::int64_t{1} << 24;
    const std::int64_t s = b.op == ast::BinaryOp::Sub ? -*k : *k;
    if (s < -kMaxShift || s > kMaxShift || lower - s < std::numeric_limits<std::int32_t>::min() ||
        lower - s > std::numeric_limits<std::int32_t>::max()) {
        return e;
    }
    shift = s;
    return *x;
}

} // namespace takt::compiler::codegen
