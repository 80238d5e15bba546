// The control-endpoint client of runtime.reload: JSON-RPC 2.0, one message per line.
#include "control_client.h"

#include <cerrno>
#include <cstring>

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "rpc_json.h"
#include "takt/agent/harness.h"

// RapidJSON 1.1 declares its member-iterator == and != as members taking an iterator of another
// constness; C++20 reversed candidates make FindMember() != MemberEnd() ambiguous for clang.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wambiguous-reversed-operator"
#endif

namespace takt::agent::detail {

namespace {

constexpr std::size_t kMaxReplyBytes = std::size_t{16} << 20;

struct Socket {
    int fd = -1;
    Socket() = default;
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;
    ~Socket() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

bool waitFor(int fd, short events, int timeoutMs) {
    pollfd p{fd, events, 0};
    for (;;) {
        const int r = ::poll(&p, 1, timeoutMs);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        return r > 0;
    }
}

bool connectEndpoint(const std::string& endpoint, Socket& s, std::string& error, int timeoutMs) {
    if (endpoint.starts_with("unix://")) {
        const std::string path = endpoint.substr(7);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        if (path.empty() || path.size() >= sizeof addr.sun_path) {
            error = fmt::format("invalid unix socket path in '{}'", endpoint);
            return false;
        }
        std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
        s.fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s.fd < 0 || ::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            error = fmt::format("cannot connect to {}: {}", endpoint, std::strerror(errno));
            return false;
        }
        return true;
    }
    if (!endpoint.starts_with("tcp://")) {
        error = endpoint.starts_with("tls://")
                    ? fmt::format("'{}': TLS control endpoints are not supported by the agent client yet", endpoint)
                    : fmt::format("'{}' is not a control endpoint (unix://PATH or tcp://HOST:PORT)", endpoint);
        return false;
    }
    const std::string hostPort = endpoint.substr(6);
    const std::size_t colon = hostPort.rfind(':');
    if (colon == std::string::npos || colon == 0) {
        error = fmt::format("'{}' needs tcp://HOST:PORT", endpoint);
        return false;
    }
    std::string host = hostPort.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    const std::string port = hostPort.substr(colon + 1);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &list); rc != 0) {
        error = fmt::format("cannot resolve '{}': {}", endpoint, ::gai_strerror(rc));
        return false;
    }
    error = fmt::format("cannot connect to {}", endpoint);
    for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
        s.fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (s.fd < 0) {
            continue;
        }
        int rc = ::connect(s.fd, ai->ai_addr, ai->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS && waitFor(s.fd, POLLOUT, timeoutMs)) {
            int soErr = 0;
            socklen_t len = sizeof soErr;
            ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &soErr, &len);
            rc = soErr == 0 ? 0 : -1;
            errno = soErr;
        }
        if (rc == 0) {
            ::freeaddrinfo(list);
            return true;
        }
        error = fmt::format("cannot connect to {}: {}", endpoint, std::strerror(errno));
        ::close(s.fd);
        s.fd = -1;
    }
    ::freeaddrinfo(list);
    return false;
}

bool sendLine(const Socket& s, const std::string& line, int timeoutMs) {
    std::size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::send(s.fd, line.data() + done, line.size() - done, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if ((errno == EAGAIN || errno == EWOULDBLOCK) && waitFor(s.fd, POLLOUT, timeoutMs)) {
                continue;
            }
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// Reads lines until the reply with `id` arrives (notifications are skipped).
bool readReply(const Socket& s, int id, std::string& buffer, rpc::ParsedLine& reply, int timeoutMs) {
    for (;;) {
        const std::size_t nl = buffer.find('\n');
        if (nl != std::string::npos) {
            const std::string line = buffer.substr(0, nl);
            buffer.erase(0, nl + 1);
            rpc::parseLine(line, kMaxJsonDepth, reply);
            if (reply.status == rpc::ParsedLine::Status::Ok && reply.doc.IsObject()) {
                auto it = reply.doc.FindMember("id");
                if (it != reply.doc.MemberEnd() && it->value.IsInt() && it->value.GetInt() == id) {
                    return true;
                }
            }
            continue;
        }
        if (buffer.size() > kMaxReplyBytes || !waitFor(s.fd, POLLIN, timeoutMs)) {
            return false;
        }
        char chunk[65536];
        const ssize_t n = ::recv(s.fd, chunk, sizeof chunk, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        buffer.append(chunk, static_cast<std::size_t>(n));
    }
}

std::string request(int id, const char* method, const char* key, const std::string& value) {
    rapidjson::StringBuffer buf;
    rpc::JsonWriter w(buf);
    w.StartObject();
    w.Key("jsonrpc");
    w.String("2.0");
    w.Key("id");
    w.Int(id);
    w.Key("method");
    w.String(method);
    w.Key("params");
    w.StartObject();
    w.Key(key);
    rpc::writeString(w, value);
    w.EndObject();
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

} // namespace

std::string base64(std::span<const std::uint8_t> bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int n =
        ::EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(), static_cast<int>(bytes.size()));
    out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return out;
}

ControlReply sendReload(const std::string& endpoint, const std::string& token, std::span<const std::uint8_t> program,
                        int timeoutMs) {
    ControlReply reply;
    Socket s;
    if (!connectEndpoint(endpoint, s, reply.message, timeoutMs)) {
        return reply;
    }
    std::string buffer;
    rpc::ParsedLine parsed;
    int id = 1;
    if (!token.empty()) {
        if (!sendLine(s, request(id, "auth.login", "token", token), timeoutMs) ||
            !readReply(s, id, buffer, parsed, timeoutMs)) {
            reply.message = fmt::format("no reply to auth.login from {}", endpoint);
            return reply;
        }
        if (auto e = parsed.doc.FindMember("error"); e != parsed.doc.MemberEnd()) {
            reply.reached = true;
            reply.json = rpc::toJson(e->value);
            reply.message = "auth.login refused";
            return reply;
        }
        ++id;
    }
    if (!sendLine(s, request(id, "bytecode.reload", "bytes", base64(program)), timeoutMs) ||
        !readReply(s, id, buffer, parsed, timeoutMs)) {
        reply.message = fmt::format("no reply to bytecode.reload from {}", endpoint);
        return reply;
    }
    reply.reached = true;
    if (auto r = parsed.doc.FindMember("result"); r != parsed.doc.MemberEnd()) {
        reply.ok = true;
        reply.json = rpc::toJson(r->value);
        return reply;
    }
    auto e = parsed.doc.FindMember("error");
    reply.json = e != parsed.doc.MemberEnd() ? rpc::toJson(e->value) : std::string("null");
    reply.message = "reload refused";
    if (e != parsed.doc.MemberEnd() && e->value.IsObject()) {
        auto m = e->value.FindMember("message");
        if (m != e->value.MemberEnd() && m->value.IsString()) {
            reply.message = m->value.GetString();
        }
    }
    return reply;
}

} // namespace takt::agent::detail
