// [runtime.sparkplug] of runtime.toml: every key read, Sparkplug's ID rules, broker URLs, and every
// bad value an error at its key, line and column.
#include <string>
#include <vector>

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

const std::string kMinimal = "[runtime.sparkplug]\nenabled = true\nservers = [\"tcp://127.0.0.1:1883\"]\n"
                             "group_id = \"Plant1\"\nedge_node_id = \"Line3\"\n";

// An enabled, valid section is taken without a diagnostic: the edge node runs.
const std::string kNoDiagnostic;

// The one error of the minimal section with `extra` appended, rendered.
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

TEST(SparkplugConfig, ReadsEveryKey) {
    const RuntimeConfigResult r = parse(R"([runtime.sparkplug]
enabled = true
servers = ["ssl://broker-a.example:8883", "tcp://[::1]", "ssl://10.0.0.2"]
group_id = "Plant 1"
edge_node_id = "Line3-PLC"
expose = ["Main.*", "GVL.speed"]
primary_host_id = "SCADA-A"
username = "line3"
password_file = "sparkplug.password"
tls = { ca = "pki/ca.pem", cert = "pki/line3.pem", key = "pki/line3.key" }
command_role = "operator"
)");
    ASSERT_TRUE(r.config) << dump(r);
    EXPECT_EQ(dump(r), kNoDiagnostic);
    const RuntimeConfig::Sparkplug& s = r.config->sparkplug;
    EXPECT_TRUE(s.enabled);
    EXPECT_EQ(s.where.line, 2U);
    ASSERT_EQ(s.servers.size(), 3U);
    EXPECT_EQ(s.servers[0].url, "ssl://broker-a.example:8883");
    EXPECT_TRUE(s.servers[0].tls);
    EXPECT_EQ(s.servers[0].host, "broker-a.example");
    EXPECT_EQ(s.servers[0].port, 8883);
    EXPECT_FALSE(s.servers[1].tls);
    EXPECT_EQ(s.servers[1].host, "::1");
    EXPECT_EQ(s.servers[1].port, 1883); // the default of tcp://
    EXPECT_EQ(s.servers[2].port, 8883); // the default of ssl://
    EXPECT_EQ(s.groupId, "Plant 1");
    EXPECT_EQ(s.edgeNodeId, "Line3-PLC");
    EXPECT_EQ(s.expose, (std::vector<std::string>{"Main.*", "GVL.speed"}));
    EXPECT_EQ(s.primaryHostId, "SCADA-A");
    EXPECT_EQ(s.username, "line3");
    EXPECT_EQ(s.passwordFile, "sparkplug.password");
    EXPECT_EQ(s.passwordWhere.line, 9U);
    EXPECT_EQ(s.tlsCa, "pki/ca.pem");
    EXPECT_EQ(s.tlsCert, "pki/line3.pem");
    EXPECT_EQ(s.tlsKey, "pki/line3.key");
    EXPECT_EQ(s.commandRole, "operator");
}

TEST(SparkplugConfig, Defaults) {
    const RuntimeConfigResult r = parse(kMinimal);
    ASSERT_TRUE(r.config) << dump(r);
    EXPECT_EQ(dump(r), kNoDiagnostic);
    const RuntimeConfig::Sparkplug& s = r.config->sparkplug;
    EXPECT_TRUE(s.expose.empty());
    EXPECT_TRUE(s.primaryHostId.empty());
    EXPECT_TRUE(s.username.empty());
    EXPECT_EQ(s.commandRole, "engineer");
    EXPECT_FALSE(parse("").config->sparkplug.enabled);
    // A disabled section is checked all the same, and asks for nothing: no warning.
    std::string off = kMinimal;
    off.replace(off.find("enabled = true"), 14, "enabled = false");
    const RuntimeConfigResult disabled = parse(off);
    ASSERT_TRUE(disabled.config) << dump(disabled);
    EXPECT_TRUE(disabled.diagnostics.empty()) << dump(disabled);
}

