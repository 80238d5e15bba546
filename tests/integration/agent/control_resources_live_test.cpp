// What the control endpoint of a real `takt run` costs over time: memory that must stay flat
// however many requests one connection makes (a leak of a few hundred bytes a request fills a
// small PLC in days), and memory handed back once a flood has passed.
//
// RSS is read from /proc/PID/status. The test build runs under AddressSanitizer, whose
// quarantine keeps freed blocks resident for a while and would grow RSS by itself; the child
// runs with the quarantine off so that only memory the runtime really keeps shows up.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "rpc/rpc_json.h"
#include "support/control_live_support.h"
#include "support/control_test_support.h"

namespace takt::agent::live {
namespace {

constexpr const char* kProgram = "PROGRAM Main\nVAR n : UDINT; END_VAR\nn := n + 1;\nEND_PROGRAM\n";

// A project whose runtime serves a Unix socket without tokens (its peers are admin).
std::string writeUnixProject(const TempDir& dir) {
    std::string endpoint = "unix://" + (dir.path() / "ctl.sock").string();
    dir.write("runtime.toml", fmt::format("[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\n"
                                          "cycle_interval_ms = 10\n\n[runtime.control]\nendpoint = \"{}\"\n",
                                          endpoint));
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("src/main.st", kProgram);
    return endpoint;
}

// `takt run` with ASan's quarantine off and freed memory handed back to the system at once (no
// effect on a build without ASan).
test::Process startRuntime(const fs::path& dir) {
    const char* inherited = std::getenv("ASAN_OPTIONS");
    std::string asan = inherited != nullptr ? std::string(inherited) + ":" : std::string();
    asan += "quarantine_size_mb=0:thread_local_quarantine_size_kb=0:allocator_release_to_os_interval_ms=0";
    return test::Process(test::taktArgv({"run", "--project", dir.string(), "--for", "300s"}),
                         {.env = {"ASAN_OPTIONS=" + asan}, .log = dir / "run.log"});
}

// Resident set size of a process in KiB (VmRSS); 0 when unreadable.
long rssKiB(pid_t pid) {
    const std::string status = readText("/proc/" + std::to_string(pid) + "/status");
    const std::size_t at = status.find("VmRSS:");
    return at == std::string::npos ? 0 : std::strtol(status.c_str() + at + 6, nullptr, 10);
}

// Sends `count` agent.ping requests in windows of `window` and reads every reply; false (with a
// test failure) when a reply is missing.
bool pingMany(test::LineClient& c, int count, int window = 200) {
    std::string batch;
    std::string line;
    for (int sent = 0; sent < count; sent += window) {
        const int n = std::min(window, count - sent);
        batch.clear();
        for (int i = 0; i < n; ++i) {
            batch += fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"agent.ping"}})", sent + i);
            batch += '\n';
        }
        if (!c.send(batch)) {
            ADD_FAILURE() << "send failed after " << sent << " requests";
            return false;
        }
        for (int i = 0; i < n; ++i) {
            if (c.read(line, 20000) != test::LineClient::Read::Line) {
                ADD_FAILURE() << "no reply to request " << sent + i;
                return false;
            }
        }
    }
    return true;
}

// The reused document of a session must not keep the values of every line it ever parsed.
TEST(ControlResources, ReusedParsedLineDoesNotGrowItsPool) {
    rpc::ParsedLine parsed;
    const std::string line = R"({"jsonrpc":"2.0","id":12345,"method":"runtime.status","params":{"a":[1,2,3]}})";
    rpc::parseLine(line, 64, parsed);
    ASSERT_EQ(parsed.status, rpc::ParsedLine::Status::Ok);
    const std::size_t once = parsed.doc.GetAllocator().Size();
    for (int i = 0; i < 10000; ++i) {
        rpc::parseLine(line, 64, parsed);
    }
    ASSERT_EQ(parsed.status, rpc::ParsedLine::Status::Ok);
    EXPECT_EQ(parsed.doc["id"].GetInt(), 12345);
    EXPECT_EQ(parsed.doc.GetAllocator().Size(), once);
}

