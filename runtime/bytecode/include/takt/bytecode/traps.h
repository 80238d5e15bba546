#pragma once
// Every run-time fault of the VM, with its static message. The list is part of the bytecode
// contract: `TRAP i` raises fault i, so the compiler names the faults it raises by this enum and
// the numbers are append only (they are also kept in logs and reports).
#include <cstdint>

#define TAKT_TRAPS(X)                                                                                                  \
    X(None, "no fault")                                                                                                \
    X(DivByZero, "integer division or MOD by zero")                                                                    \
    X(Overflow, "integer overflow")                                                                                    \
    X(ArrayBounds, "array index out of bounds")                                                                        \
    X(NullReference, "dereference of a NULL reference")                                                                \
    X(InvalidReference, "reference outside the data image")                                                            \
    X(ForStepZero, "FOR loop step is zero")                                                                            \
    X(Aborted, "run aborted (watchdog)")                                                                               \
    X(BudgetExceeded, "instruction budget exceeded (endless loop?)")                                                   \
    X(StackOverflow, "call stack overflow")                                                                            \
    X(InvalidOpcode, "invalid opcode")                                                                                 \
    X(InvalidCall, "invalid call target")                                                                              \
    X(InvalidArgument, "invalid argument to a standard function")                                                      \
    X(AssertionFailed, "assertion failed")                                                                             \
    X(MuxSelector, "MUX selector K out of range")

namespace takt::bytecode {

enum class Trap : std::uint8_t {
#define TAKT_TRAP_ENUM(name, msg) name,
    TAKT_TRAPS(TAKT_TRAP_ENUM)
#undef TAKT_TRAP_ENUM
};

namespace detail {
enum TrapCounter : std::uint32_t {
#define TAKT_TRAP_COUNT(name, msg) kCount##name,
    TAKT_TRAPS(TAKT_TRAP_COUNT)
#undef TAKT_TRAP_COUNT
        kTrapCounterEnd
};
} // namespace detail

inline constexpr std::uint32_t kTrapCount = detail::kTrapCounterEnd;

// The faults a TRAP instruction may raise: any but None (not a fault) and AssertionFailed,
// which needs ASSERT_FAIL's operands to be reported.
constexpr bool raisableByTrap(std::uint32_t code) noexcept {
    return code > static_cast<std::uint32_t>(Trap::None) && code < kTrapCount &&
           code != static_cast<std::uint32_t>(Trap::AssertionFailed);
}

} // namespace takt::bytecode
