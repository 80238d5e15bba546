#pragma once
// The real-time scan loop of `takt run` (ARCHITECTURE.md "Threads"): a scan thread released at
// absolute deadlines on CLOCK_MONOTONIC, a watchdog thread above it, statistics kept in
// fixed-size histograms, a seqlocked snapshot for every other thread, and the fault policy.
//
// A cycle: wake at the release time; read inputs from ProcessIo into the Engine's process
// image; run the due tasks (Engine::runCycle, whose clock returns this cycle's release time);
// write outputs; record statistics; publish the snapshot. Nothing in a cycle allocates, locks a
// mutex, or touches disk or network.
//
// Overrun policy: a cycle that ends after the next release time is an overrun. The releases it
// missed are skipped, never run back to back to catch up, and the next release is the first one
// still in the future on the original grid (start + k * period), so the phase of every task is
// kept. Each overrun counts once overall (with the number of releases skipped) and once for each
// task that ran in it and whose own deadline (its interval, at least the base period) passed;
// it is recorded as a `cycle_overrun` event in a fixed-size ring.
//
// Faults: a runtime fault (division by zero, bounds, ...) applies `fault.policy`; a watchdog
// timeout applies `watchdog.action`. The watchdog applies safe state itself the moment the
// timeout passes, so outputs are safe even if the VM never returns; it then sets the VM abort
// flag. halt and safe_halt both latch the safe state and stop running the program (takt does
// not leave outputs where a faulted program put them); the scan thread keeps reading inputs so
// the status stays live. restart latches the safe state, cold-restarts the program
// (Engine::restart), releases the safe state and goes on at the next release — at most
// `restartLimit` times within `restartWindowNs`; a program that keeps faulting after that is
// halted instead of being restarted forever.
//
// Control (ARCHITECTURE.md "Threads"): one control thread submits ScanCommands through a
// lock-free SPSC queue; the scan thread applies every queued command at the next cycle boundary
// (after the inputs are read, before the program runs), also while paused, stopped or halted, and
// counts it done. The scan thread never waits for the control side and takes no lock it can hold.
//
// Task threads: a module with two or more TASKs whose runner can run tasks apart
// (Engine::enableTaskThreads) runs every task on a scan thread of its own (task_threads.cpp):
// a cyclic task released on absolute deadlines at its own interval from a common start, an event
// task once per rising edge of its SINGLE variable as the base cycle samples it. The scan thread
// above stays the base cycle: drivers, commands, the programs bound to no task, the snapshot.
// Task threads take no lock: they wait on their own futex word (TaskThread::signal), and report
// statistics through single-writer histograms and atomics and a fault through a one-slot hand-off
// the base cycle takes. An online change or restart parks every task at its cycle boundary,
// lower priorities first, and applies at a base-cycle boundary once all are parked.
// The process image stays the base cycle's: it runs the drivers (at the fastest task's interval
// when that is shorter than the configured period), applies the forces and exchanges the image
// with each task through lock-free triple buffers (task_exchange.h). A task applies the
// data-image forces itself; a replaced force table counts as done only once no task still runs a
// cycle that began under it (beginForceGrace), so the submitter may then free it.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "takt/engine/config.h"
#include "takt/engine/cpu_latency.h"
#include "takt/engine/engine.h"
#include "takt/engine/histogram.h"
#include "takt/engine/process_io.h"
#include "takt/engine/scan_command.h"
#include "takt/engine/seqlock.h"
#include "takt/engine/spsc_queue.h"
#include "takt/engine/trace_recorder.h"
#include "takt/engine/value_watch.h"
#include "takt/vm/debug.h"

