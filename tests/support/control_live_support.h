#pragma once
// Shared pieces of the tests that drive a real `takt run` through its control endpoint: a temp
// project, the runtime as a child process (output into the project's run.log), `takt build`,
// a ControlClient per test thread and JSON parsing of the replies.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/net.h"
#include "support/paths.h"
#include "support/process.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "takt/agent/control_client.h"

namespace takt::agent::live {

namespace fs = std::filesystem;

using test::readText;
using test::TempDir;

inline std::vector<std::uint8_t> readBytes(const fs::path& p) {
    const std::string s = readText(p);
    return {s.begin(), s.end()};
}

// Runs a shell command; its exit status.
inline int shell(const std::string& cmd) {
    return test::runShell(cmd).exitCode;
}

// A test CA (ca.pem, ca.key) and a server certificate for 127.0.0.1 signed by it (server.pem,
// server.key) in `dir`, made with openssl; openssl's output in dir/openssl.log.
inline bool writeServerCertificate(const TempDir& dir) {
    const std::string key = "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
    dir.write("server.ext", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
    return shell("cd " + dir.path().string() + " && (" + key +
                 "-x509 -keyout ca.key -out ca.pem -days 1 -subj /CN=takt-test-ca && " + key +
                 "-keyout server.key -out server.csr -subj /CN=takt-test-server && openssl x509 -req "
                 "-in server.csr -out server.pem -extfile server.ext -CA ca.pem -CAkey ca.key "
                 "-CAcreateserial -days 1 && chmod 600 *.key) > openssl.log 2>&1") == 0;
}

// `takt build --project dir`; the program.stbc bytes (empty on failure).
inline std::vector<std::uint8_t> build(const fs::path& dir) {
    const int rc = shell(std::string(TAKT_BINARY) + " build --project " + dir.string() + " > " +
                         (dir / "build.log").string() + " 2>&1");
    EXPECT_EQ(rc, 0) << readText(dir / "build.log");
    return rc == 0 ? readBytes(dir / "program.stbc") : std::vector<std::uint8_t>{};
}

// `argv` run through setpriv (util-linux) so that the kernel sends the program SIGTERM when the
// thread that started it ends (PR_SET_PDEATHSIG): with the test process, since every test starts
// its runtime on the test's own thread.
inline std::vector<std::string> endsWithParent(std::vector<std::string> argv) {
    argv.insert(argv.begin(), {"/usr/bin/setpriv", "--pdeathsig", "TERM", "--"});
    return argv;
}

// `takt run --project dir` as a child with stdout and stderr in dir/run.log; SIGTERM (then
// SIGKILL) when stopped or destroyed, and not before, however long the test takes on a loaded
// machine: a fixed lifetime (it was `--for 60s`) stopped takt in the middle of a long test (200
// native reloads at 0.3 s each), which then failed with "no reply". A takt whose test process
// dies first gets SIGTERM from the kernel (setpriv --pdeathsig), so none outlives its test.
class Runtime : public test::Process {
public:
    explicit Runtime(const fs::path& dir)
        : Process(endsWithParent(test::taktArgv({"run", "--project", dir.string()})), {.log = dir / "run.log"}) {}

    // SIGTERM; the exit code (SIGKILL after 5 s: -1).
    int stop() { return terminate(std::chrono::seconds(5)); }

    // For a failure message: "" while takt runs; else that it exited and the last lines of its log.
    std::string exitNote() {
        if (running()) {
            return "";
        }
        const std::string text = log();
        std::size_t from = text.size();
        for (int lines = 0; lines < 4 && from > 0; ++lines) {
            from = text.rfind('\n', from - 2);
            from = from == std::string::npos ? 0 : from + 1;
        }
        return "; takt has exited, its log ends:\n" + text.substr(from);
    }
};

inline rapidjson::Document parse(const std::string& json) {
    rapidjson::Document d;
    d.Parse(json.c_str());
    EXPECT_FALSE(d.HasParseError()) << json;
    return d;
}

inline ControlClientOptions clientOptions(const std::string& endpoint, const std::string& token = {}) {
    ControlClientOptions o;
    o.endpoint = endpoint;
    o.token = token;
    o.timeoutMs = 10000;
    return o;
}

// Waits (hang guard 20 s) until the endpoint answers agent.ping; false if the runtime exited or
// never answered.
inline bool waitServing(Runtime& rt, const ControlClientOptions& options) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    ControlClientOptions o = options;
    o.token.clear();
    o.timeoutMs = 2000;
    while (std::chrono::steady_clock::now() < end) {
        if (controlCall(o, "agent.ping", "").reached) {
            return true;
        }
        if (rt.waitForExit(std::chrono::milliseconds(0))) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

// Connects (and logs in); fails the test when it cannot.
inline std::unique_ptr<ControlClient> connected(const ControlClientOptions& options) {
    auto c = std::make_unique<ControlClient>(options);
    const ControlReply r = c->connect();
    EXPECT_TRUE(r.reached && r.ok) << r.message << " " << r.json;
    return c;
}

// A call whose result is returned parsed; fails the test on an error reply.
inline rapidjson::Document result(ControlClient& c, std::string_view method, std::string_view params) {
    const ControlReply r = c.call(method, params);
    EXPECT_TRUE(r.reached && r.ok) << method << ": " << r.code << " " << r.message << " " << r.json;
    return parse(r.ok ? r.json : std::string("{}"));
}

// Number of open file descriptors of a process.
inline std::size_t fdCount(pid_t pid) {
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
         !ec && it != fs::directory_iterator(); it.increment(ec)) {
        ++n;
    }
    return n;
}

// Percentile (0..1) of a sample, by nearest rank.
inline double percentile(std::vector<double> v, double q) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(std::lround(q * static_cast<double>(v.size() - 1)));
    return v[std::min(i, v.size() - 1)];
}

} // namespace takt::agent::live
