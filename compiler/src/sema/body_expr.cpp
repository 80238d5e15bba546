// Expression typing with IEC operator rules, implicit conversions and writability.
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "sema/body.h"
#include "sema/stdlib.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

// Characters of a string literal: bytes for STRING; for WSTRING (whose text is kept as UTF-8)
// UTF-16 code units, two for a character above 16#FFFF.
std::size_t literalLength(const ast::LiteralExpr& e) {
    if (e.literalKind != ast::LiteralKind::WString) {
        return e.stringValue.size();
    }
    std::size_t units = 0;
    for (const char c : e.stringValue) {
        const auto b = static_cast<unsigned char>(c);
        units += (b & 0xC0) == 0x80 ? 0 : b >= 0xF0 ? 2 : 1;
    }
    return units;
}

using K = TypeKind;

bool isLit(const Type* t) {
    return t->kind() == K::IntLiteral || t->kind() == K::RealLiteral;
}

// Integer range of an integer or bit-string kind: {negative magnitude allowed, max positive}.
struct IntRange {
    std::uint64_t maxNegative; // magnitude of the minimum (0 for unsigned)
    std::uint64_t maxPositive;
};

std::optional<IntRange> intRange(const Type* t) {
    const std::uint32_t w = bitWidth(t);
    if (w == 0 || t->kind() == K::Bool || isReal(t)) { // REAL and LREAL hold every integer constant
        return std::nullopt;
    }
    if (isSignedInt(t)) {
        const std::uint64_t half = std::uint64_t{1} << (w - 1);
        return IntRange{half, half - 1};
    }
    return IntRange{0, w == 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t{1} << w) - 1};
}

} // namespace

const Type* BodyChecker::checkExpr(ast::Expr& e, const Type* expected) {
    const bool keepReference = std::exchange(keepReference_, false);
    const Type* t = checkExprInner(e, expected);
    if (t == nullptr) {
        t = errorType();
    }
    const bool location = e.kind == ast::ExprKind::Name || e.kind == ast::ExprKind::Member ||
                          e.kind == ast::ExprKind::Index || e.kind == ast::ExprKind::Deref;
    if (!keepReference && location && isReference(t)) {
        t = static_cast<const RefType*>(stripAlias(t))->target; // a REFERENCE TO reads as its target
    }
    e.type = t;
    return t;
}

