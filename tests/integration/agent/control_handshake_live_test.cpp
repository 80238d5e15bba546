// Clients of a tls:// control endpoint that connect and never start the handshake: they must
// neither hold descriptors for the idle timeout nor keep real TLS clients out (the connection
// cap displaces them first, the handshake timeout closes them).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/control_live_support.h"
#include "support/control_test_support.h"
#include "support/paths.h"

namespace takt::agent::live {
namespace {

constexpr const char* kProgram = "PROGRAM Main\nVAR n : UDINT; END_VAR\nn := n + 1;\nEND_PROGRAM\n";
constexpr const char* kToken = "viewer-5b0e2c9d41f7a8e36c1d";

// A CA and a server certificate for 127.0.0.1 (openssl), and a project serving tls:// on `port`
// with a viewer token.
bool writeTlsProject(const TempDir& dir, std::uint16_t port) {
    const bool ok = writeServerCertificate(dir);
    dir.write("viewer.token", std::string(kToken) + "\n", 0600);
    dir.write("runtime.toml", fmt::format(R"([bundle]
version = 1

[resource]
name = "cell"
cycle_interval_ms = 10

[runtime.control]
endpoint = "tls://127.0.0.1:{}"

[[runtime.control.tokens]]
role = "viewer"
token_file = "viewer.token"

[runtime.control.tls]
cert = "server.pem"
key = "server.key"
)",
                                          port));
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("src/main.st", kProgram);
    return ok;
}

// A TCP connection to 127.0.0.1:port that never sends a byte; -1 when it cannot be opened.
int openSilent(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// 250 connections that never start their TLS handshake, against a runtime limited to 256
// descriptors: they are displaced (and time out) instead of using up the descriptors, so a real
// TLS client that comes after them is served.
TEST(ControlHandshakeLive, SilentTlsConnectionsDoNotLockOutAClient) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    ASSERT_TRUE(writeTlsProject(project, port)) << readText(project.path() / "openssl.log");
    test::Process rt({"/bin/sh", "-c",
                      "ulimit -n 256 && exec " + test::shellQuote(TAKT_BINARY) + " run --project " +
                          test::shellQuote(project.path().string()) + " --for 120s"},
                     {.log = project.path() / "run.log"});
    ASSERT_TRUE(test::waitForPort(port, std::chrono::seconds(20), std::chrono::milliseconds(50))) << rt.log();

    std::vector<int> silent;
    for (int i = 0; i < 250; ++i) {
        const int fd = openSilent(port);
        ASSERT_GE(fd, 0) << "connection " << i;
        silent.push_back(fd);
    }
    ControlClientOptions o;
    o.endpoint = fmt::format("tls://127.0.0.1:{}", port);
    o.token = kToken;
    o.caFile = (project.path() / "ca.pem").string();
    o.timeoutMs = 5000; // well below the 30 s idle timeout the silent ones would otherwise hold
    ControlClient client(o);
    const ControlReply login = client.connect();
    EXPECT_TRUE(login.reached && login.ok) << login.message << " " << rt.log();
    const ControlReply status = client.call("runtime.status", "");
    EXPECT_TRUE(status.ok) << status.message;
    // The runtime holds a few of the silent connections, never all of them.
    EXPECT_LT(fdCount(rt.pid()), 100U);
    for (const int fd : silent) {
        ::close(fd);
    }
    EXPECT_TRUE(rt.running()) << rt.log();
}

// A TLS connection that never starts its handshake is closed after the handshake timeout, not
// kept for the idle timeout (30 s).
TEST(ControlHandshakeLive, TlsHandshakeTimesOut) {
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    ASSERT_TRUE(writeTlsProject(project, port)) << readText(project.path() / "openssl.log");
    Runtime rt(project.path());
    ASSERT_TRUE(test::waitForPort(port, std::chrono::seconds(20), std::chrono::milliseconds(50))) << rt.log();
    test::LineClient silent(fmt::format("tcp://127.0.0.1:{}", port));
    ASSERT_TRUE(silent.connected());
    std::string line;
    // Hang guard 15 s: half the idle timeout, three times the handshake timeout.
    EXPECT_EQ(silent.read(line, 15000), test::LineClient::Read::Eof);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

} // namespace
} // namespace takt::agent::live
