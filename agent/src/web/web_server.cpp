// The web surface's server: Boost.Beast on Boost.Asio, every operation asynchronous on two
// threads at low priority, so no client holds a thread by being slow. Each connection has a
// deadline for each phase (waiting for a request, its header, its body, the answer's write), the
// connection table caps how many are open (web_connections.h), and what a request may make the
// server read or hold is decided by web_http.h before its body is read.
#include "takt/agent/web.h"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <fmt/format.h>

#include "rpc/rpc_envelope.h"
#include "web/web_connections.h"
#include "web/web_events.h"
#include "web/web_http.h"

namespace takt::agent {

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

// Nothing a thread does blocks (a control call is answered through a callback), so two serve
// any number of connections; the control service's one thread is the bottleneck anyway.
constexpr int kThreads = 2;
// Kept alive with no request: a page polls every 250 ms, so its connections stay warm.
constexpr auto kKeepAlive = 2s;
// From a request's first byte (or the connection's TLS handshake) to the end of its header, and
// from there to the end of its body: whole-operation deadlines, not between bytes, so a client
// trickling a byte a second is closed all the same.
constexpr auto kHeaderDeadline = 5s;
constexpr auto kBodyDeadline = 15s;
// Writing an answer to a client that does not read it.
constexpr auto kWriteDeadline = 15s;
// After a refusal whose body was not read, the rest of what the client sends is read and dropped
// for at most this long before closing, so the client reads the answer rather than a reset.
constexpr auto kLinger = 1s;
constexpr std::size_t kLingerBytes = std::size_t{1} << 20;
// The read buffer: a header block and a little more (bodies go to the request, not here).
constexpr std::size_t kMaxBuffer = web::kMaxHeaderBytes + (std::size_t{8} << 10);
// A request or answer this large gives its memory back to the system once answered.
constexpr std::size_t kTrimAbove = std::size_t{1} << 20;
// Control calls of all connections waiting for the control service at once: a page holds at most
// two; beyond this a request is told to come back (503) rather than queue on the service's thread,
// which the control endpoint shares.
constexpr int kMaxCallsInFlight = 32;
// After a failed accept (descriptors exhausted by something else): the next try.
constexpr auto kAcceptRetry = 100ms;

void lowerPriority() {
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
}

// The caps for this process: web_connections.h's under the service's LimitNOFILE of 1,024 or
// more, a quarter of the descriptor limit below it (so a takt started with `ulimit -n 256` keeps
// three quarters for the control endpoint, the drivers, RETAIN and the audit log).
web::ConnectionTable::Limits connectionLimits() {
    rlimit l{};
    std::size_t total = web::kMaxConnections;
    if (::getrlimit(RLIMIT_NOFILE, &l) == 0 && l.rlim_cur != RLIM_INFINITY) {
        total = std::clamp<std::size_t>(static_cast<std::size_t>(l.rlim_cur) / 4, 16, web::kMaxConnections);
    }
    return {.total = total, .perAddress = std::min(web::kMaxPerAddress, std::max<std::size_t>(total / 4, 4))};
}

// What the connections share with the server; outlives the server's threads and io_context.
struct Shared {
    Shared(const WebOptions& o, ControlServer& c) : options(o), control(c), table(connectionLimits()) {}
    const WebOptions& options;
    ControlServer& control;
    web::ConnectionTable table;
    web::BodyBudget budget;
    web::CallSlots calls{kMaxCallsInFlight};
    // Closed when the server stops: a control answer arriving later is dropped, not posted to
    // an io_context that is gone.
    std::mutex gate;
    bool open = true;
};

template <class Stream> class Session : public std::enable_shared_from_this<Session<Stream>> {
public:
    Session(std::shared_ptr<Shared> shared, Stream stream, const tcp::endpoint& peer)
        : shared_(std::move(shared)), stream_(std::move(stream)), callTimer_(stream_.get_executor()),
          address_(peer.address().to_string()), port_(peer.port()) {}
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    ~Session() {
        shared_->table.remove(id_);
        shared_->budget.release(reserved_);
    }

    [[nodiscard]] const std::string& address() const { return address_; }
    auto executor() { return stream_.get_executor(); }

    void start(std::uint64_t id) {
        id_ = id;
        net::dispatch(executor(), [self = this->shared_from_this()] { self->handshake(); });
    }

    // Evicted for a newcomer: closed, whatever it was waiting for.
    void close() { lowest().close(); }

private:
    beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }
    [[nodiscard]] ControlServer::Caller caller() const {
        return {"web", fmt::format("{}:{}", address_, port_), address_};
    }