const Type* BodyChecker::checkExprInner(ast::Expr& e, const Type* expected) {
    switch (e.kind) {
    case ast::ExprKind::Literal: return checkLiteral(static_cast<ast::LiteralExpr&>(e));
    case ast::ExprKind::EnumLiteral: return checkEnumLiteral(static_cast<ast::EnumLiteralExpr&>(e));
    case ast::ExprKind::Name: return checkName(static_cast<ast::NameExpr&>(e), expected);
    case ast::ExprKind::Member: return checkMember(static_cast<ast::MemberExpr&>(e));
    case ast::ExprKind::BitAccess: return checkBitAccess(static_cast<ast::BitAccessExpr&>(e));
    case ast::ExprKind::Index: return checkIndex(static_cast<ast::IndexExpr&>(e));
    case ast::ExprKind::Deref: {
        auto& d = static_cast<ast::DerefExpr&>(e);
        const Type* t = checkExpr(*d.reference);
        if (isError(t) || isSelfExpr(d.reference.get())) {
            return t; // THIS^ / SUPER^ (CODESYS spelling) name the instance itself
        }
        if (stripAlias(t)->kind() != K::Ref) {
            cx_.error(DiagCode::NotAReference, e.span,
                      "'" + text(d.reference->span) + "' of type " + typeName(t) +
                          " is not a REF_TO or POINTER TO and cannot be dereferenced");
            return errorType();
        }
        return static_cast<const RefType*>(stripAlias(t))->target;
    }
    case ast::ExprKind::Call: return checkCall(static_cast<ast::CallExpr&>(e), expected, false);
    case ast::ExprKind::Unary: return checkUnary(static_cast<ast::UnaryExpr&>(e), expected);
    case ast::ExprKind::Binary: return checkBinary(static_cast<ast::BinaryExpr&>(e), expected);
    case ast::ExprKind::Ref: {
        auto& r = static_cast<ast::RefExpr&>(e);
        const Type* t = checkExpr(*r.operand);
        if (isError(t)) {
            return errorType();
        }
        if (reportActionFlagWrite(*r.operand, "REF()")) {
            return errorType();
        }
        if (!analyzeTarget(*r.operand).isVariable && !reportPropertyAddress(*r.operand, "REF()")) {
            cx_.error(DiagCode::InvalidRefOperand, r.operand->span,
                      "REF() needs a variable, not '" + text(r.operand->span) + "'");
            return errorType();
        }
        return cx_.model.types.ref(t);
    }
    case ast::ExprKind::This:
        if (pc_.fb == nullptr || pc_.fb->type == nullptr) {
            cx_.error(DiagCode::ThisOutsideFb, e.span, "THIS is only available inside a FUNCTION_BLOCK or its methods");
            return errorType();
        }
        return pc_.fb->type;
    case ast::ExprKind::Super:
        if (pc_.fb == nullptr) {
            cx_.error(DiagCode::ThisOutsideFb, e.span,
                      "SUPER is only available inside a FUNCTION_BLOCK or its methods");
            return errorType();
        }
        if (pc_.fb->base == nullptr || pc_.fb->base->type == nullptr) {
            cx_.error(DiagCode::SuperWithoutBase, e.span,
                      "SUPER used in '" + pc_.fb->name + "', which EXTENDS no FUNCTION_BLOCK");
            return errorType();
        }
        return pc_.fb->base->type;
    case ast::ExprKind::DirectAddress: {
        const auto& a = static_cast<ast::DirectAddressExpr&>(e).address;
        switch (a.size) {
        case ast::AddressSize::Byte: return cx_.model.types.get(K::Byte);
        case ast::AddressSize::Word: return cx_.model.types.get(K::Word);
        case ast::AddressSize::DWord: return cx_.model.types.get(K::DWord);
        case ast::AddressSize::LWord: return cx_.model.types.get(K::LWord);
        default: return cx_.model.types.get(K::Bool);
        }
    }
    case ast::ExprKind::ArrayInit:
    case ast::ExprKind::StructInit:
        cx_.error(DiagCode::InvalidInitializer, e.span,
                  "an array or structure initialiser is only allowed in a declaration");
        return errorType();
    case ast::ExprKind::Paren: return checkExpr(*static_cast<ast::ParenExpr&>(e).inner, expected);
    case ast::ExprKind::Error: return errorType();
    }
    return errorType();
}

const Type* BodyChecker::checkLiteral(ast::LiteralExpr& e) {
    auto& types = cx_.model.types;
    const bool longForm =
        e.typePrefix && !e.typePrefix->name.empty() && (e.typePrefix->name[0] == 'L' || e.typePrefix->name[0] == 'l');
    switch (e.literalKind) {
    case ast::LiteralKind::Bool: return types.get(K::Bool);
    case ast::LiteralKind::Int:
    case ast::LiteralKind::Real:
        if (e.typePrefix) {
            const Type* t = types.elementary(e.typePrefix->name);
            if (t == nullptr) {
                cx_.error(DiagCode::InvalidTypedLiteral, e.typePrefix->span,
                          "'" + e.typePrefix->name + "' is not an elementary type for a typed literal");
                return errorType();
            }
            return t;
        }
        return types.get(e.literalKind == ast::LiteralKind::Int ? K::IntLiteral : K::RealLiteral);
    case ast::LiteralKind::String:
    case ast::LiteralKind::WString:
        if (e.typePrefix) {
            // CHAR#'a', WCHAR#"b", STRING#'text'
            const Type* t = types.elementary(e.typePrefix->name);
            if (t != nullptr && (t->kind() == K::Char || t->kind() == K::WChar)) {
                return t;
            }
        }
        return types.string(e.literalKind == ast::LiteralKind::WString,
                            static_cast<std::uint32_t>(std::max<std::size_t>(literalLength(e), 1)));
    case ast::LiteralKind::Time: return types.get(longForm ? K::LTime : K::Time);
    case ast::LiteralKind::Date: return types.get(longForm ? K::LDate : K::Date);
    case ast::LiteralKind::Tod: return types.get(longForm ? K::LTod : K::Tod);
    case ast::LiteralKind::Dt: return types.get(longForm ? K::Ldt : K::Dt);
    case ast::LiteralKind::Null: return types.get(K::Null);
    }
    return errorType();
}

