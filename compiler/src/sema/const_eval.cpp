// Constant evaluation: array bounds, STRING lengths, subrange bounds, enum values, CASE labels,
// CONSTANT initialisers and task settings. Integers are computed in 128 bits and then wrapped to
// the result type's width (IEC wrap rules); untyped integer literals keep the full 64-bit range
// (LINT and ULINT), anything beyond is E0504.
#include <cfenv>
#include <cmath>
#include <iterator>
#include <limits>

#include "sema/declare.h"
#include "sema/pointers.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

__extension__ typedef __int128 Int128;

constexpr Int128 kMinInt64 = std::numeric_limits<std::int64_t>::min();
constexpr Int128 kMaxInt64 = std::numeric_limits<std::int64_t>::max();
constexpr Int128 kMaxUInt64 = std::numeric_limits<std::uint64_t>::max();

Int128 asInt128(const ConstValue& v) {
    return v.isUnsigned ? static_cast<Int128>(static_cast<std::uint64_t>(v.i)) : static_cast<Int128>(v.i);
}

const Type* intCore(const Type* t) {
    t = stripAlias(t);
    while (t != nullptr && t->kind() == TypeKind::Subrange) {
        t = stripAlias(static_cast<const SubrangeType*>(t)->base);
    }
    if (t != nullptr && t->kind() == TypeKind::Enum) {
        t = stripAlias(static_cast<const EnumType*>(t)->base);
    }
    return t;
}

bool isTimeKind(const Type* t) {
    const Type* c = stripAlias(t);
    return c != nullptr && c->kind() >= TypeKind::Time && c->kind() <= TypeKind::Ldt;
}

// Wraps `v` to the width of `type` (two's complement); untyped literals keep 64 bits.
std::optional<ConstValue> makeInt(Int128 v, const Type* type) {
    ConstValue out;
    out.type = type;
    const Type* c = intCore(type);
    if (c != nullptr && c->kind() == TypeKind::Bool) {
        out.kind = ConstValue::Kind::Bool;
        out.i = (v & 1) != 0 ? 1 : 0;
        return out;
    }
    if (stripAlias(type) != nullptr && stripAlias(type)->kind() == TypeKind::Enum) {
        out.kind = ConstValue::Kind::Enum;
    }
    const std::uint32_t width = (c == nullptr || c->kind() == TypeKind::IntLiteral) ? 0 : bitWidth(c);
    if (width == 0) {
        if (v < kMinInt64 || v > kMaxUInt64) {
            return std::nullopt; // beyond LINT/ULINT
        }
        out.isUnsigned = v > kMaxInt64;
        out.i = static_cast<std::int64_t>(static_cast<std::uint64_t>(v));
        return out;
    }
    const auto bits = static_cast<std::uint64_t>(v);
    const std::uint64_t mask = width >= 64 ? ~0ull : ((1ull << width) - 1);
    const std::uint64_t low = bits & mask;
    if (isSignedInt(c)) {
        const std::uint64_t sign = 1ull << (width - 1);
        out.i = static_cast<std::int64_t>((low ^ sign) - sign);
    } else {
        out.i = static_cast<std::int64_t>(low);
        out.isUnsigned = width == 64 && low > static_cast<std::uint64_t>(kMaxInt64);
    }
    return out;
}

double asReal(const ConstValue& v) {
    if (v.kind == ConstValue::Kind::Real) {
        return v.r;
    }
    return static_cast<double>(asInt128(v));
}

bool isIntegral(const ConstValue& v) {
    return v.kind == ConstValue::Kind::Int || v.kind == ConstValue::Kind::Enum;
}

