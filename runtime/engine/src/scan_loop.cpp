#include "takt/engine/scan_loop.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace takt::engine {
namespace {

constexpr std::int64_t kNsPerMs = 1'000'000;
constexpr std::int64_t kNsPerS = 1'000'000'000;

timespec toTimespec(std::int64_t ns) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ns / kNsPerS);
    ts.tv_nsec = static_cast<long>(ns % kNsPerS);
    return ts;
}

void sleepUntil(std::int64_t ns) noexcept {
    const timespec ts = toTimespec(ns);
    // EINTR: a signal woke us early; sleep again for the rest.
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}

// Applies the scheduler and affinity settings to the calling thread; what the system refuses
// becomes a warning and the thread runs on as it is.
void applyRealtime(const RuntimeConfig::Realtime& rt, int priorityBoost, const char* who,
                   std::vector<std::string>& warnings) {
    if (rt.fifo) {
        const int lo = sched_get_priority_min(SCHED_FIFO);
        const int hi = sched_get_priority_max(SCHED_FIFO);
        sched_param param{};
        param.sched_priority = std::clamp(rt.priority + priorityBoost, lo, hi);
        if (const int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param); rc != 0) {
            warnings.push_back(fmt::format("{} thread: SCHED_FIFO priority {} not permitted ({}); running with the "
                                           "normal scheduler (grant CAP_SYS_NICE or LimitRTPRIO= in the unit)",
                                           who, param.sched_priority, std::strerror(rc)));
        }
    }
    if (!rt.cpuAffinity.empty()) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (const int cpu : rt.cpuAffinity) {
            if (cpu >= 0 && cpu < CPU_SETSIZE) {
                CPU_SET(cpu, &set);
            }
        }
        if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); rc != 0) {
            warnings.push_back(fmt::format("{} thread: CPU affinity {} not applied ({}); running on any CPU", who,
                                           fmt::join(rt.cpuAffinity, ","), std::strerror(rc)));
        }
    }
}

} // namespace

std::int64_t monotonicNs() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * kNsPerS + ts.tv_nsec;
}

std::int64_t CycleClock::wallNs() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * kNsPerS + ts.tv_nsec;
}

ScanOptions ScanOptions::fromConfig(const RuntimeConfig& config) {
    ScanOptions o;
    o.periodNs = static_cast<std::int64_t>(std::max<std::uint32_t>(config.cycleIntervalMs, 1)) * kNsPerMs;
    o.watchdog = config.watchdog;
    o.faultPolicy = config.fault.policy;
    o.realtime = config.realtime;
    o.retainIntervalNs = static_cast<std::int64_t>(std::max<std::uint32_t>(config.retain.saveIntervalMs, 1)) * kNsPerMs;
    o.safeOutputsWhileHalted = config.debug.safeOutputsWhileHalted;
    return o;
}

const char* scanStateName(ScanState s) noexcept {
    switch (s) {
    case ScanState::Stopped: return "stopped";
    case ScanState::Running: return "running";
    case ScanState::Halted: return "halted";
    case ScanState::Paused: return "paused";
    }
    return "stopped";
}

const char* faultActionName(FaultAction a) noexcept {
    switch (a) {
    case FaultAction::Halt: return "halt";
    case FaultAction::SafeHalt: return "safe_halt";
    case FaultAction::Restart: return "restart";
    }
    return "halt";
}

const char* scanEventName(ScanEventKind k) noexcept {
    switch (k) {
    case ScanEventKind::CycleOverrun: return "cycle_overrun";
    case ScanEventKind::RuntimeFault: return "runtime_fault";
    case ScanEventKind::WatchdogTimeout: return "watchdog_timeout";
    case ScanEventKind::IoFault: return "io_fault";
    case ScanEventKind::Restart: return "restart";
    case ScanEventKind::Halt: return "halt";
    case ScanEventKind::Paused: return "paused";
    case ScanEventKind::Resumed: return "resumed";
    case ScanEventKind::Stopped: return "stopped";
    case ScanEventKind::Started: return "started";
    case ScanEventKind::ReloadApplied: return "reload_applied";
    }
    return "cycle_overrun";
}

