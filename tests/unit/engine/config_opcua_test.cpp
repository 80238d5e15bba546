// [runtime.opcua] of runtime.toml: truST's keys and takt's, every bad value an error at its key
// and line, the security defaults (no security only on loopback unless allowed), users.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "takt/engine/config.h"

namespace takt::engine {
namespace {

using Severity = ConfigDiagnostic::Severity;

RuntimeConfigResult parse(const std::string& text) {
    return parseRuntimeConfig(text, "runtime.toml");
}

std::string dump(const RuntimeConfigResult& r) {
    std::string s;
    for (const ConfigDiagnostic& d : r.diagnostics) {
        s += formatDiagnostic(d) + "\n";
    }
    return s;
}

// The one error of `text`, rendered.
std::string onlyError(const std::string& text) {
    const RuntimeConfigResult r = parse(text);
    EXPECT_FALSE(r.config.has_value()) << text;
    std::vector<std::string> errors;
    for (const ConfigDiagnostic& d : r.diagnostics) {
        if (d.severity == Severity::Error) {
            errors.push_back(formatDiagnostic(d));
        }
    }
    EXPECT_EQ(errors.size(), 1U) << dump(r);
    return errors.empty() ? std::string() : errors.front();
}

TEST(OpcuaConfig, ReadsEveryKey) {
    const RuntimeConfigResult r = parse(R"([resource]
name = "cell"
[runtime.opcua]
enabled = true
listen = "0.0.0.0:4841"
endpoint_path = "/takt"
namespace_uri = "urn:example:cell"
publish_interval_ms = 50
max_nodes = 2000
expose = ["Main.*", "GVL.speed"]
security_policy = "basic256sha256"
security_mode = "sign"
allow_anonymous = false
allow_insecure_network = false
certificate = "pki/server.pem"
private_key = "pki/server.key"
pki_dir = "pki"
[[runtime.opcua.users]]
name = "scada"
role = "engineer"
password_file = "scada.password"
[[runtime.opcua.users]]
name = "hmi"
role = "viewer"
password_file = "/etc/takt/hmi.password"
)");
    ASSERT_TRUE(r.config) << dump(r);
    EXPECT_TRUE(r.diagnostics.empty()) << dump(r);
    const RuntimeConfig::Opcua& o = r.config->opcua;
    EXPECT_TRUE(o.enabled);
    EXPECT_EQ(o.where.line, 4U);
    EXPECT_EQ(o.host, "0.0.0.0");
    EXPECT_EQ(o.port, 4841);
    EXPECT_EQ(o.endpointPath, "/takt");
    EXPECT_EQ(o.namespaceUri, "urn:example:cell");
    EXPECT_EQ(o.publishIntervalMs, 50U);
    EXPECT_EQ(o.maxNodes, 2000U);
    EXPECT_EQ(o.expose, (std::vector<std::string>{"Main.*", "GVL.speed"}));
    EXPECT_EQ(o.securityPolicy, "basic256sha256");
    EXPECT_EQ(o.securityMode, "sign");
    EXPECT_FALSE(o.allowAnonymous);
    EXPECT_EQ(o.certificate, "pki/server.pem");
    EXPECT_EQ(o.privateKey, "pki/server.key");
    EXPECT_EQ(o.pkiDir, "pki");
    ASSERT_EQ(o.users.size(), 2U);
    EXPECT_EQ(o.users[0].name, "scada");
    EXPECT_EQ(o.users[0].role, "engineer");
    EXPECT_EQ(o.users[0].passwordFile, "scada.password");
    EXPECT_EQ(o.users[0].key, "runtime.opcua.users[0].password_file");
    EXPECT_EQ(o.users[0].where.line, 21U);
    EXPECT_EQ(o.users[1].role, "viewer");
}

TEST(OpcuaConfig, DefaultsServeLoopbackWithoutSecurity) {
    const RuntimeConfigResult r = parse("[runtime.opcua]\nenabled = true\n");
    ASSERT_TRUE(r.config) << dump(r);
    EXPECT_TRUE(r.diagnostics.empty()) << dump(r);
    const RuntimeConfig::Opcua& o = r.config->opcua;
    EXPECT_EQ(o.host, "127.0.0.1");
    EXPECT_EQ(o.port, 4840);
    EXPECT_EQ(o.endpointPath, "/");
    EXPECT_EQ(o.securityPolicy, "none");
    EXPECT_EQ(o.securityMode, "none");
    EXPECT_TRUE(o.allowAnonymous);
    EXPECT_TRUE(o.expose.empty());
    EXPECT_EQ(o.publishIntervalMs, 100U);
    EXPECT_EQ(o.maxNodes, 10000U);

    // Not there, or not enabled: nothing is served and nothing warns (truST keeps a disabled
    // section with its settings).
    EXPECT_FALSE(parse("").config->opcua.enabled);
    const RuntimeConfigResult off = parse("[runtime.opcua]\nenabled = false\nlisten = \"0.0.0.0:4840\"\n");
    ASSERT_TRUE(off.config) << dump(off);
    EXPECT_TRUE(off.diagnostics.empty()) << dump(off);
    EXPECT_FALSE(off.config->opcua.enabled);
}

TEST(OpcuaConfig, OnePolicyOrModeImpliesTheOther) {
    const RuntimeConfigResult policy =
        parse("[runtime.opcua]\nenabled = true\nsecurity_policy = \"aes256_sha256_rsapss\"\n");
    ASSERT_TRUE(policy.config) << dump(policy);
    EXPECT_EQ(policy.config->opcua.securityMode, "sign_and_encrypt");
    const RuntimeConfigResult mode = parse("[runtime.opcua]\nenabled = true\nsecurity_mode = \"sign\"\n");
    ASSERT_TRUE(mode.config) << dump(mode);
    EXPECT_EQ(mode.config->opcua.securityPolicy, "basic256sha256");
}

TEST(OpcuaConfig, NoSecurityOnlyOnLoopbackUnlessAllowed) {
    EXPECT_EQ(onlyError("[runtime.opcua]\nenabled = true\nlisten = \"0.0.0.0:4840\"\n"),
              "runtime.toml:3:1: error: runtime.opcua.listen: \"0.0.0.0:4840\" is not a loopback address: serving it "
              "needs security_policy = \"basic256sha256\" (signed and encrypted), or allow_insecure_network = true "
              "to serve it without security");
    EXPECT_EQ(onlyError("[runtime.opcua]\nenabled = true\nlisten = \"192.168.1.5:4840\"\nsecurity_policy = \"none\"\n")
                  .substr(0, 51),
              "runtime.toml:4:1: error: runtime.opcua.security_pol");
    for (const char* ok : {"listen = \"0.0.0.0:4840\"\nallow_insecure_network = true\n",
                           "listen = \"0.0.0.0:4840\"\nsecurity_policy = \"basic256sha256\"\n",
                           "listen = \"[::1]:4840\"\n", "listen = \"localhost:4840\"\n"}) {
        const RuntimeConfigResult r = parse(std::string("[runtime.opcua]\nenabled = true\n") + ok);
        EXPECT_TRUE(r.config) << ok << dump(r);
    }
    EXPECT_EQ(parse("[runtime.opcua]\nenabled = true\nlisten = \"[::1]:4840\"\n").config->opcua.host, "::1");
}

TEST(OpcuaConfig, BadValuesAreErrorsAtTheirKey) {
    const std::string head = "[runtime.opcua]\nenabled = true\n";
    const struct {
        const char* line;
        const char* expected;
    } cases[] = {
        {"listen = \"4840\"", "runtime.opcua.listen: \"4840\" needs host:port, e.g. 127.0.0.1:4840"},
        {"listen = 4840", "runtime.opcua.listen: expected a string, found an integer"},
        {"endpoint_path = \"ua\"", "runtime.opcua.endpoint_path: \"ua\" is not a path: it starts with / and has no "
                                   "spaces, ?, # or %"},
        {"namespace_uri = \"\"", "runtime.opcua.namespace_uri: must not be empty (remove the key for the default)"},
        {"namespace_uri = \"cell\"", "runtime.opcua.namespace_uri: \"cell\" is not a URI (e.g. urn:example:line1)"},
        {"publish_interval_ms = 5", "runtime.opcua.publish_interval_ms: 5 is out of range (expected 10..3600000)"},
        {"max_nodes = 0", "runtime.opcua.max_nodes: 0 is out of range (expected 1..1000000)"},
        {"security_policy = \"basic256\"", "runtime.opcua.security_policy: \"basic256\" is deprecated by OPC UA 1.04 "
                                           "(SHA-1) and not offered; use \"basic256sha256\""},
        {"security_policy = \"rsa\"", "runtime.opcua.security_policy: unknown value \"rsa\" (expected one of: none, "
                                      "basic256sha256, aes128_sha256_rsaoaep, aes256_sha256_rsapss)"},
        {"security_mode = \"encrypt\"", "runtime.opcua.security_mode: unknown value \"encrypt\" (expected one of: "
                                        "none, sign, sign_and_encrypt)"},
        {"security_policy = \"none\"\nsecurity_mode = \"sign\"",
         "runtime.opcua.security_mode: security_mode \"sign\" does not go with security_policy \"none\" (\"none\" "
         "goes with \"none\" only)"},
        {"allow_anonymous = false", "runtime.opcua.allow_anonymous: allow_anonymous = false and no users: nobody "
                                    "could log in (add [[runtime.opcua.users]])"},
        {"certificate = \"a.pem\"", "runtime.opcua.certificate: give both certificate and private_key, or neither "
                                    "(one is then generated into the state directory)"},
        {"username = \"op\"", "runtime.opcua.username: give both username and password, or neither (or use "
                              "[[runtime.opcua.users]] with a password_file)"},
        {"expose = [\"\"]", "runtime.opcua.expose[0]: expected a glob over variable paths, e.g. \"Main.*\""},
        {"users = [{ name = \"a\", password_file = \"p\" }]",
         "runtime.opcua.users[0].role: missing required key (expected a string)"},
        {"users = [{ name = \"a\", role = \"root\", password_file = \"p\" }]",
         "runtime.opcua.users[0].role: unknown value \"root\" (expected one of: viewer, operator, engineer, admin)"},
        {"users = [{ name = \"a\", role = \"viewer\", password_file = \"p\" }, { name = \"a\", role = \"admin\", "
         "password_file = \"q\" }]",
         "runtime.opcua.users[1].name: user \"a\" is given twice"},
        {"users = [{ name = \"a\", role = \"viewer\" }]",
         "runtime.opcua.users[0].password_file: missing required key (expected a string)"},
        {"user = \"a\"", "runtime.opcua.user: unknown key (known here: enabled, listen, endpoint_path, namespace_uri, "
                         "publish_interval_ms, max_nodes, expose, security_policy, security_mode, allow_anonymous, "
                         "allow_insecure_network, certificate, private_key, pki_dir, username, password, users)"},
    };
    for (const auto& c : cases) {
        const std::string error = onlyError(head + c.line + "\n");
        EXPECT_NE(error.find(": error: "), std::string::npos) << c.line;
        EXPECT_EQ(error.substr(error.find(": error: ") + 9), c.expected) << c.line;
        // At the key's line: the table's third line, the fourth for the second key of a pair.
        EXPECT_TRUE(error.starts_with("runtime.toml:3:") || error.starts_with("runtime.toml:4:")) << error;
    }
}

// truST's one user, username and password inline, may write (engineer); its password is checked
// where the server starts (the agent), as an inline control token is.
TEST(OpcuaConfig, TrustUsernameAndPasswordAreOneUser) {
    const RuntimeConfigResult r =
        parse("[runtime.opcua]\nenabled = true\nusername = \"operator\"\npassword = \"pw-5c1d9e7b2a4f8036\"\n");
    ASSERT_TRUE(r.config) << dump(r);
    ASSERT_EQ(r.config->opcua.users.size(), 1U);
    const OpcuaUser& u = r.config->opcua.users[0];
    EXPECT_EQ(u.name, "operator");
    EXPECT_EQ(u.role, "engineer");
    EXPECT_EQ(u.password, "pw-5c1d9e7b2a4f8036");
    EXPECT_EQ(u.key, "runtime.opcua.password");
    EXPECT_EQ(u.where.line, 4U);
}

} // namespace
} // namespace takt::engine
