// The control endpoint with the takt client: TLS (a test CA, server and client certificates made
// with the openssl CLI), token files, 1,000 idle connections, and `takt ctl` / `takt reload`.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/control_test_support.h"
#include "support/net.h"
#include "support/process.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "takt/agent/control.h"
#include "takt/agent/control_client.h"

namespace takt::agent {
namespace {

using test::isResult;
using test::LineClient;
using test::parseJson;
using test::request;

const std::string kToken = "tls-token-5f2c9a8e71b04d3c";

// A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA, plus
// a second CA that signed nothing here.
class Pki {
public:
    Pki() {
        const std::string d = dir_.path().string();
        const std::string script =
            "set -e; cd '" + d +
            "'; "
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem "
            "-days 2 -subj /CN=takt-test-ca; "
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout other.key -out "
            "other.pem -days 2 -subj /CN=other; "
            "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext; "
            "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr "
            "-subj /CN=127.0.0.1; "
            "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 "
            "-extfile san.ext; "
            "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout client.key -out client.csr "
            "-subj /CN=takt-client; "
            "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2";
        const std::string command = "sh -c \"" + script + "\" >/dev/null 2>&1";
        ok_ = std::system(command.c_str()) == 0;
    }
    [[nodiscard]] bool ok() const { return ok_; }
    [[nodiscard]] std::string file(const char* name) const { return (dir_.path() / name).string(); }

private:
    test::TempDir dir_;
    bool ok_ = false;
};

const Pki& pki() {
    static const Pki p;
    return p;
}

struct TlsServer {
    explicit TlsServer(bool requireClientCert) : server(options(requireClientCert), target) {}
    static ControlOptions options(bool requireClientCert) {
        ControlOptions o;
        o.endpoint = "tls://127.0.0.1:0";
        o.tokens = {{Role::Engineer, kToken}};
        o.tlsCert = pki().file("server.pem");
        o.tlsKey = pki().file("server.key");
        if (requireClientCert) {
            o.tlsClientCa = pki().file("ca.pem");
        }
        return o;
    }
    test::RecordingTarget target;
    ControlServer server;
};

ControlClientOptions clientFor(const std::string& endpoint) {
    ControlClientOptions c;
    c.endpoint = endpoint;
    c.token = kToken;
    c.caFile = pki().file("ca.pem");
    c.timeoutMs = 5000;
    return c;
}

TEST(ControlTls, RoundTripWithTheServerCertificateVerified) {
    ASSERT_TRUE(pki().ok()) << "openssl CLI failed";
    TlsServer s(false);
    std::string error;
    ASSERT_TRUE(s.server.start(error)) << error;
    const std::string ep = s.server.boundEndpoint();
    EXPECT_TRUE(ep.starts_with("tls://127.0.0.1:")) << ep;
    const ControlReply r = controlCall(clientFor(ep), "runtime.status", "");
    ASSERT_TRUE(r.ok) << r.message;
    EXPECT_EQ(parseJson(r.json)["state"].GetString(), std::string("running"));
    const ControlReply d = controlCall(clientFor(ep), "agent.describe", "");
    ASSERT_TRUE(d.ok) << d.message;
    EXPECT_EQ(parseJson(d.json)["transport"].GetString(), std::string("tls"));
    // A CA that did not sign the server certificate: the client refuses the server.
    ControlClientOptions wrongCa = clientFor(ep);
    wrongCa.caFile = pki().file("other.pem");
    const ControlReply refused = controlCall(wrongCa, "runtime.status", "");
    EXPECT_FALSE(refused.reached);
    EXPECT_NE(refused.message.find("certificate"), std::string::npos) << refused.message;
    // A plain-text client gets nothing served.
    LineClient plain(ep);
    ASSERT_TRUE(plain.connected());
    (void)plain.send(request(1, "runtime.status") + "\n");
    std::string line;
    EXPECT_NE(plain.read(line, 5000), LineClient::Read::Line);
    EXPECT_EQ(s.target.calls(), (std::vector<std::string>{"runtime.status"}));
}

TEST(ControlTls, ClientCaRequiresAClientCertificate) {
    ASSERT_TRUE(pki().ok()) << "openssl CLI failed";
    TlsServer s(true);
    std::string error;
    ASSERT_TRUE(s.server.start(error)) << error;
    const std::string ep = s.server.boundEndpoint();
    const ControlReply without = controlCall(clientFor(ep), "runtime.status", "");
    EXPECT_FALSE(without.ok);
    EXPECT_FALSE(without.reached);
    EXPECT_NE(without.message.find("requires a client certificate: pass --cert FILE --key FILE"), std::string::npos)
        << without.message;
    ControlClientOptions wrongCert = clientFor(ep);
    wrongCert.certFile = pki().file("other.pem"); // self-signed, not by the client CA
    wrongCert.keyFile = pki().file("other.key");
    EXPECT_FALSE(controlCall(wrongCert, "runtime.status", "").ok);
    ControlClientOptions with = clientFor(ep);
    with.certFile = pki().file("client.pem");
    with.keyFile = pki().file("client.key");
    const ControlReply r = controlCall(with, "runtime.status", "");
    EXPECT_TRUE(r.ok) << r.message;
    EXPECT_EQ(s.target.calls(), (std::vector<std::string>{"runtime.status"}));
}

TEST(ControlTls, BadCertificateFilesAreRefusedAtStart) {
    ASSERT_TRUE(pki().ok()) << "openssl CLI failed";
    test::RecordingTarget target;
    ControlOptions o = TlsServer::options(false);
    o.tlsKey = pki().file("client.key"); // not the certificate's key
    ControlServer mismatched(o, target);
    std::string error;
    EXPECT_FALSE(mismatched.start(error));
    EXPECT_NE(error.find("client.key"), std::string::npos) << error;
    o = TlsServer::options(false);
    o.tlsCert = pki().file("missing.pem");
    ControlServer missing(o, target);
    EXPECT_FALSE(missing.start(error));
    EXPECT_NE(error.find("missing.pem"), std::string::npos) << error;
}

TEST(ControlTokenFile, AcceptsOnlyPrivateRandomLookingTokens) {
    test::TempDir dir;
    const auto tokenFile = [&](const char* name, const std::string& text, mode_t mode) {
        std::string p = dir.write(name, text).string();
        ::chmod(p.c_str(), mode);
        return p;
    };
    std::string token;
    std::string error;
    EXPECT_TRUE(readTokenFile(tokenFile("good", "3f9a1c0e7b5d2486a1c9\n", 0600), token, error)) << error;
    EXPECT_EQ(token, "3f9a1c0e7b5d2486a1c9");
    EXPECT_TRUE(readTokenFile(tokenFile("ro", "3f9a1c0e7b5d2486a1c9", 0400), token, error)) << error;
    const struct {
        const char* name;
        std::string text;
        mode_t mode;
        const char* why;
    } bad[] = {
        {"world", "3f9a1c0e7b5d2486a1c9\n", 0644, "chmod 600"},
        {"group", "3f9a1c0e7b5d2486a1c9\n", 0640, "chmod 600"},
        {"short", "3f9a1c0e7b5d248\n", 0600, "at least 16"},
        {"same", std::string(32, 'a') + "\n", 0600, "repeats one character"},
        {"changeme", "changeme-changeme-1234\n", 0600, "placeholder"},
        {"angle", "<token-goes-in-here>\n", 0600, "placeholder"},
        {"spaces", "3f9a1c0e 7b5d2486a1c9\n", 0600, "printable"},
        {"twolines", "3f9a1c0e7b5d2486a1c9\n\n", 0600, "printable"},
    };
    for (const auto& b : bad) {
        error.clear();
        EXPECT_FALSE(readTokenFile(tokenFile(b.name, b.text, b.mode), token, error)) << b.name;
        EXPECT_NE(error.find(b.why), std::string::npos) << b.name << ": " << error;
        EXPECT_NE(error.find(b.name), std::string::npos) << error; // names the file
        EXPECT_TRUE(token.empty());
    }
    EXPECT_FALSE(readTokenFile((dir.path() / "absent").string(), token, error));
}

int openFiles() {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
        ++n;
    }
    return n;
}

TEST(ControlServerLoad, ThousandIdleConnectionsDoNotLockOutALegitimateClient) {
    rlimit lim{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &lim), 0);
    if (lim.rlim_cur < 4096) {
        rlimit raised = lim;
        raised.rlim_cur = std::min<rlim_t>(lim.rlim_max, 4096);
        ::setrlimit(RLIMIT_NOFILE, &raised);
    }
    ControlOptions o;
    o.endpoint = "tcp://127.0.0.1:0";
    o.tokens = {{Role::Viewer, kToken}};
    test::RecordingTarget target;
    ControlServer server(o, target);
    std::string error;
    ASSERT_TRUE(server.start(error)) << error;
    const int baseline = openFiles();
    {
        std::vector<std::unique_ptr<LineClient>> idle;
        for (int i = 0; i < 1000; ++i) {
            idle.push_back(std::make_unique<LineClient>(server.boundEndpoint()));
            ASSERT_TRUE(idle.back()->connected()) << i;
        }
        ControlClientOptions c;
        c.endpoint = server.boundEndpoint();
        c.token = kToken;
        const ControlReply r = controlCall(c, "runtime.status", "");
        EXPECT_TRUE(r.ok) << r.message;
        // At most the cap's worth of the idle ones is still open on the server side.
        EXPECT_TRUE(test::eventually([&] { return openFiles() <= baseline + 1000 + 8 + 1; }));
    }
    EXPECT_TRUE(test::eventually([&] { return openFiles() == baseline; })) << openFiles() << " vs " << baseline;
    EXPECT_EQ(target.calls(), (std::vector<std::string>{"runtime.status"}));
}

