// [runtime.web] through the real `takt run`: /metrics in Prometheus text (counters that count,
// cumulative histograms), /api/rpc answered by the control service's method table with the
// caller's role (a page on loopback is a viewer; a Bearer token raises it; a wrong one is 401),
// auth = "token", a runtime with the web page and no control endpoint, and the configuration
// rules `takt validate` applies.
#include <chrono>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "support/control_live_support.h"
#include "support/net.h"
#include "takt/agent/control.h"

namespace takt::agent::live {
namespace {

constexpr const char* kProgram = R"(PROGRAM Main
VAR
    cnt : UDINT;
    setpoint : INT := 7;
END_VAR
cnt := cnt + 1;
END_PROGRAM
)";

constexpr const char* kViewerToken = "viewer-3f9c1a7be2d84c06a5b1";
constexpr const char* kEngineerToken = "engineer-8d27e4c1f0b9a63d52e7";

// A project with viewer and engineer tokens, `control` (a [runtime.control] endpoint line or
// nothing) and [runtime.web] on `port` with `web` extra keys.
void writeProject(const TempDir& dir, const std::string& control, std::uint16_t port, const std::string& web = {}) {
    dir.write("viewer.token", std::string(kViewerToken) + "\n", 0600);
    dir.write("engineer.token", std::string(kEngineerToken) + "\n", 0600);
    dir.write("runtime.toml", fmt::format(R"([bundle]
version = 1

[resource]
name = "cell"
cycle_interval_ms = 10

[runtime.control]
{}

[[runtime.control.tokens]]
role = "viewer"
token_file = "viewer.token"

[[runtime.control.tokens]]
role = "engineer"
token_file = "engineer.token"

[runtime.web]
listen = "127.0.0.1:{}"
{}
)",
                                          control, port, web));
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("src/main.st", kProgram);
}

bool waitWeb(Runtime& rt, std::uint16_t port) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < end) {
        if (test::tcpPortOpen(port)) {
            return true;
        }
        if (rt.waitForExit(std::chrono::milliseconds(0))) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

// One JSON-RPC call through POST /api/rpc; the HTTP status and the body.
std::pair<int, std::string> rpcCall(httplib::Client& http, const std::string& method, const std::string& params,
                                    const std::string& token = {}) {
    httplib::Headers headers;
    if (!token.empty()) {
        headers.emplace("Authorization", "Bearer " + token);
    }
    const std::string body =
        fmt::format(R"({{"jsonrpc":"2.0","id":7,"method":"{}","params":{}}})", method, params.empty() ? "{}" : params);
    const httplib::Result r = http.Post("/api/rpc", headers, body, "application/json");
    if (!r) {
        return {0, "no answer: " + httplib::to_string(r.error())};
    }
    return {r->status, r->body};
}

// The samples of a Prometheus text: "name{labels}" -> value.
std::map<std::string, double> samples(const std::string& text) {
    std::map<std::string, double> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        const std::size_t space = line.rfind(' ');
        out[line.substr(0, space)] = std::stod(line.substr(space + 1));
    }
    return out;
}

TEST(WebLive, MetricsCountCyclesAndTheHistogramsAreCumulative) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, "", port);
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    httplib::Client http("127.0.0.1", port);
    const httplib::Result first = http.Get("/metrics");
    ASSERT_TRUE(first) << httplib::to_string(first.error());
    EXPECT_EQ(first->status, 200);
    EXPECT_EQ(first->get_header_value("Content-Type"), "text/plain; version=0.0.4");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const httplib::Result second = http.Get("/metrics");
    ASSERT_TRUE(second);
    const auto a = samples(first->body);
    const auto b = samples(second->body);
    ASSERT_TRUE(a.contains("takt_cycles_total")) << first->body;
    EXPECT_GT(b.at("takt_cycles_total"), a.at("takt_cycles_total"));
    EXPECT_EQ(b.at("takt_state{state=\"running\"}"), 1);
    EXPECT_EQ(b.at("takt_driver_health{driver=\"loopback\",health=\"ok\"}"), 1) << second->body;
    for (const char* h : {"takt_scan_exec_seconds", "takt_scan_lateness_seconds"}) {
        // Cumulative: by increasing bound the counts never drop, and +Inf holds them all.
        std::map<double, double> byBound;
        const std::string prefix = std::string(h) + "_bucket{le=\"";
        for (const auto& [name, value] : b) {
            if (name.starts_with(prefix) && !name.ends_with("+Inf\"}")) {
                byBound[std::stod(name.substr(prefix.size()))] = value;
            }
        }
        ASSERT_EQ(byBound.size(), 16u) << h;
        double previous = 0;
        for (const auto& [bound, value] : byBound) {
            EXPECT_GE(value, previous) << h << " le=" << bound;
            previous = value;
        }
        EXPECT_EQ(b.at(std::string(h) + "_bucket{le=\"+Inf\"}"), b.at(std::string(h) + "_count")) << h;
        EXPECT_EQ(b.at(std::string(h) + "_bucket{le=\"1\"}"), b.at(std::string(h) + "_count")) << h;
        EXPECT_GT(b.at(std::string(h) + "_count"), 0) << h;
    }
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

