#pragma once
// The cycle executor: one loaded program, its process image (%I/%Q/%M), task scheduling on an
// injectable clock, cold/warm restart and online change (ARCHITECTURE.md).
//
// A cycle: read the clock once; copy %I (and bound inputs) into the data image; run the tasks
// that are due in priority order (lower number first, ties in declaration order), each task's
// programs in declaration order; then every program bound to no task; copy outputs to %Q/%M.
// A fault aborts the rest of the cycle; writes already done stay.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "takt/engine/program.h"
#include "takt/engine/task_exchange.h"
#include "takt/engine/transfer.h"

namespace takt::engine {

// DT#2024-01-01-00:00:00 in ns: where the virtual wall clock of the harness and of `takt test`
// starts, so NOW_DT() and RTC give the same dates on every run (docs/harness.md).
inline constexpr std::int64_t kVirtualWallEpochNs = 1'704'067'200'000'000'000;

class Clock {
public:
    virtual ~Clock() = default;
    // The cycle clock (TIME(), timers, task intervals).
    [[nodiscard]] virtual std::int64_t nowNs() = 0;
    // The date and time in ns since 1970-01-01 (NOW_DT(), RTC); read once per cycle, after nowNs().
    [[nodiscard]] virtual std::int64_t wallNs() = 0;
};

// Time moves only when told to (the harness; ARCHITECTURE.md "Determinism"). The wall clock
// moves with it: a fixed epoch (kVirtualWallEpochNs unless set) plus the virtual time.
class VirtualClock final : public Clock {
public:
    [[nodiscard]] std::int64_t nowNs() override { return now_; }
    [[nodiscard]] std::int64_t wallNs() override { return wall(); }
    [[nodiscard]] std::int64_t now() const { return now_; }
    [[nodiscard]] std::int64_t wall() const {
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(wallEpoch_) + static_cast<std::uint64_t>(now_));
    }
    void advance(std::int64_t ns) { now_ += ns; }
    void set(std::int64_t ns) { now_ = ns; }
    // The wall clock reads `ns` now and runs on with the virtual time.
    void setWall(std::int64_t ns) {
        wallEpoch_ = static_cast<std::int64_t>(static_cast<std::uint64_t>(ns) - static_cast<std::uint64_t>(now_));
    }

private:
    std::int64_t now_ = 0;
    std::int64_t wallEpoch_ = kVirtualWallEpochNs;
};

enum class RestartMode : std::uint8_t { Cold, Warm };

// A binding between a data-image variable and the process image, added at run time
// (harness bind_direct) in addition to the Module's own located variables.
struct ForceTable; // scan_command.h

struct DirectBinding {
    bytecode::IoArea area = bytecode::IoArea::Input;
    std::uint32_t byteOffset = 0;
    std::uint8_t bit = 0;
    std::uint32_t size = 0; // 0: one bit
    std::uint32_t imageOffset = 0;
};

// Task scheduling state, one entry per Module::tasks index.
struct TaskSchedule {
    std::vector<std::int64_t> lastRun;    // cyclic tasks: last release
    std::vector<std::uint8_t> lastSingle; // event tasks: previous SINGLE value
    std::vector<std::uint32_t> order;     // task indices by priority, ties in declaration order
    std::vector<bool> due;                // due in the last cycle
    std::vector<std::int64_t> start, end; // per-task timestamps of the last cycle
    // Times each task ran in the base cycle since the schedule started afresh (the harness's
    // per-task cycle counts; a task on a thread of its own counts in its TaskThread instead).
    std::vector<std::uint64_t> runs;
    // By Module::io index: 1 when a task's TaskEntry::io lists the binding, so with task threads
    // that task copies it and the base cycle does not (empty when the module has fewer than two tasks).
    std::vector<std::uint8_t> ioOwned;
    // With task threads: how each task exchanges the process image with the base cycle (sized
    // by Engine::enableTaskThreads and prepareChange, off the cycle; reset() keeps it).
    TaskExchanges exchange;
    // Starts afresh for `m`. Allocates only when `m` has more tasks than the vectors hold.
    void reset(const bytecode::Module& m);
};

