#pragma once
// `takt check --shared-variables`: per pair of TASKs, the variables both reach and how each uses
// them (compiler/sema/task_data.h), as text or as one JSON document.
#include <string>

namespace takt::compiler {
class SemanticModel;
}

namespace takt::cli {

[[nodiscard]] std::string renderSharedVariables(const compiler::SemanticModel& model);
[[nodiscard]] std::string renderSharedVariablesJson(const compiler::SemanticModel& model);

} // namespace takt::cli