const char* faultKindName(ScanEventKind k) noexcept {
    switch (k) {
    case ScanEventKind::RuntimeFault: return "runtime";
    case ScanEventKind::WatchdogTimeout: return "watchdog";
    case ScanEventKind::IoFault: return "io";
    default: return "";
    }
}

ScanLoop::ScanLoop(Engine& engine, CycleClock& clock, ProcessIo& io, const ScanOptions& options)
    : engine_(engine), clock_(clock), io_(io), options_(options),
      commandWake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

ScanLoop::~ScanLoop() {
    stop();
    if (commandWake_ >= 0) {
        ::close(commandWake_);
    }
}

ProcessImageView ScanLoop::view() noexcept {
    ProcessImageView v;
    v.inputs = engine_.area(bytecode::IoArea::Input);
    v.outputs = engine_.area(bytecode::IoArea::Output);
    v.memory = engine_.area(bytecode::IoArea::Memory);
    v.cycleStartNs = clock_.nowNs();
    v.cycleIntervalNs = options_.periodNs;
    return v;
}

bool ScanLoop::start(std::string& error) {
    if (running_.load()) {
        error = "the scan loop is already running";
        return false;
    }
    if (!engine_.loaded()) {
        error = "no program loaded";
        return false;
    }
    if (options_.periodNs <= 0) {
        error = "the cycle interval must be positive";
        return false;
    }
    // Everything the cycle touches is sized here, off the cycle.
    engine_.ensureArea(bytecode::IoArea::Input, io_.inputBytes());
    engine_.ensureArea(bytecode::IoArea::Output, io_.outputBytes());
    engine_.ensureArea(bytecode::IoArea::Memory, io_.memoryBytes());
    engine_.setAbortFlag(&abort_);
    engine_.setTaskTimer(&monotonicNs);
    const bool tasksApart = engine_.program().module().tasks.size() >= 2 && engine_.enableTaskThreads();
    cycleIntervalNs_ = options_.periodNs;
    if (tasksApart) {
        // The base cycle runs the drivers: at the fastest task's interval when that is shorter
        // than the configured cycle, so a 1 ms task gets inputs at most 1 ms old.
        for (const bytecode::TaskEntry& t : engine_.program().module().tasks) {
            if (t.intervalNs > 0 && t.intervalNs < options_.periodNs) {
                options_.periodNs = t.intervalNs;
            }
        }
    }
    if (!tasksApart) {
        // The program runs on the base cycle: a breakpoint halts the base cycle itself.
        if (baseDebugger_ == nullptr) {
            baseDebugger_ = std::make_unique<vm::Debugger>(engine_.program().stops());
        }
        baseDebugger_->setObserver(&baseHaltChanged, this);
        baseDebugger_->setHaltService(&serveHalted, this, options_.periodNs);
        engine_.setDebugger(baseDebugger_.get());
        baseDebug_.store(baseDebugger_.get(), std::memory_order_release);
    }
    if (engine_.program().module().tasks.size() >= 2 && !tasksApart) {
        warnings_.emplace_back("the tasks run one after the other in the base cycle: the runner cannot run them "
                               "on threads of their own");
    }
    taskCount_.store(std::min(engine_.program().module().tasks.size(), kMaxTaskStats));
    taskOverruns_ = std::make_unique<std::atomic<std::uint64_t>[]>(kMaxTaskStats);
    taskExec_ = std::make_unique<LatencyHistogram[]>(kMaxTaskStats);
    taskLate_ = std::make_unique<LatencyHistogram[]>(kMaxTaskStats);
    retainBuffer_.assign(engine_.program().imageSize(), 0);
    retainModule_ = &engine_.program().module();
    // The ring holds one time per allowed restart, sized here off the cycle.
    recentRestarts_.assign(std::min(options_.restartLimit, ScanOptions::kMaxRestartLimit), 0);
    restartCount_ = 0;
    forceGrace_ = false;
    faultLatched_ = false;
    haltSafe_ = false;
    baseHalted_ = false;
    haltedTasks_.store(0);
    stepsLeft_ = 0;
    current_ = ScanSnapshot{};
    current_.state = options_.startPaused ? ScanState::Paused : ScanState::Running;
    publish(); // readers see the run state from now on, not the default of an empty snapshot
    if (options_.realtime.lockMemory && mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
        warnings_.push_back(fmt::format("lock_memory: mlockall not permitted ({}); memory may be paged out "
                                        "(raise LimitMEMLOCK= or grant CAP_IPC_LOCK)",
                                        std::strerror(errno)));
    }
    if (const std::optional<std::int32_t> us = heldCpuLatencyUs(options_.realtime)) {
        if (std::string why = cpuLatency_.hold(*us); !why.empty()) {
            warnings_.push_back(std::move(why));
        }
    }
    stopRequested_ = false;
    scanExited_ = false;
    setupDone_ = 0;
    running_ = true;
    if (tasksApart) {
        startTaskThreads(); // before the base cycle that releases the event tasks
    }
    scanThread_ = std::thread([this] { scanMain(); });
    setupDone_.wait(0);
    if (options_.watchdog.enabled && options_.watchdog.timeoutMs > 0) {
        watchdogThread_ = std::thread([this] { watchdogMain(); });
        setupDone_.wait(1);
    }
    if (retainSink_ != nullptr) {
        retainThread_ = std::thread([this] { retainMain(); });
    }
    return true;
}

