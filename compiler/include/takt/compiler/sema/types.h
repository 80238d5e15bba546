#pragma once
// The semantic type model. Types are immutable once built and owned by the TypeTable; compare
// them by pointer (elementary types are singletons; arrays, strings and references are interned
// structurally, user types are unique per declaration).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "takt/bytecode/module.h"
#include "takt/compiler/ast.h"

namespace takt::compiler {

struct Symbol;
struct TypeInterning; // types.cpp

// The storage kinds of the bytecode first (bytecode/module.h, in IEC widening order within each
// family), so a storable TypeKind is its ValueKind by value; then the kinds only the compiler
// knows. Comments on the shared kinds: WString … Interface are StringType, EnumType,
// SubrangeType, ArrayType, StructType, RefType and PouType (FB instances and the type of PROGRAM
// instances, programs, interface references).
enum class TypeKind : std::uint8_t {
#define TAKT_X(name) name,
    TAKT_VALUE_KINDS(TAKT_X)
#undef TAKT_X
        Alias,   // AliasType: a named alias of another type (resolve with stripAlias)
    IntLiteral,  // an untyped integer literal: fits any integer/bit type that holds its value
    RealLiteral, // an untyped real literal: REAL or LREAL
    Null,        // the type of NULL: assignable to any REF_TO and interface
    Void,        // a FUNCTION without result
    Error,       // after an error: compatible with everything, so one mistake gives one diagnostic
};

#define TAKT_X(name)                                                                                                   \
    static_assert(static_cast<std::uint8_t>(TypeKind::name) == static_cast<std::uint8_t>(bytecode::ValueKind::name));
TAKT_VALUE_KINDS(TAKT_X)
#undef TAKT_X

// A kind the data image can store: one of the bytecode's ValueKinds.
[[nodiscard]] constexpr bool hasValueKind(TypeKind kind) {
    return static_cast<std::size_t>(kind) < bytecode::kValueKindCount;
}
// Only for kinds with hasValueKind(); the two lists agree by the static_asserts above.
[[nodiscard]] constexpr bytecode::ValueKind valueKind(TypeKind kind) {
    return static_cast<bytecode::ValueKind>(static_cast<std::uint8_t>(kind));
}

class Type {
public:
    explicit Type(TypeKind kind, std::string name) : kind_(kind), name_(std::move(name)) {}
    virtual ~Type() = default;
    Type(const Type&) = delete;
    Type& operator=(const Type&) = delete;

