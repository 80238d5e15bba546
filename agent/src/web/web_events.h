#pragma once
// POST /api/events: the web page's value changes as Server-Sent Events (docs/web.md "Live
// values"). The body is var.subscribe's params; the request opens a control session for the
// connection (ControlServer::openStream) with the typed call /api/rpc makes: the caller, and the
// role of the token checked with the header (ControlServer::authenticate) or the one the web
// options grant. The connection then carries `subscribed` (the answer) and `var.changed` events
// (the notifications' params, handed over typed) until either side closes. A comment line every kHeartbeat keeps the
// connection (and any proxy) from calling it idle and finds a client that went away.
//
// The connection stays in the server's connection table (web_connections.h) for as long as it is
// open, so event streams count against the caps. A client that reads slowly holds at most one
// frame in writing: the control session holds its changes back meanwhile (the latest value of each
// variable wins, `skipped` counts what was merged), and a write that takes longer than the write
// deadline closes the stream.
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>

#include "takt/agent/control.h"
#include "web/web_http.h"

namespace takt::agent::web {

constexpr auto kHeartbeat = std::chrono::seconds(10);
constexpr auto kEventWriteDeadline = std::chrono::seconds(15);

// The var.subscribe call of an /api/events request, or the 400 its body gets (not a JSON object).
[[nodiscard]] std::optional<Response> eventsCall(const Request& request, Call& call);
// The header of the event stream (200, text/event-stream, no caching, closed when done).
[[nodiscard]] http::response<http::empty_body> eventsHeader(const Request& request);
// One event: `event: <name>` and its data on one `data:` line.
[[nodiscard]] std::string eventFrame(std::string_view name, std::string_view data);

template <class Stream> class EventStream : public std::enable_shared_from_this<EventStream<Stream>> {
public:
    // Runs `fn` on the connection's executor, unless the server has stopped.
    using Post = std::function<void(std::function<void()>)>;

    // `stream` belongs to `owner` (the connection), which the event stream keeps alive.
    EventStream(Stream& stream, Request request, std::shared_ptr<void> owner, ControlServer& control, Post post)
        : stream_(stream), request_(std::move(request)), owner_(std::move(owner)), control_(control),
          post_(std::move(post)), heartbeat_(stream.get_executor()) {}
    ~EventStream() {
        if (!done_ && id_ != 0) {
            control_.closeStream(id_); // the server stopped with the stream open
        }
    }
    EventStream(const EventStream&) = delete;
    EventStream& operator=(const EventStream&) = delete;

    void start(ControlServer::Call call) {
        ControlServer::Stream s;
        s.backlogged = [busy = busy_] { return busy->load(); };
        s.answer = [weak = this->weak_from_this(), post = post_](MethodAnswer answer) {
            post([weak, answer = std::move(answer)]() mutable {
                if (const auto self = weak.lock()) {
                    self->onAnswer(answer);
                }
            });
        };
        // Framed on the control thread: the connection's thread only writes it.
        s.notification = [weak = this->weak_from_this(), post = post_](std::string_view method,
                                                                       const std::string& params) {
            post([weak, frame = eventFrame(method, params)]() mutable {
                if (const auto self = weak.lock()) {
                    self->onFrame(std::move(frame));
                }
            });
        };
        busy_->store(true); // nothing goes out before the header
        id_ = control_.openStream(std::move(call), std::move(s));
        armHeartbeat();
    }

private:
    boost::beast::tcp_stream& lowest() { return boost::beast::get_lowest_layer(stream_); }

    void onAnswer(const MethodAnswer& answer) {
        if (done_ || answered_) {
            return;
        }
        answered_ = true;
        if (!answer.ok) {
            refuse(refused(request_, answer)); // its status by the error's code (web_http.h)
            return;
        }
        queue_.push_back(eventFrame("subscribed", answer.json));
        writeHeader();
    }

    void onFrame(std::string frame) {
        if (done_ || !answered_) {
            return;
        }
        queue_.push_back(std::move(frame));
        writeNext();
    }

    void refuse(Response response) {
        refusal_ = std::move(response);
        lowest().expires_after(kEventWriteDeadline);
        http::async_write(
            stream_, *refusal_,
            [self = this->shared_from_this()](const boost::beast::error_code&, std::size_t) { self->finish(); });
    }

    void writeHeader() {
        header_.emplace(eventsHeader(request_));
        serializer_.emplace(*header_);
        writing_ = true;
        lowest().expires_after(kEventWriteDeadline);
        http::async_write_header(stream_, *serializer_,
                                 [self = this->shared_from_this()](const boost::beast::error_code& ec, std::size_t) {
                                     self->writing_ = false;
                                     if (ec) {
                                         self->finish();
                                         return;
                                     }
                                     self->started_ = true;
                                     self->writeNext();
                                 });
    }

    void writeNext() {
        if (writing_ || !started_ || done_) {
            return;
        }
        if (queue_.empty()) {
            busy_->store(false); // the session may send again
            return;
        }
        busy_->store(true);
        writing_ = true;
        lowest().expires_after(kEventWriteDeadline);
        boost::asio::async_write(stream_, boost::asio::buffer(queue_.front()),
                                 [self = this->shared_from_this()](const boost::beast::error_code& ec, std::size_t) {
                                     self->writing_ = false;
                                     if (ec) {
                                         self->finish();
                                         return;
                                     }
                                     self->queue_.pop_front();
                                     self->writeNext();
                                 });
    }

    void armHeartbeat() {
        heartbeat_.expires_after(kHeartbeat);
        heartbeat_.async_wait([self = this->shared_from_this()](const boost::beast::error_code& ec) {
            if (ec || self->done_) {
                return;
            }
            if (self->started_ && !self->writing_ && self->queue_.empty()) {
                self->queue_.push_back(": keep-alive\n\n");
                self->writeNext();
            }
            self->armHeartbeat();
        });
    }

    void finish() {
        if (done_) {
            return;
        }
        done_ = true;
        control_.closeStream(id_);
        heartbeat_.cancel();
        boost::beast::error_code ignored;
        lowest().socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
        lowest().close();
    }

    Stream& stream_;
    Request request_;
    std::shared_ptr<void> owner_;
    ControlServer& control_;
    Post post_;
    boost::asio::steady_timer heartbeat_;
    std::shared_ptr<std::atomic<bool>> busy_ = std::make_shared<std::atomic<bool>>(false);
    std::uint64_t id_ = 0;
    std::deque<std::string> queue_;
    std::optional<http::response<http::empty_body>> header_;
    std::optional<http::response_serializer<http::empty_body>> serializer_;
    std::optional<Response> refusal_;
    bool answered_ = false;
    bool started_ = false;
    bool writing_ = false;
    bool done_ = false;
};

} // namespace takt::agent::web