const Type* BodyChecker::checkUnary(ast::UnaryExpr& e, const Type* expected) {
    const Type* t = checkExpr(*e.operand, expected);
    if (isError(t)) {
        return errorType();
    }
    const Type* b = baseType(t);
    if (e.op == ast::UnaryOp::Not) {
        if (isBitString(b) || b->kind() == K::IntLiteral) {
            return t;
        }
    } else if (isNumeric(b) || isLit(b) || isTimeLike(b)) {
        return t;
    }
    if (e.op == ast::UnaryOp::Not && lenientNot(e, t)) {
        return t;
    }
    cx_.error(DiagCode::InvalidOperand, e.span,
              std::string("operator '") +
                  (e.op == ast::UnaryOp::Not   ? "NOT"
                   : e.op == ast::UnaryOp::Neg ? "-"
                                               : "+") +
                  "' is not defined for " + typeName(t));
    return errorType();
}

// The result of + - * / MOD ** on the operand types, or null.
const Type* BodyChecker::arithmeticType(ast::BinaryOp op, const Type* a, const Type* b) {
    auto& types = cx_.model.types;
    const Type* sa = baseType(a);
    const Type* sb = baseType(b);
    auto numericCommon = [&]() -> const Type* {
        if (isLit(sa) && isLit(sb)) {
            return types.get(sa->kind() == K::RealLiteral || sb->kind() == K::RealLiteral ? K::RealLiteral
                                                                                          : K::IntLiteral);
        }
        if (isLit(sa)) {
            return literalAdopts(sa, sb) ? b : nullptr;
        }
        if (isLit(sb)) {
            return literalAdopts(sb, sa) ? a : nullptr;
        }
        return unifyTypes(types, a, b);
    };
    const bool numA = isNumeric(sa) || isLit(sa);
    const bool numB = isNumeric(sb) || isLit(sb);
    const K ka = sa->kind();
    const K kb = sb->kind();
    switch (op) {
    case ast::BinaryOp::Add:
    case ast::BinaryOp::Sub:
        if (numA && numB) {
            return numericCommon();
        }
        for (auto [t, tod, dt, date] :
             {std::array{K::Time, K::Tod, K::Dt, K::Date}, std::array{K::LTime, K::LTod, K::Ldt, K::LDate}}) {
            if (ka == t && kb == t) {
                return types.get(t);
            }
            if ((ka == tod || ka == dt) && kb == t) {
                return types.get(ka); // TOD ± TIME, DT ± TIME
            }
            if (op == ast::BinaryOp::Sub && ka == kb && (ka == tod || ka == dt || ka == date)) {
                return types.get(t); // DATE - DATE, TOD - TOD, DT - DT
            }
        }
        if (isTimeLike(sa) && isTimeLike(sb)) {
            return unifyTypes(types, a, b);
        }
        return nullptr;
    case ast::BinaryOp::Mul:
        if (numA && numB) {
            return numericCommon();
        }
        if (isTimeLike(sa) && numB) {
            return a;
        }
        if (numA && isTimeLike(sb)) {
            return b;
        }
        return nullptr;
    case ast::BinaryOp::Div:
        if (numA && numB) {
            return numericCommon();
        }
        return isTimeLike(sa) && numB ? a : nullptr;
    case ast::BinaryOp::Mod:
        if ((isInteger(sa) || ka == K::IntLiteral) && (isInteger(sb) || kb == K::IntLiteral)) {
            return numericCommon();
        }
        return nullptr;
    case ast::BinaryOp::Pow: return nullptr; // powerType: the overloads of EXPT
    case ast::BinaryOp::And:
    case ast::BinaryOp::Or:
    case ast::BinaryOp::Xor: {
        const bool bitA = isBitString(sa) || ka == K::IntLiteral;
        const bool bitB = isBitString(sb) || kb == K::IntLiteral;
        if (!bitA || !bitB) {
            return nullptr;
        }
        if (ka == K::IntLiteral && kb == K::IntLiteral) {
            return a;
        }
        if (ka == K::IntLiteral) {
            return kb == K::Bool ? nullptr : b;
        }
        if (kb == K::IntLiteral) {
            return ka == K::Bool ? nullptr : a;
        }
        if ((ka == K::Bool) != (kb == K::Bool)) {
            return nullptr;
        }
        return unifyTypes(types, a, b);
    }
    case ast::BinaryOp::AndThen:
    case ast::BinaryOp::OrElse: // BOOL only: a bit string has no "decided" left operand
        return ka == K::Bool && kb == K::Bool ? types.get(K::Bool) : nullptr;
    default: return nullptr;
    }
}