// TIME, TOD, DATE, DT to or from a number counting milliseconds or seconds (nanosPerCount), with
// the operations the code generator emits (Lowerer::countConversion): whole counts truncated
// toward zero, REALs through LREAL, products wrapping at 64 bits. The L-variants convert their
// nanoseconds unchanged (convertConstant).
std::optional<ConstValue> convertCount(Context& cx, const ConstValue& value, const Type* target) {
    const bool fromTime = value.kind == ConstValue::Kind::Time;
    if (fromTime == isTimeKind(target)) {
        return std::nullopt;
    }
    const std::int64_t unit = nanosPerCount(fromTime ? value.type : target);
    if (unit <= 1) {
        return std::nullopt;
    }
    ConstValue out;
    out.type = target;
    if (fromTime) {
        if (isReal(target)) {
            out.kind = ConstValue::Kind::Real;
            out.r = static_cast<double>(value.i) / static_cast<double>(unit);
            if (stripAlias(target)->kind() == TypeKind::Real) {
                out.r = static_cast<double>(static_cast<float>(out.r));
            }
            return out;
        }
        ConstValue count;
        count.kind = ConstValue::Kind::Int;
        count.type = cx.model.types.get(TypeKind::LInt);
        count.i = value.i / unit;
        return convertConstant(cx, count, target);
    }
    out.kind = ConstValue::Kind::Time;
    if (value.kind == ConstValue::Kind::Real) {
        const double scaled = std::nearbyint(value.r * static_cast<double>(unit));
        if (std::isnan(scaled)) {
            return std::nullopt; // computed at run time (NaN gives 0)
        }
        constexpr double kTwo63 = 9223372036854775808.0;
        out.i = scaled >= kTwo63    ? std::numeric_limits<std::int64_t>::max()
                : scaled <= -kTwo63 ? std::numeric_limits<std::int64_t>::min()
                                    : static_cast<std::int64_t>(scaled);
        return out;
    }
    if (value.kind != ConstValue::Kind::Int && value.kind != ConstValue::Kind::Bool) {
        return std::nullopt;
    }
    out.i = static_cast<std::int64_t>(static_cast<std::uint64_t>(asInt128(value) * unit));
    return out;
}

class Evaluator {
public:
    Evaluator(Context& cx, const Scope* scope, bool report) : cx_(cx), scope_(scope), report_(report) {}

    std::optional<ConstValue> eval(const ast::Expr& e) {
        switch (e.kind) {
        case ast::ExprKind::Literal: return literal(static_cast<const ast::LiteralExpr&>(e));
        case ast::ExprKind::Paren: return eval(*static_cast<const ast::ParenExpr&>(e).inner);
        case ast::ExprKind::Name: return name(static_cast<const ast::NameExpr&>(e));
        case ast::ExprKind::Member: return member(static_cast<const ast::MemberExpr&>(e));
        case ast::ExprKind::EnumLiteral: return enumLiteral(static_cast<const ast::EnumLiteralExpr&>(e));
        case ast::ExprKind::Unary: return unary(static_cast<const ast::UnaryExpr&>(e));
        case ast::ExprKind::Binary: return binary(static_cast<const ast::BinaryExpr&>(e));
        case ast::ExprKind::Call: return call(static_cast<const ast::CallExpr&>(e));
        case ast::ExprKind::Error: return std::nullopt; // already reported by the parser
        default: return notConstant(e.span, "this expression is not a constant");
        }
    }

private:
    std::optional<ConstValue> notConstant(Span span, std::string message) {
        if (report_ && !reported_) {
            cx_.error(DiagCode::NotConstant, span, std::move(message));
        }
        reported_ = true;
        return std::nullopt;
    }

