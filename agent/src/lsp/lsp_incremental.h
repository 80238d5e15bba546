#pragma once
// Incremental re-analysis by file. A full check of a large project on every keystroke is too slow,
// so after an edit of one file the server checks that file's bodies against the declarations of
// the files it depends on: those declaring a name it mentions, then the names their declarations
// mention, and so on (plus every file with a CONFIGURATION or a top-level USING, which reach into
// all others). Those go in with their POU bodies commented out (offsets kept), so only their
// declarations are analysed; the rest of the project is left out. The result is the full check's whenever the
// diagnostics of each file depend only on its own text and the declarations of the rest. Where the compiler lets a body
// decide diagnostics of another file (a call cycle across files, E0115; a local named from another file, W0001), or the
// edit changes what other files see (the file's declarations), the caller falls back to a full check. docs/editor.md
// describes the rules.
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lsp/lsp_project.h"

namespace takt::agent::lsp {

// What one file left in the last analysis that checked its bodies.
struct FileFacts {
    std::string text;                             // the text analysed
    std::string interface;                        // its declarations without bodies, as the syntax tree prints them
    std::string declarationsOnly;                 // the text with its bodies commented out; empty: it has syntax errors
    std::set<std::string> calls;                  // "CALLER>CALLEE" (upper-case qualified names) its bodies make
    std::set<std::string> foreignLocals;          // "path|POU.NAME": locals of other files its bodies name
    std::set<std::filesystem::path> relatedFiles; // other files its diagnostics point into
    std::set<std::string> declares;               // upper-case names it declares in the global scope and namespaces
    std::set<std::string> mentions; // upper-case words of its declarations (its whole text if it has syntax errors)
    bool reachesAll = false;        // a CONFIGURATION or a top-level USING
    std::size_t errors = 0;
};

// The state of a project between edits: the files in compilation order and their facts.
struct ProjectFacts {
    compiler::BuildOptions build;
    std::vector<std::filesystem::path> files;
    std::vector<std::string> displayPaths;
    std::vector<FileFacts> facts; // parallel to files
};

// The facts of every file of a full analysis (nothing when the project is invalid).
[[nodiscard]] std::optional<ProjectFacts> factsOf(Analysis& full);

// Checks `file`, now holding `text`, against the declarations of the other files of `facts` and
// updates its facts. Nothing when the answer could differ from a full check of the same texts:
// the caller then runs one (and takes its facts).
[[nodiscard]] std::optional<Analysis> recheckFile(ProjectFacts& facts, const std::filesystem::path& root,
                                                  const std::filesystem::path& sourcesDir,
                                                  const std::filesystem::path& file, const std::string& text);

} // namespace takt::agent::lsp