void ScanLoop::stop() {
    if (!running_.exchange(false)) {
        return;
    }
    stopRequested_ = true;
    // A program stuck in a loop with the watchdog off would never reach the cycle boundary:
    // after two periods and a second, the run in progress is aborted through the VM.
    const std::int64_t giveUp = monotonicNs() + 2 * options_.periodNs + 1'000'000'000;
    while (!scanExited_.load() && monotonicNs() < giveUp) {
        // A base cycle halted in the debugger runs on to its boundary (again and again: a
        // debugging session may attach it anew until the scan thread has ended).
        if (baseDebugger_ != nullptr) {
            baseDebugger_->detach();
        }
        sleepUntil(monotonicNs() + kNsPerMs);
    }
    if (!scanExited_.load()) {
        stopAbort_ = true;
        abort_.store(true, std::memory_order_release);
    }
    if (scanThread_.joinable()) {
        scanThread_.join();
    }
    if (baseDebugger_ != nullptr) {
        baseDebug_.store(nullptr, std::memory_order_release);
        engine_.setDebugger(nullptr);
    }
    stopTaskThreads(giveUp);
    if (watchdogThread_.joinable()) {
        watchdogThread_.join();
    }
    retainState_.store(RetainHandoff::Stop);
    retainState_.notify_one();
    if (retainThread_.joinable()) {
        retainThread_.join();
    }
    retainState_.store(RetainHandoff::Idle);
    cpuLatency_.release(); // no scan thread left to wake up
    abort_.store(false);
    stopAbort_ = false;
    latchSafeState();
    // One last read shows what the field sees now that the safe state is latched.
    engine_.restoreFieldInputs();
    io_.readInputs(view());
    engine_.applyInputForces();
    current_.state = ScanState::Stopped;
    publish();
    finalRetain_ = RetainSaveResult::Unchanged;
    if (retainSink_ != nullptr) {
        finalRetain_ =
            retainSink_->save(engine_.program().module(),
                              std::span<const std::uint8_t>(engine_.program().image(), engine_.program().imageSize()));
        countRetain(finalRetain_);
    }
    engine_.setAbortFlag(nullptr);
    engine_.setTaskTimer(nullptr);
}

