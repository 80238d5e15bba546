#pragma once
// FOR loops whose back-edges may skip the watchdog's check (the translator's fast path).
//
// Every back-edge charges one tick of the watchdog budget, and every 64th polls the abort flag.
// In a small counted loop that check is a third of the work and keeps LLVM from unrolling or
// vectorising cleanly. For a FOR loop whose counter nothing in the body can write, the number
// of back-edges left is known (at most, with short counted loops inside) when the loop is
// entered; the translator emits the loop twice, and when the budget covers those back-edges it
// runs the copy whose back-edges count the ticks without checking them, so the budget ends the
// same and a trap still falls at the same instruction. Loops known to run 16 times or fewer are
// left alone (LLVM unrolls them), but the loop around such a loop qualifies: unrolled, its
// checks were most of array_struct's moving average. The abort flag is polled once when a fast
// entry starts; it runs at most `maxTrips` trips (about 65,000 instructions), so an abort waits
// no longer than it does in the interpreter's 64 iterations of a long body.
#include "takt/bytecode/module.h"

#include <cstdint>
#include <vector>

namespace takt::native {

struct FastLoop {
    std::uint32_t head = 0;     // the loop's first instruction (the back-edge's target)
    std::uint32_t backEdge = 0; // the fused FOR back-edge (LOOP_I32_IMM, LOOP_I16_IMM and DN forms)
    std::uint32_t maxTrips = 0; // a fast entry runs at most this many back-edges
    // The back-edge is taken while the counter (its operand 0) has not passed `limit`, and adds
    // `step` (negative counting down).
    std::int32_t limit = 0;
    std::int32_t step = 0;
    // Back-edges one trip takes at most: its own and those of the counted loops in its body.
    std::uint32_t backEdgesPerTrip = 1;
};

// The loops of the body whose instructions start where `starts` is true. A loop qualifies when
// its body calls nothing, stores through no pointer, holds no backward jump but those of counted
// FOR loops of known trips (themselves qualifying, entered only through the setting of their
// counter: each trip then takes a bounded number of back-edges), is entered only at its head,
// writes nothing that may overlap the counter, and is not known to be short.
// `instanceApartFromFrame`: the body's instance and frame never overlap (a PROGRAM body the engine runs).
[[nodiscard]] std::vector<FastLoop> fastLoops(const bytecode::Module& module, const std::vector<bool>& starts,
                                              bool instanceApartFromFrame);

} // namespace takt::native
