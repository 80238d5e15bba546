#include "support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ; // NOLINT(readability-redundant-declaration)

namespace takt::test {
namespace {

void closeFd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

// Appends what `fd` has to `to`; false once it reached EOF (or failed).
bool drain(int fd, std::string& to) {
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        to.append(chunk, static_cast<std::size_t>(n));
        return true;
    }
}

} // namespace

Process::Process(const std::vector<std::string>& argv, const ProcessOptions& options) : log_(options.log) {
    std::vector<std::string> args = argv;
    std::vector<char*> cargs;
    for (std::string& a : args) {
        cargs.push_back(a.data());
    }
    cargs.push_back(nullptr);
    std::vector<std::string> env = options.env;
    for (char** e = environ; *e != nullptr; ++e) {
        env.emplace_back(*e);
    }
    std::vector<char*> cenv;
    for (std::string& e : env) {
        cenv.push_back(e.data());
    }
    cenv.push_back(nullptr);

    int in[2] = {-1, -1};
    int out[2] = {-1, -1};
    int err[2] = {-1, -1};
    const bool pipeOut = options.log.empty() && options.capture != Capture::None;
    const bool pipeErr = options.log.empty() && options.capture == Capture::Separate;
    if ((options.input && ::pipe2(in, O_CLOEXEC) != 0) || (pipeOut && ::pipe2(out, O_CLOEXEC) != 0) ||
        (pipeErr && ::pipe2(err, O_CLOEXEC) != 0)) {
        for (int* p : {in, out, err}) {
            closeFd(p[0]);
            closeFd(p[1]);
        }
        return;
    }
    if (options.input) {
        std::signal(SIGPIPE, SIG_IGN); // a child that exits early must not take the test with it
    }
    posix_spawn_file_actions_t fa;
    ::posix_spawn_file_actions_init(&fa);
    if (!options.cwd.empty()) {
        ::posix_spawn_file_actions_addchdir_np(&fa, options.cwd.c_str());
    }
    if (options.input) {
        ::posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
    }
    if (!options.log.empty()) {
        ::posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, options.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    } else if (pipeOut) {
        ::posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
        if (options.capture != Capture::Stdout) {
            ::posix_spawn_file_actions_adddup2(&fa, pipeErr ? err[1] : out[1], STDERR_FILENO);
        }
    }
    started_ = ::posix_spawn(&pid_, cargs[0], &fa, nullptr, cargs.data(), cenv.data()) == 0;
    ::posix_spawn_file_actions_destroy(&fa);
    if (!started_) {
        pid_ = -1;
    }
    closeFd(in[0]);
    closeFd(out[1]);
    closeFd(err[1]);
    in_ = in[1];
    out_ = out[0];
    err_ = err[0];
}

Process::~Process() {
    terminate(std::chrono::seconds(5));
    closeFd(in_);
    closeFd(out_);
    closeFd(err_);
}

void Process::reap(int status) {
    exitCode_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
}

bool Process::running() {
    if (pid_ <= 0) {
        return false;
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        reap(status);
        return false;
    }
    return true;
}

bool Process::signal(int sig) const {
    return pid_ > 0 && ::kill(pid_, sig) == 0;
}

std::string Process::log() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string Process::lineWith(const std::vector<std::string>& needles, std::size_t from) const {
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

std::string Process::waitForLine(const std::vector<std::string>& needles, std::size_t from,
                                 std::chrono::milliseconds limit) {
    std::string line;
    waitFor([&] { return !(line = lineWith(needles, from)).empty(); }, limit);
    return line;
}

bool Process::waitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (done()) {
            return true;
        }
        if (!running()) {
            return done();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
}

std::optional<int> Process::waitForExit(std::chrono::milliseconds limit) {
    if (!started_) {
        return std::nullopt;
    }
    const auto end = std::chrono::steady_clock::now() + limit;
    while (running()) {
        if (std::chrono::steady_clock::now() > end) {
            return std::nullopt;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return exitCode_;
}

int Process::waitOrKill(std::chrono::milliseconds limit) {
    if (pid_ > 0 && !waitForExit(limit)) {
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        exitCode_ = -1;
    }
    return exitCode_;
}

int Process::terminate(std::chrono::milliseconds grace) {
    if (running()) {
        ::kill(pid_, SIGTERM);
    }
    return waitOrKill(grace);
}

bool Process::send(std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = in_ >= 0 ? ::write(in_, bytes.data(), bytes.size()) : -1;
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

void Process::closeStdin() {
    closeFd(in_);
}

bool Process::readLine(std::string& line, int timeoutMs) {
    for (;;) {
        const std::size_t nl = buffer_.find('\n');
        if (nl != std::string::npos) {
            line = buffer_.substr(0, nl);
            buffer_.erase(0, nl + 1);
            return true;
        }
        pollfd p{out_, POLLIN, 0};
        if (out_ < 0 || ::poll(&p, 1, timeoutMs) <= 0 || !drain(out_, buffer_)) {
            return false;
        }
    }
}

RunResult Process::collect() {
    RunResult r;
    r.out = std::move(buffer_);
    buffer_.clear();
    closeStdin();
    // Both pipes at once: a child blocked on a full stderr pipe would never close stdout.
    while (out_ >= 0 || err_ >= 0) {
        pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        if (fds[0].revents != 0 && !drain(out_, r.out)) {
            closeFd(out_);
        }
        if (fds[1].revents != 0 && !drain(err_, r.err)) {
            closeFd(err_);
        }
    }
    if (pid_ > 0) {
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        reap(status);
    }
    r.exitCode = exitCode_;
    return r;
}

RunResult run(const std::vector<std::string>& argv, ProcessOptions options) {
    if (options.capture == Capture::None) {
        options.capture = Capture::Separate;
    }
    Process p(argv, options);
    return p.started() ? p.collect() : RunResult{};
}

std::string shellQuote(std::string_view s) {
    std::string q = "'";
    for (char c : s) {
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return q + "'";
}

RunResult runShell(const std::string& command, ProcessOptions options) {
    return run({"/bin/sh", "-c", command}, std::move(options));
}

} // namespace takt::test