TEST(WebLive, TheApiServesControlMethodsWithTheCallersRole) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    const std::string endpoint = "unix://" + (project.path() / "ctl.sock").string();
    writeProject(project, fmt::format("endpoint = \"{}\"", endpoint), port);
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    httplib::Client http("127.0.0.1", port);

    // Without a token: a viewer on loopback (auth = "local").
    auto [status, body] = rpcCall(http, "runtime.status", "");
    EXPECT_EQ(status, 200);
    EXPECT_NE(body.find(R"("state":"running")"), std::string::npos) << body;
    std::tie(status, body) =
        rpcCall(http, "var.write", R"({"name":"Main.setpoint","value":{"type":"INT","value":42}})");
    EXPECT_EQ(status, 200);
    EXPECT_NE(body.find(fmt::format(R"("code":{})", kForbidden)), std::string::npos) << body;
    // The same method with the engineer's token, seen by a client of the control endpoint.
    std::tie(status, body) =
        rpcCall(http, "var.write", R"({"name":"Main.setpoint","value":{"type":"INT","value":42}})", kEngineerToken);
    EXPECT_EQ(status, 200);
    EXPECT_NE(body.find(R"("result")"), std::string::npos) << body;
    auto viewer = connected(clientOptions(endpoint, kViewerToken));
    const rapidjson::Document read = result(*viewer, "var.read", R"({"names":["Main.setpoint"]})");
    ASSERT_TRUE(read.IsObject() && read.HasMember("values")) << rt.log();
    EXPECT_EQ(read["values"]["Main.setpoint"]["value"].GetInt64(), 42);
    // A viewer's token does not write; a wrong token is 401 and changes nothing.
    std::tie(status, body) =
        rpcCall(http, "var.write", R"({"name":"Main.setpoint","value":{"type":"INT","value":1}})", kViewerToken);
    EXPECT_NE(body.find(fmt::format(R"("code":{})", kForbidden)), std::string::npos) << body;
    std::tie(status, body) = rpcCall(http, "var.write", R"({"name":"Main.setpoint","value":{"type":"INT","value":1}})",
                                     "engineer-wrong-token-0000000000");
    EXPECT_EQ(status, 401) << body;
    // A malformed request is the method table's -32600 / -32700, not an HTTP error.
    const httplib::Result bad = http.Post("/api/rpc", "{not json", "application/json");
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->status, 200);
    EXPECT_NE(bad->body.find(R"("code":-32700)"), std::string::npos) << bad->body;
    const rapidjson::Document after = result(*viewer, "var.read", R"({"names":["Main.setpoint"]})");
    EXPECT_EQ(after["values"]["Main.setpoint"]["value"].GetInt64(), 42);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

TEST(WebLive, AuthTokenRefusesRequestsWithoutOne) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, "", port, "auth = \"token\"");
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    httplib::Client http("127.0.0.1", port);
    const httplib::Result anonymous = http.Get("/metrics");
    ASSERT_TRUE(anonymous);
    EXPECT_EQ(anonymous->status, 401);
    EXPECT_EQ(rpcCall(http, "runtime.status", "").first, 401);
    const httplib::Result viewer = http.Get("/metrics", {{"Authorization", std::string("Bearer ") + kViewerToken}});
    ASSERT_TRUE(viewer);
    EXPECT_EQ(viewer->status, 200);
    EXPECT_NE(viewer->body.find("takt_cycles_total"), std::string::npos);
    const httplib::Result wrong = http.Get("/metrics", {{"Authorization", "Bearer viewer-wrong-token-00000000000"}});
    ASSERT_TRUE(wrong);
    EXPECT_EQ(wrong->status, 401);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// Regression: tls_cert and tls_key were opened relative to the directory takt run started in,
