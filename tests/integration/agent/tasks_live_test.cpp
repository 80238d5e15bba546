// Tasks that preempt, through the real `takt run` and its control endpoint: a CONFIGURATION with
// a 2 ms task and a 50 ms task whose body is made to take well over 10 ms, under SCHED_FIFO. The
// fast task keeps its releases and its lateness is measured alone and beside the busy slow task
// (the figures of docs/performance.md), on the interpreter and on the native tier.
#include <cstdio>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "takt/native/native.h"

#include "support/control_live_support.h"
#include "support/net.h"

namespace takt::agent::live {
namespace {

// `loops` iterations of a square root sum make the slow task's body long.
std::string program(int loops) {
    return fmt::format(R"(PROGRAM Fast
VAR
    n : UDINT;
END_VAR
n := n + 1;
END_PROGRAM

PROGRAM Slow
VAR
    i : DINT;
    x : LREAL;
    k : UDINT;
END_VAR
x := 0.0;
FOR i := 1 TO {} DO
    x := x + SQRT(DINT_TO_LREAL(i));
END_FOR;
k := k + 1;
END_PROGRAM

CONFIGURATION Cell
    RESOURCE R ON PLC
        TASK FastT (INTERVAL := T#2ms, PRIORITY := 0);
        TASK SlowT (INTERVAL := T#50ms, PRIORITY := 5);
        PROGRAM F WITH FastT : Fast;
        PROGRAM S WITH SlowT : Slow;
    END_RESOURCE
END_CONFIGURATION
)",
                       loops);
}

struct TaskFigures {
    bool thread = false;
    std::int64_t cycles = 0;
    std::int64_t missed = 0;
    double lateP50 = 0, lateP99 = 0, execP50 = 0;
};

TaskFigures taskFigures(const rapidjson::Document& stats, std::size_t t) {
    TaskFigures f;
    const auto& task = stats["tasks"][static_cast<rapidjson::SizeType>(t)];
    f.thread = task["thread"].GetBool();
    f.cycles = task["cycles"].GetInt64();
    f.missed = task["missed_releases"].GetInt64();
    f.lateP50 = task["lateness"]["p50_us"].GetDouble();
    f.lateP99 = task["lateness"]["p99_us"].GetDouble();
    f.execP50 = task["exec"]["p50_us"].GetDouble();
    return f;
}

struct Run {
    TaskFigures fast, slow;
    double seconds = 0;
    std::int64_t fastCycles = 0; // in the measured window
    bool fifoRefused = false;
    std::string metrics; // GET /metrics at the end
};

// Runs the program for about 2 s after a warm-up; the stats at the end.
Run runFor(int loops, const std::string& execution) {
    Run out;
    TempDir project;
    const std::uint16_t port = test::freeTcpPort();
    const std::string endpoint = "unix://" + (project.path() / "ctl.sock").string();
    project.write("runtime.toml",
                  fmt::format("[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\ncycle_interval_ms = 10\n\n"
                              // "wait": the loop count is sized for the native tier; a first
                              // second on the interpreter would overrun the slow task.
                              "[runtime]\nexecution = \"{}\"\nnative_start = \"wait\"\n\n"
                              "[runtime.control]\nendpoint = \"{}\"\n\n"
                              "[runtime.realtime]\nscheduler = \"fifo\"\npriority = 60\n\n"
                              "[runtime.watchdog]\nenabled = true\ntimeout_ms = 2000\n\n"
                              "[runtime.web]\nlisten = \"127.0.0.1:{}\"\n",
                              execution, endpoint, port));
    project.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    project.write("src/main.st", program(loops));
    Runtime rt(project.path());
    const ControlClientOptions options = clientOptions(endpoint);
    EXPECT_TRUE(waitServing(rt, options)) << rt.log();
    auto c = connected(options);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const rapidjson::Document before = result(*c, "runtime.stats", "");
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    const rapidjson::Document after = result(*c, "runtime.stats", "");
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.fast = taskFigures(after, 0);
    out.slow = taskFigures(after, 1);
    out.fastCycles = out.fast.cycles - taskFigures(before, 0).cycles;
    httplib::Client http("127.0.0.1", port);
    if (const httplib::Result r = http.Get("/metrics")) {
        out.metrics = r->body;
    }
    rt.stop();
    out.fifoRefused = rt.log().find("SCHED_FIFO") != std::string::npos;
    return out;
}

void fastTaskBesideBusySlowTask(const std::string& execution) {
    const Run alone = runFor(1, execution);
    // About 30 ms of body on either tier: the native tier's code runs the loop ≈ 25× faster.
    const Run busy = runFor(execution == "native" ? 10'000'000 : 400'000, execution);
    if (alone.fifoRefused || busy.fifoRefused) {
        GTEST_SKIP() << "sched_setscheduler(SCHED_FIFO) refused: the test needs root or CAP_SYS_NICE";
    }
    EXPECT_TRUE(busy.fast.thread);
    EXPECT_TRUE(busy.slow.thread);
    EXPECT_GE(busy.slow.execP50, 10'000.0) << "the slow body must take 10 ms or more to prove anything";
    // /metrics has the same per-task figures, labelled with the task's name.
    for (const char* series :
         {"takt_task_cycles_total{task=\"FastT\"}", "takt_task_cycles_total{task=\"SlowT\"}",
          "takt_task_overruns_total{task=\"SlowT\"}", "takt_task_lateness_seconds_bucket{task=\"FastT\",le=\"+Inf\"}",
          "takt_task_exec_seconds_count{task=\"SlowT\"}"}) {
        EXPECT_NE(busy.metrics.find(series), std::string::npos) << series << " in\n" << busy.metrics;
    }
    const double releases = busy.seconds / 0.002;
    EXPECT_GE(static_cast<double>(busy.fastCycles), 0.95 * releases)
        << busy.fastCycles << " cycles of the 2 ms task for " << releases << " releases";
    std::printf("[ figures ] %s: fast task lateness alone p50 %.1f us p99 %.1f us; beside a %.1f ms slow body p50 "
                "%.1f us p99 %.1f us (p99 ratio %.2f); fast cycles %lld for %.0f releases; missed %lld\n",
                execution.c_str(), alone.fast.lateP50, alone.fast.lateP99, busy.slow.execP50 / 1000.0,
                busy.fast.lateP50, busy.fast.lateP99, busy.fast.lateP99 / std::max(alone.fast.lateP99, 0.001),
                static_cast<long long>(busy.fastCycles), releases, static_cast<long long>(busy.fast.missed));
}

TEST(TasksLive, FastTaskKeepsItsReleasesBesideABusySlowTask) {
    fastTaskBesideBusySlowTask("interpreter");
}

TEST(TasksLive, NativeTierFastTaskKeepsItsReleasesBesideABusySlowTask) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    fastTaskBesideBusySlowTask("native");
}

} // namespace
} // namespace takt::agent::live