namespace takt::engine {

// CLOCK_MONOTONIC in ns.
[[nodiscard]] std::int64_t monotonicNs() noexcept;

// The Engine's clock in the live runtime: the scan loop sets it to the cycle's release time on
// the absolute CLOCK_MONOTONIC grid (start + k * period), so TIME() and timers read one value
// for the whole cycle and task intervals fall due exactly; how late the thread actually woke is
// measured separately (start lateness).
class CycleClock final : public Clock {
public:
    [[nodiscard]] std::int64_t nowNs() override { return now_; }
    // CLOCK_REALTIME (a vDSO read: no lock, no allocation), read by the engine at the cycle's start.
    [[nodiscard]] std::int64_t wallNs() override;
    void set(std::int64_t ns) { now_ = ns; }

private:
    std::int64_t now_ = 0;
};

// Where retained values go (runtime.toml [runtime.retain]). save() is called with a copy of the
// data image taken at a cycle boundary and the module that image belongs to (it changes with an
// online change), on a low-priority thread every save interval, and on the stopping thread after
// the last cycle; it must not keep the span. restore() is called once before the first cycle of
// a warm start, after the cold initialisation, to put the RETAIN variables back; false with
// `message` when nothing usable was found (the start stays cold).
enum class RetainSaveResult : std::uint8_t { Unchanged, Saved, Failed };

class RetainSink {
public:
    virtual ~RetainSink() = default;
    virtual RetainSaveResult save(const bytecode::Module& module, std::span<const std::uint8_t> image) noexcept = 0;
    virtual bool restore(LoadedProgram& program, std::string& message) = 0;
};

struct ScanOptions {
    std::int64_t periodNs = 10'000'000;
    RuntimeConfig::Watchdog watchdog;
    FaultAction faultPolicy = FaultAction::SafeHalt;
    RuntimeConfig::Realtime realtime;
    std::int64_t retainIntervalNs = 1'000'000'000;
    bool safeOutputsWhileHalted = false; // [runtime.debug] outputs = "safe"
    bool startPaused = false;            // paused before the first cycle (runtime.resume runs it)
    // Fault restarts allowed within restartWindowNs (at most kMaxRestartLimit).
    static constexpr std::uint32_t kMaxRestartLimit = 1024;
    std::uint32_t restartLimit = 5;
    std::int64_t restartWindowNs = 60'000'000'000;

