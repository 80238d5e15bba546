// analyze(): builds the semantic model of a whole project (all files at once) in two phases,
// declarations then bodies. The model is returned even with errors so tools can still query it.
#include "sema/context.h"

namespace takt::compiler {

AnalysisResult analyze(std::vector<ast::CompilationUnit>& units, const SourceManager& sm, DiagnosticSink& diags,
                       const AnalysisOptions& options) {
    auto model = std::make_shared<SemanticModel>();
    if (options.bodiesOf != kNoFile) {
        model->global->probes = &model->probedNames; // namespaces inherit it (declare.cpp)
    }
    sema::Context cx{*model, diags, sm, options, units};
    sema::declare(cx);
    sema::checkBodies(cx);
    if (options.bodiesOf == kNoFile) {
        sema::analyzeTaskData(cx);
    }
    return AnalysisResult{std::move(model)};
}

} // namespace takt::compiler