    std::optional<ConstValue> literal(const ast::LiteralExpr& lit) {
        TypeTable& types = cx_.model.types;
        const Type* prefix = lit.typePrefix ? types.elementary(lit.typePrefix->name) : nullptr;
        ConstValue v;
        switch (lit.literalKind) {
        case ast::LiteralKind::Bool:
            v.kind = ConstValue::Kind::Bool;
            v.i = lit.boolValue ? 1 : 0;
            v.type = types.get(TypeKind::Bool);
            return prefix != nullptr ? convertConstant(cx_, v, prefix) : v;
        case ast::LiteralKind::Int: {
            const Int128 magnitude = lit.intValue;
            auto out = makeInt(lit.negative ? -magnitude : magnitude, types.get(TypeKind::IntLiteral));
            if (!out) {
                return outOfRange(lit.span, "integer literal");
            }
            return prefix != nullptr ? convertConstant(cx_, *out, prefix) : out;
        }
        case ast::LiteralKind::Real:
            v.kind = ConstValue::Kind::Real;
            v.r = lit.realValue;
            v.type = types.get(TypeKind::RealLiteral);
            return prefix != nullptr ? convertConstant(cx_, v, prefix) : v;
        case ast::LiteralKind::String:
        case ast::LiteralKind::WString: {
            const bool wide = lit.literalKind == ast::LiteralKind::WString;
            v.kind = ConstValue::Kind::String;
            v.s = lit.stringValue;
            v.type = types.string(wide, static_cast<std::uint32_t>(std::max<std::size_t>(1, v.s.size())));
            return v;
        }
        case ast::LiteralKind::Time:
        case ast::LiteralKind::Date:
        case ast::LiteralKind::Tod:
        case ast::LiteralKind::Dt: {
            v.kind = ConstValue::Kind::Time;
            v.i = lit.nanos;
            const std::string p = lit.typePrefix ? upperName(lit.typePrefix->name) : std::string();
            const bool isLong = !p.empty() && p[0] == 'L';
            switch (lit.literalKind) {
            case ast::LiteralKind::Time: v.type = types.get(isLong ? TypeKind::LTime : TypeKind::Time); break;
            case ast::LiteralKind::Date: v.type = types.get(isLong ? TypeKind::LDate : TypeKind::Date); break;
            case ast::LiteralKind::Tod: v.type = types.get(isLong ? TypeKind::LTod : TypeKind::Tod); break;
            default: v.type = types.get(isLong ? TypeKind::Ldt : TypeKind::Dt); break;
            }
            return v;
        }
        case ast::LiteralKind::Null: break;
        }
        return notConstant(lit.span, "NULL is not a constant value");
    }

    std::optional<ConstValue> outOfRange(Span span, std::string_view what) {
        if (report_ && !reported_) {
            cx_.error(DiagCode::ConstantOutOfRange, span,
                      "constant " + std::string(what) + " is outside the 64-bit integer range");
        }
        reported_ = true;
        return std::nullopt;
    }

    std::optional<ConstValue> fromSymbol(const Symbol* sym, Span span, std::string_view text) {
        if (sym == nullptr) {
            // A bare enum value (`Run`) is a constant when exactly one enumeration declares it.
            const auto [first, last] = cx_.model.enumValuesByName.equal_range(upperName(text));
            const Symbol* found = first != last ? first->second : nullptr;
            const auto matches = std::distance(first, last);
            if (matches == 1) {
                return fromSymbol(found, span, text);
            }
            if (report_ && !reported_) {
                if (matches > 1) {
                    cx_.error(DiagCode::AmbiguousEnumValue, span,
                              "'" + std::string(text) + "' is a value of several enumerations; write Type#" +
                                  std::string(text));
                } else {
                    cx_.error(DiagCode::UnknownIdentifier, span, "unknown identifier '" + std::string(text) + "'");
                }
            }
            reported_ = true;
            return std::nullopt;
        }
        if (sym->kind == SymbolKind::EnumValue) {
            ConstValue v;
            v.kind = ConstValue::Kind::Enum;
            v.i = sym->enumValue;
            v.type = sym->type;
            return v;
        }
        if (sym->kind != SymbolKind::Variable || !sym->constant) {
            return notConstant(span, "'" + std::string(text) + "' is not a constant");
        }
        if (sym->section == ast::VarSection::External) {
            // During declaration the external is not linked yet (array bounds come first).
            const Symbol* global = sym->target;
            for (auto it = cx_.model.globals.begin(); global == nullptr && it != cx_.model.globals.end(); ++it) {
                if ((*it)->section != ast::VarSection::Static && sameName((*it)->name, sym->name)) {
                    global = *it;
                }
            }
            if (global != nullptr) {
                sym = global;
            }
        }
        if (sym->init == nullptr) {
            return notConstant(span, "constant '" + std::string(text) + "' has no initial value");
        }
        for (const Symbol* s : cx_.evaluating) {
            if (s == sym) {
                return notConstant(span, "constant '" + std::string(text) + "' is defined in terms of itself");
            }
        }
        const Type* type = sym->type;
        if (type == nullptr && cx_.decl != nullptr) {
            type = ensureVarType(cx_, const_cast<Symbol*>(sym));
        }
        cx_.evaluating.push_back(sym);
        Evaluator inner(cx_, sym->declScope != nullptr ? sym->declScope : scope_, false);
        std::optional<ConstValue> v = inner.eval(*sym->init);
        cx_.evaluating.pop_back();
        if (!v) {
            return notConstant(span, "constant '" + std::string(text) + "' has no constant value");
        }
        if (type != nullptr) {
            if (auto converted = convertConstant(cx_, *v, type)) {
                return converted;
            }
        }
        return v;
    }

