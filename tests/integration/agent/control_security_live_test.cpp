// The control endpoint's guards through the real `takt run` (PROTOCOLS.md "Control endpoint",
// TARGETS.md "Reliability and security"): the token and role matrix on loopback TCP, the refusal
// of a non-loopback endpoint without TLS, a TLS round trip against a test CA made with openssl,
// and 1,000 idle connections that must not lock a real client out.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/control_live_support.h"
#include "takt/agent/control.h"

namespace takt::agent::live {
namespace {

constexpr const char* kProgram = R"(PROGRAM Main
VAR RETAIN
    cnt : UDINT;
END_VAR
VAR
    setpoint : INT := 7;
END_VAR
cnt := cnt + 1;
END_PROGRAM
)";

constexpr const char* kViewerToken = "viewer-3f9c1a7be2d84c06a5b1";
constexpr const char* kEngineerToken = "engineer-8d27e4c1f0b9a63d52e7";

// A project with viewer and engineer tokens (files, mode 0600) on `endpoint`, plus `extra` TOML.
void writeProject(const TempDir& dir, const std::string& endpoint, const std::string& extra = {}) {
    dir.write("viewer.token", std::string(kViewerToken) + "\n", 0600);
    dir.write("engineer.token", std::string(kEngineerToken) + "\n", 0600);
    dir.write("runtime.toml", fmt::format(R"([bundle]
version = 1

[resource]
name = "cell"
cycle_interval_ms = 10

[runtime.control]
endpoint = "{}"

[[runtime.control.tokens]]
role = "viewer"
token_file = "viewer.token"

[[runtime.control.tokens]]
role = "engineer"
token_file = "engineer.token"
{}
)",
                                          endpoint, extra));
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("src/main.st", kProgram);
}

std::int64_t setpoint(ControlClient& engineer) {
    const rapidjson::Document d = result(engineer, "var.read", R"({"names":["setpoint"]})");
    return d.IsObject() && d.HasMember("values") ? d["values"]["setpoint"]["value"].GetInt64() : -1;
}

std::string programHash(ControlClient& c) {
    const rapidjson::Document d = result(c, "runtime.status", "");
    return d.IsObject() && d.HasMember("program_hash") ? d["program_hash"].GetString() : "";
}

// Logs in once the peer's login back-off has passed (retry_after_ms of the refusal).
std::unique_ptr<ControlClient> connectedAfterBackoff(const ControlClientOptions& options) {
    for (int attempt = 0; attempt < 10; ++attempt) {
        auto c = std::make_unique<ControlClient>(options);
        const ControlReply r = c->connect();
        if (r.ok) {
            return c;
        }
        if (r.code != kRateLimited) {
            ADD_FAILURE() << r.message;
            return nullptr;
        }
        const rapidjson::Document e = parse(r.json);
        const std::int64_t wait = e.HasMember("data") ? e["data"]["retry_after_ms"].GetInt64() : 1000;
        std::this_thread::sleep_for(std::chrono::milliseconds(wait + 50));
    }
    ADD_FAILURE() << "still backed off";
    return nullptr;
}

