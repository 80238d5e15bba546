// [runtime] native_start = "background": a native program starts on the interpreter at once,
// its code compiled on a thread of its own, and switches at a cycle boundary once the code is
// ready; a compile of a program that is replaced or freed is cancelled, not waited for. The
// compile is held in these tests (NativeJob::setBeforeCompileForTests), so the interpreter phase
// is seen whatever the machine's speed. Every test name holds "NativeTier" (ctest label `native`).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../../../runtime/engine/src/native_job.h"
#include "../engine/scan_test_support.h"
#include "support/compile_text.h"
#include "support/image_state.h"
#include "takt/engine/engine.h"
#include "takt/engine/program.h"
#include "takt/engine/scan_loop.h"
#include "takt/engine/vm_runner.h"
#include "takt/native/native.h"

namespace takt::engine {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCounter = R"(
FUNCTION_BLOCK Acc
VAR_INPUT step : DINT; END_VAR
VAR_OUTPUT total : DINT; END_VAR
total := total + step;
END_FUNCTION_BLOCK
PROGRAM p
VAR n : DINT; a : Acc; k : INT; sum : DINT; END_VAR
VAR_TEMP t : DINT; END_VAR
n := n + 1;
FOR k := 1 TO 5 DO a(step := k * n); END_FOR;
t := n * 3;
sum := sum + t;
END_PROGRAM
)"; // no CONFIGURATION: p runs every cycle

// Holds every background compile before it begins until released, or until the compile is
// cancelled; counts the compiles that reached it and those that left cancelled.
class CompileGate {
public:
    CompileGate() {
        NativeJob::setBeforeCompileForTests([this](const std::atomic<bool>& cancel) { hold(cancel); });
    }
    // Lets every held compile go and waits until none is inside the gate any more.
    ~CompileGate() {
        NativeJob::setBeforeCompileForTests({});
        release();
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait_for(lock, std::chrono::seconds(60), [&] { return holding_ == 0; });
    }
    CompileGate(const CompileGate&) = delete;
    CompileGate& operator=(const CompileGate&) = delete;

    void release() {
        const std::lock_guard<std::mutex> lock(mutex_);
        open_ = true;
        changed_.notify_all();
    }
    // Waits until `n` compiles reached the gate (bounded).
    bool reached(int n) {
        std::unique_lock<std::mutex> lock(mutex_);
        return changed_.wait_for(lock, std::chrono::seconds(30), [&] { return arrived_ >= n; });
    }
    [[nodiscard]] int arrived() {
        const std::lock_guard<std::mutex> lock(mutex_);
        return arrived_;
    }
    [[nodiscard]] int leftCancelled() {
        const std::lock_guard<std::mutex> lock(mutex_);
        return cancelled_;
    }

private:
    void hold(const std::atomic<bool>& cancel) {
        std::unique_lock<std::mutex> lock(mutex_);
        ++arrived_;
        ++holding_;
        changed_.notify_all();
        // The cancel flag is set without the gate's lock: polled, bounded by the test's own end.
        for (int i = 0; i < 6000 && !open_ && !cancel.load(); ++i) {
            changed_.wait_for(lock, std::chrono::milliseconds(10));
        }
        if (cancel.load()) {
            ++cancelled_;
        }
        --holding_;
        changed_.notify_all();
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    bool open_ = false;
    int arrived_ = 0;
    int holding_ = 0;
    int cancelled_ = 0;
};

// What the listener was told.
struct Told {
    std::mutex mutex;
    std::vector<std::string> statuses;
    std::vector<double> ms;

