// Overload resolution for standard functions: generic families, binding of T to the common
// type of the arguments (widening only), untyped literals, extensible inputs.
#include <algorithm>
#include <cctype>

#include "sema/stdlib.h"
#include "takt/compiler/names.h"
#include "takt/compiler/sema.h"

namespace takt::compiler::sema {

namespace {

using F = TypeFamily;
using K = TypeKind;

constexpr std::uint32_t kMaxStringLength = 32767;

bool isLiteralType(const Type* t) {
    return t->kind() == K::IntLiteral || t->kind() == K::RealLiteral;
}

} // namespace

bool literalAdopts(const Type* literal, const Type* target) {
    const Type* t = stripAlias(target);
    if (t != nullptr && t->kind() == K::Subrange) {
        t = stripAlias(static_cast<const SubrangeType*>(t)->base);
    }
    if (literal->kind() == K::RealLiteral) {
        return isReal(t);
    }
    return isInteger(t) || (isBitString(t) && t->kind() != K::Bool) || isReal(t);
}

namespace {

std::string_view parameterPrefix(const std::string& name, unsigned& number) {
    std::size_t digits = name.size();
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1])) != 0) {
        --digits;
    }
    number = 0;
    for (std::size_t i = digits; i < name.size(); ++i) {
        number = number * 10 + static_cast<unsigned>(name[i] - '0');
    }
    return std::string_view(name).substr(0, digits);
}

// The parameter index a formal name selects, or -1. Extensible signatures accept the repeated
// parameter's prefix with any later number (IN3, IN4 …).
int formalSlot(const StdSignature& sig, std::string_view name) {
    for (std::size_t i = 0; i < sig.params.size(); ++i) {
        if (sameName(sig.params[i].name, name) ||
            (!sig.params[i].alias.empty() && sameName(sig.params[i].alias, name))) {
            return static_cast<int>(i);
        }
    }
    if (!sig.extensible) {
        return -1;
    }
    unsigned lastNumber = 0;
    const std::string_view prefix = parameterPrefix(sig.params.back().name, lastNumber);
    if (name.size() <= prefix.size() || !sameName(name.substr(0, prefix.size()), prefix)) {
        return -1;
    }
    unsigned n = 0;
    for (char c : name.substr(prefix.size())) {
        if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
            return -1;
        }
        n = n * 10 + static_cast<unsigned>(c - '0');
    }
    if (n <= lastNumber) {
        return -1;
    }
    return static_cast<int>(sig.params.size() - 1 + (n - lastNumber));
}

const StdParam& paramAt(const StdSignature& sig, std::size_t slot) {
    return slot < sig.params.size() ? sig.params[slot] : sig.params.back();
}

const Type* concreteLiteral(const TypeTable& types, const Type* t) {
    if (t->kind() == K::IntLiteral) {
        return types.get(K::DInt);
    }
    if (t->kind() == K::RealLiteral) {
        return types.get(K::LReal);
    }
    return t;
}

std::string typeList(const std::vector<StdArg>& args) {
    std::string out = "(";
    for (std::size_t i = 0; i < args.size(); ++i) {
        out += i == 0 ? "" : ", ";
        out += args[i].type == nullptr ? "?" : args[i].type->name();
    }
    return out + ")";
}

struct Attempt {
    bool countOk = false;
    std::optional<StdResolution> resolution;
};

