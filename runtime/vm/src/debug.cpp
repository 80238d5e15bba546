// The debugger's runtime half (debug.h): source lines to code, the stop map, and a thread's halt.
#include "takt/vm/debug.h"

#include "takt/common/futex.h"

#include <algorithm>
#include <climits>
#include <ctime>

namespace takt::vm {

using common::futexWait;
using common::futexWake;

namespace {

constexpr std::int64_t kNsPerS = 1'000'000'000;

std::int64_t monotonicNs() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * kNsPerS + ts.tv_nsec;
}

} // namespace

SourcePosition sourceAt(const bytecode::Module& module, std::uint32_t pc) noexcept {
    auto it = std::upper_bound(module.debug.begin(), module.debug.end(), pc,
                               [](std::uint32_t off, const bytecode::DebugEntry& e) { return off < e.codeOffset; });
    if (it == module.debug.begin()) {
        return {};
    }
    --it;
    return {it->file, it->line, it->column};
}

std::uint32_t pouAt(const bytecode::Module& module, std::uint32_t pc) noexcept {
    for (std::uint32_t i = 0; i < module.pous.size(); ++i) {
        const bytecode::PouEntry& p = module.pous[i];
        if (p.code != bytecode::kNone && pc >= p.code && pc < p.codeEnd) {
            return i;
        }
    }
    return bytecode::kNone;
}

ResolvedLine resolveLine(const bytecode::Module& module, std::uint32_t file, std::uint32_t line) {
    ResolvedLine out;
    std::uint32_t best = UINT32_MAX;
    for (const bytecode::DebugEntry& d : module.debug) {
        if (d.statement && d.file == file && d.line >= line && d.line < best &&
            pouAt(module, d.codeOffset) != bytecode::kNone) {
            best = d.line;
        }
    }
    if (best == UINT32_MAX) {
        const std::string name = file < module.files.size() ? module.files[file] : "file " + std::to_string(file);
        out.reason = "no statement at or after line " + std::to_string(line) + " of " + name;
        return out;
    }
    for (const bytecode::DebugEntry& d : module.debug) {
        if (d.statement && d.file == file && d.line == best && pouAt(module, d.codeOffset) != bytecode::kNone) {
            out.pcs.push_back(d.codeOffset);
        }
    }
    out.verified = true;
    out.line = best;
    return out;
}

StopMap::StopMap(const bytecode::Module& module)
    : module_(&module), size_(module.code.size()), map_(new std::atomic<std::uint8_t>[module.code.size() + 1]) {
    for (std::size_t i = 0; i <= size_; ++i) {
        map_[i].store(0, std::memory_order_relaxed);
    }
    for (const bytecode::DebugEntry& d : module.debug) {
        if (d.statement && d.codeOffset < size_) {
            map_[d.codeOffset].store(kStatement, std::memory_order_relaxed);
        }
    }
}

bool StopMap::setBreakpoint(std::uint32_t pc, bool on) noexcept {
    if (pc >= size_) {
        return false;
    }
    std::atomic<std::uint8_t>& cell = map_[pc];
    const std::uint8_t was = cell.load(std::memory_order_relaxed);
    if ((was & kStatement) == 0) {
        return false;
    }
    if (((was & kBreakpoint) != 0) == on) {
        return true;
    }
    cell.store(static_cast<std::uint8_t>(on ? was | kBreakpoint : was & ~kBreakpoint), std::memory_order_release);
    if (on) {
        count_.fetch_add(1, std::memory_order_acq_rel);
    } else {
        count_.fetch_sub(1, std::memory_order_acq_rel);
    }
    return true;
}

void StopMap::clearBreakpoints() noexcept {
    for (std::uint32_t pc = 0; pc < size_; ++pc) {
        if ((map_[pc].load(std::memory_order_relaxed) & kBreakpoint) != 0) {
            (void)setBreakpoint(pc, false);
        }
    }
}

bool StopMap::hasBreakpoint(std::uint32_t pc) const noexcept {
    return pc < size_ && (map_[pc].load(std::memory_order_acquire) & kBreakpoint) != 0;
}

void Debugger::pause() noexcept {
    step_.store(StepMode::Pause, std::memory_order_release);
}

bool Debugger::resume(StepMode step) noexcept {
    if (state_.load(std::memory_order_acquire) != kHalted) {
        return false;
    }
    step_.store(step == StepMode::Pause ? StepMode::Into : step, std::memory_order_release);
    state_.store(kRunning, std::memory_order_release);
    futexWake(state_);
    return true;
}

// With halt(): both sides store, then load the other's word (sequentially consistent), so either
// detach() sees the halt and wakes the thread or halt() sees the detach and does not block.
void Debugger::detach() noexcept {
    attached_.store(false, std::memory_order_seq_cst);
    step_.store(StepMode::None, std::memory_order_release);
    if (state_.load(std::memory_order_seq_cst) == kHalted) {
        state_.store(kRunning, std::memory_order_seq_cst);
        futexWake(state_);
    }
}

bool Debugger::waitHalted(std::uint32_t seen, std::int64_t deadlineNs) noexcept {
    for (;;) {
        if (halts_.load(std::memory_order_acquire) != seen) {
            return true;
        }
        if (monotonicNs() >= deadlineNs) {
            return false;
        }
        futexWait(halts_, seen, deadlineNs);
    }
}

bool Debugger::shouldHalt(std::uint8_t bits, std::uint32_t depth) noexcept {
    if (!attached_.load(std::memory_order_relaxed)) {
        return false;
    }
    if ((bits & StopMap::kBreakpoint) != 0) {
        pending_ = HaltReason::Breakpoint;
        return true;
    }
    switch (step_.load(std::memory_order_acquire)) {
    case StepMode::None: return false;
    case StepMode::Pause: pending_ = HaltReason::Pause; return true;
    case StepMode::Into: pending_ = HaltReason::Step; return true;
    case StepMode::Over: pending_ = HaltReason::Step; return depth <= stepDepth_;
    case StepMode::Out: pending_ = HaltReason::Step; return depth < stepDepth_;
    }
    return false;
}

void Debugger::halt(std::uint32_t frameCount) noexcept {
    frameCount_ = frameCount;
    reason_ = pending_;
    stepDepth_ = frameCount > 0 ? frameCount - 1 : 0;
    step_.store(StepMode::None, std::memory_order_release);
    if (observer_ != nullptr) {
        observer_(observerContext_, true);
    }
    state_.store(kHalted, std::memory_order_seq_cst);
    if (!attached_.load(std::memory_order_seq_cst)) {
        state_.store(kRunning, std::memory_order_seq_cst);
    }
    halts_.fetch_add(1, std::memory_order_acq_rel);
    futexWake(halts_);
    std::int64_t serveAt = monotonicNs() + servicePeriodNs_;
    while (state_.load(std::memory_order_acquire) == kHalted) {
        if (service_ == nullptr) {
            futexWait(state_, kHalted, -1);
            continue;
        }
        futexWait(state_, kHalted, serveAt);
        if (state_.load(std::memory_order_acquire) != kHalted) {
            break;
        }
        if (const std::int64_t now = monotonicNs(); now >= serveAt) {
            service_(serviceContext_);
            serveAt += servicePeriodNs_;
            serveAt = std::max(serveAt, now + servicePeriodNs_ / 2); // a late service does not run back to back
        }
    }
    if (observer_ != nullptr) {
        observer_(observerContext_, false);
    }
}

} // namespace takt::vm