// while every other file runtime.toml names is relative to runtime.toml's folder, so a project
// run with --project from elsewhere (as a service is) could not serve HTTPS.
TEST(WebLive, TlsFilesAreRelativeToRuntimeToml) {
    TempDir project;
    ASSERT_TRUE(writeServerCertificate(project)) << readText(project.path() / "openssl.log");
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, "", port, "tls = true\ntls_cert = \"server.pem\"\ntls_key = \"server.key\"");
    Runtime rt(project.path());
    ASSERT_NE(fs::current_path(), project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    httplib::SSLClient https("127.0.0.1", port);
    https.set_ca_cert_path((project.path() / "ca.pem").string());
    https.enable_server_certificate_verification(true);
    const httplib::Result r = https.Get("/metrics");
    ASSERT_TRUE(r) << httplib::to_string(r.error()) << rt.log();
    EXPECT_EQ(r->status, 200);
    EXPECT_NE(r->body.find("takt_cycles_total"), std::string::npos);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// Any address but loopback needs TLS and tokens, as the control endpoint does: refused by
// `takt validate` and by `takt run` at the key, before anything listens.
TEST(WebLive, ANetworkAddressWithoutTlsIsRefusedAtTheKey) {
    TempDir project;
    writeProject(project, "", 8080);
    std::string text = readText(project.path() / "runtime.toml");
    text.replace(text.find("127.0.0.1:8080"), 14, "0.0.0.0:8080");
    project.write("runtime.toml", text);
    const test::RunResult v =
        test::runShell(std::string(TAKT_BINARY) + " validate --project " + project.path().string() + " 2>&1",
                       {.capture = test::Capture::Stdout});
    EXPECT_NE(v.exitCode, 0);
    EXPECT_NE(v.out.find("runtime.web.listen: \"0.0.0.0:8080\" is not a loopback address: serving it needs tls = "
                         "true (tls_cert, tls_key) and auth = \"token\""),
              std::string::npos)
        << v.out;
    const test::RunResult r =
        test::runShell(std::string(TAKT_BINARY) + " run --for 1s --project " + project.path().string() + " 2>&1",
                       {.capture = test::Capture::Stdout});
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.out.find("runtime.web.listen"), std::string::npos) << r.out;
}

// The page's files come from memory at their exact paths, with their content types, caching
// headers and a Content-Security-Policy; anything else is 404, `..` included.
TEST(WebLive, ThePageIsServedWithTypesCachingAndNoPathTraversal) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, "", port);
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    httplib::Client http("127.0.0.1", port);
    const httplib::Result index = http.Get("/");
    ASSERT_TRUE(index) << httplib::to_string(index.error());