    std::optional<ConstValue> name(const ast::NameExpr& n) {
        return fromSymbol(lookup(cx_, scope_, n.name.name, false, &n.name.span), n.span, n.name.name);
    }

    // Lib.N (namespace member) or Mode.Run (enumeration value).
    std::optional<ConstValue> member(const ast::MemberExpr& m) {
        const Symbol* container = symbolOf(*m.object);
        if (container != nullptr && container->scope != nullptr &&
            (container->kind == SymbolKind::Namespace || container->kind == SymbolKind::Type)) {
            if (container->kind == SymbolKind::Type && cx_.decl != nullptr) {
                completeTypeSymbol(cx_, const_cast<Symbol*>(container));
            }
            const Symbol* found = container->scope->findLocal(m.member.name);
            if (found == nullptr) {
                if (report_ && !reported_) {
                    cx_.error(DiagCode::UnknownMember, m.member.span,
                              "'" + container->name + "' has no member '" + m.member.name + "'");
                }
                reported_ = true;
                return std::nullopt;
            }
            return fromSymbol(found, m.span, m.member.name);
        }
        return notConstant(m.span, "'" + m.member.name + "' is not a constant");
    }

    const Symbol* symbolOf(const ast::Expr& e) {
        if (e.kind == ast::ExprKind::Name) {
            const std::string& n = static_cast<const ast::NameExpr&>(e).name.name;
            const Symbol* s = lookup(cx_, scope_, n);
            // `color : Color` does not hide the type Color in Color.Red.
            if (s != nullptr && s->kind == SymbolKind::Variable && s->type != nullptr &&
                s->type->kind() == TypeKind::Enum && sameName(s->type->name(), n)) {
                if (const Symbol* typeSym = static_cast<const EnumType*>(s->type)->symbol) {
                    return typeSym;
                }
            }
            return s;
        }
        if (e.kind == ast::ExprKind::Member) {
            const auto& m = static_cast<const ast::MemberExpr&>(e);
            const Symbol* container = symbolOf(*m.object);
            if (container != nullptr && container->kind == SymbolKind::Namespace && container->scope != nullptr) {
                return container->scope->findLocal(m.member.name);
            }
        }
        return nullptr;
    }

    std::optional<ConstValue> enumLiteral(const ast::EnumLiteralExpr& e) {
        Symbol* typeSym = lookup(cx_, scope_, e.typeName.name, true);
        if (typeSym != nullptr && typeSym->kind == SymbolKind::Type) {
            if (cx_.decl != nullptr) {
                completeTypeSymbol(cx_, typeSym);
            }
            if (typeSym->scope != nullptr) {
                if (const Symbol* v = typeSym->scope->findLocal(e.value.name)) {
                    return fromSymbol(v, e.span, e.value.name);
                }
            }
        }
        if (report_ && !reported_) {
            cx_.error(typeSym == nullptr ? DiagCode::UnknownType : DiagCode::UnknownMember, e.span,
                      "'" + e.typeName.name + "#" + e.value.name + "' names no enumeration value");
        }
        reported_ = true;
        return std::nullopt;
    }

    std::optional<ConstValue> unary(const ast::UnaryExpr& u) {
        auto v = eval(*u.operand);
        if (!v) {
            return v;
        }
        switch (u.op) {
        case ast::UnaryOp::Plus: return v;
        case ast::UnaryOp::Neg:
            if (v->kind == ConstValue::Kind::Real) {
                v->r = -v->r;
                return v;
            }
            if (v->kind == ConstValue::Kind::Time) {
                v->i = -v->i;
                return v;
            }
            if (v->kind == ConstValue::Kind::Int) {
                if (auto out = makeInt(-asInt128(*v), v->type)) {
                    return out;
                }
                return outOfRange(u.span, "negation");
            }
            break;
        case ast::UnaryOp::Not:
            if (v->kind == ConstValue::Kind::Bool) {
                v->i = v->i != 0 ? 0 : 1;
                return v;
            }
            if (v->kind == ConstValue::Kind::Int) {
                const Type* t = v->type;
                if (intCore(t) == nullptr || intCore(t)->kind() == TypeKind::IntLiteral) {
                    t = cx_.model.types.get(TypeKind::LWord);
                }
                return makeInt(~asInt128(*v), t);
            }
            break;
        }
        return notConstant(u.span, "operator not defined for this constant");
    }