    void handshake() {
        if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
            awaitRequest();
        } else {
            shared_->table.set(id_, web::ConnectionTable::State::Reading);
            lowest().expires_after(kHeaderDeadline);
            stream_.async_handshake(net::ssl::stream_base::server,
                                    [self = this->shared_from_this()](const beast::error_code& ec) {
                                        if (!ec) {
                                            self->awaitRequest();
                                        }
                                    });
        }
    }

    void awaitRequest() {
        shared_->table.set(id_, web::ConnectionTable::State::Waiting);
        if (buffer_.size() > 0) {
            readHeader();
            return;
        }
        lowest().expires_after(kKeepAlive);
        stream_.async_read_some(buffer_.prepare(4096),
                                [self = this->shared_from_this()](const beast::error_code& ec, std::size_t n) {
                                    self->buffer_.commit(n);
                                    if (!ec) {
                                        self->readHeader();
                                    }
                                });
    }

    void readHeader() {
        shared_->table.set(id_, web::ConnectionTable::State::Reading);
        parser_.emplace();
        web::limitParser(*parser_);
        lowest().expires_after(kHeaderDeadline);
        http::async_read_header(
            stream_, buffer_, *parser_,
            [self = this->shared_from_this()](const beast::error_code& ec, std::size_t) { self->onHeader(ec); });
    }

    void onHeader(const beast::error_code& ec) {
        if (ec) {
            failed(ec);
            return;
        }
        if (std::optional<web::Response> refused = web::screenHeader(*parser_, shared_->options)) {
            answer(std::move(*refused));
            return;
        }
        role_ = shared_->options.tokenAuth ? std::nullopt : std::optional<Role>(Role::Viewer);
        std::string token = web::bearer(parser_->get());
        if (token.empty()) {
            admitBody();
            return;
        }
        // The token is checked before any of the body is read or any memory is reserved for it:
        // a client without a valid token makes the server read nothing more.
        shared_->table.set(id_, web::ConnectionTable::State::Busy);
        // The timer holds the connection meanwhile (the control service only holds it weakly).
        const std::uint64_t number = ++callNumber_;
        replied_ = false;
        callTimer_.expires_after(shared_->options.callTimeout);
        callTimer_.async_wait([self = this->shared_from_this(), number](const beast::error_code& ec) {
            if (!ec && self->callNumber_ == number && !self->replied_) {
                self->replied_ = true;
                web::Response busy = web::plain(http::status::service_unavailable,
                                                "the control service did not check the token in time; try again\n");
                busy.set(http::field::retry_after, "1");
                self->answer(std::move(busy));
            }
        });
        shared_->control.authenticate(
            caller(), std::move(token),
            [weak = this->weak_from_this(), shared = shared_, number](ControlServer::TokenCheck checked) {
                const std::lock_guard lock(shared->gate);
                if (!shared->open) {
                    return;
                }
                if (const auto self = weak.lock()) {
                    net::post(self->executor(), [self, number, checked = std::move(checked)]() mutable {
                        if (self->callNumber_ == number && !self->replied_) {
                            self->replied_ = true;
                            self->callTimer_.cancel();
                            self->onAuthenticated(checked);
                        }
                    });
                }
            });
    }

    void onAuthenticated(const ControlServer::TokenCheck& checked) {
        if (!checked.answer.ok) {
            answer(web::refused(parser_->get(), checked.answer));
            return;
        }
        if (checked.role) {
            role_ = checked.role;
        }
        admitBody();
    }

    // The header passed and its token (if any) is valid: the body may be read.
    void admitBody() {
        shared_->table.set(id_, web::ConnectionTable::State::Reading);
        const std::uint64_t length = parser_->content_length().value_or(0);
        if (length > web::kSmallBody) {
            if (!shared_->budget.reserve(length)) {
                web::Response busy = web::plain(http::status::service_unavailable,
                                                "the server is reading other large requests; try again\n");
                busy.set(http::field::retry_after, "1");
                answer(std::move(busy));
                return;
            }
            reserved_ = length;
        }
        if (parser_->is_done()) {
            onBody({});
            return;
        }
        lowest().expires_after(kBodyDeadline);
        const auto expect = parser_->get().find(http::field::expect);
        if (expect != parser_->get().end() && beast::iequals(expect->value(), "100-continue")) {
            // curl asks before sending a body over 1 KiB; the header passed, so it may come.
            static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
            net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                             [self = this->shared_from_this()](const beast::error_code& e, std::size_t) {
                                 if (!e) {
                                     self->readBody();
                                 }
                             });
            return;
        }
        readBody();
    }

    void readBody() {
        http::async_read(
            stream_, buffer_, *parser_,
            [self = this->shared_from_this()](const beast::error_code& e, std::size_t) { self->onBody(e); });
    }

    void onBody(const beast::error_code& ec) {
        if (ec) {
            failed(ec);
            return;
        }
        request_ = parser_->release();
        parser_.reset();
        shared_->table.set(id_, web::ConnectionTable::State::Busy);
        web::Routed routed = web::route(request_, shared_->options);
        if (routed.response) {
            answer(std::move(*routed.response));
            return;
        }
        slot_ = shared_->calls.take();
        if (!slot_) {
            web::Response busy = web::plain(request_, http::status::service_unavailable,
                                            "the control service is answering other requests; try again\n");
            busy.set(http::field::retry_after, "1");
            answer(std::move(busy));
            return;
        }
        call_ = std::move(*routed.call);
        if (call_.events) {
            slot_.reset(); // a stream, not a call the service answers once
            auto events = std::make_shared<web::EventStream<Stream>>(
                stream_, std::move(request_), this->shared_from_this(), shared_->control,
                // No executor is kept here: the control service holds this past the io_context.
                [shared = shared_, weak = this->weak_from_this()](std::function<void()> fn) {
                    const std::lock_guard lock(shared->gate);
                    const auto self = weak.lock();
                    if (shared->open && self) {
                        net::post(self->executor(), std::move(fn));
                    }
                });
            events->start(controlCall());
            return;
        }
        callControl();
    }

    // The control call of the request: the caller, the role its token gave when it was checked
    // with the header (or the viewer's without token auth), the method and params.
    ControlServer::Call controlCall() {
        ControlServer::Call c;
        c.caller = caller();
        c.role = role_;
        c.method = call_.method;
        c.params = std::move(call_.params);
        return c;
    }

    void callControl() {
        ControlServer::Call c = controlCall();
        // The timer and the answer answer this call only: an answer that comes after the timer
        // answered must not answer the connection's next request.
        const std::uint64_t number = ++callNumber_;
        replied_ = false;
        callTimer_.expires_after(shared_->options.callTimeout);
        callTimer_.async_wait([self = this->shared_from_this(), number](const beast::error_code& ec) {
            if (!ec && self->callNumber_ == number && !self->replied_) {
                self->onReply(MethodAnswer::error(rpc::kInternalError, "the control service did not answer"), true);
            }
        });
        shared_->control.call(std::move(c), [weak = this->weak_from_this(), shared = shared_, number](MethodAnswer a) {
            const std::lock_guard lock(shared->gate);
            // Closed first: once the server stopped, a session taken here could be the last
            // reference and be destroyed on this thread, after its io_context.
            if (!shared->open) {
                return;
            }
            if (const auto self = weak.lock()) {
                net::post(self->executor(), [self, number, a = std::move(a)]() mutable {
                    if (self->callNumber_ == number && !self->replied_) {
                        self->callTimer_.cancel();
                        self->onReply(a, false);
                    }
                });
            }
        });
    }

    void onReply(const MethodAnswer& reply, bool timedOut) {
        replied_ = true;
        slot_.reset();
        web::Response response = web::answerCall(request_, call_, reply);
        if (timedOut) {
            // The call may still be answered later, and is still counted by the control service:
            // the connection ends rather than serve another request beside it.
            response.keep_alive(false);
        }
        answer(std::move(response));
    }

    // A request that could not be read: its status if it has one, else the connection closes.
    void failed(const beast::error_code& ec) {
        // A deadline that passed has closed the socket already (beast::tcp_stream): no 408.
        const std::optional<unsigned> status = web::statusOfReadError(ec);
        if (!status) {
            return;
        }
        const auto code = static_cast<http::status>(*status);
        answer(web::plain(code, fmt::format("{}: {}\n", std::string(http::obsolete_reason(code)), ec.message())));
    }

    void answer(web::Response response) {
        shared_->table.set(id_, web::ConnectionTable::State::Busy);
        response_ = std::move(response);
        lowest().expires_after(kWriteDeadline);
        http::async_write(
            stream_, *response_,
            [self = this->shared_from_this()](const beast::error_code& ec, std::size_t) { self->onWritten(ec); });
    }

    void onWritten(const beast::error_code& ec) {
        const bool keep = !ec && response_->keep_alive() && !parser_;
        const bool large = request_.body().size() + response_->body().size() > kTrimAbove;
        response_.reset();
        request_ = {};
        shared_->budget.release(reserved_);
        reserved_ = 0;
        if (large) {
            // A reload's body and its copies went back to the allocator; give them back.
            buffer_.shrink_to_fit();
            ::malloc_trim(0);
        }
        if (keep) {
            awaitRequest();
        } else if (!ec) {
            linger();
        }
    }

    // The answer is out and the connection ends: stop sending, drop what the client still sends
    // (a body that was refused unread) until it closes, for a while at most.
    void linger() {
        parser_.reset();
        beast::error_code ignored;
        if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
            lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
            lowest().expires_after(kLinger);
            drain();
        } else {
            lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
        }
    }

    void drain() {
        buffer_.clear();
        stream_.async_read_some(buffer_.prepare(4096),
                                [self = this->shared_from_this()](const beast::error_code& ec, std::size_t n) {
                                    self->drained_ += n;
                                    if (!ec && self->drained_ < kLingerBytes) {
                                        self->drain();
                                    }
                                });
    }

    std::shared_ptr<Shared> shared_;
    Stream stream_;
    net::steady_timer callTimer_;
    std::string address_;
    std::uint16_t port_ = 0;
    std::uint64_t id_ = 0;
    beast::flat_buffer buffer_{kMaxBuffer};
    std::optional<web::RequestParser> parser_;
    web::Request request_;
    web::Call call_;
    std::optional<Role> role_;                 // of the request being served: its token's, or the viewer's without one
    std::optional<web::CallSlots::Slot> slot_; // while a control call is waited for
    std::uint64_t callNumber_ = 0;
    bool replied_ = false;
    std::optional<web::Response> response_;
    std::size_t reserved_ = 0;
    std::size_t drained_ = 0;
};

} // namespace

