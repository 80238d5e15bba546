// The debugger's runtime half (debug.h): source lines to code, the stop map, and a thread's halt.
#include "takt/vm/debug.h"

#include <algorithm>
#include <new>

#include "takt/common/futex.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
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

namespace {

bool sameName(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
           });
}

} // namespace

ResolvedLine resolveFunction(const bytecode::Module& module, std::string_view name) {
    ResolvedLine out;
    const auto it = std::find_if(module.pous.begin(), module.pous.end(),
                                 [&](const bytecode::PouEntry& p) { return sameName(p.name, name); });
    if (it == module.pous.end()) {
        out.reason = "no POU named '" + std::string(name) +
                     "' in the running program (a method or an action is named FB.Name, e.g. Motor.Start)";
        return out;
    }
    if (it->code == bytecode::kNone) {
        out.reason = "'" + it->name + "' is a standard POU built into takt: it has no ST statements to halt at";
        return out;
    }
    if (bytecode::isTestPou(it->kind)) {
        out.reason = "'" + it->name + "' is a test POU, which runs under takt test only";
        return out;
    }
    for (const bytecode::DebugEntry& d : module.debug) {
        if (d.statement && d.codeOffset >= it->code && d.codeOffset < it->codeEnd) {
            out.verified = true;
            out.line = d.line;
            out.pcs.push_back(d.codeOffset);
            return out;
        }
    }
    out.reason = "'" + it->name + "' has no statement to halt at";
    return out;
}

bool exceptionTraps(std::string_view id, std::uint32_t& traps) noexcept {
    if (id == "all") {
        traps = 0;
        for (const ExceptionFilter& f : kExceptionFilters) {
            traps |= f.traps;
        }
        return true;
    }
    for (const ExceptionFilter& f : kExceptionFilters) {
        if (f.id == id) {
            traps = f.traps;
            return true;
        }
    }
    return false;
}

std::string_view exceptionFilterOf(bytecode::Trap t) noexcept {
    for (const ExceptionFilter& f : kExceptionFilters) {
        if (f.traps == trapBit(t)) {
            return f.id;
        }
    }
    return {};
}

std::uint32_t statementStart(const bytecode::Module& module, std::uint32_t pc) noexcept {
    const std::uint32_t pou = pouAt(module, pc);
    if (pou == bytecode::kNone) {
        return bytecode::kNone;
    }
    auto it = std::upper_bound(module.debug.begin(), module.debug.end(), pc,
                               [](std::uint32_t off, const bytecode::DebugEntry& e) { return off < e.codeOffset; });
    while (it != module.debug.begin()) {
        --it;
        if (it->codeOffset < module.pous[pou].code) {
            break;
        }
        if (it->statement) {
            return it->codeOffset;
        }
    }
    return bytecode::kNone;
}

bool HitCondition::admits(std::uint64_t hit) const noexcept {
    switch (op) {
    case Op::Always: return true;
    case Op::Eq: return hit == n;
    case Op::Ge: return hit >= n;
    case Op::Gt: return hit > n;
    case Op::Le: return hit <= n;
    case Op::Lt: return hit < n;
    case Op::Every: return n != 0 && hit % n == 0;
    }
    return true;
}

bool parseHitCondition(std::string_view text, HitCondition& out, std::string& why) {
    static constexpr std::pair<std::string_view, HitCondition::Op> kOps[] = {
        {">=", HitCondition::Op::Ge},  {"<=", HitCondition::Op::Le}, {"==", HitCondition::Op::Eq},
        {">", HitCondition::Op::Gt},   {"<", HitCondition::Op::Lt},  {"=", HitCondition::Op::Eq},
        {"%", HitCondition::Op::Every}};
    std::size_t at = 0;
    const auto skipBlanks = [&] {
        while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) {
            ++at;
        }
    };
    skipBlanks();
    out = HitCondition{HitCondition::Op::Eq, 0};
    for (const auto& [spelling, op] : kOps) {
        if (text.substr(at).starts_with(spelling)) {
            out.op = op;
            at += spelling.size();
            break;
        }
    }
    skipBlanks();
    const std::size_t digits = at;
    std::uint64_t n = 0;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
        const auto d = static_cast<std::uint64_t>(text[at] - '0');
        if (n > (UINT64_MAX - d) / 10) {
            why = "hit condition: the count at column " + std::to_string(digits + 1) + " is too large";
            return false;
        }
        n = n * 10 + d;
        ++at;
    }
    const bool none = at == digits;
    skipBlanks();
    if (none || at != text.size()) {
        why = "hit condition: expected a count (5), a comparison and a count (>= 5) or % and a count (% 10), "
              "not '" +
              std::string(text) + "' (column " + std::to_string((none ? digits : at) + 1) + ")";
        return false;
    }
    if (out.op == HitCondition::Op::Every && n == 0) {
        why = "hit condition: % 0 never halts; give a count of 1 or more";
        return false;
    }
    out.n = n;
    return true;
}