void ScanLoop::scanMain() {
    // The default 50 us timer slack of SCHED_OTHER threads would add itself to every release.
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    {
        std::vector<std::string> w;
        applyRealtime(options_.realtime, 0, "scan", w);
        warnings_.insert(warnings_.end(), w.begin(), w.end());
    }
    setupDone_.store(1);
    setupDone_.notify_all();
    const std::int64_t period = options_.periodNs;
    std::int64_t next = monotonicNs() + period;
    nextRetainNs_ = next + options_.retainIntervalNs;
    while (!stopRequested_.load(std::memory_order_relaxed)) {
        if (taskThreadCount_ > 0) {
            waitRelease(next);
        } else {
            sleepUntil(next);
        }
        if (stopRequested_.load(std::memory_order_relaxed)) {
            break;
        }
        const std::int64_t release = next;
        const std::int64_t start = monotonicNs();
        haltedNs_ = 0;
        busySince_.store(start, std::memory_order_release);
        // The cycle's time is its release on the grid, not the (late) wake-up: task intervals
        // that are multiples of the base period then fall due exactly, whatever the jitter.
        clock_.set(release);
        // The drivers fill the field's inputs: the bytes a force covered last cycle get the
        // field's value back first, so a driver that writes only what changed (modbus-server)
        // never loses its value to a force, and an unforce shows the field's current value.
        engine_.restoreFieldInputs();
        io_.readInputs(view());
        // Forced inputs replace what the field sent before anything reads the inputs (io.read
        // in a command included); a command that changed the forces put the field's bytes back
        // under the old table and applies its new table at once.
        engine_.applyInputForces();
        if (applyCommands()) {
            engine_.applyInputForces();
        }
        if (taskThreadCount_ > 0) {
            collectTaskFaults();
            finishExclusive();
        }
        followHalts();
        if (current_.state == ScanState::Running && ioFailedClosed()) {
            idleCycle(release, start);
        } else if (current_.state == ScanState::Running) {
            runOneCycle(release, start);
        } else {
            idleCycle(release, start);
        }
        next += period;
        const std::int64_t end = monotonicNs();
        if (end > next && haltedNs_ > 0) {
            // Halted in the debugger: the releases that fell due meanwhile are skipped on the
            // grid, but a halt is no overrun.
            next += ((end - next) / period + 1) * period;
        } else if (end > next) {
            accountOverrun(release, end, next);
        }
    }
    scanExited_.store(true);
}

void ScanLoop::runOneCycle(std::int64_t release, std::int64_t start) {
    // The view is taken after the commands: an online change may have grown an area.
    const ProcessImageView image = view();
    const bool ok = engine_.runCycle(faultScratch_);
    const bool tripped = abort_.load(std::memory_order_acquire);
    if (ok && !tripped) {
        io_.writeOutputs(image);
    }
    const std::int64_t end = monotonicNs();
    busySince_.store(0, std::memory_order_release);
    const std::int64_t exec = end - start - haltedNs_; // the time halted is no execution time
    exec_.record(exec);
    lateness_.record(start - release);
    current_.cycles = engine_.cycleCount();
    current_.lastStartNs = start;
    current_.lastExecNs = exec;
    current_.lastLatenessNs = start - release;
    if (tripped && stopAbort_.load()) {
        return; // aborted by stop(), not a fault
    }
    if (taskThreadCount_ == 0) {
        sampleBaseTraces(end);
    }
    if (ok && !tripped && taskThreadCount_ == 0) {
        recordTaskStats(release); // in a faulted cycle some due tasks never ran: no timings then
    }
    if (ok && !tripped) {
        releaseEventTasks(); // the SINGLE edges this cycle sampled
    }
    if (!ok || tripped) {
        handleFault(tripped ? FaultKind::Watchdog : FaultKind::Runtime, faultScratch_);
    } else if (stepsLeft_ > 0 && --stepsLeft_ == 0) {
        setState(ScanState::Paused, ScanEventKind::Paused);
    }
    maybeHandRetain(end);
    publishWatch();
    publish();
}

// As taskHaltChanged for a task thread: the watchdog skips the base cycle while busySince_ is 0,
// and on resuming the heartbeat moves on by the time halted, so it counts only the time the
// program ran.
void ScanLoop::baseHaltChanged(void* context, bool halted) noexcept {
    ScanLoop& self = *static_cast<ScanLoop*>(context);
    const std::int64_t now = monotonicNs();
    if (halted) {
        self.haltedAt_ = now;
        self.busyAtHalt_ = self.busySince_.load(std::memory_order_acquire);
        self.busySince_.store(0, std::memory_order_release);
        self.wakeDue_ = true; // the first serveHalted() wakes the control thread: it tells the session
    } else {
        self.haltedNs_ += now - self.haltedAt_;
        self.busySince_.store(self.busyAtHalt_ + (now - self.haltedAt_), std::memory_order_release);
    }
    self.baseHalted_ = halted;
    if (halted) {
        self.followHalts(); // safe at once; the release waits for the next boundary
    }
}

