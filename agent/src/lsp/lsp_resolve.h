#pragma once
// What an identifier in a source names, found through the semantic model's scopes: the POU the
// position lies in gives the scope, a `.` before the name gives the object whose type holds the
// member. Hover, definition, references (and so rename) all resolve through here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "takt/compiler/project.h"
#include "takt/compiler/sema/model.h"
#include "takt/compiler/token.h"

namespace takt::agent::lsp {

// A declaration: a symbol of the model, or a field of a STRUCT type (which has no symbol).
struct Target {
    const compiler::Symbol* symbol = nullptr;
    const compiler::Field* field = nullptr;
    const compiler::StructType* owner = nullptr; // the field's struct
    compiler::Span decl;                         // the declaring identifier (identity of the target)
    [[nodiscard]] bool same(const Target& o) const {
        return decl.file == o.decl.file && decl.begin == o.decl.begin && decl.end == o.decl.end;
    }
};

// The identifier tokens of one file (comments and strings skipped by the lexer).
struct FileTokens {
    std::vector<compiler::Token> tokens;
};
[[nodiscard]] FileTokens tokensOf(const compiler::SourceFile& file);

// The index of the identifier token at `offset` (inside it or just after it), or -1.
[[nodiscard]] int tokenAt(const FileTokens& t, std::uint32_t offset);

// What token `index` of `file` names, or nothing (a keyword, an unknown name, a type name of
// the language).
[[nodiscard]] std::optional<Target> resolve(const compiler::Project& project, const compiler::SourceFile& file,
                                            const FileTokens& tokens, int index);

// The scope of the innermost POU (method, FB, program, function) whose declaration covers
// `offset`, or the global scope.
[[nodiscard]] const compiler::Scope* scopeAt(const compiler::SemanticModel& model, compiler::FileId file,
                                             std::uint32_t offset);

} // namespace takt::agent::lsp
