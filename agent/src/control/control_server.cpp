// The control endpoint's transport: Asio on one low-priority thread, one acceptor (Unix, TCP or
// TLS), connections with a bounded write queue and an idle timer, the connection cap, and the
// poll of the target for replies and events when it signals, after a call, at the time it names
// and once a second. What a line means is control_session.cpp.
#include <malloc.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <list>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <openssl/ssl.h>

#include "control/control_local_stream.h"
#include "control/control_session.h"
#include "control/control_stream.h"
#include "rpc/rpc_envelope.h"
#include "takt/agent/control.h"
#include "takt/agent/value_feed.h"

namespace takt::agent {

namespace {

using detail::Clock;
using detail::Endpoint;

// Replies waiting for a client that does not read them: past this it is dropped. One reply is
// always taken, however large, so the bound is this plus the largest reply.
constexpr std::size_t kMaxQueuedBytes = std::size_t{1} << 20;
constexpr std::size_t kReadChunk = 16384;
constexpr std::uint32_t kMaxRejecting = 64; // connections being told "too many connections"
constexpr auto kRejectDeadline = std::chrono::milliseconds(2000);
// A target without a completion descriptor is polled this often; one with is polled when it
// signals, when it asks, and at least this often (audit summaries, heap trimming).
constexpr auto kPollWithoutWakeUps = std::chrono::milliseconds(1);
constexpr auto kPollAtLeast = std::chrono::seconds(1);
constexpr auto kAcceptRetry = std::chrono::milliseconds(50);
// After connections close, free heap pages go back to the system at most this often (a flood
// would otherwise leave its peak as the process's RSS for good).
constexpr auto kTrimInterval = std::chrono::seconds(1);

std::string connectionLimitLine(std::uint32_t max, bool evicted) {
    const std::string message =
        evicted ? fmt::format("connection closed: the endpoint's {} connections are in use and this one had not "
                              "logged in or made a request",
                              max)
                : fmt::format("too many connections: the endpoint serves at most {} at a time", max);
    return rpc::errorLine(rpc::RequestId{}, rpc::Error{kRateLimited, message, R"({"retry_after_ms":1000})"});
}

bool isLoopback(const asio::ip::address& a) {
    if (a.is_v6() && a.to_v6().is_v4_mapped()) {
        return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).is_loopback();
    }
    return a.is_loopback();
}

} // namespace

struct ControlServer::Impl {
    class Connection;
    class LocalSession;

    Impl(ControlOptions o, ControlTarget& t) : options(std::move(o)), target(t) {}

    bool prepare(std::string& error);
    bool bindUnix(std::string& error);
    bool bindTcp(std::string& error);
    void acceptNext();
    template <class Socket> void admit(Socket socket, detail::PeerInfo peer);
    void schedulePoll();
    void pollNow();
    void pollSoon();             // after a call: what it queued (an event, an answer) goes out at once
    void forgetAnsweredLocals(); // local calls answered since the last look
    void awaitCompletions();
    void shutdown();
    void forget(const Connection* c);
    void trimHeap();
    void sampleValues();
    void sampleValuesAt(Clock::time_point at);

    ControlOptions options;
    ControlTarget& target;
    Endpoint endpoint;
    asio::io_context io{1};
    std::optional<asio::ssl::context> tls;
    std::optional<asio::ip::tcp::acceptor> tcpAcceptor;
    std::optional<asio::local::stream_protocol::acceptor> unixAcceptor;
    asio::steady_timer pollTimer{io};
    bool pollPosted = false;
    // A dup of the target's completion descriptor: readable when a command may be done.
    std::optional<asio::posix::stream_descriptor> completions;
    asio::steady_timer acceptRetry{io};
    asio::steady_timer valuesTimer{io}; // the next round of value sampling (var.subscribe)
    std::optional<Clock::time_point> valuesAt;
    std::size_t valuesStart = 0; // the session a round of sampling starts with (sampleValues)
    std::unique_ptr<detail::ControlService> service;
    std::list<std::shared_ptr<Connection>> connections;
    std::list<std::unique_ptr<LocalSession>> locals;                              // local calls not answered yet
    std::map<std::uint64_t, std::unique_ptr<detail::LocalStreamSession>> streams; // openStream
    std::atomic<std::uint64_t> nextStream{1};
    bool trimLocal = false;
    std::uint32_t rejecting = 0;
    bool trimPending = false;
    Clock::time_point lastTrim{};
    std::thread thread;
    std::string bound;
    bool running = false;
    ino_t socketIno = 0;
    dev_t socketDev = 0;
};

