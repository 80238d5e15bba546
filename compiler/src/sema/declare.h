#pragma once
// State and internal functions of the declaration phase (declare*.cpp). Declarations are
// collected first (names only), then completed lazily on first use: a type, a POU's members or an
// FB's layout is finished when something needs it, and a "Running" mark detects recursion
// (E0110/E0111) instead of looping. This makes declaration order across files irrelevant.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sema/context.h"

namespace takt::compiler::sema {

enum class Progress : std::uint8_t { NotStarted, Running, Done };

struct PendingType {
    ast::TypeDecl* decl = nullptr;
    Scope* scope = nullptr;
    Progress progress = Progress::NotStarted;
};

struct PendingPou {
    ast::PouDecl* decl = nullptr;
    Progress members = Progress::NotStarted;
    Progress layout = Progress::NotStarted;
};

// A variable whose type is resolved on first use (globals may be named by constant expressions
// in types that are completed before the globals' own pass runs).
struct PendingVar {
    ast::VarDecl* decl = nullptr;
    Scope* scope = nullptr;
    std::vector<Symbol*> symbols; // one per name of the declaration
    bool resolved = false;
};

struct PendingConfig {
    ast::ConfigurationDecl* decl = nullptr;
    Symbol* symbol = nullptr;
    std::vector<Scope*> resourceScopes;   // parallel to decl->resources (the configuration's own scope
    std::vector<Symbol*> resourceSymbols; // and symbol for the implicit, unnamed resource)
};

// A VAR_CONFIG / VAR_ACCESS block and the scope its paths start in.
struct PathBlock {
    ast::VarBlock* block = nullptr;
    Scope* scope = nullptr;
};

struct DeclState {
    bool inStdlib = false; // declaring the standard library prelude
    std::unordered_map<const Symbol*, PendingType> types;
    std::unordered_map<const Symbol*, PendingPou> pous;
    std::unordered_map<const Symbol*, PendingVar*> varOf;
    std::vector<std::unique_ptr<PendingVar>> vars;
    std::vector<Symbol*> pouOrder;       // POUs (incl. methods) in source order
    std::vector<Symbol*> interfaceOrder; // interfaces in source order
    std::vector<Symbol*> typeOrder;      // TYPE declarations in source order
    std::vector<Symbol*> stdlibPous;     // appended to model.pous last
    std::vector<PendingConfig> configurations;
    std::vector<PathBlock> pathBlocks;
    std::vector<Symbol*> located; // every variable declared with AT
    std::vector<std::pair<Scope*, const ast::QualifiedName*>> usings;
    std::vector<const Symbol*> resolvedWildcards; // wildcard variables some VAR_CONFIG entry addresses
};

// ---- declare.cpp ----------------------------------------------------------------------------
// Declares `symbol` in `scope`; on a clash reports E0101 with a related location at the first
// declaration and returns false. A user declaration named like a standard function or FB
// replaces it (W1011).
bool declareSymbol(Context& cx, Scope* scope, Symbol* symbol);
bool isStdlibSymbol(const Symbol* s);
std::string qualifiedName(const Symbol* s); // "Lib.Motor.start"

// ---- declare_types.cpp ----------------------------------------------------------------------
// Finishes a TYPE declaration (its type, layout, enum values) if not done yet.
const Type* completeTypeSymbol(Context& cx, Symbol* symbol);
// Declares the members of a POU (variables, parameters, result type) if not done yet.
void completePouMembers(Context& cx, Symbol* pou);
// Computes the instance size of an FB/PROGRAM type (E0111 when it contains itself).
void completePouLayout(Context& cx, Symbol* pou, Span use);
// Resolves a variable's type now if it was deferred.
const Type* ensureVarType(Context& cx, Symbol* variable);
// Resolves a qualified name (`Lib.Motor`) to a symbol; E0109 for an unknown namespace when `report`.
Symbol* lookupQualified(Context& cx, const ast::QualifiedName& name, const Scope* scope, bool report,
                        bool* reported = nullptr);

// ---- declare_pou.cpp ------------------------------------------------------------------------
// Declares the variables of one block into `scope` (in order), resolving their types.
// With `deferTypes` (globals) the types are resolved on first use or in the globals pass.
void declareVarBlock(Context& cx, ast::VarBlock& block, Scope* scope, const Symbol* owner, std::uint32_t& index,
                     std::vector<const Symbol*>* params, bool deferTypes = false);
// E0015/E0016/E0610: whether a section and its qualifiers may appear in this place.
enum class SectionPlace : std::uint8_t { Function, Method, FunctionBlock, Program, TopLevel, Configuration, Resource };
void checkSection(Context& cx, const ast::VarBlock& block, SectionPlace place);
void resolveInheritance(Context& cx);
void checkObjectOrientation(Context& cx);
// ---- declare_oop.cpp -------------------------------------------------------------------------
// CLASS members (E0725), FINAL (E0728), instances of ABSTRACT POUs (E0729).
void checkClassesAndModifiers(Context& cx);
// Sets Symbol::dispatchHeader on the roots of FB hierarchies that implement an INTERFACE or
// override a METHOD.
void reserveDispatchHeaders(Context& cx);

// ---- declare_config.cpp ---------------------------------------------------------------------
void checkExternals(Context& cx);
void checkShadowing(Context& cx); // W0008
void declareConfigurations(Context& cx);
void resolveConfigPaths(Context& cx);
void checkAddresses(Context& cx);
// E0601/E0602 for one located declaration; returns false when the address is malformed.
bool checkAddressShape(Context& cx, const ast::Address& address, const Type* type, std::string_view name);

} // namespace takt::compiler::sema
