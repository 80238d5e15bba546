// The interpreter loop: one source, two dispatch modes. Every handler is both a `case` label
// and a label whose address sits in the computed-goto table, so execute<false> threads
// through `goto *table[op]` (GCC/Clang) and execute<true> loops over a portable `switch`.
//
// Operands are decoded in place from the code words (opcodes.h) through an instruction
// pointer; data operands resolve to base[tag] + offset with the bases held in locals.
// The verifier has checked opcodes, static operand ranges and jump targets, so handlers check
// only what the language demands: division by zero, INT_MIN / -1, array bounds, references,
// the watchdog on back-edges and calls. (The computed-goto build does not even range-check
// opcodes; the switch build reports InvalidOpcode.) Integer arithmetic wraps through unsigned types (no UB); nothing
// allocates or throws.
#include "vm_internal.h"

#include "takt/bytecode/value_compare.h"
#include "takt/vm/debug.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace takt::vm {

namespace {

using bytecode::kOffsetBits;
using bytecode::Opcode;

const std::atomic<bool> kNeverAbort{false};
constexpr std::uint64_t kAbortPollMask = 63;

// REAL -> integer: round to nearest, ties to even (the default FP environment); NaN gives 0
// and out-of-range values saturate so the cast below is always defined.
template <typename I, typename F> I roundToInt(F x) noexcept {
    if (std::isnan(x)) {
        return 0;
    }
    const F r = std::nearbyint(x);
    if (r >= static_cast<F>(std::numeric_limits<I>::max())) {
        return std::numeric_limits<I>::max();
    }
    if (r <= static_cast<F>(std::numeric_limits<I>::min())) {
        return std::numeric_limits<I>::min();
    }
    return static_cast<I>(r);
}

template <typename I, typename F> I truncToInt(F x) noexcept {
    return roundToInt<I>(std::trunc(x));
}

// Inlined into the MATH_* handlers: as a call of its own it cost a frame and a return per SIN.
template <typename F> [[gnu::always_inline]] inline F mathFn(std::uint32_t fn, F x) noexcept {
    switch (static_cast<bytecode::MathFn>(fn)) {
    case bytecode::MathFn::Ln: return std::log(x);
    case bytecode::MathFn::Log: return std::log10(x);
    case bytecode::MathFn::Exp: return std::exp(x);
    case bytecode::MathFn::Sin: return std::sin(x);
    case bytecode::MathFn::Cos: return std::cos(x);
    case bytecode::MathFn::Tan: return std::tan(x);
    case bytecode::MathFn::Asin: return std::asin(x);
    case bytecode::MathFn::Acos: return std::acos(x);
    case bytecode::MathFn::Atan: return std::atan(x);
    }
    return std::numeric_limits<F>::quiet_NaN();
}

template <typename T> T minOf(T a, T b) noexcept {
    return b < a ? b : a;
}
template <typename T> T maxOf(T a, T b) noexcept {
    return a < b ? b : a;
}

std::uint32_t rotl8(std::uint32_t v, std::uint32_t n) noexcept {
    v &= 0xFFu;
    n &= 7u;
    return ((v << n) | (v >> ((8u - n) & 7u))) & 0xFFu;
}
std::uint32_t rotr8(std::uint32_t v, std::uint32_t n) noexcept {
    return rotl8(v, (8u - (n & 7u)) & 7u);
}
std::uint32_t rotl16(std::uint32_t v, std::uint32_t n) noexcept {
    v &= 0xFFFFu;
    n &= 15u;
    return ((v << n) | (v >> ((16u - n) & 15u))) & 0xFFFFu;
}
std::uint32_t rotr16(std::uint32_t v, std::uint32_t n) noexcept {
    return rotl16(v, (16u - (n & 15u)) & 15u);
}

// Division by a constant through its reciprocal r = divisorReciprocal(d) (opcodes.h).
__extension__ using U128 = unsigned __int128;
inline std::uint32_t divByReciprocal(std::uint32_t n, std::uint64_t r) noexcept {
    return static_cast<std::uint32_t>((static_cast<U128>(r) * n) >> 64);
}
inline std::uint32_t modByReciprocal(std::uint32_t n, std::uint32_t d, std::uint64_t r) noexcept {
    return static_cast<std::uint32_t>((static_cast<U128>(r * n) * d) >> 64);
}

// memmove for the copies of COPY, LDI_N, STI_N, LDX_N and STX_N: blocks of up to 32 bytes (structs,
// FB inputs) are copied by loading every word before storing any, so overlapping regions work
// as with memmove, without the call.
inline void copyBytes(std::uint8_t* dst, const std::uint8_t* src, std::uint32_t n) noexcept {
    using U64 = std::uint64_t;
    using U32 = std::uint32_t;
    if (n > 32) {
        std::memmove(dst, src, n);
    } else if (n > 16) {
        const U64 a = load<U64>(src);
        const U64 b = load<U64>(src + 8);
        const U64 c = load<U64>(src + n - 16);
        const U64 d = load<U64>(src + n - 8);
        store<U64>(dst, a);
        store<U64>(dst + 8, b);
        store<U64>(dst + n - 16, c);
        store<U64>(dst + n - 8, d);
    } else if (n >= 8) {
        const U64 a = load<U64>(src);
        const U64 b = load<U64>(src + n - 8);
        store<U64>(dst, a);
        store<U64>(dst + n - 8, b);
    } else if (n >= 4) {
        const U32 a = load<U32>(src);
        const U32 b = load<U32>(src + n - 4);
        store<U32>(dst, a);
        store<U32>(dst + n - 4, b);
    } else if (n > 0) {
        const std::uint8_t a = src[0];
        const std::uint8_t b = src[n / 2];
        const std::uint8_t c = src[n - 1];
        dst[0] = a;
        dst[n / 2] = b;
        dst[n - 1] = c;
    }
}

// A REAL product rounded to its type before it is added (MULADD_*): the barrier keeps the
// compiler from contracting a * b + c into a fused multiply-add on targets that have one.
template <typename F> inline F rounded(F v) noexcept {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__("" : "+x"(v));
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__("" : "+w"(v));
#else
    volatile F t = v;
    v = t;
#endif
    return v;
}

} // namespace

#if defined(__GNUC__) || defined(__clang__)
#define TAKT_HAS_COMPUTED_GOTO 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wunused-label"
#else
#define TAKT_HAS_COMPUTED_GOTO 0
#endif

namespace {

// The halted call chain for the debugger: the callers from the call records (each stands at its
// call, the instruction before its return point), then the innermost frame at `pc`.
void fillHaltFrames(HaltFrame* frames, const bytecode::Module& module, const Vm::Resolved& res, std::uint32_t depth,
                    std::uint32_t pc, std::uint32_t thisO, std::uint32_t frameO) noexcept {
    for (std::uint32_t k = 0; k < depth; ++k) {
        const CallRecord& c = res.calls[k]; // pushed by level k when it called level k + 1
        const std::uint32_t at = c.returnPc > 0 ? c.returnPc - 1 : 0;
        frames[k] = HaltFrame{pouAt(module, at), at, c.thisOffset, c.frameOffset};
    }
    frames[depth] = HaltFrame{pouAt(module, pc), pc, thisO, frameO};
}

} // namespace

// An instruction's opcode word. A relaxed atomic load (a plain load on every target) because a
// StopMap's patched code changes its opcode words while a task runs it.
[[gnu::always_inline]] inline std::uint32_t opcodeAt(const std::uint32_t* ip) noexcept {
    return __atomic_load_n(ip, __ATOMIC_RELAXED);
}

