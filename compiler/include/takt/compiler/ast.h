#pragma once
// The ST syntax tree. Every node has a Span. Nodes are owned through std::unique_ptr by their
// parent; a CompilationUnit owns one file's tree. Names keep the author's spelling; compare
// them case-insensitively (names.h). Semantic analysis annotates expressions in place
// (`type`, `symbol`) so later phases need no side tables.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "takt/compiler/source.h"

namespace takt::compiler {

class Type;    // sema/types.h
struct Symbol; // sema/symbols.h

namespace ast {

struct Identifier {
    std::string name; // as written
    Span span;
};

// `A.B.C` in a type, EXTENDS, IMPLEMENTS, USING or NAMESPACE position.
struct QualifiedName {
    std::vector<Identifier> parts;
    Span span;
    [[nodiscard]] std::string text() const; // "A.B.C"
};

struct Expr;
struct Stmt;
struct TypeSpec;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using TypeSpecPtr = std::unique_ptr<TypeSpec>;
using StmtList = std::vector<StmtPtr>;

// ---------------------------------------------------------------------------------------------
// Type specifications (in declarations and TYPE blocks)

enum class TypeSpecKind : std::uint8_t { Named, String, Array, Ref, Subrange, Enum, Struct };

struct TypeSpec {
    explicit TypeSpec(TypeSpecKind k, Span s) : kind(k), span(s) {}
    virtual ~TypeSpec() = default;
    TypeSpec(const TypeSpec&) = delete;
    TypeSpec& operator=(const TypeSpec&) = delete;

    TypeSpecKind kind;
    Span span;
    const Type* resolved = nullptr; // set by semantic analysis
};

// INT, MyStruct, TON, Lib.MyType
struct NamedTypeSpec final : TypeSpec {
    explicit NamedTypeSpec(Span s) : TypeSpec(TypeSpecKind::Named, s) {}
    QualifiedName name;
};

// STRING, STRING[20], STRING(20), WSTRING[n]
struct StringTypeSpec final : TypeSpec {
    explicit StringTypeSpec(Span s) : TypeSpec(TypeSpecKind::String, s) {}
    bool wide = false;
    ExprPtr length; // null: default length (80)
};

struct Range {
    ExprPtr lower;
    ExprPtr upper;
    Span span;
};

// ARRAY [1..10, 0..3] OF INT; `ARRAY [*] OF T` (VAR_IN_OUT) has star = true and no ranges
struct ArrayTypeSpec final : TypeSpec {
    explicit ArrayTypeSpec(Span s) : TypeSpec(TypeSpecKind::Array, s) {}
    std::vector<Range> dimensions;
    bool star = false;
    TypeSpecPtr element;
};

// How a reference type is spelled; each spelling has its own rules (sema/types.h RefFlavor).
enum class RefSpelling : std::uint8_t { RefTo, PointerTo, ReferenceTo };

// REF_TO T, POINTER TO T, REFERENCE TO T
struct RefTypeSpec final : TypeSpec {
    explicit RefTypeSpec(Span s) : TypeSpec(TypeSpecKind::Ref, s) {}
    RefSpelling spelling = RefSpelling::RefTo;
    TypeSpecPtr target;
};

// INT (0..100)
struct SubrangeTypeSpec final : TypeSpec {
    explicit SubrangeTypeSpec(Span s) : TypeSpec(TypeSpecKind::Subrange, s) {}
    TypeSpecPtr base;
    Range range;
};

struct EnumValueDecl {
    Identifier name;
    ExprPtr value; // explicit value or null
};

// (Idle, Run := 5, Stop)  or  INT (Idle, Run)  (explicit base type)
struct EnumTypeSpec final : TypeSpec {
    explicit EnumTypeSpec(Span s) : TypeSpec(TypeSpecKind::Enum, s) {}
    TypeSpecPtr base; // null: default (INT)
    std::vector<EnumValueDecl> values;
};

struct VarDecl;
// STRUCT … END_STRUCT (optionally STRUCT EXTENDS Base), or UNION … END_UNION
struct StructTypeSpec final : TypeSpec {
    // Out of line: VarDecl is incomplete here, and clang instantiates the member's destructor
    // in an inline constructor.
    explicit StructTypeSpec(Span s);
    ~StructTypeSpec() override;
    std::optional<QualifiedName> extends;
    std::vector<VarDecl> fields;
    bool isUnion = false;
};

// ---------------------------------------------------------------------------------------------
// Expressions

enum class ExprKind : std::uint8_t {
    Literal,
    EnumLiteral,   // Mode#Run
    Name,          // x
    Member,        // a.b
    BitAccess,     // w.3, w.%X3
    Index,         // a[i, j]
    Deref,         // r^
    Call,          // f(x, y := 1, q => v)
    Unary,         // -x, NOT x, +x
    Binary,        // a + b
    Ref,           // REF(x)
    This,          // THIS
    Super,         // SUPER
    DirectAddress, // %IX0.1 used as a value
    ArrayInit,     // [1, 2, 3(0)]   (initialisers only)
    StructInit,    // (x := 1, y := 2) (initialisers only)
    Paren,         // (e): kept so spans and the formatter see the author's grouping
    Error,         // placeholder after a syntax error
};

// Members are ordered so that `kind` ends the node and a derived node's one-byte fields (an
// operator, a literal's kind) fill the padding after it: a syntax tree holds several nodes per
// line of source, and every byte of a node counts (docs/performance.md, memory).
struct Expr {
    explicit Expr(ExprKind k, Span s) : span(s), kind(k) {}
    virtual ~Expr() = default;
    Expr(const Expr&) = delete;
    Expr& operator=(const Expr&) = delete;

