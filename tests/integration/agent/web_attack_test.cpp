// [runtime.web] under hostile and careless clients, through the real `takt run` on loopback:
// headers trickled a byte a second, floods of idle connections under the service's 1,024
// descriptors, chunked and header floods before authentication, Range amplification and
// malformed framing. Each attack runs while a legitimate client polls /metrics from another
// address, and each test checks that the client is answered, the control endpoint answers,
// RETAIN saves go on and the runtime's memory stays bounded. Attackers connect from 127.0.0.2
// and up (all of 127/8 is loopback), the legitimate client from 127.0.0.1.
#include <poll.h>
#include <sys/resource.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "support/control_live_support.h"
#include "support/net.h"
#include "takt/agent/control_client.h"

namespace takt::agent::live {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kProgram = R"(PROGRAM Main
VAR RETAIN
    kept : UDINT;
END_VAR
kept := kept + 1;
END_PROGRAM
)";

constexpr const char* kToken = "engineer-8d27e4c1f0b9a63d52e7";

// A project with a control endpoint on a unix socket, RETAIN saved every 100 ms and the web
// surface on `port` with `web` extra keys.
void writeProject(const TempDir& dir, std::uint16_t port, const std::string& web = {}) {
    dir.write("engineer.token", std::string(kToken) + "\n", 0600);
    dir.write("runtime.toml", fmt::format(R"([bundle]
version = 1

[resource]
name = "cell"
cycle_interval_ms = 10

[runtime.control]
endpoint = "unix://{}"

[[runtime.control.tokens]]
role = "engineer"
token_file = "engineer.token"

[runtime.retain]
mode = "file"
save_interval_ms = 100

[runtime.web]
listen = "127.0.0.1:{}"
{}
)",
                                          (dir.path() / "takt.sock").string(), port, web));
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("src/main.st", kProgram);
}

// `takt run` with the descriptor limit of the shipped unit (LimitNOFILE=1024), set by prlimit,
// which execs takt in its own process.
class LimitedRuntime : public test::Process {
public:
    explicit LimitedRuntime(const fs::path& dir)
        : Process({"/usr/bin/prlimit", "--nofile=1024:1024", "--", TAKT_BINARY, "run", "--project", dir.string(),
                   "--for", "120s"},
                  {.log = dir / "run.log"}) {}
    int stop() { return terminate(std::chrono::seconds(10)); }
};

bool waitWeb(test::Process& rt, std::uint16_t port) {
    const auto end = Clock::now() + 20s;
    while (Clock::now() < end) {
        if (test::tcpPortOpen(port)) {
            return true;
        }
        if (rt.waitForExit(0ms)) {
            return false;
        }
        std::this_thread::sleep_for(50ms);
    }
    return false;
}

// A TCP connection from `source` (an address of 127/8) to 127.0.0.1:port, or -1; connect gives
// up after 500 ms (a full accept queue drops the handshake).
int connectFrom(const std::string& source, std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    const timeval tv{0, 500000};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from) != 0 ||
        ::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// True when the server has something to say (or closed): a client stops sending then.
bool answered(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
}

