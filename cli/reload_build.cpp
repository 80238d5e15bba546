#include "reload_build.h"

#include <cstdio>
#include <fstream>
#include <iterator>

#include "commands.h"
#include "takt/agent/project_build.h"
#include "takt/compiler/project.h"

namespace takt::cli {

int buildForChange(const char* command, const std::string& projectDir, BuiltProgram& out) {
    compiler::ProjectInput input;
    input.directory = projectDir;
    compiler::Project project = compiler::checkProject(input);
    const agent::BuildOutcome outcome = agent::buildProject(project);
    for (const compiler::ConfigError& e : project.configErrors) {
        std::fprintf(stderr, "%s\n", compiler::renderConfigError(e).c_str());
    }
    const std::string text =
        project.valid() ? compiler::renderHuman(outcome.diagnostics, *project.sources) : std::string();
    std::fwrite(text.data(), 1, text.size(), stderr);
    if (!outcome.failure.empty()) {
        std::fprintf(stderr, "%s: %s\n", command, outcome.failure.c_str());
    }
    if (!outcome.program) {
        std::fprintf(stderr, "%s: the build failed; nothing was sent\n", command);
        return outcome.exitCode != kExitOk ? outcome.exitCode : kExitBuildFailure;
    }
    std::ifstream in(*outcome.program, std::ios::binary);
    out.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
        std::fprintf(stderr, "%s: cannot read %s\n", command, outcome.program->c_str());
        return kExitInternal;
    }
    out.path = *outcome.program;
    out.hash = outcome.hash;
    return kExitOk;
}

} // namespace takt::cli
