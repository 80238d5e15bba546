// The control side of the scan loop: commands submitted through the SPSC queue and applied by
// the scan thread at the cycle boundary (scan_loop.h, scan_command.h).
#include <algorithm>
#include <span>
#include <utility>

#include <unistd.h>

#include "takt/engine/scan_loop.h"

namespace takt::engine {

bool ScanLoop::submit(const ScanCommand& command) noexcept {
    if (!commands_.push(command)) {
        return false;
    }
    ++submitted_;
    return true;
}

void ScanLoop::setState(ScanState state, ScanEventKind event) noexcept {
    current_.state = state;
    pushEvent(ScanEvent{event, current_.cycles, monotonicNs(), 0, 0});
}

void ScanLoop::beginForceGrace() noexcept {
    forceGrace_ = true;
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        taskThreads_[t].graceMark = taskThreads_[t].cycleMark.load();
    }
}

bool ScanLoop::forceGraceOver() const noexcept {
    for (std::size_t t = 0; t < taskThreadCount_; ++t) {
        const TaskThread& w = taskThreads_[t];
        // Outside a cycle then (even), or past the end of the one it was in.
        if ((w.graceMark & 1u) != 0 && w.cycleMark.load() == w.graceMark) {
            return false;
        }
    }
    return true;
}

bool ScanLoop::servedWhileHalted(ScanCommandKind kind) noexcept {
    switch (kind) {
    case ScanCommandKind::Read:
    case ScanCommandKind::Write:
    case ScanCommandKind::SetForces:
    case ScanCommandKind::SetWatch: return true;
    case ScanCommandKind::Pause:
    case ScanCommandKind::Resume:
    case ScanCommandKind::Step:
    case ScanCommandKind::Stop:
    case ScanCommandKind::Start:
    case ScanCommandKind::Restart:
    case ScanCommandKind::Reload: return false;
    }
    return false;
}

bool ScanLoop::applyCommands(bool halted) noexcept {
    bool forcesChanged = false;
    std::uint64_t applied = 0;
    if (forceGrace_) {
        // The SetForces applied in an earlier cycle, popped and not counted yet: commands behind
        // it wait, so answers still come in the order the commands were sent.
        if (!forceGraceOver()) {
            return false;
        }
        forceGrace_ = false;
        applied = 1;
    }
    while (const ScanCommand* c = commands_.front()) {
        // Halted in the debugger mid-cycle: a change of the run state waits for the cycle's end,
        // and the commands behind it wait too, so they still apply in order.
        if (halted && !servedWhileHalted(c->kind)) {
            break;
        }
        // An online change or a restart rewrites the image every task runs on: it waits until
        // every task thread is parked at its cycle boundary; commands behind it wait too.
        if ((c->kind == ScanCommandKind::Reload || c->kind == ScanCommandKind::Restart) && !exclusive()) {
            break;
        }
        // An online change waits while the retain writer is busy with a copy of the old image
        // (CopyWaiting): the buffer and module it reads are swapped with the program. The writer
        // takes a few milliseconds, so the change lands a cycle or two later; commands behind it
        // wait too, so they still apply in the order they were sent.
        if (c->kind == ScanCommandKind::Reload && retainSink_ != nullptr) {
            RetainHandoff idle = RetainHandoff::Idle;
            if (!retainState_.compare_exchange_strong(idle, RetainHandoff::Swapping, std::memory_order_acq_rel)) {
                break;
            }
        }
        forcesChanged = forcesChanged || c->kind == ScanCommandKind::SetForces || c->kind == ScanCommandKind::Reload;
        const ScanCommandKind kind = c->kind;
        applyCommand(*c);
        commands_.pop();
        if (kind == ScanCommandKind::SetForces && taskThreadCount_ > 0 && !allTasksParked()) {
            beginForceGrace(); // counted done once forceGraceOver()
            if (!forceGraceOver()) {
                break;
            }
            forceGrace_ = false;
        }
        ++applied;
    }
    if (applied == 0) {
        return forcesChanged;
    }
    // The snapshot shows what the commands did before they count as done: a reader woken by
    // the count (runtime.status after runtime.stop) never sees the state of the cycle before.
    current_.commandsDone = commandsDone_.load(std::memory_order_relaxed) + applied;
    publish();
    commandsDone_.fetch_add(applied, std::memory_order_acq_rel);
    // One write(2) per cycle that applied commands (none in a cycle without): the control thread
    // wakes and answers at once.
    wakeControl();
    return forcesChanged;
}

