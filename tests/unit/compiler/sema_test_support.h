#pragma once
// Runs the front end (parse + analyze) over ST texts for semantic-analysis tests.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "takt/compiler/names.h"
#include "takt/compiler/parser.h"
#include "takt/compiler/sema.h"
#include "takt/compiler/sema/model.h"

namespace takt::compiler::test {

struct Source {
    std::string path;
    std::string text;
};

class Analysis {
public:
    explicit Analysis(const std::string& text, AnalysisOptions options = {}) : Analysis({{"main.st", text}}, options) {}
    explicit Analysis(const std::vector<Source>& sources, AnalysisOptions options = {}) {
        for (const Source& s : sources) {
            const FileId id = sm.add(s.path, s.text);
            units.push_back(parseSource(sm.file(id), diags));
        }
        parseErrors = diags.errorCount();
        result = analyze(units, sm, diags, options);
    }

    [[nodiscard]] std::size_t errors() const { return diags.errorCount(); }
    [[nodiscard]] std::string rendered() const { return renderHuman(diags.diagnostics(), sm); }
    [[nodiscard]] const SemanticModel& model() const { return *result.model; }

    // A global-scope symbol, or a dotted path through scopes ("Main.x", "Lib.Motor").
    [[nodiscard]] const Symbol* symbol(std::string_view path) const {
        const Scope* scope = result.model->global.get();
        const Symbol* s = nullptr;
        std::size_t start = 0;
        while (start <= path.size()) {
            const std::size_t dot = path.find('.', start);
            const std::string_view part = path.substr(start, dot == std::string_view::npos ? dot : dot - start);
            if (scope == nullptr) {
                return nullptr;
            }
            s = scope->findLocal(part);
            if (s == nullptr || dot == std::string_view::npos) {
                return s;
            }
            scope = s->scope;
            start = dot + 1;
        }
        return s;
    }
    [[nodiscard]] const Type* type(std::string_view path) const {
        const Symbol* s = symbol(path);
        return s == nullptr ? nullptr : s->type;
    }

    // Diagnostics with this code, as "line:col" strings in report order.
    [[nodiscard]] std::vector<std::string> at(std::string_view code) const {
        std::vector<std::string> out;
        for (const Diagnostic& d : diags.diagnostics()) {
            if (diagInfo(d.code).code == code) {
                const LineCol lc = sm.lineCol(d.span);
                out.push_back(sm.file(d.span.file).path() + ":" + std::to_string(lc.line) + ":" +
                              std::to_string(lc.column));
            }
        }
        return out;
    }
    [[nodiscard]] const Diagnostic* first(std::string_view code) const {
        for (const Diagnostic& d : diags.diagnostics()) {
            if (diagInfo(d.code).code == code) {
                return &d;
            }
        }
        return nullptr;
    }
    [[nodiscard]] std::string where(const Span& span) const {
        const LineCol lc = sm.lineCol(span);
        return sm.file(span.file).path() + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column);
    }

    SourceManager sm;
    DiagnosticSink diags;
    std::vector<ast::CompilationUnit> units;
    AnalysisResult result;
    std::size_t parseErrors = 0;
};

} // namespace takt::compiler::test
