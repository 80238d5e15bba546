// `takt harness`: the deterministic NDJSON harness on stdin/stdout (seed 001, PROTOCOLS.md).
#include <iostream>
#include <memory>

#include "commands.h"
#include "takt/agent/harness.h"

namespace takt::cli {

void registerHarness(CLI::App& app, int& exitCode) {
    CLI::App* cmd = app.add_subcommand("harness", "Deterministic NDJSON harness on stdin/stdout");
    auto execution = std::make_shared<engine::Execution>(engine::Execution::Interpreter);
    addExecutionOption(*cmd, *execution);
    cmd->callback([&exitCode, execution] {
        std::ios::sync_with_stdio(false);
        agent::Harness harness(agent::defaultHarnessDeps(*execution));
        harness.serve(std::cin, std::cout);
        exitCode = kExitOk;
    });
}

} // namespace takt::cli