namespace {

// The session peer of a call from inside the process: "<origin>:<peer>" in the audit log and as
// the key of its rate-limit budget, its address for the token back-off, the surface's role.
detail::PeerInfo peerOf(const ControlServer::Call& call) {
    detail::PeerInfo peer;
    peer.label = fmt::format("{}:{}", call.caller.origin, call.caller.peer);
    peer.key = detail::loginPeerKey(call.caller.address);
    peer.grantedRole = call.role;
    return peer;
}

} // namespace

// One call from inside the process: a session of its own (the caller's role, the caller's
// rate-limit budget) that dispatches the typed call and hands the answer to `done`. It lives
// until the target answered (a reload answers cycles later).
class ControlServer::Impl::LocalSession final : public detail::SessionSink {
public:
    LocalSession(Impl& server, detail::PeerInfo peer, detail::RateLimiter& limiter, Call call,
                 std::function<void(MethodAnswer)> done)
        : server_(server), session_(*server.service, std::move(peer), *this, &limiter), call_(std::move(call)),
          done_(std::move(done)) {}

    void run() {
        session_.dispatchCall(call_.method, call_.params, [this](const ControlAnswer& a) { answer(a); });
    }
    [[nodiscard]] bool finished() const { return finished_; }

    // Answered by dispatch (now or when the target answers), or by the service stopping.
    void answer(const MethodAnswer& a) {
        if (finished_) {
            return;
        }
        finished_ = true;
        server_.trimLocal = true;
        done_(a);
    }

    // Nothing goes out as lines: every answer comes through dispatch.
    void sendLine(std::string) override {}

private:
    Impl& server_;
    detail::ControlSession session_;
    Call call_;
    std::function<void(MethodAnswer)> done_;
    bool finished_ = false;
};