TEST(ControlSecurityLive, TokenAndRoleMatrixChangesNothing) {
    TempDir project, other;
    const std::string endpoint = fmt::format("tcp://127.0.0.1:{}", test::freeTcpPort());
    writeProject(project, endpoint);
    other.write("src/main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := x + 2;\nEND_PROGRAM\n");
    other.write("runtime.toml", "[bundle]\nversion = 1\n[resource]\nname = \"cell\"\ncycle_interval_ms = 10\n");
    const std::string reload = bytecodeReloadParams(build(other.path()));

    Runtime rt(project.path());
    ASSERT_TRUE(waitServing(rt, clientOptions(endpoint))) << rt.log();
    auto engineer = connected(clientOptions(endpoint, kEngineerToken));
    const std::string hash = programHash(*engineer);
    ASSERT_EQ(setpoint(*engineer), 7);
    const std::string write = R"({"name":"setpoint","value":{"type":"INT","value":99}})";

    // Tokens that must not log in: each login is refused (-32010, or -32005 once the peer has
    // failed five times: the back-off is not cleared by the engineer's earlier good login), and
    // the session stays unable to do anything but ping.
    const std::string engineerToken = kEngineerToken;
    const std::vector<std::pair<const char*, std::string>> bad = {
        {"wrong", "engineer-0000000000000000000"},
        {"prefix", engineerToken.substr(0, engineerToken.size() - 1)},
        {"suffix", engineerToken + "0"},
        {"padded with a space", engineerToken + " "},
        {"padded with a newline", engineerToken + "\n"},
        {"leading space", " " + engineerToken},
    };
    for (const auto& [name, token] : bad) {
        ControlClient c(clientOptions(endpoint, token));
        const ControlReply login = c.connect();
        ASSERT_TRUE(login.reached) << name << ": " << login.message;
        EXPECT_FALSE(login.ok) << name;
        EXPECT_TRUE(login.code == kUnauthorized || login.code == kRateLimited) << name << ": " << login.message;
        for (const auto& [method, params] : std::vector<std::pair<const char*, std::string>>{
                 {"var.write", write}, {"bytecode.reload", reload}, {"runtime.status", ""}}) {
            const ControlReply r = c.call(method, params);
            EXPECT_EQ(r.code, kUnauthorized) << name << " " << method << ": " << r.message;
        }
        EXPECT_TRUE(c.call("agent.ping", "").ok) << name;
    }
    // Six failed logins from one peer: now even the right token is backed off.
    const ControlReply backedOff = ControlClient(clientOptions(endpoint, kEngineerToken)).connect();
    EXPECT_EQ(backedOff.code, kRateLimited) << backedOff.message;
    EXPECT_NE(backedOff.json.find("retry_after_ms"), std::string::npos) << backedOff.json;
    // No token at all: every method but ping/describe is unauthorized.
    {
        ControlClient c(clientOptions(endpoint));
        ASSERT_TRUE(c.connect().reached);
        EXPECT_EQ(c.call("var.write", write).code, kUnauthorized);
        EXPECT_EQ(c.call("bytecode.reload", reload).code, kUnauthorized);
        EXPECT_EQ(c.call("var.read", R"({"names":["setpoint"]})").code, kUnauthorized);
        EXPECT_TRUE(c.call("agent.describe", "").ok);
    }
    // The viewer may read but neither write nor reload nor control the run.
    {
        auto viewer = connectedAfterBackoff(clientOptions(endpoint, kViewerToken));
        ASSERT_NE(viewer, nullptr);
        EXPECT_EQ(setpoint(*viewer), 7);
        EXPECT_EQ(viewer->call("var.write", write).code, kForbidden);
        EXPECT_EQ(viewer->call("var.force", write).code, kForbidden);
        EXPECT_EQ(viewer->call("bytecode.reload", reload).code, kForbidden);
        EXPECT_EQ(viewer->call("runtime.pause", "").code, kForbidden);
        EXPECT_EQ(result(*viewer, "runtime.status", "")["state"].GetString(), std::string("running"));
    }
    EXPECT_EQ(setpoint(*engineer), 7) << "a refused request changed a variable";
    EXPECT_EQ(programHash(*engineer), hash) << "a refused request changed the program";

    // The engineer (already logged in) can write.
    EXPECT_TRUE(engineer->call("var.write", write).ok);
    EXPECT_EQ(setpoint(*engineer), 99);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
    // The audit log has a line per request and never a token.
    const std::string audit = readText(project.path() / ".takt" / "audit.log");
    EXPECT_NE(audit.find("var.write"), std::string::npos);
    EXPECT_EQ(audit.find(kEngineerToken), std::string::npos);
    EXPECT_EQ(audit.find(kViewerToken), std::string::npos);
    EXPECT_EQ(audit.find("engineer-00000"), std::string::npos);
}