    VmRunner::CompileListener listener() {
        return [this](const std::string& status, double compileMs) {
            const std::lock_guard<std::mutex> lock(mutex);
            statuses.push_back(status);
            ms.push_back(compileMs);
        };
    }
    std::vector<std::string> snapshot() {
        const std::lock_guard<std::mutex> lock(mutex);
        return statuses;
    }
};

bool waitUntil(const std::function<bool()>& ready) {
    for (int i = 0; i < 3000; ++i) { // 30 s: a compile under the sanitizers on a loaded machine
        if (ready()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return ready();
}

// Every test needs the tier and most run kCounter.
class NativeTierBackground : public ::testing::Test {
protected:
    void SetUp() override {
        if (!native::available()) {
            GTEST_SKIP() << "takt built without the native tier";
        }
        compiled = takt::test::compileText(kCounter);
        ASSERT_TRUE(compiled.program.ok()) << compiled.rendered() << compiled.program.failure;
    }

    takt::test::CompiledText compiled;
};

TEST_F(NativeTierBackground, StartsOnTheInterpreterAndSwitchesAtACycleBoundaryWithTheSameImage) {
    CompileGate gate;
    Told told;
    CycleClock clock;
    auto runner = std::make_unique<VmRunner>(0, Execution::Native, NativeStart::Background);
    VmRunner& base = *runner;
    base.setCompileListener(told.listener());
    Engine engine(std::move(runner), clock);
    FaultReport report;
    ASSERT_TRUE(engine.load(std::make_unique<LoadedProgram>(compiled.program.module, ""), report)) << report.message;
    // The interpreter twin, cycle for cycle.
    CycleClock twinClock;
    Engine twin(std::make_unique<VmRunner>(0, Execution::Interpreter), twinClock);
    ASSERT_TRUE(twin.load(std::make_unique<LoadedProgram>(compiled.program.module, ""), report)) << report.message;

    ASSERT_TRUE(gate.reached(1));
    EXPECT_EQ(base.executionStatus(), "interpreter (native compiling)");
    for (int c = 0; c < 20; ++c) {
        ASSERT_TRUE(engine.runCycle(report)) << report.message;
        ASSERT_TRUE(twin.runCycle(report)) << report.message;
    }
    EXPECT_EQ(base.runsBeforeNativeCode(), 20U) << "every cycle ran on the interpreter";
    EXPECT_EQ(base.executionStatus(), "interpreter (native compiling)") << "cycles ran while the compile was held";
    EXPECT_EQ(takt::test::stateOf(engine.program()), takt::test::stateOf(twin.program()));
    EXPECT_EQ(base.nativeCompileMs(), 0.0);

    gate.release();
    ASSERT_TRUE(waitUntil([&] { return told.snapshot().size() == 1; }));
    EXPECT_EQ(told.snapshot().front(), "native");
    EXPECT_GT(base.nativeCompileMs(), 0.0);
    // Ready, but a cycle boundary has not come yet: the program still runs on the interpreter.
    EXPECT_EQ(base.executionStatus(), "interpreter (native compiling)");
    for (int c = 0; c < 20; ++c) {
        ASSERT_TRUE(engine.runCycle(report)) << report.message;
        ASSERT_TRUE(twin.runCycle(report)) << report.message;
        EXPECT_EQ(base.executionStatus(), "native") << "cycle " << c;
    }
    EXPECT_EQ(base.runsBeforeNativeCode(), 20U) << "every cycle after the switch ran the native code";
    EXPECT_EQ(takt::test::stateOf(engine.program()), takt::test::stateOf(twin.program()));
    EXPECT_EQ(gate.arrived(), 1) << "one compile for the program";
}

TEST_F(NativeTierBackground, WaitCompilesBeforeTheFirstCycleAndStartsNoThread) {
    CompileGate gate; // never reached: a waiting compile runs on the caller's thread
    LoadedProgram program(compiled.program.module, "");
    VmRunner runner(0, Execution::Native, NativeStart::Wait);
    runner.attach(program);
    EXPECT_EQ(runner.executionStatus(), "native");
    EXPECT_GT(runner.nativeCompileMs(), 0.0);
    EXPECT_EQ(gate.arrived(), 0);
}

// An online change while the start-up compile is still held: the change's program is compiled
// before the swap (it runs native from its first cycle), and the swap cancels the start-up
// compile, which is never reported.
TEST_F(NativeTierBackground, AChangeDuringTheStartUpCompileRunsNativeAtOnceAndCancelsIt) {
    Told told;
    CompileGate gate;
    auto first = std::make_unique<LoadedProgram>(compiled.program.module, "");
    auto second = std::make_unique<LoadedProgram>(compiled.program.module, "");
    auto runner = std::make_unique<VmRunner>(0, Execution::Native, NativeStart::Background);
    runner->setCompileListener(told.listener());
    runner->attach(*first);
    ASSERT_TRUE(gate.reached(1));
    runner->prepare(*second); // the change, on this thread: not through the gate
    EXPECT_EQ(gate.arrived(), 1);
    runner->attach(*second); // the swap
    EXPECT_EQ(runner->executionStatus(), "native");
    EXPECT_GT(runner->nativeCompileMs(), 0.0);
    ASSERT_TRUE(waitUntil([&] { return gate.leftCancelled() == 1; })) << "the start-up compile was not cancelled";
    // Every holder of the start-up compile freed: its thread has ended.
    runner.reset();
    first.reset();
    second.reset();
    EXPECT_TRUE(told.snapshot().empty()) << "the cancelled compile was reported";
}

// A runner freed while its program's compile is held (takt stopped during a long compile):
// the compile is cancelled, so the stop does not wait for it, and nothing is reported.
TEST_F(NativeTierBackground, StoppingDuringACompileCancelsIt) {
    CompileGate gate;
    Told told;
    auto program = std::make_unique<LoadedProgram>(compiled.program.module, "");
    auto runner = std::make_unique<VmRunner>(0, Execution::Native, NativeStart::Background);
    runner->setCompileListener(told.listener());
    runner->attach(*program);
    ASSERT_TRUE(gate.reached(1));
    const auto before = std::chrono::steady_clock::now();
    program.reset();
    runner.reset(); // the last holder of the compile: cancels it and waits for its thread
    // The gate gives up by itself after 60 s: far less means the cancel let it go.
    EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(30));
    EXPECT_EQ(gate.leftCancelled(), 1);
    EXPECT_TRUE(told.snapshot().empty());
}

// A program attached again after it was replaced (its compile cancelled before it made code)
// gets a compile of its own again, instead of staying on the interpreter for good.
TEST_F(NativeTierBackground, AProgramAttachedAgainAfterItsCompileWasCancelledCompilesAgain) {
    CompileGate gate;
    LoadedProgram first(compiled.program.module, "");
    LoadedProgram second(compiled.program.module, "");
    VmRunner runner(0, Execution::Native, NativeStart::Background);
    runner.attach(first);
    ASSERT_TRUE(gate.reached(1));
    runner.prepare(second);
    runner.attach(second);
    ASSERT_TRUE(waitUntil([&] { return gate.leftCancelled() == 1; }));
    runner.attach(first);
    ASSERT_TRUE(gate.reached(2)) << "no new compile for the program attached again";
    gate.release();
    ASSERT_TRUE(waitUntil([&] { return runner.nativeCompileMs() > 0; }));
    runner.cycleBoundary();
    EXPECT_EQ(runner.executionStatus(), "native");
}

// The compile thread never takes a signal meant for `takt run` (SIGINT/SIGTERM are waited for
// by the main thread: one delivered here would kill the process without its safe state), and
// runs below the cycle: SCHED_OTHER whatever its creator's policy, 10 nicer than the process,
// named for `top -H`.
TEST_F(NativeTierBackground, TheCompileThreadBlocksSignalsAndRunsNice) {
    CompileGate gate;
    LoadedProgram program(compiled.program.module, "");
    VmRunner runner(0, Execution::Native, NativeStart::Background);
    // Started from a thread of another policy (SCHED_BATCH needs no privilege): the compile
    // thread must not inherit it.
    std::thread creator([&] {
        const sched_param none{};
        ASSERT_EQ(pthread_setschedparam(pthread_self(), SCHED_BATCH, &none), 0);
        runner.attach(program);
    });
    creator.join();
    ASSERT_TRUE(gate.reached(1));
    errno = 0;
    const int processNice = getpriority(PRIO_PROCESS, static_cast<id_t>(getpid()));
    ASSERT_EQ(errno, 0);
    std::string status;
    std::string stat;
    for (const fs::directory_entry& task : fs::directory_iterator("/proc/self/task")) {
        std::ifstream comm(task.path() / "comm");
        std::string name;
        std::getline(comm, name);
        if (name == "takt-compile") {
            std::ostringstream s;
            s << std::ifstream(task.path() / "status").rdbuf();
            status = s.str();
            std::ostringstream t;
            t << std::ifstream(task.path() / "stat").rdbuf();
            stat = t.str();
        }
    }
    ASSERT_FALSE(status.empty()) << "no thread named takt-compile";
    const std::size_t at = status.find("SigBlk:");
    ASSERT_NE(at, std::string::npos) << status;
    const std::uint64_t blocked = std::stoull(status.substr(at + 7), nullptr, 16);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1}) {
        EXPECT_NE(blocked & (std::uint64_t{1} << (sig - 1)), 0U) << "signal " << sig << " not blocked: " << status;
    }
    // /proc/<pid>/task/<tid>/stat: fields after the name in parentheses; 19 is nice, 41 policy.
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::vector<std::string> f;
    for (std::string x; fields >> x;) {
        f.push_back(x);
    }
    ASSERT_GT(f.size(), 38U) << stat;
    EXPECT_EQ(f[19 - 3], std::to_string(std::min(19, processNice + 10))) << "nice";
    EXPECT_EQ(f[41 - 3], "0") << "SCHED_OTHER";
}

