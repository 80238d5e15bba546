#pragma once
// A running `takt agent serve` child with pipes on stdin and stdout, for tests and benchmarks
// that speak to the real binary line by line.
#include <cerrno>
#include <csignal>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "takt/bytecode/container.h"

extern char** environ; // NOLINT(readability-redundant-declaration)

namespace takt::test {

class AgentProcess {
public:
    AgentProcess(const std::string& binary, const std::string& workspace) {
        std::signal(SIGPIPE, SIG_IGN);
        int in[2];
        int out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
            return;
        }
        posix_spawn_file_actions_t actions;
        ::posix_spawn_file_actions_init(&actions);
        ::posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
        ::posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
        std::string a0 = binary, a1 = "agent", a2 = "serve", a3 = "--workspace", a4 = workspace;
        char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), nullptr};
        if (::posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv, environ) != 0) {
            pid_ = -1;
        }
        ::posix_spawn_file_actions_destroy(&actions);
        ::close(in[0]);
        ::close(out[1]);
        toChild_ = in[1];
        fromChild_ = out[0];
    }
    ~AgentProcess() { finish(); }
    AgentProcess(const AgentProcess&) = delete;
    AgentProcess& operator=(const AgentProcess&) = delete;

    [[nodiscard]] bool running() const { return pid_ > 0; }

    bool send(std::string_view bytes) { return bytecode::writeAll(toChild_, bytes); }

    // The next output line (without the newline); empty with ok=false on EOF or timeout.
    bool readLine(std::string& line, int timeoutMs = 30000) {
        for (;;) {
            const std::size_t nl = buffer_.find('\n');
            if (nl != std::string::npos) {
                line = buffer_.substr(0, nl);
                buffer_.erase(0, nl + 1);
                return true;
            }
            pollfd p{fromChild_, POLLIN, 0};
            if (::poll(&p, 1, timeoutMs) <= 0) {
                return false;
            }
            char chunk[65536];
            const ssize_t n = ::read(fromChild_, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                return false;
            }
            buffer_.append(chunk, static_cast<std::size_t>(n));
        }
    }

    // One request line, one response line.
    std::string call(std::string_view request) {
        std::string line;
        if (!send(std::string(request) + "\n") || !readLine(line)) {
            return {};
        }
        return line;
    }

    // Closes stdin and waits; returns the exit code (-1 when killed).
    int finish() {
        if (toChild_ >= 0) {
            ::close(toChild_);
            toChild_ = -1;
        }
        int status = 0;
        if (pid_ > 0) {
            while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
            pid_ = -1;
            exit_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        if (fromChild_ >= 0) {
            ::close(fromChild_);
            fromChild_ = -1;
        }
        return exit_;
    }

private:
    pid_t pid_ = -1;
    int toChild_ = -1;
    int fromChild_ = -1;
    int exit_ = -1;
    std::string buffer_;
};

} // namespace takt::test
