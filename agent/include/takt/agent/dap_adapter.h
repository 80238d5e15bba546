#pragma once
// `takt dap`: a Debug Adapter Protocol adapter over stdio (docs/debugging.md). It attaches to a
// running runtime's control endpoint (or launches a project as `takt run` does and attaches to
// it) and translates the client's requests to the debug.* methods (and var.write for
// setVariable), and the runtime's debug_stopped events to DAP `stopped` events. The adapter holds no debugging state
// the runtime does not: when it ends, its control connection closes and the runtime removes its breakpoints and resumes
// its halted tasks.
#include <csignal>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace takt::agent {

class DapAdapter {
public:
    // `runExecutable`: the takt binary a launch request starts (`takt run`); empty refuses launch.
    explicit DapAdapter(std::string runExecutable = {});
    ~DapAdapter();
    DapAdapter(const DapAdapter&) = delete;
    DapAdapter& operator=(const DapAdapter&) = delete;

    // One message body (JSON) from the client; returns the bodies to send, in order (the response,
    // then any events).
    [[nodiscard]] std::vector<std::string> handleMessage(std::string_view body);
    // Events from the runtime since the last call (stopped, terminated), as bodies to send.
    [[nodiscard]] std::vector<std::string> pollRuntime();
    // The client sent `disconnect` (or the runtime went away): serve() returns.
    [[nodiscard]] bool finished() const;

    // Reads framed messages from `inFd` and writes framed messages to `outFd` until disconnect,
    // the end of input, `*stop` set (by a signal handler), or an attached runtime closing the
    // connection. A launched runtime is stopped before it returns. Returns the process exit code.
    int serve(int inFd, int outFd, const volatile std::sig_atomic_t* stop = nullptr);

    struct State;

private:
    std::unique_ptr<State> state_;
};

} // namespace takt::agent
