// The demo project (examples/demo: the filling line on the simulated plant, 10 ms base cycle)
// under online change: 200 alternating reloads of two versions through the control endpoint of
// a real `takt run` while four clients poll status. Both versions carry a RETAIN cycle counter
// on the 10 ms task; it must count exactly one per cycle across every swap, and the plant's
// sequence keeps running.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/control_live_support.h"
#include "support/paths.h"
#include "takt/agent/control.h"

namespace takt::agent::live {
namespace {

// A copy of the demo with a cycle counter program on FastTask; `marker` adds a variable only the
// second version has.
void writeDemo(const TempDir& dir, bool marker, const std::string& control) {
    const fs::path demo = fs::path(TAKT_SOURCE_DIR) / "examples" / "demo";
    for (const auto& entry : fs::directory_iterator(demo / "src")) {
        std::string text = readText(entry.path());
        if (entry.path().filename() == "configuration.st") {
            const std::string line = "PROGRAM Alarms WITH SlowTask : AlarmHandler;";
            const std::size_t at = text.find(line);
            EXPECT_NE(at, std::string::npos) << "examples/demo/src/configuration.st changed";
            if (at != std::string::npos) {
                text.insert(at + line.size(), "\n        PROGRAM Counter WITH FastTask : CycleCounter;");
            }
        }
        dir.write("src/" + entry.path().filename().string(), text);
    }
    dir.write("src/cycle_counter.st", "PROGRAM CycleCounter\nVAR RETAIN n : UDINT; END_VAR\n" +
                                          std::string(marker ? "VAR marker : INT := 2; END_VAR\n" : "") +
                                          "n := n + 1;\nEND_PROGRAM\n");
    std::string runtime = readText(demo / "runtime.toml");
    const std::size_t at = runtime.find("[runtime.control]");
    const std::size_t end = runtime.find("\n\n", at);
    EXPECT_NE(at, std::string::npos);
    runtime.replace(at, end - at, control.empty() ? std::string("# no control endpoint") : control);
    dir.write("runtime.toml", runtime);
    dir.write("io.toml", readText(demo / "io.toml"));
}

std::int64_t fastTaskCycles(ControlClient& c) {
    const rapidjson::Document stats = result(c, "runtime.stats", "");
    for (const auto& task : stats["tasks"].GetArray()) {
        if (std::string(task["name"].GetString()) == "FastTask") {
            return task["cycles"].GetInt64();
        }
    }
    ADD_FAILURE() << "no FastTask in runtime.stats";
    return -1;
}

TEST(ControlDemoLive, TwoHundredReloadsOfTheDemoKeepEveryCycle) {
    TempDir project, v1, v2;
    const std::string endpoint = "unix://" + (project.path() / "takt.sock").string();
    writeDemo(project, false, fmt::format("[runtime.control]\nendpoint = \"{}\"", endpoint));
    writeDemo(v1, false, "");
    writeDemo(v2, true, "");
    const std::string params[2] = {bytecodeReloadParams(build(v1.path())), bytecodeReloadParams(build(v2.path()))};

    Runtime rt(project.path());
    const ControlClientOptions options = clientOptions(endpoint);
    ASSERT_TRUE(waitServing(rt, options)) << rt.log();

    std::atomic<int> polls{0}, pollErrors{0};
    // Stopped and joined when the test returns, also through a failed ASSERT (a joinable
    // std::thread destroyed would abort the whole test binary).
    std::vector<std::jthread> pollers;
    for (int i = 0; i < 4; ++i) {
        pollers.emplace_back([&](const std::stop_token& done) {
            ControlClient c(options);
            if (!c.connect().ok) {
                ++pollErrors;
                return;
            }
            while (!done.stop_requested()) {
                const ControlReply r = c.call("runtime.status", "");
                if (r.ok) {
                    ++polls;
                } else if (r.code != kRateLimited) {
                    ++pollErrors;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        });
    }

    auto c = connected(options);
    for (int i = 0; i < 200; ++i) {
        const bool second = i % 2 == 0;
        const ControlReply r = c->call("bytecode.reload", params[second ? 1 : 0]);
        ASSERT_TRUE(r.ok) << "reload " << i << ": " << r.code << " " << r.message << rt.exitNote();
        // FastTask runs on a thread of its own: its counter is between FastTask's cycles before
        // and after the read (one body may be running), whatever the base cycle did.
        const std::int64_t before = fastTaskCycles(*c);
        const ControlReply read = c->call("var.read", R"({"names":["Counter.n"]})");
        ASSERT_TRUE(read.ok) << read.message;
        const std::int64_t after = fastTaskCycles(*c);
        const rapidjson::Document d = parse(read.json);
        const std::int64_t n = d["values"]["Counter.n"]["value"].GetInt64();
        EXPECT_GE(n, before) << "reload " << i << ": the counter lost a cycle";
        EXPECT_LE(n, after + 1) << "reload " << i << ": the counter doubled a cycle";
        const ControlReply marker = c->call("var.read", R"({"names":["Counter.marker"]})");
        EXPECT_EQ(marker.ok, second) << "reload " << i << ": the other version is running";
    }
    pollers.clear();
    EXPECT_EQ(pollErrors.load(), 0);
    EXPECT_GT(polls.load(), 0);
    const rapidjson::Document status = result(*c, "runtime.status", "");
    EXPECT_STREQ(status["state"].GetString(), "running") << rt.log();
    EXPECT_EQ(status["faults"].GetInt64(), 0);
    EXPECT_EQ(status["reloads"].GetInt64(), 200);
    const rapidjson::Document stats = result(*c, "runtime.stats", "");
    // (Whether a park skipped a release is checked under SCHED_FIFO in TaskThreads; the demo runs
    // under the normal scheduler, where a loaded machine skips releases by itself.)
    for (const auto& task : stats["tasks"].GetArray()) {
        EXPECT_TRUE(task["thread"].GetBool()) << task["name"].GetString();
    }
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

} // namespace
} // namespace takt::agent::live
