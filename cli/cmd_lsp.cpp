// `takt lsp [--workspace DIR]`: the language server (docs/editor.md) on stdin and stdout. As for
// `takt agent serve`, the original stdout is kept for the framed messages and fd 1 points at
// stderr, so a stray print cannot corrupt the stream.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "commands.h"
#include "takt/agent/lsp_server.h"

namespace takt::cli {

void registerLsp(CLI::App& app, int& exitCode) {
    auto workspace = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("lsp", "Language Server Protocol 3.17 server over stdin/stdout (for editors)");
    cmd->add_option("--workspace", *workspace,
                    "Folder used when the editor names none (default: the current directory)");
    cmd->callback([workspace, &exitCode] {
        agent::LspOptions options;
        options.workspace = *workspace;
        agent::LspServer server(options);
        std::signal(SIGPIPE, SIG_IGN); // a closed client ends the loop through write errors
        std::fflush(stdout);
        const int out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        if (out < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
            std::perror("takt lsp");
            exitCode = kExitInternal;
            return;
        }
        exitCode = server.serve(STDIN_FILENO, out);
        ::close(out);
    });
}

} // namespace takt::cli