// An online change prepared off the cycle (ARCHITECTURE.md "Online change"): a value its
// submitter owns and the Reload command carries to the scan thread, not state kept inside the
// engine that thread runs. Engine::applyChange() swaps it with the running state, so afterwards
// it holds what the change replaced (old program, plan, task schedule, outgrown process-image
// areas, the previous retain buffer) for the submitter to free: the swap frees nothing.
struct PreparedChange {
    std::unique_ptr<LoadedProgram> program;         // cold-initialised, its runner state built (null: failed)
    TransferPlan plan;                              // how the running data moves over; its report names both hashes
    TaskSchedule tasks;                             // the new program's schedule
    std::array<std::vector<std::uint8_t>, 3> areas; // by bytecode::IoArea: grown areas it needs (else empty)
    // The retain plan: a buffer sized for the new data image, swapped with the scan loop's retain
    // hand-off buffer at the change so the writer never sees an image of the wrong size.
    std::vector<std::uint8_t> retainBuffer;
    FaultReport fault;    // why preparing failed (init fault, bad plan)
    bool applied = false; // set by applyChange: the members now hold the replaced state

    // Prepared and not applied yet: what a Reload command may apply.
    [[nodiscard]] bool ok() const { return program != nullptr && !applied; }
};

class Engine {
public:
    Engine(std::unique_ptr<CodeRunner> runner, Clock& clock);

    // Takes ownership of a program and cold-starts it (initial image + init code). Runs no cycle.
    // On an init fault the engine keeps no program and returns false with `report`.
    bool load(std::unique_ptr<LoadedProgram> program, FaultReport& report);
    [[nodiscard]] bool loaded() const { return program_ != nullptr; }
    [[nodiscard]] LoadedProgram& program() { return *program_; }
    [[nodiscard]] const LoadedProgram& program() const { return *program_; }

    // Runs one cycle. False when a program faulted; `report` then names it.
    bool runCycle(FaultReport& report);
    [[nodiscard]] std::uint64_t cycleCount() const { return cycles_; }
    [[nodiscard]] std::int64_t lastCycleTime() const { return lastNow_; }
    // Whether task `t` (Module::tasks index) was due in the last cycle (overrun accounting).
    [[nodiscard]] bool taskRanLastCycle(std::size_t t) const { return t < tasks_.due.size() && tasks_.due[t]; }
    // How many times task `t` ran in the base cycle since the load, the last restart or an online
    // change of the number of tasks (TaskSchedule::runs); 0 for an index beyond the tasks.
    [[nodiscard]] std::uint64_t taskRuns(std::size_t t) const { return t < tasks_.runs.size() ? tasks_.runs[t] : 0; }
    // Forwarded to the runner (CodeRunner::setAbortFlag); off the cycle.
    void setAbortFlag(const std::atomic<bool>* flag) { runner_->setAbortFlag(flag); }
    // Forwarded to the runner (CodeRunner::setDebugger): the debugger of the base cycle's thread,
    // for the programs runCycle() runs; off the cycle.
    void setDebugger(vm::Debugger* debugger) { runner_->setDebugger(debugger); }

    // Forced values applied by every cycle (scan_command.h ForceTable); nullptr for none. The
    // table must outlive its use; the scan loop swaps it at a cycle boundary, after
    // restoreFieldInputs() under the old one.
    // With task threads, a task reads the table at its cycle start and applies its data-image
    // entries itself: the scan loop keeps a replaced table alive until every task has left the
    // cycle it started under it (ScanLoop's grace period).
    void setForces(const ForceTable* forces) {
        forces_.store(forces); // sequentially consistent: ScanLoop::forceGraceOver
        inputsForced_ = false;
    }
    [[nodiscard]] const ForceTable* forces() const { return forces_.load(std::memory_order_relaxed); }
    // Writes the forced %I values over the input area, keeping the field's bytes under them
    // (once per restoreFieldInputs()). The scan loop calls it right after the drivers filled the
    // inputs; runCycle applies the data-image and output forces itself.
    void applyInputForces() noexcept;
    // Puts the field's bytes back under the forced %I values: the scan loop calls it before the
    // drivers read the inputs, so they find their own last values there, not the forced ones.
    void restoreFieldInputs() noexcept;

    // Per-task execution timestamps (runtime.stats): with a timer set, every cycle records when
    // each due task started and ended. The live runtime passes CLOCK_MONOTONIC; the harness
    // leaves it unset so virtual-time runs stay free of real clock reads.
    using Timer = std::int64_t (*)() noexcept;
    void setTaskTimer(Timer timer) { timer_ = timer; }
    [[nodiscard]] std::int64_t taskStartNs(std::size_t t) const { return tasks_.start[t]; }
    [[nodiscard]] std::int64_t taskEndNs(std::size_t t) const { return tasks_.end[t]; }

