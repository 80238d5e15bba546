// Every TASK on a scan thread of its own (scan_loop.h "Task threads"): releases, priorities,
// statistics, the fault hand-off to the base cycle and the park that online change and restart
// wait for. Nothing here locks: a task thread sleeps on its clock or on its own futex word.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "takt/common/futex.h"
#include "takt/engine/scan_loop.h"

namespace takt::engine {

using common::futexWait;
using common::futexWake;

namespace {

constexpr std::int64_t kNsPerS = 1'000'000'000;
constexpr int kMaxNice = 19;
// How long the last task to park spins for the swap before it sleeps (parkTask).
constexpr std::int64_t kParkSpinNs = 300'000;

void cpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

void sleepTill(std::int64_t ns) noexcept {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ns / kNsPerS);
    ts.tv_nsec = static_cast<long>(ns % kNsPerS);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}

std::int64_t wallClockNs() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * kNsPerS + ts.tv_nsec;
}

// The task's thread priority: under SCHED_FIFO one level below the base scan thread per distinct
// IEC priority above it (PRIORITY 0 is the highest), never below level 1; under SCHED_OTHER the
// same rank as a nice level (0, 1, 2, ... up to 19). Refusals become warnings.
void applyTaskPriority(const RuntimeConfig::Realtime& rt, TaskThread& w, const std::string& name) {
    std::vector<std::string>& warnings = w.warnings;
    if (rt.fifo) {
        const int lo = sched_get_priority_min(SCHED_FIFO);
        const int hi = sched_get_priority_max(SCHED_FIFO);
        sched_param param{};
        param.sched_priority = std::clamp(rt.priority - w.boost, lo, hi);
        if (const int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param); rc != 0) {
            warnings.push_back(fmt::format("task {} thread: SCHED_FIFO priority {} not permitted ({}); running "
                                           "with the normal scheduler (grant CAP_SYS_NICE or LimitRTPRIO= in the unit)",
                                           name, param.sched_priority, std::strerror(rc)));
        }
    } else if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), std::min(w.boost - 1, kMaxNice)) != 0) {
        warnings.push_back(fmt::format("task {} thread: nice level {} not applied ({})", name,
                                       std::min(w.boost - 1, kMaxNice), std::strerror(errno)));
    }
    // The task's own CPUs ([runtime.realtime.task_affinity]) or those of every scan thread.
    const std::vector<int>* cpus = &rt.cpuAffinity;
    for (const auto& [task, list] : rt.taskAffinity) {
        if (strcasecmp(task.c_str(), name.c_str()) == 0) { // IEC names ignore case
            cpus = &list;
        }
    }
    if (!cpus->empty()) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (const int cpu : *cpus) {
            if (cpu >= 0 && cpu < CPU_SETSIZE) {
                CPU_SET(cpu, &set);
            }
        }
        if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); rc != 0) {
            warnings.push_back(fmt::format("task {} thread: CPU affinity not applied ({}); running on any CPU", name,
                                           std::strerror(rc)));
        }
    }
}

// The task's debugger halts or resumes it (on the task thread): the watchdog skips a task whose
// busySince is 0, and on resuming the heartbeat moves on by the time halted, so the watchdog
// counts only the time the body ran.
void taskHaltChanged(void* context, bool halted) noexcept {
    TaskThread& w = *static_cast<TaskThread*>(context);
    const std::int64_t now = monotonicNs();
    if (halted) {
        w.haltedAt = now;
        w.busyAtHalt = w.busySince.load(std::memory_order_acquire);
        w.busySince.store(0, std::memory_order_release);
    } else {
        w.haltedNs += now - w.haltedAt;
        w.busySince.store(w.busyAtHalt + (now - w.haltedAt), std::memory_order_release);
    }
    // The base cycle puts the outputs in the safe state at its next boundary when asked to
    // ([runtime.debug] outputs = "safe"), and takes them out when no task is halted.
    w.haltedTasks->fetch_add(halted ? 1 : -1, std::memory_order_acq_rel);
    if (halted && w.wakeFd >= 0) {
        // The control thread tells the debugging session at once instead of at its next look;
        // a system call on the halting thread, never in a cycle that runs on.
        const std::uint64_t one = 1;
        (void)!::write(w.wakeFd, &one, sizeof one);
    }
}

} // namespace