    const Type* type = nullptr; // set by semantic analysis
    Span span;
    ExprKind kind;
};

enum class LiteralKind : std::uint8_t { Bool, Int, Real, String, WString, Time, Date, Tod, Dt, Null };

struct LiteralExpr final : Expr {
    explicit LiteralExpr(Span s) : Expr(ExprKind::Literal, s) {}
    LiteralKind literalKind = LiteralKind::Int;
    // Decoded value (literals.h). Integers: magnitude + sign so the whole ULINT and LINT ranges
    // fit; times/dates: nanoseconds (TIME, TOD from midnight; DATE, DT from 1970-01-01).
    bool boolValue = false;
    bool negative = false;
    // INT#5 -> "INT"; T#… keeps its prefix here too ("T", "LTIME"); null: none. Out of line,
    // as most literals have none: inline it would make every literal 56 bytes larger.
    std::unique_ptr<Identifier> typePrefix;
    std::uint64_t intValue = 0;
    double realValue = 0.0;
    std::int64_t nanos = 0;
    std::string stringValue; // escapes resolved; WSTRING as UTF-8
};

struct EnumLiteralExpr final : Expr {
    explicit EnumLiteralExpr(Span s) : Expr(ExprKind::EnumLiteral, s) {}
    Identifier typeName;
    Identifier value;
};

struct NameExpr final : Expr {
    explicit NameExpr(Span s) : Expr(ExprKind::Name, s) {}
    Identifier name;
    // Set by semantic analysis: the variable, enum value, POU or namespace named; inside a
    // FUNCTION/METHOD its own name denotes the result variable and `symbol` is the POU itself.
    const Symbol* symbol = nullptr;
};

struct MemberExpr final : Expr {
    explicit MemberExpr(Span s) : Expr(ExprKind::Member, s) {}
    ExprPtr object;
    Identifier member;
    const Symbol* symbol = nullptr;
};

struct BitAccessExpr final : Expr {
    explicit BitAccessExpr(Span s) : Expr(ExprKind::BitAccess, s) {}
    ExprPtr object;
    std::uint32_t bit = 0;
    bool percentForm = false; // written as .%X3
};

struct IndexExpr final : Expr {
    explicit IndexExpr(Span s) : Expr(ExprKind::Index, s) {}
    ExprPtr array;
    std::vector<ExprPtr> indices;
};

struct DerefExpr final : Expr {
    explicit DerefExpr(Span s) : Expr(ExprKind::Deref, s) {}
    ExprPtr reference;
};

struct Argument {
    std::optional<Identifier> name; // formal: x := e / q => v; positional: empty
    bool output = false;            // '=>'
    bool negated = false;           // NOT q => v
    ExprPtr value;                  // may be null for an unconnected formal output `q =>`
    Span span;
};

struct CallExpr final : Expr {
    explicit CallExpr(Span s) : Expr(ExprKind::Call, s) {}
    ExprPtr callee;
    std::vector<Argument> args;
    const Symbol* target = nullptr; // resolved POU/method/standard function
    // Standard functions: the chosen overload (index into the signature table, -1 otherwise)
    // and the type bound to its generic parameter T (null when the signature has none).
    std::int32_t stdOverload = -1;
    const Type* genericType = nullptr;
    // Standard functions: per argument (in source order), the parameter it binds (formal
    // arguments may come in any order; IN3, IN4 … of an extensible function count on).
    std::vector<std::uint32_t> stdSlots;
    // EN / ENO (IEC 61131-3 2.5.1.2): sema moves `EN := c` and an `ENO => v` the callee does
    // not declare out of `args`, so the call itself stays as cheap as one without them. The
    // call runs only when `enable` is TRUE; `enableOut` (null: none, or `ENO =>` unconnected)
    // then becomes TRUE, and FALSE when the call is skipped.
    ExprPtr enable;
    ExprPtr enableOut;
    const Symbol* enableParam = nullptr;    // the callee's own EN input: TRUE when the call runs
    const Symbol* enableOutParam = nullptr; // the callee's own ENO output: FALSE when skipped
    // CODESYS operators written as calls (ADR, SIZEOF, __ISVALIDREF), when no user POU of that
    // name is in scope. SIZEOF keeps the measured type in genericType.
    enum class Builtin : std::uint8_t { None, Adr, SizeOf, IsValidRef } builtin = Builtin::None;
};

enum class UnaryOp : std::uint8_t { Neg, Plus, Not };
// AndThen / OrElse evaluate their right operand only when the left one does not decide.
enum class BinaryOp : std::uint8_t {
    Or,
    Xor,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    AndThen,
    OrElse
};
// The operator as ST writes it: "+", "MOD", "AND_THEN".
[[nodiscard]] const char* binaryOpText(BinaryOp op);

struct UnaryExpr final : Expr {
    explicit UnaryExpr(Span s) : Expr(ExprKind::Unary, s) {}
    UnaryOp op = UnaryOp::Neg;
    ExprPtr operand;
};

struct BinaryExpr final : Expr {
    explicit BinaryExpr(Span s) : Expr(ExprKind::Binary, s) {}
    BinaryOp op = BinaryOp::Add;
    ExprPtr lhs;
    ExprPtr rhs;
};

struct RefExpr final : Expr {
    explicit RefExpr(Span s) : Expr(ExprKind::Ref, s) {}
    ExprPtr operand;
};

struct ThisExpr final : Expr {
    explicit ThisExpr(Span s) : Expr(ExprKind::This, s) {}
};

struct SuperExpr final : Expr {
    explicit SuperExpr(Span s) : Expr(ExprKind::Super, s) {}
};

// A parsed direct address. %IX1.2: area I, size X, indices {1, 2}. %I* / %QX*: wildcard.
enum class AddressArea : std::uint8_t { Input, Output, Memory };
enum class AddressSize : std::uint8_t { Bit, Byte, Word, DWord, LWord, None };

struct Address {
    AddressArea area = AddressArea::Input;
    AddressSize size = AddressSize::None; // None: no size letter (%I0.0 means bit; %I* wildcard)
    bool wildcard = false;
    std::vector<std::uint32_t> indices; // "1.2" -> {1, 2}
    Span span;
    [[nodiscard]] std::string text() const; // canonical "%IX1.2"
};

struct DirectAddressExpr final : Expr {
    explicit DirectAddressExpr(Span s) : Expr(ExprKind::DirectAddress, s) {}
    Address address;
};

struct ArrayInitElement {
    ExprPtr repeat; // 3(0): repeat = 3; null when not repeated
    ExprPtr value;  // null for `3()` (repeat default value)
    Span span;
};

struct ArrayInitExpr final : Expr {
    explicit ArrayInitExpr(Span s) : Expr(ExprKind::ArrayInit, s) {}
    std::vector<ArrayInitElement> elements;
};

struct FieldInit {
    Identifier field;
    ExprPtr value;
};

struct StructInitExpr final : Expr {
    explicit StructInitExpr(Span s) : Expr(ExprKind::StructInit, s) {}
    std::vector<FieldInit> fields;
};

struct ParenExpr final : Expr {
    explicit ParenExpr(Span s) : Expr(ExprKind::Paren, s) {}
    ExprPtr inner;
};

struct ErrorExpr final : Expr {
    explicit ErrorExpr(Span s) : Expr(ExprKind::Error, s) {}
};

// ---------------------------------------------------------------------------------------------
// Statements

// Label / Jump: `name:` and `JMP name;` (CODESYS; a jump stays inside its POU's body).
enum class StmtKind : std::uint8_t {
    Assign,
    Expr,
    If,
    Case,
    For,
    While,
    Repeat,
    Exit,
    Continue,
    Return,
    Empty,
    Label,
    Jump
};

// `kind` last for the same reason as in Expr.
struct Stmt {
    explicit Stmt(StmtKind k, Span s) : span(s), kind(k) {}
    virtual ~Stmt() = default;
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;