template <bool kSwitch, bool kDebug>
Trap execute(const RunState& rs, std::uint32_t entry, std::uint32_t thisOffset, std::uint32_t frameOffset,
             const ResumeAt* resume) noexcept {
    // The debug loop runs the module's own code; the plain loop a breakpoint-patched copy when given.
    const std::uint32_t* const code = !kDebug && rs.code != nullptr ? rs.code : rs.module->code.data();
    const bytecode::PouEntry* const pous = rs.module->pous.data();
    const std::uint32_t pouCount = static_cast<std::uint32_t>(rs.module->pous.size());
    std::uint8_t* const image = rs.image;
    const std::uint8_t* const imageEnd = rs.image + rs.imageSize;
    const std::uint64_t imageSize = rs.imageSize;
    const std::uint64_t constSize = rs.module->constSize;
    const std::atomic<bool>& abortFlag = rs.abort != nullptr ? *rs.abort : kNeverAbort;
    const NativeContext nctx{rs.image, rs.imageSize, rs.module->constSize, rs.nowNs, rs.wallNs};
    Vm::Resolved& res = *rs.resolved;
    const CompiledCalls* const compiled = kDebug ? nullptr : rs.compiled;

    const std::uint32_t* ip = code + entry;
    std::uint32_t thisO = thisOffset;
    std::uint32_t frameO = frameOffset;
    std::uint32_t depth = 0;
    std::uint64_t ticks = rs.budget != 0 ? rs.budget : std::numeric_limits<std::uint64_t>::max();
    (void)resume; // the plain loop never resumes a run
    if constexpr (kDebug) {
        if (resume != nullptr) { // a run going on after an exception halt: its calls are in res.calls
            depth = resume->depth;
            ticks = resume->ticks;
        } else {
            rs.debugger->runStarted();
        }
    }
    // base[tag] - (tag << 30) as integers, so an operand word resolves with one add and no mask
    // (unsigned wrap-around is defined; the sum is the real address).
    const auto adjusted = [image](std::uint32_t off, std::uintptr_t tag) {
        return reinterpret_cast<std::uintptr_t>(image) + off - (tag << kOffsetBits);
    };
    std::uintptr_t base[4] = {adjusted(0, 0), adjusted(thisO, 1), adjusted(frameO, 2), adjusted(0, 3)};
    Trap trap = Trap::None;
    std::uint32_t switchOp = 0; // the switch dispatch's opcode
    // kDebug: the stop map is looked up before every instruction; a hit asks the debugger.
    const std::atomic<std::uint8_t>* const stops = kDebug ? rs.debugger->stops().bytes() : nullptr;
    std::uint8_t stopMask = kDebug ? rs.debugger->stopMask() : 0;

#define W(k) ip[1 + (k)]
#define A(k) (reinterpret_cast<std::uint8_t*>(base[W(k) >> kOffsetBits] + W(k)))
#define IMM32(k) static_cast<std::int32_t>(W(k))
#define IMM64(k)                                                                                                       \
    static_cast<std::int64_t>(static_cast<std::uint64_t>(W(k)) | (static_cast<std::uint64_t>(W((k) + 1)) << 32))
#define LEN(op) bytecode::instructionLength(Opcode::op)
#define FAULT(t)                                                                                                       \
    do {                                                                                                               \
        trap = (t);                                                                                                    \
        goto fault;                                                                                                    \
    } while (0)
// Every back-edge and call counts one tick of the budget; the abort flag (set by another
// thread) is polled on every 64th tick, which keeps a runaway loop's stop within microseconds.
#define WATCHDOG()                                                                                                     \
    do {                                                                                                               \
        if ((--ticks & kAbortPollMask) == 0) [[unlikely]] {                                                            \
            if (ticks == 0)                                                                                            \
                FAULT(Trap::BudgetExceeded);                                                                           \
            if (abortFlag.load(std::memory_order_relaxed))                                                             \
                FAULT(Trap::Aborted);                                                                                  \
        }                                                                                                              \
    } while (0)

#if TAKT_HAS_COMPUTED_GOTO
    static void* const kLabels[] = {
#define TAKT_OP(name, format, doc) &&L_##name,
#include "takt/bytecode/opcodes.def"
#undef TAKT_OP
        &&L_invalid, &&L_breakpoint};
#define CASE(name)                                                                                                     \
    case Opcode::name:                                                                                                 \
        L_##name:
#define DISPATCH_OP()                                                                                                  \
    do {                                                                                                               \
        if constexpr (kSwitch) {                                                                                       \
            goto dispatch_switch;                                                                                      \
        } else {                                                                                                       \
            goto* kLabels[opcodeAt(ip)]; /* verified code: every opcode is in range, or a breakpoint */                \
        }                                                                                                              \
    } while (0)
#else
#define CASE(name) case Opcode::name:
#define DISPATCH_OP() goto dispatch_switch
#endif
#define DISPATCH()                                                                                                     \
    do {                                                                                                               \
        if constexpr (kDebug) {                                                                                        \
            if ((stops[ip - code].load(std::memory_order_relaxed) & stopMask) != 0) [[unlikely]]                       \
                goto debug_stop;                                                                                       \
        }                                                                                                              \
        DISPATCH_OP();                                                                                                 \
    } while (0)
#define NEXT(op)                                                                                                       \
    do {                                                                                                               \
        ip += LEN(op);                                                                                                 \
        DISPATCH();                                                                                                    \
    } while (0)
#define JUMP(target)                                                                                                   \
    do {                                                                                                               \
        const std::uint32_t* const t_ = code + (target);                                                               \
        if (t_ <= ip) {                                                                                                \
            WATCHDOG();                                                                                                \
        }                                                                                                              \
        ip = t_;                                                                                                       \
        DISPATCH();                                                                                                    \
    } while (0)
// The back-edge of a FOR (LOOP_*): the verifier admits only targets at or before the
// instruction, so the watchdog is counted without the direction test of JUMP.
#define LOOP_BACK(target)                                                                                              \
    do {                                                                                                               \
        WATCHDOG();                                                                                                    \
        ip = code + (target);                                                                                          \
        DISPATCH();                                                                                                    \
    } while (0)
// A call of POU `pouIndex`: a compiled body (CompiledCalls) runs it at once, where there is one;
// otherwise the callee's bytecode runs on, in this loop.
#define ENTER(pouIndex, newPc, newThis, newFrame, frameSize, retPc)                                                    \
    do {                                                                                                               \
        const std::uint64_t nf_ = (newFrame);                                                                          \
        const std::uint32_t rp_ = (retPc);                                                                             \
        if (depth >= kMaxCallDepth || nf_ + (frameSize) > imageSize) [[unlikely]]                                      \
            FAULT(Trap::StackOverflow);                                                                                \
        WATCHDOG();                                                                                                    \
        if (compiled != nullptr && compiled->has[(pouIndex)] != 0) {                                                   \
            std::uint64_t left_ = ticks; /* ticks itself stays a register */                                           \
            Trap t_ = Trap::None;                                                                                      \
            std::uint32_t at_ = bytecode::kNone;                                                                       \
            if (compiled->run(compiled->context, (pouIndex), (newThis), static_cast<std::uint32_t>(nf_), depth + 1,    \
                              left_, t_, at_)) {                                                                       \
                ticks = left_;                                                                                         \
                if (t_ != Trap::None) [[unlikely]] {                                                                   \
                    res.calls[depth++] = CallRecord{rp_, thisO, frameO};                                               \
                    thisO = (newThis);                                                                                 \
                    frameO = static_cast<std::uint32_t>(nf_);                                                          \
                    ip = code + (at_ != bytecode::kNone ? at_ : rp_); /* at its instruction */                         \
                    FAULT(t_);                                                                                         \
                }                                                                                                      \
                ip = code + rp_;                                                                                       \
                DISPATCH();                                                                                            \
            }                                                                                                          \
        }                                                                                                              \
        res.calls[depth++] = CallRecord{rp_, thisO, frameO};                                                           \
        thisO = (newThis);                                                                                             \
        frameO = static_cast<std::uint32_t>(nf_);                                                                      \
        base[1] = adjusted(thisO, 1);                                                                                  \
        base[2] = adjusted(frameO, 2);                                                                                 \
        ip = code + (newPc);                                                                                           \
        DISPATCH();                                                                                                    \
    } while (0)

#define BIN(name, T, expr)                                                                                             \
    CASE(name) {                                                                                                       \
        const T a = loadValue<T>(A(1));                                                                                \
        const T b = loadValue<T>(A(2));                                                                                \
        storeValue<T>(A(0), static_cast<T>(expr));                                                                     \
        NEXT(name);                                                                                                    \
    }
#define UN(name, TS, TD, expr)                                                                                         \
    CASE(name) {                                                                                                       \
        const TS a = loadValue<TS>(A(1));                                                                              \
        storeValue<TD>(A(0), static_cast<TD>(expr));                                                                   \
        NEXT(name);                                                                                                    \
    }
#define CMP(name, T, op)                                                                                               \
    CASE(name) {                                                                                                       \
        const T a = loadValue<T>(A(1));                                                                                \
        const T b = loadValue<T>(A(2));                                                                                \
        storeValue<std::uint8_t>(A(0), (a op b) ? 1 : 0);                                                              \
        NEXT(name);                                                                                                    \
    }
#define JCMP(name, T, op)                                                                                              \
    CASE(name) {                                                                                                       \
        if (loadValue<T>(A(0)) op loadValue<T>(A(1))) {                                                                \
            JUMP(W(2));                                                                                                \
        }                                                                                                              \
        NEXT(name);                                                                                                    \
    }
#define JNCMP(name, T, op)                                                                                             \
    CASE(name) {                                                                                                       \
        if (!(loadValue<T>(A(0)) op loadValue<T>(A(1)))) {                                                             \
            JUMP(W(2));                                                                                                \
        }                                                                                                              \
        NEXT(name);                                                                                                    \
    }
#define JCMPI(name, op)                                                                                                \
    CASE(name) {                                                                                                       \
        if (loadValue<std::int32_t>(A(0)) op IMM32(1)) {                                                               \
            JUMP(W(2));                                                                                                \
        }                                                                                                              \
        NEXT(name);                                                                                                    \
    }
#define BIN_T(name, T, builtin)                                                                                        \
    CASE(name) {                                                                                                       \
        T r;                                                                                                           \
        if (builtin(loadValue<T>(A(1)), loadValue<T>(A(2)), &r)) [[unlikely]]                                          \
            FAULT(Trap::Overflow);                                                                                     \
        storeValue<T>(A(0), r);                                                                                        \
        NEXT(name);                                                                                                    \
    }
#define LDI(name, T)                                                                                                   \
    CASE(name) {                                                                                                       \
        const std::uint32_t p_ = loadValue<std::uint32_t>(A(1));                                                       \
        const std::uint64_t at_ = static_cast<std::uint64_t>(p_) + W(2);                                               \
        if (p_ == 0) [[unlikely]]                                                                                      \
            FAULT(Trap::NullReference);                                                                                \
        if (at_ + sizeof(T) > imageSize) [[unlikely]]                                                                  \
            FAULT(Trap::InvalidReference);                                                                             \
        storeValue<T>(A(0), loadValueAt<T>(image + at_));                                                              \
        NEXT(name);                                                                                                    \
    }
// An array element by a run-time subscript (LDX_*, STX_*): bounds check and scale in one dispatch.
// `arr`, `idx` are the operand numbers of the array and the index, followed by the lower bound,
// the element size c1 and the count c2. The verifier checked that the array operand covers
// (c2 - 1) * c1 bytes plus the access, so an index inside the bounds stays inside it.
#define ELEMENT(ptr, arr, idx)                                                                                         \
    const std::int64_t rel_ = static_cast<std::int64_t>(loadValue<std::int32_t>(A(idx))) - IMM32((idx) + 1);           \
    if (static_cast<std::uint64_t>(rel_) >= W((idx) + 3)) [[unlikely]]                                                 \
        FAULT(Trap::ArrayBounds);                                                                                      \
    std::uint8_t* const ptr = A(arr) + static_cast<std::uint64_t>(rel_) * W((idx) + 2)
#define LDX(name, TS, TD)                                                                                              \
    CASE(name) {                                                                                                       \
        ELEMENT(p_, 1, 2);                                                                                             \
        storeValue<TD>(A(0), static_cast<TD>(loadValue<TS>(p_)));                                                      \
        NEXT(name);                                                                                                    \
    }
// a + element: the words up to c2 are those of LDX (the back end rewrites an IDX in place), a follows.
#define ADDX(name, T, expr)                                                                                            \
    CASE(name) {                                                                                                       \
        ELEMENT(p_, 1, 2);                                                                                             \
        const T a = loadValue<T>(A(6));                                                                                \
        const T b = loadValue<T>(p_);                                                                                  \
        storeValue<T>(A(0), static_cast<T>(expr));                                                                     \
        NEXT(name);                                                                                                    \
    }
#define STX(name, T)                                                                                                   \
    CASE(name) {                                                                                                       \
        ELEMENT(p_, 1, 2);                                                                                             \
        storeValue<T>(p_, loadValue<T>(A(0)));                                                                         \
        NEXT(name);                                                                                                    \
    }
#define STI(name, T)                                                                                                   \
    CASE(name) {                                                                                                       \
        const std::uint32_t p_ = loadValue<std::uint32_t>(A(0));                                                       \
        const std::uint64_t at_ = static_cast<std::uint64_t>(p_) + W(1);                                               \
        if (p_ == 0) [[unlikely]]                                                                                      \
            FAULT(Trap::NullReference);                                                                                \
        if (at_ < constSize || at_ + sizeof(T) > imageSize) [[unlikely]]                                               \
            FAULT(Trap::InvalidReference);                                                                             \
        storeValueAt<T>(image + at_, loadValue<T>(A(2)));                                                              \
        NEXT(name);                                                                                                    \
    }

    using I32 = std::int32_t;
    using U32 = std::uint32_t;
    using I64 = std::int64_t;
    using U64 = std::uint64_t;
    using F32 = float;
    using F64 = double;

    if constexpr (kDebug) {
        if (resume != nullptr) { // the statement the halt stood at runs again, not halting there anew
            DISPATCH_OP();
        }
    }
    DISPATCH();
debug_stop:
    // A statement with a breakpoint, or any statement while a step or a pause is pending.
    if constexpr (kDebug) {
        Debugger& dbg = *rs.debugger;
        const std::uint8_t bits = stops[ip - code].load(std::memory_order_relaxed);
        if ((bits & StopMap::kFlow) != 0) { // what the statement before wrote, before a halt here
            dbg.flowDone(depth, ExprScope{rs.image, static_cast<std::uint32_t>(imageSize), thisO, frameO});
        }
        if (dbg.shouldHalt(bits, depth, static_cast<std::uint32_t>(ip - code),
                           ExprScope{rs.image, static_cast<std::uint32_t>(imageSize), thisO, frameO})) {
            fillHaltFrames(dbg.frameBuffer(rs.image, static_cast<std::uint32_t>(imageSize)), *rs.module, res, depth,
                           static_cast<std::uint32_t>(ip - code), thisO, frameO);
            dbg.halt(depth + 1);
        }
        if ((bits & StopMap::kFlow) != 0) { // what the statement reads, as it reads it: after any halt here
            dbg.flowStatement(static_cast<std::uint32_t>(ip - code), depth,
                              ExprScope{rs.image, static_cast<std::uint32_t>(imageSize), thisO, frameO});
        }
        stopMask = dbg.stopMask();
        DISPATCH_OP();
    }
dispatch_switch:
    // The opcode word is read once: a breakpoint cleared meanwhile must not turn into an invalid one.
    switchOp = opcodeAt(ip);
dispatch_op:
    if (switchOp == kBreakpointOpcode) [[unlikely]] {
        goto breakpoint;
    }
    switch (static_cast<Opcode>(switchOp)) {
        // --- control ---
        CASE(NOP) NEXT(NOP);
        CASE(RET) {
            if constexpr (kDebug) {
                if ((stopMask & StopMap::kFlow) != 0) {
                    rs.debugger->flowDone(depth,
                                          ExprScope{rs.image, static_cast<std::uint32_t>(imageSize), thisO, frameO});
                }
            }
            if (depth == 0) {
                if constexpr (kDebug) {
                    rs.debugger->runEnded();
                }
                return Trap::None;
            }
            const CallRecord& r = res.calls[--depth];
            ip = code + r.returnPc;
            thisO = r.thisOffset;
            frameO = r.frameOffset;
            base[1] = adjusted(thisO, 1);
            base[2] = adjusted(frameO, 2);
            DISPATCH();
        }
        CASE(JMP) JUMP(W(0));
        CASE(JMP_T) {
            if (*A(0) != 0) {
                JUMP(W(1));
            }
            NEXT(JMP_T);
        }
        CASE(JMP_F) {
            if (*A(0) == 0) {
                JUMP(W(1));
            }
            NEXT(JMP_F);
        }
        JCMP(JEQ_I32, I32, ==)
        JCMP(JNE_I32, I32, !=)
        JCMP(JLT_I32, I32, <)
        JCMP(JLE_I32, I32, <=)
        JCMP(JGT_I32, I32, >)
        JCMP(JGE_I32, I32, >=)
        JCMP(JEQ_I64, I64, ==)
        JCMP(JNE_I64, I64, !=)
        JCMP(JLT_I64, I64, <)
        JCMP(JLE_I64, I64, <=)
        JCMP(JGT_I64, I64, >)
        JCMP(JGE_I64, I64, >=)
        JCMPI(JLT_I32_IMM, <)
        JCMPI(JLE_I32_IMM, <=)
        JCMPI(JGT_I32_IMM, >)
        JCMPI(JGE_I32_IMM, >=)
        JCMPI(JEQ_I32_IMM, ==)
        JCMPI(JNE_I32_IMM, !=)
        CASE(CHK_STEP_I32) {
            if (loadValue<I32>(A(0)) == 0) [[unlikely]]
                FAULT(Trap::ForStepZero);
            NEXT(CHK_STEP_I32);
        }
        CASE(CHK_STEP_I64) {
            if (loadValue<I64>(A(0)) == 0) [[unlikely]]
                FAULT(Trap::ForStepZero);
            NEXT(CHK_STEP_I64);
        }
        CASE(CHKR_I32) {
            const I32 v = loadValue<I32>(A(0));
            if (v < IMM32(1) || v > IMM32(2)) [[unlikely]]
                FAULT(Trap::Overflow);
            NEXT(CHKR_I32);
        }
        CASE(CHKR_U32) {
            const U32 v = loadValue<U32>(A(0));
            if (v < W(1) || v > W(2)) [[unlikely]]
                FAULT(Trap::Overflow);
            NEXT(CHKR_U32);
        }
        CASE(CHKR_I64) {
            const I64 v = loadValue<I64>(A(0));
            if (v < IMM64(1) || v > IMM64(3)) [[unlikely]]
                FAULT(Trap::Overflow);
            NEXT(CHKR_I64);
        }
        CASE(TRAP) {
            const U32 t = W(0);
            FAULT(bytecode::raisableByTrap(t) ? static_cast<Trap>(t) : Trap::InvalidOpcode);
        }
        CASE(EQ_AGG) {
            // Off the scan path in practice (tests only); the walk allocates nothing and its
            // depth is bounded by the verifier.
            *A(0) = bytecode::valuesEqual(*rs.module, W(3), A(1), A(2)) ? 1 : 0;
            NEXT(EQ_AGG);
        }
        CASE(ASSERT_FAIL) {
            // The values stay in the frame after the run ends; the test runner reads them there.
            rs.trap->assertA = static_cast<U32>(A(0) - image);
            rs.trap->assertB = static_cast<U32>(A(1) - image);
            rs.trap->assertMessage = static_cast<U32>(A(2) - image);
            rs.trap->assertFormat = W(3);
            rs.trap->assertKind = W(4);
            FAULT(Trap::AssertionFailed);
        }

        // --- moves ---
        CASE(MOV_8) {
            *A(0) = *A(1);
            NEXT(MOV_8);
        }
        CASE(MOV_16) {
            storeValue<std::uint16_t>(A(0), loadValue<std::uint16_t>(A(1)));
            NEXT(MOV_16);
        }
        CASE(MOV_32) {
            storeValue<U32>(A(0), loadValue<U32>(A(1)));
            NEXT(MOV_32);
        }
        CASE(MOV_64) {
            storeValue<U64>(A(0), loadValue<U64>(A(1)));
            NEXT(MOV_64);
        }
        CASE(MOVI_8) {
            *A(0) = static_cast<std::uint8_t>(W(1));
            NEXT(MOVI_8);
        }
        CASE(MOVI_16) {
            storeValue<std::uint16_t>(A(0), static_cast<std::uint16_t>(W(1)));
            NEXT(MOVI_16);
        }
        CASE(MOVI_32) {
            storeValue<U32>(A(0), W(1));
            NEXT(MOVI_32);
        }
        CASE(MOVI_64) {
            storeValue<I64>(A(0), IMM64(1));
            NEXT(MOVI_64);
        }
        CASE(COPY) {
            copyBytes(A(0), A(1), W(2));
            NEXT(COPY);
        }
        CASE(ZERO) {
            std::memset(A(0), 0, W(1));
            NEXT(ZERO);
        }
        CASE(ADDR) {
            storeValue<U32>(A(0), static_cast<U32>(A(1) - image));
            NEXT(ADDR);
        }
        UN(SX_8_32, std::int8_t, I32, a)
        UN(ZX_8_32, std::uint8_t, U32, a)
        UN(SX_16_32, std::int16_t, I32, a)
        UN(ZX_16_32, std::uint16_t, U32, a)
        UN(SX_32_64, I32, I64, a)
        UN(ZX_32_64, U32, U64, a)
        UN(TO_BOOL_32, U32, std::uint8_t, a != 0 ? 1 : 0)
        UN(TO_BOOL_64, U64, std::uint8_t, a != 0 ? 1 : 0)

        // --- integer arithmetic ---
        BIN(ADD_I32, U32, a + b)
        BIN(SUB_I32, U32, a - b)
        BIN(MUL_I32, U32, a * b)
        CASE(DIV_I32) {
            const I32 a = loadValue<I32>(A(1));
            const I32 b = loadValue<I32>(A(2));
            if (b == 0) [[unlikely]]
                FAULT(Trap::DivByZero);
            if (a == std::numeric_limits<I32>::min() && b == -1) [[unlikely]]
                FAULT(Trap::Overflow);
            storeValue<I32>(A(0), a / b);
            NEXT(DIV_I32);
        }
        CASE(MOD_I32) {
            const I32 a = loadValue<I32>(A(1));
            const I32 b = loadValue<I32>(A(2));
            if (b == 0) [[unlikely]]
                FAULT(Trap::DivByZero);
            storeValue<I32>(A(0), b == -1 ? 0 : a % b);
            NEXT(MOD_I32);
        }
        CASE(DIV_U32) {
            const U32 b = loadValue<U32>(A(2));
            if (b == 0) [[unlikely]]
                FAULT(Trap::DivByZero);
            storeValue<U32>(A(0), loadValue<U32>(A(1)) / b);
            NEXT(DIV_U32);
        }
        CASE(MOD_U32) {
            const U32 b = loadValue<U32>(A(2));
            if (b == 0) [[unlikely]]
                FAULT(Trap::DivByZero);
            storeValue<U32>(A(0), loadValue<U32>(A(1)) % b);
            NEXT(MOD_U32);
        }
        UN(NEG_I32, U32, U32, 0u - a)
        UN(ABS_I32, I32, U32, a < 0 ? 0u - static_cast<U32>(a) : static_cast<U32>(a))
        CASE(ADD_I32_IMM) {
            storeValue<U32>(A(0), loadValue<U32>(A(1)) + W(2));
            NEXT(ADD_I32_IMM);
        }
        CASE(MUL_I32_IMM) {
            storeValue<U32>(A(0), loadValue<U32>(A(1)) * W(2));
            NEXT(MUL_I32_IMM);
        }
        BIN(ADD_I64, U64, a + b)
        BIN(SUB_I64, U64, a - b)
        BIN(MUL_I64, U64, a * b)
        CASE(DIV_I64) {
            const I64 a = loadValue<I64>(A(1));
            const I64 b = loadValue<I64>(A(2));
            if (b == 0) [[unlikely]]
                FAULT(Trap::DivByZero);
            if (a == std::numeric_limits<I64>::min() && b == -1) [[unlikely]]
                FAULT(Trap::Overflow);
            storeValue<I64>(A(0), a / b);
            NEXT(DIV_I64);
        }
        CASE(MOD_I64) {
            const I64 a = loadValue<I64>(A(1));
            const I64 b = loadValue<I64>(A(2));
            if (b == 0) [[unlikely]]
                FAULT(Trap::DivByZero);
            storeValue<I64>(A(0), b == -1 ? 0 : a % b);
            NEXT(MOD_I64);
        }
        CASE(DIV_U64) {
            const U64 b = loadValue<U64>(A(2));
            if (b == 0) [[unlikely]]
                FAULT(Trap::DivByZero);
            storeValue<U64>(A(0), loadValue<U64>(A(1)) / b);
            NEXT(DIV_U64);
        }
        CASE(MOD_U64) {
            const U64 b = loadValue<U64>(A(2));
            if (b == 0) [[unlikely]]
                FAULT(Trap::DivByZero);
            storeValue<U64>(A(0), loadValue<U64>(A(1)) % b);
            NEXT(MOD_U64);
        }
        UN(NEG_I64, U64, U64, 0u - a)
        UN(ABS_I64, I64, U64, a < 0 ? U64{0} - static_cast<U64>(a) : static_cast<U64>(a))
        CASE(ADD_I64_IMM) {
            storeValue<U64>(A(0), loadValue<U64>(A(1)) + static_cast<U64>(IMM64(2)));
            NEXT(ADD_I64_IMM);
        }
        BIN_T(ADD_I32_T, I32, __builtin_add_overflow)
        BIN_T(SUB_I32_T, I32, __builtin_sub_overflow)
        BIN_T(MUL_I32_T, I32, __builtin_mul_overflow)
        BIN_T(ADD_U32_T, U32, __builtin_add_overflow)
        BIN_T(SUB_U32_T, U32, __builtin_sub_overflow)
        BIN_T(MUL_U32_T, U32, __builtin_mul_overflow)
        BIN_T(ADD_I64_T, I64, __builtin_add_overflow)
        BIN_T(SUB_I64_T, I64, __builtin_sub_overflow)
        BIN_T(MUL_I64_T, I64, __builtin_mul_overflow)
        BIN_T(ADD_U64_T, U64, __builtin_add_overflow)
        BIN_T(SUB_U64_T, U64, __builtin_sub_overflow)
        BIN_T(MUL_U64_T, U64, __builtin_mul_overflow)
        CASE(NEG_I32_T) {
            const I32 a = loadValue<I32>(A(1));
            if (a == std::numeric_limits<I32>::min()) [[unlikely]]
                FAULT(Trap::Overflow);
            storeValue<I32>(A(0), -a);
            NEXT(NEG_I32_T);
        }
        CASE(NEG_I64_T) {
            const I64 a = loadValue<I64>(A(1));
            if (a == std::numeric_limits<I64>::min()) [[unlikely]]
                FAULT(Trap::Overflow);
            storeValue<I64>(A(0), -a);
            NEXT(NEG_I64_T);
        }

        // --- floating point ---
        BIN(ADD_F32, F32, a + b)
        BIN(SUB_F32, F32, a - b)
        BIN(MUL_F32, F32, a * b)
        BIN(DIV_F32, F32, a / b)
        UN(NEG_F32, F32, F32, -a)
        UN(ABS_F32, F32, F32, std::fabs(a))
        BIN(ADD_F64, F64, a + b)
        BIN(SUB_F64, F64, a - b)
        BIN(MUL_F64, F64, a * b)
        BIN(DIV_F64, F64, a / b)
        UN(NEG_F64, F64, F64, -a)
        UN(ABS_F64, F64, F64, std::fabs(a))
        UN(SQRT_F32, F32, F32, std::sqrt(a))
        UN(SQRT_F64, F64, F64, std::sqrt(a))
        CASE(MATH_F32) {
            storeValue<F32>(A(0), mathFn<F32>(W(2), loadValue<F32>(A(1))));
            NEXT(MATH_F32);
        }
        CASE(MATH_F64) {
            storeValue<F64>(A(0), mathFn<F64>(W(2), loadValue<F64>(A(1))));
            NEXT(MATH_F64);
        }
        BIN(ATAN2_F32, F32, std::atan2(a, b))
        BIN(ATAN2_F64, F64, std::atan2(a, b))
        BIN(EXPT_F32, F32, std::pow(a, b))
        BIN(EXPT_F64, F64, std::pow(a, b))

        // --- comparisons ---
        CMP(EQ_I32, I32, ==)
        CMP(NE_I32, I32, !=)
        CMP(LT_I32, I32, <)
        CMP(LE_I32, I32, <=)
        CMP(GT_I32, I32, >)
        CMP(GE_I32, I32, >=)
        CMP(LT_U32, U32, <)
        CMP(LE_U32, U32, <=)
        CMP(GT_U32, U32, >)
        CMP(GE_U32, U32, >=)
        CMP(EQ_I64, I64, ==)
        CMP(NE_I64, I64, !=)
        CMP(LT_I64, I64, <)
        CMP(LE_I64, I64, <=)
        CMP(GT_I64, I64, >)
        CMP(GE_I64, I64, >=)
        CMP(LT_U64, U64, <)
        CMP(LE_U64, U64, <=)
        CMP(GT_U64, U64, >)
        CMP(GE_U64, U64, >=)
        CMP(EQ_F32, F32, ==)
        CMP(NE_F32, F32, !=)
        CMP(LT_F32, F32, <)
        CMP(LE_F32, F32, <=)
        CMP(GT_F32, F32, >)
        CMP(GE_F32, F32, >=)
        CMP(EQ_F64, F64, ==)
        CMP(NE_F64, F64, !=)
        CMP(LT_F64, F64, <)
        CMP(LE_F64, F64, <=)
        CMP(GT_F64, F64, >)
        CMP(GE_F64, F64, >=)
        BIN(MIN_I32, I32, minOf(a, b))
        BIN(MAX_I32, I32, maxOf(a, b))
        BIN(MIN_U32, U32, minOf(a, b))
        BIN(MAX_U32, U32, maxOf(a, b))
        BIN(MIN_I64, I64, minOf(a, b))
        BIN(MAX_I64, I64, maxOf(a, b))
        BIN(MIN_U64, U64, minOf(a, b))
        BIN(MAX_U64, U64, maxOf(a, b))
        BIN(MIN_F32, F32, minOf(a, b))
        BIN(MAX_F32, F32, maxOf(a, b))
        BIN(MIN_F64, F64, minOf(a, b))
        BIN(MAX_F64, F64, maxOf(a, b))

        // --- BOOL and bit strings ---
        BIN(AND_B, std::uint8_t, (a != 0 && b != 0) ? 1 : 0)
        BIN(OR_B, std::uint8_t, (a != 0 || b != 0) ? 1 : 0)
        BIN(XOR_B, std::uint8_t, ((a != 0) != (b != 0)) ? 1 : 0)
        UN(NOT_B, std::uint8_t, std::uint8_t, a != 0 ? 0 : 1)
        BIN(AND_32, U32, a & b)
        BIN(OR_32, U32, a | b)
        BIN(XOR_32, U32, a ^ b)
        UN(NOT_32, U32, U32, ~a)
        BIN(AND_64, U64, a & b)
        BIN(OR_64, U64, a | b)
        BIN(XOR_64, U64, a ^ b)
        UN(NOT_64, U64, U64, ~a)
        BIN(SHL_32, U32, b >= 32 ? 0u : a << b)
        BIN(SHR_32, U32, b >= 32 ? 0u : a >> b)
        CASE(SHL_64) {
            const U64 a = loadValue<U64>(A(1));
            const U32 b = loadValue<U32>(A(2));
            storeValue<U64>(A(0), b >= 64 ? U64{0} : a << b);
            NEXT(SHL_64);
        }
        CASE(SHR_64) {
            const U64 a = loadValue<U64>(A(1));
            const U32 b = loadValue<U32>(A(2));
            storeValue<U64>(A(0), b >= 64 ? U64{0} : a >> b);
            NEXT(SHR_64);
        }
        BIN(ROL_8, U32, rotl8(a, b))
        BIN(ROR_8, U32, rotr8(a, b))
        BIN(ROL_16, U32, rotl16(a, b))
        BIN(ROR_16, U32, rotr16(a, b))
        BIN(ROL_32, U32, std::rotl(a, static_cast<int>(b & 31u)))
        BIN(ROR_32, U32, std::rotr(a, static_cast<int>(b & 31u)))
        CASE(ROL_64) {
            storeValue<U64>(A(0), std::rotl(loadValue<U64>(A(1)), static_cast<int>(loadValue<U32>(A(2)) & 63u)));
            NEXT(ROL_64);
        }
        CASE(ROR_64) {
            storeValue<U64>(A(0), std::rotr(loadValue<U64>(A(1)), static_cast<int>(loadValue<U32>(A(2)) & 63u)));
            NEXT(ROR_64);
        }

        // --- conversions ---
        UN(I32_TO_F32, I32, F32, a)
        UN(I32_TO_F64, I32, F64, a)
        UN(U32_TO_F32, U32, F32, a)
        UN(U32_TO_F64, U32, F64, a)
        UN(I64_TO_F32, I64, F32, a)
        UN(I64_TO_F64, I64, F64, a)
        UN(U64_TO_F32, U64, F32, a)
        UN(U64_TO_F64, U64, F64, a)
        UN(F32_TO_F64, F32, F64, a)
        UN(F64_TO_F32, F64, F32, a)
        UN(F32_TO_I32, F32, I32, roundToInt<I32>(a))
        UN(F64_TO_I32, F64, I32, roundToInt<I32>(a))
        UN(F32_TO_I64, F32, I64, roundToInt<I64>(a))
        UN(F64_TO_I64, F64, I64, roundToInt<I64>(a))
        UN(F64_TO_U64, F64, U64, roundToInt<U64>(a))
        UN(TRUNC_F32_I32, F32, I32, truncToInt<I32>(a))
        UN(TRUNC_F64_I32, F64, I32, truncToInt<I32>(a))
        UN(TRUNC_F32_I64, F32, I64, truncToInt<I64>(a))
        UN(TRUNC_F64_I64, F64, I64, truncToInt<I64>(a))

        // --- arrays and references ---
        CASE(IDX) {
            const std::int64_t rel = static_cast<std::int64_t>(loadValue<I32>(A(2))) - IMM32(3);
            if (static_cast<U64>(rel) >= W(5)) [[unlikely]]
                FAULT(Trap::ArrayBounds);
            storeValue<U32>(A(0), static_cast<U32>(A(1) - image) + static_cast<U32>(rel) * W(4));
            NEXT(IDX);
        }
        CASE(IDXP) {
            const U32 p = loadValue<U32>(A(1));
            if (p == 0) [[unlikely]]
                FAULT(Trap::NullReference);
            const std::int64_t rel = static_cast<std::int64_t>(loadValue<I32>(A(2))) - IMM32(3);
            if (static_cast<U64>(rel) >= W(5)) [[unlikely]]
                FAULT(Trap::ArrayBounds);
            storeValue<U32>(A(0), p + static_cast<U32>(rel) * W(4));
            NEXT(IDXP);
        }
        LDX(LDX_8, std::uint8_t, std::uint8_t)
        LDX(LDX_16, std::uint16_t, std::uint16_t)
        LDX(LDX_32, U32, U32)
        LDX(LDX_64, U64, U64)
        LDX(LDX_S8, std::int8_t, I32)
        LDX(LDX_U8, std::uint8_t, U32)
        LDX(LDX_S16, std::int16_t, I32)
        LDX(LDX_U16, std::uint16_t, U32)
        STX(STX_8, std::uint8_t)
        STX(STX_16, std::uint16_t)
        STX(STX_32, U32)
        STX(STX_64, U64)
        CASE(LDX_N) {
            ELEMENT(p_, 1, 2);
            copyBytes(A(0), p_, W(4));
            NEXT(LDX_N);
        }
        CASE(STX_N) {
            ELEMENT(p_, 1, 2);
            copyBytes(p_, A(0), W(4));
            NEXT(STX_N);
        }
        LDI(LDI_8, std::uint8_t)
        LDI(LDI_16, std::uint16_t)
        LDI(LDI_32, U32)
        LDI(LDI_64, U64)
        STI(STI_8, std::uint8_t)
        STI(STI_16, std::uint16_t)
        STI(STI_32, U32)
        STI(STI_64, U64)
        CASE(LDI_N) {
            const U32 p = loadValue<U32>(A(1));
            if (p == 0) [[unlikely]]
                FAULT(Trap::NullReference);
            if (static_cast<U64>(p) + W(2) > imageSize) [[unlikely]]
                FAULT(Trap::InvalidReference);
            copyBytes(A(0), image + p, W(2));
            NEXT(LDI_N);
        }
        CASE(STI_N) {
            const U32 p = loadValue<U32>(A(0));
            if (p == 0) [[unlikely]]
                FAULT(Trap::NullReference);
            if (p < constSize || static_cast<U64>(p) + W(2) > imageSize) [[unlikely]]
                FAULT(Trap::InvalidReference);
            copyBytes(image + p, A(1), W(2));
            NEXT(STI_N);
        }
        CASE(CHK_REF) {
            if (loadValue<U32>(A(0)) == 0) [[unlikely]]
                FAULT(Trap::NullReference);
            NEXT(CHK_REF);
        }
        CASE(CHK_PTR) {
            const U32 p = loadValue<U32>(A(0));
            if (p == 0) [[unlikely]]
                FAULT(Trap::NullReference);
            if ((p & (W(1) - 1)) != 0 || static_cast<U64>(p) + W(2) > imageSize) [[unlikely]]
                FAULT(Trap::InvalidReference);
            NEXT(CHK_PTR);
        }

        // --- strings ---
        CASE(SMOV) {
            if (!moveString<std::uint8_t>(A(0), A(1), W(2), imageEnd)) [[unlikely]]
                FAULT(Trap::InvalidReference);
            NEXT(SMOV);
        }
        CASE(SCMP) {
            storeValue<I32>(A(0), compareStrings<std::uint8_t>(A(1), A(2), imageEnd));
            NEXT(SCMP);
        }
        CASE(WSMOV) {
            if (!moveString<std::uint16_t>(A(0), A(1), W(2), imageEnd)) [[unlikely]]
                FAULT(Trap::InvalidReference);
            NEXT(WSMOV);
        }
        CASE(WSCMP) {
            storeValue<I32>(A(0), compareStrings<std::uint16_t>(A(1), A(2), imageEnd));
            NEXT(WSCMP);
        }

        // --- calls ---
        CASE(CALL_FN) {
            const bytecode::PouEntry& pou = pous[W(0)];
            if (pou.code == bytecode::kNone) [[unlikely]]
                FAULT(Trap::InvalidCall);
            ENTER(W(0), pou.code, thisO, static_cast<std::uint64_t>(frameO) + W(1), pou.frameSize,
                  static_cast<std::uint32_t>(ip - code) + LEN(CALL_FN));
        }
        CASE(CALL_FB) {
            const std::uint32_t p = W(0);
            const bytecode::PouEntry& pou = pous[p];
            const U32 inst = static_cast<U32>(A(1) - image);
            if (pou.native != bytecode::kNone) {
                const FbLayout& layout = res.fbLayouts[p];
                if (layout.fn == nullptr) [[unlikely]]
                    FAULT(Trap::InvalidCall);
                layout.fn(nctx, image + inst, layout);
                NEXT(CALL_FB);
            }
            ENTER(p, pou.code, inst, static_cast<std::uint64_t>(frameO) + W(2), pou.frameSize,
                  static_cast<std::uint32_t>(ip - code) + LEN(CALL_FB));
        }
        CASE(CALL_FB_IND) {
            const std::uint32_t p = W(0);
            const bytecode::PouEntry& pou = pous[p];
            const U32 inst = loadValue<U32>(A(1));
            if (inst == 0) [[unlikely]]
                FAULT(Trap::NullReference);
            if (static_cast<U64>(inst) + res.instanceSize[p] > imageSize || inst < constSize) [[unlikely]]
                FAULT(Trap::InvalidReference);
            if (pou.native != bytecode::kNone) {
                const FbLayout& layout = res.fbLayouts[p];
                if (layout.fn == nullptr) [[unlikely]]
                    FAULT(Trap::InvalidCall);
                layout.fn(nctx, image + inst, layout);
                NEXT(CALL_FB_IND);
            }
            ENTER(p, pou.code, inst, static_cast<std::uint64_t>(frameO) + W(2), pou.frameSize,
                  static_cast<std::uint32_t>(ip - code) + LEN(CALL_FB_IND));
        }
        CASE(CALL_IFACE) {
            const U32 inst = loadValue<U32>(A(0));
            if (inst == 0) [[unlikely]]
                FAULT(Trap::NullReference);
            if (static_cast<U64>(inst) + 4 > imageSize) [[unlikely]]
                FAULT(Trap::InvalidReference);
            const U32 p = dispatchTarget(*rs.module, res.instanceSize, image, imageSize, inst, W(1));
            if (p == bytecode::kNone) [[unlikely]]
                FAULT(Trap::InvalidCall);
            ENTER(p, pous[p].code, inst, static_cast<std::uint64_t>(frameO) + W(2), pous[p].frameSize,
                  static_cast<std::uint32_t>(ip - code) + LEN(CALL_IFACE));
        }
        CASE(CALL_VIRT) {
            // The verifier placed the 4 header bytes inside the image (a 4-byte operand).
            const U32 inst = static_cast<U32>(A(0) - image);
            const U32 p = dispatchTarget(*rs.module, res.instanceSize, image, imageSize, inst, W(1));
            if (p == bytecode::kNone) [[unlikely]]
                FAULT(Trap::InvalidCall);
            ENTER(p, pous[p].code, inst, static_cast<std::uint64_t>(frameO) + W(2), pous[p].frameSize,
                  static_cast<std::uint32_t>(ip - code) + LEN(CALL_VIRT));
        }
        CASE(CALL_NATIVE) {
            const NativeFn fn = nativeFn(static_cast<bytecode::Native>(W(0)));
            if (fn == nullptr) [[unlikely]]
                FAULT(Trap::InvalidCall);
            const Trap t = fn(nctx, A(1));
            if (t != Trap::None) [[unlikely]]
                FAULT(t);
            NEXT(CALL_NATIVE);
        }

        // --- division by a constant ---
        CASE(DIV_I32_IMM) {
            const I32 a = loadValue<I32>(A(1));
            const I32 b = IMM32(2);
            const U32 q = divByReciprocal(bytecode::divisorMagnitude(a), static_cast<U64>(IMM64(3)));
            storeValue<U32>(A(0), (a < 0) != (b < 0) ? 0u - q : q);
            NEXT(DIV_I32_IMM);
        }
        CASE(MOD_I32_IMM) {
            const I32 a = loadValue<I32>(A(1));
            // The sign of the divisor does not matter (the result has the sign of a): the back
            // end gives its magnitude.
            const U32 r = modByReciprocal(bytecode::divisorMagnitude(a), W(2), static_cast<U64>(IMM64(3)));
            storeValue<U32>(A(0), a < 0 ? 0u - r : r);
            NEXT(MOD_I32_IMM);
        }
        CASE(DIV_U32_IMM) {
            storeValue<U32>(A(0), divByReciprocal(loadValue<U32>(A(1)), static_cast<U64>(IMM64(3))));
            NEXT(DIV_U32_IMM);
        }
        CASE(MOD_U32_IMM) {
            storeValue<U32>(A(0), modByReciprocal(loadValue<U32>(A(1)), W(2), static_cast<U64>(IMM64(3))));
            NEXT(MOD_U32_IMM);
        }

        // --- REAL compare-and-branch ---
        JCMP(JEQ_F32, F32, ==)
        JCMP(JNE_F32, F32, !=)
        JCMP(JLT_F32, F32, <)
        JCMP(JLE_F32, F32, <=)
        JNCMP(JNLT_F32, F32, <)
        JNCMP(JNLE_F32, F32, <=)
        JCMP(JEQ_F64, F64, ==)
        JCMP(JNE_F64, F64, !=)
        JCMP(JLT_F64, F64, <)
        JCMP(JLE_F64, F64, <=)
        JNCMP(JNLT_F64, F64, <)
        JNCMP(JNLE_F64, F64, <=)

        // --- fused FOR back-edge: go on while the next value does not pass the bound. The room
        // left (bound - counter) is computed in 64 bits and compared with the step, so the
        // counter never passes the bound and the step never overflows.
        CASE(LOOP_I32_IMM) { // i1 is bound - step (the back end computes it)
            const I32 v = loadValue<I32>(A(0));
            if (v <= IMM32(1)) {
                storeValue<U32>(A(0), static_cast<U32>(v) + W(2));
                LOOP_BACK(W(3));
            }
            NEXT(LOOP_I32_IMM);
        }
        CASE(LOOP_DN_I32_IMM) {
            const I32 v = loadValue<I32>(A(0));
            if (v >= IMM32(1)) {
                storeValue<U32>(A(0), static_cast<U32>(v) + W(2));
                LOOP_BACK(W(3));
            }
            NEXT(LOOP_DN_I32_IMM);
        }
        CASE(LOOP_I32) {
            const I32 v = loadValue<I32>(A(0));
            if (static_cast<I64>(loadValue<I32>(A(1))) - v >= IMM32(2)) {
                storeValue<I32>(A(0), static_cast<I32>(v + IMM32(2)));
                LOOP_BACK(W(3));
            }
            NEXT(LOOP_I32);
        }
        CASE(LOOP_DN_I32) {
            const I32 v = loadValue<I32>(A(0));
            if (static_cast<I64>(loadValue<I32>(A(1))) - v <= IMM32(2)) {
                storeValue<I32>(A(0), static_cast<I32>(v + IMM32(2)));
                LOOP_BACK(W(3));
            }
            NEXT(LOOP_DN_I32);
        }
        CASE(LOOP_STEP_I32) {
            const I32 v = loadValue<I32>(A(0));
            const I64 room = static_cast<I64>(loadValue<I32>(A(1))) - v;
            const I32 step = loadValue<I32>(A(2));
            if ((step > 0 && room >= step) || (step < 0 && room <= step)) {
                storeValue<I32>(A(0), static_cast<I32>(v + step));
                LOOP_BACK(W(3));
            }
            NEXT(LOOP_STEP_I32);
        }
        CASE(LOOP_STEP_I64) {
            // In unsigned arithmetic: bound - counter (or counter - bound) is exact once the
            // counter is known to be on the right side, and so is the step's magnitude.
            const auto v = loadValue<U64>(A(0));
            const auto bound = loadValue<U64>(A(1));
            const auto step = loadValue<U64>(A(2));
            const auto sv = static_cast<I64>(v);
            const auto sb = static_cast<I64>(bound);
            const auto ss = static_cast<I64>(step);
            if ((ss > 0 && sv < sb && bound - v >= step) || (ss < 0 && sv > sb && v - bound >= U64{0} - step)) {
                storeValue<U64>(A(0), v + step);
                LOOP_BACK(W(3));
            }
            NEXT(LOOP_STEP_I64);
        }
        CASE(LOOP_I16_IMM) { // LOOP_I32_IMM, and the INT variable d2 gets the new value
            const I32 v = loadValue<I32>(A(0));
            if (v <= IMM32(2)) {
                const U32 next = static_cast<U32>(v) + W(3);
                storeValue<U32>(A(0), next);
                storeValue<std::uint16_t>(A(1), static_cast<std::uint16_t>(next));
                LOOP_BACK(W(4));
            }
            NEXT(LOOP_I16_IMM);
        }
        CASE(LOOP_DN_I16_IMM) {
            const I32 v = loadValue<I32>(A(0));
            if (v >= IMM32(2)) {
                const U32 next = static_cast<U32>(v) + W(3);
                storeValue<U32>(A(0), next);
                storeValue<std::uint16_t>(A(1), static_cast<std::uint16_t>(next));
                LOOP_BACK(W(4));
            }
            NEXT(LOOP_DN_I16_IMM);
        }

        // --- multiply then add, rounded after each step ---
        CASE(MULADD_F32) {
            const F32 p = rounded(loadValue<F32>(A(1)) * loadValue<F32>(A(2)));
            storeValue<F32>(A(0), p + loadValue<F32>(A(3)));
            NEXT(MULADD_F32);
        }
        CASE(MULADD_F64) {
            const F64 p = rounded(loadValue<F64>(A(1)) * loadValue<F64>(A(2)));
            storeValue<F64>(A(0), p + loadValue<F64>(A(3)));
            NEXT(MULADD_F64);
        }
        CASE(MUL2ADD_F32) {
            const F32 p = rounded(loadValue<F32>(A(1)) * loadValue<F32>(A(2)));
            const F32 q = rounded(loadValue<F32>(A(3)) * loadValue<F32>(A(4)));
            storeValue<F32>(A(0), p + q);
            NEXT(MUL2ADD_F32);
        }
        CASE(MUL2ADD_F64) {
            const F64 p = rounded(loadValue<F64>(A(1)) * loadValue<F64>(A(2)));
            const F64 q = rounded(loadValue<F64>(A(3)) * loadValue<F64>(A(4)));
            storeValue<F64>(A(0), p + q);
            NEXT(MUL2ADD_F64);
        }

        // --- an array element added: a running sum is one dispatch per element ---
        ADDX(ADDX_I32, U32, a + b)
        ADDX(ADDX_F32, F32, a + b)
        ADDX(ADDX_F64, F64, a + b)

        // --- LREAL arithmetic with a REAL operand widened ---
        CASE(MULW_F64) {
            storeValue<F64>(A(0), static_cast<F64>(loadValue<F32>(A(1))) * loadValue<F64>(A(2)));
            NEXT(MULW_F64);
        }
        CASE(DIVW_F64) {
            storeValue<F64>(A(0), static_cast<F64>(loadValue<F32>(A(1))) / loadValue<F64>(A(2)));
            NEXT(DIVW_F64);
        }
        CASE(ADDW_F64) {
            storeValue<F64>(A(0), static_cast<F64>(loadValue<F32>(A(1))) + loadValue<F64>(A(2)));
            NEXT(ADDW_F64);
        }

        // --- ring-buffer index (a + b) MOD constant ---
        CASE(ADDMOD_I32_IMM) {
            const auto sum = static_cast<I32>(loadValue<U32>(A(1)) + loadValue<U32>(A(2)));
            const U32 r = modByReciprocal(bytecode::divisorMagnitude(sum), W(3), static_cast<U64>(IMM64(4)));
            storeValue<U32>(A(0), sum < 0 ? 0u - r : r);
            NEXT(ADDMOD_I32_IMM);
        }
        CASE(ADDMOD_U32_IMM) {
            const U32 sum = loadValue<U32>(A(1)) + loadValue<U32>(A(2));
            storeValue<U32>(A(0), modByReciprocal(sum, W(3), static_cast<U64>(IMM64(4))));
            NEXT(ADDMOD_U32_IMM);
        }
    default: goto invalid;
    }

invalid:
#if TAKT_HAS_COMPUTED_GOTO
L_invalid:
#endif
    trap = Trap::InvalidOpcode;
    goto fault;
breakpoint:
#if TAKT_HAS_COMPUTED_GOTO
L_breakpoint:
#endif
    // The plain loop on patched code reached a breakpoint's instruction (Debugger::plainCode): ask
    // the debugger as the debug loop does, then run the instruction the breakpoint stands on, or,
    // when a step or a pause was asked meanwhile, the rest of the run in the loop that halts at
    // every statement.
    if constexpr (!kDebug) {
        if (rs.debugger == nullptr) { // a breakpoint word outside patched code: not a program's
            trap = Trap::InvalidOpcode;
            goto fault;
        }
        std::atomic_thread_fence(std::memory_order_acquire); // the map's bits and slot, set before the patch
        Debugger& dbg = *rs.debugger;
        const auto pc = static_cast<std::uint32_t>(ip - code);
        if (dbg.shouldHalt(dbg.stops().bytes()[pc].load(std::memory_order_relaxed), depth, pc,
                           ExprScope{rs.image, static_cast<std::uint32_t>(imageSize), thisO, frameO})) {
            fillHaltFrames(dbg.frameBuffer(rs.image, static_cast<std::uint32_t>(imageSize)), *rs.module, res, depth, pc,
                           thisO, frameO);
            dbg.halt(depth + 1);
        }
        if (dbg.plainCode() == nullptr) {
            const ResumeAt from{depth, ticks};
            return execute<kSwitch, true>(rs, pc, thisO, frameO, &from);
        }
        switchOp = rs.module->code[pc]; // the instruction the breakpoint stands on
#if TAKT_HAS_COMPUTED_GOTO
        if constexpr (!kSwitch) {
            goto* kLabels[switchOp];
        }
#endif
        goto dispatch_op;
    } else {
        trap = Trap::InvalidOpcode; // the debug loop runs unpatched code
        goto fault;
    }
fault:
    // An exception breakpoint: the thread halts at the faulting statement before the fault is
    // reported, and runs that statement again when resumed (a value fixed meanwhile lets it pass;
    // unfixed, catches() lets the same fault through). A test of one pointer where a run faults,
    // nothing on the path that does not.
    if (rs.debugger != nullptr) [[unlikely]] {
        const auto at = static_cast<std::uint32_t>(ip - code);
        const std::uint32_t start =
            rs.debugger->catches(trap, at, depth) ? statementStart(*rs.module, at) : bytecode::kNone;
        if (start != bytecode::kNone) {
            Debugger& dbg = *rs.debugger;
            fillHaltFrames(dbg.frameBuffer(rs.image, static_cast<std::uint32_t>(imageSize)), *rs.module, res, depth,
                           start, thisO, frameO);
            dbg.haltOnTrap(depth + 1, trap, at, depth);
            ip = code + start;
            trap = Trap::None;
            if constexpr (kDebug) {
                stopMask = dbg.stopMask();
                DISPATCH_OP();
            } else {
                // On in the loop that can halt, which tells when the statement is done.
                const ResumeAt from{depth, ticks};
                return execute<kSwitch, true>(rs, start, thisO, frameO, &from);
            }
        }
    }
    rs.trap->code = trap;
    const auto pc = static_cast<std::uint32_t>(ip - code);
    rs.trap->codeOffset = pc;
    rs.trap->depth = depth;
    rs.trap->pou = bytecode::kNone;
    for (std::uint32_t i = 0; i < pouCount; ++i) {
        if (pous[i].code != bytecode::kNone && pc >= pous[i].code && pc < pous[i].codeEnd) {
            rs.trap->pou = i;
            break;
        }
    }
    return trap;

#undef W
#undef A
#undef IMM32
#undef IMM64
#undef LEN
#undef FAULT
#undef WATCHDOG
#undef CASE
#undef DISPATCH
#undef DISPATCH_OP
#undef NEXT
#undef JUMP
#undef LOOP_BACK
#undef ENTER
#undef BIN
#undef UN
#undef CMP
#undef JCMP
#undef JNCMP
#undef JCMPI
#undef BIN_T
#undef LDI
#undef LDX
#undef ADDX
#undef STX
#undef ELEMENT
#undef STI
}

#if TAKT_HAS_COMPUTED_GOTO
#pragma GCC diagnostic pop
#endif

template Trap execute<false, false>(const RunState&, std::uint32_t, std::uint32_t, std::uint32_t,
                                    const ResumeAt*) noexcept;
template Trap execute<true, false>(const RunState&, std::uint32_t, std::uint32_t, std::uint32_t,
                                   const ResumeAt*) noexcept;
template Trap execute<false, true>(const RunState&, std::uint32_t, std::uint32_t, std::uint32_t,
                                   const ResumeAt*) noexcept;
template Trap execute<true, true>(const RunState&, std::uint32_t, std::uint32_t, std::uint32_t,
                                  const ResumeAt*) noexcept;

} // namespace takt::vm
