#pragma once
// Private to takt_vm (and its tests): the state resolved once at load, the native table and
// the unaligned little-endian image accessors the interpreter and natives share.
#include "takt/bytecode/opcodes.h"
#include "takt/vm/vm.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace takt::vm {

// Bytes at any address (block copies, the natives' argument slots, an FB's own members): no
// promise of atomicity, so the compiler may split or merge them.
template <typename T> inline T load(const std::uint8_t* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}
template <typename T> inline void store(std::uint8_t* p, T v) noexcept {
    std::memcpy(p, &v, sizeof(T));
}

// A value of the data image at an address aligned to its size (the compiler lays every
// elementary value out so; docs/language-notes.md, "Data shared between tasks"): one relaxed
// atomic access, so a value of up to 64 bits that tasks on other threads read or write is never
// seen half-written. On amd64 and arm64 a relaxed access is the same single MOV / LDR / STR as a
// plain one; it only forbids the compiler to split it. Floating-point values move as integers of
// their width.
template <typename T>
using ValueBits =
    std::conditional_t<sizeof(T) == 1, std::uint8_t,
                       std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                          std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
template <typename T> inline T loadValue(const std::uint8_t* p) noexcept {
    static_assert(sizeof(T) == sizeof(ValueBits<T>));
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the image holds the value at p
    const auto bits = __atomic_load_n(reinterpret_cast<const ValueBits<T>*>(p), __ATOMIC_RELAXED);
    return std::bit_cast<T>(bits);
}
template <typename T> inline void storeValue(std::uint8_t* p, T v) noexcept {
    static_assert(sizeof(T) == sizeof(ValueBits<T>));
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the image holds the value at p
    __atomic_store_n(reinterpret_cast<ValueBits<T>*>(p), std::bit_cast<ValueBits<T>>(v), __ATOMIC_RELAXED);
}
// Through a pointer (REF_TO, POINTER TO), which CODESYS pointer arithmetic may leave at any
// byte: atomic when aligned, else bytes (an unaligned value is not atomic on any CPU).
template <typename T> inline T loadValueAt(const std::uint8_t* p) noexcept {
    return (reinterpret_cast<std::uintptr_t>(p) & (sizeof(T) - 1)) == 0 ? loadValue<T>(p) : load<T>(p);
}
template <typename T> inline void storeValueAt(std::uint8_t* p, T v) noexcept {
    if ((reinterpret_cast<std::uintptr_t>(p) & (sizeof(T) - 1)) == 0) {
        storeValue<T>(p, v);
    } else {
        store<T>(p, v);
    }
}

// Ends a string value of `n` code units in a buffer of `cap` + 1: the terminator, then zeros to
// the buffer's end. A whole-buffer copy (a STRING inside a structure or array is copied as bytes)
// then carries only the value, never what the buffer held before; that matters because a
// temporary's buffer lies in the stack region, which is scratch (its bytes differ between the
// interpreter and the native tier, which keeps some frames in machine registers).
template <typename C> inline void endString(C* dst, std::size_t n, std::size_t cap) noexcept {
    std::fill(dst + n, dst + cap + 1, C{0});
}

// Three-way comparison of NUL-terminated code-unit strings that may run to the image end.
template <typename C>
std::int32_t compareStrings(const std::uint8_t* a, const std::uint8_t* b, const std::uint8_t* end) noexcept {
    for (;;) {
        const C ca = a + sizeof(C) <= end ? load<C>(a) : C{0};
        const C cb = b + sizeof(C) <= end ? load<C>(b) : C{0};
        if (ca != cb) {
            return ca < cb ? -1 : 1;
        }
        if (ca == 0) {
            return 0;
        }
        a += sizeof(C);
        b += sizeof(C);
    }
}

// Copies a NUL-terminated string of at most `cap` code units; false if dst cannot hold cap + 1.
template <typename C>
bool moveString(std::uint8_t* dst, const std::uint8_t* src, std::uint32_t cap, const std::uint8_t* end) noexcept {
    if (dst + (static_cast<std::size_t>(cap) + 1) * sizeof(C) > end) {
        return false;
    }
    std::size_t n = 0;
    while (n < cap && src + (n + 1) * sizeof(C) <= end && load<C>(src + n * sizeof(C)) != 0) {
        ++n;
    }
    std::memmove(dst, src, n * sizeof(C));
    // endString on bytes (dst may be unaligned for C)
    std::memset(dst + n * sizeof(C), 0, (static_cast<std::size_t>(cap) + 1 - n) * sizeof(C));
    return true;
}

// The POU a dispatched call runs on instance `inst` (whose first 4 bytes are in the image):
// entry `slot` of the dispatch table the instance's header names; kNone when that is no
// method whose instance fits in the image. Shared by the interpreter and the native tier.
inline std::uint32_t dispatchTarget(const bytecode::Module& module, const std::vector<std::uint32_t>& instanceSize,
                                    const std::uint8_t* image, std::uint64_t imageSize, std::uint32_t inst,
                                    std::uint32_t slot) noexcept {
    const std::uint64_t at = static_cast<std::uint64_t>(load<std::uint32_t>(image + inst)) + 4ull * slot;
    if (at + 4 > imageSize) [[unlikely]] {
        return bytecode::kNone;
    }
    const std::uint32_t p = load<std::uint32_t>(image + at);
    if (p >= module.pous.size() || module.pous[p].code == bytecode::kNone ||
        static_cast<std::uint64_t>(inst) + instanceSize[p] > imageSize) [[unlikely]] {
        return bytecode::kNone;
    }
    return p;
}

// One member of a native FB instance: where it is and how wide (0 = absent).
struct FbField {
    std::uint32_t offset = 0;
    std::uint8_t size = 0;
    bool isSigned = false;
};

