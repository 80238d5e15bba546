#pragma once
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/dialect.h"
#include "takt/compiler/token.h"

namespace takt::compiler {

// Splits one source file into tokens and trivia. Never fails: malformed input yields an
// Error token plus a coded diagnostic, and lexing continues after it. Block comments nest,
// except under Dialect::Openplc, where they close at the first `*)` as matiec closes them.
[[nodiscard]] LexResult lex(const SourceFile& file, DiagnosticSink& diags, Dialect dialect = Dialect::Codesys);

} // namespace takt::compiler