// `a ** b` is EXPT(a, b): the same overloads give the same operand and result types (an
// integer base with an integer exponent stays an integer; untyped literals take the context's
// type as EXPT's do).
const Type* BodyChecker::powerType(const Type* a, const Type* b, const Type* expected) {
    const StdFunction* expt = findStandardFunction("EXPT");
    if (expt == nullptr) {
        return nullptr;
    }
    const StdOutcome out =
        resolveStandardCall(cx_.model.types, *expt, {StdArg{a, {}, false}, StdArg{b, {}, false}}, expected);
    return out.resolution ? out.resolution->result : nullptr;
}

// The common operand type of a comparison, or null when the operands cannot be compared.
const Type* BodyChecker::comparisonType(ast::BinaryOp op, const Type* a, const Type* b, const ast::BinaryExpr& e) {
    auto& types = cx_.model.types;
    const Type* sa = baseType(a);
    const Type* sb = baseType(b);
    const bool equality = op == ast::BinaryOp::Eq || op == ast::BinaryOp::Ne;
    if (sa->kind() == K::Enum || sb->kind() == K::Enum) {
        return sa == sb ? a : nullptr; // enums compare by value within one enumeration only
    }
    if (equality) {
        const bool refA = sa->kind() == K::Ref || sa->kind() == K::Interface || sa->kind() == K::Null;
        const bool refB = sb->kind() == K::Ref || sb->kind() == K::Interface || sb->kind() == K::Null;
        if (refA && refB) {
            return sa->kind() == K::Null || sb->kind() == K::Null || sa == sb || implicitlyConvertible(a, b) ||
                           implicitlyConvertible(b, a)
                       ? (sa->kind() == K::Null ? b : a)
                       : nullptr;
        }
    }
    if (!(isElementary(sa) || isLit(sa)) || !(isElementary(sb) || isLit(sb))) {
        return nullptr;
    }
    const Type* common = nullptr;
    if (sa->kind() == K::IntLiteral && sb->kind() == K::Bool) { // x = 1 for a BOOL x
        common = checkBoolLiteral(*e.lhs, b) ? b : errorType();
    } else if (sb->kind() == K::IntLiteral && sa->kind() == K::Bool) {
        common = checkBoolLiteral(*e.rhs, a) ? a : errorType();
    } else if (isLit(sa) && isLit(sb)) {
        common = a;
    } else if (isLit(sa)) {
        common = literalAdopts(sa, sb) ? b : nullptr;
    } else if (isLit(sb)) {
        common = literalAdopts(sb, sa) ? a : nullptr;
    } else {
        common = unifyTypes(types, a, b);
    }
    if (common != nullptr && equality && (isReal(baseType(common)))) {
        cx_.diags.report(DiagCode::RealEquality, e.span,
                         std::string("comparing REAL values with '") + ast::binaryOpText(op) +
                             "' is fragile; compare the difference with a tolerance");
    }
    return common;
}

const Type* BodyChecker::checkBinary(ast::BinaryExpr& e, const Type* expected) {
    const bool comparison = e.op == ast::BinaryOp::Eq || e.op == ast::BinaryOp::Ne || e.op == ast::BinaryOp::Lt ||
                            e.op == ast::BinaryOp::Le || e.op == ast::BinaryOp::Gt || e.op == ast::BinaryOp::Ge;
    const Type* hint = comparison ? nullptr : expected;
    const Type* a = checkExpr(*e.lhs, hint);
    // A bare enum value on the right takes the left side's enumeration (x = Run).
    const Type* b = checkExpr(*e.rhs, comparison ? a : hint);
    if (isError(a) || isError(b)) {
        return comparison ? cx_.model.types.get(K::Bool) : errorType();
    }
    if (stripAlias(a)->kind() == K::Void || stripAlias(b)->kind() == K::Void) {
        return errorType();
    }
    const Type* result = isPointer(a) || isPointer(b) ? pointerOperands(e, a, b)
                         : comparison                 ? comparisonType(e.op, a, b, e)
                         : e.op == ast::BinaryOp::Pow ? powerType(a, b, hint)
                                                      : arithmeticType(e.op, a, b);
    if (result == nullptr) {
        result = boolLiteralOperand(e, a, b);
    }
    if (result == nullptr) {
        result = lenientOperands(e, a, b);
    }
    if (result == nullptr) {
        cx_.error(DiagCode::InvalidOperand, e.span,
                  std::string("operator '") + ast::binaryOpText(e.op) + "' is not defined for " + typeName(a) +
                      " and " + typeName(b));
        return comparison ? cx_.model.types.get(K::Bool) : errorType();
    }
    return comparison ? cx_.model.types.get(K::Bool) : result;
}

