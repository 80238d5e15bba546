#pragma once
// Checking of POU bodies and initialisers (checkBodies): name resolution inside bodies,
// expression typing, calls, statements, assignability. One BodyChecker walks the whole
// project; `pc_` describes the POU being checked.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sema/context.h"
#include "takt/compiler/ast.h"

namespace takt::compiler::sema {

struct StdArg;
struct StdFunction;
struct StdOutcome;

// Semantic analysis annotates the tree in place (Expr::type, NameExpr::symbol). The symbols
// hold const pointers into the units, which Context::units owns non-const, so writing through
// them is well-defined.
template <typename T> T& mut(const T& node) {
    return const_cast<T&>(node);
}

// (e) -> e: the parser keeps parentheses for spans and formatting.
[[nodiscard]] const ast::Expr* stripParen(const ast::Expr* e);
// THIS / SUPER, also written THIS^ / SUPER^ (CODESYS): the instance itself.
[[nodiscard]] bool isSelfExpr(const ast::Expr* e);
// The type with aliases and subranges removed (the type operators see).
[[nodiscard]] const Type* baseType(const Type* t);

class BodyChecker {
public:
    explicit BodyChecker(Context& cx);

    void checkPou(const Symbol& pou);
    // A VAR_GLOBAL initialiser, in the scope of its configuration (or the global scope).
    void checkGlobalInit(const Symbol& var);
    // The arguments of `PROGRAM p WITH t : Main (in1 := %IX0.0, out1 => %QX0.0)`, in the scope of
    // the resource: inputs convert to the parameter type, outputs go to writable variables.
    void checkProgramArguments(const Symbol& instance);
    // TYPE … := init and STRUCT field initialisers, everywhere in the project.
    void checkTypeInits();
    // After every body: E0115 for call cycles, W0001 for locals nobody reads or writes.
    void reportRecursion();
    void reportUnused();

private:
    struct PouContext {
        const Symbol* pou = nullptr; // the POU or METHOD being checked (null for globals/types)
        const Symbol* fb = nullptr;  // the FUNCTION_BLOCK whose members are in scope (THIS/SUPER)
        const Scope* scope = nullptr;
        bool resultAssigned = false;
        int loopDepth = 0;
        std::vector<const Symbol*> forVariables;
        std::optional<std::uint32_t> initIndex; // checking the initialiser of the variable with this declIndex
        std::map<std::string, Span> labels;     // upper-case name -> where it is declared
        std::vector<const ast::LabelStmt*> jumps;
        bool inBody = false; // statements, not initialisers: PROPERTY reads are rewritten only here
    };

    // What a target expression denotes (analyzeTarget).
    struct Target {
        bool isVariable = false;
        bool isResult = false;                   // the FUNCTION/METHOD result variable
        const Symbol* root = nullptr;            // the variable at the start of the access path
        bool directName = false;                 // the target is the bare name of `root`
        const Symbol* outsideOutput = nullptr;   // an FB output written from outside the FB
        const Symbol* outsideInternal = nullptr; // an FB's VAR/VAR_IN_OUT named from outside the FB
    };

    // ---- names (body_names.cpp) ----
    void buildEnumIndex();
    void indexEnum(const Type* t);
    // Resolution without diagnostics: locals, POU members, base FBs, then lookup().
    // With `where`, a name two USING namespaces both declare is reported there (E0116).
    [[nodiscard]] Symbol* findName(std::string_view name, const Span* where = nullptr) const;
    [[nodiscard]] const Symbol* findMember(const Symbol* owner, std::string_view name) const;
    const Symbol* enumValueSymbol(const EnumType* type, std::size_t index);
    [[nodiscard]] bool isResultName(std::string_view name) const;
    [[nodiscard]] const Scope* namespaceOf(const ast::Expr& e) const;
    // Color.Red: the enumeration type when `e` names an enumeration value through its type's name.
    std::optional<const Type*> qualifiedEnumValue(ast::MemberExpr& e);
    const Type* checkName(ast::NameExpr& e, const Type* expected);
    const Type* checkEnumLiteral(ast::EnumLiteralExpr& e);
    const Type* actionControlOutput(ast::MemberExpr& e);
    const Type* checkMember(ast::MemberExpr& e);
    const Type* symbolValueType(const Symbol* sym, const ast::Expr& e, std::string_view name);