class ControlServer::Impl::Connection final : public std::enable_shared_from_this<Connection>,
                                              public detail::SessionSink {
public:
    Connection(Impl& server, std::unique_ptr<detail::ControlStream> stream, detail::PeerInfo peer, bool reject)
        : server_(server), stream_(std::move(stream)), session_(*server.service, std::move(peer), *this),
          timer_(server.io), rejecting_(reject), last_(Clock::now()) {}

    void start() {
        // The first deadline is the handshake's: a TLS peer that connects and says nothing is
        // closed after a few seconds, not after the idle timeout.
        armTimer(rejecting_ ? std::chrono::duration_cast<Clock::duration>(kRejectDeadline)
                            : std::min(idle(), handshakeDeadline()));
        stream_->handshake([self = shared_from_this()](const asio::error_code& ec) {
            if (ec || self->closed_) {
                self->close();
                return;
            }
            self->handshaken_ = true;
            self->last_ = Clock::now();
            if (self->rejecting_) {
                self->sendLine(connectionLimitLine(self->server_.options.maxConnections, false));
                self->closeAfterFlush();
                return;
            }
            self->read();
        });
    }

    void sendLine(std::string line) override {
        if (closed_) {
            return;
        }
        line.push_back('\n');
        if (!queue_.empty() && queued_ + line.size() > kMaxQueuedBytes) {
            close(); // the client does not read its replies
            return;
        }
        queued_ += line.size();
        queue_.push_back(std::move(line));
        if (!writing_) {
            write();
        }
    }

    // Evicted for a newcomer over the cap: told why, then closed. Before its TLS handshake
    // nothing can be told, and waiting to flush would keep the descriptor: closed at once.
    void evict() {
        if (!handshaken_) {
            close();
            return;
        }
        sendLine(connectionLimitLine(server_.options.maxConnections, true));
        closeAfterFlush();
    }

    void closeAfterFlush() {
        active_ = false;
        flushThenClose_ = true;
        maybeFinish();
    }

    void close() {
        if (closed_) {
            return;
        }
        closed_ = true;
        active_ = false;
        if (rejecting_) {
            --server_.rejecting;
        }
        stream_->close();
        timer_.cancel();
        // Not erased here: close() may run while the server walks its connection list.
        asio::post(server_.io, [self = shared_from_this()] { self->server_.forget(self.get()); });
    }

    // Value notifications wait while a line is still being written to this client.
    [[nodiscard]] bool backlogged() const override { return !queue_.empty(); }

    [[nodiscard]] bool active() const { return active_ && !closed_; }
    [[nodiscard]] bool evictable() const { return active() && !session_.proven() && session_.pending() == 0; }
    [[nodiscard]] bool handshaken() const { return handshaken_; }
    detail::ControlSession& session() { return session_; }

private:
    [[nodiscard]] Clock::duration idle() const { return std::chrono::milliseconds(server_.options.idleTimeoutMs); }
    [[nodiscard]] Clock::duration handshakeDeadline() const {
        return std::chrono::milliseconds(server_.options.handshakeTimeoutMs);
    }

    void armTimer(Clock::duration after) {
        timer_.expires_after(after);
        timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
            if (ec || self->closed_) {
                return;
            }
            self->onTimer();
        });
    }

    void onTimer() {
        if (rejecting_ || flushThenClose_ || !handshaken_) {
            close();
            return;
        }
        const Clock::time_point due = last_ + idle();
        const Clock::time_point now = Clock::now();
        if (now < due) {
            armTimer(due - now);
        } else if (session_.pending() > 0 || session_.subscribedToValues()) {
            armTimer(idle()); // waiting for the target, or for values to change, is not idleness
        } else {
            close();
        }
    }

    void read() {
        stream_->readSome(asio::buffer(buffer_),
                          [self = shared_from_this()](const asio::error_code& ec, std::size_t n) {
                              if (self->closed_) {
                                  return;
                              }
                              if (ec) {
                                  if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
                                      self->session_.finish();
                                      self->closeAfterFlush();
                                  } else {
                                      self->close();
                                  }
                                  return;
                              }
                              self->last_ = Clock::now();
                              if (self->active_) {
                                  self->session_.feed(std::string_view(self->buffer_.data(), n));
                                  self->server_.pollSoon();
                              }
                              if (!self->closed_) {
                                  self->read();
                              }
                          });
    }

    void write() {
        writing_ = true;
        stream_->write(asio::buffer(queue_.front()),
                       [self = shared_from_this()](const asio::error_code& ec, std::size_t) {
                           self->writing_ = false;
                           if (ec || self->closed_) {
                               self->close();
                               return;
                           }
                           self->queued_ -= self->queue_.front().size();
                           self->queue_.pop_front();
                           if (!self->queue_.empty()) {
                               self->write();
                           } else {
                               self->maybeFinish();
                           }
                       });
    }

    void maybeFinish() {
        if (flushThenClose_ && !writing_ && queue_.empty() && session_.pending() == 0) {
            close();
        }
    }

    Impl& server_;
    std::unique_ptr<detail::ControlStream> stream_;
    detail::ControlSession session_;
    asio::steady_timer timer_;
    std::array<char, kReadChunk> buffer_{};
    std::deque<std::string> queue_;
    std::size_t queued_ = 0;
    bool writing_ = false;
    bool rejecting_ = false;
    bool handshaken_ = false;
    bool active_ = true;
    bool flushThenClose_ = false;
    bool closed_ = false;
    Clock::time_point last_;
};