TEST(SparkplugConfig, IdsFollowSparkplugsRules) {
    for (const char* bad : {"Line/3", "Line+", "#", ""}) {
        const std::string text = "[runtime.sparkplug]\nservers = [\"tcp://b\"]\ngroup_id = \"G\"\nedge_node_id = \"" +
                                 std::string(bad) + "\"\n";
        const std::string e = onlyError(text);
        EXPECT_EQ(e.substr(0, 55), "runtime.toml:4:1: error: runtime.sparkplug.edge_node_id") << bad;
    }
    EXPECT_EQ(onlyError(kMinimal + "primary_host_id = \"SCADA/A\"\n"),
              "runtime.toml:6:1: error: runtime.sparkplug.primary_host_id: \"SCADA/A\" is not a Sparkplug ID: it is "
              "one MQTT topic level, without '+', '#' or '/'");
    EXPECT_EQ(onlyError("[runtime.sparkplug]\nservers = [\"tcp://b\"]\nedge_node_id = \"E\"\n").substr(0, 46),
              "runtime.toml:1:1: error: runtime.sparkplug.gro");
}

TEST(SparkplugConfig, ServersAreBrokerUrlsInFailoverOrder) {
    const std::string head = "[runtime.sparkplug]\ngroup_id = \"G\"\nedge_node_id = \"E\"\n";
    EXPECT_EQ(onlyError(head + "servers = []\n"),
              "runtime.toml:4:1: error: runtime.sparkplug.servers: give at least one broker, e.g. "
              "[\"tcp://127.0.0.1:1883\"]");
    EXPECT_EQ(onlyError(head + "servers = [\"tcp://a:1883\", \"mqtt://b:1883\"]\n"),
              "runtime.toml:4:28: error: runtime.sparkplug.servers[1]: \"mqtt://b:1883\" is not a broker URL: "
              "tcp://host[:port] or ssl://host[:port]");
    for (const char* bad : {"tcp://", "tcp://a:0", "tcp://a:99999", "tcp://a/x", "tcp://user@a", "tcp://[::1"}) {
        EXPECT_NE(onlyError(head + "servers = [\"" + bad + "\"]\n").find("is not a broker URL"), std::string::npos)
            << bad;
    }
    EXPECT_NE(onlyError(head + "servers = [\"tcp://a:1883\", \"tcp://a\"]\n").find("\"tcp://a\" is given twice"),
              std::string::npos);
    EXPECT_NE(onlyError(head + "servers = [1883]\n").find("expected a broker URL, found an integer"),
              std::string::npos);
    EXPECT_EQ(onlyError(head).substr(0, 50), "runtime.toml:1:1: error: runtime.sparkplug.servers");
    EXPECT_EQ(onlyError(head + "servers = [\"tcp://a\", \"ssl://b\"]\n"),
              "runtime.toml:4:1: error: runtime.sparkplug.servers: \"ssl://b\" needs tls = { ca = \"…\" } (the CA "
              "that signed the broker's certificate)");
}

TEST(SparkplugConfig, BadValuesAreErrorsAtTheirKey) {
    EXPECT_EQ(onlyError(kMinimal + "command_role = \"root\"\n"),
              "runtime.toml:6:1: error: runtime.sparkplug.command_role: unknown value \"root\" (expected one of: "
              "viewer, operator, engineer, admin)");
    EXPECT_EQ(onlyError(kMinimal + "password_file = \"p\"\n"),
              "runtime.toml:6:1: error: runtime.sparkplug.password_file: a password needs a username: give "
              "username too");
    EXPECT_EQ(onlyError(kMinimal + "username = \"\"\n").substr(0, 52),
              "runtime.toml:6:1: error: runtime.sparkplug.username:");
    EXPECT_EQ(onlyError(kMinimal + "tls = { ca = \"ca.pem\", cert = \"c.pem\" }\n"),
              "runtime.toml:6:7: error: runtime.sparkplug.tls.key: cert and key go together: give both, or neither");
    EXPECT_EQ(onlyError(kMinimal + "tls = { cert = \"c.pem\", key = \"k.pem\" }\n").substr(0, 50),
              "runtime.toml:6:7: error: runtime.sparkplug.tls.ca:");
    EXPECT_EQ(onlyError(kMinimal + "tls = { ca = \"ca.pem\", ciphers = \"x\" }\n").substr(0, 57),
              "runtime.toml:6:24: error: runtime.sparkplug.tls.ciphers: ");
    EXPECT_EQ(onlyError(kMinimal + "expose = [\"Main.*\", 3]\n").substr(0, 56),
              "runtime.toml:6:21: error: runtime.sparkplug.expose[1]: e");
    EXPECT_EQ(onlyError(kMinimal + "dead_band = 1\n").substr(0, 52),
              "runtime.toml:6:1: error: runtime.sparkplug.dead_band");
    EXPECT_EQ(
        onlyError("[runtime.sparkplug]\nenabled = 1\nservers = [\"tcp://b\"]\ngroup_id = \"G\"\nedge_node_id = \"E\"\n")
            .substr(0, 50),
        "runtime.toml:2:1: error: runtime.sparkplug.enabled");
}