    // Task threads (scan_loop.h): with two or more tasks and a runner that can (CodeRunner::
    // forTask), every task gets a runner of its own on a call stack of its own and runCycle() no
    // longer runs tasks: it runs the programs bound to no task, copies the bindings no task owns,
    // and samples the event tasks' SINGLE edges (taskRanLastCycle() then says which task was
    // triggered). A task thread runs its task with runTask(). Off the cycle; false when not
    // possible (the tasks then stay in the base cycle). disableTaskThreads() goes back.
    bool enableTaskThreads();
    void disableTaskThreads();
    [[nodiscard]] bool taskThreads() const { return threaded_; }
    [[nodiscard]] CodeRunner& taskRunner(std::size_t t) { return *taskRunners_[t]; }
    // One cycle of task `t` on its own thread, released at `now` (its own clock): copies in the
    // inputs its programs use (TaskEntry::io) from the newest the base cycle published, applies
    // the data-image forces, runs its programs in declaration order with its own runner, applies
    // the forces again and hands its outputs to the base cycle (task_exchange.h). False with
    // `report` on a fault. Touches no state of the base cycle, so task threads and the base
    // cycle may run at once.
    bool runTask(std::size_t t, std::int64_t now, std::int64_t wallNs, FaultReport& report);
    // Base cycle with task threads: publishes %I and %M to every task as its next inputs (the
    // scan loop calls it after a cycle the program did not run in; runCycle does it itself).
    void publishTaskInputs() noexcept;

    // Cold: everything re-initialised. Warm: RETAIN variables keep their values. Task state
    // (interval phase, SINGLE edges) starts afresh; the process image is kept. Allocates
    // nothing (LoadedProgram::prepareWarmRestart), so the scan thread may call it.
    bool restart(RestartMode mode, FaultReport& report);

    // Online change, step 1 (off the cycle): cold-initialise `next`, compute the plan from the
    // current program and let the runner prepare for it. `warm` restricts the plan to RETAIN
    // variables (warm-restart semantics). Reads only the current program's module (immutable)
    // and the process-image area sizes (which change only at a cycle boundary), so the control
    // thread may call it while the scan thread runs cycles. Not ok() with `fault` on failure.
    // `previewOnly`: the plan and its report alone (a dry run): the runner does not prepare the
    // program (no native compile) and the result is not ok() to apply.
    [[nodiscard]] PreparedChange prepareChange(std::unique_ptr<LoadedProgram> next, bool warm,
                                               bool previewOnly = false) const;
    // Step 2 (at a cycle boundary, `change.ok()`): memcpy runs, swap. Returns the report of the
    // change; `change` then holds what was replaced. A task keeps its interval phase and SINGLE
    // memory when the task count is unchanged; the priority order is the new one.
    TransferReport applyChange(PreparedChange& change);

    // Process image areas (bytes). Sized from the Module's IO bindings; grown on demand off the
    // cycle (harness addresses beyond the program's own).
    [[nodiscard]] std::vector<std::uint8_t>& area(bytecode::IoArea a);
    [[nodiscard]] const std::vector<std::uint8_t>& area(bytecode::IoArea a) const;
    void ensureArea(bytecode::IoArea a, std::size_t bytes);
    void addBinding(const DirectBinding& b);
    void clearBindings() { extraBindings_.clear(); }

private:
    void resetTaskState();
    void sizeProcessImage();
    [[nodiscard]] std::size_t areaBytesNeeded(const bytecode::Module& m, bytecode::IoArea a) const;
    [[nodiscard]] bool ownedByTask(std::size_t binding) const;
    void copyIn();
    void copyOut();
    void applyDataForces() noexcept;
    void mergeTaskOutputs() noexcept;
    bool coldInit(LoadedProgram& p, FaultReport& report) const;

    std::unique_ptr<CodeRunner> runner_;
    Clock& clock_;
    std::unique_ptr<LoadedProgram> program_;
    std::uint64_t cycles_ = 0;
    std::int64_t lastNow_ = 0;
    std::vector<std::uint8_t> inputs_, outputs_, memory_;
    std::vector<DirectBinding> extraBindings_;
    TaskSchedule tasks_;
    std::atomic<const ForceTable*> forces_{nullptr};
    bool inputsForced_ = false; // forces_ is over %I and its `field` holds the field's bytes
    Timer timer_ = nullptr;
    bool threaded_ = false;
    std::vector<std::unique_ptr<CodeRunner>> taskRunners_; // by task index: call stack t + 1
};

} // namespace takt::engine
