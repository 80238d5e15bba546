#pragma once
// The build pipeline and the machine-readable reports of `takt build --ci` and `takt check
// --json` (CONFIG.md). The CLI commands and the agent API (runtime.build, lsp.diagnostics,
// runtime.compile_reload) all call these, so the payloads cannot drift apart.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "takt/compiler/diagnostics.h"
#include "takt/compiler/exit_codes.h"
#include "takt/compiler/project.h"

namespace takt::agent {

struct BuildOutcome {
    int exitCode = kExitOk; // exit_codes.h
    std::vector<compiler::Diagnostic> diagnostics;
    std::optional<std::string> program; // path written
    std::string failure;                // a build failure that is not an ST diagnostic
    std::size_t bytes = 0;
    std::string hash;
};

// compileProgram() on a checked project, then program.stbc written atomically into the project
// directory. Nothing is written when anything fails.
[[nodiscard]] BuildOutcome buildProject(compiler::Project& project);

// {"version":1,"command":"build","status","project","program","source_count","sources","diagnostics",…}
[[nodiscard]] std::string renderBuildJson(const compiler::Project& project, const BuildOutcome& outcome);
// {"version":1,"command":"check","status","project","source_count","sources","diagnostics",…}
[[nodiscard]] std::string renderCheckJson(const compiler::Project& project);

} // namespace takt::agent