bool sendAll(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n <= 0) {
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// What the server sends until it closes the connection or `limit` passes.
std::string readUntilClosed(int fd, std::chrono::milliseconds limit) {
    std::string out;
    const auto end = Clock::now() + limit;
    char buf[65536];
    while (Clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
        if (::poll(&p, 1, static_cast<int>(std::max<long>(left, 1))) <= 0) {
            continue;
        }
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

// True once the peer has closed `fd` (or reset it).
bool closedByPeer(int fd) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) {
        return false;
    }
    char c;
    return ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
}

// `raw` sent from 127.0.0.2 (the body streamed by `body`, if any), the answer until the server
// closes (5 s at most).
std::string roundTrip(std::uint16_t port, const std::string& raw, const std::function<void(int)>& body = {}) {
    const int fd = connectFrom("127.0.0.2", port);
    if (fd < 0) {
        return "no connection";
    }
    sendAll(fd, raw);
    if (body) {
        body(fd);
    }
    std::string answer = readUntilClosed(fd, 5s);
    ::close(fd);
    return answer;
}

int statusOf(const std::string& response) {
    static const std::regex line(R"(^HTTP/1\.[01] (\d{3}) )");
    std::smatch m;
    return std::regex_search(response, m, line) ? std::stoi(m[1]) : 0;
}

// The legitimate client: GET /metrics from 127.0.0.1 answered 200 within 3 s.
bool served(std::uint16_t port, const std::string& token = {}) {
    httplib::Client http("127.0.0.1", port);
    http.set_connection_timeout(3s);
    http.set_read_timeout(3s);
    httplib::Headers headers;
    if (!token.empty()) {
        headers.emplace("Authorization", "Bearer " + token);
    }
    const httplib::Result r = http.Get("/metrics", headers);
    return r && r->status == 200 && r->body.find("takt_cycles_total") != std::string::npos;
}

// agent.ping on the project's control endpoint, answered within 3 s.
bool controlAnswers(const TempDir& dir) {
    ControlClientOptions o = clientOptions("unix://" + (dir.path() / "takt.sock").string());
    o.timeoutMs = 3000;
    const ControlReply r = controlCall(o, "agent.ping", "");
    return r.reached && r.ok;
}

// A sample of /metrics (e.g. takt_retain_saves_total), -1 when it could not be read.
double metric(std::uint16_t port, const std::string& name, const std::string& token = {}) {
    httplib::Client http("127.0.0.1", port);
    http.set_read_timeout(5s);
    httplib::Headers headers;
    if (!token.empty()) {
        headers.emplace("Authorization", "Bearer " + token);
    }
    const httplib::Result r = http.Get("/metrics", headers);
    if (!r || r->status != 200) {
        return -1;
    }
    std::istringstream in(r->body);
    for (std::string l; std::getline(in, l);) {
        if (l.starts_with(name + " ")) {
            return std::stod(l.substr(name.size() + 1));
        }
    }
    return -1;
}

// Resident memory of a process in MiB.
double rssMiB(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string l; std::getline(in, l);) {
        if (l.starts_with("VmRSS:")) {
            return std::stod(l.substr(6)) / 1024.0;
        }
    }
    return -1;
}

// Enough descriptors in this process for the floods.
void raiseOwnDescriptorLimit(rlim_t want) {
    rlimit l{};
    ::getrlimit(RLIMIT_NOFILE, &l);
    l.rlim_cur = std::min(std::max(l.rlim_cur, want), l.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &l);
}

