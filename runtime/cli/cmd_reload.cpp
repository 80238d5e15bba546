// `takt reload [--project DIR] [--endpoint E --token-file F]`: builds the project like `takt
// build` (program.stbc written atomically), then sends it to a running runtime as
// bytecode.reload (an online change) and prints the reply's result on stdout.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "commands.h"
#include "ctl_support.h"
#include "takt/agent/control_client.h"
#include "takt/agent/project_build.h"
#include "takt/compiler/project.h"

namespace takt::cli {

namespace {

struct ReloadOptions {
    ControlConnectOptions connect; // connect.project is also the project built
};

int runReload(const ReloadOptions& options) {
    agent::ControlClientOptions client;
    if (const int rc = clientOptions("takt reload", options.connect, client, agent::Role::Engineer); rc != kExitOk) {
        return rc;
    }
    compiler::ProjectInput input;
    input.directory = options.connect.project;
    compiler::Project project = compiler::checkProject(input);
    const agent::BuildOutcome outcome = agent::buildProject(project);
    for (const compiler::ConfigError& e : project.configErrors) {
        std::fprintf(stderr, "%s\n", compiler::renderConfigError(e).c_str());
    }
    const std::string text =
        project.valid() ? compiler::renderHuman(outcome.diagnostics, *project.sources) : std::string();
    std::fwrite(text.data(), 1, text.size(), stderr);
    if (!outcome.failure.empty()) {
        std::fprintf(stderr, "takt reload: %s\n", outcome.failure.c_str());
    }
    if (!outcome.program) {
        std::fprintf(stderr, "takt reload: the build failed; nothing was sent\n");
        return outcome.exitCode != kExitOk ? outcome.exitCode : kExitBuildFailure;
    }
    std::ifstream in(*outcome.program, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
        std::fprintf(stderr, "takt reload: cannot read %s\n", outcome.program->c_str());
        return kExitInternal;
    }
    std::fprintf(stderr, "takt reload: built %s (%zu bytes, program hash %.16s); sending to %s\n",
                 outcome.program->c_str(), bytes.size(), outcome.hash.c_str(), client.endpoint.c_str());
    const std::string params =
        agent::bytecodeReloadParams(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
    return printReply("takt reload", "bytecode.reload", agent::controlCall(client, "bytecode.reload", params));
}

} // namespace

void registerReload(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<ReloadOptions>();
    CLI::App* cmd =
        app.add_subcommand("reload", "Build the project and load it into a running runtime (online change)");
    addConnectOptions(*cmd, options->connect);
    cmd->callback([options, &exitCode] { exitCode = runReload(*options); });
}

} // namespace takt::cli