// While the base cycle is halted the scan thread still serves what must not wait for a debugger:
// the commands that read and write values and forces, and the change stream. The inputs are not
// read (the halted program would see them change under it) and the outputs hold.
void ScanLoop::serveHalted(void* context) noexcept {
    ScanLoop& self = *static_cast<ScanLoop*>(context);
    if (self.applyCommands(true)) {
        self.engine_.applyInputForces();
    }
    self.followHalts(); // a task that halted or ran on meanwhile
    self.publishWatch();
    self.publish();
}

void ScanLoop::recordTaskStats(std::int64_t release) noexcept {
    const std::size_t tasks = taskCount_.load(std::memory_order_relaxed);
    for (std::size_t t = 0; t < tasks; ++t) {
        if (engine_.taskRanLastCycle(t)) {
            taskExec_[t].record(engine_.taskEndNs(t) - engine_.taskStartNs(t));
            taskLate_[t].record(engine_.taskStartNs(t) - release);
        }
    }
}

void ScanLoop::idleCycle(std::int64_t release, std::int64_t start) {
    // Not running (halted, stopped or paused): the program does not run and the outputs stay
    // where they are (the safe state when halted or stopped); inputs are still read so the
    // status shows what the field sees, and commands are still applied.
    busySince_.store(0, std::memory_order_release);
    current_.lastStartNs = start;
    current_.lastLatenessNs = start - release;
    current_.lastExecNs = 0;
    engine_.publishTaskInputs(); // the tasks that run on see the inputs of now when they resume
    publishWatch();
    publish();
}