struct WebServer::Impl {
    std::shared_ptr<Shared> shared;
    std::optional<net::ssl::context> tls;
    std::string tlsError;
    std::unique_ptr<net::io_context> io;
    std::unique_ptr<tcp::acceptor> acceptor;
    std::unique_ptr<net::steady_timer> retry;
    std::vector<std::thread> threads;

    template <class Stream> void admit(std::shared_ptr<Session<Stream>> session) {
        web::ConnectionTable::Admission a =
            shared->table.admit(session->address(), [weak = std::weak_ptr<Session<Stream>>(session)] {
                if (const auto s = weak.lock()) {
                    net::post(s->executor(), [s] { s->close(); });
                }
            });
        for (const auto& close : a.evicted) {
            close();
        }
        if (a.id) {
            session->start(*a.id);
        } // else: every connection is answering a request; this one is closed unread
    }

    void acceptNext() {
        acceptor->async_accept(net::make_strand(*io), [this](const beast::error_code& ec, tcp::socket socket) {
            if (ec == net::error::operation_aborted) {
                return;
            }
            if (ec) {
                retry->expires_after(kAcceptRetry);
                retry->async_wait([this](const beast::error_code& e) {
                    if (!e) {
                        acceptNext();
                    }
                });
                return;
            }
            beast::error_code peerError;
            const tcp::endpoint peer = socket.remote_endpoint(peerError);
            if (!peerError) {
                if (tls) {
                    admit(std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
                        shared, beast::ssl_stream<beast::tcp_stream>(std::move(socket), *tls), peer));
                } else {
                    admit(std::make_shared<Session<beast::tcp_stream>>(shared, beast::tcp_stream(std::move(socket)),
                                                                       peer));
                }
            }
            acceptNext();
        });
    }
};