// Member roles of the standard FBs; each native uses the subset it needs.
enum FbRole : std::uint8_t {
    kIn,
    kPt,
    kQ,
    kEt,
    kStartTime,
    kRunning,
    kPrevIn,
    kClk,
    kM,
    kCu,
    kCd,
    kR,
    kLd,
    kPv,
    kQu,
    kQd,
    kCv,
    kCuM,
    kCdM,
    kS1,
    kR1,
    kS,
    kQ1,
    kPdt,
    kCdt,
    kOffset,
    kRoleCount
};

struct FbLayout;
struct NativeContext;
using NativeFb = void (*)(const NativeContext& ctx, std::uint8_t* instance, const FbLayout& layout) noexcept;

struct FbLayout {
    NativeFb fn = nullptr; // null: not a native FB
    std::array<FbField, kRoleCount> fields{};
};

inline std::int64_t readInt(const std::uint8_t* base, const FbField& f) noexcept {
    switch (f.size) {
    case 1: return f.isSigned ? load<std::int8_t>(base + f.offset) : load<std::uint8_t>(base + f.offset);
    case 2: return f.isSigned ? load<std::int16_t>(base + f.offset) : load<std::uint16_t>(base + f.offset);
    // Not a ?: between int32_t and uint32_t: their common type is uint32_t, which would drop the sign.
    case 4:
        if (f.isSigned) {
            return load<std::int32_t>(base + f.offset);
        }
        return load<std::uint32_t>(base + f.offset);
    case 8: return load<std::int64_t>(base + f.offset);
    default: return 0;
    }
}
inline void writeInt(std::uint8_t* base, const FbField& f, std::int64_t v) noexcept {
    switch (f.size) {
    case 1: store<std::uint8_t>(base + f.offset, static_cast<std::uint8_t>(v)); break;
    case 2: store<std::uint16_t>(base + f.offset, static_cast<std::uint16_t>(v)); break;
    case 4: store<std::uint32_t>(base + f.offset, static_cast<std::uint32_t>(v)); break;
    case 8: store<std::int64_t>(base + f.offset, v); break;
    default: break;
    }
}
inline bool readBool(const std::uint8_t* base, const FbField& f) noexcept {
    return f.size != 0 && base[f.offset] != 0;
}
inline void writeBool(std::uint8_t* base, const FbField& f, bool v) noexcept {
    if (f.size != 0) {
        base[f.offset] = v ? 1 : 0;
    }
}

// What a native sees of the running VM.
struct NativeContext {
    std::uint8_t* image;
    std::uint32_t imageSize;
    std::uint32_t constSize; // stores below this are refused
    std::int64_t nowNs;
    std::int64_t wallNs; // the wall clock at the cycle's start (ns since 1970-01-01)
};

using NativeFn = Trap (*)(const NativeContext& ctx, std::uint8_t* args) noexcept;

// Indexed by bytecode::Native; null where the native is of the other kind.
NativeFb nativeFb(bytecode::Native n) noexcept;
NativeFn nativeFn(bytecode::Native n) noexcept;

struct CallRecord {
    std::uint32_t returnPc;
    std::uint32_t thisOffset;
    std::uint32_t frameOffset;
};

struct Vm::Resolved {
    std::vector<FbLayout> fbLayouts;             // one per POU (meaningful where PouEntry::native is an FB)
    std::vector<std::uint32_t> instanceSize;     // one per POU: size of the instance type (0 if none)
    std::array<CallRecord, kMaxCallDepth> calls; // no allocation during a run
    NativeContext context;                       // what the standard FBs read, for compiled code
};

// Fills the per-POU tables (what the Vm constructor does once at load).
void resolveModule(const bytecode::Module& module, Vm::Resolved& out);

// Builds the FB layout of a native POU from its instance type (names as sema declares them).
FbLayout resolveFbLayout(const bytecode::Module& module, const bytecode::PouEntry& pou);

// The interpreter loop (interpreter.cpp). kSwitch selects the portable switch dispatch; the
// library uses computed goto unless built with TAKT_VM_SWITCH. Tests run both.
struct RunState {
    const bytecode::Module* module;
    Vm::Resolved* resolved;
    std::uint8_t* image;
    std::uint32_t imageSize;
    std::int64_t nowNs;
    std::int64_t wallNs;
    std::uint64_t budget; // 0 = unlimited
    const std::atomic<bool>* abort;
    TrapInfo* trap;
    Debugger* debugger = nullptr; // the loop that can halt; the plain loop where a run faults or reaches a breakpoint
    // The code the plain loop runs: the module's (null) or a StopMap's patched copy (Debugger::plainCode).
    const std::uint32_t* code = nullptr;
    const CompiledCalls* compiled = nullptr; // the plain loop's calls of compiled bodies (Vm::setCompiledCalls)
};
// kDebug: the loop that looks the debugger's stop map up before each instruction (debug.h).
// Where a run goes on after an exception halt (execute<…, true> only): at `entry`, at call depth
// `depth` (the calls below it are in Resolved::calls) with the watchdog's ticks left.
struct ResumeAt {
    std::uint32_t depth;
    std::uint64_t ticks;
};
template <bool kSwitch, bool kDebug = false>
Trap execute(const RunState& rs, std::uint32_t entry, std::uint32_t thisOffset, std::uint32_t frameOffset,
             const ResumeAt* resume = nullptr) noexcept;

#if defined(TAKT_VM_SWITCH) || !(defined(__GNUC__) || defined(__clang__))
inline constexpr bool kDefaultSwitch = true;
#else
inline constexpr bool kDefaultSwitch = false;
#endif

} // namespace takt::vm