Attempt tryOverload(TypeTable& types, const StdSignature& sig, std::uint32_t index, const std::vector<StdArg>& args,
                    const std::vector<int>& slots, const Type* expected) {
    Attempt a;
    const std::size_t used = args.size();
    std::vector<bool> filled(std::max(used, sig.params.size()), false);
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (slots[i] < 0 || static_cast<std::size_t>(slots[i]) >= filled.size()) {
            return a;
        }
        filled[static_cast<std::size_t>(slots[i])] = true;
    }
    if (sig.extensible) {
        if (used < sig.params.size() || !std::all_of(filled.begin(), filled.begin() + static_cast<std::ptrdiff_t>(used),
                                                     [](bool f) { return f; })) {
            return a;
        }
    } else {
        // Every input is needed; outputs (SPLIT_*) may be left out of a formal call.
        if (filled.size() > sig.params.size()) {
            return a;
        }
        for (std::size_t k = 0; k < sig.params.size(); ++k) {
            if (!filled[k] && !sig.params[k].output) {
                return a;
            }
        }
    }
    a.countOk = true;

    bool anyError = false;
    const Type* bound = nullptr;
    const Type* literal = nullptr;
    bool hasGeneric = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const StdParam& p = paramAt(sig, static_cast<std::size_t>(slots[i]));
        const Type* t = stripAlias(args[i].type);
        if (t->kind() == K::Error) {
            anyError = true;
            continue;
        }
        if (!p.generic || p.output) {
            continue;
        }
        hasGeneric = true;
        if (isLiteralType(t)) {
            if (literal == nullptr || t->kind() == K::RealLiteral) {
                literal = t;
            }
            continue;
        }
        bound = bound == nullptr ? args[i].type : unifyTypes(types, bound, args[i].type);
        if (bound == nullptr) {
            return a;
        }
    }
    if (hasGeneric && bound == nullptr && literal != nullptr) {
        // Only untyped literals: take the context's type when it can hold them, else the
        // widest-use default (DINT for integers, LREAL for reals).
        const StdParam& p = sig.params.front().generic ? sig.params.front() : sig.params.back();
        if (expected != nullptr && literalAdopts(literal, expected) && inFamily(expected, p.family, p.exact)) {
            bound = expected;
        } else if (literal->kind() == K::IntLiteral && p.family == F::AnyReal) {
            bound = types.get(K::LReal);
        } else if (literal->kind() == K::IntLiteral && p.family == F::AnyBit) {
            bound = types.get(K::DWord);
        } else {
            bound = concreteLiteral(types, literal);
        }
    }
    if (hasGeneric && bound == nullptr && !anyError) {
        return a;
    }

    StdResolution r;
    r.overload = index;
    r.generic = bound;
    r.paramTypes.resize(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
        r.slots.push_back(static_cast<std::uint32_t>(slots[i]));
        const StdParam& p = paramAt(sig, static_cast<std::size_t>(slots[i]));
        const Type* t = args[i].type;
        const Type* st = stripAlias(t);
        if (st->kind() == K::Error) {
            r.paramTypes[i] = t;
            continue;
        }
        if (p.output) {                            // the variable receives the value in its own type
            if (!inFamily(t, p.family, p.exact)) { // a literal is reported as not a variable
                return a;
            }
            r.paramTypes[i] = t;
        } else if (p.generic) {
            if (bound == nullptr || !inFamily(bound, p.family, p.exact)) {
                return a;
            }
            if (isLiteralType(st) ? !literalAdopts(st, bound) : !implicitlyConvertible(t, bound)) {
                return a;
            }
            r.paramTypes[i] = bound;
        } else if (p.family == F::Exact) {
            const Type* want = p.exact == K::String || p.exact == K::WString
                                   ? (isString(st) && (st->kind() == p.exact) ? t : nullptr)
                                   : types.get(p.exact);
            if (want == nullptr) {
                return a;
            }
            if (isLiteralType(st) ? !literalAdopts(st, want) : !implicitlyConvertible(t, want)) {
                return a;
            }
            r.paramTypes[i] = want;
        } else {
            if (!inFamily(t, p.family, p.exact)) {
                return a;
            }
            r.paramTypes[i] = concreteLiteral(types, st);
        }
    }

    switch (sig.result) {
    case StdResult::Generic: r.result = bound != nullptr ? bound : types.get(K::Error); break;
    case StdResult::Void: r.result = types.get(K::Void); break;
    case StdResult::Exact:
        r.result = sig.resultKind == K::String || sig.resultKind == K::WString
                       ? types.string(sig.resultKind == K::WString, 80)
                       : types.get(sig.resultKind);
        break;
    case StdResult::StringSum: {
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < args.size(); ++i) {
            const Type* st = stripAlias(args[i].type);
            if (paramAt(sig, static_cast<std::size_t>(slots[i])).generic && isString(st)) {
                total += static_cast<const StringType*>(st)->length;
            }
        }
        const Type* b = bound != nullptr ? stripAlias(bound) : nullptr;
        r.result = b != nullptr && isString(b)
                       ? types.string(b->kind() == K::WString,
                                      static_cast<std::uint32_t>(std::min<std::uint64_t>(total, kMaxStringLength)))
                       : types.get(K::Error);
        break;
    }
    }
    a.resolution = std::move(r);
    return a;
}

} // namespace