    // ---- expressions (body_expr.cpp) ----
    const Type* checkExpr(ast::Expr& e, const Type* expected = nullptr);
    const Type* checkExprInner(ast::Expr& e, const Type* expected);
    const Type* checkLiteral(ast::LiteralExpr& e);
    const Type* checkUnary(ast::UnaryExpr& e, const Type* expected);
    const Type* checkBinary(ast::BinaryExpr& e, const Type* expected);
    const Type* checkIndex(ast::IndexExpr& e);
    const Type* checkBitAccess(ast::BitAccessExpr& e);
    const Type* arithmeticType(ast::BinaryOp op, const Type* a, const Type* b);
    const Type* powerType(const Type* a, const Type* b, const Type* expected);
    bool checkBoolLiteral(const ast::Expr& e, const Type* target);
    const Type* boolLiteralOperand(const ast::BinaryExpr& e, const Type* a, const Type* b);
    const Type* comparisonType(ast::BinaryOp op, const Type* a, const Type* b, const ast::BinaryExpr& e);
    // ---- dialect leniencies (body_dialect.cpp) ----
    // The operand type of a binary operator the standard rules reject but CODESYS accepts
    // (W1004 bit-string arithmetic, W1005 bitwise on integers, W1006 integer mixed with a bit
    // string), reported through Context::lenient; null when no leniency applies.
    const Type* lenientOperands(ast::BinaryExpr& e, const Type* a, const Type* b);
    // NOT on an integer (W1005); false when `t` is not an integer.
    bool lenientNot(ast::UnaryExpr& e, const Type* t);
    // A BYTE/WORD/DWORD/LWORD array index or CASE selector (W1007); false for other types.
    bool lenientWordSelector(const ast::Expr& e, const Type* t, const char* what);
    // Partial bit access `i.3` on an integer (W1008); the caller checks the bit number.
    bool lenientIntegerBits(const ast::BitAccessExpr& e, const Type* t);
    // An implicit conversion between numbers and bit strings that may lose range or precision
    // (W1010), computed as the explicit `conversion` computes it; false for other types.
    bool lenientNarrowing(const ast::Expr& e, const Type* from, const Type* to, const std::string& conversion);
    // The source type of a typed conversion (INT for INT_TO_BYTE) that `arg`, a number or bit
    // string of another type, narrows to implicitly (W1010); null otherwise.
    [[nodiscard]] const Type* lenientConversionSource(const StdFunction& f, const Type* arg) const;
    // SHL/SHR/ROL/ROR on a signed integer (W1012): resolved in the integer's own type (SHR then
    // shifts arithmetically); leaves `out` alone when the call is something else.
    void lenientSignedShift(ast::CallExpr& e, const StdFunction& f, std::vector<StdArg>& args, const Type* expected,
                            StdOutcome& out);
    // SQRT, LN, LOG, EXP, SIN, COS, TAN, ASIN, ACOS, ATAN on an integer (W1016): resolved in
    // REAL, or LREAL when the context expects LREAL or the integer does not fit REAL exactly
    // (DINT, UDINT, LINT, ULINT); leaves `out` alone when the call is something else.
    void lenientRealArgument(ast::CallExpr& e, const StdFunction& f, std::vector<StdArg>& args, const Type* expected,
                             StdOutcome& out);
    // CODESYS's name of a standard FB input (CTU `RESET` for `R`, W1009): the IEC parameter,
    // with `name` rewritten to it (code generation matches arguments by name); else null.
    const Symbol* codesysParameter(const Symbol& fb, ast::Identifier& name);
    // Whether `sym` is a variable of the POU being checked (or, in a METHOD or ACTION, of its FB):
    // what Siemens SCL's `#name` may name.
    [[nodiscard]] bool ownVariable(const Symbol* sym) const;
    // Implicit conversion of an already typed expression to `target` (E0201, E0202, E0504,
    // E0210, W0011).
    void convert(ast::Expr& e, const Type* target);
    bool checkConstantRange(const ast::Expr& e, const Type* target);
    Target analyzeTarget(const ast::Expr& e) const;
    // Checks that a typed expression may be written (E0403, E0401, E0413, E0410, W1001, W1003);
    // false after reporting.
    bool checkWritable(const ast::Expr& e);
    // An action's control output (`a.Q`, `a.A`) where a variable to write is needed: E0403 with
    // `how` (":=", "REF()", …), true when reported.
    bool reportActionFlagWrite(const ast::Expr& e, std::string_view how);

