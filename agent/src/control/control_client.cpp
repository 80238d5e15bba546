// The control-endpoint client: JSON-RPC 2.0, one message per line, over a Unix socket, TCP, or
// TLS through OpenSSL (blocking socket with send/receive timeouts; poll() for waiting).
#include "takt/agent/control_client.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "control/control_auth.h"
#include "control/control_client.h"
#include "rpc/rpc_envelope.h"
#include "rpc/rpc_framer.h"
#include "takt/agent/harness.h"

namespace takt::agent {

namespace {

constexpr std::size_t kMaxReplyBytes = std::size_t{64} << 20;

std::string sslError(std::string_view what) {
    const unsigned long e = ::ERR_get_error();
    char buf[256] = "unknown TLS error";
    if (e != 0) {
        ::ERR_error_string_n(e, buf, sizeof buf);
    }
    ::ERR_clear_error();
    return fmt::format("{}: {}", what, buf);
}

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

void setTimeouts(int fd, int timeoutMs) {
    timeval tv{timeoutMs / 1000, static_cast<suseconds_t>((timeoutMs % 1000) * 1000)};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// A connected socket (blocking, with timeouts) or an error.
int connectSocket(const detail::Endpoint& ep, const std::string& text, int timeoutMs, std::string& error) {
    if (ep.kind == detail::Endpoint::Kind::Unix) {
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, ep.path.c_str(), ep.path.size() + 1);
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            error = fmt::format("cannot connect to {}: {}", text, std::strerror(errno));
            if (fd >= 0) {
                ::close(fd);
            }
            return -1;
        }
        setTimeouts(fd, timeoutMs);
        return fd;
    }
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    const std::string port = std::to_string(ep.port);
    if (const int rc = ::getaddrinfo(ep.host.c_str(), port.c_str(), &hints, &list); rc != 0) {
        error = fmt::format("cannot resolve '{}': {}", text, ::gai_strerror(rc));
        return -1;
    }
    error = fmt::format("cannot connect to {}", text);
    for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
        const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            continue;
        }
        int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            if (waitFor(fd, POLLOUT, timeoutMs)) {
                int soErr = 0;
                socklen_t len = sizeof soErr;
                ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soErr, &len);
                rc = soErr == 0 ? 0 : -1;
                errno = soErr;
            } else {
                errno = ETIMEDOUT;
            }
        }
        if (rc == 0) {
            ::freeaddrinfo(list);
            ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
            setTimeouts(fd, timeoutMs);
            return fd;
        }
        error = fmt::format("cannot connect to {}: {}", text, std::strerror(errno));
        ::close(fd);
    }
    ::freeaddrinfo(list);
    return -1;
}

} // namespace

struct ControlClient::Impl {
    ControlClientOptions options;
    detail::Endpoint endpoint;
    int fd = -1;
    SSL_CTX* ctx = nullptr;
    SSL* ssl = nullptr;
    std::string buffer;
    bool closed = false; // the peer closed the connection
    rpc::LineFramer framer{kMaxReplyBytes};
    int nextId = 1;
    rpc::ParsedLine parsed;
    // The server asked for a client certificate and none was configured. With TLS 1.3 the
    // handshake still completes on the client side and the server's refusal only arrives as an
    // alert on the first read, which would otherwise look like a server that never answered.
    bool certificateRequested = false;
    std::string tlsFailure; // the TLS error that ended a read or write, if any
    bool keepNotifications = false;
    std::vector<std::string> kept; // lines that came during a call (keepNotifications)

    // OpenSSL asks this when the server requests a certificate and the context has none.
    static int onCertificateRequest(SSL* s, X509** /*x509*/, EVP_PKEY** /*pkey*/) {
        static_cast<Impl*>(::SSL_get_ex_data(s, 0))->certificateRequested = true;
        return 0; // send none
    }

    // Why the TLS session failed, in the user's terms, or empty when TLS is not the reason.
    [[nodiscard]] std::string tlsProblem() const {
        if (tlsFailure.empty()) {
            return {}; // a timeout or a plain close: not for TLS to explain
        }
        if (certificateRequested) {
            return fmt::format("{} requires a client certificate: pass --cert FILE --key FILE (a certificate "
                               "signed by the CA in the endpoint's [runtime.control.tls] client_ca; {})",
                               options.endpoint, tlsFailure);
        }
        if (!options.certFile.empty()) {
            return fmt::format("{} closed the TLS session ({}); it may not accept the client certificate '{}'",
                               options.endpoint, tlsFailure, options.certFile);
        }
        return fmt::format("{} closed the TLS session ({})", options.endpoint, tlsFailure);
    }

    // Notes why a TLS read, write or handshake failed: the server's alert, or the connection
    // closed or reset under it. A server that refuses a missing client certificate may close
    // before its alert is read (a reset can discard it), so a close counts as a failure too.
    void noteTlsFailure(int r) {
        const int err = errno;
        const int kind = ::SSL_get_error(ssl, r);
        if (kind == SSL_ERROR_SSL && ::ERR_peek_error() != 0) {
            std::string e = sslError("TLS");
            tlsFailure = e.substr(5); // without "TLS: "
            return;
        }
        ::ERR_clear_error();
        if (kind == SSL_ERROR_SYSCALL && r < 0 && err != 0) {
            tlsFailure = std::strerror(err);
        } else if (kind == SSL_ERROR_SYSCALL || kind == SSL_ERROR_ZERO_RETURN || kind == SSL_ERROR_SSL) {
            tlsFailure = "the connection was closed";
        }
    }