const Type* BodyChecker::checkIndex(ast::IndexExpr& e) {
    const Type* t = checkExpr(*e.array);
    std::vector<std::optional<ConstValue>> constants;
    for (auto& idx : e.indices) {
        const Type* it = checkExpr(*idx);
        if (!isError(it) && !isInteger(baseType(it)) && !lenientWordSelector(*idx, it, "array index")) {
            cx_.error(DiagCode::IndexNotInteger, idx->span,
                      "array index '" + text(idx->span) + "' has type " + typeName(it) + ", not an integer type");
        }
        constants.push_back(isError(it) ? std::nullopt : evaluateConstant(cx_, *idx, pc_.scope, false));
    }
    if (isError(t)) {
        return errorType();
    }
    const Type* st = stripAlias(t);
    if (st->kind() != K::Array) {
        cx_.error(DiagCode::NotIndexable, e.array->span,
                  "'" + text(e.array->span) + "' of type " + typeName(t) + " is not an ARRAY");
        return errorType();
    }
    const auto* at = static_cast<const ArrayType*>(st);
    if (!at->dims.empty() && at->dims.size() != e.indices.size()) {
        cx_.error(DiagCode::WrongIndexCount, e.span,
                  "'" + text(e.array->span) + "' has " + std::to_string(at->dims.size()) + " dimension" +
                      (at->dims.size() == 1 ? "" : "s") + " but " + std::to_string(e.indices.size()) + " index" +
                      (e.indices.size() == 1 ? " is" : "es are") + " given");
        return at->element;
    }
    for (std::size_t i = 0; i < at->dims.size() && i < constants.size(); ++i) {
        const auto& c = constants[i];
        if (!c || c->kind != ConstValue::Kind::Int || c->isUnsigned) {
            continue;
        }
        if (c->i < at->dims[i].lower || c->i > at->dims[i].upper) {
            cx_.error(DiagCode::ArrayIndexOutOfRange, e.indices[i]->span,
                      "index " + std::to_string(c->i) + " is outside the bounds [" + std::to_string(at->dims[i].lower) +
                          ".." + std::to_string(at->dims[i].upper) + "] of '" + text(e.array->span) + "'");
        }
    }
    return at->element;
}

const Type* BodyChecker::checkBitAccess(ast::BitAccessExpr& e) {
    const Type* t = checkExpr(*e.object);
    if (isError(t)) {
        return cx_.model.types.get(K::Bool);
    }
    const Type* b = baseType(t);
    const bool integerBits = isInteger(b) && b->kind() != K::IntLiteral && lenientIntegerBits(e, t);
    if (!integerBits && (!isBitString(b) || b->kind() == K::Bool)) {
        cx_.error(DiagCode::BitAccessInvalid, e.span,
                  "partial bit access on '" + text(e.object->span) + "' of type " + typeName(t) +
                      "; only BYTE, WORD, DWORD and LWORD have bits");
    } else if (e.bit >= bitWidth(b)) {
        cx_.error(DiagCode::BitAccessInvalid, e.span,
                  "bit " + std::to_string(e.bit) + " is beyond the " + std::to_string(bitWidth(b)) + " bits of '" +
                      text(e.object->span) + "' (" + typeName(t) + ")");
    }
    return cx_.model.types.get(K::Bool);
}

// ---- conversions -----------------------------------------------------------------------------