TEST(ControlServerLoad, AHundredMebibyteLineIsSkippedWhileAnotherClientIsServed) {
    ControlOptions o;
    o.endpoint = "tcp://127.0.0.1:0";
    o.tokens = {{Role::Viewer, kToken}};
    test::RecordingTarget target;
    ControlServer server(o, target);
    std::string error;
    ASSERT_TRUE(server.start(error)) << error;
    LineClient flood(server.boundEndpoint());
    ASSERT_TRUE(flood.connected());
    const std::string chunk(std::size_t{1} << 20, 'a');
    ASSERT_TRUE(flood.send("{\"x\":\""));
    for (int i = 0; i < 50; ++i) {
        ASSERT_TRUE(flood.send(chunk));
    }
    // Half-way through the long line, another client is served normally.
    ControlClientOptions c;
    c.endpoint = server.boundEndpoint();
    c.token = kToken;
    EXPECT_TRUE(controlCall(c, "runtime.status", "").ok);
    for (int i = 0; i < 50; ++i) {
        ASSERT_TRUE(flood.send(chunk));
    }
    ASSERT_TRUE(flood.send("\"}\n" + request(7, "agent.ping") + "\n"));
    EXPECT_EQ(test::errorCode(flood.line()), -32600);
    const auto ping = parseJson(flood.line());
    ASSERT_TRUE(ping.IsObject());
    EXPECT_EQ(ping["id"].GetInt(), 7);
    EXPECT_EQ(target.calls(), (std::vector<std::string>{"runtime.status"}));
}

