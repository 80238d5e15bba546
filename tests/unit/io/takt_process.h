#pragma once
// A running `takt` binary (TAKT_BINARY) for end-to-end tests: stdout and stderr go to a log file
// the test reads while the process runs; conditions are polled with a deadline (a hang guard,
// never a timing assertion); the process is stopped with SIGTERM (SIGKILL when it hangs).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace takt::io::test {

class TaktProcess {
public:
    TaktProcess(const std::vector<std::string>& args, std::filesystem::path log) : log_(std::move(log)) {
        std::vector<std::string> argv{TAKT_BINARY};
        argv.insert(argv.end(), args.begin(), args.end());
        std::vector<char*> cargv;
        for (std::string& a : argv) {
            cargv.push_back(a.data());
        }
        cargv.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        if (posix_spawn(&pid_, TAKT_BINARY, &fa, nullptr, cargv.data(), environ) != 0) {
            pid_ = -1;
        }
        posix_spawn_file_actions_destroy(&fa);
    }
    TaktProcess(const TaktProcess&) = delete;
    TaktProcess& operator=(const TaktProcess&) = delete;
    ~TaktProcess() {
        if (pid_ > 0) {
            stop(5);
        }
    }

    [[nodiscard]] bool started() const { return pid_ > 0; }

    [[nodiscard]] std::string log() const {
        std::ifstream in(log_);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }

    // The first log line from byte `from` on that contains every one of `needles`; "" when none.
    [[nodiscard]] std::string lineWith(const std::vector<std::string>& needles, std::size_t from = 0) const {
        const std::string text = log();
        std::istringstream in(from < text.size() ? text.substr(from) : std::string());
        for (std::string line; std::getline(in, line);) {
            bool all = true;
            for (const std::string& n : needles) {
                all = all && line.find(n) != std::string::npos;
            }
            if (all) {
                return line;
            }
        }
        return {};
    }

    // Polls until a line from byte `from` on holds every needle (or the process ended, or
    // `limit` passed); returns that line or "".
    std::string waitForLine(const std::vector<std::string>& needles, std::size_t from = 0,
                            std::chrono::milliseconds limit = std::chrono::seconds(20)) {
        std::string line;
        waitFor([&] { return !(line = lineWith(needles, from)).empty(); }, limit);
        return line;
    }

    // Polls `done` until it holds, the process ended or `limit` passed.
    bool waitFor(const std::function<bool()>& done, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < end) {
            if (done()) {
                return true;
            }
            if (exited()) {
                return done();
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return done();
    }

    // SIGTERM, then the exit code (128 + signal when killed; -1 when it had to be killed after
    // `seconds`).
    int stop(double seconds = 20) {
        if (pid_ <= 0) {
            return exitCode_;
        }
        ::kill(pid_, SIGTERM);
        return wait(seconds);
    }

    // Waits for the process to end on its own (--for).
    int wait(double seconds) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (pid_ > 0 && !exited()) {
            if (std::chrono::steady_clock::now() > deadline) {
                ::kill(pid_, SIGKILL);
                int status = 0;
                ::waitpid(pid_, &status, 0);
                pid_ = -1;
                exitCode_ = -1;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return exitCode_;
    }

private:
    bool exited() {
        if (pid_ <= 0) {
            return true;
        }
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            exitCode_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            pid_ = -1;
            return true;
        }
        return false;
    }

    std::filesystem::path log_;
    pid_t pid_ = -1;
    int exitCode_ = -1;
};

} // namespace takt::io::test
