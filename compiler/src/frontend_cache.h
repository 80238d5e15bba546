#pragma once
// What a Frontend keeps between checks (frontend.h): per ST file, keyed by its text, the facts
// semantic analysis recorded while checking it in full and its declarations parsed once.
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
    std::string interface;      // its declarations without bodies and positions, as the syntax tree prints them
    // The text with each POU body blanked (offsets kept); empty when the file has syntax errors
    // (it is then checked by its whole text).
    std::string declText;
    // declText parsed, kept for the next checks (null until first needed; reset when the
    // analysis that used it cannot be undone: frontend_incremental.cpp, clearAnnotations).
    std::unique_ptr<ast::CompilationUnit> declUnit;
    std::set<std::string> calls;                  // "CALLER>CALLEE" (qualified, upper case) its bodies make
    std::set<std::string> foreignLocals;          // "path|POU.NAME": locals of other files its bodies name
    std::set<std::filesystem::path> relatedFiles; // other files its diagnostics point into
    // What decides which files an edit of another file is checked with (frontend_incremental.cpp):
    std::set<std::string> declares; // upper-case names it declares where others can name them (from the model)
    // Upper-case identifiers of its declarations (of its text with syntax errors); read from the
    // text when first needed (mentionsKnown), as most files' are never needed.
    std::set<std::string> mentions;
    bool mentionsKnown = false;
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

// The facts of file `id` of `checked` (whose bodies were all checked) from its unit and the model.
void recordFacts(const CheckedProject& checked, FileId id, ast::CompilationUnit& unit, Frontend::FileState& out);

} // namespace takt::compiler