bool ControlServer::Impl::prepare(std::string& error) {
    if (options.endpoint.empty()) {
        // No endpoint: only local calls (the web server of a runtime without [runtime.control]).
        service = std::make_unique<detail::ControlService>(options, target, "local");
        return service->openAudit(error);
    }
    if (!detail::parseEndpoint(options.endpoint, endpoint, error)) {
        return false;
    }
    if (endpoint.kind != Endpoint::Kind::Unix && options.tokens.empty()) {
        error = fmt::format("endpoint '{}': TCP and TLS endpoints need at least one token "
                            "([runtime.control] token_file or auth_token)",
                            options.endpoint);
        return false;
    }
    for (const ControlToken& t : options.tokens) {
        if (t.secret.size() < 16) {
            error =
                fmt::format("endpoint '{}': a {} token is shorter than 16 bytes", options.endpoint, roleName(t.role));
            return false;
        }
    }
    if (options.maxConnections == 0) {
        error = fmt::format("endpoint '{}': max connections must be at least 1", options.endpoint);
        return false;
    }
    if (options.handshakeTimeoutMs == 0) {
        error = fmt::format("endpoint '{}': the handshake timeout must be at least 1 ms", options.endpoint);
        return false;
    }
    if (endpoint.kind == Endpoint::Kind::Tls) {
        if (options.tlsCert.empty() || options.tlsKey.empty()) {
            error = fmt::format("endpoint '{}': tls:// needs [runtime.control.tls] cert and key", options.endpoint);
            return false;
        }
        tls.emplace(asio::ssl::context::tls_server);
        asio::error_code ec;
        tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                             asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                             asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use,
                         ec);
        ::SSL_CTX_set_min_proto_version(tls->native_handle(), TLS1_2_VERSION);
        if (tls->use_certificate_chain_file(options.tlsCert, ec); ec) {
            error = fmt::format("TLS certificate '{}': {}", options.tlsCert, ec.message());
            return false;
        }
        if (tls->use_private_key_file(options.tlsKey, asio::ssl::context::pem, ec); ec) {
            error = fmt::format("TLS key '{}': {} (it must be the key of certificate '{}')", options.tlsKey,
                                ec.message(), options.tlsCert);
            return false;
        }
        if (::SSL_CTX_check_private_key(tls->native_handle()) != 1) {
            error = fmt::format("TLS key '{}' does not match certificate '{}'", options.tlsKey, options.tlsCert);
            return false;
        }
        if (!options.tlsClientCa.empty()) {
            if (tls->load_verify_file(options.tlsClientCa, ec); ec) {
                error = fmt::format("TLS client CA '{}': {}", options.tlsClientCa, ec.message());
                return false;
            }
            if (STACK_OF(X509_NAME)* names = ::SSL_load_client_CA_file(options.tlsClientCa.c_str())) {
                ::SSL_CTX_set_client_CA_list(tls->native_handle(), names);
            }
            tls->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert, ec);
        }
    }
    service = std::make_unique<detail::ControlService>(options, target, detail::transportName(endpoint.kind));
    return service->openAudit(error);
}

bool ControlServer::Impl::bindUnix(std::string& error) {
    const std::string& path = endpoint.path;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            error = fmt::format("endpoint '{}': '{}' exists and is not a socket", options.endpoint, path);
            return false;
        }
        // A socket file nobody answers on is left over from a process that died: replace it.
        asio::local::stream_protocol::socket probe(io);
        asio::error_code ec;
        if (probe.connect(asio::local::stream_protocol::endpoint(path), ec); !ec) {
            error = fmt::format("endpoint '{}': another process is serving '{}'", options.endpoint, path);
            return false;
        }
        ::unlink(path.c_str());
    }
    asio::error_code ec;
    unixAcceptor.emplace(io);
    const asio::local::stream_protocol::endpoint ep(path);
    if (unixAcceptor->open(ep.protocol(), ec); !ec) {
        unixAcceptor->bind(ep, ec);
    }
    if (ec) {
        error = fmt::format("endpoint '{}': cannot bind: {}", options.endpoint, ec.message());
        unixAcceptor.reset();
        return false;
    }
    // chmod before listen: a connect() that races the chmod is refused, never accepted.
    if (::chmod(path.c_str(), 0600) != 0 || ::lstat(path.c_str(), &st) != 0 ||
        (unixAcceptor->listen(asio::socket_base::max_listen_connections, ec), ec)) {
        error = fmt::format("endpoint '{}': cannot listen on '{}'", options.endpoint, path);
        unixAcceptor.reset();
        ::unlink(path.c_str());
        return false;
    }
    socketIno = st.st_ino;
    socketDev = st.st_dev;
    bound = options.endpoint;
    return true;
}