    [[nodiscard]] static ScanOptions fromConfig(const RuntimeConfig& config);
};

[[nodiscard]] const char* scanStateName(ScanState s) noexcept;
[[nodiscard]] const char* faultActionName(FaultAction a) noexcept;

enum class ScanEventKind : std::uint8_t {
    CycleOverrun,
    RuntimeFault,
    WatchdogTimeout,
    IoFault, // a driver that fails closed (on_error = "fault") reported faulted
    Restart, // the program was restarted (fault policy, or runtime.restart)
    Halt,    // halted after a fault
    Paused,
    Resumed,
    Stopped, // runtime.stop
    Started, // runtime.start
    ReloadApplied,
};
// The fault record's kind for a fault event: "runtime", "watchdog" or "io" ("" for other events).
[[nodiscard]] const char* faultKindName(ScanEventKind k) noexcept;
[[nodiscard]] const char* scanEventName(ScanEventKind k) noexcept; // "cycle_overrun", ...

struct ScanEvent {
    ScanEventKind kind = ScanEventKind::CycleOverrun;
    std::uint64_t cycle = 0;
    std::int64_t timeNs = 0;  // CLOCK_MONOTONIC
    std::int64_t valueNs = 0; // cycle_overrun: execution time (start to end, I/O included)
    std::uint32_t missed = 0; // cycle_overrun: releases skipped
    std::int64_t lateNs = 0;  // cycle_overrun: how late the cycle started after its release
};

inline constexpr std::size_t kSnapshotIoBytes = 32;

// What other threads see after every cycle (seqlocked copy).
struct ScanSnapshot {
    std::uint64_t cycles = 0;
    std::uint64_t overruns = 0;
    std::uint64_t missedReleases = 0;
    std::uint64_t faults = 0;
    std::uint64_t watchdogTrips = 0;
    std::uint64_t restarts = 0;
    std::uint64_t reloads = 0;
    std::uint64_t commandsDone = 0;
    std::int64_t lastStartNs = 0;
    std::int64_t lastExecNs = 0;
    std::int64_t lastLatenessNs = 0;
    ScanState state = ScanState::Stopped;
    IoHealthSummary io;
    std::uint32_t inputBytes = 0; // valid bytes in `inputs` / `outputs`
    std::uint32_t outputBytes = 0;
    std::array<std::uint8_t, kSnapshotIoBytes> inputs{};
    std::array<std::uint8_t, kSnapshotIoBytes> outputs{};
};

// A TASK on a scan thread of its own. The task thread writes the statistics; `fault` and
// `report` are its one-slot hand-off to the base cycle, which clears `fault` when it has handled it.
struct TaskThread {
    std::thread thread;
    std::size_t task = 0;
    std::string name;            // the TASK's name (status line)
    std::int64_t intervalNs = 0; // 0 with `event`: released by the base cycle
    bool event = false;
    std::uint32_t priority = 0; // IEC PRIORITY (0 highest)
    int boost = 0;              // SCHED_FIFO level relative to [runtime.realtime] priority; nice level
    std::atomic<bool> abort{false};
    std::atomic<std::int64_t> busySince{0}; // heartbeat for the watchdog
    std::atomic<std::int64_t> trippedAt{0};
    std::atomic<std::uint32_t> signal{0};   // bumped (and notified) to wake the thread
    std::atomic<std::uint64_t> released{0}; // event releases posted by the base cycle
    std::atomic<std::int64_t> releasedAt{0};
    std::atomic<bool> parked{false};
    // Bumped when a cycle starts and when it ends (odd: inside one), so the base cycle knows
    // when the task has left every cycle that began under a replaced force table.
    std::atomic<std::uint64_t> cycleMark{0};
    std::uint64_t graceMark = 0;             // base cycle: cycleMark when the force table was replaced
    std::atomic<int> fault{0};               // 0, or 1 + ScanLoop::FaultKind waiting for the base cycle
    std::atomic<int>* haltedTasks = nullptr; // the loop's count of tasks halted in the debugger
    int wakeFd = -1;                         // the loop's commandWakeFd(): a halt wakes the control thread
    FaultReport report;
    std::atomic<std::uint64_t> cycles{0}, overruns{0}, missed{0};
    std::atomic<std::int64_t> lastExecNs{0}, maxPauseNs{0};
    // The last park's length and the parks so far: `parks` moves after `lastPauseNs` is stored
    // (release), so a reader that sees it move (acquire) reads that park's length.
    std::atomic<std::int64_t> lastPauseNs{0};
    std::atomic<std::uint64_t> parks{0};
    // What a park added to the task's next release: the start lateness of the first cycle after
    // it. `resumes` moves after it is stored, as `parks` does for `lastPauseNs`. A task parked
    // between its releases starts that cycle as late as any other; one whose release fell due
    // while it stood parked starts late by the rest of the park.
    std::atomic<std::int64_t> lateAfterParkNs{0};
    std::atomic<std::uint64_t> resumes{0};
    bool afterPark = false; // task thread: the next cycle is the first after a park
    std::atomic<bool> ready{false};
    std::vector<std::string> warnings; // written before `ready`, read by start() after it
    // Halts the task at a breakpoint (takt/vm/debug.h). While halted the watchdog does not count
    // (busySince is 0) and the time halted counts neither as execution time nor as an overrun.
    std::unique_ptr<vm::Debugger> debugger;
    std::int64_t haltedAt = 0;   // task thread: when the halt began
    std::int64_t busyAtHalt = 0; // task thread: busySince when it began
    std::int64_t haltedNs = 0;   // task thread: time halted in the cycle in progress
};

// With a scan thread per task, a program whose task list differs (names, intervals, priorities
// or SINGLE) cannot replace the running one by an online change: the threads are made at start.
// The control thread refuses such a change before it submits it; the scan thread checks again.
[[nodiscard]] bool sameTasks(const bytecode::Module& a, const bytecode::Module& b) noexcept;
inline constexpr const char* kTasksChangedRefusal =
    "the tasks changed (names, intervals, priorities or SINGLE): restart takt to load this program";

struct FaultRecord {
    std::string kind; // "runtime" | "watchdog" | "io"
    FaultReport report;
    FaultAction action = FaultAction::SafeHalt;
    std::uint64_t cycle = 0;
};

class ScanLoop {
public:
    static constexpr std::size_t kEventCapacity = 64;
    static constexpr std::size_t kCommandCapacity = 64;
    static constexpr std::size_t kMaxTaskStats = 16; // tasks beyond are in the overall figures only