// Connections sending a request's header a byte a second (4 s apart would do as well): the
// header must be whole within 5 s of its first byte, so each is closed after that however
// steadily it trickles, and a page polling meanwhile is answered every time. Before, each
// byte renewed a 5 s read timeout and 4 such connections held all four workers for good.
TEST(WebAttack, HeadersTrickledAByteASecondAreClosedAndAPageIsServed) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, port);
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();

    constexpr int kTricklers = 16;
    std::vector<int> fds;
    for (int i = 0; i < kTricklers; ++i) {
        fds.push_back(connectFrom("127.0.0.2", port));
        ASSERT_GE(fds.back(), 0);
        ASSERT_TRUE(sendAll(fds.back(), "G"));
    }
    const auto start = Clock::now();
    std::vector<double> closedAfter(kTricklers, -1);
    std::atomic<bool> done{false};
    std::thread trickle([&] {
        const std::string header = "ET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        for (std::size_t b = 0; b < header.size() && !done; ++b) {
            for (int i = 0; i < kTricklers; ++i) {
                if (closedAfter[i] < 0 && (closedByPeer(fds[i]) || !sendAll(fds[i], std::string_view(&header[b], 1)))) {
                    closedAfter[i] = std::chrono::duration<double>(Clock::now() - start).count();
                }
            }
            std::this_thread::sleep_for(1s);
        }
    });
    int answered = 0;
    int polls = 0;
    for (; polls < 16; ++polls) { // 8 s of a page's polls
        answered += served(port) ? 1 : 0;
        std::this_thread::sleep_for(500ms);
    }
    const bool control = controlAnswers(project);
    std::this_thread::sleep_for(2s); // past the 5 s deadline with slack
    done = true;
    trickle.join();
    EXPECT_EQ(answered, polls);
    EXPECT_TRUE(control);
    for (int i = 0; i < kTricklers; ++i) {
        EXPECT_TRUE(closedAfter[i] >= 0 || closedByPeer(fds[i])) << "trickler " << i << " still open";
        EXPECT_LT(closedAfter[i], 8.0) << "trickler " << i;
        ::close(fds[i]);
    }
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// The same for a body: a whole header, then the body a byte a second. The body must be whole
// within 15 s of the header's end, so each is closed then, and a page is served meanwhile.
TEST(WebAttack, BodiesTrickledAByteASecondAreClosedAfterTheirDeadline) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, port);
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    constexpr int kTricklers = 8;
    std::vector<int> fds;
    for (int i = 0; i < kTricklers; ++i) {
        fds.push_back(connectFrom("127.0.0.2", port));
        ASSERT_GE(fds.back(), 0);
        ASSERT_TRUE(sendAll(fds.back(), "POST /api/rpc HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n{"));
    }
    const auto start = Clock::now();
    std::vector<double> closedAfter(kTricklers, -1);
    int answered = 0;
    int polls = 0;
    while (Clock::now() - start < 19s) {
        for (int i = 0; i < kTricklers; ++i) {
            if (closedAfter[i] < 0 && (closedByPeer(fds[i]) || !sendAll(fds[i], " "))) {
                closedAfter[i] = std::chrono::duration<double>(Clock::now() - start).count();
            }
        }
        ++polls;
        answered += served(port) ? 1 : 0;
        std::this_thread::sleep_for(1s);
    }
    EXPECT_EQ(answered, polls);
    EXPECT_TRUE(controlAnswers(project));
    for (int i = 0; i < kTricklers; ++i) {
        EXPECT_GE(closedAfter[i], 13.0) << "trickler " << i; // not before its deadline
        EXPECT_LT(closedAfter[i], 19.0) << "trickler " << i;
        ::close(fds[i]);
    }
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// With tls = true (how the surface is served beyond loopback): 300 connections that never start
// their TLS handshake and 8 that trickle it a byte a second are displaced at the cap or closed at
// the 5 s deadline, and an HTTPS client with a token is served throughout.
TEST(WebAttack, SilentAndTricklingTlsHandshakesDoNotLockOutHttps) {
    raiseOwnDescriptorLimit(4096);
    TempDir project;
    ASSERT_TRUE(writeServerCertificate(project)) << readText(project.path() / "openssl.log");
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, port, "tls = true\ntls_cert = \"server.pem\"\ntls_key = \"server.key\"\nauth = \"token\"");
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    const auto httpsServed = [&] {
        httplib::SSLClient https("127.0.0.1", port);
        https.set_ca_cert_path((project.path() / "ca.pem").string());
        https.enable_server_certificate_verification(true);
        https.set_connection_timeout(3s);
        https.set_read_timeout(3s);
        const httplib::Result r = https.Get("/metrics", {{"Authorization", std::string("Bearer ") + kToken}});
        return r && r->status == 200;
    };
    ASSERT_TRUE(httpsServed());

    std::vector<int> silent;
    for (int i = 0; i < 300; ++i) {
        silent.push_back(connectFrom(fmt::format("127.0.0.{}", 2 + i % 8), port));
    }
    std::vector<int> tricklers;
    for (int i = 0; i < 8; ++i) {
        tricklers.push_back(connectFrom("127.0.0.20", port));
    }
    const auto start = Clock::now();
    int answered = 0;
    int polls = 0;
    const std::string hello("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11);
    for (std::size_t b = 0; Clock::now() - start < 8s; ++b) {
        for (const int fd : tricklers) {
            sendAll(fd, std::string_view(&hello[b % hello.size()], 1));
        }
        ++polls;
        answered += httpsServed() ? 1 : 0;
        std::this_thread::sleep_for(500ms);
    }
    EXPECT_EQ(answered, polls);
    int open = 0;
    for (const int fd : silent) {
        open += fd >= 0 && !closedByPeer(fd) ? 1 : 0;
    }
    for (const int fd : tricklers) {
        open += fd >= 0 && !closedByPeer(fd) ? 1 : 0;
    }
    EXPECT_EQ(open, 0) << "connections still open 8 s after a 5 s handshake deadline";
    for (const int fd : silent) {
        ::close(fd);
    }
    for (const int fd : tricklers) {
        ::close(fd);
    }
    EXPECT_TRUE(controlAnswers(project));
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// 2,000 connections from 40 addresses, reopened as soon as they are closed, against a takt
// limited to the unit's 1,024 descriptors: the web server keeps to its cap (256), so the page
// is served, the control endpoint answers and every RETAIN save succeeds throughout. Before, the
// accepted connections took every descriptor: saves failed with "Too many open files" and the
// control endpoint stopped answering.
TEST(WebAttack, AnIdleFloodUnderTheUnitsDescriptorLimitLeavesPageControlAndRetain) {
    raiseOwnDescriptorLimit(4096);
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, port);
    LimitedRuntime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    ASSERT_TRUE(rt.waitFor([&] { return metric(port, "takt_retain_saves_total") >= 1; }, 10s)) << rt.log();
    const double savesBefore = metric(port, "takt_retain_saves_total");

    constexpr int kAddresses = 40;
    constexpr int kPerAddress = 50;
    std::vector<std::pair<std::string, int>> flood;
    for (int a = 0; a < kAddresses; ++a) {
        for (int i = 0; i < kPerAddress; ++i) {
            const std::string source = fmt::format("127.0.0.{}", a + 2);
            flood.emplace_back(source, connectFrom(source, port));
        }
    }
    int answered = 0;
    int controlled = 0;
    int polls = 0;
    std::size_t maxFds = 0;
    int reopened = 0;
    const auto end = Clock::now() + 10s;
    while (Clock::now() < end) {
        for (auto& [source, fd] : flood) { // reopen whatever the server closed
            if (fd < 0 || closedByPeer(fd)) {
                if (fd >= 0) {
                    ::close(fd);
                }
                fd = connectFrom(source, port);
                ++reopened;
            }
        }
        ++polls;
        answered += served(port) ? 1 : 0;
        controlled += controlAnswers(project) ? 1 : 0;
        maxFds = std::max(maxFds, fdCount(rt.pid()));
    }
    EXPECT_GT(reopened, 0); // the server did close connections over its cap
    EXPECT_EQ(answered, polls);
    EXPECT_EQ(controlled, polls);
    EXPECT_LE(maxFds, 600U); // far below the 1,024: the web's 256 and what the rest needs
    for (auto& [source, fd] : flood) {
        if (fd >= 0) {
            ::close(fd);
        }
    }
    EXPECT_TRUE(served(port));
    EXPECT_GT(metric(port, "takt_retain_saves_total"), savesBefore);
    EXPECT_EQ(metric(port, "takt_retain_failures_total"), 0) << rt.log();
    EXPECT_EQ(rt.log().find("Too many open files"), std::string::npos) << rt.log();
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// Bodies and headers sent before any token is checked: with auth = "token" a request without
// one is refused after its header (401), a chunked body is cut at 64 KiB (413), a Content-Length
// over 8 MiB is refused unread (413), a header block over 16 KiB is 431. The runtime's memory
// stays within a bound throughout; before, a 256 MiB chunked body was read whole before the 401.
TEST(WebAttack, BodiesAndHeadersBeforeAuthenticationAreBounded) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, port, "auth = \"token\"");
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    ASSERT_TRUE(served(port, kToken));
    const double rssBefore = rssMiB(rt.pid());

    const std::string chunk = fmt::format("100000\r\n{}\r\n", std::string(0x100000, 'x')); // 1 MiB
    const auto chunks = [&chunk](int count) {
        return [&chunk, count](int fd) {
            for (int i = 0; i < count && !answered(fd) && sendAll(fd, chunk); ++i) {
            }
        };
    };
    const std::string chunked = "POST /api/rpc HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n";
    // 256 MiB without a token: refused at the header, the body never read.
    EXPECT_EQ(statusOf(roundTrip(port, chunked + "\r\n", chunks(256))), 401);
    // With a token: read up to 64 KiB, then refused.
    EXPECT_EQ(statusOf(roundTrip(port, chunked + fmt::format("Authorization: Bearer {}\r\n\r\n", kToken), chunks(64))),
              413);
    EXPECT_EQ(statusOf(roundTrip(port,
                                 fmt::format("POST /api/rpc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n"
                                             "Content-Length: 536870912\r\n\r\n",
                                             kToken),
                                 chunks(16))),
              413);
    // Header floods: one long field, and many short ones, without end.
    for (int round = 0; round < 8; ++round) {
        EXPECT_EQ(statusOf(roundTrip(port, "GET /metrics HTTP/1.1\r\nX-Pad: ",
                                     [](int fd) {
                                         const std::string pad(0x10000, 'p');
                                         for (int i = 0; i < 1024 && !answered(fd) && sendAll(fd, pad); ++i) {
                                         }
                                     })),
                  431);
        EXPECT_EQ(statusOf(roundTrip(port, "GET /metrics HTTP/1.1\r\n",
                                     [](int fd) {
                                         std::string fields;
                                         for (int i = 0; i < 4096; ++i) {
                                             fields += fmt::format("X-F{}: v\r\n", i);
                                         }
                                         for (int i = 0; i < 64 && !answered(fd) && sendAll(fd, fields); ++i) {
                                         }
                                     })),
                  431);
    }
    // Large bodies with a length share 16 MiB: two 8 MiB ones being sent hold it, a third is
    // told to come back (503) before any of its body is read.
    std::vector<int> slow;
    for (int i = 0; i < 2; ++i) {
        slow.push_back(connectFrom("127.0.0.3", port));
        ASSERT_TRUE(sendAll(slow.back(), fmt::format("POST /api/rpc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                                                     "{}\r\nContent-Length: 8388608\r\n\r\n{}",
                                                     kToken, std::string(0x10000, ' '))));
    }
    std::this_thread::sleep_for(300ms);
    const std::string third =
        roundTrip(port, fmt::format("POST /api/rpc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Length: "
                                    "8388608\r\n\r\n",
                                    kToken));
    EXPECT_EQ(statusOf(third), 503) << third;
    EXPECT_NE(third.find("Retry-After: 1\r\n"), std::string::npos) << third;
    for (const int fd : slow) {
        ::close(fd);
    }
    // Several at once, from many addresses.
    std::vector<std::thread> senders;
    for (int i = 0; i < 8; ++i) {
        senders.emplace_back([&, i] {
            const int fd = connectFrom(fmt::format("127.0.0.{}", 10 + i), port);
            if (fd >= 0) {
                sendAll(fd, chunked + fmt::format("Authorization: Bearer {}\r\n\r\n", kToken));
                chunks(32)(fd);
                readUntilClosed(fd, 5s);
                ::close(fd);
            }
        });
    }
    for (std::thread& t : senders) {
        t.join();
    }
    EXPECT_TRUE(served(port, kToken));
    EXPECT_TRUE(controlAnswers(project));
    const double rssAfter = rssMiB(rt.pid());
    EXPECT_LT(rssAfter - rssBefore, 96.0) << "RSS " << rssBefore << " MiB -> " << rssAfter << " MiB";
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// Requests whose control calls wait (a var.read waits for the next cycle boundary, 2 s away
// here): at most 32 wait on the control service at once, the others are told to come back (503)
// instead of queueing on the thread the control endpoint shares, which goes on answering.
TEST(WebAttack, ControlCallsWaitingAtOnceAreCapped) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, port);
    std::string text = readText(project.path() / "runtime.toml");
    text.replace(text.find("cycle_interval_ms = 10"), 22, "cycle_interval_ms = 2000");
    project.write("runtime.toml", text);
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    std::map<int, int> statuses;
    std::mutex m;
    std::vector<std::thread> clients;
    for (int i = 0; i < 64; ++i) {
        clients.emplace_back([&, i] {
            const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"var.read","params":{"names":["Main.kept"]}})";
            const int fd = connectFrom(fmt::format("127.0.0.{}", 2 + i % 16), port);
            int status = 0;
            if (fd >= 0) {
                sendAll(fd, fmt::format("POST /api/rpc HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: "
                                        "{}\r\n\r\n{}",
                                        body.size(), body));
                status = statusOf(readUntilClosed(fd, 10s));
                ::close(fd);
            }
            const std::lock_guard lock(m);
            ++statuses[status];
        });
    }
    std::this_thread::sleep_for(300ms);
    const bool control = controlAnswers(project);
    for (std::thread& t : clients) {
        t.join();
    }
    EXPECT_TRUE(control);
    EXPECT_EQ(statuses[200] + statuses[503], 64) << statuses[0];
    EXPECT_GE(statuses[200], 32);
    EXPECT_GE(statuses[503], 1);
    EXPECT_TRUE(served(port));
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// Malformed framing is 400, a known path asked with the wrong method is 405 with Allow, and a
// Range is ignored: 2,000 overlapping ranges of the page's script get the script once (200),
// not 2,000 copies of it (a 125 MB 206 before).
TEST(WebAttack, StrictFramingMethodsAndNoRanges) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    writeProject(project, port);
    Runtime rt(project.path());
    ASSERT_TRUE(waitWeb(rt, port)) << rt.log();
    const std::string rpc = R"({"jsonrpc":"2.0","id":1,"method":"agent.ping"})";
    const auto post = [&](const std::string& fields) {
        return roundTrip(port, "POST /api/rpc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + fields + "\r\n" + rpc);
    };
    EXPECT_EQ(statusOf(post(fmt::format("Content-Length: {}\r\n", rpc.size()))), 200);
    EXPECT_EQ(statusOf(post("Content-Length: abc\r\n")), 400);
    EXPECT_EQ(statusOf(post(fmt::format("Content-Length: {}\r\nContent-Length: 5\r\n", rpc.size()))), 400);
    EXPECT_EQ(statusOf(post(fmt::format("Content-Length: {}\r\nTransfer-Encoding: chunked\r\n", rpc.size()))), 400);
    EXPECT_EQ(statusOf(post(fmt::format("Transfer-Encoding: chunked\r\nContent-Length: {}\r\n", rpc.size()))), 400);
    EXPECT_EQ(statusOf(post("Transfer-Encoding: gzip\r\n")), 400);
    EXPECT_EQ(statusOf(post("Content-Length: -1\r\n")), 400);

    std::string r = roundTrip(port, "DELETE /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(statusOf(r), 405) << r;
    EXPECT_NE(r.find("Allow: GET, HEAD\r\n"), std::string::npos) << r;
    r = roundTrip(port, "GET /api/rpc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(statusOf(r), 405) << r;
    EXPECT_NE(r.find("Allow: POST\r\n"), std::string::npos) << r;
    r = roundTrip(port, "PUT / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(statusOf(r), 405) << r;
    EXPECT_EQ(statusOf(roundTrip(port, "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")), 404);
    EXPECT_EQ(statusOf(roundTrip(port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")), 200);

#if TAKT_WEB_PAGE
    httplib::Client http("127.0.0.1", port);
    const httplib::Result index = http.Get("/");
    ASSERT_TRUE(index && index->status == 200);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(index->body, m, std::regex(R"(src="(/app-[0-9a-f]+\.js)\")")));
    const httplib::Result script = http.Get(m[1].str());
    ASSERT_TRUE(script && script->status == 200);
    std::string ranges = "bytes=0-";
    for (int i = 1; i < 2000; ++i) {
        ranges += ",0-";
    }
    const double rssBefore = rssMiB(rt.pid());
    for (int i = 0; i < 4; ++i) {
        r = roundTrip(port, fmt::format("GET {} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nRange: {}\r\n\r\n",
                                        m[1].str(), ranges));
        EXPECT_EQ(statusOf(r), 200) << r.substr(0, 200);
        EXPECT_NE(r.find("Accept-Ranges: none\r\n"), std::string::npos);
        EXPECT_LT(r.size(), script->body.size() + 4096);
    }
    EXPECT_LT(rssMiB(rt.pid()) - rssBefore, 32.0);
#endif
    EXPECT_TRUE(served(port));
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

} // namespace
} // namespace takt::agent::live