// `takt ctl` and `takt reload` (the real binary) against a server in this process.
std::string run(const std::string& args, int& exitCode) {
    test::RunResult r = test::runTaktMerged(args);
    exitCode = r.exitCode;
    return r.out;
}

TEST(ControlCli, CtlAndReloadTalkToTheEndpoint) {
    test::TempDir dir;
    const std::string tokenPath = dir.write("eng.token", kToken + "\n").string();
    ::chmod(tokenPath.c_str(), 0600);
    ControlOptions o;
    o.endpoint = "tcp://127.0.0.1:0";
    o.tokens = {{Role::Engineer, kToken}};
    test::RecordingTarget target;
    ControlServer server(o, target);
    std::string error;
    ASSERT_TRUE(server.start(error)) << error;
    const std::string ep = server.boundEndpoint();
    int rc = -1;
    std::string out = run("ctl --endpoint " + ep + " --token-file " + tokenPath + " runtime.status", rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_TRUE(parseJson(out).IsObject()) << out;
    out = run("ctl --endpoint " + ep + " --token-file " + tokenPath + " var.write '{\"name\":\"x\",\"value\":1}'", rc);
    EXPECT_EQ(rc, 0) << out;
    out = run("ctl --endpoint " + ep + " --token-file " + tokenPath + " no.such", rc);
    EXPECT_EQ(rc, 14) << out;
    EXPECT_NE(out.find("no.such"), std::string::npos) << out;
    out = run("ctl --endpoint " + ep + " runtime.status", rc); // no token
    EXPECT_EQ(rc, 14) << out;
    out = run("ctl --endpoint " + ep + " --token-file " + tokenPath + " var.write '[1]'", rc);
    EXPECT_EQ(rc, 10) << out;
    out = run("ctl --endpoint unix://" + (dir.path() / "none.sock").string() + " runtime.status", rc);
    EXPECT_EQ(rc, 15) << out;
    // takt reload: build, then bytecode.reload with program.stbc as base64.
    dir.write("proj/src/main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := x + 1;\nEND_PROGRAM\n");
    dir.write("proj/runtime.toml", "[resource]\nname = \"t\"\n");
    out = run("reload --yes --json --endpoint " + ep + " --token-file " + tokenPath + " --project " +
                  (dir.path() / "proj").string(),
              rc);
    EXPECT_EQ(rc, 0) << out;
    const auto size = std::filesystem::file_size(dir.path() / "proj" / "program.stbc");
    EXPECT_NE(out.find("\"base64_chars\":" + std::to_string(4 * ((size + 2) / 3))), std::string::npos) << out;
    EXPECT_EQ(target.calls(), (std::vector<std::string>{"runtime.status", "var.write", "bytecode.reload"}));
}

TEST(ControlCli, CtlSaysWhenTheEndpointWantsAClientCertificate) {
    ASSERT_TRUE(pki().ok()) << "openssl CLI failed";
    TlsServer s(true);
    std::string error;
    ASSERT_TRUE(s.server.start(error)) << error;
    const std::string ep = s.server.boundEndpoint();
    test::TempDir dir;
    const std::string tokenPath = dir.write("eng.token", kToken + "\n", 0600).string();
    const std::string base = "ctl --endpoint " + ep + " --ca " + pki().file("ca.pem") + " --token-file " + tokenPath;
    int rc = -1;
    std::string out = run(base + " runtime.status", rc);
    EXPECT_EQ(rc, 15) << out;
    EXPECT_NE(out.find("requires a client certificate: pass --cert FILE --key FILE"), std::string::npos) << out;
    EXPECT_EQ(out.find("no reply"), std::string::npos) << out;
    // A certificate the endpoint's client CA did not sign: refused, and the message names it.
    out =
        run(base + " --cert " + pki().file("other.pem") + " --key " + pki().file("other.key") + " runtime.status", rc);
    EXPECT_EQ(rc, 15) << out;
    EXPECT_NE(out.find("other.pem"), std::string::npos) << out;
    out = run(base + " --cert " + pki().file("client.pem") + " --key " + pki().file("client.key") + " runtime.status",
              rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_EQ(s.target.calls(), (std::vector<std::string>{"runtime.status"}));
}

// TLS 1.2 refuses a missing client certificate inside the handshake (TLS 1.3 only after it): the
// same message, against a real TLS 1.2 server that wants one (openssl s_server -Verify).
TEST(ControlCli, CtlSaysWhenATls12EndpointWantsAClientCertificate) {
    ASSERT_TRUE(pki().ok()) << "openssl CLI failed";
    const std::uint16_t port = test::freeTcpPort();
    ASSERT_NE(port, 0);
    test::TempDir dir;
    test::Process server({"/usr/bin/openssl", "s_server", "-quiet", "-tls1_2", "-accept",
                          "127.0.0.1:" + std::to_string(port), "-cert", pki().file("server.pem"), "-key",
                          pki().file("server.key"), "-CAfile", pki().file("ca.pem"), "-Verify", "1"},
                         {.log = dir.path() / "s_server.log"});
    ASSERT_TRUE(test::waitForPort(port, std::chrono::seconds(20))) << server.log();
    const std::string tokenPath = dir.write("eng.token", kToken + "\n", 0600).string();
    int rc = -1;
    const std::string out = run("ctl --endpoint tls://127.0.0.1:" + std::to_string(port) + " --ca " +
                                    pki().file("ca.pem") + " --token-file " + tokenPath + " runtime.status",
                                rc);
    EXPECT_EQ(rc, 15) << out;
    EXPECT_NE(out.find("requires a client certificate: pass --cert FILE --key FILE"), std::string::npos) << out;
}

} // namespace
} // namespace takt::agent
