#pragma once
// Random, well-typed, terminating ST programs for comparing the execution tiers: every choice the
// generator makes comes from a Choices source (a seed, or a fuzzer's bytes), so a program is
// reproduced from its seed or its input alone. Every generated program must compile; one that
// does not is a bug of the generator.
#include <cstddef>
#include <cstdint>
#include <string>

namespace takt::test {

class Choices {
public:
    virtual ~Choices() = default;
    virtual std::uint64_t next() = 0;
    // 0 .. n-1 (0 when n is 0).
    std::uint32_t below(std::uint32_t n) { return n == 0 ? 0 : static_cast<std::uint32_t>(next() % n); }
    bool percent(std::uint32_t p) { return below(100) < p; }
};

// splitmix64: the same sequence for a seed on every platform.
class SeedChoices final : public Choices {
public:
    explicit SeedChoices(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() override;

private:
    std::uint64_t state_;
};

// A fuzzer's input, two bytes a choice; zeros once it is used up, which always picks the first
// (the simplest) alternative, so every input ends in a small program.
class ByteChoices final : public Choices {
public:
    ByteChoices(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    std::uint64_t next() override;

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

struct GenOptions {
    // Everything: user FUNCTIONs, FUNCTION_BLOCKs and METHODs, the standard FBs, STRINGs, REAL to
    // integer conversions, rotations and EXPT. Off: only what the native tier's first slice
    // translates (no call of any kind), so such programs must run native.
    bool calls = true;
    int statements = 28; // top-level statements of the program body (nested ones come on top)
};

struct GeneratedProgram {
    std::string text;
    bool overflowTrap = false; // compile with [build] overflow = "trap"
    // Watchdog ticks (back-edges and calls) per cycle, 0 = unlimited: a small budget now and
    // then, so that a cycle is stopped at the same tick on both tiers.
    std::uint64_t budget = 0;
};

[[nodiscard]] GeneratedProgram generateProgram(Choices& choices, const GenOptions& options);

} // namespace takt::test