    ScanLoop(Engine& engine, CycleClock& clock, ProcessIo& io, const ScanOptions& options);
    ~ScanLoop();
    ScanLoop(const ScanLoop&) = delete;
    ScanLoop& operator=(const ScanLoop&) = delete;

    // Sizes the process image, wires the abort flag, starts the scan and watchdog threads.
    // Realtime settings that are not permitted degrade with a warning (warnings()).
    bool start(std::string& error);
    // Ends the scan at the next cycle boundary, joins the threads, latches the safe state and
    // hands a last snapshot to the retain sink. Idempotent.
    void stop();

    void setRetainSink(RetainSink* sink) { retainSink_ = sink; } // before start()

    [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }
    [[nodiscard]] ScanSnapshot snapshot() const noexcept { return snapshot_.load(); }
    [[nodiscard]] const LatencyHistogram& execTime() const noexcept { return exec_; }
    [[nodiscard]] const LatencyHistogram& lateness() const noexcept { return lateness_; }
    [[nodiscard]] std::vector<std::uint64_t> taskOverruns() const;
    // How often the watchdog thread has woken up to look at the cycles (tests: at most once per
    // timeout, capped at 100 ms, and at a busy cycle's deadline; not every few milliseconds).
    [[nodiscard]] std::uint64_t watchdogLooks() const noexcept { return watchdogLooks_.load(); }
    // Per task (Module::tasks index < kMaxTaskStats, else nullptr): execution time of the task's
    // programs and start lateness against the cycle's release.
    [[nodiscard]] const LatencyHistogram* taskExecTime(std::size_t t) const noexcept;
    [[nodiscard]] const LatencyHistogram* taskLateness(std::size_t t) const noexcept;
    // Whether tasks run on scan threads of their own (after start(), until stop()).
    [[nodiscard]] bool taskThreads() const noexcept { return taskThreadCount_ > 0; }
    // Per task on its own thread (nullptr otherwise): cycles, overruns, the longest park. Kept
    // after stop() until the next start().
    [[nodiscard]] const TaskThread* taskThread(std::size_t t) const noexcept {
        return t < taskThreadsMade_.load(std::memory_order_acquire) ? &taskThreads_[t] : nullptr;
    }
    // The debugger of task `t` on its own thread (nullptr otherwise): attach it, set breakpoints
    // in the program's stop map (LoadedProgram::stops), then see where it halts and resume it.
    // stop() detaches every one, so a halted task never keeps the runtime from stopping.
    [[nodiscard]] vm::Debugger* taskDebugger(std::size_t t) const noexcept {
        return t < taskThreadsMade_.load(std::memory_order_acquire) ? taskThreads_[t].debugger.get() : nullptr;
    }
    // The debugger of the base cycle's thread when the program runs there (one task, or none:
    // no task threads), else nullptr. It halts the whole cycle: while halted the scan thread
    // neither reads inputs nor writes outputs (they hold), its watchdog does not count, and every
    // base period it still applies the commands that read and write values, forces and
    // subscriptions (var.read, var.write, var.force, the change stream); the commands that change
    // the run state (pause, stop, restart, online change) wait for the cycle to finish.
    [[nodiscard]] vm::Debugger* baseDebugger() const noexcept { return baseDebug_.load(std::memory_order_acquire); }
    // Whether commands of this kind are applied while the base cycle is halted in the debugger.
    [[nodiscard]] static bool servedWhileHalted(ScanCommandKind kind) noexcept;
    // Trace slot `i` (< kMaxTraces): the control thread attaches a recorder for a task there
    // (TraceSlot::kBaseCycle for a program without TASKs); the task's thread samples it at the
    // end of each of the task's cycles.
    [[nodiscard]] TraceSlot& traceSlot(std::size_t i) noexcept { return traces_[i]; }
    [[nodiscard]] std::uint64_t retainSaves() const noexcept { return retainSaves_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t retainFailures() const noexcept {
        return retainFailures_.load(std::memory_order_relaxed);
    }
    // How the save stop() made went (Unchanged without a retain sink): a failed one means the
    // RETAIN values of the last stretch of the run are lost, which the caller must report.
    [[nodiscard]] RetainSaveResult finalRetainSave() const noexcept { return finalRetain_; }
    // After stop(): whether the run ended with the program halted by a fault (a runtime.stop
    // after the fault does not clear it; a restart does).
    [[nodiscard]] bool endedHaltedByFault() const noexcept { return !running_.load() && faultLatched_; }

    // Control thread only (the queue's single producer). False when the queue is full. The
    // command counts as done once commandsDone() reaches the value commandsSubmitted() had
    // right after this call; its result block is complete then.
    bool submit(const ScanCommand& command) noexcept;
    [[nodiscard]] std::uint64_t commandsSubmitted() const noexcept { return submitted_; }
    [[nodiscard]] std::uint64_t commandsDone() const noexcept { return commandsDone_.load(std::memory_order_acquire); }
    // An eventfd signalled at a cycle boundary where the scan thread applied commands or
    // recorded events (after it published the snapshot they show), and by the RETAIN writer after
    // a save, so the control thread answers commands and passes events on when they happen
    // instead of polling. The loop owns it (the control side waits on a dup); -1 when the system
    // refused one.
    [[nodiscard]] int commandWakeFd() const noexcept { return commandWake_; }
    [[nodiscard]] std::size_t queueDepth() const noexcept { return commands_.size(); }
    // Whether the scan thread is cycling (commands will be applied).
    [[nodiscard]] bool running() const noexcept { return running_.load(std::memory_order_acquire); }
    [[nodiscard]] std::vector<ScanEvent> events() const; // oldest first, at most kEventCapacity
    [[nodiscard]] std::uint64_t eventCount() const noexcept { return eventCount_.load(std::memory_order_acquire); }
    [[nodiscard]] std::optional<FaultRecord> lastFault() const;
    [[nodiscard]] const ScanOptions& options() const { return options_; }

private:
    void scanMain();
    void watchdogMain();
    void retainMain();
    void runOneCycle(std::int64_t release, std::int64_t start);
    void idleCycle(std::int64_t release, std::int64_t start);
    // True when the force table changed. `halted`: called while the base cycle is halted in the
    // debugger (serveHalted): only the commands servedWhileHalted() apply, the rest wait.
    bool applyCommands(bool halted = false) noexcept;
    // The base cycle's debugger halts or resumes it (scan thread): the watchdog's heartbeat.
    static void baseHaltChanged(void* context, bool halted) noexcept;
    // Every base period while the base cycle is halted (scan thread): commands, subscriptions.
    static void serveHalted(void* context) noexcept;
    // With task threads: a SetForces counts as done only once every task has left the cycle it
    // was in when the table was replaced, so the submitter may free the old table then.
    void beginForceGrace() noexcept;
    [[nodiscard]] bool forceGraceOver() const noexcept;
    void applyCommand(const ScanCommand& c) noexcept;
    void applyReload(const ScanCommand& c) noexcept;
    [[nodiscard]] std::span<std::uint8_t> imageOf(ImageArea a) noexcept;
    void setState(ScanState state, ScanEventKind event) noexcept;
    void recordTaskStats(std::int64_t release) noexcept;
    bool restartAllowed(std::int64_t now) noexcept;
    void countRetain(RetainSaveResult r) noexcept;
    void accountOverrun(std::int64_t release, std::int64_t end, std::int64_t& next);
    enum class FaultKind : std::uint8_t { Runtime, Watchdog, Io };
    void handleFault(FaultKind kind, const FaultReport& report);
    bool restartAfterFault(std::int64_t now, bool stepping);
    // Task threads (task_threads.cpp).
    void startTaskThreads();
    void stopTaskThreads(std::int64_t giveUp);
    void taskMain(TaskThread& w);
    void runTaskCycle(TaskThread& w, std::int64_t release);
    void parkTask(TaskThread& w);
    [[nodiscard]] bool mayPark(const TaskThread& w) const noexcept;
    [[nodiscard]] bool allTasksParked() const noexcept;
    bool exclusive() noexcept; // requests the park; true once every task is parked
    void unparkTasks() noexcept;
    void wakeTask(TaskThread& w) noexcept;
    void releaseEventTasks() noexcept;
    void collectTaskFaults();
    void finishExclusive() noexcept;
    // Trips the tasks whose cycle has run longer than `timeout`; returns the earliest deadline
    // of those still within it (INT64_MAX when none is busy).
    std::int64_t watchTasks(std::int64_t now, std::int64_t timeout) noexcept;
    // The watchdog's look at one cycle (the base cycle's or a task thread's), busy since `busy`
    // (0: idle): true when it has run longer than `timeout` and was not tripped yet (`tripped`
    // then remembers it); a cycle still within its time lowers `next` to its deadline.
    static bool overran(std::int64_t busy, std::atomic<std::int64_t>& tripped, std::int64_t now, std::int64_t timeout,
                        std::int64_t& next) noexcept;
    // The base cycle's sleep until `next` with task threads: woken when the last task parks, it
    // applies the waiting online change or restart at once instead of at its next release.
    void waitRelease(std::int64_t next) noexcept;
    [[nodiscard]] bool exclusiveWaiting() const noexcept;
    [[nodiscard]] bool ioFailedClosed();
    void pushEvent(const ScanEvent& e) noexcept;
    void wakeControl() noexcept; // signals commandWake_
    void publish() noexcept;
    void publishWatch() noexcept;
    // The traces of task `task` (TraceSlot::kBaseCycle: the program without TASKs) at the end of
    // its cycle `cycle` (trace_recorder.h).
    void sampleTraces(std::uint32_t task, std::uint64_t cycle, std::int64_t timeNs) noexcept;
    // The base cycle without task threads: the traces of the tasks that ran in it.
    void sampleBaseTraces(std::int64_t timeNs) noexcept;
    // Applied with an online change while every task is parked: each trace moves onto its
    // variables in the new program or ends.
    void followTraces(const TraceLayout* layouts) noexcept;
    void maybeHandRetain(std::int64_t now) noexcept;
    [[nodiscard]] ProcessImageView view() noexcept;
    // Scan thread (or the control thread once the scan thread has ended): the safe state through
    // the process I/O, with safeLatched_ kept in step for what io.read and the status report.
    void latchSafeState() noexcept;
    void releaseSafeState() noexcept;
    // [runtime.debug] outputs = "safe": the safe state while any task (or the base cycle) is
    // halted in the debugger, released when none is; a latch for another reason stays.
    void followHalts() noexcept;
    // A watchdog trip or a task fault not yet collected (its safe state is applied, not latched).
    [[nodiscard]] bool tripPending() const noexcept;
    // %Q byte `byte` as the field sees it: the program's output, or the safe image while latched.
    [[nodiscard]] std::uint8_t outputSeen(std::size_t byte) noexcept;
    void readSafeOutputs(const ImageRange& r, std::uint8_t* out) noexcept;

    Engine& engine_;
    CycleClock& clock_;
    ProcessIo& io_;
    ScanOptions options_;
    RetainSink* retainSink_ = nullptr;
    std::vector<std::string> warnings_;
    CpuLatencyRequest cpuLatency_; // held from start() to stop()

    std::thread scanThread_, watchdogThread_, retainThread_;
    std::atomic<bool> stopRequested_{false};
    std::atomic<bool> running_{false};
    std::atomic<bool> scanExited_{false};
    std::atomic<bool> stopAbort_{false};
    std::atomic<int> setupDone_{0};
    std::atomic<bool> abort_{false};         // the VM's abort flag
    std::atomic<std::int64_t> busySince_{0}; // heartbeat: start of the cycle in progress, 0 when idle
    std::atomic<std::int64_t> trippedCycle_{0};
    std::atomic<std::uint64_t> watchdogTrips_{0};
    std::atomic<std::uint64_t> watchdogLooks_{0}; // the watchdog thread's wake-ups (watchdogLooks())

    // Scan-thread state (published through snapshot_).
    ScanSnapshot current_;
    FaultReport faultScratch_;
    std::int64_t nextRetainNs_ = 0;
    std::unique_ptr<std::atomic<std::uint64_t>[]> taskOverruns_;
    std::atomic<std::size_t> taskCount_{0};    // tasks with statistics (<= kMaxTaskStats)
    bool faultLatched_ = false;                // halted by a fault and not restarted since (survives a Stop)
    bool safeLatched_ = false;                 // the safe state is latched (halted, stopped)
    bool haltSafe_ = false;                    // scan thread: outputs safe for a debugger halt
    bool baseHalted_ = false;                  // scan thread: the base cycle is halted
    std::atomic<int> haltedTasks_{0};          // task threads halted in the debugger
    std::uint32_t stepsLeft_ = 0;              // Step: cycles still to run before pausing
    std::vector<std::int64_t> recentRestarts_; // ring of fault-restart times, restartLimit long (start())
    std::size_t restartCount_ = 0;

    // Control hand-off.
    SpscQueue<ScanCommand, kCommandCapacity> commands_;
    std::uint64_t submitted_ = 0; // control thread only
    std::atomic<std::uint64_t> commandsDone_{0};
    int commandWake_ = -1;
    bool wakeDue_ = false;        // scan thread: an event was recorded since the last publish()
    ValueWatch* watch_ = nullptr; // SetWatch: what the subscriptions read, published after every cycle
    std::array<TraceSlot, kMaxTraces> traces_;

    std::unique_ptr<TaskThread[]> taskThreads_;
    std::size_t taskThreadCount_ = 0;             // running task threads (start() to stop())
    std::atomic<std::size_t> taskThreadsMade_{0}; // entries of taskThreads_ readers may look at
    std::atomic<bool> parkRequested_{false};
    std::atomic<std::uint32_t> baseSignal_{0}; // the base cycle's futex word (the last task parked)
    std::atomic<bool> tasksMayRun_{false};     // the state is Running (published with the snapshot)
    std::int64_t tasksStartNs_ = 0;            // written before tasksGo_ is set, read by the task threads after
    std::atomic<bool> tasksGo_{false};         // every task thread is set up: the release grid starts
    std::int64_t cycleIntervalNs_ = 0; // the configured base period (options_.periodNs may be shorter with tasks)
    bool forceGrace_ = false;          // a SetForces waits for every task to leave its cycle (beginForceGrace)
    bool pendingFaultRestart_ = false; // a fault restart waits for every task to park
    bool pendingStepping_ = false;

    // The base cycle's debugger (baseDebugger()); made by start() when no task runs apart.
    std::unique_ptr<vm::Debugger> baseDebugger_;
    std::atomic<vm::Debugger*> baseDebug_{nullptr};
    std::int64_t haltedAt_ = 0;   // scan thread: when the base cycle's halt began
    std::int64_t busyAtHalt_ = 0; // scan thread: busySince_ then
    std::int64_t haltedNs_ = 0;   // scan thread: time halted in the cycle in progress

    LatencyHistogram exec_, lateness_;
    std::unique_ptr<LatencyHistogram[]> taskExec_, taskLate_;
    std::atomic<std::uint64_t> retainSaves_{0}, retainFailures_{0};
    RetainSaveResult finalRetain_ = RetainSaveResult::Unchanged; // control thread, set by stop()
    Seqlock<ScanSnapshot> snapshot_;
    std::array<Seqlock<ScanEvent>, kEventCapacity> events_;
    std::atomic<std::uint64_t> eventCount_{0};

    mutable std::mutex faultMutex_; // taken only on the fault path and by readers
    std::optional<FaultRecord> lastFault_;

    // Who holds retainBuffer_ and retainModule_: the scan thread (Idle, Swapping) or the retain
    // writer (CopyWaiting).
    enum class RetainHandoff : std::uint8_t {
        Idle,        // the scan thread may fill the buffer with the next copy
        CopyWaiting, // a copy is waiting for the writer (or being written)
        Stop,        // the writer thread exits
        Swapping,    // the scan thread swaps the buffer and module for an online change
    };
    std::atomic<RetainHandoff> retainState_{RetainHandoff::Idle};
    std::vector<std::uint8_t> retainBuffer_;
    const bytecode::Module* retainModule_ = nullptr; // the module retainBuffer_'s image belongs to
};

} // namespace takt::engine
