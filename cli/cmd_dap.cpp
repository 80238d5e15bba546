// `takt dap`: the Debug Adapter Protocol over stdin and stdout (docs/debugging.md), for VS Code,
// nvim-dap or any DAP client; it attaches to a running runtime's control endpoint, or launches a
// project with this same binary (`takt run`). As for `takt lsp`, the original stdout is kept for
// the framed messages and fd 1 points at stderr, so a stray print cannot corrupt the stream.
#include <csignal>
#include <cstdio>

#include <fcntl.h>
#include <unistd.h>

#include "commands.h"
#include "takt/agent/dap_adapter.h"

namespace takt::cli {

namespace {

volatile std::sig_atomic_t stopRequested = 0;

extern "C" void onStopSignal(int /*signal*/) {
    stopRequested = 1;
}

// The binary launch runs: this one, whatever name or path started it, even if its file was replaced
// or removed since (the child resolves its own /proc/self/exe, the adapter's, at exec).
constexpr const char* kSelfExecutable = "/proc/self/exe";

} // namespace

void registerDap(CLI::App& app, int& exitCode) {
    CLI::App* cmd =
        app.add_subcommand("dap", "Debug Adapter Protocol over stdin/stdout: attach an editor's debugger to "
                                  "a running runtime, or launch a project to debug it");
    cmd->callback([&exitCode] {
        agent::DapAdapter adapter(kSelfExecutable);
        std::signal(SIGPIPE, SIG_IGN); // a closed client ends the loop through write errors
        // A signal ends the session as the end of input does: a launched runtime is stopped
        // first (no SA_RESTART, so the wait for input returns at once).
        struct sigaction stop {};
        stop.sa_handler = onStopSignal;
        sigemptyset(&stop.sa_mask);
        for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
            ::sigaction(sig, &stop, nullptr);
        }
        std::fflush(stdout);
        const int out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        if (out < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
            std::perror("takt dap");
            exitCode = kExitInternal;
            return;
        }
        exitCode = adapter.serve(STDIN_FILENO, out, &stopRequested);
        ::close(out);
    });
}

} // namespace takt::cli
