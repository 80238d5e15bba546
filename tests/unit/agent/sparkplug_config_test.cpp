// [runtime.sparkplug] -> SparkplugOptions: the password file checked as a token file, the TLS
// files found, paths relative to runtime.toml, the command role; a disabled section not looked into.
#include <sys/stat.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "takt/agent/sparkplug_config.h"

namespace takt::agent {
namespace {

std::string section(bool enabled, const std::string& extra) {
    return std::string("[runtime.sparkplug]\nenabled = ") + (enabled ? "true" : "false") +
           "\nservers = [\"ssl://broker:8883\", \"tcp://127.0.0.1\"]\ngroup_id = \"G\"\nedge_node_id = \"E\"\n" +
           "username = \"line1\"\npassword_file = \"secrets/mqtt.password\"\n" + extra;
}

TEST(SparkplugOptions, PasswordAndTlsFilesAreReadAndChecked) {
    test::TempDir dir;
    const std::string pw = dir.write("secrets/mqtt.password", "3f9a0c7e1b5d2846e0b1\n").string();
    ::chmod(pw.c_str(), 0600);
    (void)dir.write("pki/ca.pem", "-----BEGIN CERTIFICATE-----\n");
    const std::string toml =
        dir.write("runtime.toml", section(true, "tls = { ca = \"pki/ca.pem\" }\ncommand_role = \"operator\"\n"))
            .string();
    engine::RuntimeConfigResult loaded = engine::loadRuntimeConfig(toml);
    ASSERT_TRUE(loaded.config.has_value());
    SparkplugOptions o;
    std::vector<engine::ConfigDiagnostic> diagnostics;
    ASSERT_TRUE(sparkplugOptionsFromConfig(*loaded.config, o, diagnostics));
    EXPECT_TRUE(diagnostics.empty());
    EXPECT_TRUE(o.enabled);
    EXPECT_EQ(o.password, "3f9a0c7e1b5d2846e0b1");
    EXPECT_EQ(o.tlsCa, (dir.path() / "pki/ca.pem").string());
    EXPECT_EQ(o.commandRole, Role::Operator);
    ASSERT_EQ(o.servers.size(), 2U);
    EXPECT_TRUE(o.servers[0].tls);

    // A password file others can read is refused at its key and line, as a token file is.
    ::chmod(pw.c_str(), 0640);
    diagnostics.clear();
    EXPECT_FALSE(sparkplugOptionsFromConfig(*loaded.config, o, diagnostics));
    ASSERT_EQ(diagnostics.size(), 1U);
    EXPECT_EQ(diagnostics[0].key, "runtime.sparkplug.password_file");
    EXPECT_EQ(diagnostics[0].line, 7U);
    EXPECT_NE(diagnostics[0].message.find("password file '" + pw + "': mode 0640"), std::string::npos)
        << diagnostics[0].message;
    ::chmod(pw.c_str(), 0600);
    (void)dir.write("secrets/mqtt.password", "changeme\n");
    diagnostics.clear();
    EXPECT_FALSE(sparkplugOptionsFromConfig(*loaded.config, o, diagnostics));
    ASSERT_EQ(diagnostics.size(), 1U);
    EXPECT_EQ(diagnostics[0].key, "runtime.sparkplug.password_file");
}

TEST(SparkplugOptions, MissingTlsFilesAreRefusedAtTheirKey) {
    test::TempDir dir;
    const std::string pw = dir.write("secrets/mqtt.password", "3f9a0c7e1b5d2846e0b1\n").string();
    ::chmod(pw.c_str(), 0600);
    const std::string toml =
        dir.write("runtime.toml",
                  section(true, "tls = { ca = \"nothing/ca.pem\", cert = \"c.pem\", key = \"k.pem\" }\n"))
            .string();
    engine::RuntimeConfigResult loaded = engine::loadRuntimeConfig(toml);
    ASSERT_TRUE(loaded.config.has_value());
    SparkplugOptions o;
    std::vector<engine::ConfigDiagnostic> diagnostics;
    EXPECT_FALSE(sparkplugOptionsFromConfig(*loaded.config, o, diagnostics));
    ASSERT_EQ(diagnostics.size(), 3U);
    EXPECT_EQ(diagnostics[0].key, "runtime.sparkplug.tls.ca");
    EXPECT_EQ(diagnostics[0].line, 8U);
    EXPECT_EQ(diagnostics[0].message, "'" + (dir.path() / "nothing/ca.pem").string() + "' is not a readable file");
    EXPECT_EQ(diagnostics[1].key, "runtime.sparkplug.tls.cert");
    EXPECT_EQ(diagnostics[2].key, "runtime.sparkplug.tls.key");
}

TEST(SparkplugOptions, ADisabledSectionIsNotLookedInto) {
    test::TempDir dir; // no password file at all
    const std::string toml = dir.write("runtime.toml", section(false, "tls = { ca = \"ca.pem\" }\n")).string();
    engine::RuntimeConfigResult loaded = engine::loadRuntimeConfig(toml);
    ASSERT_TRUE(loaded.config.has_value());
    SparkplugOptions o;
    std::vector<engine::ConfigDiagnostic> diagnostics;
    EXPECT_TRUE(sparkplugOptionsFromConfig(*loaded.config, o, diagnostics));
    EXPECT_TRUE(diagnostics.empty());
    EXPECT_FALSE(o.enabled);
}

} // namespace
} // namespace takt::agent