    std::optional<ConstValue> binary(const ast::BinaryExpr& b) {
        auto lhs = eval(*b.lhs);
        if (!lhs) {
            return lhs;
        }
        auto rhs = eval(*b.rhs);
        if (!rhs) {
            return rhs;
        }
        const TypeTable& types = cx_.model.types;
        const ast::BinaryOp op = b.op;
        if (op >= ast::BinaryOp::Eq && op <= ast::BinaryOp::Ge) {
            return compare(op, *lhs, *rhs, b.span);
        }
        if (lhs->kind == ConstValue::Kind::Time || rhs->kind == ConstValue::Kind::Time) {
            return timeArith(op, *lhs, *rhs, b.span);
        }
        if ((op == ast::BinaryOp::AndThen || op == ast::BinaryOp::OrElse) && lhs->kind == ConstValue::Kind::Bool &&
            rhs->kind == ConstValue::Kind::Bool) {
            ConstValue v = *lhs;
            v.i = op == ast::BinaryOp::AndThen ? (lhs->i & rhs->i) : (lhs->i | rhs->i);
            return v;
        }
        if (op == ast::BinaryOp::And || op == ast::BinaryOp::Or || op == ast::BinaryOp::Xor) {
            if (lhs->kind == ConstValue::Kind::Bool && rhs->kind == ConstValue::Kind::Bool) {
                ConstValue v = *lhs;
                v.i = op == ast::BinaryOp::And  ? (lhs->i & rhs->i)
                      : op == ast::BinaryOp::Or ? (lhs->i | rhs->i)
                                                : (lhs->i ^ rhs->i);
                return v;
            }
            if (lhs->kind == ConstValue::Kind::Int && rhs->kind == ConstValue::Kind::Int) {
                const Type* t = commonType(types, lhs->type, rhs->type);
                const Int128 a = asInt128(*lhs);
                const Int128 c = asInt128(*rhs);
                return makeInt(op == ast::BinaryOp::And  ? (a & c)
                               : op == ast::BinaryOp::Or ? (a | c)
                                                         : (a ^ c),
                               t != nullptr ? t : lhs->type);
            }
            return notConstant(b.span, "operator not defined for these constants");
        }
        const bool real = lhs->kind == ConstValue::Kind::Real || rhs->kind == ConstValue::Kind::Real;
        if (!(isIntegral(*lhs) || lhs->kind == ConstValue::Kind::Real) ||
            !(isIntegral(*rhs) || rhs->kind == ConstValue::Kind::Real)) {
            return notConstant(b.span, "operator not defined for these constants");
        }
        if (op == ast::BinaryOp::Pow && !real) {
            return integerPower(*lhs, *rhs, b.span);
        }
        const Type* t = commonType(types, lhs->type, rhs->type);
        if (real) {
            const double a = asReal(*lhs);
            const double c = asReal(*rhs);
            if ((op == ast::BinaryOp::Div || op == ast::BinaryOp::Mod) && c == 0.0) {
                return divisionByZero(b.span);
            }
            ConstValue v;
            v.kind = ConstValue::Kind::Real;
            v.type = (t != nullptr && isReal(t)) ? t : types.get(TypeKind::LReal);
            switch (op) {
            case ast::BinaryOp::Add: v.r = a + c; break;
            case ast::BinaryOp::Sub: v.r = a - c; break;
            case ast::BinaryOp::Mul: v.r = a * c; break;
            case ast::BinaryOp::Div: v.r = a / c; break;
            case ast::BinaryOp::Pow: v.r = std::pow(a, c); break;
            default: return notConstant(b.span, "MOD is not defined for REAL constants");
            }
            return v;
        }
        const Int128 a = asInt128(*lhs);
        const Int128 c = asInt128(*rhs);
        Int128 r = 0;
        switch (op) {
        case ast::BinaryOp::Add: r = a + c; break;
        case ast::BinaryOp::Sub: r = a - c; break;
        case ast::BinaryOp::Mul:
            // Two ULINT operands can pass even 128 bits (signed overflow, undefined in C++).
            if (__builtin_mul_overflow(a, c, &r)) {
                return outOfRange(b.span, "expression");
            }
            break;
        case ast::BinaryOp::Div:
        case ast::BinaryOp::Mod:
            if (c == 0) {
                return divisionByZero(b.span);
            }
            // Truncation toward zero; MOD takes the dividend's sign (LANGUAGE.md).
            r = op == ast::BinaryOp::Div ? a / c : a % c;
            break;
        default: break;
        }
        if (auto out = makeInt(r, t != nullptr ? t : types.get(TypeKind::IntLiteral))) {
            return out;
        }
        return outOfRange(b.span, "expression");
    }

