// [runtime.control] of runtime.toml -> ControlOptions: token files relative to runtime.toml,
// roles, truST's auth_token as admin, refused token files named with their key.
#include <sys/stat.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "takt/agent/control_config.h"

namespace takt::agent {
namespace {

TEST(ControlConfig, TokensFromFilesAndAuthToken) {
    test::TempDir dir;
    const std::string eng = dir.write("secrets/eng.token", "9c1e4b7a2f6d8053e1a7\n").string();
    ::chmod(eng.c_str(), 0600);
    const std::string toml = dir.write("runtime.toml", R"([resource]
name = "t"
[runtime.control]
endpoint = "tls://127.0.0.1:9443"
auth_token = "admin-7d1f0c9b3e5a2468"
[[runtime.control.tokens]]
role = "engineer"
token_file = "secrets/eng.token"
[runtime.control.tls]
cert = "tls/server.pem"
key = "/etc/takt/server.key"
)")
                                 .string();
    const engine::RuntimeConfigResult loaded = engine::loadRuntimeConfig(toml);
    ASSERT_TRUE(loaded.config.has_value());
    ControlOptions o;
    std::vector<engine::ConfigDiagnostic> diagnostics;
    ASSERT_TRUE(controlOptionsFromConfig(*loaded.config, o, diagnostics)) << diagnostics.front().message;
    EXPECT_EQ(o.endpoint, "tls://127.0.0.1:9443");
    ASSERT_EQ(o.tokens.size(), 2U);
    EXPECT_EQ(o.tokens[0].role, Role::Admin);
    EXPECT_EQ(o.tokens[0].secret, "admin-7d1f0c9b3e5a2468");
    EXPECT_EQ(o.tokens[1].role, Role::Engineer);
    EXPECT_EQ(o.tokens[1].secret, "9c1e4b7a2f6d8053e1a7");
    EXPECT_EQ(o.tlsCert, (dir.path() / "tls/server.pem").string());
    EXPECT_EQ(o.tlsKey, "/etc/takt/server.key");

    ASSERT_EQ(diagnostics.size(), 1U); // the inline auth_token: move it into a token file
    EXPECT_EQ(diagnostics[0].severity, engine::ConfigDiagnostic::Severity::Warning);
    EXPECT_EQ(diagnostics[0].key, "runtime.control.auth_token");
    EXPECT_NE(diagnostics[0].message.find("move it into a token file"), std::string::npos) << diagnostics[0].message;

    ::chmod(eng.c_str(), 0644);
    diagnostics.clear();
    EXPECT_FALSE(controlOptionsFromConfig(*loaded.config, o, diagnostics));
    std::erase_if(diagnostics, [](const engine::ConfigDiagnostic& d) {
        return d.severity == engine::ConfigDiagnostic::Severity::Warning;
    });
    ASSERT_EQ(diagnostics.size(), 1U);
    EXPECT_EQ(diagnostics[0].key, "runtime.control.tokens[0].token_file");
    EXPECT_EQ(diagnostics[0].line, 8U);
    EXPECT_NE(diagnostics[0].message.find("chmod 600"), std::string::npos) << diagnostics[0].message;
}

// The audit log's rotation and the TLS handshake timeout come from [runtime.control]; out of
// range is an error naming the key and its line.
TEST(ControlConfig, AuditRotationAndHandshakeTimeout) {
    const engine::RuntimeConfigResult defaults =
        engine::parseRuntimeConfig("[runtime.control]\nendpoint = \"unix:///tmp/t.sock\"\n", "runtime.toml");
    ASSERT_TRUE(defaults.config.has_value());
    ControlOptions o;
    std::vector<engine::ConfigDiagnostic> diagnostics;
    ASSERT_TRUE(controlOptionsFromConfig(*defaults.config, o, diagnostics));
    EXPECT_EQ(o.auditMaxBytes, std::uint64_t{8} << 20);
    EXPECT_EQ(o.auditKeep, 4U);
    EXPECT_EQ(o.handshakeTimeoutMs, 5000U);

    const engine::RuntimeConfigResult set =
        engine::parseRuntimeConfig("[runtime.control]\nendpoint = \"unix:///tmp/t.sock\"\naudit_max_mib = 2\n"
                                   "audit_keep = 7\nhandshake_timeout_ms = 1500\n",
                                   "runtime.toml");
    ASSERT_TRUE(set.config.has_value());
    ASSERT_TRUE(controlOptionsFromConfig(*set.config, o, diagnostics));
    EXPECT_EQ(o.auditMaxBytes, std::uint64_t{2} << 20);
    EXPECT_EQ(o.auditKeep, 7U);
    EXPECT_EQ(o.handshakeTimeoutMs, 1500U);

    const engine::RuntimeConfigResult bad = engine::parseRuntimeConfig(
        "[runtime.control]\nendpoint = \"unix:///tmp/t.sock\"\naudit_max_mib = 0\n", "runtime.toml");
    EXPECT_FALSE(bad.config.has_value());
    ASSERT_EQ(bad.diagnostics.size(), 1U);
    EXPECT_EQ(bad.diagnostics[0].key, "runtime.control.audit_max_mib");
    EXPECT_EQ(bad.diagnostics[0].line, 3U);
}

} // namespace
} // namespace takt::agent