bool ControlServer::Impl::bindTcp(std::string& error) {
    asio::error_code ec;
    asio::ip::tcp::resolver resolver(io);
    const auto results =
        resolver.resolve(endpoint.host, std::to_string(endpoint.port),
                         asio::ip::resolver_base::passive | asio::ip::resolver_base::numeric_service, ec);
    if (ec || results.empty()) {
        error = fmt::format("endpoint '{}': cannot resolve '{}': {}", options.endpoint, endpoint.host,
                            ec ? ec.message() : std::string("no address"));
        return false;
    }
    if (endpoint.kind == Endpoint::Kind::Tcp) {
        for (const auto& r : results) {
            if (!isLoopback(r.endpoint().address())) {
                error = fmt::format("endpoint '{}': {} is not a loopback address; a network endpoint needs TLS "
                                    "(tls://) and a token",
                                    options.endpoint, r.endpoint().address().to_string());
                return false;
            }
        }
    }
    const asio::ip::tcp::endpoint ep = results.begin()->endpoint();
    tcpAcceptor.emplace(io);
    if (tcpAcceptor->open(ep.protocol(), ec); !ec) {
        tcpAcceptor->set_option(asio::socket_base::reuse_address(true), ec);
        tcpAcceptor->bind(ep, ec);
    }
    if (!ec) {
        tcpAcceptor->listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        error = fmt::format("endpoint '{}': cannot listen: {}", options.endpoint, ec.message());
        tcpAcceptor.reset();
        return false;
    }
    const asio::ip::tcp::endpoint local = tcpAcceptor->local_endpoint(ec);
    const std::string host =
        local.address().is_v6() ? "[" + local.address().to_string() + "]" : local.address().to_string();
    bound = fmt::format("{}://{}:{}", detail::transportName(endpoint.kind), host, local.port());
    return true;
}

void ControlServer::Impl::acceptNext() {
    const auto retryLater = [this](const asio::error_code& ec) {
        if (ec == asio::error::operation_aborted || !running) {
            return false;
        }
        // Out of descriptors (or similar): try again shortly instead of spinning.
        acceptRetry.expires_after(kAcceptRetry);
        acceptRetry.async_wait([this](const asio::error_code& e) {
            if (!e && running) {
                acceptNext();
            }
        });
        return true;
    };
    if (unixAcceptor) {
        unixAcceptor->async_accept(
            [this, retryLater](const asio::error_code& ec, asio::local::stream_protocol::socket socket) {
                if (ec) {
                    (void)retryLater(ec);
                    return;
                }
                detail::PeerInfo peer;
                ucred cred{};
                socklen_t len = sizeof cred;
                if (::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
                    peer.label = fmt::format("unix:uid={},pid={}", cred.uid, cred.pid);
                    peer.key = fmt::format("uid:{}", cred.uid);
                } else {
                    peer.label = "unix:unknown";
                    peer.key = "uid:unknown";
                }
                peer.trustedUnix = true;
                admit(std::move(socket), std::move(peer));
                acceptNext();
            });
        return;
    }
    tcpAcceptor->async_accept([this, retryLater](const asio::error_code& ec, asio::ip::tcp::socket socket) {
        if (ec) {
            (void)retryLater(ec);
            return;
        }
        detail::PeerInfo peer;
        asio::error_code e;
        const asio::ip::tcp::endpoint remote = socket.remote_endpoint(e);
        const std::string address = e ? std::string("unknown") : remote.address().to_string();
        peer.label = fmt::format("{}:{}:{}", detail::transportName(endpoint.kind), address, e ? 0 : remote.port());
        peer.key = detail::loginPeerKey(address);
        socket.set_option(asio::ip::tcp::no_delay(true), e);
        admit(std::move(socket), std::move(peer));
        acceptNext();
    });
}

// The cap counts sessions, including TLS connections still in (or not yet in) their handshake.
// A newcomer over it takes the place of the oldest connection that has not finished its
// handshake, else of the oldest session that has neither logged in nor made a request (so idle,
// silent or half-open connections cannot lock a real client out, nor hold the descriptors it
// needs); when every session has, it is told so and closed.
template <class Socket> void ControlServer::Impl::admit(Socket socket, detail::PeerInfo peer) {
    std::uint32_t active = 0;
    std::shared_ptr<Connection> silent;
    std::shared_ptr<Connection> idle;
    for (const auto& c : connections) {
        if (c->active()) {
            ++active;
            // The list is in accept order: the first found is the oldest.
            if (!silent && !c->handshaken() && c->evictable()) {
                silent = c;
            }
            if (!idle && c->evictable()) {
                idle = c;
            }
        }
    }
    const std::shared_ptr<Connection> victim = silent ? silent : idle;
    bool reject = false;
    if (active >= options.maxConnections) {
        if (victim) {
            victim->evict();
        } else if (rejecting >= kMaxRejecting) {
            asio::error_code ignored;
            socket.close(ignored);
            return;
        } else {
            reject = true;
            ++rejecting;
        }
    }
    std::unique_ptr<detail::ControlStream> stream;
    if constexpr (std::is_same_v<Socket, asio::ip::tcp::socket>) {
        if (tls) {
            stream = std::make_unique<detail::TlsStream>(std::move(socket), *tls);
        } else {
            stream = std::make_unique<detail::PlainStream<Socket>>(std::move(socket));
        }
    } else {
        stream = std::make_unique<detail::PlainStream<Socket>>(std::move(socket));
    }
    auto c = std::make_shared<Connection>(*this, std::move(stream), std::move(peer), reject);
    connections.push_back(c);
    c->start();
}