    // `a ** b` on integers is EXPT: the power in 64 bits, wrapping, in the base's type; a negative
    // exponent gives 0 unless the base is 1 or -1 (the VM's ExptInt, where 0 to a negative
    // power traps, so that is left to run time).
    std::optional<ConstValue> integerPower(const ConstValue& base, const ConstValue& exponent, Span span) {
        const std::int64_t x = base.i;
        const Int128 n = asInt128(exponent);
        if (n < 0) {
            if (x == 0) {
                return notConstant(span, "0 to a negative power divides by zero at run time");
            }
            return makeInt(x == 1 ? 1 : x == -1 ? (n % 2 == 0 ? 1 : -1) : 0, base.type);
        }
        std::uint64_t result = 1;
        auto factor = static_cast<std::uint64_t>(x);
        for (auto e = static_cast<std::uint64_t>(n); e > 0; e >>= 1) {
            if ((e & 1) != 0) {
                result *= factor;
            }
            factor *= factor;
        }
        return makeInt(static_cast<std::int64_t>(result), base.type);
    }

    std::optional<ConstValue> divisionByZero(Span span) {
        if (report_ && !reported_) {
            cx_.error(DiagCode::ConstDivisionByZero, span, "constant expression divides by zero");
        }
        reported_ = true;
        return std::nullopt;
    }

    std::optional<ConstValue> compare(ast::BinaryOp op, const ConstValue& a, const ConstValue& c, Span span) {
        int order = 0;
        if (a.kind == ConstValue::Kind::String && c.kind == ConstValue::Kind::String) {
            order = a.s < c.s ? -1 : a.s > c.s ? 1 : 0;
        } else if (a.kind == ConstValue::Kind::Real || c.kind == ConstValue::Kind::Real) {
            if (a.kind == ConstValue::Kind::String || c.kind == ConstValue::Kind::String) {
                return notConstant(span, "cannot compare these constants");
            }
            const double x = asReal(a);
            const double y = asReal(c);
            order = x < y ? -1 : x > y ? 1 : 0;
        } else if (a.kind != ConstValue::Kind::String && c.kind != ConstValue::Kind::String) {
            const Int128 x = asInt128(a);
            const Int128 y = asInt128(c);
            order = x < y ? -1 : x > y ? 1 : 0;
        } else {
            return notConstant(span, "cannot compare these constants");
        }
        bool result = false;
        switch (op) {
        case ast::BinaryOp::Eq: result = order == 0; break;
        case ast::BinaryOp::Ne: result = order != 0; break;
        case ast::BinaryOp::Lt: result = order < 0; break;
        case ast::BinaryOp::Le: result = order <= 0; break;
        case ast::BinaryOp::Gt: result = order > 0; break;
        default: result = order >= 0; break;
        }
        ConstValue v;
        v.kind = ConstValue::Kind::Bool;
        v.i = result ? 1 : 0;
        v.type = cx_.model.types.get(TypeKind::Bool);
        return v;
    }

