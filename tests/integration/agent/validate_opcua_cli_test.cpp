// `takt validate` and `takt run` refuse an enabled [runtime.opcua] on a machine without Node.js,
// saying what to install, and a password file others can read, each at its key and line, by the
// one check behind both. The real binary on temp projects; PATH without node stands for a machine
// without Node.js.
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace {

using takt::test::ProcessOptions;
using takt::test::RunResult;
using takt::test::TempDir;

// `takt ARGS` run directly (no shell, which would take PATH from the inherited environment).
RunResult taktDirect(const std::vector<std::string>& args, const ProcessOptions& options) {
    return takt::test::run(takt::test::taktArgv(args), options);
}

void writeProject(const TempDir& dir, const std::string& opcua) {
    dir.write("runtime.toml", "[resource]\nname = \"cell\"\n[runtime.opcua]\nenabled = true\n" + opcua);
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n[io.params]\nbytes = 4\n");
    dir.write("src/main.st", "PROGRAM Main\nVAR\n  x AT %QX0.0 : BOOL;\nEND_VAR\nx := NOT x;\nEND_PROGRAM\n");
}

// The one error of `validate --ci`'s report at `key`, as "line: message".
std::string errorAt(const RunResult& v, const std::string& key) {
    rapidjson::Document doc;
    doc.Parse(v.out.c_str());
    if (!doc.IsObject() || !doc.HasMember("diagnostics")) {
        return "no report: " + v.out + v.err;
    }
    std::string found;
    for (const auto& d : doc["diagnostics"].GetArray()) {
        if (std::string(d["key"].GetString()) == key && std::string(d["severity"].GetString()) == "error") {
            found += std::to_string(d["line"].GetUint()) + ": " + d["message"].GetString();
        }
    }
    return found;
}

TEST(ValidateOpcuaCli, WithoutNodeValidateAndRunSayWhatToInstall) {
    TempDir dir;
    writeProject(dir, "");
    const ProcessOptions noNode{.cwd = dir.path(), .env = {"PATH=/nonexistent"}};
    const RunResult v = taktDirect({"validate", "--ci"}, noNode);
    EXPECT_EQ(v.exitCode, 10) << v.out << v.err;
    EXPECT_EQ(errorAt(v, "runtime.opcua.enabled"),
              "4: the OPC UA server runs on Node.js, and there is no node (or nodejs) on PATH: install it (Debian: apt "
              "install nodejs), or set enabled = false");

    const RunResult run = taktDirect({"run", "--for", "1s"}, noNode);
    EXPECT_EQ(run.exitCode, 10) << run.out << run.err;
    EXPECT_NE(run.err.find("runtime.toml:4:1: error: runtime.opcua.enabled: the OPC UA server runs on Node.js"),
              std::string::npos)
        << run.err;
}

TEST(ValidateOpcuaCli, LoosePasswordFileIsRefusedAtItsKey) {
    TempDir dir;
    writeProject(dir, "[[runtime.opcua.users]]\nname = \"scada\"\nrole = \"engineer\"\npassword_file = \"scada.pw\"\n");
    dir.write("scada.pw", "7d2e9b0c4a1f6358e2b7\n", 0644);
    // A node on PATH, whatever the machine has: only the password file is under test.
    dir.write("bin/node", "#!/bin/sh\necho v20.11.1\n", 0755);
    const ProcessOptions withNode{.cwd = dir.path(),
                                  .env = {"PATH=" + (dir.path() / "bin").string() + ":/usr/bin:/bin"}};
    const RunResult v = taktDirect({"validate", "--ci"}, withNode);
    EXPECT_EQ(v.exitCode, 10) << v.out << v.err;
    const std::string error = errorAt(v, "runtime.opcua.users[0].password_file");
    EXPECT_TRUE(error.starts_with("8: password file '")) << error;
    EXPECT_NE(error.find("chmod 600"), std::string::npos) << error;

    dir.write("scada.pw", "7d2e9b0c4a1f6358e2b7\n", 0600);
    const RunResult ok = taktDirect({"validate", "--ci"}, withNode);
    EXPECT_EQ(ok.exitCode, 0) << ok.out << ok.err;
}

} // namespace
