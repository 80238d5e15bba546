// The child runtime of `takt dap` launch (dap_launch.h).
#include "dap/dap_launch.h"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string_view>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "takt/agent/control.h"
#include "takt/common/fd_io.h"
#include "takt/common/hex.h"

namespace takt::agent::detail {

namespace {

constexpr std::size_t kMaxTmpDir = 64;     // the socket's path must fit sockaddr_un (108 bytes)
constexpr std::size_t kStderrTail = 4'000; // of a failed launch's stderr, in its message
constexpr int kConnectRetryMs = 20;

// A folder only this user can enter (mkdtemp makes it 0700): the socket and the token live there.
std::string privateDir(std::string& error) {
    const char* env = std::getenv("TMPDIR");
    std::string base = env != nullptr && *env != '\0' && std::strlen(env) < kMaxTmpDir ? env : "/tmp";
    std::string tmpl = base + "/takt-dap-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
        error = fmt::format("cannot create a private folder in {}: {}", base, std::strerror(errno));
        return {};
    }
    return tmpl;
}

// A random engineer token in a 0600 file (takt run reads it as a token file).
bool writeToken(const std::string& path, std::string& error) {
    std::array<unsigned char, 24> bytes{};
    if (::getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
        error = fmt::format("no random bytes for the session token: {}", std::strerror(errno));
        return false;
    }
    const std::string text = common::hexBytes(bytes) + '\n';
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    const bool ok = fd >= 0 && common::writeAll(fd, text);
    if (!ok) {
        error = fmt::format("{}: {}", path, std::strerror(errno));
    }
    if (fd >= 0) {
        ::close(fd);
    }
    return ok;
}

void sleepMs(int ms) {
    const timespec t{0, static_cast<long>(ms) * 1'000'000L};
    ::nanosleep(&t, nullptr);
}

} // namespace

