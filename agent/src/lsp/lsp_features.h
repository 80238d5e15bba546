#pragma once
// The answers of the language server, each as the JSON text of its LSP result, computed from one
// check of the project by its compiler::Frontend and the text the editor holds.
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "lsp/lsp_text.h"
#include "takt/compiler/frontend.h"

namespace takt::agent::lsp {

// What every answer reads: the project as its Frontend last checked it (frontend.h).
using Analysis = compiler::CheckedProject;

// textDocument/publishDiagnostics params for one file of the analysis (an empty list clears).
[[nodiscard]] std::string diagnosticsParams(const Analysis& a, compiler::FileId file,
                                            std::optional<std::int64_t> version);
// The same for a file with no diagnostics (one that left the project, or a config file).
[[nodiscard]] std::string emptyDiagnosticsParams(const std::filesystem::path& path);
// Diagnostics of runtime.toml's [build] table when it stops the project from being checked.
[[nodiscard]] std::string configDiagnosticsParams(const Analysis& a);

// TextEdit[] turning `text` into its canonical layout, or nothing when it has syntax errors
// (the formatter refuses those). With a range, only edits touching lines [first, last].
[[nodiscard]] std::optional<std::string> formattingEdits(std::string_view path, const std::string& text,
                                                         std::optional<std::pair<std::uint32_t, std::uint32_t>> lines);

// Hover (markdown), Location, Location[], DocumentSymbol[], SymbolInformation[]; "null" when
// there is nothing at the position.
[[nodiscard]] std::string hover(const Analysis& a, compiler::FileId file, std::uint32_t offset);
[[nodiscard]] std::string definition(const Analysis& a, compiler::FileId file, std::uint32_t offset);
[[nodiscard]] std::string references(const Analysis& a, compiler::FileId file, std::uint32_t offset,
                                     bool includeDeclaration);
[[nodiscard]] std::string documentSymbols(const Analysis& a, compiler::FileId file);
[[nodiscard]] std::string workspaceSymbols(const Analysis& a, std::string_view query);
// FoldingRange[]: every block from its opening keyword to the line before its END_* (POUs, VAR
// sections, types, IF/CASE/FOR/WHILE/REPEAT…), and block comments over several lines.
[[nodiscard]] std::string foldingRanges(const compiler::SourceFile& file);
// SemanticTokens of a file (identifiers by what they name) and the legend announced in
// initialize (lsp_semantic.cpp).
[[nodiscard]] std::string semanticTokens(const Analysis& a, compiler::FileId file);
[[nodiscard]] std::string_view semanticTokensLegend();
// CodeAction[] for the diagnostics the client passes back (lsp_actions.cpp): declare an unknown
// identifier (E0104), insert a missing END_* (E0012).
[[nodiscard]] std::string codeActions(const Analysis& a, compiler::FileId file, const rapidjson::Value& diagnostics);

} // namespace takt::agent::lsp
