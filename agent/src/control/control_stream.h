#pragma once
// The three transports of the control endpoint behind one small interface, so a connection is
// written once: a Unix socket, a TCP socket, and TLS over TCP (asio::ssl).
#include <functional>
#include <memory>
#include <string>

#include <asio.hpp>
#include <asio/ssl.hpp>

namespace takt::agent::detail {

class ControlStream {
public:
    using Handler = std::function<void(const asio::error_code&, std::size_t)>;
    virtual ~ControlStream() = default;
    ControlStream() = default;
    ControlStream(const ControlStream&) = delete;
    ControlStream& operator=(const ControlStream&) = delete;

    // TLS: the server handshake; the plain sockets complete at once.
    virtual void handshake(std::function<void(const asio::error_code&)> done) = 0;
    virtual void readSome(asio::mutable_buffer buffer, Handler done) = 0;
    // Writes the whole buffer.
    virtual void write(asio::const_buffer buffer, Handler done) = 0;
    virtual void close() = 0;
};

template <class Socket> class PlainStream final : public ControlStream {
public:
    explicit PlainStream(Socket socket) : socket_(std::move(socket)) {}
    void handshake(std::function<void(const asio::error_code&)> done) override {
        asio::post(socket_.get_executor(), [done = std::move(done)] { done(asio::error_code{}); });
    }
    void readSome(asio::mutable_buffer buffer, Handler done) override {
        socket_.async_read_some(buffer, std::move(done));
    }
    void write(asio::const_buffer buffer, Handler done) override {
        asio::async_write(socket_, buffer, std::move(done));
    }
    void close() override {
        asio::error_code ignored;
        socket_.shutdown(Socket::shutdown_both, ignored);
        socket_.close(ignored);
    }

private:
    Socket socket_;
};

class TlsStream final : public ControlStream {
public:
    TlsStream(asio::ip::tcp::socket socket, asio::ssl::context& context) : stream_(std::move(socket), context) {}
    void handshake(std::function<void(const asio::error_code&)> done) override {
        stream_.async_handshake(asio::ssl::stream_base::server, std::move(done));
    }
    void readSome(asio::mutable_buffer buffer, Handler done) override {
        stream_.async_read_some(buffer, std::move(done));
    }
    void write(asio::const_buffer buffer, Handler done) override {
        asio::async_write(stream_, buffer, std::move(done));
    }
    void close() override {
        // No close_notify exchange: the peer may be the one not reading.
        asio::error_code ignored;
        stream_.lowest_layer().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        stream_.lowest_layer().close(ignored);
    }

private:
    asio::ssl::stream<asio::ip::tcp::socket> stream_;
};

} // namespace takt::agent::detail
