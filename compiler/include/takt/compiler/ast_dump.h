#pragma once
// A compact, deterministic S-expression rendering of the syntax tree for golden tests and
// `takt` debugging output. Expressions print on one line; statements and declarations each
// start a new, indented line. With `positions`, every node head carries `@line:col`.
#include <string>

#include "takt/compiler/ast.h"
#include "takt/compiler/source.h"

namespace takt::compiler {

struct AstDumpOptions {
    bool positions = false;
};

[[nodiscard]] std::string dumpAst(const ast::CompilationUnit& unit, const SourceManager& sm,
                                  const AstDumpOptions& options = {});
[[nodiscard]] std::string dumpExpr(const ast::Expr& expr, const SourceManager& sm, const AstDumpOptions& options = {});
[[nodiscard]] std::string dumpStmt(const ast::Stmt& stmt, const SourceManager& sm, const AstDumpOptions& options = {});
[[nodiscard]] std::string dumpTypeSpec(const ast::TypeSpec& type, const SourceManager& sm,
                                       const AstDumpOptions& options = {});

} // namespace takt::compiler
