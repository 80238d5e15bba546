// `takt check [--project DIR | FILE…] [--json] [--dialect codesys|iec] [--shared-variables]`: the whole front
// end without writing anything. Human output (diagnostics and a summary line) goes to stderr; --json prints one
// document on stdout in the shape `takt build --json` also uses (CONFIG.md). --shared-variables prints, on
// stdout, the variables each pair of tasks shares (as text, or with --json as its own document).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "shared_variables.h"
#include "takt/agent/project_build.h"
#include "takt/compiler/project.h"
#include "takt/compiler/sema/model.h"

namespace takt::cli {

namespace {

struct CheckOptions {
    std::string project;
    std::vector<std::string> files;
    bool json = false;
    bool sharedVariables = false;
    std::string dialect; // empty: runtime.toml's [build] dialect (default "codesys")
};

std::string plural(std::size_t n, std::string_view word) {
    return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

int runCheck(const CheckOptions& options) {
    compiler::ProjectInput input;
    input.directory = options.project;
    for (const std::string& f : options.files) {
        input.files.emplace_back(f);
    }
    std::optional<compiler::Dialect> dialect;
    if (options.dialect == "iec") {
        dialect = compiler::Dialect::Iec;
    } else if (options.dialect == "codesys") {
        dialect = compiler::Dialect::Codesys;
    } else if (options.dialect == "openplc") {
        dialect = compiler::Dialect::Openplc;
    }
    compiler::Project project = compiler::checkProject(input, dialect);

    if (options.sharedVariables && project.valid() && project.model != nullptr) {
        const std::string listing =
            options.json ? renderSharedVariablesJson(*project.model) : renderSharedVariables(*project.model);
        std::fwrite(listing.data(), 1, listing.size(), stdout);
    }
    if (options.json && options.sharedVariables) {
        if (!project.valid()) {
            std::string doc = agent::renderCheckJson(project);
            doc += '\n';
            std::fwrite(doc.data(), 1, doc.size(), stdout);
        }
    } else if (options.json) {
        std::string doc = agent::renderCheckJson(project);
        doc += '\n';
        std::fwrite(doc.data(), 1, doc.size(), stdout);
    } else if (!project.valid()) {
        for (const compiler::ConfigError& e : project.configErrors) {
            std::fprintf(stderr, "%s\n", compiler::renderConfigError(e).c_str());
        }
        std::fprintf(stderr, "takt check: invalid project '%s'\n", project.directory.c_str());
    } else {
        std::string text = compiler::renderHuman(project.diagnostics, *project.sources);
        text += fmt::format("{}, {} ({} checked)\n", plural(project.errorCount, "error"),
                            plural(project.warningCount, "warning"), plural(project.sourcePaths.size(), "file"));
        std::fwrite(text.data(), 1, text.size(), stderr);
    }
    if (!project.valid()) {
        return kExitInvalidProject;
    }
    return project.errorCount > 0 ? kExitBuildFailure : kExitOk;
}

} // namespace

void registerCheck(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<CheckOptions>();
    CLI::App* cmd = app.add_subcommand("check", "Check ST sources and report diagnostics; writes nothing");
    CLI::Option* project =
        cmd->add_option("--project", options->project, "Project directory (default: the current directory)");
    CLI::Option* files = cmd->add_option("files", options->files, "Check these .st/.pou files instead of a project");
    project->excludes(files);
    cmd->add_flag("--json", options->json, "Print one JSON document on stdout");
    cmd->add_flag("--shared-variables", options->sharedVariables,
                  "List, per pair of tasks, the variables both use and whether each reads or writes them");
    cmd->add_option("--dialect", options->dialect,
                    "codesys: CODESYS leniencies are W1xxx warnings; iec: they are errors; openplc: codesys plus what "
                    "matiec accepts (default: runtime.toml [build] dialect, else codesys)")
        ->check(CLI::IsMember({"codesys", "iec", "openplc"}));
    cmd->callback([options, &exitCode] { exitCode = runCheck(*options); });
}

} // namespace takt::cli