    // ---- calls (body_calls.cpp) ----
    const Type* checkCall(ast::CallExpr& e, const Type* expected, bool statement);
    const Type* checkPouCall(ast::CallExpr& e, const Symbol& callee, const std::string& calleeName);
    const Type* checkStandardCall(ast::CallExpr& e, const Symbol& fn, const Type* expected);
    void checkInOutArgument(ast::Expr& value, const Symbol& param, const std::string& calleeName);
    void checkOutputArgument(ast::Expr* value, const Symbol& param);
    // ---- EN / ENO (body_enable.cpp) ----
    // Moves `EN := c` and an `ENO => v` that `pou` (null: a standard function) does not declare
    // out of e.args into e.enable / e.enableOut, checking them (E0201, E0304, E0307, E0309).
    void takeEnableArguments(ast::CallExpr& e, const Symbol* pou, const std::string& calleeName);
    // E0312: a call with EN or ENO that is neither a statement nor the whole value of an assignment.
    void checkEnablePlacement(const ast::CallExpr& e, bool statement);
    void typeArguments(ast::CallExpr& e);
    // ---- CODESYS pointers and references (body_pointers.cpp) ----
    // ADR / SIZEOF / __ISVALIDREF when no POU of that name is in scope; nullopt otherwise.
    std::optional<const Type*> checkBuiltinCall(ast::CallExpr& e);
    const Type* pointerOperands(ast::BinaryExpr& e, const Type* a, const Type* b);
    bool pointerConversion(ast::Expr& e, const Type* target);
    void checkBindReference(ast::AssignStmt& a);
    void checkReferenceBinding(ast::Expr& value, const Type* reference); // `value` is typed already
    // W0014: `target := REF(t)`, `ADR(t)` or `target REF= t` where t is a temporary and the
    // target outlives the call (a variable of an instance or a global, or a FUNCTION's result).
    // `value` is the assigned value, or with `binding` the variable REF= binds to.
    void warnTemporaryAddressKept(const ast::Expr& target, const ast::Expr& value, bool binding);
    // Set just before checking an expression that names a REFERENCE TO itself (the left side of
    // REF=, the operand of __ISVALIDREF); everywhere else a REFERENCE denotes what it is bound to.
    bool keepReference_ = false;
    [[nodiscard]] bool inTestPou() const;
    // ASSERT_* on STRUCT/ARRAY operands (body_assert.cpp): E0711 for the ordering assertions,
    // E0712 for ASSERT_EQUAL/NOT_EQUAL on two types or on values without equality; false after
    // reporting.
    bool checkAssertOperands(const ast::CallExpr& e, const StdFunction& f, const std::vector<StdArg>& args);

