#pragma once
// Symbols and scopes. One Scope per namespace (the global scope is the root), POU, method,
// struct-free FB body, configuration and resource. Lookup is case-insensitive (names.h).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "takt/compiler/ast.h"
#include "takt/compiler/sema/types.h"

namespace takt::compiler {

enum class SymbolKind : std::uint8_t {
    Variable, // any VAR* entry, struct-free; see `section`
    Pou,      // PROGRAM / FUNCTION / FUNCTION_BLOCK / METHOD / TEST_* (see `pouKind`)
    Interface,
    Type,      // a TYPE declaration (enum/struct/alias/subrange/array/ref)
    EnumValue, // a value of an enumeration
    Namespace,
    StandardFunction, // ADD, MAX, INT_TO_REAL, ASSERT_EQUAL… (signature in stdlib tables)
    Configuration,
    Resource,
    Task,
    ProgramInstance, // PROGRAM p WITH t : Main inside a RESOURCE
    AccessPath,      // a VAR_ACCESS name
};

class Scope;

struct Symbol {
    SymbolKind kind = SymbolKind::Variable;
    std::string name;              // as declared
    Span span;                     // the declaring identifier
    const Type* type = nullptr;    // variable type; FUNCTION/METHOD result; enum value's enum; instance type
    const Symbol* owner = nullptr; // enclosing POU / namespace / resource / configuration (null at root)

    // Variables
    ast::VarSection section = ast::VarSection::Var;
    bool constant = false;
    bool retain = false;
    std::optional<ast::Address> address; // AT %…; wildcard resolved through VAR_CONFIG in `resolvedAddress`
    std::optional<ast::Address> resolvedAddress;
    // Declared without AT, located per instance by VAR_CONFIG entries (ConfigBinding), as CODESYS
    // does (W1013).
    bool configLocated = false;
    const ast::VarDecl* varDecl = nullptr;
    const ast::Expr* init = nullptr;
    std::uint32_t declIndex = 0;      // order within its POU (initialiser order rule)
    const Scope* declScope = nullptr; // the scope the symbol is declared in (initialisers are evaluated there)
    const Symbol* target = nullptr;   // VAR_EXTERNAL: its VAR_GLOBAL; VAR_ACCESS: the variable the path names
    // An R_EDGE / F_EDGE input: the hidden member holding the value of its last call.
    const Symbol* edgeMemory = nullptr;
    bool hidden = false; // a member the compiler adds (edge memories): never reported as unused

    // POUs, interfaces, methods
    ast::PouKind pouKind = ast::PouKind::Program;
    const ast::PouDecl* pou = nullptr;
    const ast::InterfaceDecl* interfaceDecl = nullptr;
    const Symbol* base = nullptr;          // EXTENDS (FB)
    std::vector<const Symbol*> interfaces; // IMPLEMENTS / interface EXTENDS
    std::vector<const Symbol*> params;     // VAR_INPUT / VAR_OUTPUT / VAR_IN_OUT in declaration order
    Scope* scope = nullptr;                // members / locals / namespace contents
    // FB at the root of an EXTENDS hierarchy in which some FB implements an INTERFACE: bytes
    // reserved at the start of every instance for the image offset of its dispatch table
    // (CALL_IFACE reads it), or in which some FB overrides a METHOD or PROPERTY accessor of its
    // base (late-bound calls read it). 0 for every other POU.
    std::uint32_t dispatchHeader = 0;

    // Enum values
    std::int64_t enumValue = 0;

    // Types
    const ast::TypeDecl* typeDecl = nullptr;

    // Tasks, program instances, access paths
    const ast::TaskDecl* task = nullptr;
    const ast::ProgramInstanceDecl* instance = nullptr;
    const Symbol* taskSymbol = nullptr;
    std::int64_t taskInterval = 0;         // TASK INTERVAL in nanoseconds (0: none, event task)
    std::int64_t taskPriority = 0;         // TASK PRIORITY (lower runs first)
    const Symbol* taskSingle = nullptr;    // TASK SINGLE: the BOOL variable whose rising edge triggers it
    std::vector<const Symbol*> accessPath; // VAR_ACCESS: the symbols along the path (instance, …, variable)
    const ast::AccessDecl* access = nullptr;
    bool readOnly = false;

    // Standard functions: index into the standard library's signature table
    std::uint32_t stdIndex = 0;
};

// Whether the code of POU `from` (a METHOD's or accessor's code counts as its POU's) may use
// `member`, a METHOD, ACTION or PROPERTY accessor of an FB, CLASS or PROGRAM: a PRIVATE one only
// from the POU declaring it, a PROTECTED one also from the POUs extending it (CODESYS's rules).
// INTERNAL is public: takt compiles a project and its libraries as one unit.
[[nodiscard]] bool memberAccessible(const Symbol& member, const Symbol* from);
// Whether a variable of an FB or PROGRAM instance may be named from outside it (`fb.x`, `Main.x`):
// an FB's VAR_INPUT and VAR_OUTPUT, a PROGRAM's variables but its VAR_TEMP.
[[nodiscard]] bool variableVisibleOutside(const Symbol& member);
// A name the compiler makes up (an R_EDGE input's memory `IN$edge`): '$' cannot occur in an ST
// identifier, so no source text can name it. A SET-only PROPERTY's accessor `P$set` is one too.
[[nodiscard]] bool isGeneratedName(std::string_view name);

class Scope {
public:
    explicit Scope(Scope* parent, const Symbol* owner) : parent_(parent), owner_(owner) {}

    // Adds a symbol; returns the existing one (and does not add) when the name is taken here.
    const Symbol* declare(Symbol* symbol);
    // Puts `symbol` in the place of the symbol of the same name (a user FUNCTION that redefines
    // a standard function, W1011).
    void replace(Symbol* symbol);
    // This scope only.
    [[nodiscard]] Symbol* findLocal(std::string_view name) const;
    // This scope, then the parents.
    [[nodiscard]] Symbol* find(std::string_view name) const;

    [[nodiscard]] Scope* parent() const { return parent_; }
    [[nodiscard]] const Symbol* owner() const { return owner_; }
    [[nodiscard]] const std::vector<Symbol*>& symbols() const { return ordered_; } // declaration order
    std::vector<Scope*> usings; // USING namespaces, searched after this scope's own names
    // When set, every name looked up or declared here, found or not (upper case). An analysis that checks one
    // file's bodies (AnalysisOptions::bodiesOf) sets it on the global scope and the namespaces:
    // the names another file's declarations could answer (SemanticModel::probedNames).
    std::unordered_set<std::string>* probes = nullptr;

private:
    Scope* parent_;
    const Symbol* owner_;
    std::unordered_map<std::string, Symbol*> byName_; // upper-cased
    std::vector<Symbol*> ordered_;
};

} // namespace takt::compiler