WebServer::WebServer(WebOptions options, ControlServer& control)
    : impl_(std::make_unique<Impl>()), options_(std::move(options)) {
    impl_->shared = std::make_shared<Shared>(options_, control);
    if (!options_.tlsCert.empty() && !options_.tlsKey.empty()) {
        try {
            impl_->tls.emplace(net::ssl::context::tls_server);
            impl_->tls->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                                    net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                                    net::ssl::context::no_tlsv1_1);
            impl_->tls->use_certificate_chain_file(options_.tlsCert);
            impl_->tls->use_private_key_file(options_.tlsKey, net::ssl::context::pem);
        } catch (const boost::system::system_error& e) {
            impl_->tlsError = e.what();
        }
    }
}

WebServer::~WebServer() {
    stop();
}

bool WebServer::start(std::string& error) {
    if (!impl_->tlsError.empty()) {
        error = fmt::format("[runtime.web]: cannot use TLS certificate '{}' with key '{}' ({})", options_.tlsCert,
                            options_.tlsKey, impl_->tlsError);
        return false;
    }
    impl_->io = std::make_unique<net::io_context>(kThreads);
    impl_->acceptor = std::make_unique<tcp::acceptor>(*impl_->io);
    impl_->retry = std::make_unique<net::steady_timer>(*impl_->io);
    beast::error_code ec;
    tcp::endpoint endpoint;
    const auto found = tcp::resolver(*impl_->io)
                           .resolve(options_.host, std::to_string(options_.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (!ec && !found.empty()) {
        endpoint = found.begin()->endpoint();
        for (const auto& entry : found) { // `localhost`: 127.0.0.1 rather than ::1, as a browser tries first
            if (entry.endpoint().address().is_v4()) {
                endpoint = entry.endpoint();
                break;
            }
        }
    } else if (!ec) {
        ec = net::error::host_not_found;
    }
    if (!ec) {
        impl_->acceptor->open(endpoint.protocol(), ec);
    }
    if (!ec) {
        impl_->acceptor->set_option(net::socket_base::reuse_address(true), ec);
    }
    if (!ec) {
        impl_->acceptor->bind(endpoint, ec);
    }
    if (!ec) {
        impl_->acceptor->listen(net::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        error = fmt::format("[runtime.web]: cannot listen on {}:{} ({})", options_.host, options_.port, ec.message());
        impl_->acceptor.reset();
        return false;
    }
    port_ = impl_->acceptor->local_endpoint().port();
    impl_->acceptNext();
    for (int i = 0; i < kThreads; ++i) {
        impl_->threads.emplace_back([io = impl_->io.get()] {
            lowerPriority(); // below the scan thread and the drivers, as the control service's thread
            for (;;) {
                try {
                    io->run();
                    return;
                } catch (const std::exception&) {
                    // A handler threw (memory ran out for one connection's buffers): that
                    // connection is gone, the others go on being served.
                }
            }
        });
    }
    return true;
}

void WebServer::stop() {
    if (impl_->threads.empty()) {
        return;
    }
    {
        const std::lock_guard lock(impl_->shared->gate);
        impl_->shared->open = false;
    }
    impl_->io->stop();
    for (std::thread& t : impl_->threads) {
        t.join();
    }
    impl_->threads.clear();
    impl_->retry.reset();
    impl_->acceptor.reset();
    impl_->io.reset(); // the connections still open are closed and freed here
}

std::string WebServer::url() const {
    const bool tls = !options_.tlsCert.empty() && !options_.tlsKey.empty();
    const bool v6 = options_.host.find(':') != std::string::npos;
    return fmt::format("{}://{}{}{}:{}", tls ? "https" : "http", v6 ? "[" : "", options_.host, v6 ? "]" : "", port_);
}

} // namespace takt::agent
