// The control endpoint's audit log stays bounded under a flood: repeated rejections are summed
// up instead of written one by one, the file is rotated by size with a fixed number kept, and
// every file of it is owner-only.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/control_test_support.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "takt/agent/control.h"

namespace takt::agent {
namespace {

using test::LineClient;
using test::readText;
using test::request;

const std::string kViewer = "viewer-0123456789abcdef";

struct Server {
    explicit Server(ControlOptions o) : server(std::move(o), target) {}
    test::RecordingTarget target;
    ControlServer server;
};

std::unique_ptr<Server> start(const ControlOptions& o) {
    auto s = std::make_unique<Server>(o);
    std::string error;
    EXPECT_TRUE(s->server.start(error)) << error;
    return s;
}

ControlOptions auditedTcp(const std::filesystem::path& log) {
    ControlOptions o;
    o.endpoint = "tcp://127.0.0.1:0";
    o.tokens = {{Role::Viewer, kViewer}};
    o.auditLog = log.string();
    return o;
}

// Requests the lines of an audit log stand for: 1 each, N for "... repeated N times".
long requestsLogged(const std::string& log) {
    long total = 0;
    std::size_t at = 0;
    while (at < log.size()) {
        const std::size_t nl = log.find('\n', at);
        const std::string line = log.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        at = nl == std::string::npos ? log.size() : nl + 1;
        const std::size_t rep = line.find(" repeated ");
        total += rep == std::string::npos ? 1 : std::strtol(line.c_str() + rep + 10, nullptr, 10);
    }
    return total;
}

// Sends `n` copies of `line` in one go and reads the n replies.
void flood(LineClient& c, const std::string& line, int n) {
    std::string burst;
    for (int i = 0; i < n; ++i) {
        burst += line + "\n";
    }
    ASSERT_TRUE(c.send(burst));
    std::string reply;
    for (int i = 0; i < n; ++i) {
        ASSERT_EQ(c.read(reply), LineClient::Read::Line) << "reply " << i;
    }
}

// 3,000 unauthorized requests (most of them also over the rate limit): a handful of lines,
// which still account for every request.
TEST(ControlAudit, RepeatedRejectionsAreSummedUp) {
    test::TempDir dir;
    const ControlOptions o = auditedTcp(dir.path() / "audit.log");
    auto s = start(o);
    LineClient c(s->server.boundEndpoint());
    ASSERT_TRUE(c.connected());
    const auto began = std::chrono::steady_clock::now();
    flood(c, request(1, "var.write", R"({"name":"x","value":1})"), 3000);
    // The summary of a window is written once the window (1 s) has passed.
    const bool summed = test::waitUntil([&] { return requestsLogged(readText(o.auditLog)) == 3000; },
                                        std::chrono::seconds(20), std::chrono::milliseconds(50));
    const std::string log = readText(o.auditLog);
    EXPECT_TRUE(summed) << log;
    // Two kinds (unauthorized, then rate limited), each at most one line and one summary per
    // second: a bound that follows the flood's length (a loaded machine takes longer), far
    // below the 3,000 lines of one per request.
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - began);
    EXPECT_LE(std::count(log.begin(), log.end(), '\n'), 4 * (seconds.count() + 2)) << log;
    EXPECT_NE(log.find("method=var.write error=-32010\n"), std::string::npos) << log;
    EXPECT_NE(log.find("method=var.write error=-32010 repeated "), std::string::npos) << log;
    // A different request is written at once (the rate limit has refilled during the wait).
    ASSERT_EQ(test::errorCode(c.call(request(2, "no.such"))), -32601);
    EXPECT_NE(readText(o.auditLog).find("method=no.such error=-32601\n"), std::string::npos);
    s.reset();
    EXPECT_EQ(requestsLogged(readText(o.auditLog)), 3001) << readText(o.auditLog);
}

// Rotation: at most audit_keep older files of at most the size limit each, all mode 0600, and
// the newest request in the current file.
TEST(ControlAudit, RotatesBySizeAndKeepsAFixedNumberOfFiles) {
    test::TempDir dir;
    const std::filesystem::path log = dir.path() / "audit.log";
    ControlOptions o = auditedTcp(log);
    o.auditMaxBytes = 4096;
    o.auditKeep = 2;
    o.maxRequestsPerSecond = 100000;
    auto s = start(o);
    LineClient c(s->server.boundEndpoint());
    ASSERT_TRUE(c.connected());
    flood(c, request(1, "agent.ping"), 500); // ~45 KB of lines
    ASSERT_EQ(test::errorCode(c.call(request(2, "agent.describe"))), 0);
    s.reset();
    for (const char* name : {"audit.log", "audit.log.1", "audit.log.2"}) {
        struct stat st {};
        ASSERT_EQ(::stat((dir.path() / name).c_str(), &st), 0) << name;
        EXPECT_LE(st.st_size, 4096) << name;
        EXPECT_GT(st.st_size, 0) << name;
        EXPECT_EQ(st.st_mode & 0777, 0600U) << name;
    }
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "audit.log.3"));
    const std::string current = readText(log);
    EXPECT_NE(current.find("method=agent.describe ok\n"), std::string::npos) << current;
}

// An audit log left readable by others (by hand, or by an older takt) is made owner-only.
TEST(ControlAudit, AnExistingLogIsMadeOwnerOnly) {
    test::TempDir dir;
    const std::filesystem::path log = dir.write("audit.log", "2026-01-01T00:00:00.000Z earlier line\n", 0644);
    auto s = start(auditedTcp(log));
    LineClient c(s->server.boundEndpoint());
    ASSERT_TRUE(test::isResult(c.call(request(1, "agent.ping"))));
    s.reset();
    struct stat st {};
    ASSERT_EQ(::stat(log.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600U);
    EXPECT_TRUE(readText(log).starts_with("2026-01-01T00:00:00.000Z earlier line\n"));
}

} // namespace
} // namespace takt::agent
