#pragma once
// The result of semantic analysis: every symbol and type of the project, owned in one place.
// Later phases (code generation, the harness, the agent's symbol queries) read it; nothing
// mutates it after analyze() returns.
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "takt/compiler/names.h"
#include "takt/compiler/sema.h"
#include "takt/compiler/sema/symbols.h"
#include "takt/compiler/sema/task_data.h"
#include "takt/compiler/sema/types.h"

namespace takt::compiler {

// The standard FB prelude is parsed from text that is not a project file; its spans use this id.
inline constexpr FileId kStdlibFile = 0xFFFFFFFEu;

// A VAR_CONFIG entry that resolved a wildcard (`res.inst.fb.x AT %IX1.0`): the per-instance
// address of a variable declared `AT %I*`.
struct ConfigBinding {
    std::vector<const Symbol*> path; // program instance (or program/global), FB instances…, the variable
    ast::Address address;
    const ast::ConfigDecl* decl = nullptr;
};

class SemanticModel {
public:
    SemanticModel() : global(std::make_unique<Scope>(nullptr, nullptr)) {}

    TypeTable types;
    std::unique_ptr<Scope> global; // root: namespaces, POUs, types, globals, standard functions/FBs

    Symbol* newSymbol() {
        symbols_.push_back(std::make_unique<Symbol>());
        return symbols_.back().get();
    }
    Scope* newScope(Scope* parent, const Symbol* owner) {
        scopes_.push_back(std::make_unique<Scope>(parent, owner));
        return scopes_.back().get();
    }

    // Convenience lists in source order (all files, file order as given to analyze()).
    std::vector<const Symbol*> pous;    // every PROGRAM/FUNCTION/FUNCTION_BLOCK/METHOD/TEST_* (incl. standard FBs last)
    std::vector<const Symbol*> globals; // VAR_GLOBAL variables (configuration, resource and top-level)
    std::vector<const Symbol*> configurations; // CONFIGURATION symbols
    std::vector<const Symbol*> tasks;
    std::vector<const Symbol*> programInstances;
    std::vector<const Symbol*> accessPaths;
    std::vector<const Symbol*> enumValues; // every EnumValue symbol, in declaration order
    // The same symbols by upper-cased name: a bare enum value (`Run`) resolves through it
    // without scanning every enumeration of the project. addEnumValue() keeps both.
    std::unordered_multimap<std::string, const Symbol*> enumValuesByName;
    void addEnumValue(const Symbol* s) {
        enumValues.push_back(s);
        enumValuesByName.emplace(upperName(s->name), s);
    }
    std::vector<const Symbol*> typeDecls;      // TYPE declarations (user types first, then the standard library's)
    std::vector<ConfigBinding> configBindings; // VAR_CONFIG entries, in source order

    // What the bodies reached that decides diagnostics elsewhere, for a tool that re-checks one
    // file's bodies against the declarations of the others (takt lsp): every FUNCTION / METHOD /
    // PROGRAM call (E0115 looks for cycles over all of them) and every local (VAR, VAR_TEMP)
    // named from a file other than its declaration's (W0001 counts such uses).
    struct BodyUse {
        const Symbol* user = nullptr; // the calling POU; for a local, null
        const Symbol* used = nullptr;
        Span at;
    };
    std::vector<BodyUse> calls;
    std::vector<BodyUse> foreignLocalUses;
    // With AnalysisOptions::bodiesOf: every name (upper case) looked up in the global scope or a
    // namespace, found or not. A file left out of that analysis that declares one of them could
    // have changed the answer (compiler::Frontend then checks again with it).
    std::unordered_set<std::string> probedNames;

    // Per TASK (in the order of `tasks`), the POUs and shared variables its programs reach
    // (task_data.h); filled after the bodies when every body was checked, else empty.
    std::vector<TaskData> taskData;

    // The parsed standard FB prelude (standardFbSource()); symbols point into it.
    std::unique_ptr<SourceFile> stdlibFile;
    ast::CompilationUnit stdlibUnit;

private:
    std::vector<std::unique_ptr<Symbol>> symbols_;
    std::vector<std::unique_ptr<Scope>> scopes_;
};

} // namespace takt::compiler
