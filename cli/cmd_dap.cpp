// `takt dap`: the Debug Adapter Protocol over stdin and stdout (docs/debugging.md), for VS Code,
// nvim-dap or any DAP client; it attaches to a running runtime's control endpoint. As for
// `takt lsp`, the original stdout is kept for the framed messages and fd 1 points at stderr, so a
// stray print cannot corrupt the stream.
#include <csignal>
#include <cstdio>

#include <fcntl.h>
#include <unistd.h>

#include "commands.h"
#include "takt/agent/dap_adapter.h"

namespace takt::cli {

void registerDap(CLI::App& app, int& exitCode) {
    CLI::App* cmd = app.add_subcommand(
        "dap", "Debug Adapter Protocol over stdin/stdout: attach an editor's debugger to a running runtime");
    cmd->callback([&exitCode] {
        agent::DapAdapter adapter;
        std::signal(SIGPIPE, SIG_IGN); // a closed client ends the loop through write errors
        std::fflush(stdout);
        const int out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        if (out < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
            std::perror("takt dap");
            exitCode = kExitInternal;
            return;
        }
        exitCode = adapter.serve(STDIN_FILENO, out);
        ::close(out);
    });
}

} // namespace takt::cli
