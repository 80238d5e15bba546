#pragma once
// Child processes for the integration tests: the real `takt` binary and the peers it talks to
// (mosquitto, python Modbus servers, openssl, systemd-analyze). Waits poll with a deadline that
// is a hang guard, never a timing assertion; a child still running at the end is stopped with
// SIGTERM, then SIGKILL.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace takt::test {

// Where the child's stdout and stderr go when `ProcessOptions::log` is empty.
enum class Capture : std::uint8_t {
    None,     // the test's own stdout and stderr
    Stdout,   // stdout on a pipe (readLine), stderr the test's own
    Separate, // stdout and stderr on two pipes (collect)
    Merged,   // stderr into stdout, one pipe (collect, readLine)
};

struct ProcessOptions {
    std::filesystem::path cwd{};    // empty: the test's working directory
    std::vector<std::string> env{}; // NAME=VALUE entries in front of the inherited environment
    std::filesystem::path log{};    // non-empty: stdout and stderr both into this file (truncated)
    Capture capture = Capture::None;
    bool input = false; // stdin on a pipe (send, closeStdin)
};

// What a child that ran to its end wrote and how it ended.
struct RunResult {
    int exitCode = -1;
    std::string out;
    std::string err; // empty when stderr was merged into `out`
};

class Process {
public:
    // argv[0] is the program's path.
    explicit Process(const std::vector<std::string>& argv, const ProcessOptions& options = {});
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;
    ~Process(); // terminate() with a 5 s grace period

    [[nodiscard]] bool started() const { return started_; }
    [[nodiscard]] pid_t pid() const { return pid_; }
    // Reaps the child when it has ended; false from then on.
    bool running();
    bool signal(int sig) const;

    // The log file so far (ProcessOptions::log).
    [[nodiscard]] std::string log() const;
    // The first log line from byte `from` on that contains every one of `needles`; "" when none.
    [[nodiscard]] std::string lineWith(const std::vector<std::string>& needles, std::size_t from = 0) const;
    // Polls until a log line from byte `from` on holds every needle (or the process ended, or
    // `limit` passed); returns that line or "".
    std::string waitForLine(const std::vector<std::string>& needles, std::size_t from = 0,
                            std::chrono::milliseconds limit = std::chrono::seconds(20));
    // Polls `done` every 20 ms until it holds, the process ended or `limit` passed.
    bool waitFor(const std::function<bool()>& done, std::chrono::milliseconds limit = std::chrono::seconds(20));

    // The exit code (128 + signal when a signal ended it) once the child ends within `limit`;
    // nullopt while it runs on.
    std::optional<int> waitForExit(std::chrono::milliseconds limit);
    // Waits for the child to end on its own; SIGKILL after `limit`, then -1.
    int waitOrKill(std::chrono::milliseconds limit);
    // SIGTERM, then waitOrKill(grace): the exit code, -1 when it had to be killed.
    int terminate(std::chrono::milliseconds grace = std::chrono::seconds(20));

    // Pipes (ProcessOptions::input, ::capture).
    bool send(std::string_view bytes);
    void closeStdin();
    // The next stdout line without the newline; false on EOF or when `timeoutMs` passes first.
    bool readLine(std::string& line, int timeoutMs = 30000);
    // Reads stdout (and stderr) to their end, then waits for the exit.
    RunResult collect();

private:
    void reap(int status);

    pid_t pid_ = -1;
    bool started_ = false;
    int exitCode_ = -1;
    std::filesystem::path log_;
    int in_ = -1;
    int out_ = -1;
    int err_ = -1;
    std::string buffer_; // stdout read ahead of readLine
};

// Runs argv to its end; stdout and stderr are captured separately unless `options.capture`
// says otherwise.
RunResult run(const std::vector<std::string>& argv, ProcessOptions options = {});

// `s` as one single-quoted shell word.
std::string shellQuote(std::string_view s);

// `/bin/sh -c command` to its end (redirections and quoting in `command` work as in a shell).
RunResult runShell(const std::string& command, ProcessOptions options = {});

} // namespace takt::test
