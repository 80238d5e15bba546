// `takt agent serve [--workspace DIR]`: the Agent API v1 (seed 000, PROTOCOLS.md) on stdin and
// stdout. Responses are the only bytes on stdout: the original stdout is kept for them and
// fd 1 is pointed at stderr, so a stray print anywhere cannot corrupt the framing.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "commands.h"
#include "takt/agent/agent_server.h"

namespace takt::cli {

void registerAgent(CLI::App& app, int& exitCode) {
    auto workspace = std::make_shared<std::string>();
    CLI::App* agent = app.add_subcommand("agent", "Machine-facing automation surfaces");
    agent->require_subcommand(1);
    CLI::App* serve = agent->add_subcommand("serve", "Agent API v1: JSON-RPC 2.0 over stdin/stdout");
    serve->add_option("--workspace", *workspace, "Workspace root (default: the current directory)");
    serve->callback([workspace, &exitCode] {
        agent::AgentOptions options;
        options.workspace = *workspace;
        agent::AgentServer server(options);
        if (!server.ok()) {
            std::fprintf(stderr, "takt agent serve: %s\n", server.error().c_str());
            exitCode = kExitInvalidProject;
            return;
        }
        std::signal(SIGPIPE, SIG_IGN); // a closed client ends the loop through write errors
        std::fflush(stdout);
        const int out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        if (out < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
            std::perror("takt agent serve");
            exitCode = kExitInternal;
            return;
        }
        exitCode = server.serve(STDIN_FILENO, out) == 0 ? kExitOk : kExitInternal;
        ::close(out);
    });
}

} // namespace takt::cli