    [[nodiscard]] TypeKind kind() const { return kind_; }
    // Display name as IEC writes it: "INT", "ARRAY [1..3] OF INT", "STRING[20]", "REF_TO Motor", "Mode".
    [[nodiscard]] const std::string& name() const { return name_; }
    // Size in the VM's flat data image (bytes); 0 when not a storable type (Void, literals).
    std::uint32_t size = 0;
    std::uint32_t align = 1;

private:
    TypeKind kind_;
    std::string name_;
};

// ---- classification (on the alias-stripped type) ---------------------------------------------
[[nodiscard]] const Type* stripAlias(const Type* t);
[[nodiscard]] bool isSignedInt(const Type* t);   // SINT..LINT
[[nodiscard]] bool isUnsignedInt(const Type* t); // USINT..ULINT
[[nodiscard]] bool isInteger(const Type* t);     // ANY_INT (incl. IntLiteral, subranges of ints)
[[nodiscard]] bool isBitString(const Type* t);   // BOOL, BYTE..LWORD (ANY_BIT)
[[nodiscard]] bool isReal(const Type* t);        // REAL, LREAL, RealLiteral (ANY_REAL)
[[nodiscard]] bool isNumeric(const Type* t);     // ANY_NUM
[[nodiscard]] bool isTimeLike(const Type* t);    // TIME, LTIME
[[nodiscard]] bool isDateLike(const Type* t);    // DATE..LDT (ANY_DATE)
// Nanoseconds per unit an integer or REAL counts when converted to or from a time or date value
// (as CODESYS): TIME and TOD count milliseconds, DATE and DT seconds (since 1970-01-01), the
// L-variants nanoseconds; 0 for any other type.
[[nodiscard]] std::int64_t nanosPerCount(const Type* t);
[[nodiscard]] bool isString(const Type* t); // STRING, WSTRING (ANY_STRING)
[[nodiscard]] bool isElementary(const Type* t);
[[nodiscard]] std::uint32_t bitWidth(const Type* t); // BOOL 1, SINT/BYTE 8 … LWORD/LINT 64; 0 otherwise

// ---- derived types ---------------------------------------------------------------------------
struct StringType final : Type {
    StringType(TypeKind k, std::string n, std::uint32_t len) : Type(k, std::move(n)), length(len) {}
    std::uint32_t length; // characters (STRING[n])
};

struct EnumValue {
    std::string name;
    std::int64_t value;
    Span span;
};

struct EnumType final : Type {
    EnumType(std::string n, const Type* b) : Type(TypeKind::Enum, std::move(n)), base(b) {}
    const Type* base; // integer base type (INT by default)
    std::vector<EnumValue> values;
    const Symbol* symbol = nullptr; // the TYPE declaration (null for inline enums)
};

struct SubrangeType final : Type {
    SubrangeType(std::string n, const Type* b, std::int64_t lo, std::int64_t hi)
        : Type(TypeKind::Subrange, std::move(n)), base(b), lower(lo), upper(hi) {}
    const Type* base;
    std::int64_t lower;
    std::int64_t upper;
};

struct ArrayDim {
    std::int64_t lower;
    std::int64_t upper;
    [[nodiscard]] std::uint64_t count() const { return static_cast<std::uint64_t>(upper - lower) + 1; }
};

struct ArrayType final : Type {
    ArrayType(std::string n, const Type* e, std::vector<ArrayDim> d)
        : Type(TypeKind::Array, std::move(n)), element(e), dims(std::move(d)) {}
    const Type* element;
    std::vector<ArrayDim> dims; // empty for ARRAY [*] (VAR_IN_OUT only)
};

struct Field {
    std::string name;
    const Type* type;
    std::uint32_t offset = 0; // in bytes from the start of the struct
    const ast::Expr* init = nullptr;
    Span span;
};

struct StructType final : Type {
    explicit StructType(std::string n) : Type(TypeKind::Struct, std::move(n)) {}
    const StructType* base = nullptr; // STRUCT EXTENDS
    std::vector<Field> fields;        // including inherited ones, base fields first
    const Symbol* symbol = nullptr;
    bool isUnion = false; // UNION: every field at offset 0, the size of the largest
    [[nodiscard]] const Field* field(std::string_view name) const; // case-insensitive
};

// REF_TO (IEC), POINTER TO and REFERENCE TO (CODESYS) share one representation: an image
// offset, 0 for NULL, checked on every access. The spelling decides the rules: a POINTER takes
// part in arithmetic and converts to integers; a REFERENCE is dereferenced implicitly and
// bound with REF=.
struct RefType final : Type {
    RefType(std::string n, const Type* t, ast::RefSpelling s)
        : Type(TypeKind::Ref, std::move(n)), target(t), spelling(s) {}
    const Type* target;
    ast::RefSpelling spelling;
};
// POINTER TO / REFERENCE TO after stripping aliases (false for REF_TO and other types).
[[nodiscard]] bool isPointer(const Type* t);
[[nodiscard]] bool isReference(const Type* t);

// FB/PROGRAM instance types and interface types; members live in the POU's symbol scope.
struct PouType final : Type {
    PouType(TypeKind k, std::string n, const Symbol* s) : Type(k, std::move(n)), symbol(s) {}
    const Symbol* symbol; // the FUNCTION_BLOCK / PROGRAM / INTERFACE symbol
};

struct AliasType final : Type {
    AliasType(std::string n, const Type* t) : Type(TypeKind::Alias, std::move(n)), target(t) {}
    const Type* target;
    const Symbol* symbol = nullptr;
};

// Owns every type of one analysis.
class TypeTable {
public:
    TypeTable();
    ~TypeTable();
    TypeTable(const TypeTable&) = delete;
    TypeTable& operator=(const TypeTable&) = delete;
    // Elementary types by kind (Bool..WChar, IntLiteral, RealLiteral, Null, Void, Error).
    [[nodiscard]] const Type* get(TypeKind kind) const;
    // Case-insensitive elementary type name lookup ("INT", "TIME_OF_DAY", "STRING"), else null.
    [[nodiscard]] const Type* elementary(std::string_view name) const;
    [[nodiscard]] const StringType* string(bool wide, std::uint32_t length);
    [[nodiscard]] const ArrayType* array(const Type* element, std::vector<ArrayDim> dims);
    [[nodiscard]] const RefType* ref(const Type* target, ast::RefSpelling spelling = ast::RefSpelling::RefTo);
    // User types: the table takes ownership and returns the stored pointer.
    template <typename T> T* add(std::unique_ptr<T> type) {
        T* raw = type.get();
        owned_.push_back(std::move(type));
        return raw;
    }

private:
    std::vector<std::unique_ptr<Type>> owned_;
    std::vector<const Type*> byKind_;
    std::unique_ptr<TypeInterning> interned_;
};

// IEC implicit conversion: true when a value of `from` may be assigned to `to` without an
// explicit *_TO_* call (identity, widening within a family, SINT->INT->DINT->LINT, USINT->…,
// BYTE->WORD->DWORD->LWORD, REAL->LREAL, integers to a wider-range real, literals that fit,
// STRING[n] to STRING[m], NULL to REF_TO, FB instance to an interface it implements, …).
[[nodiscard]] bool implicitlyConvertible(const Type* from, const Type* to);
// The type both operands convert to for an arithmetic/comparison operator, or null.
[[nodiscard]] const Type* commonType(const TypeTable& types, const Type* a, const Type* b);
// CODESYS's operand type for an integer mixed with a bit string (INT + WORD, DWORD = DINT),
// which IEC 61131-3 rejects (W1006 under dialect "codesys"): the bit string counts as the
// unsigned integer of its width (WORD as UINT), then commonType(). Null for other operands.
[[nodiscard]] const Type* mixedBitIntegerType(const TypeTable& types, const Type* a, const Type* b);

} // namespace takt::compiler
