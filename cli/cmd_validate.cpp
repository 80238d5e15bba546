// `takt validate [--project DIR] [--board NAME] [--json]`: runtime.toml, the project's I/O, the
// drivers' params and program.stbc, without starting anything (takt/agent/validate.h).
// `takt boards`: the board files takt knows (CONFIG.md "boards/").
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "takt/agent/validate.h"
#include "takt/io/board.h"

namespace takt::cli {

namespace {

struct ValidateOptions {
    std::string project;
    std::string board;
    bool ci = false;
};

int runValidate(const ValidateOptions& options) {
    agent::ValidateRequest request;
    request.project = options.project;
    request.board = options.board;
    const agent::ValidateReport report = agent::validateProject(request);
    const int code = report.ok() ? kExitOk : report.sourceErrorsOnly() ? kExitBuildFailure : kExitInvalidProject;
    if (options.ci) {
        const std::string doc = agent::renderValidateJson(report) + "\n";
        std::fwrite(doc.data(), 1, doc.size(), stdout);
        return code;
    }
    for (const engine::ConfigDiagnostic& d : report.diagnostics) {
        std::fprintf(stderr, "%s\n", engine::formatDiagnostic(d).c_str());
    }
    if (!report.ok()) {
        std::fprintf(stderr, "takt validate: %s\n",
                     report.sourceErrorsOnly() ? "the sources do not compile" : "invalid configuration");
        return code;
    }
    std::string drivers;
    for (const std::string& d : report.ioDrivers) {
        drivers += drivers.empty() ? d : ", " + d;
    }
    std::printf("takt validate: ok");
    if (report.resource) {
        std::printf(" - resource %s", report.resource->c_str());
    }
    if (!report.ioSource.empty()) {
        std::printf(", I/O from %s (%s)", report.ioSource.c_str(), drivers.c_str());
    }
    if (report.sourcesCompiled) {
        std::printf(", sources compile");
        if (report.sourceWarnings > 0) {
            std::printf(" (%zu warning%s: takt check lists them)", report.sourceWarnings,
                        report.sourceWarnings == 1 ? "" : "s");
        }
    }
    if (report.program) {
        std::printf(", program.stbc %.16s", report.programHash.c_str());
    }
    std::printf("\n");
    return code;
}

int runBoards() {
    const std::vector<io::BoardSummary> boards = io::listBoards();
    if (boards.empty()) {
        std::fprintf(stderr, "takt boards: no board files in %s\n", io::boardsDirectory().c_str());
        return kExitInvalidProject;
    }
    for (const io::BoardSummary& b : boards) {
        std::printf("%-18s %-8s %s%s\n", b.name.c_str(), b.arch.c_str(), b.description.c_str(),
                    b.valid ? "" : "  [invalid: run takt validate --board]");
    }
    return kExitOk;
}

} // namespace

void registerValidate(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<ValidateOptions>();
    CLI::App* cmd = app.add_subcommand("validate", "Check runtime.toml, the I/O configuration and program.stbc");
    cmd->add_option("--project", options->project, "Project directory (default: the current directory)");
    cmd->add_option("--board", options->board, "Board name or board file to check (and use when there is no io.toml)");
    cmd->add_flag("--json", options->ci, "Print one JSON document on stdout");
    cmd->add_flag("--ci", options->ci, "The same as --json (its earlier name)")->group(""); // hidden alias
    cmd->callback([options, &exitCode] { exitCode = runValidate(*options); });

    CLI::App* boards = app.add_subcommand("boards", "List the board files (name, arch, description)");
    boards->callback([&exitCode] { exitCode = runBoards(); });
}

} // namespace takt::cli