bool BodyChecker::checkConstantRange(const ast::Expr& e, const Type* target) {
    const Type* st = stripAlias(target);
    const Type* b = baseType(target);
    std::optional<ConstValue> v = evaluateConstant(cx_, e, pc_.scope, false);
    if (!v) {
        return true;
    }
    if (v->kind == ConstValue::Kind::Int) {
        const bool negative = !v->isUnsigned && v->i < 0;
        const std::uint64_t magnitude = v->isUnsigned ? static_cast<std::uint64_t>(v->i)
                                        : negative    ? static_cast<std::uint64_t>(-(v->i + 1)) + 1
                                                      : static_cast<std::uint64_t>(v->i);
        const std::string shown = negative ? "-" + std::to_string(magnitude) : std::to_string(magnitude);
        if (auto r = intRange(b)) {
            if ((negative && magnitude > r->maxNegative) || (!negative && magnitude > r->maxPositive)) {
                cx_.error(DiagCode::ConstantOutOfRange, e.span,
                          "the constant " + shown + " does not fit " + typeName(target));
                return false;
            }
        }
        if (st->kind() == K::Subrange) {
            const auto* sr = static_cast<const SubrangeType*>(st);
            const bool below = negative
                                   ? (sr->lower >= 0 || magnitude > static_cast<std::uint64_t>(-(sr->lower + 1)) + 1)
                                   : (sr->lower > 0 && magnitude < static_cast<std::uint64_t>(sr->lower));
            const bool above = !negative && (sr->upper < 0 || magnitude > static_cast<std::uint64_t>(sr->upper));
            const bool aboveNeg =
                negative && sr->upper < 0 && magnitude < static_cast<std::uint64_t>(-(sr->upper + 1)) + 1;
            if (below || above || aboveNeg) {
                cx_.error(DiagCode::SubrangeViolation, e.span,
                          "the constant " + shown + " is outside the subrange " + std::to_string(sr->lower) + ".." +
                              std::to_string(sr->upper) + " of " + typeName(target));
                return false;
            }
        }
    } else if (v->kind == ConstValue::Kind::Real && b->kind() == K::Real) {
        if (std::isfinite(v->r) && std::fabs(v->r) > static_cast<double>(std::numeric_limits<float>::max())) {
            cx_.error(DiagCode::ConstantOutOfRange, e.span, "the constant " + text(e.span) + " does not fit REAL");
            return false;
        }
    }
    return true;
}

// `b AND 1`, `b OR 0`: 0 and 1 are BOOL literals beside a BOOL operand of AND/OR/XOR as in
// an assignment (IEC 61131-3 and CODESYS accept them). The BOOL, or the error type once a
// literal other than 0 and 1 has been reported; null when the rule does not apply.
const Type* BodyChecker::boolLiteralOperand(const ast::BinaryExpr& e, const Type* a, const Type* b) {
    if (e.op != ast::BinaryOp::And && e.op != ast::BinaryOp::Or && e.op != ast::BinaryOp::Xor) {
        return nullptr;
    }
    const K ka = baseType(a)->kind();
    const K kb = baseType(b)->kind();
    if (ka == K::IntLiteral && kb == K::Bool) {
        return checkBoolLiteral(*e.lhs, b) ? b : errorType();
    }
    if (kb == K::IntLiteral && ka == K::Bool) {
        return checkBoolLiteral(*e.rhs, a) ? a : errorType();
    }
    return nullptr;
}

// The integer constants 0 and 1 are BOOL literals where a BOOL is expected (IEC 61131-3 lets
// them stand for FALSE and TRUE); any other value is reported.
bool BodyChecker::checkBoolLiteral(const ast::Expr& e, const Type* target) {
    const std::optional<ConstValue> v = evaluateConstant(cx_, e, pc_.scope, false);
    if (v && v->kind == ConstValue::Kind::Int && (v->i == 0 || v->i == 1) && !v->isUnsigned) {
        return true;
    }
    if (v) {
        cx_.error(DiagCode::ConstantOutOfRange, e.span,
                  "the constant " + text(e.span) + " does not fit " + typeName(target) +
                      " (0 and 1 are its only integer literals)");
    }
    return false;
}