StopMap::StopMap(const bytecode::Module& module)
    : module_(&module), size_(module.code.size()), map_(new std::atomic<std::uint8_t>[module.code.size() + 1]),
      slotOf_(new std::atomic<std::uint8_t>[module.code.size() + 1]), slots_(new Slot[kSlots]) {
    for (std::size_t i = 0; i <= size_; ++i) {
        map_[i].store(0, std::memory_order_relaxed);
        slotOf_[i].store(0, std::memory_order_relaxed);
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
    if (on && (was & kConditioned) != 0) {
        // Beside breakpoints with slots, one without is a slot that always halts: theirs still
        // count their hits and log.
        const std::uint32_t always = addSlot(HitCondition{});
        return always != kSlots && setBreakpoint(pc, always);
    }
    if (((was & kBreakpoint) != 0) == on) {
        return true;
    }
    cell.store(static_cast<std::uint8_t>(on ? was | kBreakpoint : was & ~(kBreakpoint | kConditioned)),
               std::memory_order_release);
    patch(pc, on);
    if (!on) {
        slotOf_[pc].store(0, std::memory_order_relaxed); // after the bits: the slot stays valid until reused
    }
    if (on) {
        count_.fetch_add(1, std::memory_order_acq_rel);
    } else {
        count_.fetch_sub(1, std::memory_order_acq_rel);
    }
    return true;
}

std::uint32_t StopMap::addSlot(const HitCondition& hit, const DebugExpr* condition, const LogPoint* log) noexcept {
    for (std::uint32_t k = 0; k < kSlots; ++k) {
        const std::uint32_t i = (nextSlot_ + k) % kSlots;
        Slot& s = slots_[i];
        if (s.used.load(std::memory_order_relaxed)) {
            continue;
        }
        s.op.store(hit.op, std::memory_order_relaxed);
        s.n.store(hit.n, std::memory_order_relaxed);
        s.hits.store(0, std::memory_order_relaxed);
        s.condition.store(condition, std::memory_order_relaxed);
        s.log.store(log, std::memory_order_relaxed);
        s.used.store(true, std::memory_order_release);
        nextSlot_ = (i + 1) % kSlots;
        return i;
    }
    return kSlots;
}

// The slot is written before the map's byte says it is there (release), and read after (acquire).
bool StopMap::setBreakpoint(std::uint32_t pc, std::uint32_t slot) noexcept {
    if (slot >= kSlots || pc >= size_ || (map_[pc].load(std::memory_order_relaxed) & kStatement) == 0) {
        return false;
    }
    std::uint8_t first = slotOf_[pc].load(std::memory_order_relaxed);
    if (const std::uint8_t bits = map_[pc].load(std::memory_order_relaxed);
        (bits & kBreakpoint) != 0 && (bits & kConditioned) == 0) {
        // A breakpoint without a slot is here: it becomes one that always halts, beside this one.
        const std::uint32_t always = addSlot(HitCondition{});
        if (always == kSlots) {
            return false;
        }
        slots_[always].next.store(0, std::memory_order_relaxed);
        first = static_cast<std::uint8_t>(always + 1);
    }
    for (std::uint32_t at = first, n = 0; at != 0 && n < kSlots;
         at = slots_[at - 1].next.load(std::memory_order_relaxed), ++n) {
        if (at == slot + 1) {
            return true; // on this statement already: linking it again would make a loop
        }
    }
    // In front of the statement's other slots; the link is written before the slot is published.
    slots_[slot].next.store(first, std::memory_order_relaxed);
    slotOf_[pc].store(static_cast<std::uint8_t>(slot + 1), std::memory_order_release);
    // Both bits at once: a running thread never sees the breakpoint without its condition.
    const std::uint8_t was = map_[pc].fetch_or(kBreakpoint | kConditioned, std::memory_order_release);
    patch(pc, true);
    if ((was & kBreakpoint) == 0) {
        count_.fetch_add(1, std::memory_order_acq_rel);
    }
    return true;
}

// The condition first, then the hit count: hits count the times the condition held (as a DAP
// client's hit count with a condition does).
StopMap::Admission StopMap::admit(std::uint32_t pc, const ExprScope& at) const noexcept {
    Admission out;
    if (pc >= size_ || (map_[pc].load(std::memory_order_acquire) & kConditioned) == 0) {
        out.verdict = Verdict::Halt;
        return out;
    }
    std::uint32_t slot = slotOf_[pc].load(std::memory_order_acquire);
    if (slot == 0) {
        out.verdict = Verdict::Halt;
        return out;
    }
    // Each slot of the statement in turn (a chain of at most kSlots, however it was linked).
    for (std::uint32_t n = 0; slot != 0 && slot <= kSlots && n < kSlots; ++n) {
        Slot& s = slots_[slot - 1];
        slot = s.next.load(std::memory_order_relaxed);
        if (const DebugExpr* c = s.condition.load(std::memory_order_relaxed)) {
            ExprSlot v{0};
            out.fault = eval(*c, at, v);
            if (out.fault != ExprStatus::Ok) {
                out.verdict = Verdict::Fault; // a condition that cannot be told is a mistake to show, not to skip
                return out;
            }
            if (v.u == 0) {
                continue;
            }
        }
        const std::uint64_t hit = s.hits.fetch_add(1, std::memory_order_relaxed) + 1;
        if (!HitCondition{s.op.load(std::memory_order_relaxed), s.n.load(std::memory_order_relaxed)}.admits(hit)) {
            continue;
        }
        if (const LogPoint* log = s.log.load(std::memory_order_relaxed); log == nullptr) {
            out.verdict = Verdict::Halt;
        } else if (out.logCount < kMaxLogsAt) {
            out.logs[out.logCount++] = log;
        } else {
            ++out.logsOver;
        }
    }
    return out;
}

void StopMap::clearBreakpoints() noexcept {
    for (std::uint32_t pc = 0; pc < size_; ++pc) {
        if ((map_[pc].load(std::memory_order_relaxed) & kBreakpoint) != 0) {
            (void)setBreakpoint(pc, false);
        }
    }
    for (std::uint32_t i = 0; i < kSlots; ++i) {
        slots_[i].used.store(false, std::memory_order_relaxed);
    }
}

// After the map's bits and the slot: a thread that reads the patched word (then fences) finds them.
void StopMap::patch(std::uint32_t pc, bool on) noexcept {
    if (patchedWords_ == nullptr) {
        patchedWords_.reset(new (std::nothrow) std::uint32_t[size_]);
        if (patchedWords_ == nullptr) {
            return; // runs take the loop that looks the map up
        }
        std::copy_n(module_->code.data(), size_, patchedWords_.get());
        patched_.store(patchedWords_.get(), std::memory_order_release);
    }
    __atomic_store_n(&patchedWords_[pc], on ? kBreakpointOpcode : module_->code[pc], __ATOMIC_RELEASE);
}

void StopMap::setFlow(FlowRecorder* flow) noexcept {
    const auto mark = [this](const FlowRecorder* f, bool on) {
        if (f == nullptr) {
            return;
        }
        for (const FlowStatement& s : f->plan().statements) {
            if (s.pc < size_) {
                if (on) {
                    map_[s.pc].fetch_or(kFlow, std::memory_order_release);
                } else {
                    map_[s.pc].fetch_and(static_cast<std::uint8_t>(~kFlow), std::memory_order_release);
                }
            }
        }
    };
    // The recorder before its marks: a thread that sees a mark finds the recorder it belongs to.
    mark(flow_.load(std::memory_order_relaxed), false);
    flow_.store(flow, std::memory_order_release);
    mark(flow, true);
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

bool Debugger::shouldHalt(std::uint8_t bits, std::uint32_t depth, std::uint32_t pc, const ExprScope& at) noexcept {
    // A statement run again after an exception halt is done at the next statement start of its
    // call or a caller: a fault there later is a new one.
    if (rerunPc_ != bytecode::kNone && depth <= rerunDepth_) {
        rerunPc_ = bytecode::kNone;
    }
    if (!attached_.load(std::memory_order_relaxed)) {
        return false;
    }
    pendingFault_ = ExprStatus::Ok;
    // A breakpoint whose condition or hit count says no, or a logpoint, does not halt the thread,
    // unless a step halts here anyway.
    if ((bits & StopMap::kBreakpoint) != 0) {
        const StopMap::Admission a = stops_->admit(pc, at);
        for (std::uint32_t i = 0; i < a.logCount; ++i) {
            pushLog(*a.logs[i], at);
        }
        if (a.logsOver != 0) {
            logsDropped_.fetch_add(a.logsOver, std::memory_order_relaxed);
        }
        switch (a.verdict) {
        case StopMap::Verdict::Fault: pendingFault_ = a.fault; [[fallthrough]];
        case StopMap::Verdict::Halt: pending_ = HaltReason::Breakpoint; return true;
        case StopMap::Verdict::Pass: break;
        }
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
    fault_ = pendingFault_;
    pendingFault_ = ExprStatus::Ok;
    trap_ = pendingTrap_;
    pendingTrap_ = bytecode::Trap::None;
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

bool Debugger::catches(bytecode::Trap trap, std::uint32_t pc, std::uint32_t depth) noexcept {
    const bool again = rerunPc_ == pc && rerunDepth_ == depth;
    rerunPc_ = bytecode::kNone;
    const bool caught =
        !again && attached_.load(std::memory_order_relaxed) && (stops_->trapMask() & trapBit(trap)) != 0;
    if (caught && !inRun_) {
        enterRun(); // a run begun before the session attached goes on in the loop that reads the map
    }
    return caught;
}

bool Debugger::peek(std::uint32_t offset, void* out, std::uint32_t size) const noexcept {
    if (!halted() || haltImage_ == nullptr || offset > haltImageSize_ || haltImageSize_ - offset < size) {
        return false;
    }
    std::memcpy(out, haltImage_ + offset, size);
    return true;
}

bool Debugger::poke(std::uint32_t offset, const void* bytes, std::uint32_t size) noexcept {
    if (!halted() || haltImage_ == nullptr || offset > haltImageSize_ || haltImageSize_ - offset < size) {
        return false;
    }
    std::memcpy(haltImage_ + offset, bytes, size);
    return true;
}

void Debugger::haltOnTrap(std::uint32_t frameCount, bytecode::Trap trap, std::uint32_t pc,
                          std::uint32_t depth) noexcept {
    pending_ = HaltReason::Exception;
    pendingFault_ = ExprStatus::Ok;
    pendingTrap_ = trap;
    halt(frameCount);
    rerunPc_ = pc;
    rerunDepth_ = depth;
}

// One producer (this thread), one consumer: the record between tail and head belongs to whoever
// moves its index next, and the index is published after the record is written (release).
void Debugger::pushLog(const LogPoint& log, const ExprScope& at) noexcept {
    const std::uint32_t tail = logTail_.load(std::memory_order_relaxed);
    if (tail - logHead_.load(std::memory_order_acquire) >= kLogCapacity) {
        logsDropped_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    LogRecord& r = logs_[tail % kLogCapacity];
    r.id = log.id;
    r.count = static_cast<std::uint32_t>(std::min<std::size_t>(log.parts.size(), kMaxLogParts));
    for (std::uint32_t i = 0; i < r.count; ++i) {
        r.status[i] = eval(log.parts[i], at, r.values[i]);
    }
    logTail_.store(tail + 1, std::memory_order_release);
}

bool Debugger::takeLog(LogRecord& out) noexcept {
    const std::uint32_t head = logHead_.load(std::memory_order_relaxed);
    if (head == logTail_.load(std::memory_order_acquire)) {
        return false;
    }
    out = logs_[head % kLogCapacity];
    logHead_.store(head + 1, std::memory_order_release);
    return true;
}

} // namespace takt::vm