    // ---- PROPERTY accessors and member access (body_oop.cpp) ----
    // The GET or SET METHOD `e` (a name or member) resolved to when it names a PROPERTY, else
    // null; a NameExpr naming the getter being checked is its result variable, not a property.
    [[nodiscard]] const Symbol* propertyOf(const ast::Expr& e) const;
    // The property's type (the getter's result or the setter's VAR_INPUT); E0801 outside a body
    // (an initialiser cannot call GET).
    const Type* propertyType(const Symbol& accessor, const ast::Expr& e);
    // A SET-only property is found under its setter's name.
    [[nodiscard]] const Symbol* findSetter(const Symbol* owner, std::string_view name) const;
    // The accessor `which` of the property `accessor` belongs to, seen from the instance `e`
    // denotes (bases included); null when the property has none.
    [[nodiscard]] const Symbol* accessorFor(const ast::Expr& e, const Symbol& accessor, ast::Accessor which) const;
    // E0727 when a PRIVATE or PROTECTED METHOD/PROPERTY is used where it is not visible.
    void checkMemberAccess(const Symbol& member, Span where);
    // Hook at the start of every call of a POU: CLASS instances (E0726), access, properties.
    void checkOopCall(const ast::CallExpr& e, const Symbol& callee);
    // E0722 for a property without SET; true when the assignment may go through the setter.
    bool checkPropertyWrite(const ast::Expr& target, const Symbol& accessor);
    // E0724 when `e` is a property where an address is needed (`what`: "REF()", …); false
    // otherwise (the caller reports its own error).
    bool reportPropertyAddress(const ast::Expr& e, const std::string& what);
    // After a body is checked: property reads become getter calls and assignments to a
    // property setter calls (E0723 for reads of a SET-only property), so code generation sees
    // plain METHOD calls.
    void lowerProperties(ast::StmtList& list);
    void lowerPropertyStmt(ast::StmtPtr& s);
    void lowerPropertyExpr(ast::ExprPtr& e);

    // ---- statements (body_stmt.cpp) ----
    void checkStmts(ast::StmtList& list);
    void checkStmt(ast::Stmt& s);
    void checkCondition(ast::Expr& e, const char* what);
    void checkCase(ast::CaseStmt& s);
    void checkFor(ast::ForStmt& s);

    // ---- initialisers (body_init.cpp) ----
    void markTypeUses(const ast::TypeSpec* spec);
    void markExprUses(const ast::Expr* e);
    void checkInit(ast::Expr& init, const Type* target);
    std::uint64_t checkArrayInit(ast::ArrayInitExpr& init, const Type* element, std::size_t dimsLeft);
    void checkStructInit(ast::StructInitExpr& init, const Type* target);

    // ---- utilities ----
    // Records that a body names `s` at `at` (W0001 and SemanticModel::foreignLocalUses).
    void markUsed(const Symbol* s, Span at);
    [[nodiscard]] std::string text(const Span& span) const;
    [[nodiscard]] std::string typeName(const Type* t) const { return t == nullptr ? "?" : t->name(); }
    [[nodiscard]] const Type* errorType() const { return cx_.model.types.get(TypeKind::Error); }
    [[nodiscard]] static bool isError(const Type* t) {
        return t == nullptr || stripAlias(t) == nullptr || stripAlias(t)->kind() == TypeKind::Error;
    }

    struct CallEdge {
        const Symbol* caller;
        const Symbol* callee;
        Span span;
    };

    Context& cx_;
    PouContext pc_;
    std::vector<CallEdge> calls_;  // FUNCTION/METHOD/PROGRAM calls, for recursion
    std::set<const Symbol*> used_; // variables some body or initialiser names
    // The value of the assignment being checked: `x := f(EN := c)` may skip its call.
    const ast::Expr* assignedValue_ = nullptr;
    // Upper-cased enum value name -> every enumeration that declares it (bare values, E0106).
    std::unordered_map<std::string, std::vector<std::pair<const EnumType*, std::size_t>>> enumValues_;
    std::map<std::pair<const EnumType*, std::size_t>, const Symbol*> enumSymbols_;
};

} // namespace takt::compiler::sema
