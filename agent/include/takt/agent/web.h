#pragma once
// The runtime's HTTP surface ([runtime.web]): `/metrics` in Prometheus text format and
// `/api/rpc`, one JSON-RPC request per POST answered by the control service's method table with
// the caller's role, plus the web page's files when they are installed. Served by Boost.Beast on
// threads of its own at low priority; nothing here touches the scan thread: every call goes
// through ControlServer::call (typed, with the role its token gave), as a control line would.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "takt/agent/control.h"

namespace takt::agent {

// One file of the page, served at `path` from memory: no file system is reached from a URL.
struct WebAsset {
    std::string_view path;        // "/index.html", "/app-1a2b3c4d5e6f.js"
    std::string_view contentType; // with its charset
    std::string_view etag;        // quoted, as sent in ETag
    bool immutable = false;       // the name carries the content's hash: cached for a year
    std::string_view body;
};

struct WebOptions {
    std::string host = "127.0.0.1";
    std::uint16_t port = 8080; // 0: any free port (port() tells which)
    // Every request must carry `Authorization: Bearer <control token>`; otherwise a request
    // without one has the viewer role (a page on loopback) and a token raises it.
    bool tokenAuth = false;
    std::string tlsCert, tlsKey; // both set: HTTPS
    // The page's files (not copied: they must outlive the server; takt's are static); `/` is
    // /index.html. Empty: no page (`/` says so), the API still works.
    std::span<const WebAsset> assets;
    // The Prometheus text of the runtime's figures, called on a web thread for each scrape.
    std::function<std::string()> metrics;
    // How long a request waits for its control call: longer than any method takes (the control
    // service answers a command the scan loop cannot apply in time). A call that passes it is
    // answered with an error and its connection closed. Tests shorten it.
    std::chrono::milliseconds callTimeout{15'000};
};

class WebServer {
public:
    WebServer(WebOptions options, ControlServer& control);
    ~WebServer(); // stops
    WebServer(const WebServer&) = delete;
    WebServer& operator=(const WebServer&) = delete;

    // Binds and starts serving; false with `error` (the address, the TLS files) and nothing left
    // listening.
    bool start(std::string& error);
    void stop();
    [[nodiscard]] std::uint16_t port() const { return port_; }
    [[nodiscard]] std::string url() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    WebOptions options_;
    std::uint16_t port_ = 0;
};

} // namespace takt::agent