#if TAKT_WEB_PAGE
    ASSERT_EQ(index->status, 200) << index->body;
    EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
    EXPECT_EQ(index->get_header_value("Cache-Control"), "no-cache");
    EXPECT_NE(index->get_header_value("Content-Security-Policy").find("default-src 'none'"), std::string::npos);
    EXPECT_EQ(index->get_header_value("X-Content-Type-Options"), "nosniff");
    const std::string etag = index->get_header_value("ETag");
    ASSERT_FALSE(etag.empty());
    // Unchanged since the browser's copy: 304 without a body.
    const httplib::Result again = http.Get("/", httplib::Headers{{"If-None-Match", etag}});
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 304);
    EXPECT_TRUE(again->body.empty());
    EXPECT_EQ(http.Get("/index.html")->body, index->body);

    // The script and the style sheet the page names, by their hashed names: cached for good.
    for (const auto& [pattern, type] : {std::pair{std::string(R"(src="(/app-[0-9a-f]+\.js)\")"), "text/javascript"},
                                        std::pair{std::string(R"(href="(/app-[0-9a-f]+\.css)\")"), "text/css"}}) {
        std::smatch m;
        ASSERT_TRUE(std::regex_search(index->body, m, std::regex(pattern))) << index->body;
        const httplib::Result file = http.Get(m[1].str());
        ASSERT_TRUE(file);
        EXPECT_EQ(file->status, 200) << m[1];
        EXPECT_EQ(file->get_header_value("Content-Type"), std::string(type) + "; charset=utf-8");
        EXPECT_EQ(file->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
        EXPECT_GT(file->body.size(), 1000U);
    }
#else
    EXPECT_EQ(index->status, 404);
    EXPECT_NE(index->body.find("built without its web page"), std::string::npos) << index->body;
#endif
    for (const char* path : {"/nothing.js", "/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                             "/index.html/../../runtime.toml", "/runtime.toml", "/src/main.st", "/.."}) {
        const httplib::Result r = http.Get(path);
        ASSERT_TRUE(r) << path;
        EXPECT_EQ(r->status, 404) << path;
        EXPECT_EQ(r->body.find("cycle_interval_ms"), std::string::npos) << path;
        EXPECT_EQ(r->body.find("root:"), std::string::npos) << path;
    }
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// What the page polls besides the values: the event log since a sequence number with the
// online-change history, the lateness histogram's buckets, and values as IEC literals.
TEST(WebLive, ThePageMethodsAnswerEventsHistogramAndLiterals) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, "", port);
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    httplib::Client http("127.0.0.1", port);

    auto [status, body] = rpcCall(http, "events.recent", "");
    EXPECT_EQ(status, 200);
    EXPECT_NE(body.find(R"("events":[{"seq":1,"type":"runtime_started")"), std::string::npos) << body;
    EXPECT_NE(body.find(R"("reloads":[])"), std::string::npos) << body;
    // Only what came after the last one seen (an overrun on a busy machine may come meanwhile).
    std::tie(status, body) = rpcCall(http, "events.recent", R"({"since":1})");
    rapidjson::Document later;
    later.Parse(body.c_str());
    ASSERT_TRUE(later.IsObject() && later.HasMember("result")) << body;
    EXPECT_GE(later["result"]["next"].GetUint64(), 2U) << body;
    for (const auto& e : later["result"]["events"].GetArray()) {
        EXPECT_GT(e["seq"].GetUint64(), 1U) << body;
    }
    std::tie(status, body) = rpcCall(http, "events.recent", R"({"since":-1})");
    EXPECT_NE(body.find(R"("code":-32602)"), std::string::npos) << body;

    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::tie(status, body) = rpcCall(http, "runtime.histogram", "");
    EXPECT_NE(body.find(R"("exec":[[)"), std::string::npos) << body;
    EXPECT_NE(body.find(R"("lateness":[[)"), std::string::npos) << body;

    std::tie(status, body) = rpcCall(http, "var.write", R"({"name":"Main.setpoint","value":"16#10"})", kEngineerToken);
    ASSERT_NE(body.find(R"("result")"), std::string::npos) << body;
    std::tie(status, body) = rpcCall(http, "var.read", R"({"names":["Main.setpoint"],"format":"iec"})");
    EXPECT_NE(body.find(R"("values":{"Main.setpoint":"16"})"), std::string::npos) << body;
    std::tie(status, body) = rpcCall(http, "var.read", R"({"names":["Main.setpoint"],"format":"json"})");
    EXPECT_NE(body.find(R"("code":-32602)"), std::string::npos) << body;
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// Browsers that went silent (a laptop closed mid-poll, a tab frozen) hold connections open
// without sending: they cost a worker for the 2 s keep-alive at most, so a live page is
// answered meanwhile, and the runtime goes on cycling.
TEST(WebLive, SilentConnectionsDoNotStarveAPage) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, "", port);
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    std::vector<int> silent;
    for (int i = 0; i < 12; ++i) { // three times the workers
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
        silent.push_back(fd);
    }
    httplib::Client http("127.0.0.1", port);
    http.set_read_timeout(std::chrono::seconds(15));
    // Answered within the client's 15 s: three rounds of the 2 s keep-alive; with the former
    // 30 s keep-alive the request waited 90 s behind the silent ones.
    auto [status, body] = rpcCall(http, "runtime.status", "");
    EXPECT_EQ(status, 200) << body;
    EXPECT_NE(body.find(R"("state":"running")"), std::string::npos) << body;
    for (const int fd : silent) {
        ::close(fd);
    }
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

} // namespace
} // namespace takt::agent::live
