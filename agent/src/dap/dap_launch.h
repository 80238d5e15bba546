#pragma once
// `takt dap` launch (docs/debugging.md): the project run as `takt run` runs it, by the same
// executable, as a child of the adapter. The child serves its control endpoint on a Unix socket in
// a private folder (mode 0700) with debugging on, through takt run's hidden --debug-endpoint and
// --debug-token-file, so the project's files stay as they are. Its stdout and stderr come back
// through pipes. The child is stopped (SIGTERM, a bounded wait, then SIGKILL of its process group)
// when this object goes. If the adapter dies first (even by SIGKILL) the child stops as on SIGTERM:
// its stdin is a pipe whose write end only the adapter holds, and takt run --debug-endpoint stops on
// EOF there; it also gets SIGTERM from the kernel (PR_SET_PDEATHSIG, which the kernel drops for a
// binary with file capabilities). What the runtime started (the OPC UA server's Node.js process, in
// a process group of its own) ends with it: its channel to the runtime closes.
#include <array>
#include <chrono>
#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "takt/agent/control_client.h"

namespace takt::agent::detail {

// How long a launched runtime has to stop after SIGTERM (safe state, last retain save) before SIGKILL.
constexpr int kStopGraceMs = 5'000;

struct LaunchSpec {
    std::string executable; // the takt binary
    std::string project;    // the project directory (relative: to the working directory)
    std::string execution;  // empty, "interpreter" or "native"
};

class LaunchedRuntime {
public:
    // Starts the child; nullptr with `error` when it could not be started (no such project folder).
    static std::unique_ptr<LaunchedRuntime> start(const LaunchSpec& spec, std::string& error);
    ~LaunchedRuntime();
    LaunchedRuntime(const LaunchedRuntime&) = delete;
    LaunchedRuntime& operator=(const LaunchedRuntime&) = delete;

    [[nodiscard]] const std::string& endpoint() const { return endpoint_; }
    [[nodiscard]] const std::string& tokenFile() const { return tokenFile_; }
    [[nodiscard]] pid_t pid() const { return pid_; }
    [[nodiscard]] const std::string& project() const { return project_; } // absolute
    [[nodiscard]] std::string name() const { return project_.substr(project_.rfind('/') + 1); }

    // Waits until the child serves its endpoint (it compiles the project first) and connects with
    // the session's token; nullptr with `error` when the child ended first (its exit code and the
    // end of its stderr: the build's file:line diagnostics) or did not answer within `timeout`.
    // What it wrote meanwhile waits for takeOutput().
    // `*stop` set (the adapter's stop signal) ends the wait early with `error`.
    [[nodiscard]] std::unique_ptr<ControlClient>
    connectWhenServing(std::chrono::seconds timeout, const volatile std::sig_atomic_t* stop, std::string& error);

    // What the child wrote since the last call, as (category "stdout" | "stderr", text), in the
    // order read.
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> takeOutput();
    // The pipes of its stdout and stderr still open (-1 for a closed one): what the adapter waits
    // on beside the client's requests, so output is forwarded when it comes.
    [[nodiscard]] std::array<int, 2> outputFds() const { return {outFd_, errFd_}; }
    // The child's exit code once it has ended (128 + the signal when a signal ended it).
    [[nodiscard]] std::optional<int> exitCode();
    // SIGTERM, up to `graceMs` for the child to end (its output read meanwhile), then SIGKILL; its exit
    // code.
    int stop(int graceMs);

private:
    LaunchedRuntime() = default;
    void reap(int status);
    void readPipes();

    pid_t pid_ = -1;
    std::optional<int> exitCode_;
    int outFd_ = -1;
    int errFd_ = -1;
    int inFd_ = -1; // the write end of the child's stdin: never written, its close is the EOF
    std::string project_;
    std::string dir_;
    std::string endpoint_;
    std::string tokenFile_;
    std::vector<std::pair<std::string, std::string>> pending_; // read, not yet taken
    std::string stderrTail_;                                   // for the error of a launch that fails
};

} // namespace takt::agent::detail
