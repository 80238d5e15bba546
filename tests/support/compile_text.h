#pragma once
// One ST text through the one compile path (compileProgram) with a test's code generator
// options: what the back-end and execution tests compile with.
#include <string>

#include "takt/compiler/codegen.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/project.h"

namespace takt::test {

struct CompiledText {
    compiler::Project project; // owns the sources the diagnostics refer to
    compiler::CompiledProgram program;

    [[nodiscard]] std::string rendered() const { return compiler::renderHuman(program.diagnostics, *project.sources); }
};

inline CompiledText compileText(const std::string& text, const compiler::CodegenOptions& options = {},
                                compiler::Dialect dialect = compiler::Dialect::Codesys) {
    compiler::BuildOptions build;
    build.dialect = dialect;
    build.overflow = options.overflowTrap ? compiler::OverflowMode::Trap : compiler::OverflowMode::Wrap;
    build.addressMode = options.addressMode;
    CompiledText out;
    out.project = compiler::checkSources({{"main.st", text}}, build);
    out.program = compiler::compileProgram(out.project);
    return out;
}

} // namespace takt::test
