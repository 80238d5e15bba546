// [runtime.opcua] -> OpcuaOptions: Node.js found on PATH (or the section refused with what to
// install), password files checked as token files, truST's inline password as an inline token,
// paths relative to runtime.toml, the namespace URI's default.
#include <sys/stat.h>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "takt/agent/opcua_config.h"

namespace takt::agent {
namespace {

using Severity = engine::ConfigDiagnostic::Severity;

// A folder with an executable `node` in it, to stand for a PATH that has Node.js (of `version`).
std::string fakeNodeDir(test::TempDir& dir, std::string_view version = "v20.11.1") {
    const auto node = dir.write("bin/node", fmt::format("#!/bin/sh\necho {}\n", version));
    ::chmod(node.c_str(), 0755);
    return (dir.path() / "bin").string();
}

std::vector<std::string> errors(const std::vector<engine::ConfigDiagnostic>& diagnostics) {
    std::vector<std::string> out;
    for (const engine::ConfigDiagnostic& d : diagnostics) {
        if (d.severity == Severity::Error) {
            out.push_back(engine::formatDiagnostic(d));
        }
    }
    return out;
}

TEST(OpcuaOptions, UsersPathsAndDefaults) {
    test::TempDir dir;
    const std::string bin = fakeNodeDir(dir);
    const std::string pw = dir.write("secrets/scada.password", "3f9a0c7e1b5d2846e0b1\n").string();
    ::chmod(pw.c_str(), 0600);
    const std::string toml = dir.write("runtime.toml", R"([resource]
name = "cell"
[runtime.opcua]
enabled = true
pki_dir = "pki"
[[runtime.opcua.users]]
name = "scada"
role = "engineer"
password_file = "secrets/scada.password"
)")
                                 .string();
    const engine::RuntimeConfigResult loaded = engine::loadRuntimeConfig(toml);
    ASSERT_TRUE(loaded.config.has_value());
    OpcuaOptions o;
    std::vector<engine::ConfigDiagnostic> diagnostics;
    ASSERT_TRUE(opcuaOptionsFromConfig(*loaded.config, o, diagnostics, "/nonexistent:" + bin))
        << engine::formatDiagnostic(diagnostics.front());
    EXPECT_TRUE(diagnostics.empty());
    EXPECT_TRUE(o.enabled);
    EXPECT_EQ(o.node, bin + "/node");
    EXPECT_EQ(o.namespaceUri, "urn:takt:cell");
    EXPECT_EQ(o.pkiDir, (dir.path() / "pki").string());
    EXPECT_TRUE(o.certificate.empty());
    ASSERT_EQ(o.users.size(), 1U);
    EXPECT_EQ(o.users[0].name, "scada");
    EXPECT_EQ(o.users[0].role, Role::Engineer);
    EXPECT_EQ(o.users[0].password, "3f9a0c7e1b5d2846e0b1");

    // A password file others can read is refused at its key and line, as a token file is.
    ::chmod(pw.c_str(), 0640);
    diagnostics.clear();
    EXPECT_FALSE(opcuaOptionsFromConfig(*loaded.config, o, diagnostics, bin));
    ASSERT_EQ(errors(diagnostics).size(), 1U);
    EXPECT_EQ(diagnostics[0].key, "runtime.opcua.users[0].password_file");
    EXPECT_EQ(diagnostics[0].line, 9U);
    EXPECT_NE(diagnostics[0].message.find("password file '" + pw + "': mode 0640"), std::string::npos)
        << diagnostics[0].message;

    // A short one too.
    ::chmod(pw.c_str(), 0600);
    (void)dir.write("secrets/scada.password", "short\n");
    diagnostics.clear();
    EXPECT_FALSE(opcuaOptionsFromConfig(*loaded.config, o, diagnostics, bin));
    ASSERT_EQ(errors(diagnostics).size(), 1U);
    EXPECT_EQ(diagnostics[0].key, "runtime.opcua.users[0].password_file");
}

TEST(OpcuaOptions, WithoutNodeTheSectionIsRefusedSayingWhatToInstall) {
    const engine::RuntimeConfigResult loaded =
        engine::parseRuntimeConfig("[runtime.opcua]\nenabled = true\n", "/p/runtime.toml");
    ASSERT_TRUE(loaded.config.has_value());
    OpcuaOptions o;
    std::vector<engine::ConfigDiagnostic> diagnostics;
    EXPECT_FALSE(opcuaOptionsFromConfig(*loaded.config, o, diagnostics, "/nonexistent:"));
    EXPECT_EQ(errors(diagnostics),
              std::vector<std::string>{"/p/runtime.toml:2:1: error: runtime.opcua.enabled: the OPC UA server runs on "
                                       "Node.js, and there is no node (or nodejs) on PATH: install it (Debian: apt "
                                       "install nodejs), or set enabled = false"});

    // A node too old for node-opcua, or one that names no version, is refused too: the server
    // would die at every start.
    for (const auto& [version, says] : {std::pair<std::string, std::string>{"v16.20.2", "is version 16"},
                                        {"", "is of no version `--version` names"}}) {
        test::TempDir dir;
        const std::string bin = fakeNodeDir(dir, version);
        diagnostics.clear();
        EXPECT_FALSE(opcuaOptionsFromConfig(*loaded.config, o, diagnostics, bin)) << version;
        EXPECT_EQ(errors(diagnostics),
                  std::vector<std::string>{fmt::format(
                      "/p/runtime.toml:2:1: error: runtime.opcua.enabled: the OPC UA server needs Node.js 18 or later, "
                      "and {}/node {}: install Node.js 18 or later (Debian: apt install nodejs), or set enabled = "
                      "false",
                      bin, says)});
    }
    // Debian 12's own nodejs (18) will do.
    {
        test::TempDir dir;
        const std::string bin = fakeNodeDir(dir, "v18.20.4");
        diagnostics.clear();
        EXPECT_TRUE(opcuaOptionsFromConfig(*loaded.config, o, diagnostics, bin));
        EXPECT_TRUE(errors(diagnostics).empty()) << errors(diagnostics).front();
    }

    // A disabled section needs nothing.
    const engine::RuntimeConfigResult off =
        engine::parseRuntimeConfig("[runtime.opcua]\nenabled = false\n", "/p/runtime.toml");
    diagnostics.clear();
    EXPECT_TRUE(opcuaOptionsFromConfig(*off.config, o, diagnostics, "/nonexistent"));
    EXPECT_TRUE(diagnostics.empty());
    EXPECT_FALSE(o.enabled);
}

// truST's inline password: a warning to move it into a file; weak, it is refused where other
// hosts can reach the server and only warned about on loopback.
TEST(OpcuaOptions, InlinePasswordAsAnInlineToken) {
    test::TempDir dir;
    const std::string bin = fakeNodeDir(dir);
    const auto check = [&](const std::string& section, bool accepted, const std::string& words) {
        const engine::RuntimeConfigResult loaded =
            engine::parseRuntimeConfig("[runtime.opcua]\nenabled = true\n" + section, "runtime.toml");
        ASSERT_TRUE(loaded.config.has_value()) << section;
        OpcuaOptions o;
        std::vector<engine::ConfigDiagnostic> diagnostics;
        EXPECT_EQ(opcuaOptionsFromConfig(*loaded.config, o, diagnostics, bin), accepted) << section;
        ASSERT_EQ(diagnostics.size(), 1U) << section;
        EXPECT_EQ(diagnostics[0].severity, accepted ? Severity::Warning : Severity::Error);
        EXPECT_EQ(diagnostics[0].key, "runtime.opcua.password");
        EXPECT_NE(diagnostics[0].message.find(words), std::string::npos) << diagnostics[0].message;
        if (accepted) {
            ASSERT_EQ(o.users.size(), 1U);
            EXPECT_EQ(o.users[0].role, Role::Engineer);
        }
    };
    check("username = \"op\"\npassword = \"pw-5c1d9e7b2a4f8036\"\n", true, "move it into a password file");
    check("username = \"op\"\npassword = \"secret\"\n", true, "accepted only because 127.0.0.1:4840 is a loopback");
    check("listen = \"0.0.0.0:4840\"\nsecurity_policy = \"basic256sha256\"\nusername = \"op\"\npassword = "
          "\"secret\"\n",
          false, "0.0.0.0:4840 is reachable from other hosts");
}

} // namespace
} // namespace takt::agent
