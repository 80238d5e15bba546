// Operators IEC 61131-3 leaves undefined but CODESYS accepts (docs/dialects.md): arithmetic on
// bit strings (W1004), AND/OR/XOR/NOT on integers (W1005), integers mixed with bit strings
// (W1006), bit-string array indices and CASE selectors (W1007), `i.3` on integers (W1008), and
// CODESYS's names for standard FB inputs (W1009), implicit narrowing conversions (W1010),
// shifts and rotations of signed integers (W1012) and SQRT, SIN … of integers (W1016). They are tried only after the
// standard rules found no operand type, so a program that IEC accepts never sees them; Context::lenient makes them
// errors under dialect "iec".
#include <algorithm>

#include "sema/body.h"
#include "sema/stdlib.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

using K = TypeKind;

// BYTE, WORD, DWORD, LWORD: the bit strings that hold numbers (BOOL does not take part).
bool isWordType(const Type* t) {
    return isBitString(t) && t->kind() != K::Bool;
}

// A typed integer (SINT..ULINT and their subranges), not an untyped literal.
bool isTypedInteger(const Type* t) {
    return isInteger(t) && t->kind() != K::IntLiteral;
}

} // namespace

const Type* BodyChecker::lenientOperands(ast::BinaryExpr& e, const Type* a, const Type* b) {
    auto& types = cx_.model.types;
    const Type* sa = baseType(a);
    const Type* sb = baseType(b);
    const bool wordA = isWordType(sa);
    const bool wordB = isWordType(sb);
    const bool intA = isTypedInteger(sa);
    const bool intB = isTypedInteger(sb);
    const bool litA = sa->kind() == K::IntLiteral;
    const bool litB = sb->kind() == K::IntLiteral;
    if (!(wordA || intA || litA) || !(wordB || intB || litB) || (litA && litB)) {
        return nullptr;
    }
    const ast::BinaryOp op = e.op;
    const bool logic = op == ast::BinaryOp::And || op == ast::BinaryOp::Or || op == ast::BinaryOp::Xor;
    const bool arith = op == ast::BinaryOp::Add || op == ast::BinaryOp::Sub || op == ast::BinaryOp::Mul ||
                       op == ast::BinaryOp::Div || op == ast::BinaryOp::Mod;
    const std::string operands = typeName(a) + " and " + typeName(b);
    if (!intA && !intB) { // bit strings (and a literal): arithmetic in the bit string's width
        if (!arith) {
            return nullptr;
        }
        const Type* t = litA ? b : litB ? a : unifyTypes(types, a, b);
        if (t != nullptr) {
            cx_.lenient(DiagCode::BitStringArithmetic, e.span,
                        std::string("arithmetic '") + ast::binaryOpText(op) + "' on bit strings (" + operands +
                            "); IEC 61131-3 defines it for ANY_NUM only");
        }
        return t;
    }
    if (!wordA && !wordB) { // integers (and a literal): bitwise in the integer's width
        if (!logic) {
            return nullptr;
        }
        const Type* t = litA ? b : litB ? a : commonType(types, a, b);
        if (t != nullptr) {
            cx_.lenient(DiagCode::BitwiseOnInteger, e.span,
                        std::string("'") + ast::binaryOpText(op) + "' on integers (" + operands +
                            "); IEC 61131-3 defines it for ANY_BIT only");
        }
        return t;
    }
    if (litA || litB) {
        return nullptr; // a bit string and a literal: the standard rules decided already
    }
    // An integer and a bit string. Bitwise operators keep a bit string of the wider width;
    // arithmetic and comparisons count the bit string as the unsigned integer of its width.
    const Type* t = nullptr;
    if (logic) {
        const Type* word = wordA ? sa : sb;
        const Type* other = wordA ? sb : sa;
        const std::uint32_t width = std::max(word->size, other->size);
        t = width == word->size ? (wordA ? a : b) : types.get(width <= 2 ? K::Word : width <= 4 ? K::DWord : K::LWord);
    } else {
        t = mixedBitIntegerType(types, a, b);
    }
    if (t != nullptr) {
        cx_.lenient(DiagCode::MixedBitInteger, e.span,
                    std::string("'") + ast::binaryOpText(op) + "' mixes an integer and a bit string (" + operands +
                        "); IEC 61131-3 needs an explicit *_TO_* conversion");
    }
    return t;
}

bool BodyChecker::lenientNot(ast::UnaryExpr& e, const Type* t) {
    if (!isTypedInteger(baseType(t))) {
        return false;
    }
    cx_.lenient(DiagCode::BitwiseOnInteger, e.span,
                "'NOT' on " + typeName(t) + "; IEC 61131-3 defines it for BOOL and ANY_BIT only");
    return true;
}

bool BodyChecker::lenientWordSelector(const ast::Expr& e, const Type* t, const char* what) {
    if (!isWordType(baseType(t))) {
        return false;
    }
    cx_.lenient(DiagCode::BitStringSelector, e.span,
                std::string(what) + " '" + text(e.span) + "' has the bit-string type " + typeName(t) +
                    "; IEC 61131-3 wants an integer");
    return true;
}

bool BodyChecker::lenientIntegerBits(const ast::BitAccessExpr& e, const Type* t) {
    cx_.lenient(DiagCode::IntegerBitAccess, e.span,
                "partial bit access on '" + text(e.object->span) + "' of the integer type " + typeName(t) +
                    "; IEC 61131-3 defines it for BYTE, WORD, DWORD and LWORD only");
    return true;
}