void ScanLoop::startTaskThreads() {
    const bytecode::Module& m = engine_.program().module();
    const std::size_t n = m.tasks.size();
    taskThreadsMade_.store(0, std::memory_order_release);
    taskThreads_ = std::make_unique<TaskThread[]>(n);
    // Rank of each distinct IEC priority, 0 for the highest (the smallest number).
    std::vector<std::uint32_t> levels;
    for (const bytecode::TaskEntry& t : m.tasks) {
        levels.push_back(t.priority);
    }
    std::sort(levels.begin(), levels.end());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    for (std::size_t t = 0; t < n; ++t) {
        TaskThread& w = taskThreads_[t];
        w.task = t;
        w.name = m.tasks[t].name;
        w.priority = m.tasks[t].priority;
        w.event = m.tasks[t].singleOffset != bytecode::kNone;
        // A task with neither an interval nor SINGLE runs at cycle_interval_ms.
        w.intervalNs = m.tasks[t].intervalNs > 0 ? m.tasks[t].intervalNs : cycleIntervalNs_;
        const auto rank = std::lower_bound(levels.begin(), levels.end(), w.priority) - levels.begin();
        w.boost = 1 + static_cast<int>(rank);
        engine_.taskRunner(t).setAbortFlag(&w.abort);
        w.debugger = std::make_unique<vm::Debugger>(engine_.program().stops());
        w.haltedTasks = &haltedTasks_;
        w.wakeFd = commandWake_;
        w.debugger->setObserver(&taskHaltChanged, &w);
        engine_.taskRunner(t).setDebugger(w.debugger.get());
    }
    for (const auto& entry : options_.realtime.taskAffinity) {
        const std::string& name = entry.first;
        if (std::none_of(m.tasks.begin(), m.tasks.end(),
                         [&](const bytecode::TaskEntry& e) { return strcasecmp(e.name.c_str(), name.c_str()) == 0; })) {
            warnings_.push_back(
                fmt::format("runtime.realtime.task_affinity.{}: the program has no task {}; ignored", name, name));
        }
    }
    taskThreadCount_ = n;
    taskThreadsMade_.store(n, std::memory_order_release);
    tasksGo_.store(false);
    for (std::size_t t = 0; t < n; ++t) {
        TaskThread& w = taskThreads_[t];
        w.thread = std::thread([this, &w] { taskMain(w); });
        w.ready.wait(false);
        warnings_.insert(warnings_.end(), w.warnings.begin(), w.warnings.end());
    }
    // The grid starts once every thread is set up: on a loaded machine making a thread can take
    // longer than an interval, and the first common release would then find only the tasks
    // made before it, whatever their priority.
    tasksStartNs_ = monotonicNs();
    tasksGo_.store(true);
    tasksGo_.notify_all();
}

void ScanLoop::stopTaskThreads(std::int64_t giveUp) {
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        taskThreads_[t].debugger->detach(); // a halted task runs on to its boundary
        wakeTask(taskThreads_[t]);
    }
    // A body stuck in a loop with the watchdog off never reaches its boundary: abort it.
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        TaskThread& w = taskThreads_[t];
        while (w.busySince.load() != 0 && monotonicNs() < giveUp) {
            sleepTill(monotonicNs() + 1'000'000);
        }
        if (w.busySince.load() != 0) {
            stopAbort_ = true;
            w.abort.store(true, std::memory_order_release);
        }
    }
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        TaskThread& w = taskThreads_[t];
        if (w.thread.joinable()) {
            w.thread.join();
        }
        engine_.taskRunner(t).setAbortFlag(nullptr);
        engine_.taskRunner(t).setDebugger(nullptr);
    }
    parkRequested_.store(false);
    taskThreadCount_ = 0;
    engine_.disableTaskThreads();
}

void ScanLoop::wakeTask(TaskThread& w) noexcept {
    w.signal.fetch_add(1);
    futexWake(w.signal);
}

