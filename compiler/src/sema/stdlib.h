#pragma once
// The standard function library as data: every IEC standard function is one or more signatures
// (overloads) over generic type families. Symbol::stdIndex indexes standardFunctions(); a
// resolved call records the chosen overload in CallExpr::stdOverload (an index into
// standardSignatures()) and the type bound to the generic parameter in CallExpr::genericType,
// so code generation never repeats overload resolution.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "takt/compiler/sema/types.h"

namespace takt::compiler::sema {

// IEC generic type families (IEC 61131-3 Ed.3, figure 5) plus Exact for a concrete type.
enum class TypeFamily : std::uint8_t {
    Exact,         // the concrete TypeKind of the parameter (String/WString: any length)
    Any,           // anything with a value, including enums, arrays and structs
    AnyElementary, // elementary types and enums
    AnyMagnitude,  // ANY_NUM + TIME/LTIME
    AnyNum,
    AnyInt,
    AnyReal,
    AnyBit, // BOOL, BYTE..LWORD
    AnyString,
    AnyDate,     // DATE, TOD, DT and L-variants
    AnyDuration, // TIME, LTIME
};

// "INT", "TOD", "STRING" for an elementary kind ("?" otherwise).
[[nodiscard]] std::string_view elementaryKindName(TypeKind kind);
[[nodiscard]] std::string_view familyName(TypeFamily family, TypeKind exact);
// True when `t` (alias-stripped; untyped literals included) belongs to the family.
[[nodiscard]] bool inFamily(const Type* t, TypeFamily family, TypeKind exact);

// What a standard function does; code generation switches on it.
enum class StdOp : std::uint16_t {
    Convert, // <T>_TO_<U>, TO_<U>: result type is the target, argument type the source
    Trunc,   // TRUNC, TRUNC_<INT>, <REAL>_TRUNC_<INT>
    ToBcd,   // <INT>_TO_BCD, <UINT>_TO_BCD_<BIT>
    FromBcd, // BCD_TO_<INT>, <BIT>_BCD_TO_<UINT>
    Abs,
    Sqrt,
    Ln,
    Log,
    Exp,
    Expt,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Move,
    And,
    Or,
    Xor,
    Not,
    Shl,
    Shr,
    Rol,
    Ror,
    Sel,
    Max,
    Min,
    Limit,
    Mux,
    Gt,
    Ge,
    Eq,
    Le,
    Lt,
    Ne,
    Len,
    Left,
    Right,
    Mid,
    Concat,
    Insert,
    Delete,
    Replace,
    Find,
    AddTime,
    SubTime,
    MulTime,
    DivTime,
    AddTodTime,
    AddDtTime,
    SubTodTime,
    SubDtTime,
    SubDateDate,
    SubTodTod,
    SubDtDt,
    ConcatDateTod,
    AssertTrue,
    AssertFalse,
    AssertEqual,
    AssertNotEqual,
    AssertGreater,
    AssertLess,
    AssertGreaterOrEqual,
    AssertLessOrEqual,
    AssertNear,
    TestFinished, // TEST_FINISHED(): a multi-cycle test passes here (docs/testing.md)
    ConcatDate,   // CONCAT_DATE(YEAR, MONTH, DAY)
    ConcatTod,    // CONCAT_TOD / CONCAT_LTOD(HOUR, MINUTE, SECOND, MILLISECOND)
    ConcatDt,     // CONCAT_DT / CONCAT_LDT(YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, MILLISECOND)
    SplitDate,    // SPLIT_DATE(IN, YEAR =>, MONTH =>, DAY =>)
    SplitTod,     // SPLIT_TOD / SPLIT_LTOD(IN, HOUR =>, MINUTE =>, SECOND =>, MILLISECOND =>)
    SplitDt,      // SPLIT_DT / SPLIT_LDT(IN, YEAR =>, … MILLISECOND =>)
    DayOfWeek,    // DAY_OF_WEEK(IN: DATE): 0 = Sunday … 6 = Saturday
    PlcTime,      // TIME(): the PLC's clock (OSCAT's T_PLC_MS / T_PLC_US read it)
    NowDt,        // NOW_DT() / NOW_LDT(): the wall clock at the cycle's start
};

struct StdParam {
    std::string name; // formal name: IN, IN1, G, K, MN, MX, L, P, N …
    TypeFamily family = TypeFamily::Any;
    TypeKind exact = TypeKind::Void; // for TypeFamily::Exact
    bool generic = false;            // binds the signature's single type variable T
    bool output = false;             // VAR_OUTPUT (SPLIT_*): a variable, given with => or positionally
    std::string alias;               // a second formal name (truST's VALUE for ASSERT_GREATER's IN1)
};

enum class StdResult : std::uint8_t {
    Generic,   // T
    Exact,     // resultKind (STRING results have the default length 80)
    Void,      // no value (assertions)
    StringSum, // T with the lengths of all generic string arguments added (CONCAT, INSERT, REPLACE)
};

struct StdSignature {
    std::string name;
    StdOp op = StdOp::Convert;
    std::vector<StdParam> params;
    bool extensible = false; // the last parameter repeats: IN2 → IN3, IN4 … (MUX: IN1 → IN2 …)
    StdResult result = StdResult::Generic;
    TypeKind resultKind = TypeKind::Void;
    TypeKind from = TypeKind::Void; // conversions: source kind (Void when generic: TO_<U>, TRUNC)
    bool testOnly = false;          // ASSERT_*: only inside TEST_PROGRAM / TEST_FUNCTION_BLOCK
};

// One name with its overloads [first, first + count) in standardSignatures().
struct StdFunction {
    std::string name;
    std::uint32_t first = 0;
    std::uint32_t count = 0;
};

[[nodiscard]] const std::vector<StdSignature>& standardSignatures();
[[nodiscard]] const std::vector<StdFunction>& standardFunctions();
[[nodiscard]] const StdFunction* findStandardFunction(std::string_view name);
// "MAX(IN1 : ANY_ELEMENTARY, IN2 : ANY_ELEMENTARY, …) : ANY_ELEMENTARY"
[[nodiscard]] std::string describeSignature(const StdSignature& sig);

// An untyped literal (IntLiteral/RealLiteral) adopts `target` when the target's family can
// hold it: integers become any integer, bit string (not BOOL) or real; reals become reals.
[[nodiscard]] bool literalAdopts(const Type* literal, const Type* target);
// The type two values meet in: identical types, the longer of two strings, commonType(), or
// the one the other converts to implicitly; null when they have none.
[[nodiscard]] const Type* unifyTypes(TypeTable& types, const Type* a, const Type* b);

// ---- overload resolution ----------------------------------------------------------------------
struct StdArg {
    const Type* type = nullptr; // the argument's type (IntLiteral/RealLiteral for untyped literals)
    std::string_view name;      // formal name; empty for a positional argument
    bool output = false;        // written with => (only for an output parameter)
};

struct StdResolution {
    std::uint32_t overload = 0;          // index into standardSignatures()
    const Type* generic = nullptr;       // type bound to T (null when the signature has no T)
    const Type* result = nullptr;        // Void type for assertions
    std::vector<const Type*> paramTypes; // per argument (in the order given): the type it converts to
    std::vector<std::uint32_t> slots;    // per argument (in the order given): the parameter it binds
};

enum class StdFailure : std::uint8_t { None, Count, UnknownName, Duplicate, Mixed, Output, Types };

struct StdOutcome {
    std::optional<StdResolution> resolution;
    StdFailure failure = StdFailure::None;
    std::size_t argIndex = 0; // the offending argument for UnknownName/Duplicate/Mixed/Output
    std::string message;      // for the diagnostic; names the function and the argument types
};

// Binds T to the common type of the generic arguments (widening only; untyped literals adopt
// it, or `expected` when every generic argument is a literal), then checks every argument
// against its parameter. The first overload that accepts the arguments wins.
[[nodiscard]] StdOutcome resolveStandardCall(TypeTable& types, const StdFunction& fn, const std::vector<StdArg>& args,
                                             const Type* expected);

} // namespace takt::compiler::sema