    ~Impl() {
        if (ssl != nullptr) {
            ::SSL_free(ssl);
        }
        if (ctx != nullptr) {
            ::SSL_CTX_free(ctx);
        }
        if (fd >= 0) {
            ::close(fd);
        }
    }

    bool startTls(std::string& error) {
        ctx = ::SSL_CTX_new(::TLS_client_method());
        if (ctx == nullptr) {
            error = sslError("TLS");
            return false;
        }
        ::SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
        ::SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
        const bool caOk = options.caFile.empty()
                              ? ::SSL_CTX_set_default_verify_paths(ctx) == 1
                              : ::SSL_CTX_load_verify_locations(ctx, options.caFile.c_str(), nullptr) == 1;
        if (!caOk) {
            error = sslError(fmt::format("CA file '{}'", options.caFile));
            return false;
        }
        if (options.certFile.empty() && options.keyFile.empty()) {
            ::SSL_CTX_set_client_cert_cb(ctx, &Impl::onCertificateRequest);
        } else {
            if (::SSL_CTX_use_certificate_chain_file(ctx, options.certFile.c_str()) != 1) {
                error = sslError(fmt::format("client certificate '{}'", options.certFile));
                return false;
            }
            const std::string& key = options.keyFile.empty() ? options.certFile : options.keyFile;
            if (::SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
                error = sslError(fmt::format("client key '{}'", key));
                return false;
            }
        }
        ssl = ::SSL_new(ctx);
        if (ssl == nullptr || ::SSL_set_fd(ssl, fd) != 1) {
            error = sslError("TLS");
            return false;
        }
        ::SSL_set_ex_data(ssl, 0, this);
        // The certificate must name the host: an IP address as an IP SAN, else a DNS name.
        in6_addr probe{};
        const bool isIp = ::inet_pton(AF_INET, endpoint.host.c_str(), &probe) == 1 ||
                          ::inet_pton(AF_INET6, endpoint.host.c_str(), &probe) == 1;
        X509_VERIFY_PARAM* param = ::SSL_get0_param(ssl);
        if (isIp) {
            ::X509_VERIFY_PARAM_set1_ip_asc(param, endpoint.host.c_str());
        } else {
            ::SSL_set_tlsext_host_name(ssl, endpoint.host.c_str());
            ::SSL_set1_host(ssl, endpoint.host.c_str());
        }
        if (const int r = ::SSL_connect(ssl); r != 1) {
            const long verify = ::SSL_get_verify_result(ssl);
            noteTlsFailure(r);
            if (verify != X509_V_OK) {
                error = fmt::format("TLS handshake with {}: server certificate not accepted: {}", options.endpoint,
                                    ::X509_verify_cert_error_string(verify));
            } else if (certificateRequested && !tlsFailure.empty()) {
                error = tlsProblem(); // TLS 1.2: a missing client certificate fails the handshake itself
            } else {
                error = fmt::format("TLS handshake with {}: {}", options.endpoint,
                                    tlsFailure.empty() ? std::string("failed") : tlsFailure);
            }
            return false;
        }
        return true;
    }

    bool sendAll(std::string_view text) {
        std::size_t done = 0;
        while (done < text.size()) {
            if (ssl != nullptr) {
                const int n = ::SSL_write(ssl, text.data() + done, static_cast<int>(text.size() - done));
                if (n <= 0) {
                    noteTlsFailure(n);
                    return false;
                }
                done += static_cast<std::size_t>(n);
                continue;
            }
            const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                return false;
            }
            done += static_cast<std::size_t>(n);
        }
        return true;
    }

    bool readLine(std::string& line, int timeoutMs) {
        for (;;) {
            while (!buffer.empty()) {
                std::string_view bytes = buffer;
                const rpc::LineFramer::Status status = framer.next(bytes);
                buffer.erase(0, buffer.size() - bytes.size());
                if (status == rpc::LineFramer::Status::Line) {
                    line.assign(framer.line());
                    return true;
                }
                if (status == rpc::LineFramer::Status::TooLong) {
                    return false;
                }
            }
            if (fd < 0) {
                return false;
            }
            const bool buffered = ssl != nullptr && ::SSL_pending(ssl) > 0;
            if (!buffered && !waitFor(fd, POLLIN, timeoutMs)) {
                return false;
            }
            char chunk[65536];
            ssize_t n = 0;
            if (ssl != nullptr) {
                const int r = ::SSL_read(ssl, chunk, sizeof chunk);
                if (r <= 0) {
                    noteTlsFailure(r);
                }
                n = r > 0 ? r : -1;
            } else {
                n = ::recv(fd, chunk, sizeof chunk, 0);
                if (n < 0 && errno == EINTR) {
                    continue;
                }
            }
            if (n <= 0) {
                closed = true;
                return false;
            }
            buffer.append(chunk, static_cast<std::size_t>(n));
        }
    }

    ControlReply roundTrip(std::string_view method, std::string_view params) {
        ControlReply reply;
        const int id = nextId++;
        if (!sendAll(rpc::requestLine(id, method, params))) {
            const std::string tls = tlsProblem();
            reply.message = tls.empty() ? fmt::format("cannot send '{}' to {}", method, options.endpoint) : tls;
            return reply;
        }
        std::string line;
        rpc::Response response;
        for (;;) {
            if (!readLine(line, options.timeoutMs)) {
                const std::string tls = tlsProblem();
                reply.message = tls.empty() ? fmt::format("no reply to '{}' from {}", method, options.endpoint) : tls;
                return reply;
            }
            // Notifications (events) are skipped; an id of null is an error about the connection
            // itself (e.g. too many connections).
            if (rpc::parseResponse(line, parsed, response) &&
                (response.id.kind == rpc::RequestId::Kind::Null || response.id.text == std::to_string(id))) {
                break;
            }
            if (keepNotifications) {
                kept.push_back(line);
            }
        }
        reply.reached = true;
        reply.ok = response.ok;
        if (response.ok) {
            reply.json = std::move(response.result);
            return reply;
        }
        reply.json = std::move(response.errorJson);
        reply.code = response.error.code;
        reply.message = response.error.message.empty() ? fmt::format("'{}' failed", method) : response.error.message;
        return reply;
    }
};