void ScanLoop::taskMain(TaskThread& w) {
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    applyTaskPriority(options_.realtime, w, w.name);
    w.ready.store(true);
    w.ready.notify_all();
    tasksGo_.wait(false);
    std::uint64_t consumed = 0;
    std::int64_t next = tasksStartNs_ + w.intervalNs;
    while (!stopRequested_.load()) {
        if (w.event) {
            // Wait for a rising edge, a park request or the stop, on the task's own futex word.
            const std::uint32_t seen = w.signal.load();
            if (w.released.load() == consumed && !stopRequested_.load() && !(parkRequested_.load() && mayPark(w))) {
                futexWait(w.signal, seen, -1);
                continue;
            }
        } else {
            // Until the release, unless a park or the stop comes first.
            for (;;) {
                const std::uint32_t seen = w.signal.load();
                if (stopRequested_.load() || (parkRequested_.load() && mayPark(w)) || monotonicNs() >= next) {
                    break;
                }
                futexWait(w.signal, seen, next);
            }
        }
        if (stopRequested_.load()) {
            break;
        }
        if (parkRequested_.load() && mayPark(w)) {
            parkTask(w);
            w.afterPark = true;
            if (!w.event) {
                // On the original grid: a release that fell due while parked runs at once (late,
                // not lost); only when the park outlasted a whole interval are releases skipped.
                const std::int64_t now = monotonicNs();
                if (now - next >= w.intervalNs) {
                    const std::int64_t skip = (now - next) / w.intervalNs;
                    next += skip * w.intervalNs;
                    w.missed.fetch_add(static_cast<std::uint64_t>(skip), std::memory_order_relaxed);
                }
            }
            continue;
        }
        std::int64_t release = next;
        if (w.event) {
            ++consumed; // once per rising edge, however late
            release = w.releasedAt.load();
        }
        if (tasksMayRun_.load() && w.fault.load() == 0) {
            runTaskCycle(w, release);
        }
        if (!w.event) {
            next += w.intervalNs;
            const std::int64_t end = monotonicNs();
            if (end > next && w.haltedNs > 0) {
                // Halted in the debugger: the releases that fell due meanwhile are skipped on the
                // grid, but a halt is no overrun.
                next += ((end - next) / w.intervalNs + 1) * w.intervalNs;
            } else if (end > next) { // overrun: skip the missed releases, keep the phase
                const auto missed = static_cast<std::uint64_t>((end - next) / w.intervalNs + 1);
                next += static_cast<std::int64_t>(missed) * w.intervalNs;
                w.overruns.fetch_add(1, std::memory_order_relaxed);
                w.missed.fetch_add(missed, std::memory_order_relaxed);
                if (w.task < kMaxTaskStats) {
                    taskOverruns_[w.task].fetch_add(1, std::memory_order_relaxed);
                }
            }
        }
    }
}

void ScanLoop::runTaskCycle(TaskThread& w, std::int64_t release) {
    const std::int64_t start = monotonicNs();
    w.haltedNs = 0;
    w.busySince.store(start, std::memory_order_release);
    // Odd: in a cycle, under the force table runTask reads next. Sequentially consistent, like
    // the table's store and load, so the base cycle that replaces the table and then reads this
    // mark even knows the task will read the new one (ScanLoop::forceGraceOver).
    w.cycleMark.fetch_add(1);
    const bool ok = engine_.runTask(w.task, release, wallClockNs(), w.report);
    w.cycleMark.fetch_add(1);
    const std::int64_t end = monotonicNs();
    w.busySince.store(0, std::memory_order_release);
    const bool tripped = w.abort.load(std::memory_order_acquire);
    const std::uint64_t cycle = w.cycles.fetch_add(1, std::memory_order_relaxed) + 1;
    if (!(tripped && stopAbort_.load())) {
        sampleTraces(static_cast<std::uint32_t>(w.task), cycle, end);
    }
    const std::int64_t ran = end - start - w.haltedNs; // the time halted is not execution time
    w.lastExecNs.store(ran, std::memory_order_relaxed);
    if (w.task < kMaxTaskStats) {
        taskExec_[w.task].record(ran);
        taskLate_[w.task].record(start - release);
    }
    if (w.afterPark) {
        w.afterPark = false;
        w.lateAfterParkNs.store(start - release, std::memory_order_relaxed);
        w.resumes.fetch_add(1, std::memory_order_release);
    }
    if (tripped && stopAbort_.load()) {
        return; // aborted by stop(), not a fault
    }
    if (!ok || tripped) {
        // The base cycle applies the fault policy at its next boundary; until it has, this
        // task runs no more cycles.
        w.fault.store(1 + static_cast<int>(tripped ? FaultKind::Watchdog : FaultKind::Runtime),
                      std::memory_order_release);
    }
}

bool ScanLoop::mayPark(const TaskThread& w) const noexcept {
    // Lower priorities park first, so a fast task keeps running while a slow one finishes its body.
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        const TaskThread& u = taskThreads_[t];
        if (u.priority > w.priority && !u.parked.load()) {
            return false;
        }
    }
    return true;
}

void ScanLoop::parkTask(TaskThread& w) {
    const std::int64_t since = monotonicNs();
    w.parked.store(true);
    const bool last = allTasksParked();
    if (last) { // the base cycle applies the change now
        baseSignal_.fetch_add(1);
        futexWake(baseSignal_);
    }
    // Tasks of higher priority may be waiting for this one.
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        if (&taskThreads_[t] != &w && taskThreads_[t].priority < w.priority) {
            wakeTask(taskThreads_[t]);
        }
    }
    if (last) {
        // The last task to park is the fastest (lower priorities park first), the one whose pause
        // matters, and what follows takes tens of microseconds: the base cycle's wake-up and the
        // swap. It waits for them spinning, for a bounded time, so that a futex wake-up of its
        // own does not add a trip through the scheduler to its pause. Under SCHED_FIFO the base
        // cycle preempts it on a shared CPU.
        const std::int64_t until = since + kParkSpinNs;
        while (parkRequested_.load(std::memory_order_acquire) && !stopRequested_.load(std::memory_order_relaxed) &&
               monotonicNs() < until) {
            cpuRelax();
        }
    }
    for (;;) {
        const std::uint32_t seen = w.signal.load();
        if (!parkRequested_.load() || stopRequested_.load()) {
            break;
        }
        futexWait(w.signal, seen, -1);
    }
    w.parked.store(false);
    const std::int64_t pause = monotonicNs() - since;
    if (pause > w.maxPauseNs.load(std::memory_order_relaxed)) {
        w.maxPauseNs.store(pause, std::memory_order_relaxed);
    }
    w.lastPauseNs.store(pause, std::memory_order_relaxed);
    w.parks.fetch_add(1, std::memory_order_release);
}