namespace takt::agent {
namespace {

// truST's examples ship an inline placeholder auth_token ("…-example-token"). Where only this host
// can connect (a Unix socket, loopback TCP) it is accepted with a warning naming its line; on any
// other endpoint the same token is refused with the weak-token error.
TEST(ControlConfig, InlineAuthTokenWarnsWhereLocalAndIsRefusedOnTheNetwork) {
    const auto check = [](const std::string& endpoint, std::string_view tls) {
        const std::string text = "[runtime.control]\nendpoint = \"" + endpoint +
                                 "\"\nauth_token = \"plant-oop-example-token\"\n" + std::string(tls);
        const engine::RuntimeConfigResult loaded = engine::parseRuntimeConfig(text, "runtime.toml");
        EXPECT_TRUE(loaded.config.has_value()) << endpoint;
        ControlOptions o;
        std::vector<engine::ConfigDiagnostic> diagnostics;
        const bool ok = loaded.config && controlOptionsFromConfig(*loaded.config, o, diagnostics);
        return std::make_pair(ok, diagnostics);
    };
    for (const std::string endpoint : {"unix:///tmp/takt-t.sock", "tcp://127.0.0.1:0", "tcp://[::1]:9001"}) {
        const auto [ok, diagnostics] = check(endpoint, "");
        EXPECT_TRUE(ok) << endpoint;
        ASSERT_EQ(diagnostics.size(), 1U) << endpoint;
        EXPECT_EQ(diagnostics[0].severity, engine::ConfigDiagnostic::Severity::Warning);
        EXPECT_EQ(diagnostics[0].line, 3U);
        EXPECT_EQ(diagnostics[0].key, "runtime.control.auth_token");
        EXPECT_NE(diagnostics[0].message.find("move it into a token file"), std::string::npos);
        EXPECT_NE(diagnostics[0].message.find("placeholder"), std::string::npos) << diagnostics[0].message;
    }
    const auto [ok, diagnostics] =
        check("tls://0.0.0.0:9443", "[runtime.control.tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n");
    EXPECT_FALSE(ok);
    ASSERT_EQ(diagnostics.size(), 1U);
    EXPECT_EQ(diagnostics[0].severity, engine::ConfigDiagnostic::Severity::Error);
    EXPECT_EQ(diagnostics[0].key, "runtime.control.auth_token");
    EXPECT_NE(diagnostics[0].message.find("placeholder"), std::string::npos) << diagnostics[0].message;
}

} // namespace
} // namespace takt::agent
