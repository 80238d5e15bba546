#pragma once
// Shared helpers for the parser tests: parse a text, render its tree and diagnostics.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "takt/compiler/ast_dump.h"
#include "takt/compiler/parser.h"

namespace takt::compiler::testing {

struct Parsed {
    SourceManager sm;
    DiagnosticSink diags;
    ast::CompilationUnit unit;
    FileId file = kNoFile;

    [[nodiscard]] std::string dump(bool positions = false) const { return dumpAst(unit, sm, {positions}); }
    // "line:col CODE" per diagnostic, in report order.
    [[nodiscard]] std::vector<std::string> codes() const {
        std::vector<std::string> out;
        for (const Diagnostic& d : diags.diagnostics()) {
            LineCol lc = sm.lineCol(d.span);
            out.push_back(fmt::format("{}:{} {}", lc.line, lc.column, diagInfo(d.code).code));
        }
        return out;
    }
    [[nodiscard]] std::string messages() const { return renderHuman(diags.diagnostics(), sm); }
};

inline std::unique_ptr<Parsed> parseText(std::string text) {
    auto p = std::make_unique<Parsed>();
    p->file = p->sm.add("test.st", std::move(text));
    p->unit = parseSource(p->sm.file(p->file), p->diags);
    return p;
}

} // namespace takt::compiler::testing