TEST(ControlSecurityLive, NonLoopbackTcpWithoutTlsIsRefusedAtStartUp) {
    TempDir project;
    const std::string endpoint = fmt::format("tcp://0.0.0.0:{}", test::freeTcpPort());
    writeProject(project, endpoint);
    Runtime rt(project.path());
    const std::optional<int> rc = rt.waitForExit(std::chrono::seconds(20));
    ASSERT_TRUE(rc.has_value()) << "takt run kept running on " << endpoint;
    EXPECT_NE(*rc, 0);
    EXPECT_NE(rt.log().find(endpoint), std::string::npos) << rt.log();
}

// A test CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl.
struct Pki {
    explicit Pki(const TempDir& dir) : d(dir.path()) {
        const std::string p = d.string() + "/";
        const std::string key = "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
        dir.write("server.ext", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
        dir.write("wrong.ext", "subjectAltName=DNS:plc.example\nextendedKeyUsage=serverAuth\n");
        dir.write("client.ext", "extendedKeyUsage=clientAuth\n");
        const std::string sign = " -CA " + p + "ca.pem -CAkey " + p + "ca.key -CAcreateserial -days 1";
        ok = shell("cd " + d.string() + " && (" + key +
                   "-x509 -keyout ca.key -out ca.pem -days 1 -subj /CN=takt-test-ca" + " && " + key +
                   "-keyout server.key -out server.csr -subj /CN=takt-test-server" +
                   " && openssl x509 -req -in server.csr -out server.pem -extfile server.ext" + sign + " && " + key +
                   "-keyout wrong.key -out wrong.csr -subj /CN=plc.example" +
                   " && openssl x509 -req -in wrong.csr -out wrong.pem -extfile wrong.ext" + sign + " && " + key +
                   "-keyout client.key -out client.csr -subj /CN=takt-test-client" +
                   " && openssl x509 -req -in client.csr -out client.pem -extfile client.ext" + sign +
                   " && chmod 600 *.key) > openssl.log 2>&1") == 0;
    }
    fs::path d;
    bool ok = false;
};

TEST(ControlSecurityLive, TlsRoundTripWithClientCertificates) {
    TempDir project;
    const Pki pki(project);
    ASSERT_TRUE(pki.ok) << readText(project.path() / "openssl.log");
    const std::string p = project.path().string() + "/";
    const std::string endpoint = fmt::format("tls://127.0.0.1:{}", test::freeTcpPort());
    writeProject(project, endpoint,
                 fmt::format("\n[runtime.control.tls]\ncert = \"{0}server.pem\"\nkey = \"{0}server.key\"\n"
                             "client_ca = \"{0}ca.pem\"\n",
                             p));
    Runtime rt(project.path());
    ControlClientOptions o = clientOptions(endpoint, kViewerToken);
    o.caFile = p + "ca.pem";
    o.certFile = p + "client.pem";
    o.keyFile = p + "client.key";
    ASSERT_TRUE(waitServing(rt, o)) << rt.log();

    auto viewer = connected(o);
    const rapidjson::Document status = result(*viewer, "runtime.status", "");
    ASSERT_TRUE(status.IsObject() && status.HasMember("state"));
    EXPECT_STREQ(status["state"].GetString(), "running");
    EXPECT_EQ(result(*viewer, "auth.login", fmt::format(R"({{"token":"{}"}})", kEngineerToken))["role"].GetString(),
              std::string("engineer"));

    // No client certificate: the handshake (or the first exchange) fails.
    ControlClientOptions anonymous = o;
    anonymous.certFile.clear();
    anonymous.keyFile.clear();
    anonymous.timeoutMs = 3000;
    EXPECT_FALSE(controlCall(anonymous, "agent.ping", "").ok);
    // A client that does not trust the CA refuses the server.
    ControlClientOptions untrusting = o;
    untrusting.caFile = p + "client.pem";
    const ControlReply r = ControlClient(untrusting).connect();
    EXPECT_FALSE(r.reached);
    EXPECT_NE(r.message.find("certificate"), std::string::npos) << r.message;
    // Plain TCP to the TLS port gets no JSON-RPC answer.
    ControlClientOptions plain = clientOptions("tcp" + endpoint.substr(3));
    plain.timeoutMs = 3000;
    EXPECT_FALSE(controlCall(plain, "agent.ping", "").ok);
    // The legitimate client is still served.
    EXPECT_TRUE(viewer->call("runtime.status", "").ok);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

TEST(ControlSecurityLive, TlsServerCertificateMustNameTheHost) {
    TempDir project;
    const Pki pki(project);
    ASSERT_TRUE(pki.ok) << readText(project.path() / "openssl.log");
    const std::string p = project.path().string() + "/";
    const std::string endpoint = fmt::format("tls://127.0.0.1:{}", test::freeTcpPort());
    writeProject(project, endpoint,
                 fmt::format("\n[runtime.control.tls]\ncert = \"{0}wrong.pem\"\nkey = \"{0}wrong.key\"\n", p));
    Runtime rt(project.path());
    ControlClientOptions o = clientOptions(endpoint, kViewerToken);
    o.caFile = p + "ca.pem";
    o.timeoutMs = 3000;
    // Wait until it listens (a plain connect), then expect the handshake to be refused.
    const std::uint16_t port = static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
    ASSERT_TRUE(test::waitForPort(port, std::chrono::seconds(10), std::chrono::milliseconds(50))) << rt.log();
    const ControlReply r = ControlClient(o).connect();
    EXPECT_FALSE(r.reached);
    EXPECT_NE(r.message.find("certificate"), std::string::npos) << r.message;
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// Opens a TCP connection without waiting for it to complete; -1 when out of descriptors.
int openIdle(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        return -1;
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    return fd;
}

TEST(ControlSecurityLive, ThousandIdleConnectionsDoNotLockOutAClient) {
    rlimit lim{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &lim), 0);
    constexpr rlim_t kNeed = 1200;
    if (lim.rlim_cur < kNeed) {
        if (lim.rlim_max < kNeed) {
            GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << lim.rlim_max << " < " << kNeed;
        }
        lim.rlim_cur = kNeed;
        ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lim), 0);
    }
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    const std::string endpoint = fmt::format("tcp://127.0.0.1:{}", port);
    writeProject(project, endpoint);
    Runtime rt(project.path());
    ASSERT_TRUE(waitServing(rt, clientOptions(endpoint))) << rt.log();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::size_t baseline = fdCount(rt.pid());

