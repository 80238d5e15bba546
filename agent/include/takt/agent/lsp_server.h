#pragma once
// `takt lsp`: a Language Server Protocol 3.17 server over stdio (docs/editor.md). One message
// body in, the bodies to send back out; serve() adds the Content-Length framing and runs until
// the client's `exit`.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace takt::agent {

struct LspOptions {
    // The folder used when the client names none in initialize (empty: the current directory).
    std::filesystem::path workspace;
};

class LspServer {
public:
    explicit LspServer(LspOptions options);
    ~LspServer();
    LspServer(const LspServer&) = delete;
    LspServer& operator=(const LspServer&) = delete;

    // One message body (JSON). Returns the bodies to send, in order: the response to a request,
    // and notifications (published diagnostics).
    [[nodiscard]] std::vector<std::string> handleMessage(std::string_view body);
    // The client sent `exit`: the process ends with exitCode() (0 after `shutdown`, else 1).
    [[nodiscard]] bool exited() const;
    [[nodiscard]] int exitCode() const;
    // How many edits were answered by re-checking the edited file alone (docs/editor.md).
    [[nodiscard]] std::size_t incrementalChecks() const;

    // Reads framed messages from `inFd` and writes framed replies to `outFd` until `exit` or
    // the end of input. Returns the process exit code.
    int serve(int inFd, int outFd);

    struct State;

private:
    std::unique_ptr<State> state_;
};

// The methods the server answers, from its method table (docs/editor.md lists each; a test checks).
[[nodiscard]] std::vector<std::string_view> lspMethodNames();

// The Content-Length framing of one outgoing body.
[[nodiscard]] std::string lspFrame(std::string_view body);

} // namespace takt::agent
