#pragma once
// The one compile path: a checked Project → back end → program.stbc bytes → decoded and
// verified Module + program hash. `takt run`, `takt build`, `takt reload`, `takt test`, the
// harness, the agent API and the tests all call compileProgram(), so they refuse the same
// programs, run the same Module (exactly what program.stbc holds) and report the same hash.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "takt/bytecode/module.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/project.h"

namespace takt::compiler {

enum class CompileStatus : std::uint8_t {
    Ok,
    InvalidProject, // configuration errors (Project::configErrors): nothing was compiled
    SourceErrors,   // an error diagnostic from the front end or the code generator
    Internal,       // the generated program fails decoding or verification: a compiler bug
};

// kExitOk, kExitInvalidProject, kExitBuildFailure or kExitInternal (exit_codes.h).
[[nodiscard]] int exitCode(CompileStatus status);

struct CompiledProgram {
    CompileStatus status = CompileStatus::Ok;
    // Every diagnostic of the project and the code generator (warnings too), in the order of
    // Project::diagnostics followed by the generator's, each part sorted.
    std::vector<Diagnostic> diagnostics;
    std::string failure;                            // why, for Internal
    std::vector<std::uint8_t> bytes;                // program.stbc; set when Ok
    std::shared_ptr<const bytecode::Module> module; // decoded from `bytes` and verified; set when Ok
    std::string hash;                               // hex SHA-256 program hash; set when Ok

    [[nodiscard]] bool ok() const { return status == CompileStatus::Ok; }
};

// Nothing is generated for an invalid project or one with error diagnostics.
[[nodiscard]] CompiledProgram compileProgram(Project& project);

} // namespace takt::compiler