void ControlServer::Impl::pollNow() {
    service->pollEvents([this](int type, const std::string& json, const std::string& line) {
        for (const auto& c : connections) {
            if (c->active() && c->session().subscribed(type)) {
                c->sendLine(line);
            }
        }
        // A surface's stream that asked for events (the OPC UA server's events.subscribe) gets
        // them typed, as its value changes.
        for (const auto& [id, stream] : streams) {
            if (stream->session().subscribed(type)) {
                stream->sendNotification("event", json);
            }
        }
    });
    forgetAnsweredLocals();
    schedulePoll();
}

// A round of value sampling: one read of what the scan thread published, then the sessions' due
// subscriptions, as many as ValueSubscriptions::kRoundVariables allows; the timer is set for the
// earliest next one. Due subscriptions left over make it expire at once: the next round runs
// after the handlers that are ready by then, so a call that came in meanwhile is answered between
// two rounds, not after every subscription of every session.
void ControlServer::Impl::sampleValues() {
    ValueFeed* feed = target.valueFeed();
    const Clock::time_point now = Clock::now();
    const auto anyone = [this] {
        return std::any_of(connections.begin(), connections.end(),
                           [](const auto& c) { return c->active() && c->session().subscribedToValues(); }) ||
               std::any_of(streams.begin(), streams.end(),
                           [](const auto& s) { return s.second->session().subscribedToValues(); });
    };
    if (feed == nullptr || !anyone()) {
        return;
    }
    if (!feed->refresh()) {
        sampleValuesAt(now + std::chrono::milliseconds(2)); // the watch is not published yet
        return;
    }
    std::vector<detail::ControlSession*> sessions;
    for (const auto& c : connections) {
        if (c->active()) {
            sessions.push_back(&c->session());
        }
    }
    for (const auto& [id, stream] : streams) {
        sessions.push_back(&stream->session());
    }
    // From the session where the last round's budget ran out, so the sessions first in the list
    // (the OPC UA server's first feeds) do not take every round while the others wait.
    std::optional<Clock::time_point> next;
    std::size_t budget = detail::ValueSubscriptions::kRoundVariables;
    const std::size_t from = sessions.empty() ? 0 : valuesStart % sessions.size();
    bool cut = false;
    for (std::size_t k = 0; k < sessions.size(); ++k) {
        const std::size_t at = (from + k) % sessions.size();
        const bool spent = budget == 0;
        if (const auto due = sessions[at]->sampleValues(now, budget)) {
            next = next ? std::min(*next, *due) : *due;
            if (spent && !cut && *due <= now) {
                cut = true;
                valuesStart = at;
            }
        }
    }
    if (next) {
        sampleValuesAt(*next);
    }
}

void ControlServer::Impl::sampleValuesAt(Clock::time_point at) {
    if (valuesAt && *valuesAt <= at) {
        return; // an earlier round is set
    }
    valuesAt = at;
    valuesTimer.expires_at(at);
    valuesTimer.async_wait([this](const asio::error_code& ec) {
        if (ec || !running) {
            return;
        }
        valuesAt.reset();
        sampleValues();
    });
}

void ControlServer::Impl::forgetAnsweredLocals() {
    if (trimLocal) {
        trimLocal = false;
        locals.remove_if([](const std::unique_ptr<LocalSession>& l) { return l->finished(); });
    }
}

// Events, command timeouts and heap trimming: the timer is set, after every poll, to the time
// the target names (pollDeadline), a second at most; without a completion descriptor to a
// millisecond. Commands are answered from awaitCompletions() as soon as the scan loop applied
// them.
void ControlServer::Impl::schedulePoll() {
    const Clock::time_point now = Clock::now();
    Clock::time_point next = now + kPollAtLeast;
    if (!completions) {
        next = now + kPollWithoutWakeUps;
    } else {
        next = std::min(next, target.pollDeadline());
    }
    pollTimer.expires_at(next);
    pollTimer.async_wait([this](const asio::error_code& ec) {
        if (ec || !running) {
            return;
        }
        pollNow();
        trimHeap();
    });
}