std::unique_ptr<LaunchedRuntime> LaunchedRuntime::start(const LaunchSpec& spec, std::string& error) {
    std::unique_ptr<LaunchedRuntime> r(new LaunchedRuntime());
    std::error_code ec;
    r->project_ = std::filesystem::absolute(spec.project, ec).lexically_normal().string();
    if (r->project_.size() > 1 && r->project_.back() == '/') {
        r->project_.pop_back();
    }
    if (!std::filesystem::is_directory(r->project_, ec)) {
        error = fmt::format("project '{}' is not a directory", r->project_);
        return nullptr;
    }
    r->dir_ = privateDir(error);
    if (r->dir_.empty()) {
        return nullptr;
    }
    r->endpoint_ = "unix://" + r->dir_ + "/control.sock";
    r->tokenFile_ = r->dir_ + "/session.token";
    if (!writeToken(r->tokenFile_, error)) {
        return nullptr;
    }
    std::vector<std::string> args = {spec.executable,    "run",        "--project",          r->project_,
                                     "--debug-endpoint", r->endpoint_, "--debug-token-file", r->tokenFile_};
    if (!spec.execution.empty()) {
        args.insert(args.end(), {"--execution", spec.execution});
    }
    std::vector<char*> argv;
    for (std::string& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    std::array<int, 2> out{-1, -1};
    std::array<int, 2> err{-1, -1};
    std::array<int, 2> in{-1, -1}; // its stdin: the write end only here, closed when the adapter ends
    if (::pipe2(out.data(), O_CLOEXEC) != 0 || ::pipe2(err.data(), O_CLOEXEC) != 0 ||
        ::pipe2(in.data(), O_CLOEXEC) != 0) {
        error = fmt::format("pipe: {}", std::strerror(errno));
        for (const int fd : {out[0], out[1], err[0], err[1], in[0], in[1]}) {
            if (fd >= 0) {
                ::close(fd);
            }
        }
        return nullptr;
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        // Only async-signal-safe calls until exec. The adapter's stop handlers go first: a
        // parent-death SIGTERM between prctl and exec must end this child, not set a flag in a
        // copy of the adapter. Its own process group, so that stopping it reaches what it starts
        // too; SIGTERM from the kernel when the adapter dies (not for a binary with file
        // capabilities: there its stdin reaching EOF stops it, see below).
        for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
            ::signal(sig, SIG_DFL);
        }
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent) {
            ::_exit(127);
        }
        ::signal(SIGPIPE, SIG_DFL); // the adapter ignores it; exec keeps an ignored signal ignored
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(err[1], STDERR_FILENO);
        // takt run --debug-endpoint stops on EOF on its stdin: however the adapter ends, the
        // kernel closes the write end it alone holds.
        ::dup2(in[0], STDIN_FILENO);
        ::execv(argv[0], argv.data());
        constexpr std::string_view kFailed = "takt dap: cannot execute the takt binary for launch\n";
        [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kFailed.data(), kFailed.size());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    ::close(in[0]);
    r->outFd_ = out[0];
    r->errFd_ = err[0];
    r->inFd_ = in[1];
    if (pid < 0) {
        error = fmt::format("fork: {}", std::strerror(errno));
        return nullptr;
    }
    r->pid_ = pid;
    ::setpgid(pid, pid); // as the child does: whichever runs first, the group exists before a stop
    for (const int fd : {r->outFd_, r->errFd_}) {
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    return r;
}

LaunchedRuntime::~LaunchedRuntime() {
    if (pid_ > 0) {
        (void)stop(kStopGraceMs);
    }
    for (const int fd : {outFd_, errFd_, inFd_}) {
        if (fd >= 0) {
            ::close(fd);
        }
    }
    if (!dir_.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
}

void LaunchedRuntime::readPipes() {
    std::array<char, 8192> buf{};
    for (const auto& [fd, category] : {std::pair{&outFd_, "stdout"}, std::pair{&errFd_, "stderr"}}) {
        while (*fd >= 0) {
            const ssize_t n = ::read(*fd, buf.data(), buf.size());
            if (n > 0) {
                pending_.emplace_back(category, std::string(buf.data(), static_cast<std::size_t>(n)));
                if (fd == &errFd_) {
                    stderrTail_.append(buf.data(), static_cast<std::size_t>(n));
                    if (stderrTail_.size() > 2 * kStderrTail) {
                        stderrTail_.erase(0, stderrTail_.size() - kStderrTail);
                    }
                }
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else {
                if (n == 0) { // the child and everything it started closed this pipe
                    ::close(*fd);
                    *fd = -1;
                }
                break;
            }
        }
    }
}

std::vector<std::pair<std::string, std::string>> LaunchedRuntime::takeOutput() {
    readPipes();
    return std::exchange(pending_, {});
}

std::unique_ptr<ControlClient> LaunchedRuntime::connectWhenServing(std::chrono::seconds timeout,
                                                                   const volatile std::sig_atomic_t* stop,
                                                                   std::string& error) {
    ControlClientOptions options;
    options.endpoint = endpoint_;
    if (!readTokenFile(tokenFile_, options.token, error)) {
        return nullptr;
    }
    const std::string socket = endpoint_.substr(std::string_view("unix://").size());
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        readPipes();
        if (const std::optional<int> code = exitCode()) {
            readPipes();
            std::string tail = stderrTail_.size() > kStderrTail
                                   ? "…" + stderrTail_.substr(stderrTail_.size() - kStderrTail)
                                   : stderrTail_;
            error = fmt::format("ended with exit code {} before it served its control endpoint{}{}", *code,
                                tail.empty() ? "" : ":\n", tail);
            return nullptr;
        }
        if (stop != nullptr && *stop != 0) {
            error = "was stopped before it served its control endpoint: the adapter is ending";
            return nullptr;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            error = fmt::format("did not serve its control endpoint within {} s", timeout.count());
            return nullptr;
        }
        std::error_code ec;
        if (std::filesystem::exists(socket, ec)) { // bound; it answers once it listens
            auto client = std::make_unique<ControlClient>(options);
            const ControlReply r = client->connect();
            if (r.reached && r.ok) {
                // Both sides have read the token: a secret is not left behind even by an adapter
                // that is killed (the runtime removes its socket when it stops).
                ::unlink(tokenFile_.c_str());
                return client;
            }
            if (r.reached) {
                error = "refused the session's login: " + r.message;
                return nullptr;
            }
        }
        sleepMs(kConnectRetryMs);
    }
}

void LaunchedRuntime::reap(int status) {
    exitCode_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    // Whatever it started and left behind goes with it: the group outlives its leader only while
    // a member lives, so this pid is still this group's.
    ::kill(-pid_, SIGKILL);
    pid_ = -1;
}

std::optional<int> LaunchedRuntime::exitCode() {
    if (pid_ > 0) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            reap(status);
        }
    }
    return exitCode_;
}

int LaunchedRuntime::stop(int graceMs) {
    if (pid_ <= 0) {
        return exitCode_.value_or(0);
    }
    ::kill(pid_, SIGTERM);
    constexpr int kStepMs = 10;
    for (int waited = 0; waited < graceMs; waited += kStepMs) {
        readPipes(); // a child blocked on a full pipe would not end within the grace
        if (exitCode()) {
            return *exitCode_;
        }
        sleepMs(kStepMs);
    }
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reap(status);
    return *exitCode_;
}

} // namespace takt::agent::detail
