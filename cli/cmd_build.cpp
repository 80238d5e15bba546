// `takt build [--project DIR] [--json]`: the front end, the back end and the verifier, then
// program.stbc written atomically into the project directory (a running `takt run` or a reload
// never sees a half-written file). --json prints one JSON document on stdout (CONFIG.md).
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "takt/agent/project_build.h"
#include "takt/compiler/project.h"

namespace takt::cli {

namespace {

struct BuildOptions {
    std::string project;
    bool ci = false;
};

int runBuild(const BuildOptions& options) {
    compiler::ProjectInput input;
    input.directory = options.project;
    compiler::Project project = compiler::checkProject(input);
    agent::BuildOutcome outcome = agent::buildProject(project);
    if (options.ci) {
        std::string doc = agent::renderBuildJson(project, outcome) + "\n";
        std::fwrite(doc.data(), 1, doc.size(), stdout);
        return outcome.exitCode;
    }
    for (const compiler::ConfigError& e : project.configErrors) {
        std::fprintf(stderr, "%s\n", compiler::renderConfigError(e).c_str());
    }
    std::string text = project.valid() ? compiler::renderHuman(outcome.diagnostics, *project.sources) : std::string();
    std::fwrite(text.data(), 1, text.size(), stderr);
    if (!outcome.failure.empty()) {
        std::fprintf(stderr, "takt build: %s\n", outcome.failure.c_str());
    }
    if (!project.valid()) {
        std::fprintf(stderr, "takt build: invalid project '%s'\n", project.directory.c_str());
    } else if (outcome.program) {
        std::fprintf(stderr, "takt build: wrote %s (%zu bytes, %zu sources, program hash %.16s)\n",
                     outcome.program->c_str(), outcome.bytes, project.sourcePaths.size(), outcome.hash.c_str());
    } else {
        std::fprintf(stderr, "takt build: failed, program.stbc not written\n");
    }
    return outcome.exitCode;
}

} // namespace

void registerBuild(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<BuildOptions>();
    CLI::App* cmd = app.add_subcommand("build", "Compile the project's src/ to program.stbc");
    cmd->add_option("--project", options->project, "Project directory (default: the current directory)");
    cmd->add_flag("--json", options->ci, "Print one JSON document on stdout");
    cmd->add_flag("--ci", options->ci, "The same as --json (its earlier name)")->group(""); // hidden alias
    cmd->callback([options, &exitCode] { exitCode = runBuild(*options); });
}

} // namespace takt::cli
