#pragma once
// Shared pieces of the tests that drive a real `takt run` through its control endpoint: a temp
// project, the runtime as a child process (output into the project's run.log), `takt build`,
// a ControlClient per test thread and JSON parsing of the replies.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "takt/agent/control_client.h"

extern char** environ;

namespace takt::agent::live {

namespace fs = std::filesystem;

class TempDir {
public:
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "takt-ctl-XXXXXX").string();
        path_ = ::mkdtemp(tmpl.data());
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    [[nodiscard]] const fs::path& path() const { return path_; }
    fs::path write(const std::string& name, const std::string& text, mode_t mode = 0644) const {
        fs::path p = path_ / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
        ::chmod(p.c_str(), mode);
        return p;
    }

private:
    fs::path path_;
};

inline std::string readText(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<std::uint8_t> readBytes(const fs::path& p) {
    const std::string s = readText(p);
    return {s.begin(), s.end()};
}

// A loopback TCP port nobody listens on right now.
inline std::uint16_t freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return 0;
    }
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

// Runs a shell command; its exit status (-1 when it did not exit normally).
inline int shell(const std::string& cmd) {
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// `takt build --project dir`; the program.stbc bytes (empty on failure).
inline std::vector<std::uint8_t> build(const fs::path& dir) {
    const int rc = shell(std::string(TAKT_BINARY) + " build --project " + dir.string() + " > " +
                         (dir / "build.log").string() + " 2>&1");
    EXPECT_EQ(rc, 0) << readText(dir / "build.log");
    return rc == 0 ? readBytes(dir / "program.stbc") : std::vector<std::uint8_t>{};
}

// `takt run --project dir --for 60s` as a child with stdout and stderr in dir/run.log; SIGTERM
// (then SIGKILL) when stopped or destroyed.
class Runtime {
public:
    explicit Runtime(const fs::path& dir, const std::string& duration = "60s") : log_(dir / "run.log") {
        std::vector<std::string> argv = {TAKT_BINARY, "run", "--project", dir.string(), "--for", duration};
        std::vector<char*> args;
        for (auto& a : argv) {
            args.push_back(a.data());
        }
        args.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        if (::posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) {
            pid_ = -1;
        }
        posix_spawn_file_actions_destroy(&fa);
    }
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;
    ~Runtime() { stop(); }

    [[nodiscard]] pid_t pid() const { return pid_; }
    [[nodiscard]] std::string log() const { return readText(log_); }

    // The exit code once the child exits within `limit` (a hang guard); nullopt if it runs on.
    std::optional<int> waitExit(std::chrono::milliseconds limit) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (pid_ > 0) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            if (std::chrono::steady_clock::now() > end) {
                return std::nullopt;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return std::nullopt;
    }

    // SIGTERM; the exit code (SIGKILL after 5 s: reported as 128 + 9).
    int stop() {
        if (pid_ <= 0) {
            return -1;
        }
        ::kill(pid_, SIGTERM);
        if (const auto rc = waitExit(std::chrono::seconds(5))) {
            return *rc;
        }
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return 128 + SIGKILL;
    }

private:
    fs::path log_;
    pid_t pid_ = -1;
};

inline rapidjson::Document parse(const std::string& json) {
    rapidjson::Document d;
    d.Parse(json.c_str());
    EXPECT_FALSE(d.HasParseError()) << json;
    return d;
}

inline ControlClientOptions clientOptions(const std::string& endpoint, const std::string& token = {}) {
    ControlClientOptions o;
    o.endpoint = endpoint;
    o.token = token;
    o.timeoutMs = 10000;
    return o;
}

// Waits (hang guard 20 s) until the endpoint answers agent.ping; false if the runtime exited or
// never answered.
inline bool waitServing(Runtime& rt, const ControlClientOptions& options) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    ControlClientOptions o = options;
    o.token.clear();
    o.timeoutMs = 2000;
    while (std::chrono::steady_clock::now() < end) {
        if (controlCall(o, "agent.ping", "").reached) {
            return true;
        }
        if (rt.waitExit(std::chrono::milliseconds(0))) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

// Connects (and logs in); fails the test when it cannot.
inline std::unique_ptr<ControlClient> connected(const ControlClientOptions& options) {
    auto c = std::make_unique<ControlClient>(options);
    const ControlReply r = c->connect();
    EXPECT_TRUE(r.reached && r.ok) << r.message << " " << r.json;
    return c;
}

// A call whose result is returned parsed; fails the test on an error reply.
inline rapidjson::Document result(ControlClient& c, std::string_view method, std::string_view params) {
    const ControlReply r = c.call(method, params);
    EXPECT_TRUE(r.reached && r.ok) << method << ": " << r.code << " " << r.message << " " << r.json;
    return parse(r.ok ? r.json : std::string("{}"));
}

// Number of open file descriptors of a process.
inline std::size_t fdCount(pid_t pid) {
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
         !ec && it != fs::directory_iterator(); it.increment(ec)) {
        ++n;
    }
    return n;
}

// Percentile (0..1) of a sample, by nearest rank.
inline double percentile(std::vector<double> v, double q) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(std::lround(q * static_cast<double>(v.size() - 1)));
    return v[std::min(i, v.size() - 1)];
}

} // namespace takt::agent::live
