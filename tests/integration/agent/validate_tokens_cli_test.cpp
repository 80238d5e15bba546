// `takt validate` refuses every control token `takt run` refuses (one check behind both): a
// missing or loose token file, short, repeated or placeholder inline tokens (an inline auth_token
// only on an endpoint other hosts can reach: on a Unix socket it is a warning). Each refusal names
// runtime.toml, the line and column of the key, and the key. The real binary on temp projects.
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace {

using takt::test::RunResult;
using takt::test::runTakt;
using takt::test::TempDir;

struct BadToken {
    const char* name;
    const char* control; // runtime.toml from line 5 on, inside [runtime.control]
    const char* key;
    unsigned line;
    const char* reason;
};

// Appended to an auth_token case: the endpoint becomes tls://0.0.0.0 (runtimeToml()).
#define TAKT_TLS_SECTION "[runtime.control.tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n"

const BadToken kBadTokens[] = {
    {"missing token file", "[[runtime.control.tokens]]\nrole = \"engineer\"\ntoken_file = \"absent.token\"\n",
     "runtime.control.tokens[0].token_file", 7, "No such file"},
    {"token file readable by others", "[[runtime.control.tokens]]\nrole = \"viewer\"\ntoken_file = \"loose.token\"\n",
     "runtime.control.tokens[0].token_file", 7, "chmod 600"},
    {"short auth_token on a network endpoint", "auth_token = \"short\"\n" TAKT_TLS_SECTION,
     "runtime.control.auth_token", 5, "at least 16"},
    {"short inline token", "[[runtime.control.tokens]]\nrole = \"operator\"\ntoken = \"abc123\"\n",
     "runtime.control.tokens[0].token", 7, "at least 16"},
    {"placeholder inline token", "[[runtime.control.tokens]]\nrole = \"admin\"\ntoken = \"changeme-changeme-0042\"\n",
     "runtime.control.tokens[0].token", 7, "placeholder"},
    {"repeated auth_token on a network endpoint", "auth_token = \"aaaaaaaaaaaaaaaaaaaaaaaa\"\n" TAKT_TLS_SECTION,
     "runtime.control.auth_token", 5, "repeats"},
};

std::string runtimeToml(const TempDir& dir, const std::string& control) {
    const std::string endpoint = control.find("[runtime.control.tls]") != std::string::npos
                                     ? std::string("tls://0.0.0.0:9443")
                                     : "unix://" + (dir.path() / "ctl.sock").string();
    return "[resource]\nname = \"cell\"\n[runtime.control]\nendpoint = \"" + endpoint + "\"\n" + control;
}

// A built project whose runtime.toml holds `control`; loose.token is a good token with mode 0644.
void writeProject(const TempDir& dir, const std::string& control) {
    dir.write("runtime.toml", runtimeToml(dir, ""));
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n[io.params]\nbytes = 4\n");
    dir.write("src/main.st", "PROGRAM Main\nVAR\n  x AT %QX0.0 : BOOL;\nEND_VAR\nx := NOT x;\nEND_PROGRAM\n");
    dir.write("loose.token", "5e0c1f9a7b3d2468ace0\n", 0644);
    dir.write("good.token", "5e0c1f9a7b3d2468ace0\n", 0600);
    const RunResult built = runTakt("build --ci", dir.path());
    ASSERT_EQ(built.exitCode, 0) << built.out << built.err;
    dir.write("runtime.toml", runtimeToml(dir, control));
}

TEST(ValidateTokensCli, ValidateAndRunRefuseTheSameTokensNamingTheKey) {
    for (const BadToken& b : kBadTokens) {
        SCOPED_TRACE(b.name);
        TempDir dir;
        writeProject(dir, b.control);
        const RunResult v = runTakt("validate --ci", dir.path());
        EXPECT_EQ(v.exitCode, 10) << v.out << v.err;
        rapidjson::Document doc;
        doc.Parse(v.out.c_str());
        ASSERT_TRUE(doc.IsObject()) << v.out;
        bool found = false;
        for (const auto& d : doc["diagnostics"].GetArray()) {
            if (std::string(d["key"].GetString()) == b.key) {
                found = true;
                EXPECT_STREQ(d["severity"].GetString(), "error");
                EXPECT_TRUE(std::string(d["file"].GetString()).ends_with("runtime.toml")) << v.out;
                EXPECT_EQ(d["line"].GetUint(), b.line);
                EXPECT_EQ(d["column"].GetUint(), 1U);
                EXPECT_NE(std::string(d["message"].GetString()).find(b.reason), std::string::npos) << v.out;
            }
        }
        EXPECT_TRUE(found) << v.out;

        const std::string where = "runtime.toml:" + std::to_string(b.line) + ":1: error: " + b.key + ": ";
        const RunResult human = runTakt("validate", dir.path());
        EXPECT_EQ(human.exitCode, 10);
        EXPECT_NE(human.err.find(where), std::string::npos) << human.err;

        const RunResult run = runTakt("run --for 3s", dir.path());
        EXPECT_EQ(run.exitCode, 10) << run.out << run.err;
        EXPECT_NE(run.err.find(where), std::string::npos) << run.err;
    }
}

TEST(ValidateTokensCli, GoodTokensAreAccepted) {
    TempDir dir;
    writeProject(dir, "auth_token = \"0f3a9c5e7b1d2468ace0\"\n[[runtime.control.tokens]]\nrole = \"viewer\"\n"
                      "token_file = \"good.token\"\n[[runtime.control.tokens]]\nrole = \"operator\"\n"
                      "token = \"9b8e7d6c5f4a3b2c1d0e\"\n");
    const RunResult v = runTakt("validate --ci", dir.path());
    EXPECT_EQ(v.exitCode, 0) << v.out << v.err;
}

} // namespace

// A weak inline auth_token on an endpoint only this host reaches is a warning that says why this
// endpoint accepts it: a Unix socket, or a tcp:// endpoint on loopback (a network endpoint too).
TEST(ValidateTokensCli, WeakInlineTokenWarningNamesWhyTheEndpointAcceptsIt) {
    TempDir dir;
    writeProject(dir, "auth_token = \"trust-example-token\"\n");
    RunResult v = runTakt("validate", dir.path());
    EXPECT_EQ(v.exitCode, 0) << v.out << v.err;
    EXPECT_NE(v.err.find("is weak (the token looks like a placeholder ('example'); generate a random one): accepted "
                         "only because a unix:// socket is reachable from this host alone, refused on an endpoint "
                         "other hosts can reach; move it into a token file"),
              std::string::npos)
        << v.err;

    dir.write("runtime.toml", "[resource]\nname = \"cell\"\n[runtime.control]\nendpoint = \"tcp://127.0.0.1:0\"\n"
                              "auth_token = \"trust-example-token\"\n");
    v = runTakt("validate", dir.path());
    EXPECT_EQ(v.exitCode, 0) << v.out << v.err;
    EXPECT_NE(v.err.find("accepted only because tcp://127.0.0.1:0 listens on loopback, refused on an address other "
                         "hosts can reach; move it"),
              std::string::npos)
        << v.err;
    EXPECT_EQ(v.err.find("network endpoint"), std::string::npos) << v.err;
}