    Span span;
    StmtKind kind;
};

struct AssignStmt final : Stmt {
    explicit AssignStmt(Span s) : Stmt(StmtKind::Assign, s) {}
    bool bindReference = false; // `r REF= x`: r (a REFERENCE TO) now denotes x
    ExprPtr target;
    ExprPtr value;
};

// A call statement (`fb(IN := x);`, `f(1);`). Other expressions here are an error (E0412).
struct ExprStmt final : Stmt {
    explicit ExprStmt(Span s) : Stmt(StmtKind::Expr, s) {}
    ExprPtr expr;
};

struct CondBlock {
    ExprPtr condition;
    StmtList body;
    Span span;
};

struct IfStmt final : Stmt {
    explicit IfStmt(Span s) : Stmt(StmtKind::If, s) {}
    std::vector<CondBlock> branches; // IF, then each ELSIF
    bool hasElse = false;
    StmtList elseBody;
};

struct CaseLabel {
    ExprPtr lower;
    ExprPtr upper; // non-null for a range lower..upper
    Span span;
};

struct CaseBranch {
    std::vector<CaseLabel> labels;
    StmtList body;
    Span span;
};

struct CaseStmt final : Stmt {
    explicit CaseStmt(Span s) : Stmt(StmtKind::Case, s) {}
    ExprPtr selector;
    std::vector<CaseBranch> branches;
    bool hasElse = false;
    StmtList elseBody;
};

struct ForStmt final : Stmt {
    explicit ForStmt(Span s) : Stmt(StmtKind::For, s) {}
    ExprPtr variable; // a NameExpr in valid programs
    ExprPtr from;
    ExprPtr to;
    ExprPtr step; // null: BY 1
    StmtList body;
};

struct WhileStmt final : Stmt {
    explicit WhileStmt(Span s) : Stmt(StmtKind::While, s) {}
    ExprPtr condition;
    StmtList body;
};

struct RepeatStmt final : Stmt {
    explicit RepeatStmt(Span s) : Stmt(StmtKind::Repeat, s) {}
    StmtList body;
    ExprPtr condition;
};

struct SimpleStmt final : Stmt { // EXIT, CONTINUE, RETURN, and the empty statement ';'
    explicit SimpleStmt(StmtKind k, Span s) : Stmt(k, s) {}
};

struct LabelStmt final : Stmt { // a jump target `name:` (Label) or `JMP name;` (Jump)
    explicit LabelStmt(StmtKind k, Span s) : Stmt(k, s) {}
    Identifier name;
};

// ---------------------------------------------------------------------------------------------
// Declarations

// Static (VAR_STAT, CODESYS): one variable shared by every call and instance of its POU, kept
// like a global but named only inside the POU.
enum class VarSection : std::uint8_t { Var, Temp, Input, Output, InOut, Global, External, Access, Config, Static };
// The keyword that opens a section: "VAR_INPUT", "VAR_GLOBAL"…
[[nodiscard]] const char* sectionKeyword(VarSection s);

// R_EDGE / F_EDGE after a BOOL VAR_INPUT's type: inside the FB the input reads TRUE only in the
// call that sees its rising (falling) edge.
enum class InputEdge : std::uint8_t { None, Rising, Falling };

struct VarDecl {
    std::vector<Identifier> names;  // a, b, c : INT;
    std::optional<Address> address; // AT %IX0.0
    TypeSpecPtr type;
    ExprPtr init; // null: default initial value
    InputEdge edge = InputEdge::None;
    Span edgeSpan;
    Span span;
};

// VAR_ACCESS:  name : path : type READ_WRITE|READ_ONLY;
struct AccessDecl {
    Identifier name;
    ExprPtr path;                   // resource.program.var chain (Name/Member/Index)
    std::optional<Address> address; // VAR_ACCESS may also name a direct address
    TypeSpecPtr type;
    bool readOnly = true; // READ_ONLY unless READ_WRITE (IEC default)
    Span span;
};

// VAR_CONFIG:  path AT %IX1.0 : BOOL := init;
struct ConfigDecl {
    ExprPtr path;
    std::optional<Address> address;
    TypeSpecPtr type;
    ExprPtr init;
    Span span;
};

struct VarBlock {
    VarSection section = VarSection::Var;
    bool constant = false;
    bool retain = false;     // RETAIN or PERSISTENT
    bool persistent = false; // written PERSISTENT (= RETAIN in takt)
    bool nonRetain = false;
    std::vector<VarDecl> vars;      // all sections except Access/Config
    std::vector<AccessDecl> access; // VAR_ACCESS
    std::vector<ConfigDecl> config; // VAR_CONFIG
    Span span;
};

enum class DeclKind : std::uint8_t { Pou, Interface, Type, GlobalVars, Configuration, Namespace, Using };

struct Decl {
    explicit Decl(DeclKind k, Span s) : kind(k), span(s) {}
    virtual ~Decl() = default;
    Decl(const Decl&) = delete;
    Decl& operator=(const Decl&) = delete;