const Type* unifyTypes(TypeTable& types, const Type* a, const Type* b) {
    if (a == b) {
        return a;
    }
    const Type* sa = stripAlias(a);
    const Type* sb = stripAlias(b);
    if (sa == sb) {
        return a;
    }
    if (isString(sa) && isString(sb)) {
        if (sa->kind() != sb->kind()) {
            return nullptr;
        }
        return static_cast<const StringType*>(sa)->length >= static_cast<const StringType*>(sb)->length ? a : b;
    }
    if (const Type* c = commonType(types, a, b)) {
        return c;
    }
    if (implicitlyConvertible(a, b)) {
        return b;
    }
    if (implicitlyConvertible(b, a)) {
        return a;
    }
    return nullptr;
}

std::string_view familyName(TypeFamily family, TypeKind exact) {
    switch (family) {
    case F::Exact: return elementaryKindName(exact);
    case F::Any: return "ANY";
    case F::AnyElementary: return "ANY_ELEMENTARY";
    case F::AnyMagnitude: return "ANY_MAGNITUDE";
    case F::AnyNum: return "ANY_NUM";
    case F::AnyInt: return "ANY_INT";
    case F::AnyReal: return "ANY_REAL";
    case F::AnyBit: return "ANY_BIT";
    case F::AnyString: return "ANY_STRING";
    case F::AnyDate: return "ANY_DATE";
    case F::AnyDuration: return "ANY_DURATION";
    }
    return "";
}

bool inFamily(const Type* t, TypeFamily family, TypeKind exact) {
    const Type* b = stripAlias(t);
    if (b != nullptr && b->kind() == K::Subrange) {
        b = stripAlias(static_cast<const SubrangeType*>(b)->base);
    }
    if (b == nullptr) {
        return false;
    }
    if (b->kind() == K::Error) {
        return true;
    }
    if (b->kind() == K::IntLiteral) {
        return family != F::Exact && family != F::AnyString && family != F::AnyDate && family != F::AnyDuration;
    }
    if (b->kind() == K::RealLiteral) {
        return family == F::Any || family == F::AnyElementary || family == F::AnyMagnitude || family == F::AnyNum ||
               family == F::AnyReal;
    }
    switch (family) {
    case F::Exact: return b->kind() == exact;
    case F::Any: return b->kind() != K::Void && b->kind() != K::Null;
    case F::AnyElementary: return isElementary(b) || b->kind() == K::Enum;
    case F::AnyMagnitude: return isNumeric(b) || isTimeLike(b);
    case F::AnyNum: return isNumeric(b);
    case F::AnyInt: return isInteger(b);
    case F::AnyReal: return isReal(b);
    case F::AnyBit: return isBitString(b);
    case F::AnyString: return isString(b);
    case F::AnyDate: return isDateLike(b);
    case F::AnyDuration: return isTimeLike(b);
    }
    return false;
}

std::string describeSignature(const StdSignature& sig) {
    std::string out = sig.name + "(";
    auto paramText = [](const StdParam& p) {
        return p.name + (p.output ? " => " : " : ") + std::string(familyName(p.family, p.exact));
    };
    for (std::size_t i = 0; i < sig.params.size(); ++i) {
        out += (i == 0 ? "" : ", ") + paramText(sig.params[i]);
    }
    if (sig.extensible) {
        out += ", …";
    }
    out += ")";
    switch (sig.result) {
    case StdResult::Void: break;
    case StdResult::Exact: out += " : " + std::string(familyName(F::Exact, sig.resultKind)); break;
    case StdResult::Generic:
    case StdResult::StringSum:
        for (const auto& p : sig.params) {
            if (p.generic) {
                out += " : " + std::string(familyName(p.family, p.exact));
                break;
            }
        }
        break;
    }
    return out;
}

