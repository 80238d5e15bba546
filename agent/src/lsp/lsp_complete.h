#pragma once
// Completion, signature help and rename of the language server: the editing features that read
// the scope at the cursor (lsp_resolve.h) rather than one declaration.
#include <string>
#include <string_view>

#include "lsp/lsp_features.h"

namespace takt::agent::lsp {

// CompletionItem[]: after `.` the members of what precedes it (FB, struct, enumeration,
// interface, namespace); elsewhere the names in scope, the POUs and types of the project, the
// standard functions and FBs (with their parameters) and the keywords and statement snippets.
[[nodiscard]] std::string completion(const Analysis& a, compiler::FileId file, std::uint32_t offset);
// SignatureHelp for the call whose argument list holds `offset`, or "null".
[[nodiscard]] std::string signatureHelp(const Analysis& a, compiler::FileId file, std::uint32_t offset);

// A WorkspaceEdit renaming what `offset` names to `newName` in every file, or an error message
// (not an identifier, a keyword, nothing to rename, a clash with a name already declared there).
struct RenameResult {
    bool ok = false;
    std::string json; // the WorkspaceEdit
    std::string error;
};
[[nodiscard]] RenameResult rename(const Analysis& a, compiler::FileId file, std::uint32_t offset,
                                  std::string_view newName);

} // namespace takt::agent::lsp
