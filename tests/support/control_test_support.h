#pragma once
// Shared pieces of the control-endpoint tests: a ControlTarget that records what reaches it, a
// raw line client over real sockets (so tests can send any bytes), and JSON helpers.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <rapidjson/document.h>

#include "takt/agent/control.h"

namespace takt::test {

// Methods: runtime.status (viewer, answers at once), runtime.pause (operator, answers at the next
// poll), var.write (engineer), bytecode.reload (engineer), big (viewer, a 64 KiB result).
class RecordingTarget final : public agent::ControlTarget {
public:
    [[nodiscard]] std::span<const agent::ControlMethod> methods() const override {
        static constexpr std::string_view kAny = R"({"type":"object"})";
        constexpr agent::ControlHandler call = [](agent::ControlTarget& t, std::string_view m,
                                                  const rapidjson::Value& p, agent::ControlReplyFn r) {
            static_cast<RecordingTarget&>(t).call(std::string(m), p, std::move(r));
        };
        static const agent::ControlMethod kTable[] = {
            {"runtime.status", "", kAny, kAny, agent::Role::Viewer, call},
            {"runtime.pause", "", kAny, kAny, agent::Role::Operator, call},
            {"var.write", "", kAny, kAny, agent::Role::Engineer, call},
            {"bytecode.reload", "", kAny, kAny, agent::Role::Engineer, call},
            {"big", "", kAny, kAny, agent::Role::Viewer, call},
        };
        return kTable;
    }
    void call(const std::string& method, const rapidjson::Value& params, agent::ControlReplyFn reply) {
        {
            std::lock_guard lock(mutex_);
            calls_.push_back(method);
        }
        if (method == "runtime.pause") {
            deferred_.push_back(std::move(reply));
            return;
        }
        if (method == "big") {
            reply(agent::ControlAnswer::result("\"" + std::string(65536, 'x') + "\""));
            return;
        }
        if (method == "bytecode.reload") {
            auto it = params.FindMember("bytes");
            const std::size_t n = it != params.MemberEnd() && it->value.IsString() ? it->value.GetStringLength() : 0;
            reply(agent::ControlAnswer::result(R"({"base64_chars":)" + std::to_string(n) + "}"));
            return;
        }
        reply(agent::ControlAnswer::result(R"({"state":"running","method":")" + method + "\"}"));
    }
    void poll(std::vector<std::string>& events) override {
        for (auto& r : deferred_) {
            r(agent::ControlAnswer::result(R"({"state":"paused"})"));
        }
        deferred_.clear();
        std::lock_guard lock(mutex_);
        for (auto& e : pendingEvents_) {
            events.push_back(std::move(e));
        }
        pendingEvents_.clear();
    }

    void emit(std::string event) {
        std::lock_guard lock(mutex_);
        pendingEvents_.push_back(std::move(event));
    }
    [[nodiscard]] std::vector<std::string> calls() const {
        std::lock_guard lock(mutex_);
        return calls_;
    }

private:
    mutable std::mutex mutex_;
    std::vector<std::string> calls_;
    std::vector<std::string> pendingEvents_;
    std::vector<agent::ControlReplyFn> deferred_; // server thread only
};

// A client socket speaking raw lines.
class LineClient {
public:
    enum class Read : std::uint8_t { Line, Eof, Timeout };

    // `source`: the local IPv4 address to connect from (127.0.0.2, ...); empty: the kernel's pick.
    explicit LineClient(const std::string& endpoint, const std::string& source = {}) {
        if (endpoint.starts_with("unix://")) {
            const std::string path = endpoint.substr(7);
            sockaddr_un addr{};
            addr.sun_family = AF_UNIX;
            std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
            fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
                closeFd();
            }
            return;
        }
        const std::size_t colon = endpoint.rfind(':');
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(endpoint.substr(colon + 1))));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (!source.empty()) {
            sockaddr_in local{};
            local.sin_family = AF_INET;
            if (::inet_pton(AF_INET, source.c_str(), &local.sin_addr) != 1 ||
                ::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
                closeFd();
                return;
            }
        }
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            closeFd();
        }
    }
    ~LineClient() { closeFd(); }
    LineClient(const LineClient&) = delete;
    LineClient& operator=(const LineClient&) = delete;

    [[nodiscard]] bool connected() const { return fd_ >= 0; }

    bool send(std::string_view bytes) {
        std::size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
            if (n <= 0) {
                return false;
            }
            done += static_cast<std::size_t>(n);
        }
        return true;
    }

    Read read(std::string& line, int timeoutMs = 10000) {
        for (;;) {
            if (const std::size_t nl = buffer_.find('\n'); nl != std::string::npos) {
                line = buffer_.substr(0, nl);
                buffer_.erase(0, nl + 1);
                return Read::Line;
            }
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, timeoutMs) <= 0) {
                return Read::Timeout;
            }
            char chunk[65536];
            const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
            if (n <= 0) {
                return Read::Eof;
            }
            buffer_.append(chunk, static_cast<std::size_t>(n));
        }
    }

    // The next line, or "" on EOF/timeout.
    std::string line(int timeoutMs = 10000) {
        std::string l;
        return read(l, timeoutMs) == Read::Line ? l : std::string();
    }

    // One request line, its reply line.
    std::string call(std::string_view request) {
        if (!send(std::string(request) + "\n")) {
            return {};
        }
        return line();
    }

    std::string login(const std::string& token, int id = 1) {
        return call(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"auth.login","params":{"token":")" +
                    token + "\"}}");
    }

    void closeFd() {
        if (fd_ >= 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }

private:
    int fd_ = -1;
    std::string buffer_;
};

inline rapidjson::Document parseJson(const std::string& text) {
    rapidjson::Document d;
    d.Parse(text.c_str(), text.size());
    return d;
}

// The error code of a reply line, 0 when it is a result (or not JSON).
inline int errorCode(const std::string& line) {
    const rapidjson::Document d = parseJson(line);
    if (!d.IsObject() || !d.HasMember("error") || !d["error"].IsObject() || !d["error"].HasMember("code")) {
        return 0;
    }
    return d["error"]["code"].GetInt();
}

inline bool isResult(const std::string& line) {
    const rapidjson::Document d = parseJson(line);
    return d.IsObject() && d.HasMember("result");
}

inline std::string request(int id, std::string_view method, std::string_view params = {}) {
    std::string r = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + std::string(method) + "\"";
    if (!params.empty()) {
        r += ",\"params\":" + std::string(params);
    }
    return r + "}";
}

// Polls `condition` until it holds or `timeoutMs` passes (a wait with a deadline, not a timing
// assertion).
template <class Condition> bool eventually(Condition condition, int timeoutMs = 10000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return condition();
}

} // namespace takt::test
