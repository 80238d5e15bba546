#pragma once
// One ST expression on its own, outside any POU body: the debugger's watches, breakpoint
// conditions and logpoints (docs/debugging.md), read by the same lexer and parser as a body.
#include "takt/compiler/ast.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/dialect.h"

namespace takt::compiler {

// Null, with the errors in `diags`, unless the whole text is one expression.
[[nodiscard]] ast::ExprPtr parseExpressionText(const SourceFile& file, DiagnosticSink& diags,
                                               Dialect dialect = Dialect::Codesys);

} // namespace takt::compiler