void BodyChecker::convert(ast::Expr& e, const Type* target) {
    const Type* from = e.type;
    if (isError(from) || isError(target)) {
        return;
    }
    const Type* sf = stripAlias(from);
    const Type* st = stripAlias(target);
    if (sf->kind() == K::Void) {
        return; // reported as E0310 where the call was typed
    }
    if (pointerConversion(e, target)) {
        return;
    }
    if (isLit(sf)) {
        if (sf->kind() == K::IntLiteral && baseType(target)->kind() == K::Bool) {
            checkBoolLiteral(e, target); // b : BOOL := 1
            return;
        }
        if (!literalAdopts(sf, target)) {
            cx_.error(DiagCode::TypeMismatch, e.span,
                      std::string(sf->kind() == K::RealLiteral ? "a real" : "an integer") + " constant '" +
                          text(e.span) + "' cannot be used as " + typeName(target));
            return;
        }
        checkConstantRange(e, target);
        return;
    }
    if (isString(sf) && isString(st) && sf->kind() == st->kind()) {
        const ast::Expr* inner = stripParen(&e);
        if (inner->kind == ast::ExprKind::Literal) {
            const auto& lit = static_cast<const ast::LiteralExpr&>(*inner);
            const auto* ts = static_cast<const StringType*>(st);
            if (literalLength(lit) > ts->length) {
                cx_.diags.report(DiagCode::TruncatedString, e.span,
                                 "the string constant has " + std::to_string(literalLength(lit)) + " characters; " +
                                     typeName(target) + " keeps only " + std::to_string(ts->length));
            }
        }
        return;
    }
    if ((st->kind() == K::Char || st->kind() == K::WChar) && isString(sf)) {
        const ast::Expr* inner = stripParen(&e);
        if (inner->kind == ast::ExprKind::Literal && literalLength(static_cast<const ast::LiteralExpr&>(*inner)) == 1) {
            return; // 'a' initialises a CHAR
        }
    }
    if (implicitlyConvertible(from, target)) {
        if (st->kind() == K::Subrange) {
            checkConstantRange(e, target);
        }
        return;
    }
    const Type* bf = baseType(from);
    const Type* bt = baseType(target);
    std::string conversion;
    if ((isElementary(bf)) && isElementary(bt)) {
        conversion = std::string(elementaryKindName(bf->kind())) + "_TO_" + std::string(elementaryKindName(bt->kind()));
        if (findStandardFunction(conversion) == nullptr) {
            conversion.clear();
        }
    }
    const bool scalarA = isNumeric(bf) || isBitString(bf);
    const bool scalarB = isNumeric(bt) || isBitString(bt);
    const bool narrowing = (scalarA && scalarB) || (isTimeLike(bf) && isTimeLike(bt)) ||
                           (isDateLike(bf) && isDateLike(bt) && bf->kind() != bt->kind());
    if (narrowing && !conversion.empty() && lenientNarrowing(e, from, target, conversion)) {
        return;
    }
    if (narrowing && !conversion.empty()) {
        cx_.error(DiagCode::ImplicitNarrowing, e.span,
                  "'" + text(e.span) + "' of type " + typeName(from) + " does not convert implicitly to " +
                      typeName(target) + " (it may lose range or precision); use " + conversion);
        return;
    }
    cx_.error(DiagCode::TypeMismatch, e.span,
              "'" + text(e.span) + "' of type " + typeName(from) + " cannot be used as " + typeName(target) +
                  (conversion.empty() ? "" : "; use " + conversion));
}

// ---- writability -----------------------------------------------------------------------------

BodyChecker::Target BodyChecker::analyzeTarget(const ast::Expr& e) const {
    Target t;
    switch (e.kind) {
    case ast::ExprKind::Paren: return analyzeTarget(*static_cast<const ast::ParenExpr&>(e).inner);
    case ast::ExprKind::Name: {
        const auto& n = static_cast<const ast::NameExpr&>(e);
        if (n.symbol != nullptr && n.symbol == pc_.pou && n.symbol->kind == SymbolKind::Pou) {
            t.isVariable = true;
            t.isResult = true;
        } else if (n.symbol != nullptr && n.symbol->kind == SymbolKind::Variable) {
            t.isVariable = true;
            t.root = n.symbol;
            t.directName = true;
        }
        return t;
    }
    case ast::ExprKind::Member: {
        const auto& m = static_cast<const ast::MemberExpr&>(e);
        if (m.object->type != nullptr && isError(m.object->type) && m.symbol != nullptr &&
            m.symbol->kind == SymbolKind::Variable && namespaceOf(*m.object) != nullptr) {
            t.isVariable = true; // Namespace.variable
            t.root = m.symbol;
            t.directName = true;
            return t;
        }
        if (isSelfExpr(m.object.get())) {
            t.isVariable = m.symbol == nullptr || m.symbol->kind == SymbolKind::Variable;
            return t;
        }
        if (propertyOf(m) != nullptr) {
            return t; // a PROPERTY is a pair of methods, not storage
        }
        t = analyzeTarget(*m.object);
        t.directName = false;
        t.isResult = false;
        const Type* ot = m.object->type != nullptr ? stripAlias(m.object->type) : nullptr;
        if (t.isVariable && t.outsideOutput == nullptr && ot != nullptr && ot->kind() == K::FunctionBlock &&
            m.symbol != nullptr && m.symbol->kind == SymbolKind::Variable &&
            m.symbol->section == ast::VarSection::Output) {
            t.outsideOutput = m.symbol;
        }
        if (t.isVariable && ot != nullptr && ot->kind() == K::FunctionBlock && m.symbol != nullptr &&
            m.symbol->kind == SymbolKind::Variable &&
            (m.symbol->section == ast::VarSection::Var || m.symbol->section == ast::VarSection::InOut)) {
            t.outsideInternal = m.symbol; // readable under W1002, never writable
        }
        return t;
    }
    case ast::ExprKind::Index: {
        t = analyzeTarget(*static_cast<const ast::IndexExpr&>(e).array);
        t.directName = false;
        return t;
    }
    case ast::ExprKind::BitAccess: {
        t = analyzeTarget(*static_cast<const ast::BitAccessExpr&>(e).object);
        t.directName = false;
        return t;
    }
    case ast::ExprKind::Deref: t.isVariable = true; return t;
    case ast::ExprKind::DirectAddress: t.isVariable = true; return t;
    default: return t;
    }
}

