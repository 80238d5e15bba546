#pragma once
// Hand-written recursive-descent parser for the ST scope of LANGUAGE.md. It never stops at the
// first error: after a syntax error it resynchronises (at ';', END_* keywords and declaration
// starts) and keeps reporting; nesting deeper than kMaxNesting is a diagnostic (E0013), never
// a stack overflow.
#include "takt/compiler/ast.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/dialect.h"
#include "takt/compiler/token.h"

namespace takt::compiler {

inline constexpr std::size_t kMaxNesting = 256;

// Parses one lexed file. Always returns a unit (possibly partial) for later phases.
[[nodiscard]] ast::CompilationUnit parse(const SourceFile& file, const LexResult& tokens, DiagnosticSink& diags);

// Convenience: lex + parse, the tokens read as `dialect` reads them (lexer.h).
[[nodiscard]] ast::CompilationUnit parseSource(const SourceFile& file, DiagnosticSink& diags,
                                               Dialect dialect = Dialect::Codesys);

} // namespace takt::compiler
