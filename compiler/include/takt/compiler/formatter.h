#pragma once
// The Structured Text formatter behind `takt fmt`. It works on the lexer's tokens and trivia
// (comments and pragmas), so it can never drop a comment and it never needs a complete AST.
// The canonical layout: upper-case keywords (and elementary type names and the prefixes of
// typed/time literals), identifiers as written, 4-space indentation by block structure, one
// statement or declaration per line, normalised spacing, at most one blank line, LF endings.
// Formatting is idempotent: formatSource(formatSource(x).text) gives the same text.
#include <string>

#include "takt/compiler/diagnostics.h"
#include "takt/compiler/source.h"

namespace takt::compiler {

struct FormatResult {
    bool ok = false;      // false: the file has errors (reported to the sink); `text` is empty
    std::string text;     // the formatted file (when ok)
    bool changed = false; // text differs from the input
};

// Formats one file. Refuses (ok == false, diagnostics in `diags`) when the file has lexical or
// syntax errors, so a file that does not compile is never rewritten.
[[nodiscard]] FormatResult formatSource(const SourceFile& file, DiagnosticSink& diags);

} // namespace takt::compiler