// 100,000 requests on one connection: after a warm-up of 10,000 the runtime's RSS stays flat.
// A leak of 145 bytes a request (the bug this guards) grows it by about 13 MB over the 90,000.
TEST(ControlResourcesLive, HundredThousandRequestsOnOneConnectionKeepRssFlat) {
    TempDir project;
    const std::string endpoint = writeUnixProject(project);
    test::Process rt = startRuntime(project.path());
    ASSERT_TRUE(rt.started());
    ASSERT_TRUE(rt.waitFor([&] { return test::LineClient(endpoint).connected(); })) << rt.log();
    test::LineClient c(endpoint);
    ASSERT_TRUE(c.connected());

    ASSERT_TRUE(pingMany(c, 10000));
    const long warm = rssKiB(rt.pid());
    ASSERT_GT(warm, 0);
    ASSERT_TRUE(pingMany(c, 90000));
    const long after = rssKiB(rt.pid());
    std::printf("[ figures ] takt run RSS: %ld KiB after 10,000 requests, %ld KiB after 100,000\n", warm, after);
    EXPECT_LT(after - warm, 3 * 1024) << "RSS grew from " << warm << " KiB to " << after << " KiB";
    EXPECT_TRUE(rt.running()) << rt.log();
}

// A flood at the maximum rate: eight connections (the cap) each send two lines of 800 KiB and
// then 20,000 requests in pipelined windows, and hang up. Once they are gone, the runtime's RSS
// returns near where it was: what a connection holds (line buffer, parsed document, reply queue)
// goes with it. Under ASan this checks the release only; glibc keeping freed pages in its arena
// (the runtime gives them back with malloc_trim) does not show here, and is measured on a build
// without sanitizers (docs/control.md, bench/notes/control.md).
TEST(ControlResourcesLive, RssReturnsNearBaselineAfterAFlood) {
    TempDir project;
    const std::string endpoint = writeUnixProject(project);
    test::Process rt = startRuntime(project.path());
    ASSERT_TRUE(rt.started());
    ASSERT_TRUE(rt.waitFor([&] { return test::LineClient(endpoint).connected(); })) << rt.log();
    {
        test::LineClient warm(endpoint);
        ASSERT_TRUE(pingMany(warm, 2000));
    }
    const std::size_t fdsBefore = fdCount(rt.pid());
    const long baseline = rssKiB(rt.pid());

    const std::string big =
        R"({"jsonrpc":"2.0","id":0,"method":"agent.ping","params":{"pad":")" + std::string(800 * 1024, 'x') + "\"}}\n";
    std::vector<std::thread> flooders;
    long peak = 0;
    for (int k = 0; k < 8; ++k) {
        flooders.emplace_back([&] {
            test::LineClient c(endpoint);
            std::string reply;
            if (c.connected() && c.send(big) && c.send(big) && c.read(reply, 20000) == test::LineClient::Read::Line &&
                c.read(reply, 20000) == test::LineClient::Read::Line) {
                (void)pingMany(c, 20000);
            }
        });
    }
    for (std::thread& t : flooders) {
        t.join();
    }
    peak = rssKiB(rt.pid());
    const std::size_t fdsFlood = fdCount(rt.pid());
    // Hang guard: the runtime closes the connections once it sees them gone.
    EXPECT_TRUE(rt.waitFor([&] { return fdCount(rt.pid()) <= fdsBefore; }, std::chrono::seconds(30)));
    long after = 0;
    (void)rt.waitFor(
        [&] {
            after = rssKiB(rt.pid());
            return after - baseline < 8 * 1024;
        },
        std::chrono::seconds(10));
    std::printf("[ figures ] takt run RSS: %ld KiB before the flood, %ld KiB at its end, %ld KiB after; "
                "descriptors %zu before, %zu at the end, %zu after\n",
                baseline, peak, after, fdsBefore, fdsFlood, fdCount(rt.pid()));
    EXPECT_LT(after - baseline, 8 * 1024) << "RSS " << baseline << " KiB before the flood, " << after << " KiB after";
    EXPECT_TRUE(rt.running()) << rt.log();
}

} // namespace
} // namespace takt::agent::live
