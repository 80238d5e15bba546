// `takt test [--project DIR] [--filter S] [--list] [--output human|json|junit|tap] [--timeout S]
// [--cycle-time MS] [--max-cycles N]`
// (CONFIG.md): exit 12 when a test fails, 13 on timeout, 11 when the project does not build.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "takt/agent/test_runner.h"

namespace takt::cli {

void registerTest(CLI::App& app, int& exitCode) {
    struct Args {
        std::string project;
        std::string filter;
        bool list = false;
        std::string output = "human";
        double timeout = 0;
        double cycleTimeMs = 10;
        std::uint64_t maxCycles = 100'000;
        engine::Execution execution = engine::Execution::Interpreter;
    };
    auto args = std::make_shared<Args>();
    CLI::App* cmd = app.add_subcommand("test", "Run TEST_PROGRAM / TEST_FUNCTION_BLOCK POUs");
    cmd->add_option("--project", args->project, "Project directory");
    cmd->add_option("--filter", args->filter, "Only tests whose name contains this text");
    cmd->add_flag("--list", args->list, "List the tests without running them");
    cmd->add_option("--output", args->output, "human, json, junit or tap")
        ->check(CLI::IsMember({"human", "json", "junit", "tap"}));
    cmd->add_flag_callback(
        "--json", [args] { args->output = "json"; }, "The same as --output json");
    cmd->add_option("--timeout", args->timeout, "Seconds for the whole run (0 = none)");
    cmd->add_option("--cycle-time", args->cycleTimeMs,
                    "Virtual milliseconds between the cycles of a test that calls TEST_FINISHED() (default 10)")
        ->check(CLI::Range(0.001, 86'400'000.0));
    cmd->add_option("--max-cycles", args->maxCycles,
                    "Cycles a test that calls TEST_FINISHED() may run before it is an error (default 100000)")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000}));
    addExecutionOption(*cmd, args->execution);
    cmd->callback([args, &exitCode] {
        agent::TestOptions options;
        options.project = args->project;
        options.filter = args->filter;
        options.listOnly = args->list;
        options.timeoutS = args->timeout;
        options.execution = args->execution;
        options.cycleTimeNs = std::llround(args->cycleTimeMs * 1e6);
        options.maxCycles = args->maxCycles;
        const agent::TestReport report = agent::runTests(options);
        if (report.buildFailed) {
            std::fputs(report.buildMessage.c_str(), stderr);
            exitCode = kExitBuildFailure;
            return;
        }
        std::string text;
        if (args->output == "json") {
            text = agent::renderTestJson(report);
        } else if (args->output == "junit") {
            text = agent::renderTestJunit(report);
        } else if (args->output == "tap") {
            text = agent::renderTestTap(report);
        } else {
            text = agent::renderTestHuman(report);
        }
        std::fwrite(text.data(), 1, text.size(), stdout);
        exitCode = report.timedOut ? kExitTimeout : (report.failed + report.errors > 0 ? kExitTestFailure : kExitOk);
    });
}

} // namespace takt::cli