bool sameTasks(const bytecode::Module& a, const bytecode::Module& b) noexcept {
    if (a.tasks.size() != b.tasks.size()) {
        return false;
    }
    for (std::size_t t = 0; t < a.tasks.size(); ++t) {
        const bytecode::TaskEntry& x = a.tasks[t];
        const bytecode::TaskEntry& y = b.tasks[t];
        if (x.name != y.name || x.intervalNs != y.intervalNs || x.priority != y.priority ||
            (x.singleOffset == bytecode::kNone) != (y.singleOffset == bytecode::kNone)) {
            return false;
        }
    }
    return true;
}

namespace {

const char* checkRange(const ImageRange& r, std::size_t size) noexcept {
    if (static_cast<std::size_t>(r.offset) + (r.isBit ? 1u : r.size) > size || (r.isBit && r.bit > 7)) {
        return "the address is outside the image";
    }
    return nullptr;
}

} // namespace

void ScanLoop::readSafeOutputs(const ImageRange& r, std::uint8_t* out) noexcept {
    // While latched, %Q reads what the drivers put on the field: the safe image.
    if (r.isBit) {
        *out = static_cast<std::uint8_t>((outputSeen(r.offset) >> r.bit) & 1u);
        return;
    }
    for (std::uint32_t i = 0; i < r.size; ++i) {
        out[i] = outputSeen(static_cast<std::size_t>(r.offset) + i);
    }
}

std::span<std::uint8_t> ScanLoop::imageOf(ImageArea a) noexcept {
    if (a == ImageArea::Data) {
        return {engine_.program().image(), engine_.program().imageSize()};
    }
    return engine_.area(a == ImageArea::Input    ? bytecode::IoArea::Input
                        : a == ImageArea::Output ? bytecode::IoArea::Output
                                                 : bytecode::IoArea::Memory);
}