TEST(SparkplugConfig, DeadbandsAreADefaultAndAnOverrideListByGlob) {
    const RuntimeConfigResult r = parse(kMinimal + R"(deadband = 0.5

[[runtime.sparkplug.deadbands]]
expose = "P.temp*"
absolute = 2

[[runtime.sparkplug.deadbands]]
expose = "P.count"
absolute = 0
)");
    ASSERT_TRUE(r.config) << dump(r);
    EXPECT_EQ(dump(r), kNoDiagnostic);
    const RuntimeConfig::Sparkplug& s = r.config->sparkplug;
    EXPECT_EQ(s.deadband, 0.5);
    ASSERT_EQ(s.deadbands.size(), 2U);
    EXPECT_EQ(s.deadbands[0].expose, "P.temp*");
    EXPECT_EQ(s.deadbands[0].absolute, 2.0);
    EXPECT_EQ(s.deadbands[1].expose, "P.count");
    EXPECT_EQ(s.deadbands[1].absolute, 0.0);
    EXPECT_EQ(parse(kMinimal).config->sparkplug.deadband, 0.0) << "no deadband: every change is sent";
}

TEST(SparkplugConfig, BadDeadbandsAreErrorsAtTheirKeyAndLine) {
    EXPECT_EQ(onlyError(kMinimal + "deadband = -1\n"),
              "runtime.toml:6:1: error: runtime.sparkplug.deadband: -1 is out of range (expected 0..1000000000000000)");
    EXPECT_EQ(onlyError(kMinimal + "deadband = \"1%\"\n").substr(0, 51),
              "runtime.toml:6:1: error: runtime.sparkplug.deadband");
    EXPECT_EQ(onlyError(kMinimal + "[[runtime.sparkplug.deadbands]]\nexpose = \"P.t\"\nabsolute = nan\n"),
              "runtime.toml:8:1: error: runtime.sparkplug.deadbands[0].absolute: nan is out of range (expected "
              "0..1000000000000000)");
    EXPECT_EQ(onlyError(kMinimal + "[[runtime.sparkplug.deadbands]]\nexpose = \"P.t\"\nabsolute = 1\n"
                                   "[[runtime.sparkplug.deadbands]]\nabsolute = 1\n")
                  .substr(0, 62),
              "runtime.toml:9:1: error: runtime.sparkplug.deadbands[1].expose");
    EXPECT_EQ(onlyError(kMinimal + "[[runtime.sparkplug.deadbands]]\nexpose = \"\"\nabsolute = 1\n"),
              "runtime.toml:7:1: error: runtime.sparkplug.deadbands[0].expose: expected a glob over variable paths, "
              "e.g. \"Main.temp*\"");
    EXPECT_EQ(onlyError(kMinimal + "[[runtime.sparkplug.deadbands]]\nexpose = \"P.t\"\nabsolute = 1\npercent = 5\n")
                  .substr(0, 63),
              "runtime.toml:9:1: error: runtime.sparkplug.deadbands[0].percent");
    EXPECT_EQ(onlyError(kMinimal + "deadbands = { expose = \"P.t\", absolute = 1 }\n").substr(0, 52),
              "runtime.toml:6:1: error: runtime.sparkplug.deadbands");
}

} // namespace
} // namespace takt::engine
