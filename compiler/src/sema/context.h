#pragma once
// Private interface between the phases of semantic analysis.
//   analyze()  (analyze.cpp)        : builds the model, then runs the phases in order
//   declare    (declare*.cpp)       : collect declarations of all files into scopes, resolve types,
//                                     evaluate constants, FB/interface relations, globals/externals,
//                                     configuration, VAR_CONFIG/VAR_ACCESS, direct addresses
//   checkBodies(body_*.cpp)         : initialisers, every POU body: expressions, calls, statements
//   stdlib     (stdlib*.cpp)        : standard functions (signature table) and standard FBs (ST prelude)
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "takt/compiler/diagnostics.h"
#include "takt/compiler/sema.h"
#include "takt/compiler/sema/model.h"

namespace takt::compiler::sema {

struct DeclState; // declare.h: state of the declaration phase

struct Context {
    SemanticModel& model;
    DiagnosticSink& diags;
    const SourceManager& sources;
    const AnalysisOptions& options;
    std::vector<ast::CompilationUnit>& units;

    // Constants being evaluated (cycle guard for `A : INT := B; B : INT := A`).
    std::vector<const Symbol*> evaluating = {};
    // Declaration-phase state; null once declare() has returned.
    DeclState* decl = nullptr;

    Diagnostic* error(DiagCode code, Span span, std::string message) {
        return diags.report(code, span, std::move(message));
    }
    // A construct IEC 61131-3 forbids but CODESYS accepts (a W1xxx code): a warning by default,
    // an error under [build] dialect = "iec". The caller goes on compiling it either way.
    Diagnostic* lenient(DiagCode code, Span span, std::string message) {
        return diags.report(code, options.dialect == Dialect::Iec ? Severity::Error : Severity::Warning, span,
                            std::move(message));
    }
    [[nodiscard]] bool iec() const { return options.dialect == Dialect::Iec; }
};

// ---- constants (declare side) -----------------------------------------------------------------
struct ConstValue {
    enum class Kind : std::uint8_t { Int, Real, Bool, Time, String, Enum } kind = Kind::Int;
    std::int64_t i = 0; // Int (also ULINT values above INT64_MAX stored as bit pattern with isUnsigned), Bool, Time
                        // nanos, Enum value
    bool isUnsigned = false;
    double r = 0.0;
    std::string s;
    const Type* type = nullptr; // the value's type (IntLiteral/RealLiteral for untyped literals)
};

// Evaluates a constant expression (literals, CONSTANT variables, enum values, arithmetic, bit
// and comparison operators, *_TO_* conversions, ABS/MIN/MAX on constants). With `report`,
// a non-constant expression is E0501 and division by zero E0502.
std::optional<ConstValue> evaluateConstant(Context& cx, const ast::Expr& expr, const Scope* scope, bool report);

// Converts a constant to `type` with the rules of the *_TO_* functions (integers wrap to the
// target width, REAL -> integer rounds half to even); null when no conversion exists.
std::optional<ConstValue> convertConstant(Context& cx, const ConstValue& value, const Type* type);
// A constant's integer value (Int, Bool, Enum and Time kinds), as a 64-bit two's-complement pattern.
std::optional<std::int64_t> constantAsInt(const ConstValue& value);

// ---- declarations (declare side) --------------------------------------------------------------
// Collects every declaration of cx.units and the standard library into the model's scopes,
// resolves types, checks OO relations, globals/externals, configuration and direct addresses.
void declare(Context& cx);

// Resolves a type specification in a scope (sets spec.resolved); unknown names report E0102.
const Type* resolveType(Context& cx, ast::TypeSpec& spec, Scope* scope);

// Looks a (case-insensitive) name up: scope chain, USING namespaces, then the global scope.
// For a type name, `typeName` lets the search pass over variables: ST names are case-insensitive,
// so `color : Color` and `Color#Red` next to it must still find the type.
// With `where`, a name that two USING namespaces of one scope both declare is reported there
// (E0116); the first USING's is returned either way, so checking goes on.
Symbol* lookup(const Context& cx, const Scope* scope, std::string_view name, bool typeName = false,
               const Span* where = nullptr);

// ---- standard library (stdlib side) -----------------------------------------------------------
// ST source declaring the interfaces of the standard FBs (TON, TOF, TP, LTON…, R_TRIG, F_TRIG,
// CTU/CTD/CTUD and typed variants, SR, RS, RTC), whose bodies the VM provides natively, and
// OpenPLC's library blocks (PID, RAMP…) with ST bodies. Parsed as an extra unit named "<stdlib>".
std::string_view standardFbSource(VendorProfile vendor);
// A block of a vendor's library rather than of IEC 61131-3 (OpenPLC's PID, RAMP, INTEGRAL,
// DERIVATIVE, HYSTERESIS, SEMA; GX Works3's DIFU, DIFD): a project's own declaration of that
// name replaces it without W1011, as a CODESYS project's own POU hides a library's.
[[nodiscard]] bool isVendorLibraryFb(std::string_view name);
// The IEC name of a standard FB input that CODESYS spells differently (CTU "RESET" -> "R",
// SR "SET1" -> "S1"…); empty when `name` is no such CODESYS name of FB `fb`.
std::string_view iecParameterName(std::string_view fb, std::string_view name);
// Declares a StandardFunction symbol for every standard function into the global scope.
void declareStandardFunctions(Context& cx);

// ---- bodies (checkBodies side) ----------------------------------------------------------------
// Types every expression, checks calls, statements, assignability and initialisers.
void checkBodies(Context& cx);

// ---- tasks (task_data.cpp) --------------------------------------------------------------------
// Fills SemanticModel::taskData from the checked bodies and reports W0016 for a variable that
// two tasks share, one writing it, and that is not shared atomically (task_data.h).
void analyzeTaskData(Context& cx);

} // namespace takt::compiler::sema
