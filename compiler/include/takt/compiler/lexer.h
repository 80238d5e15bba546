#pragma once
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/token.h"

namespace takt::compiler {

// Splits one source file into tokens and trivia. Never fails: malformed input yields an
// Error token plus a coded diagnostic, and lexing continues after it.
[[nodiscard]] LexResult lex(const SourceFile& file, DiagnosticSink& diags);

} // namespace takt::compiler