void ControlServer::Impl::pollSoon() {
    if (pollPosted) {
        return;
    }
    pollPosted = true;
    asio::post(io, [this] {
        pollPosted = false;
        if (running) {
            pollNow();
        }
    });
}

void ControlServer::Impl::awaitCompletions() {
    completions->async_wait(asio::posix::descriptor_base::wait_read, [this](const asio::error_code& ec) {
        if (ec || !running) {
            return;
        }
        std::uint64_t count = 0; // resets the eventfd counter; the wake-up itself is the message
        (void)!::read(completions->native_handle(), &count, sizeof count);
        pollNow();
        awaitCompletions();
    });
}

void ControlServer::Impl::forget(const Connection* c) {
    connections.remove_if([c](const std::shared_ptr<Connection>& p) { return p.get() == c; });
    trimPending = true;
}

// glibc keeps freed memory in its arenas (this thread has one of its own) instead of returning
// it; after a flood of large requests or queued replies that is tens of MB. malloc_trim gives
// the free pages back; it runs here, on the endpoint's thread, never on the scan thread.
void ControlServer::Impl::trimHeap() {
    if (!trimPending) {
        return;
    }
    const Clock::time_point now = Clock::now();
    if (now - lastTrim < kTrimInterval) {
        return;
    }
    trimPending = false;
    lastTrim = now;
#if defined(__GLIBC__)
    (void)::malloc_trim(0);
#endif
}

void ControlServer::Impl::shutdown() {
    running = false;
    asio::error_code ignored;
    if (tcpAcceptor) {
        tcpAcceptor->close(ignored);
    }
    if (unixAcceptor) {
        unixAcceptor->close(ignored);
    }
    pollTimer.cancel();
    valuesTimer.cancel();
    if (completions) {
        completions->cancel(ignored);
    }
    acceptRetry.cancel();
    const auto all = connections;
    for (const auto& c : all) {
        c->close();
    }
    // A local caller waiting for an answer the target will not give any more gets one now.
    for (const std::unique_ptr<LocalSession>& l : locals) {
        l->answer(MethodAnswer::error(rpc::kInternalError, "the control service stopped"));
    }
    locals.clear();
    streams.clear();
}

ControlServer::ControlServer(ControlOptions options, ControlTarget& target)
    : impl_(std::make_unique<Impl>(std::move(options), target)) {}

ControlServer::~ControlServer() {
    // stop() only throws when a thread cannot be joined or memory runs out; a destructor cannot
    // report either, and terminating the runtime over it would be worse.
    try {
        stop();
    } catch (const std::exception&) {
        return;
    }
}