    std::vector<int> idle;
    for (int i = 0; i < 1000; ++i) {
        const int fd = openIdle(port);
        ASSERT_GE(fd, 0) << "connection " << i;
        idle.push_back(fd);
    }
    // A real client still gets in and is answered (the limit is a hang guard).
    ControlClientOptions o = clientOptions(endpoint, kViewerToken);
    o.timeoutMs = 5000;
    const auto t0 = std::chrono::steady_clock::now();
    auto viewer = std::make_unique<ControlClient>(o);
    const ControlReply login = viewer->connect();
    ASSERT_TRUE(login.ok) << login.code << " " << login.message;
    const ControlReply status = viewer->call("runtime.status", "");
    EXPECT_TRUE(status.ok) << status.message;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ figures ] runtime.status with 1000 idle connections: answered in %.1f ms; runtime fds %zu "
                "(baseline %zu)\n",
                ms, fdCount(rt.pid()), baseline);
    // The connection cap holds: the runtime keeps few of the idle ones open.
    EXPECT_LT(fdCount(rt.pid()), baseline + 64);

    for (const int fd : idle) {
        ::close(fd);
    }
    viewer.reset();
    // The runtime's descriptors come back to about the baseline once they are gone.
    std::size_t now = fdCount(rt.pid());
    for (int i = 0; i < 200 && now > baseline + 2; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
        now = fdCount(rt.pid());
    }
    EXPECT_LE(now, baseline + 2);
    EXPECT_TRUE(controlCall(o, "runtime.status", "").ok);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

} // namespace
} // namespace takt::agent::live
