#pragma once
// What a Frontend keeps between checks (frontend.h): per ST file, keyed by its text, the facts
// semantic analysis recorded while checking it and its declarations parsed once.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "takt/compiler/frontend.h"

namespace takt::compiler {

struct Frontend::FileState {
    std::filesystem::path path; // absolute
    std::string text;           // the text these facts are about
    // What it declares for the other files, from the model (frontend_facts.cpp): an edit that
    // changes it sends the project to a full check.
    std::string digest;
    // The text with each POU body blanked (offsets kept); empty when the file has syntax errors
    // (it is then checked by its whole text).
    std::string declText;
    // declText parsed, kept for the next checks (null until first needed; reset when the
    // analysis that used it cannot be undone: frontend_incremental.cpp, clearAnnotations).
    std::unique_ptr<ast::CompilationUnit> declUnit;
    std::set<std::string> calls;                  // "CALLER>CALLEE" (qualified, upper case) its bodies make
    std::set<std::string> foreignLocals;          // "path|POU.NAME": locals of other files its bodies name
    std::set<std::filesystem::path> relatedFiles; // other files its diagnostics point into
    // Upper-case names it declares where others can name them (from the model): a file whose
    // check looked one of them up is checked with this file's declarations.
    std::set<std::string> declares;
    // The other files (indices into Loaded::states) its last incremental check used: the next
    // edit starts from them (frontend_incremental.cpp).
    std::vector<std::size_t> checkedWith;
    bool reachesAll = false; // a CONFIGURATION or a top-level USING: it names into every file
    std::size_t errors = 0;
};

struct Frontend::Loaded {
    BuildOptions build;
    // Every FileId of the full check: display path, absolute path, and for trust-lsp.toml files
    // (not ST, first) the text.
    std::vector<std::string> display;
    std::vector<std::filesystem::path> files;
    std::vector<std::string> manifestTexts;
    std::vector<FileState> states; // the ST files, FileId manifestTexts.size() + i
    bool usable = false;           // valid, every file read, no manifest error: incremental checks may run
};

// The facts of file `id` of `checked` (whose bodies were all checked) from its unit and the model
// (frontend_facts.cpp).
void recordFacts(const CheckedProject& checked, FileId id, ast::CompilationUnit& unit, Frontend::FileState& out);
// The upper-case names file `id` declares where other files can name them: the global scope,
// namespaces, and enumeration values (a bare value resolves across the project).
[[nodiscard]] std::set<std::string> declaredNames(const SemanticModel& model, FileId id);
// A digest of what file `id` declares for the others, from the model's symbols and types.
[[nodiscard]] std::string declarationsDigest(const SemanticModel& model, FileId id, std::string_view text);
// Clears what the last analysis wrote into a kept declarations unit; false when that cannot be
// undone and the unit must be parsed again (frontend_reuse.cpp).
[[nodiscard]] bool clearForReuse(ast::CompilationUnit& unit);

} // namespace takt::compiler