    DeclKind kind;
    Span span;
};
using DeclPtr = std::unique_ptr<Decl>;

enum class PouKind : std::uint8_t { Program, Function, FunctionBlock, Method, TestProgram, TestFunctionBlock };
// The keyword that opens a POU: "PROGRAM", "FUNCTION_BLOCK"…
[[nodiscard]] const char* pouKeyword(PouKind k);
enum class Access : std::uint8_t { Default, Public, Private, Protected, Internal };
// A PROPERTY's GET and SET are compiled as METHODs of its POU: the getter is named like the
// property (its name is the result, as in any METHOD), the setter's symbol adds kSetterSuffix
// and has one VAR_INPUT named like the property (the value assigned, as in CODESYS).
enum class Accessor : std::uint8_t { None, Get, Set };
inline constexpr const char* kSetterSuffix = "$set"; // '$' cannot occur in an ST identifier

// A textual SFC chart as written, kept beside the statements it is lowered to (sfc.h) for the
// tools that show or write the chart itself (`takt export plcopen`): names, and the spans of
// the expressions in the source.
struct SfcOutline {
    struct Association {
        Identifier action;
        std::string qualifier; // as written; empty: N
        Span duration;         // L D SD DS SL; invalid when none
    };
    struct Step {
        Identifier name;
        bool initial = false;
        std::vector<Association> actions;
    };
    struct Transition {
        Identifier name; // empty when none
        std::vector<Identifier> from;
        std::vector<Identifier> to;
        Span condition;                        // `:= condition;`; invalid for a transition with a body
        std::optional<std::uint64_t> priority; // `(PRIORITY := n)`'s n
        Span span;
    };
    std::vector<Step> steps;
    std::vector<Transition> transitions;
    bool statements = false; // the body has statements of its own besides the chart
};

struct PouDecl final : Decl {
    explicit PouDecl(Span s) : Decl(DeclKind::Pou, s) {}
    PouKind pouKind = PouKind::Program;
    Identifier name;
    Access access = Access::Default; // methods (and FBs) may carry one
    bool isAbstract = false;
    bool isFinal = false;
    TypeSpecPtr returnType; // FUNCTION / METHOD result; null when none
    std::optional<QualifiedName> extends;
    std::vector<QualifiedName> implements;
    std::vector<VarBlock> varBlocks;
    StmtList body;
    std::vector<std::unique_ptr<PouDecl>> methods; // FUNCTION_BLOCK (and PROGRAM) methods
    bool isAction = false;                         // an ACTION: a METHOD without variables or result, on its POU's data
    bool prototypeOnly = false;                    // a METHOD inside an INTERFACE: no body
    bool isOverride = false;                       // METHOD OVERRIDE (CODESYS / TwinCAT)
    bool isClass = false;                          // a CLASS: a FUNCTION_BLOCK without body or parameters
    Accessor accessor = Accessor::None;            // a PROPERTY's GET or SET
    Access propertyAccess = Access::Default;       // the access written on the PROPERTY itself
    Span propertySpan;                             // the property's name where it is declared
    std::shared_ptr<const SfcOutline> chart;       // a PROGRAM's or FUNCTION_BLOCK's SFC chart; null when none
};

struct InterfaceDecl final : Decl {
    explicit InterfaceDecl(Span s) : Decl(DeclKind::Interface, s) {}
    Identifier name;
    std::vector<QualifiedName> extends;
    std::vector<std::unique_ptr<PouDecl>> methods; // prototypes
};

// One entry of a TYPE block (`TYPE A : …; B : …; END_TYPE` yields two TypeDecls).
struct TypeDecl final : Decl {
    explicit TypeDecl(Span s) : Decl(DeclKind::Type, s) {}
    Identifier name;
    TypeSpecPtr spec;
    ExprPtr init; // TYPE Level : INT (0..100) := 50; END_TYPE
};

// VAR_GLOBAL (and VAR_CONFIG / VAR_ACCESS) outside a CONFIGURATION, as in CODESYS GVLs.
struct GlobalVarsDecl final : Decl {
    explicit GlobalVarsDecl(Span s) : Decl(DeclKind::GlobalVars, s) {}
    VarBlock block;
};

struct TaskDecl {
    Identifier name;
    ExprPtr interval; // INTERVAL := T#10ms
    ExprPtr priority; // PRIORITY := 1
    ExprPtr single;   // SINGLE := trigger
    Span span;
};

struct ProgramInstanceDecl {
    Identifier name;
    bool retain = false;
    bool nonRetain = false;
    std::optional<Identifier> task; // WITH task
    QualifiedName type;
    std::vector<Argument> args; // PROGRAM p WITH t : T (in := x, out => y);
    Span span;
};

struct ResourceDecl {
    Identifier name;
    std::optional<Identifier> on; // RESOURCE r ON PLC
    std::vector<VarBlock> varBlocks;
    std::vector<TaskDecl> tasks;
    std::vector<ProgramInstanceDecl> programs;
    Span span;
};

// CONFIGURATION: globals + resources. Tasks and programs written directly in the
// configuration (no RESOURCE) are collected in an implicit resource with an empty name.
struct ConfigurationDecl final : Decl {
    explicit ConfigurationDecl(Span s) : Decl(DeclKind::Configuration, s) {}
    Identifier name;
    std::vector<VarBlock> varBlocks; // VAR_GLOBAL, VAR_ACCESS, VAR_CONFIG
    std::vector<ResourceDecl> resources;
};

struct NamespaceDecl final : Decl {
    explicit NamespaceDecl(Span s) : Decl(DeclKind::Namespace, s) {}
    QualifiedName name;
    std::vector<DeclPtr> decls;
};

struct UsingDecl final : Decl {
    explicit UsingDecl(Span s) : Decl(DeclKind::Using, s) {}
    std::vector<QualifiedName> names;
};

struct CompilationUnit {
    FileId file = kNoFile;
    std::vector<DeclPtr> decls;
};

} // namespace ast
} // namespace takt::compiler
