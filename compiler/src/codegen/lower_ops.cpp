// Operators, constants and conversions.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "codegen/lower.h"
#include "takt/compiler/names.h"

namespace takt::compiler::codegen {

using bc::Opcode;

bool isConstantCandidate(const ast::Expr& e) {
    switch (e.kind) {
    case ast::ExprKind::Literal:
    case ast::ExprKind::EnumLiteral: return true;
    case ast::ExprKind::Paren: return isConstantCandidate(*static_cast<const ast::ParenExpr&>(e).inner);
    case ast::ExprKind::Unary: return isConstantCandidate(*static_cast<const ast::UnaryExpr&>(e).operand);
    case ast::ExprKind::Name: {
        const Symbol* s = static_cast<const ast::NameExpr&>(e).symbol;
        return s != nullptr && (s->kind == SymbolKind::EnumValue || (s->kind == SymbolKind::Variable && s->constant));
    }
    case ast::ExprKind::Member: { // Color.Red
        const Symbol* s = static_cast<const ast::MemberExpr&>(e).symbol;
        return s != nullptr && s->kind == SymbolKind::EnumValue;
    }
    case ast::ExprKind::Binary: {
        const auto& b = static_cast<const ast::BinaryExpr&>(e);
        return isConstantCandidate(*b.lhs) && isConstantCandidate(*b.rhs);
    }
    default: return false;
    }
}

std::optional<std::uint64_t> constantBits(const sema::ConstValue& v, Calc calc) {
    using K = sema::ConstValue::Kind;
    if (v.kind == K::String) {
        return std::nullopt;
    }
    const bool real = v.kind == K::Real;
    switch (calc) {
    case Calc::F32: {
        const float f = real ? static_cast<float>(v.r) : static_cast<float>(v.i);
        std::uint32_t b = 0;
        std::memcpy(&b, &f, 4);
        return b;
    }
    case Calc::F64: {
        const double d = real           ? v.r
                         : v.isUnsigned ? static_cast<double>(static_cast<std::uint64_t>(v.i))
                                        : static_cast<double>(v.i);
        std::uint64_t b = 0;
        std::memcpy(&b, &d, 8);
        return b;
    }
    case Calc::Bool: return static_cast<std::uint64_t>(v.i != 0 ? 1 : 0);
    case Calc::Str:
    case Calc::WStr:
    case Calc::Agg: return std::nullopt;
    default:
        if (real) {
            return static_cast<std::uint64_t>(static_cast<std::int64_t>(std::nearbyint(v.r)));
        }
        return static_cast<std::uint64_t>(v.i);
    }
}

namespace {

// The type two operands are compared (or combined) in: commonType, else CODESYS's type for an
// integer against a bit string (W1006, accepted under dialect "codesys" only).
const Type* compareOperandType(const TypeTable& types, const Type* a, const Type* b) {
    if (isPointer(a) || isPointer(b)) { // compared as image offsets (unsigned)
        return isPointer(a) ? a : b;
    }
    const Type* t = commonType(types, a, b);
    return t != nullptr ? t : mixedBitIntegerType(types, a, b);
}

bool isCharKind(const Type* t) {
    return t != nullptr && (t->kind() == TypeKind::Char || t->kind() == TypeKind::WChar);
}

// The character type a text constant stands for: its own (CHAR#'x') or the wanted one.
const Type* charTarget(const Type* own, const Type* want) {
    return isCharKind(own) ? own : isCharKind(stripAlias(want)) ? stripAlias(want) : nullptr;
}

} // namespace

std::optional<Value> Lowerer::constantValue(const ast::Expr& e, const Type* want, std::optional<Operand> dest) {
    if (!isConstantCandidate(e)) {
        return std::nullopt;
    }
    auto v = g_.constant(e, scope_);
    if (!v) {
        return std::nullopt;
    }
    const Type* t = e.type;
    const Type* st = stripAlias(t);
    if (st == nullptr || st->kind() == TypeKind::IntLiteral || st->kind() == TypeKind::RealLiteral) {
        t = want != nullptr ? want : t;
    }
    if (const Type* ch = charTarget(st, want); ch != nullptr && v->kind == sema::ConstValue::Kind::String) {
        v = charConstant(*v, ch); // CHAR#'x', or 'x' where a CHAR is wanted
        t = ch;
    }
    const Calc calc = calcOf(t);
    if (v->kind == sema::ConstValue::Kind::String && (calc == Calc::Str || calc == Calc::WStr)) {
        const auto* strType = static_cast<const StringType*>(stripAlias(t)->kind() == TypeKind::String ||
                                                                     stripAlias(t)->kind() == TypeKind::WString
                                                                 ? stripAlias(t)
                                                                 : stripAlias(e.type));
        std::string key = (calc == Calc::Str ? "S" : "W") + v->s;
        auto it = g_.poolStrings.find(key);
        if (it == g_.poolStrings.end()) {
            const std::uint32_t units = static_cast<std::uint32_t>(v->s.size());
            const StringType* full = g_.stringType(calc == Calc::WStr, std::max<std::uint32_t>(units, 1));
            const std::uint32_t at = g_.poolAlloc(full->size, full->align);
            std::vector<std::uint8_t>* saved = g_.image;
            std::vector<std::uint8_t> bytes(full->size, 0);
            g_.image = &bytes;
            g_.writeConstant(full, *v, 0);
            g_.image = saved;
            std::copy(bytes.begin(), bytes.end(), g_.pool.begin() + (at - 8));
            it = g_.poolStrings.emplace(key, at).first;
        }
        (void)strType;
        return Value{{bc::address(bc::kTagAbsolute, it->second), false}, calc, t};
    }
    auto bits = constantBits(*v, calc);
    if (!bits) {
        return std::nullopt;
    }
    if (calcWidth(calc) == 4 || calc == Calc::Bool) {
        *bits &= 0xFFFFFFFFull;
        if (calc == Calc::I32 && (*bits & 0x80000000ull) != 0) {
            *bits |= 0xFFFFFFFF00000000ull;
        }
    }
    const Operand c = constant64(*bits);
    if (dest) {
        const std::uint32_t w = calcWidth(calc);
        if (w == 8) {
            emit(Opcode::MOVI_64,
                 {*dest, imm(static_cast<std::uint32_t>(*bits)), imm(static_cast<std::uint32_t>(*bits >> 32))});
        } else {
            emit(w == 1 ? Opcode::MOVI_8 : Opcode::MOVI_32, {*dest, imm(static_cast<std::uint32_t>(*bits))});
        }
        return Value{*dest, calc, t};
    }
    return Value{c, calc, t};
}

Value Lowerer::convert(Value v, const Type* to, std::optional<Operand> dest) {
    const Calc c = calcOf(to);
    const Calc f = v.calc;
    if (c == f || c == Calc::Agg || f == Calc::Agg || c == Calc::Str || c == Calc::WStr) {
        if (dest && calcWidth(c) != 0 && !(dest->word == v.at.word && dest->global == v.at.global)) {
            const std::uint32_t w = calcWidth(c);
            emit(w == 1 ? Opcode::MOV_8 : w == 4 ? Opcode::MOV_32 : Opcode::MOV_64, {*dest, v.at});
            v.at = *dest;
        }
        // A string keeps its own type (capacity): moving it reads no more than it holds.
        const bool sameStringKind = (c == Calc::Str || c == Calc::WStr) && v.type != nullptr &&
                                    stripAlias(v.type)->kind() == stripAlias(to)->kind();
        if (!sameStringKind) {
            v.type = to;
        }
        return v;
    }
    const Operand d = dest ? *dest : frameSlot(std::max<std::uint32_t>(calcWidth(c), 4), 8);
    auto op = [&](Opcode o) {
        emit(o, {d, v.at});
        return Value{d, c, to};
    };
    const bool fromSigned = f == Calc::I32 || f == Calc::I64;
    switch (c) {
    case Calc::Bool:
        if (f == Calc::F32 || f == Calc::F64) { // REAL_TO_BOOL: x <> 0.0 (so NaN gives TRUE)
            emit(f == Calc::F32 ? Opcode::NE_F32 : Opcode::NE_F64, {d, v.at, constant64(0)});
            return Value{d, c, to};
        }
        return op(calcWidth(f) == 8 ? Opcode::TO_BOOL_64 : Opcode::TO_BOOL_32);
    case Calc::I32:
    case Calc::U32:
        switch (f) {
        case Calc::Bool: return op(Opcode::ZX_8_32);
        case Calc::I32:
        case Calc::U32: return Value{v.at, c, to};
        case Calc::I64:
        case Calc::U64: return isPointer(to) ? toPointer(v, to, d) : op(Opcode::MOV_32);
        case Calc::F32:
        case Calc::F64: return realToInt(v, to, false, d);
        default: break;
        }
        break;
    case Calc::I64:
    case Calc::U64:
        switch (f) {
        case Calc::Bool: {
            emit(Opcode::ZX_8_32, {d, v.at});
            emit(Opcode::ZX_32_64, {d, d});
            return Value{d, c, to};
        }
        case Calc::I32: return op(Opcode::SX_32_64);
        case Calc::U32: return op(Opcode::ZX_32_64);
        case Calc::I64:
        case Calc::U64: return Value{v.at, c, to};
        case Calc::F32:
        case Calc::F64: return realToInt(v, to, false, d);
        default: break;
        }
        break;
    case Calc::F32:
        switch (f) {
        case Calc::I32: return op(Opcode::I32_TO_F32);
        case Calc::U32: return op(Opcode::U32_TO_F32);
        case Calc::I64: return op(Opcode::I64_TO_F32);
        case Calc::U64: return op(Opcode::U64_TO_F32);
        case Calc::F64: return op(Opcode::F64_TO_F32);
        default: break;
        }
        break;
    case Calc::F64:
        switch (f) {
        case Calc::I32: return op(Opcode::I32_TO_F64);
        case Calc::U32: return op(Opcode::U32_TO_F64);
        case Calc::I64: return op(Opcode::I64_TO_F64);
        case Calc::U64: return op(Opcode::U64_TO_F64);
        case Calc::F32: return op(Opcode::F32_TO_F64);
        default: break;
        }
        break;
    default: break;
    }
    (void)fromSigned;
    g_.error(span_, "no conversion from '" + (v.type != nullptr ? stripAlias(v.type)->name() : std::string("?")) +
                        "' to '" + stripAlias(to)->name() + "'");
    return Value{d, c, to};
}

// REAL/LREAL -> any integer type (and TRUNC): rounded half to even (or truncated), then
// saturated to the range of the target type; NaN gives 0 (docs/language-notes.md). The
// conversion instructions saturate to 32 or 64 bits only, so narrower and unsigned targets get
// their range clamped after them here.
Value Lowerer::realToInt(Value v, const Type* to, bool trunc, Operand d) {
    const Calc c = calcOf(to);
    const bool f32 = v.calc == Calc::F32;
    const std::uint32_t size = stripAlias(to)->size;
    auto toI32 = [&] {
        return f32 ? (trunc ? Opcode::TRUNC_F32_I32 : Opcode::F32_TO_I32)
                   : (trunc ? Opcode::TRUNC_F64_I32 : Opcode::F64_TO_I32);
    };
    auto toI64 = [&] {
        return f32 ? (trunc ? Opcode::TRUNC_F32_I64 : Opcode::F32_TO_I64)
                   : (trunc ? Opcode::TRUNC_F64_I64 : Opcode::F64_TO_I64);
    };
    if (c == Calc::I64 || (c == Calc::I32 && size >= 4)) { // LINT, DINT: the instruction saturates
        emit(c == Calc::I64 ? toI64() : toI32(), {d, v.at});
        return Value{d, c, to};
    }
    if (c == Calc::U64) { // ULINT, LWORD: 0 .. 2^64 - 1
        Operand x = v.at;
        if (f32) {
            x = frameSlot(8, 8);
            emit(Opcode::F32_TO_F64, {x, v.at});
        }
        if (!trunc) {
            emit(Opcode::F64_TO_U64, {d, x});
            return Value{d, c, to};
        }
        // At and above 2^63 every LREAL is a whole number: rounding is truncation there.
        std::vector<std::uint32_t> low;
        std::vector<std::uint32_t> end;
        const Operand high = frameSlot(4, 4);
        emit(Opcode::GE_F64, {high, x, constant64(std::bit_cast<std::uint64_t>(9223372036854775808.0))});
        emitJump(Opcode::JMP_F, {high}, low);
        emit(Opcode::F64_TO_U64, {d, x});
        emitJump(Opcode::JMP, {}, end);
        patch(low, here());
        emit(Opcode::TRUNC_F64_I64, {d, x});
        emit(Opcode::MAX_I64, {d, d, constant64(0)});
        patch(end, here());
        return Value{d, c, to};
    }
    if (size >= 4) { // UDINT, DWORD: through LINT
        const Operand w = frameSlot(8, 8);
        emit(toI64(), {w, v.at});
        emit(Opcode::MAX_I64, {w, w, constant64(0)});
        emit(Opcode::MIN_I64, {w, w, constant64(0xFFFFFFFFull)});
        emit(Opcode::MOV_32, {d, w});
        return Value{d, c, to};
    }
    // SINT, INT, USINT, UINT, BYTE, WORD: through DINT
    const bool sign = c == Calc::I32;
    const std::int64_t hi = sign ? (std::int64_t{1} << (8 * size - 1)) - 1 : (std::int64_t{1} << (8 * size)) - 1;
    const std::int64_t lo = sign ? -hi - 1 : 0;
    emit(toI32(), {d, v.at});
    emit(Opcode::MAX_I32, {d, d, constant64(static_cast<std::uint64_t>(lo))});
    emit(Opcode::MIN_I32, {d, d, constant64(static_cast<std::uint64_t>(hi))});
    return Value{d, c, to};
}

// Truncates a 32-bit computation to a narrow type and widens it back (explicit conversions
// to SINT, BYTE… inside an expression must see the truncated value).
Value Lowerer::narrow(Value v, const Type* to) {
    const std::uint32_t w = stripAlias(to)->size;
    if (calcWidth(v.calc) != 4 || w >= 4 || v.calc == Calc::Bool) {
        return v;
    }
    const Operand d = frameSlot(4, 4);
    const bool sign = v.calc == Calc::I32;
    emit(w == 1 ? (sign ? Opcode::SX_8_32 : Opcode::ZX_8_32) : (sign ? Opcode::SX_16_32 : Opcode::ZX_16_32), {d, v.at});
    return Value{d, v.calc, to};
}

Value Lowerer::eval(const ast::Expr& e, const Type* want, std::optional<Operand> dest) {
    const Type* type = e.type;
    const Type* st = stripAlias(type);
    if (st == nullptr || st->kind() == TypeKind::IntLiteral || st->kind() == TypeKind::RealLiteral ||
        st->kind() == TypeKind::Null) {
        type = want != nullptr ? want : type;
    }
    // A destination only helps when the expression computes in the wanted form.
    if (dest && calcOf(type) != calcOf(want)) {
        dest.reset();
    }
    if (auto c = constantValue(e, want, dest)) {
        return c->calc == calcOf(want) || want == nullptr ? *c : convert(*c, want, dest);
    }
    if (want != nullptr && stripAlias(want)->kind() == TypeKind::Interface && instancePou(e.type) != nullptr) {
        // An FB instance given where an INTERFACE is expected: the interface value is the
        // instance's image offset (the instance carries its dispatch table).
        return convert(Value{pointerOf(locate(e)), Calc::U32, want}, want, dest);
    }
    Value v;
    switch (e.kind) {
    case ast::ExprKind::Paren: return eval(*static_cast<const ast::ParenExpr&>(e).inner, want, dest);
    case ast::ExprKind::Literal: {
        const auto& lit = static_cast<const ast::LiteralExpr&>(e);
        if (lit.literalKind == ast::LiteralKind::Null) {
            v = Value{constant64(0), Calc::U32, type};
            break;
        }
        g_.error(e.span, "literal cannot be compiled here");
        return Value{constant64(0), calcOf(want), want};
    }
    case ast::ExprKind::Name:
        if (const Symbol* sym = static_cast<const ast::NameExpr&>(e).symbol; sym != nullptr && !pinned_.empty()) {
            if (auto it = std::find_if(pinned_.rbegin(), pinned_.rend(), [&](const auto& p) { return p.first == sym; });
                it != pinned_.rend()) {
                v = Value{it->second, Calc::I32, type};
                break;
            }
        }
        [[fallthrough]];
    case ast::ExprKind::Member:
    case ast::ExprKind::Index:
    case ast::ExprKind::Deref:
    case ast::ExprKind::DirectAddress:
    case ast::ExprKind::This: {
        const Loc l = locate(e);
        v = loadOnce(l, calcOf(l.type), dest);
        break;
    }
    case ast::ExprKind::BitAccess: {
        const auto& b = static_cast<const ast::BitAccessExpr&>(e);
        const Value w = eval(*b.object, b.object->type);
        const bool wide = calcWidth(w.calc) == 8;
        const Operand d = frameSlot(wide ? 8 : 4, 8);
        emit(wide ? Opcode::SHR_64 : Opcode::SHR_32, {d, w.at, constant64(b.bit)});
        emit(wide ? Opcode::AND_64 : Opcode::AND_32, {d, d, constant64(1)});
        v = Value{d, Calc::Bool, g_.model().types.get(TypeKind::Bool)};
        break;
    }
    case ast::ExprKind::Unary: {
        const auto& u = static_cast<const ast::UnaryExpr&>(e);
        const Calc c = calcOf(type);
        const Value a = eval(*u.operand, type);
        if (u.op == ast::UnaryOp::Plus) {
            v = a;
            break;
        }
        const Operand d = dest ? *dest : frameSlot(std::max<std::uint32_t>(calcWidth(c), 4), 8);
        if (u.op == ast::UnaryOp::Neg) {
            const bool trap = g_.options().overflowTrap;
            const Opcode op = c == Calc::F32      ? Opcode::NEG_F32
                              : c == Calc::F64    ? Opcode::NEG_F64
                              : calcWidth(c) == 8 ? (trap ? Opcode::NEG_I64_T : Opcode::NEG_I64)
                                                  : (trap ? Opcode::NEG_I32_T : Opcode::NEG_I32);
            emit(op, {d, a.at});
        } else if (c == Calc::Bool) {
            emit(Opcode::NOT_B, {d, a.at});
        } else {
            emit(calcWidth(c) == 8 ? Opcode::NOT_64 : Opcode::NOT_32, {d, a.at});
            const std::uint32_t w = stripAlias(type)->size;
            if (w < 4) {
                emit(Opcode::AND_32, {d, d, constant64((1ull << (8 * w)) - 1)});
            }
        }
        v = Value{d, c, type};
        break;
    }
    case ast::ExprKind::Binary: v = binary(static_cast<const ast::BinaryExpr&>(e), type, dest); break;
    case ast::ExprKind::Call: v = call(static_cast<const ast::CallExpr&>(e), type, dest); break;
    case ast::ExprKind::Ref: {
        const Loc l = locate(*static_cast<const ast::RefExpr&>(e).operand);
        v = Value{pointerOf(l), Calc::U32, type};
        break;
    }
    default:
        g_.error(e.span, "this expression is not supported by the code generator yet");
        return Value{constant64(0), calcOf(want), want};
    }
    if (want == nullptr) {
        return v;
    }
    return convert(v, want, dest);
}

Opcode compareOpcode(ast::BinaryOp binOp, Calc cc) {
    using B = ast::BinaryOp;
    static const Opcode kOps[6][6] = {
        // Eq, Ne, Lt, Le, Gt, Ge for I32, U32, I64, U64, F32, F64
        {Opcode::EQ_I32, Opcode::NE_I32, Opcode::LT_I32, Opcode::LE_I32, Opcode::GT_I32, Opcode::GE_I32},
        {Opcode::EQ_I32, Opcode::NE_I32, Opcode::LT_U32, Opcode::LE_U32, Opcode::GT_U32, Opcode::GE_U32},
        {Opcode::EQ_I64, Opcode::NE_I64, Opcode::LT_I64, Opcode::LE_I64, Opcode::GT_I64, Opcode::GE_I64},
        {Opcode::EQ_I64, Opcode::NE_I64, Opcode::LT_U64, Opcode::LE_U64, Opcode::GT_U64, Opcode::GE_U64},
        {Opcode::EQ_F32, Opcode::NE_F32, Opcode::LT_F32, Opcode::LE_F32, Opcode::GT_F32, Opcode::GE_F32},
        {Opcode::EQ_F64, Opcode::NE_F64, Opcode::LT_F64, Opcode::LE_F64, Opcode::GT_F64, Opcode::GE_F64},
    };
    const int row = cc == Calc::I32   ? 0
                    : cc == Calc::U32 ? 1
                    : cc == Calc::I64 ? 2
                    : cc == Calc::U64 ? 3
                    : cc == Calc::F32 ? 4
                                      : 5;
    return kOps[row][static_cast<int>(binOp) - static_cast<int>(B::Eq)];
}

Opcode arithOpcode(ast::BinaryOp binOp, Calc c, bool trap) {
    using B = ast::BinaryOp;
    const bool wide = calcWidth(c) == 8;
    const bool sign = c == Calc::I32 || c == Calc::I64;
    Opcode op = Opcode::NOP;
    switch (binOp) {
    case B::And: op = c == Calc::Bool ? Opcode::AND_B : wide ? Opcode::AND_64 : Opcode::AND_32; break;
    case B::Or: op = c == Calc::Bool ? Opcode::OR_B : wide ? Opcode::OR_64 : Opcode::OR_32; break;
    case B::Xor: op = c == Calc::Bool ? Opcode::XOR_B : wide ? Opcode::XOR_64 : Opcode::XOR_32; break;
    case B::Add:
        op = c == Calc::F32   ? Opcode::ADD_F32
             : c == Calc::F64 ? Opcode::ADD_F64
             : wide           ? (trap ? (sign ? Opcode::ADD_I64_T : Opcode::ADD_U64_T) : Opcode::ADD_I64)
                              : (trap ? (sign ? Opcode::ADD_I32_T : Opcode::ADD_U32_T) : Opcode::ADD_I32);
        break;
    case B::Sub:
        op = c == Calc::F32   ? Opcode::SUB_F32
             : c == Calc::F64 ? Opcode::SUB_F64
             : wide           ? (trap ? (sign ? Opcode::SUB_I64_T : Opcode::SUB_U64_T) : Opcode::SUB_I64)
                              : (trap ? (sign ? Opcode::SUB_I32_T : Opcode::SUB_U32_T) : Opcode::SUB_I32);
        break;
    case B::Mul:
        op = c == Calc::F32   ? Opcode::MUL_F32
             : c == Calc::F64 ? Opcode::MUL_F64
             : wide           ? (trap ? (sign ? Opcode::MUL_I64_T : Opcode::MUL_U64_T) : Opcode::MUL_I64)
                              : (trap ? (sign ? Opcode::MUL_I32_T : Opcode::MUL_U32_T) : Opcode::MUL_I32);
        break;
    case B::Div:
        op = c == Calc::F32   ? Opcode::DIV_F32
             : c == Calc::F64 ? Opcode::DIV_F64
             : wide           ? (sign ? Opcode::DIV_I64 : Opcode::DIV_U64)
                              : (sign ? Opcode::DIV_I32 : Opcode::DIV_U32);
        break;
    case B::Mod:
        op = wide ? (sign ? Opcode::MOD_I64 : Opcode::MOD_U64) : (sign ? Opcode::MOD_I32 : Opcode::MOD_U32);
        break;
    default: break;
    }
    return op;
}

Value Lowerer::compareInto(ast::BinaryOp rel, const Value& a, const Value& b, Calc c, Operand d) {
    Operand x = a.at;
    Operand y = b.at;
    Calc cc = c;
    if (c == Calc::Str || c == Calc::WStr) {
        // Strings compare through a three-way result against 0.
        const Operand r = frameSlot(4, 4);
        emit(c == Calc::Str ? Opcode::SCMP : Opcode::WSCMP, {r, a.at, b.at});
        x = r;
        y = constant64(0);
        cc = Calc::I32;
    } else if (c == Calc::Bool) {
        // BOOL is one byte; the compare instructions read 32 bits.
        const Operand xa = frameSlot(4, 4);
        const Operand yb = frameSlot(4, 4);
        emit(Opcode::ZX_8_32, {xa, a.at});
        emit(Opcode::ZX_8_32, {yb, b.at});
        x = xa;
        y = yb;
        cc = Calc::U32;
    }
    emit(compareOpcode(rel, cc), {d, x, y});
    return Value{d, Calc::Bool, g_.model().types.get(TypeKind::Bool)};
}

Value Lowerer::binary(const ast::BinaryExpr& e, const Type* type, std::optional<Operand> dest) {
    using B = ast::BinaryOp;
    if (e.op == B::AndThen || e.op == B::OrElse) {
        // Short-circuit: the value through the jumps condJump emits. The destination is written
        // only after both operands were read, so `b := b AND_THEN c` sees the old b.
        const Operand d = dest ? *dest : frameSlot(4, 4);
        std::vector<std::uint32_t> isTrue;
        std::vector<std::uint32_t> end;
        condJump(e, true, isTrue);
        emit(Opcode::MOVI_8, {d, imm(0)});
        emitJump(Opcode::JMP, {}, end);
        patch(isTrue, here());
        emit(Opcode::MOVI_8, {d, imm(1)});
        patch(end, here());
        return Value{d, Calc::Bool, g_.model().types.get(TypeKind::Bool)};
    }
    const bool compare = e.op >= B::Eq && e.op <= B::Ge;
    const Type* operandType = type;
    if (compare || (stripAlias(e.lhs->type) != nullptr && stripAlias(e.rhs->type) != nullptr &&
                    (isTimeLike(e.lhs->type) || isTimeLike(e.rhs->type) || isDateLike(e.lhs->type)))) {
        operandType = compareOperandType(g_.model().types, e.lhs->type, e.rhs->type);
        if (operandType == nullptr || stripAlias(operandType)->kind() == TypeKind::IntLiteral) {
            operandType = g_.model().types.get(TypeKind::DInt);
        } else if (stripAlias(operandType)->kind() == TypeKind::RealLiteral) {
            operandType = g_.model().types.get(TypeKind::LReal);
        }
    }
    if (!compare && e.op != B::Pow && (isTimeLike(type) || isDateLike(type))) {
        operandType = type; // TIME arithmetic: nanoseconds in 64 bits
    }
    const Type* rhsType = operandType;
    if (e.op == B::Pow) {
        operandType = isReal(type) ? type : g_.model().types.get(TypeKind::LInt);
        rhsType = operandType;
    }
    if ((e.op == B::Mul || e.op == B::Div) && isTimeLike(type) && !isTimeLike(e.rhs->type)) {
        if (isReal(e.rhs->type)) {
            return timeByReal(e.op, *e.lhs, *e.rhs, type, dest);
        }
        rhsType = g_.model().types.get(TypeKind::LInt); // TIME * ANY_INT
    }
    if (e.op == B::Mul && isTimeLike(type) && isReal(e.lhs->type)) {
        return timeByReal(e.op, *e.rhs, *e.lhs, type, dest); // REAL * TIME
    }
    const Calc c = calcOf(operandType);
    if (e.op == B::Add && (c == Calc::F32 || c == Calc::F64)) {
        if (auto v = multiplyAdd(e, operandType, dest)) {
            return *v;
        }
    }
    if (c == Calc::F64 && (e.op == B::Mul || e.op == B::Div || e.op == B::Add) && operandType == type) {
        if (auto v = widenedReal(e, type, dest)) {
            return *v;
        }
    }
    if (e.op == B::Add && operandType == type) {
        if (auto v = addElement(e, type, dest)) {
            return *v;
        }
    }
    if (e.op == B::Mod && operandType == type) {
        if (auto v = ringIndex(e, type, dest)) {
            return *v;
        }
    }
    const Value a = eval(*e.lhs, operandType);
    // Immediate forms for the common `x + 1`, `x * 31`.
    const bool trap = g_.options().overflowTrap;
    if (!trap && (e.op == B::Add || e.op == B::Sub || e.op == B::Mul) && (c == Calc::I32 || c == Calc::U32) &&
        isConstantCandidate(*e.rhs)) {
        if (auto k = g_.constant(*e.rhs, scope_); k && k->kind == sema::ConstValue::Kind::Int) {
            const Operand d = dest ? *dest : frameSlot(4, 4);
            const auto n = static_cast<std::uint32_t>(e.op == B::Sub ? -k->i : k->i);
            emit(e.op == B::Mul ? Opcode::MUL_I32_IMM : Opcode::ADD_I32_IMM, {d, a.at, imm(n)});
            return Value{d, c, type};
        }
    }
    // Division by a constant: a multiply by its reciprocal, with no zero or -1 check left.
    if (e.op == B::Div || e.op == B::Mod) {
        if (const std::optional<ConstDivisor> k = constantDivisor(*e.rhs, c, e.op == B::Mod)) {
            const bool isSigned = c == Calc::I32;
            const Operand d = dest ? *dest : frameSlot(4, 4);
            const Opcode op = e.op == B::Div ? (isSigned ? Opcode::DIV_I32_IMM : Opcode::DIV_U32_IMM)
                                             : (isSigned ? Opcode::MOD_I32_IMM : Opcode::MOD_U32_IMM);
            emit(op, {d, a.at, imm(k->word), imm(static_cast<std::uint32_t>(k->reciprocal)),
                      imm(static_cast<std::uint32_t>(k->reciprocal >> 32))});
            return Value{d, c, operandType};
        }
    }
    const Value b = eval(*e.rhs, rhsType);
    if (compare) {
        const Operand d = dest && calcOf(type) == Calc::Bool ? *dest : frameSlot(4, 4);
        return compareInto(e.op, a, b, c, d);
    }
    const std::uint32_t w = std::max<std::uint32_t>(calcWidth(c), 4);
    const Operand d = dest ? *dest : frameSlot(w, 8);
    Opcode op = arithOpcode(e.op, c, trap);
    switch (e.op) {
    case B::Pow:
        if (c == Calc::F32 || c == Calc::F64) {
            op = c == Calc::F32 ? Opcode::EXPT_F32 : Opcode::EXPT_F64;
        } else {
            const Operand block = frameSlot(24, 8);
            emit(Opcode::MOV_64, {Operand{block.word + 8, false}, a.at});
            emit(Opcode::MOV_64, {Operand{block.word + 16, false}, b.at});
            debugAt(e.span);
            emit(Opcode::CALL_NATIVE, {imm(static_cast<std::uint32_t>(bc::Native::ExptInt)), block});
            // As EXPT: the 64-bit power keeps the low bits of the base's type.
            return narrow(convert(Value{block, Calc::I64, operandType}, type), type);
        }
        break;
    default: break;
    }
    debugAt(e.span);
    emit(op, {d, a.at, b.at});
    // SINT/INT divide in 32 bits, where INT_MIN / -1 of the narrow type does not overflow:
    // LANGUAGE.md makes it a fault at every width, so the quotient is range-checked.
    if (const std::uint32_t nw = stripAlias(operandType)->size; e.op == B::Div && c == Calc::I32 && nw < 4) {
        const std::int64_t lim = std::int64_t{1} << (8 * nw - 1);
        emit(Opcode::CHKR_I32, {d, imm(static_cast<std::uint32_t>(-lim)), imm(static_cast<std::uint32_t>(lim - 1))});
    }
    return Value{d, c, operandType};
}

std::optional<Value> Lowerer::multiplyAdd(const ast::BinaryExpr& e, const Type* type, std::optional<Operand> dest) {
    using B = ast::BinaryOp;
    const Calc c = calcOf(type);
    // A REAL product computed in the same form as the sum (not one folded to a constant).
    auto product = [&](const ast::Expr& x) -> const ast::BinaryExpr* {
        const ast::Expr* p = &x;
        while (p->kind == ast::ExprKind::Paren) {
            p = static_cast<const ast::ParenExpr*>(p)->inner.get();
        }
        if (p->kind != ast::ExprKind::Binary || p->type == nullptr || calcOf(p->type) != c || isConstantCandidate(*p)) {
            return nullptr;
        }
        const auto* m = static_cast<const ast::BinaryExpr*>(p);
        return m->op == B::Mul ? m : nullptr;
    };
    const ast::BinaryExpr* m = product(*e.lhs);
    const ast::Expr* addend = e.rhs.get();
    if (m == nullptr) {
        m = product(*e.rhs);
        addend = e.lhs.get();
    }
    if (m == nullptr) {
        return std::nullopt;
    }
    // Operands in source order; a REAL addition is commutative, so p + x and x + p are one form.
    Value x;
    Value y;
    Value z;
    if (const ast::BinaryExpr* n = addend == e.rhs.get() ? product(*addend) : nullptr) {
        // Two products: p + q as MUL2ADD_* (each product rounded first, then the sum).
        x = eval(*m->lhs, m->type);
        y = eval(*m->rhs, m->type);
        z = eval(*n->lhs, n->type);
        const Value w = eval(*n->rhs, n->type);
        const Operand d = dest ? *dest : frameSlot(std::max<std::uint32_t>(calcWidth(c), 4), 8);
        debugAt(e.span);
        emit(c == Calc::F32 ? Opcode::MUL2ADD_F32 : Opcode::MUL2ADD_F64, {d, x.at, y.at, z.at, w.at});
        return Value{d, c, type};
    }
    if (addend == e.rhs.get()) {
        x = eval(*m->lhs, m->type);
        y = eval(*m->rhs, m->type);
        z = eval(*addend, type);
    } else {
        z = eval(*addend, type);
        x = eval(*m->lhs, m->type);
        y = eval(*m->rhs, m->type);
    }
    const Operand d = dest ? *dest : frameSlot(std::max<std::uint32_t>(calcWidth(c), 4), 8);
    debugAt(e.span);
    emit(c == Calc::F32 ? Opcode::MULADD_F32 : Opcode::MULADD_F64, {d, x.at, y.at, z.at});
    return Value{d, c, type};
}

void Lowerer::condJump(const ast::Expr& e, bool when, std::vector<std::uint32_t>& patches) {
    using B = ast::BinaryOp;
    if (e.kind == ast::ExprKind::Paren) {
        condJump(*static_cast<const ast::ParenExpr&>(e).inner, when, patches);
        return;
    }
    if (e.kind == ast::ExprKind::Unary && static_cast<const ast::UnaryExpr&>(e).op == ast::UnaryOp::Not) {
        condJump(*static_cast<const ast::UnaryExpr&>(e).operand, !when, patches);
        return;
    }
    if (isConstantCandidate(e)) {
        if (auto k = g_.constant(e, scope_)) {
            if ((k->i != 0) == when) {
                emitJump(Opcode::JMP, {}, patches);
            }
            return;
        }
    }
    if (e.kind == ast::ExprKind::Binary) {
        const auto& b = static_cast<const ast::BinaryExpr&>(e);
        if (b.op == B::AndThen || b.op == B::OrElse) {
            // The right operand runs only when the left one does not decide: AND_THEN is decided
            // by a FALSE left side, OR_ELSE by a TRUE one.
            const bool decidedBy = b.op == B::OrElse;
            if (decidedBy == when) {
                condJump(*b.lhs, when, patches); // decided: the whole is `when`
                condJump(*b.rhs, when, patches);
            } else {
                std::vector<std::uint32_t> decided;
                condJump(*b.lhs, decidedBy, decided); // decided: the whole is not `when`
                condJump(*b.rhs, when, patches);
                patch(decided, here());
            }
            return;
        }
        if (b.op >= B::Eq && b.op <= B::Ge) {
            const Type* ct = compareOperandType(g_.model().types, b.lhs->type, b.rhs->type);
            if (ct == nullptr || stripAlias(ct)->kind() == TypeKind::IntLiteral) {
                ct = g_.model().types.get(TypeKind::DInt);
            }
            const Calc c = calcOf(ct);
            if (c == Calc::I32 || c == Calc::I64) {
                // Fused compare-and-branch; the negated condition when jumping on FALSE.
                int rel = static_cast<int>(b.op) - static_cast<int>(B::Eq); // Eq Ne Lt Le Gt Ge
                if (!when) {
                    static const int kNot[6] = {1, 0, 5, 4, 3, 2};
                    rel = kNot[rel];
                }
                const Value x = eval(*b.lhs, ct);
                if (c == Calc::I32 && isConstantCandidate(*b.rhs)) {
                    if (auto k = g_.constant(*b.rhs, scope_);
                        k && k->kind != sema::ConstValue::Kind::Real && k->kind != sema::ConstValue::Kind::String) {
                        static const Opcode kImm[6] = {Opcode::JEQ_I32_IMM, Opcode::JNE_I32_IMM, Opcode::JLT_I32_IMM,
                                                       Opcode::JLE_I32_IMM, Opcode::JGT_I32_IMM, Opcode::JGE_I32_IMM};
                        emitJump(kImm[rel], {x.at, imm(static_cast<std::uint32_t>(k->i))}, patches);
                        return;
                    }
                }
                const Value y = eval(*b.rhs, ct);
                static const Opcode k32[6] = {Opcode::JEQ_I32, Opcode::JNE_I32, Opcode::JLT_I32,
                                              Opcode::JLE_I32, Opcode::JGT_I32, Opcode::JGE_I32};
                static const Opcode k64[6] = {Opcode::JEQ_I64, Opcode::JNE_I64, Opcode::JLT_I64,
                                              Opcode::JLE_I64, Opcode::JGT_I64, Opcode::JGE_I64};
                emitJump(c == Calc::I32 ? k32[rel] : k64[rel], {x.at, y.at}, patches);
                return;
            }
            if (c == Calc::F32 || c == Calc::F64) {
                // REAL: no negation by flipping the relation (NaN), so jumping on FALSE uses the
                // JN* forms; > and >= are < and <= with the operands swapped (after evaluation).
                const int rel = static_cast<int>(b.op) - static_cast<int>(B::Eq); // Eq Ne Lt Le Gt Ge
                const bool f32 = c == Calc::F32;
                if (stripAlias(ct)->kind() == TypeKind::RealLiteral) {
                    ct = g_.model().types.get(TypeKind::LReal);
                }
                const Value x = eval(*b.lhs, ct);
                const Value y = eval(*b.rhs, ct);
                const bool swap = rel >= 4;
                Opcode op{};
                switch (rel) {
                case 0:
                    op = when ? (f32 ? Opcode::JEQ_F32 : Opcode::JEQ_F64) : (f32 ? Opcode::JNE_F32 : Opcode::JNE_F64);
                    break;
                case 1:
                    op = when ? (f32 ? Opcode::JNE_F32 : Opcode::JNE_F64) : (f32 ? Opcode::JEQ_F32 : Opcode::JEQ_F64);
                    break;
                case 2:
                case 4:
                    op = when ? (f32 ? Opcode::JLT_F32 : Opcode::JLT_F64) : (f32 ? Opcode::JNLT_F32 : Opcode::JNLT_F64);
                    break;
                default:
                    op = when ? (f32 ? Opcode::JLE_F32 : Opcode::JLE_F64) : (f32 ? Opcode::JNLE_F32 : Opcode::JNLE_F64);
                    break;
                }
                emitJump(op, {swap ? y.at : x.at, swap ? x.at : y.at}, patches);
                return;
            }
        }
    }
    const Value v = eval(e, g_.model().types.get(TypeKind::Bool));
    emitJump(when ? Opcode::JMP_T : Opcode::JMP_F, {v.at}, patches);
}

} // namespace takt::compiler::codegen
