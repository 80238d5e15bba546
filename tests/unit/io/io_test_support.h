#pragma once
// Shared pieces of the driver tests: a process image, driver construction from TOML text,
// free loopback ports, waiting for an effect with a deadline, and child processes (peers).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "takt/io/driver.h"

extern char** environ;

namespace takt::io::test {

struct Image {
    std::vector<std::uint8_t> inputs, outputs, memory;
    explicit Image(std::size_t bytes = 256) : inputs(bytes, 0), outputs(bytes, 0), memory(bytes, 0) {}
    ImageView view() { return {inputs, outputs, memory, 0, 0}; }
    std::uint16_t word(const std::vector<std::uint8_t>& area, std::size_t byte) const {
        std::uint16_t v = 0;
        std::memcpy(&v, area.data() + byte, 2);
        return v;
    }
    static void setWord(std::vector<std::uint8_t>& area, std::size_t byte, std::uint16_t v) {
        std::memcpy(area.data() + byte, &v, 2);
    }
    static bool bit(const std::vector<std::uint8_t>& area, std::size_t pos) {
        return ((area[pos / 8] >> (pos % 8)) & 1) != 0;
    }
    static void setBit(std::vector<std::uint8_t>& area, std::size_t pos, bool v) {
        if (v) {
            area[pos / 8] = static_cast<std::uint8_t>(area[pos / 8] | (1U << (pos % 8)));
        } else {
            area[pos / 8] = static_cast<std::uint8_t>(area[pos / 8] & ~(1U << (pos % 8)));
        }
    }
};

inline DriverSpec spec(std::string_view name, std::string_view paramsToml) {
    DriverSpec s;
    s.name = std::string(name);
    s.params = toml::parse(paramsToml);
    s.source = {"io.toml", "io.params"};
    return s;
}

// A driver created through the registry and initialised; fails the test on error.
inline std::unique_ptr<Driver> makeDriver(std::string_view name, std::string_view paramsToml) {
    auto d = createDriver(name);
    EXPECT_NE(d, nullptr) << name;
    std::string error;
    EXPECT_TRUE(d->init(spec(name, paramsToml), error)) << error;
    return d;
}

// The error init() gives for `paramsToml` ("" when it accepts them).
inline std::string initError(std::string_view name, std::string_view paramsToml) {
    auto d = createDriver(name);
    std::string error;
    if (d->init(spec(name, paramsToml), error)) {
        return "";
    }
    return error;
}

// A loopback TCP port nobody listens on right now.
inline std::uint16_t freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

// Calls `step` until `done` holds or `limit` passes; the limit is a hang guard, not a timing
// assertion.
inline bool eventually(const std::function<bool()>& done, const std::function<void()>& step = {},
                       std::chrono::milliseconds limit = std::chrono::seconds(15)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (step) {
            step();
        }
        if (done()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return done();
}

// One scan cycle against a driver: inputs in, outputs out.
inline void cycle(Driver& d, Image& img) {
    d.readInputs(img.view());
    d.writeOutputs(img.view());
}

// A child process, killed (SIGTERM, then SIGKILL) when destroyed.
class Child {
public:
    Child() = default;
    explicit Child(const std::vector<std::string>& argv) { start(argv); }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child() { stop(); }

    bool start(const std::vector<std::string>& argv) {
        std::vector<char*> args;
        for (const auto& a : argv) {
            args.push_back(const_cast<char*>(a.c_str()));
        }
        args.push_back(nullptr);
        return ::posix_spawn(&pid_, args[0], nullptr, nullptr, args.data(), environ) == 0;
    }
    void stop(int sig = SIGTERM) {
        if (pid_ > 0) {
            ::kill(pid_, sig);
            int status = 0;
            for (int i = 0; i < 200 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            if (::waitpid(pid_, &status, WNOHANG) == 0) {
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, &status, 0);
            }
            pid_ = -1;
        }
    }
    [[nodiscard]] bool running() const { return pid_ > 0 && ::kill(pid_, 0) == 0; }

private:
    pid_t pid_ = -1;
};

// True once something accepts TCP connections on 127.0.0.1:port.
inline bool listening(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
}

class TempDir {
public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "takt-io-XXXXXX").string();
        path_ = ::mkdtemp(tmpl.data());
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }
    std::filesystem::path write(const std::string& name, const std::string& text) const {
        std::ofstream(path_ / name) << text;
        return path_ / name;
    }

private:
    std::filesystem::path path_;
};

} // namespace takt::io::test