bool ControlServer::start(std::string& error) {
    if (impl_->running || impl_->thread.joinable()) {
        error = "the control endpoint is already started";
        return false;
    }
    if (!impl_->prepare(error)) {
        return false;
    }
    const bool listening = !impl_->options.endpoint.empty();
    if (listening && !(impl_->endpoint.kind == Endpoint::Kind::Unix ? impl_->bindUnix(error) : impl_->bindTcp(error))) {
        return false;
    }
    impl_->running = true;
    impl_->service->valuesWanted = [impl = impl_.get()] { impl->sampleValuesAt(Clock::now()); };
    if (listening) {
        impl_->acceptNext();
    }
    if (const int fd = impl_->target.completionFd(); fd >= 0) {
        const int own = ::dup(fd);
        if (own >= 0) {
            impl_->completions.emplace(impl_->io, own);
            impl_->awaitCompletions();
        }
    }
    impl_->schedulePoll();
    impl_->thread = std::thread([impl = impl_.get()] {
        // Below the scan thread and the drivers: the endpoint must never compete with the cycle.
        (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
        impl->io.run();
    });
    return true;
}

void ControlServer::stop() {
    if (!impl_->thread.joinable()) {
        return;
    }
    asio::post(impl_->io, [impl = impl_.get()] {
        impl->shutdown();
        impl->io.stop();
    });
    impl_->thread.join();
    // Let the aborted handlers run (and drop their references) while everything is still alive.
    impl_->io.restart();
    impl_->io.poll();
    impl_->connections.clear();
    impl_->tcpAcceptor.reset();
    impl_->unixAcceptor.reset();
    if (impl_->endpoint.kind == Endpoint::Kind::Unix && impl_->socketIno != 0) {
        // Only our own socket file: another process may have replaced it since.
        struct stat st {};
        if (::lstat(impl_->endpoint.path.c_str(), &st) == 0 && st.st_ino == impl_->socketIno &&
            st.st_dev == impl_->socketDev) {
            ::unlink(impl_->endpoint.path.c_str());
        }
        impl_->socketIno = 0;
    }
}

void ControlServer::call(Call call, std::function<void(MethodAnswer)> done) {
    asio::post(impl_->io, [impl = impl_.get(), call = std::move(call), done = std::move(done)]() mutable {
        if (!impl->running) {
            done(MethodAnswer::error(rpc::kInternalError, "the control service is stopping"));
            return;
        }
        detail::PeerInfo peer = peerOf(call);
        detail::RateLimiter& limiter = impl->service->callerLimiter(peer.label);
        auto& local = impl->locals.emplace_back(
            std::make_unique<Impl::LocalSession>(*impl, std::move(peer), limiter, std::move(call), std::move(done)));
        local->run();
        impl->forgetAnsweredLocals();
        impl->pollSoon();
    });
}

void ControlServer::authenticate(Caller caller, std::string token, std::function<void(TokenCheck)> done) {
    asio::post(
        impl_->io, [impl = impl_.get(), caller = std::move(caller), token = std::move(token), done = std::move(done)] {
            if (!impl->running) {
                done({std::nullopt, MethodAnswer::error(rpc::kInternalError, "the control service is stopping")});
                return;
            }
            if (!impl->service->loginRequired()) {
                done({std::nullopt, MethodAnswer::result("{}")});
                return;
            }
            detail::ControlService::TokenCheck checked =
                impl->service->checkToken(detail::loginPeerKey(caller.address), token);
            impl->service->audit(fmt::format("{}:{}", caller.origin, caller.peer), checked.role, "auth.login",
                                 checked.answer.ok ? 0 : checked.answer.code);
            done({checked.role, std::move(checked.answer)});
        });
}

void ControlServer::login(Caller caller, std::function<std::optional<Role>()> match, std::string refusal,
                          std::function<void(TokenCheck)> done) {
    asio::post(impl_->io, [impl = impl_.get(), caller = std::move(caller), match = std::move(match),
                           refusal = std::move(refusal), done = std::move(done)] {
        if (!impl->running) {
            done({std::nullopt, MethodAnswer::error(rpc::kInternalError, "the control service is stopping")});
            return;
        }
        detail::ControlService::TokenCheck checked =
            impl->service->checkLogin(detail::loginPeerKey(caller.address), match, refusal);
        impl->service->audit(fmt::format("{}:{}", caller.origin, caller.peer), checked.role, "auth.login",
                             checked.answer.ok ? 0 : checked.answer.code);
        done({checked.role, std::move(checked.answer)});
    });
}

void ControlServer::audit(const Caller& caller, std::optional<Role> role, std::string_view method, int code) {
    asio::post(impl_->io, [impl = impl_.get(), peer = fmt::format("{}:{}", caller.origin, caller.peer), role,
                           method = std::string(method), code] {
        if (impl->running) {
            impl->service->audit(peer, role, method, code);
        }
    });
}

std::uint64_t ControlServer::openStream(Call call, Stream stream) {
    const std::uint64_t id = impl_->nextStream.fetch_add(1);
    asio::post(impl_->io, [impl = impl_.get(), id, call = std::move(call), stream = std::move(stream)]() mutable {
        if (!impl->running) {
            stream.answer(MethodAnswer::error(rpc::kInternalError, "the control service is stopping"));
            return;
        }
        detail::PeerInfo peer = peerOf(call);
        detail::RateLimiter& limiter = impl->service->callerLimiter(peer.label);
        // The budget is taken by this one call only (the stream's session reads no further
        // requests), so it is not held while the stream stays open.
        auto& s = impl->streams[id];
        s = std::make_unique<detail::LocalStreamSession>(*impl->service, std::move(peer), limiter, std::move(stream));
        s->run(call);
    });
    return id;
}

void ControlServer::closeStream(std::uint64_t id) {
    asio::post(impl_->io, [impl = impl_.get(), id] { impl->streams.erase(id); });
}

std::string ControlServer::boundEndpoint() const {
    return impl_->bound;
}

} // namespace takt::agent
