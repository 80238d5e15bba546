// The type table and the IEC type relations: classification, implicit conversion (widening
// only) and the common type of binary operators.
#include "takt/compiler/sema/types.h"

#include <map>
#include <tuple>

#include "takt/compiler/names.h"
#include "takt/compiler/sema/symbols.h"

namespace takt::compiler {

namespace {

struct ElementaryInfo {
    TypeKind kind;
    const char* name;
    std::uint32_t size;
};

// Sizes are the VM's storage sizes (ARCHITECTURE.md, "Data model of the VM").
constexpr ElementaryInfo kElementary[] = {
    {TypeKind::Bool, "BOOL", 1},
    {TypeKind::SInt, "SINT", 1},
    {TypeKind::Int, "INT", 2},
    {TypeKind::DInt, "DINT", 4},
    {TypeKind::LInt, "LINT", 8},
    {TypeKind::USInt, "USINT", 1},
    {TypeKind::UInt, "UINT", 2},
    {TypeKind::UDInt, "UDINT", 4},
    {TypeKind::ULInt, "ULINT", 8},
    {TypeKind::Byte, "BYTE", 1},
    {TypeKind::Word, "WORD", 2},
    {TypeKind::DWord, "DWORD", 4},
    {TypeKind::LWord, "LWORD", 8},
    {TypeKind::Real, "REAL", 4},
    {TypeKind::LReal, "LREAL", 8},
    {TypeKind::Time, "TIME", 8},
    {TypeKind::LTime, "LTIME", 8},
    {TypeKind::Date, "DATE", 8},
    {TypeKind::LDate, "LDATE", 8},
    {TypeKind::Tod, "TOD", 8},
    {TypeKind::LTod, "LTOD", 8},
    {TypeKind::Dt, "DT", 8},
    {TypeKind::Ldt, "LDT", 8},
    {TypeKind::Char, "CHAR", 1},
    {TypeKind::WChar, "WCHAR", 2},
    {TypeKind::IntLiteral, "ANY_INT", 0},
    {TypeKind::RealLiteral, "ANY_REAL", 0},
    {TypeKind::Null, "NULL", 0},
    {TypeKind::Void, "VOID", 0},
    {TypeKind::Error, "<error>", 0},
};

// Long spellings accepted as type names.
constexpr std::pair<const char*, TypeKind> kSpellings[] = {
    {"TIME_OF_DAY", TypeKind::Tod},
    {"DATE_AND_TIME", TypeKind::Dt},
    {"LTIME_OF_DAY", TypeKind::LTod},
    {"LDATE_AND_TIME", TypeKind::Ldt},
};

constexpr std::uint32_t kDefaultStringLength = 80;

// The type with aliases and subranges removed (a subrange behaves as its base in relations).
const Type* core(const Type* t) {
    t = stripAlias(t);
    while (t != nullptr && t->kind() == TypeKind::Subrange) {
        t = stripAlias(static_cast<const SubrangeType*>(t)->base);
    }
    return t;
}

bool kindIn(const Type* t, TypeKind lo, TypeKind hi) {
    return t != nullptr && t->kind() >= lo && t->kind() <= hi;
}

int rank(TypeKind k) {
    switch (k) {
    case TypeKind::SInt:
    case TypeKind::USInt:
    case TypeKind::Byte: return 0;
    case TypeKind::Int:
    case TypeKind::UInt:
    case TypeKind::Word: return 1;
    case TypeKind::DInt:
    case TypeKind::UDInt:
    case TypeKind::DWord: return 2;
    case TypeKind::LInt:
    case TypeKind::ULInt:
    case TypeKind::LWord: return 3;
    default: return -1;
    }
}

// An FB or interface symbol implements/extends the interface `target` (transitively).
bool implementsInterface(const Symbol* pou, const Symbol* target, int depth = 0) {
    if (pou == nullptr || depth > 64) {
        return false;
    }
    if (pou == target) {
        return true;
    }
    for (const Symbol* i : pou->interfaces) {
        if (implementsInterface(i, target, depth + 1)) {
            return true;
        }
    }
    return implementsInterface(pou->base, target, depth + 1);
}

bool derivesFrom(const Symbol* fb, const Symbol* base) {
    for (int depth = 0; fb != nullptr && depth < 64; ++depth, fb = fb->base) {
        if (fb == base) {
            return true;
        }
    }
    return false;
}

const Symbol* pouSymbol(const Type* t) {
    if (t == nullptr ||
        (t->kind() != TypeKind::FunctionBlock && t->kind() != TypeKind::Program && t->kind() != TypeKind::Interface)) {
        return nullptr;
    }
    return static_cast<const PouType*>(t)->symbol;
}

bool intToReal(TypeKind from, TypeKind to) {
    if (to == TypeKind::Real) {
        return from == TypeKind::SInt || from == TypeKind::Int || from == TypeKind::USInt || from == TypeKind::UInt;
    }
    if (to == TypeKind::LReal) {
        return rank(from) >= 0 && rank(from) <= 2; // SINT..DINT, USINT..UDINT
    }
    return false;
}

} // namespace

// Strings, arrays and references are interned: structurally equal types are one object.
struct TypeInterning {
    std::map<std::pair<bool, std::uint32_t>, const StringType*> strings;
    std::map<std::tuple<const Type*, std::vector<std::pair<std::int64_t, std::int64_t>>>, const ArrayType*> arrays;
    std::map<std::pair<const Type*, ast::RefSpelling>, const RefType*> refs;
};

// ---- classification -----------------------------------------------------------------------------

bool isPointer(const Type* t) {
    const Type* s = stripAlias(t);
    return s != nullptr && s->kind() == TypeKind::Ref &&
           static_cast<const RefType*>(s)->spelling == ast::RefSpelling::PointerTo;
}

bool isReference(const Type* t) {
    const Type* s = stripAlias(t);
    return s != nullptr && s->kind() == TypeKind::Ref &&
           static_cast<const RefType*>(s)->spelling == ast::RefSpelling::ReferenceTo;
}

const Type* stripAlias(const Type* t) {
    for (int depth = 0; t != nullptr && t->kind() == TypeKind::Alias && depth < 64; ++depth) {
        t = static_cast<const AliasType*>(t)->target;
    }
    return t;
}

bool isSignedInt(const Type* t) {
    return kindIn(core(t), TypeKind::SInt, TypeKind::LInt);
}
bool isUnsignedInt(const Type* t) {
    return kindIn(core(t), TypeKind::USInt, TypeKind::ULInt);
}
bool isInteger(const Type* t) {
    const Type* c = core(t);
    return kindIn(c, TypeKind::SInt, TypeKind::ULInt) || (c != nullptr && c->kind() == TypeKind::IntLiteral);
}
bool isBitString(const Type* t) {
    const Type* c = core(t);
    return kindIn(c, TypeKind::Byte, TypeKind::LWord) || (c != nullptr && c->kind() == TypeKind::Bool);
}
bool isReal(const Type* t) {
    const Type* c = core(t);
    return kindIn(c, TypeKind::Real, TypeKind::LReal) || (c != nullptr && c->kind() == TypeKind::RealLiteral);
}
bool isNumeric(const Type* t) {
    return isInteger(t) || isReal(t);
}
bool isTimeLike(const Type* t) {
    return kindIn(core(t), TypeKind::Time, TypeKind::LTime);
}
bool isDateLike(const Type* t) {
    return kindIn(core(t), TypeKind::Date, TypeKind::Ldt);
}
std::int64_t nanosPerCount(const Type* t) {
    const Type* c = core(t);
    switch (c != nullptr ? c->kind() : TypeKind::Error) {
    case TypeKind::Time:
    case TypeKind::Tod: return 1'000'000;
    case TypeKind::Date:
    case TypeKind::Dt: return 1'000'000'000;
    case TypeKind::LTime:
    case TypeKind::LDate:
    case TypeKind::LTod:
    case TypeKind::Ldt: return 1;
    default: return 0;
    }
}
bool isString(const Type* t) {
    return kindIn(core(t), TypeKind::String, TypeKind::WString);
}
bool isElementary(const Type* t) {
    return kindIn(stripAlias(t), TypeKind::Bool, TypeKind::WString);
}

std::uint32_t bitWidth(const Type* t) {
    const Type* c = core(t);
    if (c == nullptr) {
        return 0;
    }
    if (c->kind() == TypeKind::Enum) {
        return bitWidth(static_cast<const EnumType*>(c)->base);
    }
    if (c->kind() == TypeKind::Bool) {
        return 1;
    }
    if (kindIn(c, TypeKind::SInt, TypeKind::LReal) || kindIn(c, TypeKind::Char, TypeKind::WChar)) {
        return c->size * 8;
    }
    return 0;
}

const Field* StructType::field(std::string_view fieldName) const {
    for (const Field& f : fields) {
        if (sameName(f.name, fieldName)) {
            return &f;
        }
    }
    return nullptr;
}

// ---- the table ----------------------------------------------------------------------------------

TypeTable::TypeTable() : interned_(std::make_unique<TypeInterning>()) {
    byKind_.assign(static_cast<std::size_t>(TypeKind::Error) + 1, nullptr);
    for (const ElementaryInfo& info : kElementary) {
        auto t = std::make_unique<Type>(info.kind, info.name);
        t->size = info.size;
        t->align = info.size == 0 ? 1 : info.size;
        byKind_[static_cast<std::size_t>(info.kind)] = add(std::move(t));
    }
    byKind_[static_cast<std::size_t>(TypeKind::String)] = string(false, kDefaultStringLength);
    byKind_[static_cast<std::size_t>(TypeKind::WString)] = string(true, kDefaultStringLength);
}

TypeTable::~TypeTable() = default;

const Type* TypeTable::get(TypeKind kind) const {
    return byKind_.at(static_cast<std::size_t>(kind));
}

const Type* TypeTable::elementary(std::string_view name) const {
    const std::string upper = upperName(name);
    for (const ElementaryInfo& info : kElementary) {
        if (info.size != 0 && upper == info.name) {
            return get(info.kind);
        }
    }
    for (const auto& [spelling, kind] : kSpellings) {
        if (upper == spelling) {
            return get(kind);
        }
    }
    if (upper == "STRING") {
        return get(TypeKind::String);
    }
    if (upper == "WSTRING") {
        return get(TypeKind::WString);
    }
    return nullptr;
}

const StringType* TypeTable::string(bool wide, std::uint32_t length) {
    TypeInterning& in = *interned_;
    auto it = in.strings.find({wide, length});
    if (it != in.strings.end()) {
        return it->second;
    }
    std::string name = wide ? "WSTRING" : "STRING";
    if (length != kDefaultStringLength) {
        name += "[" + std::to_string(length) + "]";
    }
    auto t = std::make_unique<StringType>(wide ? TypeKind::WString : TypeKind::String, std::move(name), length);
    // Inline, length-bounded and NUL-terminated: n characters plus the terminator.
    t->size = (wide ? 2u : 1u) * (length + 1);
    t->align = wide ? 2 : 1;
    const StringType* raw = add(std::move(t));
    in.strings.emplace(std::make_pair(wide, length), raw);
    return raw;
}

const ArrayType* TypeTable::array(const Type* element, std::vector<ArrayDim> dims) {
    TypeInterning& in = *interned_;
    std::vector<std::pair<std::int64_t, std::int64_t>> key;
    for (const ArrayDim& d : dims) {
        key.emplace_back(d.lower, d.upper);
    }
    auto it = in.arrays.find({element, key});
    if (it != in.arrays.end()) {
        return it->second;
    }
    std::string name = "ARRAY [";
    std::uint64_t count = 1;
    if (dims.empty()) {
        name += "*";
    }
    for (std::size_t i = 0; i < dims.size(); ++i) {
        name += (i > 0 ? ", " : "") + std::to_string(dims[i].lower) + ".." + std::to_string(dims[i].upper);
        count *= dims[i].count();
    }
    name += "] OF " + element->name();
    auto t = std::make_unique<ArrayType>(std::move(name), element, std::move(dims));
    const std::uint64_t bytes = t->dims.empty() ? 0 : count * element->size;
    t->size = bytes > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<std::uint32_t>(bytes);
    t->align = element->align;
    const ArrayType* raw = add(std::move(t));
    in.arrays.emplace(std::make_tuple(element, std::move(key)), raw);
    return raw;
}

const RefType* TypeTable::ref(const Type* target, ast::RefSpelling spelling) {
    TypeInterning& in = *interned_;
    auto it = in.refs.find({target, spelling});
    if (it != in.refs.end()) {
        return it->second;
    }
    const char* prefix = spelling == ast::RefSpelling::PointerTo     ? "POINTER TO "
                         : spelling == ast::RefSpelling::ReferenceTo ? "REFERENCE TO "
                                                                     : "REF_TO ";
    auto t = std::make_unique<RefType>(prefix + target->name(), target, spelling);
    t->size = 8; // a reference is a 64-bit image offset/pointer in the VM
    t->align = 8;
    const RefType* raw = add(std::move(t));
    in.refs.emplace(std::make_pair(target, spelling), raw);
    return raw;
}

// ---- relations ----------------------------------------------------------------------------------

bool implicitlyConvertible(const Type* fromType, const Type* toType) {
    const Type* from = stripAlias(fromType);
    const Type* to = stripAlias(toType);
    if (from == nullptr || to == nullptr) {
        return false;
    }
    if (from->kind() == TypeKind::Error || to->kind() == TypeKind::Error || from == to) {
        return true;
    }
    const TypeKind fk = from->kind();
    const TypeKind tk = to->kind();
    if (fk == TypeKind::Enum || tk == TypeKind::Enum) {
        return false; // an enumeration converts only to itself
    }
    if (tk == TypeKind::Subrange) {
        // Only constants may enter a subrange implicitly; the caller checks the value's range.
        return fk == TypeKind::IntLiteral;
    }
    if (fk == TypeKind::Subrange) {
        return implicitlyConvertible(static_cast<const SubrangeType*>(from)->base, to);
    }
    if (fk == TypeKind::IntLiteral) {
        return isInteger(to) || isBitString(to) || isReal(to);
    }
    if (fk == TypeKind::RealLiteral) {
        return isReal(to);
    }
    if (fk == TypeKind::Null) { // a REFERENCE TO is bound with REF=, never assigned NULL
        return (tk == TypeKind::Ref && !isReference(to)) || tk == TypeKind::Interface;
    }
    if (kindIn(from, TypeKind::SInt, TypeKind::LInt)) {
        return (kindIn(to, TypeKind::SInt, TypeKind::LInt) && rank(tk) >= rank(fk)) || intToReal(fk, tk);
    }
    if (kindIn(from, TypeKind::USInt, TypeKind::ULInt)) {
        return (kindIn(to, TypeKind::USInt, TypeKind::ULInt) && rank(tk) >= rank(fk)) ||
               (kindIn(to, TypeKind::SInt, TypeKind::LInt) && rank(tk) > rank(fk)) || intToReal(fk, tk);
    }
    if (kindIn(from, TypeKind::Byte, TypeKind::LWord)) {
        return kindIn(to, TypeKind::Byte, TypeKind::LWord) && rank(tk) >= rank(fk);
    }
    switch (fk) {
    case TypeKind::Real: return tk == TypeKind::LReal;
    case TypeKind::Time: return tk == TypeKind::LTime;
    case TypeKind::Date: return tk == TypeKind::LDate;
    case TypeKind::Tod: return tk == TypeKind::LTod;
    case TypeKind::Dt: return tk == TypeKind::Ldt;
    case TypeKind::Char: return tk == TypeKind::String;
    case TypeKind::WChar: return tk == TypeKind::WString;
    case TypeKind::String: return tk == TypeKind::String; // any lengths: assignment truncates
    case TypeKind::WString: return tk == TypeKind::WString;
    case TypeKind::Array: {
        // ARRAY [*] (VAR_IN_OUT) accepts any array of the same element type.
        const auto* fa = static_cast<const ArrayType*>(from);
        const auto* ta = tk == TypeKind::Array ? static_cast<const ArrayType*>(to) : nullptr;
        return ta != nullptr && ta->dims.empty() && stripAlias(fa->element) == stripAlias(ta->element);
    }
    case TypeKind::Ref: {
        if (tk != TypeKind::Ref ||
            static_cast<const RefType*>(from)->spelling != static_cast<const RefType*>(to)->spelling) {
            return false;
        }
        const Type* ft = stripAlias(static_cast<const RefType*>(from)->target);
        const Type* tt = stripAlias(static_cast<const RefType*>(to)->target);
        if (ft == tt) {
            return true;
        }
        // A reference to a derived FB may be stored in a reference to its base.
        const Symbol* fs = pouSymbol(ft);
        const Symbol* ts = pouSymbol(tt);
        return fs != nullptr && ts != nullptr && ft->kind() == TypeKind::FunctionBlock &&
               tt->kind() == TypeKind::FunctionBlock && derivesFrom(fs, ts);
    }
    case TypeKind::FunctionBlock:
    case TypeKind::Interface: return tk == TypeKind::Interface && implementsInterface(pouSymbol(from), pouSymbol(to));
    default: return false;
    }
}

const Type* commonType(const TypeTable& types, const Type* aType, const Type* bType) {
    const Type* a = stripAlias(aType);
    const Type* b = stripAlias(bType);
    if (a == nullptr || b == nullptr) {
        return nullptr;
    }
    if (a->kind() == TypeKind::Error || b->kind() == TypeKind::Error) {
        return types.get(TypeKind::Error);
    }
    if (a->kind() == TypeKind::Subrange) {
        a = core(a);
    }
    if (b->kind() == TypeKind::Subrange) {
        b = core(b);
    }
    if (a == b) {
        return a;
    }
    // An untyped literal takes the other operand's type; two literals stay untyped.
    const bool aLit = a->kind() == TypeKind::IntLiteral || a->kind() == TypeKind::RealLiteral;
    const bool bLit = b->kind() == TypeKind::IntLiteral || b->kind() == TypeKind::RealLiteral;
    if (aLit && bLit) {
        return types.get(a->kind() == TypeKind::RealLiteral || b->kind() == TypeKind::RealLiteral
                             ? TypeKind::RealLiteral
                             : TypeKind::IntLiteral);
    }
    if (aLit || bLit) {
        const Type* lit = aLit ? a : b;
        const Type* other = aLit ? b : a;
        if (implicitlyConvertible(lit, other)) {
            return other;
        }
        if (lit->kind() == TypeKind::RealLiteral && isInteger(other)) {
            // i * 0.5: the smallest real that holds the integer's range.
            if (implicitlyConvertible(other, types.get(TypeKind::Real))) {
                return types.get(TypeKind::Real);
            }
            if (implicitlyConvertible(other, types.get(TypeKind::LReal))) {
                return types.get(TypeKind::LReal);
            }
        }
        return nullptr;
    }
    if (implicitlyConvertible(a, b)) {
        return b;
    }
    if (implicitlyConvertible(b, a)) {
        return a;
    }
    // Mixed families (INT + UINT -> DINT, DINT + REAL -> LREAL): the smallest type both widen to.
    constexpr TypeKind kCandidates[] = {TypeKind::SInt, TypeKind::Int,   TypeKind::DInt,  TypeKind::LInt,
                                        TypeKind::Real, TypeKind::LReal, TypeKind::LTime, TypeKind::LDate,
                                        TypeKind::LTod, TypeKind::Ldt};
    for (TypeKind k : kCandidates) {
        const Type* c = types.get(k);
        if (implicitlyConvertible(a, c) && implicitlyConvertible(b, c)) {
            return c;
        }
    }
    return nullptr;
}

const Type* mixedBitIntegerType(const TypeTable& types, const Type* aType, const Type* bType) {
    auto asInteger = [&](const Type* t) -> const Type* {
        const Type* s = stripAlias(t);
        if (s != nullptr && s->kind() == TypeKind::Subrange) {
            s = core(s);
        }
        switch (s == nullptr ? TypeKind::Error : s->kind()) {
        case TypeKind::Byte: return types.get(TypeKind::USInt);
        case TypeKind::Word: return types.get(TypeKind::UInt);
        case TypeKind::DWord: return types.get(TypeKind::UDInt);
        case TypeKind::LWord: return types.get(TypeKind::ULInt);
        default: return nullptr;
        }
    };
    const Type* a = stripAlias(aType);
    const Type* b = stripAlias(bType);
    const Type* ia = asInteger(a);
    const Type* ib = asInteger(b);
    const bool intA = a != nullptr && isInteger(a) && a->kind() != TypeKind::IntLiteral;
    const bool intB = b != nullptr && isInteger(b) && b->kind() != TypeKind::IntLiteral;
    if (ia != nullptr && intB) {
        return commonType(types, ia, b);
    }
    if (ib != nullptr && intA) {
        return commonType(types, a, ib);
    }
    return nullptr;
}

} // namespace takt::compiler