void ScanLoop::accountOverrun(std::int64_t release, std::int64_t end, std::int64_t& next) {
    const std::int64_t period = options_.periodNs;
    const auto missed = static_cast<std::uint32_t>((end - next) / period + 1);
    next += static_cast<std::int64_t>(missed) * period;
    if (current_.state != ScanState::Running && current_.lastExecNs == 0) {
        return; // a halted loop that was descheduled skips releases without counting them
    }
    ++current_.overruns;
    current_.missedReleases += missed;
    const bytecode::Module& m = engine_.program().module();
    const std::int64_t exec = end - current_.lastStartNs;
    // Tasks on threads of their own count their overruns themselves.
    const std::size_t tasks =
        taskThreadCount_ > 0 ? 0 : std::min(taskCount_.load(std::memory_order_relaxed), m.tasks.size());
    for (std::size_t t = 0; t < tasks; ++t) {
        const std::int64_t deadline = std::max(m.tasks[t].intervalNs, period);
        if (engine_.taskRanLastCycle(t) && end - release > deadline) {
            taskOverruns_[t].store(taskOverruns_[t].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        }
    }
    pushEvent(
        ScanEvent{ScanEventKind::CycleOverrun, current_.cycles, end, exec, missed, current_.lastStartNs - release});
    publish();
}

// A driver told to fail closed (on_error = "fault") is faulted: the program does not run this
// cycle and the runtime faults as for a runtime error, so the safe state reaches every peer,
// not only the one that failed. Checked before the program runs, on the drivers' cached health
// (refreshed off the cycle): an atomic load per cycle.
bool ScanLoop::ioFailedClosed() {
    if (io_.healthSummary().failedClosed == 0) {
        return false;
    }
    FaultReport report;
    report.message = "I/O fault: " + io_.failedClosedReason();
    handleFault(FaultKind::Io, report);
    return true;
}

void ScanLoop::handleFault(FaultKind kind, const FaultReport& report) {
    // The fault path may allocate (the report's strings); it is not part of a regular cycle.
    const bool watchdog = kind == FaultKind::Watchdog;
    const FaultAction action = watchdog ? options_.watchdog.action : options_.faultPolicy;
    latchSafeState();
    ++current_.faults;
    const std::int64_t now = monotonicNs();
    static constexpr ScanEventKind kEvent[] = {ScanEventKind::RuntimeFault, ScanEventKind::WatchdogTimeout,
                                               ScanEventKind::IoFault};
    pushEvent(ScanEvent{kEvent[static_cast<int>(kind)], current_.cycles, now, current_.lastExecNs, 0});
    {
        const std::lock_guard lock(faultMutex_);
        FaultRecord rec;
        rec.kind = faultKindName(kEvent[static_cast<int>(kind)]);
        rec.report = report;
        if (watchdog) {
            rec.report.message = fmt::format("watchdog: cycle exceeded timeout_ms = {} ({})",
                                             options_.watchdog.timeoutMs, report.message);
        }
        rec.action = action;
        rec.cycle = current_.cycles;
        lastFault_ = std::move(rec);
    }
    abort_.store(false, std::memory_order_release);
    // A fault ends a step: after a restart the program is paused again, not left running.
    const bool stepping = stepsLeft_ > 0;
    stepsLeft_ = 0;
    if (action == FaultAction::Restart && !restartAllowed(now)) {
        const std::lock_guard lock(faultMutex_);
        lastFault_->report.message += fmt::format("; not restarted: {} restarts within {} s already",
                                                  recentRestarts_.size(), options_.restartWindowNs / kNsPerS);
    } else if (action == FaultAction::Restart && taskThreadCount_ > 0 && !exclusive()) {
        // The restart re-initialises the image every task runs on: it waits until every task is
        // parked at its cycle boundary (finishExclusive); the program does not run meanwhile.
        pendingFaultRestart_ = true;
        pendingStepping_ = stepping;
        current_.state = ScanState::Halted;
        return;
    } else if (action == FaultAction::Restart) {
        (void)restartAfterFault(now, stepping);
        return;
    }
    current_.state = ScanState::Halted;
    faultLatched_ = true;
    pushEvent(ScanEvent{ScanEventKind::Halt, current_.cycles, now, 0, 0});
}

// The fault policy's cold restart; halts when the init code faults.
bool ScanLoop::restartAfterFault(std::int64_t now, bool stepping) {
    FaultReport initFault;
    if (engine_.restart(RestartMode::Cold, initFault)) {
        ++current_.restarts;
        pushEvent(ScanEvent{ScanEventKind::Restart, current_.cycles, now, 0, 0});
        releaseSafeState();
        current_.state = ScanState::Running;
        if (stepping) {
            setState(ScanState::Paused, ScanEventKind::Paused);
        }
        return true;
    }
    {
        const std::lock_guard lock(faultMutex_);
        lastFault_->report.message += "; cold restart failed: " + initFault.message;
    }
    current_.state = ScanState::Halted;
    faultLatched_ = true;
    pushEvent(ScanEvent{ScanEventKind::Halt, current_.cycles, now, 0, 0});
    return false;
}

void ScanLoop::watchdogMain() {
    {
        std::vector<std::string> w;
        applyRealtime(options_.realtime, 1, "watchdog", w);
        warnings_.insert(warnings_.end(), w.begin(), w.end());
    }
    setupDone_.store(2);
    setupDone_.notify_all();
    const std::int64_t timeout = static_cast<std::int64_t>(options_.watchdog.timeoutMs) * kNsPerMs;
    // The watchdog looks when a cycle in progress reaches its deadline, and otherwise once per
    // timeout: a cycle that starts after a look cannot overrun before the next one (its deadline
    // is later), so every trip lands at its deadline, not up to a poll interval after it. Not
    // polling every few milliseconds matters on a box with many processes (each wake-up is a
    // context switch). The 100 ms cap bounds how long a stop waits for this thread.
    const std::int64_t idleLook = std::min<std::int64_t>(timeout, 100 * kNsPerMs);
    std::int64_t next = monotonicNs() + idleLook;
    while (!stopRequested_.load(std::memory_order_relaxed)) {
        sleepUntil(next);
        watchdogLooks_.fetch_add(1, std::memory_order_relaxed);
        const std::int64_t now = monotonicNs();
        next = std::min(now + idleLook, watchTasks(now, timeout));
        if (!overran(busySince_.load(std::memory_order_acquire), trippedCycle_, now, timeout, next)) {
            continue;
        }
        // Outputs first: safe even if the VM never returns.
        io_.applySafeState();
        abort_.store(true, std::memory_order_release);
        watchdogTrips_.fetch_add(1);
    }
}

bool ScanLoop::overran(std::int64_t busy, std::atomic<std::int64_t>& tripped, std::int64_t now, std::int64_t timeout,
                       std::int64_t& next) noexcept {
    if (busy == 0) {
        return false; // idle
    }
    if (now - busy <= timeout) {
        next = std::min(next, busy + timeout + 1);
        return false;
    }
    return tripped.exchange(busy) != busy; // false: this cycle was already tripped
}

void ScanLoop::maybeHandRetain(std::int64_t now) noexcept {
    if (retainSink_ == nullptr || now < nextRetainNs_) {
        return;
    }
    nextRetainNs_ = now + options_.retainIntervalNs;
    const LoadedProgram& p = engine_.program();
    if (retainState_.load(std::memory_order_acquire) != RetainHandoff::Idle || p.imageSize() != retainBuffer_.size()) {
        return; // the writer is still busy with the last copy (or the image changed size): next time
    }
    std::memcpy(retainBuffer_.data(), p.image(), retainBuffer_.size());
    retainState_.store(RetainHandoff::CopyWaiting, std::memory_order_release);
    retainState_.notify_one();
}

void ScanLoop::retainMain() {
    for (;;) {
        RetainHandoff s = retainState_.load(std::memory_order_acquire);
        while (s == RetainHandoff::Idle || s == RetainHandoff::Swapping) {
            retainState_.wait(s);
            s = retainState_.load(std::memory_order_acquire);
        }
        if (s == RetainHandoff::Stop) {
            return;
        }
        // CopyWaiting: the buffer and module are ours until we set Idle again.
        countRetain(retainSink_->save(*retainModule_, retainBuffer_));
        RetainHandoff expected = RetainHandoff::CopyWaiting;
        retainState_.compare_exchange_strong(expected, RetainHandoff::Idle);
    }
}

void ScanLoop::countRetain(RetainSaveResult r) noexcept {
    if (r == RetainSaveResult::Saved) {
        retainSaves_.fetch_add(1, std::memory_order_relaxed);
        wakeControl();
    } else if (r == RetainSaveResult::Failed) {
        retainFailures_.fetch_add(1, std::memory_order_relaxed);
        wakeControl();
    }
}

bool ScanLoop::restartAllowed(std::int64_t now) noexcept {
    // The limit counts restarts inside a sliding window: the oldest of the last `limit` restarts
    // must be older than the window for one more to be allowed.
    const std::size_t limit = std::min<std::size_t>(options_.restartLimit, recentRestarts_.size());
    if (limit == 0) {
        return false;
    }
    if (restartCount_ >= limit) {
        const std::int64_t oldest = recentRestarts_[(restartCount_ - limit) % recentRestarts_.size()];
        if (now - oldest < options_.restartWindowNs) {
            return false;
        }
    }
    recentRestarts_[restartCount_ % recentRestarts_.size()] = now;
    ++restartCount_;
    return true;
}

void ScanLoop::pushEvent(const ScanEvent& e) noexcept {
    const std::uint64_t n = eventCount_.load(std::memory_order_relaxed);
    events_[n % kEventCapacity].store(e);
    eventCount_.store(n + 1, std::memory_order_release);
    wakeDue_ = true;
}

void ScanLoop::wakeControl() noexcept {
    // A full counter (EAGAIN) still leaves the descriptor readable.
    if (commandWake_ >= 0) {
        const std::uint64_t one = 1;
        (void)!::write(commandWake_, &one, sizeof one);
    }
}

void ScanLoop::publish() noexcept {
    tasksMayRun_.store(current_.state == ScanState::Running, std::memory_order_release);
    current_.watchdogTrips = watchdogTrips_.load(std::memory_order_relaxed);
    current_.io = io_.healthSummary();
    const auto& in = engine_.area(bytecode::IoArea::Input);
    const auto& out = engine_.area(bytecode::IoArea::Output);
    current_.inputBytes = static_cast<std::uint32_t>(std::min(in.size(), kSnapshotIoBytes));
    current_.outputBytes = static_cast<std::uint32_t>(std::min(out.size(), kSnapshotIoBytes));
    // An empty area has no storage (data() may be null, which memcpy must not see).
    if (current_.inputBytes != 0) {
        std::memcpy(current_.inputs.data(), in.data(), current_.inputBytes);
    }
    for (std::uint32_t i = 0; i < current_.outputBytes; ++i) {
        current_.outputs[i] = outputSeen(i); // what the field sees: the safe image while latched
    }
    snapshot_.store(current_);
    // Events recorded this cycle: the control thread reads them with the snapshot they show (a
    // step's Paused with the cycle count it stopped at).
    if (wakeDue_) {
        wakeDue_ = false;
        wakeControl();
    }
}

// The subscribed values at the cycle boundary, once per cycle (not with every snapshot): only
// while the program they were resolved in runs.
void ScanLoop::publishWatch() noexcept {
    if (watch_ != nullptr && watch_->module() == &engine_.program().module()) {
        watch_->publish(current_.cycles, [this](ImageArea a) { return imageOf(a); });
    }
}

void ScanLoop::latchSafeState() noexcept {
    io_.applySafeState();
    safeLatched_ = true;
}

void ScanLoop::releaseSafeState() noexcept {
    io_.releaseSafeState();
    safeLatched_ = false;
}

void ScanLoop::followHalts() noexcept {
    if (!options_.safeOutputsWhileHalted) {
        return;
    }
    const bool halted = baseHalted_ || haltedTasks_.load(std::memory_order_acquire) > 0;
    if (halted && !haltSafe_) {
        haltSafe_ = true;
        if (!safeLatched_) {
            io_.applySafeState();
        }
    } else if (!halted && haltSafe_ && !tripPending()) {
        // Only at a base-cycle boundary, after the commands (a stop latches first), and not while
        // a watchdog's safe state waits for its fault to be collected: the cycle that follows is
        // the first whose outputs reach the field again.
        haltSafe_ = false;
        if (!safeLatched_) {
            io_.releaseSafeState();
        }
    }
}

bool ScanLoop::tripPending() const noexcept {
    if (abort_.load(std::memory_order_acquire)) {
        return true;
    }
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        if (taskThreads_[t].abort.load(std::memory_order_acquire) || taskThreads_[t].fault.load() != 0) {
            return true;
        }
    }
    return false;
}