    // TIME ± TIME, TIME * / number, DATE/TOD/DT ± TIME, date - date.
    std::optional<ConstValue> timeArith(ast::BinaryOp op, const ConstValue& a, const ConstValue& c, Span span) {
        const TypeTable& types = cx_.model.types;
        const bool aTime = a.kind == ConstValue::Kind::Time;
        const bool cTime = c.kind == ConstValue::Kind::Time;
        ConstValue v;
        v.kind = ConstValue::Kind::Time;
        if (aTime && cTime && (op == ast::BinaryOp::Add || op == ast::BinaryOp::Sub)) {
            const bool aDur = isTimeLike(a.type);
            const bool cDur = isTimeLike(c.type);
            v.i = op == ast::BinaryOp::Add ? a.i + c.i : a.i - c.i;
            if (aDur && cDur) {
                v.type = commonType(types, a.type, c.type);
            } else if (!aDur && cDur) {
                v.type = a.type; // DT + TIME
            } else if (!aDur && !cDur && op == ast::BinaryOp::Sub) {
                v.type = types.get(TypeKind::Time); // DT - DT
            } else {
                return notConstant(span, "operator not defined for these time constants");
            }
            return v;
        }
        const ConstValue& t = aTime ? a : c;
        const ConstValue& n = aTime ? c : a;
        if (!isTimeLike(t.type) || !(isIntegral(n) || n.kind == ConstValue::Kind::Real) ||
            !(op == ast::BinaryOp::Mul || (op == ast::BinaryOp::Div && aTime))) {
            return notConstant(span, "operator not defined for these time constants");
        }
        v.type = t.type;
        const double factor = asReal(n);
        if (op == ast::BinaryOp::Div) {
            if (factor == 0.0) {
                return divisionByZero(span);
            }
            v.i = n.kind == ConstValue::Kind::Real ? static_cast<std::int64_t>(std::llround(t.i / factor))
                                                   : static_cast<std::int64_t>(t.i / asInt128(n));
        } else {
            v.i = n.kind == ConstValue::Kind::Real ? static_cast<std::int64_t>(std::llround(t.i * factor))
                                                   : static_cast<std::int64_t>(t.i * asInt128(n));
        }
        return v;
    }

    std::optional<ConstValue> call(const ast::CallExpr& c) {
        if (c.callee->kind != ast::ExprKind::Name) {
            return notConstant(c.span, "this call is not a constant");
        }
        const std::string fn = upperName(static_cast<const ast::NameExpr&>(*c.callee).name.name);
        if (const Symbol* f = lookup(cx_, scope_, fn); f != nullptr && f->kind != SymbolKind::StandardFunction) {
            return notConstant(c.span, "this call is not a constant"); // a user FUNCTION MAX (W1011)
        }
        if (fn == "SIZEOF" && c.args.size() == 1 && c.args[0].value != nullptr) {
            const Type* t = c.genericType != nullptr ? c.genericType : sizeOfOperand(cx_, scope_, *c.args[0].value);
            if (t != nullptr && stripAlias(t)->size > 0) {
                return makeInt(stripAlias(t)->size, sizeOfResultType(cx_.model.types, stripAlias(t)->size));
            }
        }
        std::vector<ConstValue> args;
        for (const ast::Argument& arg : c.args) {
            if (arg.output || arg.value == nullptr) {
                return notConstant(c.span, "this call is not a constant");
            }
            auto v = eval(*arg.value);
            if (!v) {
                return v;
            }
            args.push_back(*v);
        }
        const TypeTable& types = cx_.model.types;
        const std::size_t to = fn.find("TO_");
        if (args.size() == 1 && to != std::string::npos && (to == 0 || fn.compare(to - 1, 4, "_TO_") == 0)) {
            if (const Type* target = types.elementary(std::string_view(fn).substr(to + 3))) {
                if (auto v = convertCount(cx_, args[0], target)) {
                    return v;
                }
                if (auto v = convertConstant(cx_, args[0], target)) {
                    return v;
                }
            }
        } else if (fn == "ABS" && args.size() == 1) {
            ConstValue v = args[0];
            if (v.kind == ConstValue::Kind::Real) {
                v.r = std::fabs(v.r);
                return v;
            }
            if (v.kind == ConstValue::Kind::Int || v.kind == ConstValue::Kind::Time) {
                return v.kind == ConstValue::Kind::Time ? (v.i = std::llabs(v.i), std::optional(v))
                                                        : makeInt(asInt128(v) < 0 ? -asInt128(v) : asInt128(v), v.type);
            }
        } else if ((fn == "MIN" || fn == "MAX") && args.size() >= 2) {
            std::optional<ConstValue> best = args[0];
            for (std::size_t i = 1; i < args.size(); ++i) {
                auto less = compare(ast::BinaryOp::Lt, args[i], *best, c.span);
                if (!less) {
                    return less;
                }
                if ((less->i != 0) == (fn == "MIN")) {
                    best = args[i];
                }
            }
            return best;
        }
        return notConstant(c.span, "call of '" + fn + "' is not a constant");
    }