void ScanLoop::applyCommand(const ScanCommand& c) noexcept {
    CommandResult& r = *c.result;
    r.ok = true;
    r.refusal = nullptr;
    const ScanState state = current_.state;
    const auto refuse = [&r](const char* why) {
        r.ok = false;
        r.refusal = why;
    };
    switch (c.kind) {
    case ScanCommandKind::Pause:
        if (state == ScanState::Running) {
            stepsLeft_ = 0;
            setState(ScanState::Paused, ScanEventKind::Paused);
        } else if (state != ScanState::Paused) {
            refuse(state == ScanState::Halted ? "the program is halted after a fault" : "the program is stopped");
        }
        break;
    case ScanCommandKind::Resume:
        if (state == ScanState::Paused) {
            stepsLeft_ = 0;
            setState(ScanState::Running, ScanEventKind::Resumed);
        } else if (state == ScanState::Running) {
            stepsLeft_ = 0; // a step in progress becomes a plain run
        } else {
            refuse(state == ScanState::Halted ? "the program is halted after a fault: runtime.restart starts it again"
                                              : "the program is stopped: runtime.start runs it again");
        }
        break;
    case ScanCommandKind::Step:
        if (state != ScanState::Paused || c.count == 0) {
            refuse(c.count == 0 ? "count must be at least 1" : "runtime.step needs a paused program (runtime.pause)");
        } else {
            stepsLeft_ = c.count;
            current_.state = ScanState::Running;
        }
        break;
    case ScanCommandKind::Stop:
        if (state != ScanState::Stopped) {
            stepsLeft_ = 0;
            latchSafeState();
            setState(ScanState::Stopped, ScanEventKind::Stopped);
        }
        break;
    case ScanCommandKind::Start:
        if (state == ScanState::Halted || faultLatched_) {
            // Stopping a halted program does not clear its fault: only a restart re-initialises it.
            refuse("the program is halted after a fault: runtime.restart starts it again");
        } else if (state != ScanState::Running) {
            if (state == ScanState::Stopped) {
                releaseSafeState();
            }
            stepsLeft_ = 0;
            setState(ScanState::Running, ScanEventKind::Started);
        }
        break;
    case ScanCommandKind::Restart:
        // A restart runs the init code; a warm one also saves and restores the RETAIN values.
        // It is a rare operator action, not part of a regular cycle.
        if (!engine_.restart(c.mode, faultScratch_)) {
            refuse("the program faulted while initialising");
            latchSafeState();
            current_.state = ScanState::Halted;
            faultLatched_ = true;
            pushEvent(ScanEvent{ScanEventKind::Halt, current_.cycles, monotonicNs(), 0, 0});
            break;
        }
        if (state == ScanState::Halted || state == ScanState::Stopped) {
            releaseSafeState();
        }
        stepsLeft_ = 0;
        faultLatched_ = false;
        ++current_.restarts;
        setState(ScanState::Running, ScanEventKind::Restart);
        break;
    case ScanCommandKind::Read:
    case ScanCommandKind::Write: {
        // Every range is checked before any is copied: a refused write changes nothing.
        for (std::uint32_t i = 0; i < c.rangeCount; ++i) {
            if (const char* why = checkRange(c.ranges[i], imageOf(c.ranges[i].area).size())) {
                refuse(why);
                break;
            }
        }
        if (!r.ok) {
            break;
        }
        std::uint32_t at = 0;
        for (std::uint32_t i = 0; i < c.rangeCount; ++i) {
            const ImageRange& range = c.ranges[i];
            const std::span<std::uint8_t> image = imageOf(range.area);
            if (c.kind == ScanCommandKind::Read && range.area == ImageArea::Output && (safeLatched_ || haltSafe_)) {
                readSafeOutputs(range, c.readBytes + at);
            } else if (c.kind == ScanCommandKind::Read) {
                readRange(range, image.data(), c.readBytes + at);
            } else {
                writeRange(range, c.writeBytes + at, image.data());
            }
            at += range.valueBytes();
        }
        break;
    }
    case ScanCommandKind::SetForces:
        engine_.restoreFieldInputs(); // under the old table, before it is replaced
        engine_.setForces(c.forces);
        break;
    case ScanCommandKind::Reload: applyReload(c); break;
    case ScanCommandKind::SetWatch: watch_ = c.watch; break;
    }
    r.cycle = current_.cycles;
    r.state = current_.state;
}

void ScanLoop::applyReload(const ScanCommand& c) noexcept {
    CommandResult& r = *c.result;
    if (c.change == nullptr || !c.change->ok()) {
        r.ok = false;
        r.refusal = "no prepared change";
        if (retainSink_ != nullptr) {
            retainState_.store(RetainHandoff::Idle, std::memory_order_release);
        }
        return;
    }
    if (taskThreadCount_ > 0 && !sameTasks(engine_.program().module(), c.change->program->module())) {
        // A task thread per task, with its priority and interval: a changed task list needs a
        // restart of takt (as a download does on other PLCs), not an online change.
        r.ok = false;
        r.refusal = kTasksChangedRefusal;
        if (retainSink_ != nullptr) {
            retainState_.store(RetainHandoff::Idle, std::memory_order_release);
        }
        return;
    }
    engine_.restoreFieldInputs(); // under the old table, before it is replaced
    r.change = engine_.applyChange(*c.change);
    engine_.setForces(c.forces);
    followTraces(c.traces);
    taskCount_.store(std::min(engine_.program().module().tasks.size(), kMaxTaskStats), std::memory_order_relaxed);
    std::swap(retainBuffer_, c.change->retainBuffer);
    retainModule_ = &engine_.program().module();
    if (retainSink_ != nullptr) {
        retainState_.store(RetainHandoff::Idle, std::memory_order_release);
        retainState_.notify_one();
    }
    ++current_.reloads;
    pushEvent(ScanEvent{ScanEventKind::ReloadApplied, current_.cycles, monotonicNs(), r.change.pauseNs, 0});
}

} // namespace takt::engine
