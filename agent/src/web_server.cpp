#include "takt/agent/web.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "rpc_envelope.h"
#include "rpc_json.h"

namespace takt::agent {

namespace {

// A page polls a few values a second; more than this many requests in flight at once would only
// queue behind each other on the control service's one thread.
constexpr std::size_t kWorkers = 4;
// One JSON-RPC request per POST; a reload carries a base64 program.stbc.
constexpr std::size_t kMaxBody = std::size_t{8} << 20;
// Longer than any method takes (the control service answers a command it cannot apply in time).
constexpr auto kCallTimeout = std::chrono::seconds(15);
// The page loads nothing but its own files and talks to nothing but its own origin.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// The token of `Authorization: Bearer <token>`, or empty.
std::string bearer(const httplib::Request& req) {
    const std::string value = req.get_header_value("Authorization");
    constexpr std::string_view kPrefix = "Bearer ";
    return value.starts_with(kPrefix) ? value.substr(kPrefix.size()) : std::string();
}

// Workers below the scan thread and the drivers, as the control service's thread: the page must
// never compete with the cycle. Threads inherit the nice value of the thread that creates them.
class LowPriorityPool final : public httplib::TaskQueue {
public:
    LowPriorityPool() : pool_(kWorkers) {}
    void enqueue(std::function<void()> fn) override { pool_.enqueue(std::move(fn)); }
    void shutdown() override { pool_.shutdown(); }

private:
    httplib::ThreadPool pool_;
};

void lowerPriority() {
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
}

// The page's files from memory, each at its exact path; anything else is 404 (no file system is
// reached from a URL, so `..` leads nowhere).
void serveAssets(httplib::Server& s, std::span<const WebAsset> assets) {
    const auto headers = [](httplib::Response& res) {
        res.set_header("Content-Security-Policy", kContentSecurityPolicy);
        res.set_header("X-Content-Type-Options", "nosniff");
        res.set_header("Referrer-Policy", "no-referrer");
    };
    for (const WebAsset& asset : assets) {
        const auto serve = [&asset, headers](const httplib::Request& req, httplib::Response& res) {
            headers(res);
            res.set_header("ETag", std::string(asset.etag));
            res.set_header("Cache-Control", asset.immutable ? "public, max-age=31536000, immutable" : "no-cache");
            if (req.get_header_value("If-None-Match") == asset.etag) {
                res.status = 304;
                return;
            }
            res.set_content(asset.body.data(), asset.body.size(), std::string(asset.contentType));
        };
        s.Get(std::string(asset.path), serve);
        if (asset.path == "/index.html") {
            s.Get("/", serve);
        }
    }
    if (assets.empty()) {
        s.Get("/", [](const httplib::Request&, httplib::Response& res) {
            res.status = 404;
            res.set_content("takt: this takt was built without its web page (node and npm were missing when it was "
                            "built; see docs/web.md); /metrics and /api/rpc are served\n",
                            "text/plain");
        });
    }
}

} // namespace

struct WebServer::Impl {
    std::unique_ptr<httplib::Server> server;
    std::thread thread;
};

WebServer::WebServer(WebOptions options, ControlServer& control)
    : impl_(std::make_unique<Impl>()), options_(std::move(options)) {
    if (!options_.tlsCert.empty() && !options_.tlsKey.empty()) {
        impl_->server = std::make_unique<httplib::SSLServer>(options_.tlsCert.c_str(), options_.tlsKey.c_str());
    } else {
        impl_->server = std::make_unique<httplib::Server>();
    }
    httplib::Server& s = *impl_->server;
    s.new_task_queue = [] { return new LowPriorityPool(); };
    s.set_payload_max_length(kMaxBody);
    // A worker serves one connection at a time, for as long as it is kept alive: an idle browser
    // connection must not hold one of the four for long. A page polls every 250 ms, so its
    // connections stay warm; a vanished one is closed after this, a stalled one after the read
    // and write timeouts (5 s).
    s.set_keep_alive_timeout(2);

    // A request without a token is a viewer's (auth = "local"), or refused (auth = "token").
    const auto admitted = [this](const httplib::Request& req, httplib::Response& res) {
        if (options_.tokenAuth && bearer(req).empty()) {
            res.status = 401;
            res.set_header("WWW-Authenticate", "Bearer");
            res.set_content("a control token is required: Authorization: Bearer <token>\n", "text/plain");
            return false;
        }
        return true;
    };
    const auto call = [this, &control](const httplib::Request& req, std::string line) {
        std::promise<std::string> answer;
        std::future<std::string> got = answer.get_future();
        ControlServer::LocalCall c;
        c.peer = fmt::format("web:{}:{}", req.remote_addr, req.remote_port);
        c.address = req.remote_addr;
        c.token = bearer(req);
        if (!options_.tokenAuth) {
            c.grantedRole = Role::Viewer;
        }
        c.line = std::move(line);
        control.callLocal(std::move(c), [p = std::make_shared<std::promise<std::string>>(std::move(answer))](
                                            std::string reply) { p->set_value(std::move(reply)); });
        if (got.wait_for(kCallTimeout) != std::future_status::ready) {
            return rpc::errorLine(rpc::RequestId{},
                                  rpc::Error{rpc::kInternalError, "the control service did not answer", {}});
        }
        return got.get();
    };

    s.Post("/api/rpc", [admitted, call](const httplib::Request& req, httplib::Response& res) {
        if (!admitted(req, res)) {
            return;
        }
        const std::string reply = call(req, req.body);
        // A failed or backed-off login is the HTTP client's problem, not the method's.
        const bool unauthorized = reply.find(fmt::format("\"code\":{}", kUnauthorized)) != std::string::npos;
        const bool backedOff =
            !bearer(req).empty() && reply.find(fmt::format("\"code\":{}", kRateLimited)) != std::string::npos;
        res.status = unauthorized ? 401 : backedOff ? 429 : 200;
        res.set_content(reply + "\n", "application/json");
    });
    s.Get("/metrics", [this, admitted, call](const httplib::Request& req, httplib::Response& res) {
        if (!admitted(req, res)) {
            return;
        }
        if (options_.tokenAuth) {
            // The token must be one of the endpoint's: checked by a login through the service.
            const std::string reply = call(req, rpc::requestLine(1, "agent.ping", "{}"));
            if (reply.find(R"("error")") != std::string::npos) {
                res.status = 401;
                res.set_content(reply + "\n", "application/json");
                return;
            }
        }
        res.set_content(options_.metrics ? options_.metrics() : std::string(), "text/plain; version=0.0.4");
    });
    serveAssets(s, options_.assets);
}

WebServer::~WebServer() {
    stop();
}

bool WebServer::start(std::string& error) {
    httplib::Server& s = *impl_->server;
    if (!s.is_valid()) {
        error = fmt::format("[runtime.web]: cannot use TLS certificate '{}' with key '{}'", options_.tlsCert,
                            options_.tlsKey);
        return false;
    }
    if (options_.port == 0) {
        const int port = s.bind_to_any_port(options_.host);
        if (port <= 0) {
            error = fmt::format("[runtime.web]: cannot listen on {}:0", options_.host);
            return false;
        }
        port_ = static_cast<std::uint16_t>(port);
    } else if (!s.bind_to_port(options_.host, options_.port)) {
        error = fmt::format("[runtime.web]: cannot listen on {}:{} ({})", options_.host, options_.port,
                            std::strerror(errno));
        return false;
    } else {
        port_ = options_.port;
    }
    impl_->thread = std::thread([&s] {
        lowerPriority(); // the pool's workers are created by this thread and inherit it
        s.listen_after_bind();
    });
    return true;
}

void WebServer::stop() {
    if (impl_->thread.joinable()) {
        impl_->server->stop();
        impl_->thread.join();
    }
}

std::string WebServer::url() const {
    const bool tls = !options_.tlsCert.empty() && !options_.tlsKey.empty();
    const bool v6 = options_.host.find(':') != std::string::npos;
    return fmt::format("{}://{}{}{}:{}", tls ? "https" : "http", v6 ? "[" : "", options_.host, v6 ? "]" : "", port_);
}

} // namespace takt::agent
