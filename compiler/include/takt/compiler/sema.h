#pragma once
// Semantic analysis over all files of a project at once: declarations and scopes across files,
// type resolution, constant evaluation, expression typing, call checking, assignability,
// configuration and direct-address checks. Annotates the AST in place (Expr::type,
// NameExpr::symbol, TypeSpec::resolved) and returns the model later phases compile from.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "takt/compiler/ast.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/dialect.h"

namespace takt::compiler {

enum class AddressMode : std::uint8_t { Word, Byte }; // runtime.toml [build] address_mode

// trust-lsp.toml [project] vendor_profile: which vendor's extra standard blocks exist
// (docs/trust-projects.md). Mitsubishi adds DIFU and DIFD, GX Works3's edge one-shots.
enum class VendorProfile : std::uint8_t { Codesys, Mitsubishi };

struct AnalysisOptions {
    AddressMode addressMode = AddressMode::Word;
    Dialect dialect = Dialect::Codesys;
    VendorProfile vendor = VendorProfile::Codesys;
    // Every declaration is analysed, but only the bodies and initialisers of this file are
    // checked (kNoFile: all). compiler::Frontend's re-check of an edited file: the others'
    // body diagnostics are kept from the check that had them (frontend.h).
    FileId bodiesOf = kNoFile;
    [[nodiscard]] bool checksBodiesIn(FileId file) const { return bodiesOf == kNoFile || file == bodiesOf; }
};

class SemanticModel; // sema/model.h (defined by the semantic-analysis implementation)

struct AnalysisResult {
    std::shared_ptr<SemanticModel> model; // never null, even with errors
};

[[nodiscard]] AnalysisResult analyze(std::vector<ast::CompilationUnit>& units, const SourceManager& sm,
                                     DiagnosticSink& diags, const AnalysisOptions& options = {});

// The overloads of a standard function as an editor shows them (signature help): each parameter's
// formal name and type, the generic family (ANY_NUM, ANY_ELEMENTARY …) where the function is
// overloaded over one. Empty when `name` (any case) is no standard function.
struct StandardParameterInfo {
    std::string name;
    std::string type;
    bool output = false; // given with =>
};
struct StandardSignatureInfo {
    std::string name;
    std::vector<StandardParameterInfo> params;
    bool extensible = false; // the last parameter repeats: IN3, IN4 …
    std::string result;      // empty: no value (the assertions)
};
[[nodiscard]] std::vector<StandardSignatureInfo> standardSignaturesOf(std::string_view name);

// A stable, sorted, human-readable listing of every declared symbol with its type
// ("PROGRAM Main", "Main.counter : INT", "TYPE Mode : (Idle, Run)"). Used by tests to prove
// that formatting does not change a program's meaning.
[[nodiscard]] std::string dumpSymbols(const SemanticModel& model);

} // namespace takt::compiler