    Context& cx_;
    const Scope* scope_;
    bool report_;
    bool reported_ = false;
};

} // namespace

std::optional<ConstValue> evaluateConstant(Context& cx, const ast::Expr& expr, const Scope* scope, bool report) {
    Evaluator ev(cx, scope, report);
    return ev.eval(expr);
}

std::optional<std::int64_t> constantAsInt(const ConstValue& value) {
    if (value.kind == ConstValue::Kind::Real || value.kind == ConstValue::Kind::String) {
        return std::nullopt;
    }
    return value.i;
}

std::optional<ConstValue> convertConstant(Context& cx, const ConstValue& value, const Type* type) {
    const Type* t = stripAlias(type);
    if (t == nullptr) {
        return std::nullopt;
    }
    if (t->kind() == TypeKind::Error) {
        return value;
    }
    const Type* ic = intCore(t);
    ConstValue out = value;
    out.type = type;
    if (t->kind() == TypeKind::Enum) {
        if (value.kind == ConstValue::Kind::Enum && stripAlias(value.type) == t) {
            return out;
        }
        return std::nullopt;
    }
    if (ic != nullptr && ic->kind() == TypeKind::Bool) {
        if (value.kind == ConstValue::Kind::Bool || value.kind == ConstValue::Kind::Int) {
            out.kind = ConstValue::Kind::Bool;
            out.isUnsigned = false;
            out.i = value.i != 0 ? 1 : 0;
            return out;
        }
        return std::nullopt;
    }
    if (isInteger(ic) || isBitString(ic)) {
        if (value.kind == ConstValue::Kind::Int || value.kind == ConstValue::Kind::Bool ||
            value.kind == ConstValue::Kind::Enum) {
            return makeInt(asInt128(value), type);
        }
        if (value.kind == ConstValue::Kind::Real) {
            if (std::isnan(value.r) || bitWidth(ic) == 0) {
                return std::nullopt; // computed at run time (NaN gives 0)
            }
            // REAL -> integer rounds to nearest, ties to even (LANGUAGE.md), then saturates to
            // the range of the target type (docs/language-notes.md), as at run time.
            const std::uint32_t width = bitWidth(ic);
            const bool isSigned = isSignedInt(ic);
            const double hi = std::ldexp(1.0, static_cast<int>(isSigned ? width - 1 : width));
            const double lo = isSigned ? -hi : 0.0;
            const double rounded = std::nearbyint(value.r);
            const Int128 exactHi = (static_cast<Int128>(1) << (isSigned ? width - 1 : width)) - 1;
            if (rounded >= hi) {
                return makeInt(exactHi, type);
            }
            return makeInt(rounded <= lo ? (isSigned ? -exactHi - 1 : 0) : static_cast<Int128>(rounded), type);
        }
        return std::nullopt;
    }
    if (isReal(t)) {
        if (value.kind == ConstValue::Kind::Real || isIntegral(value) || value.kind == ConstValue::Kind::Bool) {
            out.kind = ConstValue::Kind::Real;
            out.isUnsigned = false;
            out.r = asReal(value);
            if (t->kind() == TypeKind::Real) {
                out.r = static_cast<double>(static_cast<float>(out.r));
            }
            return out;
        }
        return std::nullopt;
    }
    if (isTimeKind(t)) {
        if (value.kind == ConstValue::Kind::Time) {
            return out;
        }
        return std::nullopt;
    }
    if (isString(t)) {
        if (value.kind == ConstValue::Kind::String) {
            return out;
        }
        return std::nullopt;
    }
    (void)cx;
    return std::nullopt;
}

} // namespace takt::compiler::sema
