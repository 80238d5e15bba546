#pragma once
// Runs of repeated code that the translator emits as one loop (the translator's rerolling).
//
// PLC programs often call many instances one after another, written out by hand or generated
// (`ton000(IN := inp[0], PT := T#5ms); trg000(CLK := ton000.Q); …` for 200 timers): the same
// instructions over and over, only the variables (and a constant) differ. Emitted as straight
// code, 200 inlined timers are 45 KB of machine code that runs from the instruction decoders
// rather than the CPU's small caches, at half the speed of the same work written as a loop. A
// run of at least kMinRepeats segments, each the same instructions as the first with only
// operand addresses (and MOVI immediates) differing, is emitted once with a loop counter that
// picks each segment's operands from a table. Nothing observable changes: the same variables are
// read and written in the same order, the watchdog counts the same ticks (the loop's own
// back-edge counts none), and a trap reports the instruction of the segment it happened in.
#include "takt/bytecode/module.h"

#include <cstdint>
#include <vector>

namespace takt::native {

inline constexpr std::uint32_t kMinRepeats = 8;

struct RepeatRun {
    std::uint32_t start = 0;  // the first instruction of the first segment
    std::uint32_t length = 0; // words per segment
    std::uint32_t count = 0;  // segments (>= kMinRepeats)
    // The words (as offsets from the segment's start) whose value differs between segments:
    // address operands (same tag, another offset) and the immediates of MOVI_*.
    std::vector<std::uint32_t> varying;
    std::vector<bool> address; // per varying word: an address operand (else a MOVI immediate)
    [[nodiscard]] std::uint32_t end() const { return start + length * count; }
};

// The runs in the body whose instructions start where `starts` is true, not overlapping, each
// entered only at its start: no jump from outside lands inside it, and each segment's jumps go
// forward inside the segment or to its end.
[[nodiscard]] std::vector<RepeatRun> repeatRuns(const bytecode::Module& module, std::uint32_t bodyStart,
                                                std::uint32_t bodyEnd, const std::vector<bool>& starts);

} // namespace takt::native