bool ScanLoop::allTasksParked() const noexcept {
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        if (!taskThreads_[t].parked.load()) {
            return false;
        }
    }
    return true;
}

bool ScanLoop::exclusive() noexcept {
    if (taskThreadCount_ == 0) {
        return true;
    }
    if (!parkRequested_.exchange(true)) {
        for (std::size_t t = 0; t < taskThreadCount_; ++t) {
            wakeTask(taskThreads_[t]); // an event task waiting for an edge parks at once
        }
    }
    return allTasksParked();
}

void ScanLoop::unparkTasks() noexcept {
    if (!parkRequested_.exchange(false)) {
        return;
    }
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        wakeTask(taskThreads_[t]);
    }
}

void ScanLoop::releaseEventTasks() noexcept {
    const std::int64_t now = clock_.nowNs();
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        TaskThread& w = taskThreads_[t];
        if (w.event && engine_.taskRanLastCycle(t)) {
            w.releasedAt.store(now);
            w.released.fetch_add(1);
            wakeTask(w);
        }
    }
}

void ScanLoop::collectTaskFaults() {
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        TaskThread& w = taskThreads_[t];
        const int fault = w.fault.load(std::memory_order_acquire);
        if (fault == 0) {
            continue;
        }
        const auto kind = static_cast<FaultKind>(fault - 1);
        if (current_.state == ScanState::Running || kind == FaultKind::Watchdog) {
            if (kind == FaultKind::Watchdog) {
                watchdogTrips_.fetch_add(1);
            }
            FaultReport report = w.report;
            report.message = fmt::format("task {}: {}", engine_.program().module().tasks[t].name, report.message);
            handleFault(kind, report);
        }
        w.abort.store(false, std::memory_order_release);
        w.fault.store(0, std::memory_order_release);
    }
}

void ScanLoop::finishExclusive() noexcept {
    if (pendingFaultRestart_ && exclusive()) {
        pendingFaultRestart_ = false;
        (void)restartAfterFault(monotonicNs(), pendingStepping_);
    }
    if (!parkRequested_.load() || pendingFaultRestart_) {
        return;
    }
    const ScanCommand* head = commands_.front();
    if (head == nullptr || (head->kind != ScanCommandKind::Reload && head->kind != ScanCommandKind::Restart)) {
        unparkTasks();
    }
}

bool ScanLoop::exclusiveWaiting() const noexcept {
    if (pendingFaultRestart_) {
        return true;
    }
    const ScanCommand* head = commands_.front();
    return head != nullptr && (head->kind == ScanCommandKind::Reload || head->kind == ScanCommandKind::Restart);
}

void ScanLoop::waitRelease(std::int64_t next) noexcept {
    bool applied = false; // one boundary between cycles per release, however often woken
    for (;;) {
        const std::uint32_t seen = baseSignal_.load();
        if (stopRequested_.load(std::memory_order_relaxed) || monotonicNs() >= next) {
            return;
        }
        if (!applied && parkRequested_.load() && allTasksParked() && exclusiveWaiting()) {
            // A boundary between two base cycles: the commands and the fault restart that wait
            // for the park apply now; the programs bound to no task run at the next release.
            applied = true;
            if (applyCommands()) {
                engine_.applyInputForces();
            }
            collectTaskFaults();
            finishExclusive();
            publish();
            continue;
        }
        futexWait(baseSignal_, seen, next);
    }
}

std::int64_t ScanLoop::watchTasks(std::int64_t now, std::int64_t timeout) noexcept {
    std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        TaskThread& w = taskThreads_[t];
        if (!overran(w.busySince.load(std::memory_order_acquire), w.trippedAt, now, timeout, earliest)) {
            continue;
        }
        io_.applySafeState(); // outputs first: safe even if the task never returns
        w.abort.store(true, std::memory_order_release);
    }
    return earliest;
}

} // namespace takt::engine