StdOutcome resolveStandardCall(TypeTable& types, const StdFunction& fn, const std::vector<StdArg>& args,
                               const Type* expected) {
    StdOutcome out;
    const auto& sigs = standardSignatures();
    bool hasOutputs = false;
    for (std::uint32_t k = fn.first; k < fn.first + fn.count; ++k) {
        for (const StdParam& p : sigs[k].params) {
            hasOutputs = hasOutputs || p.output;
        }
    }
    // Argument syntax first: it does not depend on the overload.
    bool sawFormal = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i].output && !hasOutputs) {
            out.failure = StdFailure::Output;
            out.argIndex = i;
            out.message = "'" + std::string(args[i].name) + "' is given with => but " + fn.name + " has no outputs";
            return out;
        }
        if (!args[i].name.empty()) {
            sawFormal = true;
            for (std::size_t j = 0; j < i; ++j) {
                if (sameName(args[j].name, args[i].name)) {
                    out.failure = StdFailure::Duplicate;
                    out.argIndex = i;
                    out.message = "parameter '" + std::string(args[i].name) + "' of " + fn.name + " is given twice";
                    return out;
                }
            }
        } else if (sawFormal) {
            out.failure = StdFailure::Mixed;
            out.argIndex = i;
            out.message = "positional argument after formal arguments in the call of " + fn.name;
            return out;
        }
    }

    bool anyCount = false;
    bool anyName = false;
    std::optional<std::size_t> wrongArrow; // a formal argument connected with the wrong one of := and =>
    for (std::uint32_t k = fn.first; k < fn.first + fn.count; ++k) {
        const StdSignature& sig = sigs[k];
        std::vector<int> slots(args.size(), -1);
        bool namesOk = true;
        for (std::size_t i = 0; i < args.size(); ++i) {
            slots[i] = args[i].name.empty() ? static_cast<int>(i) : formalSlot(sig, args[i].name);
            if (slots[i] < 0) {
                namesOk = false;
                if (!anyName) {
                    out.argIndex = i;
                }
            }
        }
        if (!namesOk) {
            continue;
        }
        anyName = true;
        bool arrowsOk = true;
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (!args[i].name.empty() && args[i].output != paramAt(sig, static_cast<std::size_t>(slots[i])).output) {
                arrowsOk = false;
                wrongArrow = wrongArrow ? wrongArrow : i;
            }
        }
        if (!arrowsOk) {
            continue;
        }
        Attempt a = tryOverload(types, sig, k, args, slots, expected);
        anyCount = anyCount || a.countOk;
        if (a.resolution) {
            out.resolution = std::move(a.resolution);
            return out;
        }
    }

    const StdSignature& first = sigs[fn.first];
    if (wrongArrow && !anyCount) {
        const StdArg& a = args[*wrongArrow];
        out.failure = StdFailure::Output;
        out.argIndex = *wrongArrow;
        out.message = "'" + std::string(a.name) + "' is " + (a.output ? "an input" : "an output") + " of " + fn.name +
                      "; connect it with " + (a.output ? ":=" : "=>");
        return out;
    }
    if (!anyName) {
        out.failure = StdFailure::UnknownName;
        out.message =
            "'" + std::string(args[out.argIndex].name) + "' is not a parameter of " + describeSignature(first);
        return out;
    }
    if (!anyCount) {
        out.failure = StdFailure::Count;
        out.message = fn.name + " takes " + (first.extensible ? "at least " : "") +
                      std::to_string(first.params.size()) + " argument" + (first.params.size() == 1 ? "" : "s") + ", " +
                      std::to_string(args.size()) + " given: " + describeSignature(first);
        return out;
    }
    out.failure = StdFailure::Types;
    out.message = "no signature of " + fn.name + " accepts " + typeList(args) + "; accepted: ";
    for (std::uint32_t k = fn.first; k < fn.first + std::min<std::uint32_t>(fn.count, 4); ++k) {
        out.message += (k == fn.first ? "" : " | ") + describeSignature(sigs[k]);
    }
    if (fn.count > 4) {
        out.message += " | …";
    }
    return out;
}

} // namespace takt::compiler::sema

namespace takt::compiler {

std::vector<StandardSignatureInfo> standardSignaturesOf(std::string_view name) {
    using sema::StdResult;
    std::vector<StandardSignatureInfo> out;
    const sema::StdFunction* fn = sema::findStandardFunction(name);
    if (fn == nullptr) {
        return out;
    }
    for (std::uint32_t k = fn->first; k < fn->first + fn->count; ++k) {
        const sema::StdSignature& sig = sema::standardSignatures()[k];
        StandardSignatureInfo info;
        info.name = sig.name;
        info.extensible = sig.extensible;
        for (const sema::StdParam& p : sig.params) {
            info.params.push_back({p.name, std::string(sema::familyName(p.family, p.exact)), p.output});
            if (p.generic && (sig.result == StdResult::Generic || sig.result == StdResult::StringSum) &&
                info.result.empty()) {
                info.result = sema::familyName(p.family, p.exact);
            }
        }
        if (sig.result == StdResult::Exact) {
            info.result = sema::familyName(sema::TypeFamily::Exact, sig.resultKind);
        }
        out.push_back(std::move(info));
    }
    return out;
}

} // namespace takt::compiler