bool BodyChecker::checkWritable(const ast::Expr& e) {
    if (isError(e.type)) {
        return true;
    }
    if (const Symbol* accessor = propertyOf(e)) {
        return checkPropertyWrite(e, *accessor);
    }
    if (reportActionFlagWrite(e, "written")) {
        return false;
    }
    const Target t = analyzeTarget(e);
    if (!t.isVariable) {
        cx_.error(DiagCode::NotAssignable, e.span, "'" + text(e.span) + "' is not a variable and cannot be written");
        return false;
    }
    if (t.isResult) {
        pc_.resultAssigned = true;
        return true;
    }
    if (t.root != nullptr) {
        if (t.directName) {
            for (const Symbol* v : pc_.forVariables) {
                if (v == t.root) {
                    cx_.error(DiagCode::ForVariableAssigned, e.span,
                              "FOR control variable '" + t.root->name + "' is written inside its loop");
                    return false;
                }
            }
        }
        if (t.root->constant) {
            cx_.error(t.root->section == ast::VarSection::External ? DiagCode::AssignToLoopVarExternal
                                                                   : DiagCode::AssignToConstant,
                      e.span, "'" + t.root->name + "' is a CONSTANT and cannot be written");
            return false;
        }
        if (t.root->readOnly) {
            cx_.error(DiagCode::AssignToConstant, e.span, "'" + t.root->name + "' is READ_ONLY and cannot be written");
            return false;
        }
        if (t.root->section == ast::VarSection::Input && pc_.pou != nullptr && t.root->owner == pc_.pou &&
            !isReference(t.root->type)) { // a REFERENCE TO input writes what it is bound to
            // OSCAT normalises its inputs in place; the write changes this call's copy only.
            cx_.lenient(DiagCode::WriteOwnInput, e.span,
                        "'" + t.root->name + "' is a VAR_INPUT of '" + pc_.pou->name + "' and is written inside it");
        }
    }
    if (t.outsideInternal != nullptr && cx_.options.dialect == Dialect::Openplc &&
        t.outsideInternal->section == ast::VarSection::Var) {
        // matiec (OpenPLC) lets a program set an instance's private state; CODESYS refuses it.
        cx_.diags.report(DiagCode::WriteFbPrivate, e.span,
                         "'" + t.outsideInternal->name +
                             "' is internal to its FUNCTION_BLOCK; written from outside under dialect openplc");
    } else if (t.outsideInternal != nullptr) {
        cx_.error(DiagCode::NotAssignable, e.span,
                  "'" + t.outsideInternal->name +
                      "' is internal to its FUNCTION_BLOCK and cannot be written from outside");
        return false;
    }
    if (t.outsideOutput != nullptr) {
        cx_.lenient(DiagCode::WriteFbOutput, e.span,
                    "'" + t.outsideOutput->name + "' is a VAR_OUTPUT written from outside its FUNCTION_BLOCK");
    }
    return true;
}

} // namespace takt::compiler::sema