std::uint8_t ScanLoop::outputSeen(std::size_t byte) noexcept {
    if (!safeLatched_ && !haltSafe_) {
        const auto& out = engine_.area(bytecode::IoArea::Output);
        return byte < out.size() ? out[byte] : 0;
    }
    const std::span<const std::uint8_t> safe = io_.safeOutputs();
    return byte < safe.size() ? safe[byte] : 0; // the safe image is zeros past its end
}

std::vector<std::uint64_t> ScanLoop::taskOverruns() const {
    const std::size_t n = taskCount_.load(std::memory_order_relaxed);
    std::vector<std::uint64_t> out(n);
    for (std::size_t t = 0; t < n; ++t) {
        out[t] = taskOverruns_[t].load(std::memory_order_relaxed);
    }
    return out;
}

const LatencyHistogram* ScanLoop::taskExecTime(std::size_t t) const noexcept {
    return t < kMaxTaskStats && taskExec_ != nullptr ? &taskExec_[t] : nullptr;
}

const LatencyHistogram* ScanLoop::taskLateness(std::size_t t) const noexcept {
    return t < kMaxTaskStats && taskLate_ != nullptr ? &taskLate_[t] : nullptr;
}

std::vector<ScanEvent> ScanLoop::events() const {
    const std::uint64_t n = eventCount_.load(std::memory_order_acquire);
    const std::uint64_t first = n > kEventCapacity ? n - kEventCapacity : 0;
    std::vector<ScanEvent> out;
    for (std::uint64_t i = first; i < n; ++i) {
        out.push_back(events_[i % kEventCapacity].load());
    }
    return out;
}

std::optional<FaultRecord> ScanLoop::lastFault() const {
    const std::lock_guard lock(faultMutex_);
    return lastFault_;
}

} // namespace takt::engine
