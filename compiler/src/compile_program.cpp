#include "takt/compiler/compile_program.h"

#include "takt/bytecode/container.h"
#include "takt/bytecode/verifier.h"
#include "takt/compiler/codegen.h"
#include "takt/compiler/exit_codes.h"

namespace takt::compiler {

int exitCode(CompileStatus status) {
    switch (status) {
    case CompileStatus::Ok: return kExitOk;
    case CompileStatus::InvalidProject: return kExitInvalidProject;
    case CompileStatus::SourceErrors: return kExitBuildFailure;
    case CompileStatus::Internal: return kExitInternal;
    }
    return kExitInternal;
}

CompiledProgram compileProgram(Project& project) {
    CompiledProgram out;
    out.diagnostics = project.diagnostics;
    if (!project.valid()) {
        out.status = CompileStatus::InvalidProject;
        return out;
    }
    if (project.errorCount > 0) {
        out.status = CompileStatus::SourceErrors;
        return out;
    }
    bytecode::Module module;
    DiagnosticSink sink;
    const bool generated =
        generate(*project.model, project.units, *project.sources, project.build.codegenOptions(), module, sink);
    sink.sort();
    out.diagnostics.insert(out.diagnostics.end(), sink.diagnostics().begin(), sink.diagnostics().end());
    if (!generated || sink.hasErrors()) {
        out.status = CompileStatus::SourceErrors;
        return out;
    }
    // Through the container and the verifier like a program.stbc read from disk, so what runs
    // here is what the file would hold and the hash is the one the runtime reports.
    std::vector<std::uint8_t> bytes = bytecode::serialize(module);
    bytecode::VerifiedProgram loaded = bytecode::loadVerified(bytes);
    if (!loaded.ok()) {
        out.status = CompileStatus::Internal;
        out.failure = loaded.stage == bytecode::VerifiedProgram::Stage::Verify
                          ? "internal error: the generated program fails verification: " + loaded.error
                          : "internal error: the generated program does not decode: " + loaded.error;
        return out;
    }
    out.bytes = std::move(bytes);
    out.module = std::move(loaded.module);
    out.hash = loaded.hashHex();
    return out;
}

} // namespace takt::compiler