ControlClient::ControlClient(ControlClientOptions options) : impl_(std::make_unique<Impl>()) {
    impl_->options = std::move(options);
}

ControlClient::~ControlClient() = default;

ControlReply ControlClient::connect() {
    ControlReply reply;
    Impl& s = *impl_;
    if (!detail::parseEndpoint(s.options.endpoint, s.endpoint, reply.message)) {
        return reply;
    }
    s.fd = connectSocket(s.endpoint, s.options.endpoint, s.options.timeoutMs, reply.message);
    if (s.fd < 0) {
        return reply;
    }
    if (s.endpoint.kind == detail::Endpoint::Kind::Tls && !s.startTls(reply.message)) {
        return reply;
    }
    if (s.options.token.empty()) {
        reply.reached = true;
        reply.ok = true;
        return reply;
    }
    rapidjson::StringBuffer buf;
    rpc::JsonWriter w(buf);
    w.StartObject();
    w.Key("token");
    rpc::writeString(w, s.options.token);
    w.EndObject();
    reply = s.roundTrip("auth.login", std::string_view(buf.GetString(), buf.GetSize()));
    if (reply.reached && !reply.ok) {
        reply.message = "auth.login refused: " + reply.message;
    }
    return reply;
}

ControlReply ControlClient::call(std::string_view method, std::string_view paramsJson) {
    if (impl_->fd < 0) {
        ControlReply r;
        r.message = "not connected";
        return r;
    }
    return impl_->roundTrip(method, paramsJson);
}

bool ControlClient::readLine(std::string& line, int timeoutMs) {
    return impl_->readLine(line, timeoutMs);
}

bool ControlClient::closed() const {
    return impl_->closed;
}

int ControlClient::pollFd() const {
    return impl_->fd;
}

void ControlClient::keepNotifications(bool keep) {
    impl_->keepNotifications = keep;
}

std::vector<std::string> ControlClient::takeNotifications() {
    return std::exchange(impl_->kept, {});
}

ControlReply controlCall(const ControlClientOptions& options, std::string_view method, std::string_view paramsJson) {
    ControlClient client(options);
    ControlReply r = client.connect();
    if (!r.reached || !r.ok) {
        return r;
    }
    return client.call(method, paramsJson);
}

namespace detail {

std::string base64(std::span<const std::uint8_t> bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int n =
        ::EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(), static_cast<int>(bytes.size()));
    out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return out;
}

} // namespace detail

std::string bytecodeReloadParams(std::span<const std::uint8_t> program, bool dryRun, std::string_view expectedHash,
                                 std::string_view idempotencyKey) {
    rapidjson::StringBuffer buf;
    rpc::JsonWriter w(buf);
    w.StartObject();
    w.Key("bytes");
    rpc::writeString(w, detail::base64(program));
    if (dryRun) {
        w.Key("dry_run");
        w.Bool(true);
    }
    if (!expectedHash.empty()) {
        w.Key("expected_hash");
        rpc::writeString(w, expectedHash);
    }
    if (!idempotencyKey.empty()) {
        w.Key("idempotency_key");
        rpc::writeString(w, idempotencyKey);
    }
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

namespace detail {

ControlReply sendReload(const std::string& endpoint, const std::string& token, std::span<const std::uint8_t> program,
                        int timeoutMs, bool dryRun) {
    ControlClientOptions options;
    options.endpoint = endpoint;
    options.token = token;
    options.timeoutMs = timeoutMs;
    return controlCall(options, "bytecode.reload", bytecodeReloadParams(program, dryRun));
}

} // namespace detail

} // namespace takt::agent
