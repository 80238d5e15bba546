#pragma once
// One ST program on both execution tiers, compiled once: the interpreter and the native tier
// run the same cycles (the clock advancing 1 ms a cycle) and must leave the same data image
// after the start-up code and after every cycle, and fault in the same cycle with the same trap
// at the same POU, line and column. A NaN equals a NaN there, whatever its sign and payload
// bits (which the tiers do not keep alike; nanBits says so).
#include <cstdint>
#include <string>
#include <vector>

namespace takt::test {

struct TierDiff {
    bool compiled = false;
    std::string compileErrors;          // the diagnostics when the program did not compile
    std::string status;                 // the native tier's executionStatus(): "native" or why not
    int cyclesRun = 0;                  // cycles both tiers ran, the faulting one included
    bool faulted = false;               // the run ended with a fault (the same on both tiers)
    std::string fault;                  // "message at POU:line:column" when faulted
    std::string difference;             // the first difference; empty when the tiers agreed
    std::vector<std::uint32_t> opcodes; // the opcodes in the program's POU bodies, each once
    bool nanBits = false;               // a REAL/LREAL was NaN on both tiers, with different sign or payload

    [[nodiscard]] bool ranNative() const { return status == "native"; }
    [[nodiscard]] bool agreed() const { return compiled && difference.empty(); }
};

// `budget`: watchdog ticks per cycle (VmRunner), 0 = unlimited.
[[nodiscard]] TierDiff compareTiers(const std::string& text, bool overflowTrap, int cycles, std::uint64_t budget = 0);

} // namespace takt::test