// A program with tasks on threads of their own: one compile serves every runner, and each
// runner switches at its own cycle boundary.
TEST_F(NativeTierBackground, TaskRunnersShareTheBaseRunnersCompile) {
    const std::string twoTasks =
        std::string(kCounter) +
        "CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); TASK u(INTERVAL := T#5ms); "
        "PROGRAM i WITH t : p; PROGRAM j WITH u : p; END_RESOURCE END_CONFIGURATION\n";
    const takt::test::CompiledText tasks = takt::test::compileText(twoTasks);
    ASSERT_TRUE(tasks.program.ok()) << tasks.rendered() << tasks.program.failure;
    CompileGate gate;
    LoadedProgram program(tasks.program.module, "");
    VmRunner base(0, Execution::Native, NativeStart::Background);
    base.attach(program);
    const std::unique_ptr<CodeRunner> task = base.forTask(1);
    task->attach(program);
    base.attach(program); // attached again (a re-attach prepares again): still the one compile
    auto& taskRunner = static_cast<VmRunner&>(*task);
    EXPECT_EQ(taskRunner.executionStatus(), "interpreter (native compiling)");
    gate.release();
    ASSERT_TRUE(waitUntil([&] { return base.nativeCompileMs() > 0; }));
    EXPECT_EQ(taskRunner.executionStatus(), "interpreter (native compiling)");
    task->cycleBoundary();
    EXPECT_EQ(taskRunner.executionStatus(), "native");
    EXPECT_EQ(base.executionStatus(), "interpreter (native compiling)") << "each runner at its own boundary";
    base.cycleBoundary();
    EXPECT_EQ(base.executionStatus(), "native");
    EXPECT_EQ(gate.arrived(), 1);
}

// native::compile with its cancel flag set gives no code, says so, and is not a failure the
// status reports as one.
TEST_F(NativeTierBackground, ACancelledCompileGivesNoCode) {
    const std::atomic<bool> cancel{true};
    const native::CompileResult result = native::compile(*compiled.program.module, {}, {}, &cancel);
    EXPECT_TRUE(result.cancelled);
    EXPECT_EQ(result.code, nullptr);
    const std::atomic<bool> go{false};
    const native::CompileResult full = native::compile(*compiled.program.module, {}, {}, &go);
    EXPECT_FALSE(full.cancelled);
    EXPECT_NE(full.code, nullptr) << full.error;
}

} // namespace
} // namespace takt::engine