const Symbol* BodyChecker::codesysParameter(const Symbol& fb, ast::Identifier& name) {
    if (fb.span.file != kStdlibFile) {
        return nullptr; // a user FB named CTU has only the parameters it declares
    }
    const std::string_view iec = iecParameterName(fb.name, name.name);
    const Symbol* p = iec.empty() ? nullptr : findMember(&fb, iec);
    if (p == nullptr) {
        return nullptr;
    }
    cx_.lenient(DiagCode::CodesysFbParameter, name.span,
                "'" + name.name + "' is CODESYS's name for the input '" + p->name + "' of " + fb.name +
                    "; IEC 61131-3 calls it '" + p->name + "'");
    name.name = p->name;
    return p;
}

bool BodyChecker::lenientNarrowing(const ast::Expr& e, const Type* from, const Type* to,
                                   const std::string& conversion) {
    const Type* bf = baseType(from);
    const Type* bt = baseType(to);
    const bool scalarFrom = isNumeric(bf) || isWordType(bf);
    const bool scalarTo = isNumeric(bt) || isWordType(bt);
    if (!scalarFrom || !scalarTo) {
        return false; // BOOL, TIME and dates keep needing an explicit conversion
    }
    cx_.lenient(DiagCode::ImplicitNarrowingConversion, e.span,
                "'" + text(e.span) + "' of type " + typeName(from) + " converts implicitly to " + typeName(to) +
                    " and may lose range or precision; computed as " + conversion + " computes it");
    return true;
}

const Type* BodyChecker::lenientConversionSource(const StdFunction& f, const Type* arg) const {
    const std::size_t to = f.name.find("_TO_");
    const Type* source =
        to == std::string::npos || to == 0 ? nullptr : cx_.model.types.elementary(f.name.substr(0, to));
    const Type* a = isError(arg) ? nullptr : baseType(arg);
    if (source == nullptr || a == nullptr || !(isNumeric(source) || isWordType(source)) ||
        !(isNumeric(a) || isWordType(a)) || a->kind() == K::IntLiteral || a->kind() == K::RealLiteral) {
        return nullptr;
    }
    return source;
}

void BodyChecker::lenientSignedShift(ast::CallExpr& e, const StdFunction& f, std::vector<StdArg>& args,
                                     const Type* expected, StdOutcome& out) {
    if (f.name != "SHL" && f.name != "SHR" && f.name != "ROL" && f.name != "ROR") {
        return;
    }
    std::size_t in = args.size();
    for (std::size_t i = 0; i < args.size() && i < e.args.size(); ++i) {
        if ((i == 0 && !e.args[i].name) || (e.args[i].name && sameName(e.args[i].name->name, "IN"))) {
            in = i;
        }
    }
    const Type* signedType = in < args.size() && !isError(args[in].type) ? args[in].type : nullptr;
    if (signedType == nullptr || !isSignedInt(baseType(signedType))) {
        return;
    }
    auto& types = cx_.model.types;
    const std::uint32_t size = baseType(signedType)->size;
    args[in].type = types.get(size == 1 ? K::Byte : size == 2 ? K::Word : size == 4 ? K::DWord : K::LWord);
    StdOutcome retry = resolveStandardCall(types, f, args, expected);
    args[in].type = signedType;
    if (!retry.resolution) {
        return;
    }
    retry.resolution->generic = signedType; // computed in the integer's own width and sign
    retry.resolution->result = signedType;
    retry.resolution->paramTypes[in] = signedType;
    out = std::move(retry);
    const Span at = e.args[in].value ? e.args[in].value->span : e.args[in].span;
    cx_.lenient(DiagCode::ShiftOnSignedInteger, at,
                f.name + " on '" + text(at) + "' of the signed type " + typeName(signedType) +
                    "; IEC 61131-3 defines it for ANY_BIT only" +
                    (f.name == "SHR" ? " (CODESYS shifts signed values arithmetically)" : ""));
}

void BodyChecker::lenientRealArgument(ast::CallExpr& e, const StdFunction& f, std::vector<StdArg>& args,
                                      const Type* expected, StdOutcome& out) {
    // The one-input functions of ANY_REAL that return their input's type: SQRT … ATAN.
    const StdSignature& sig = standardSignatures()[f.first];
    if (f.count != 1 || sig.params.size() != 1 || sig.params[0].family != TypeFamily::AnyReal ||
        sig.result != StdResult::Generic || args.size() != 1 || e.args.size() != 1) {
        return;
    }
    const Type* integer = args[0].type;
    if (isError(integer) || !isTypedInteger(baseType(integer))) {
        return; // bit strings, BOOL, TIME keep E0306, as in CODESYS
    }
    auto& types = cx_.model.types;
    const Type* real = types.get(K::Real);
    const bool lreal =
        (expected != nullptr && baseType(expected)->kind() == K::LReal) || !implicitlyConvertible(integer, real);
    const Type* computed = lreal ? types.get(K::LReal) : real;
    args[0].type = computed;
    StdOutcome retry = resolveStandardCall(types, f, args, expected);
    args[0].type = integer;
    if (!retry.resolution) {
        return;
    }
    out = std::move(retry); // the argument converts to `computed` where the call is resolved
    const Span at = e.args[0].value ? e.args[0].value->span : e.args[0].span;
    cx_.lenient(DiagCode::RealFunctionOnInteger, at,
                f.name + " of '" + text(at) + "' of the integer type " + typeName(integer) + ", computed in " +
                    typeName(computed) + "; IEC 61131-3 defines it for ANY_REAL only");
}

} // namespace takt::compiler::sema
