#pragma once
// Native C++ twin of bench/programs/int_arith.st: the same DINT work per scan. DINT arithmetic
// goes through uint32 so it wraps like the VM's two's complement int32 (the program keeps every
// value below 2^31, so no wrap happens; the twin must not rely on that either way).
#include <cstdint>

namespace takt::bench {

inline std::int32_t dintAdd(std::int32_t a, std::int32_t b) noexcept {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

inline std::int32_t dintMul(std::int32_t a, std::int32_t b) noexcept {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(b));
}

struct IntArith {
    std::int32_t i = 0;
    std::int32_t x = 1;
    std::int32_t acc = 0;
    std::int32_t hits = 0;
    std::int32_t cycle = 0;
    double check = 0.0;

    void scan() noexcept {
        cycle = dintAdd(cycle, 1);
        if (cycle >= 1000000) {
            cycle = 0;
        }
        x = cycle % 65521; // IEC MOD truncates like C's %
        for (i = 1; i <= 1000; i = dintAdd(i, 1)) {
            x = dintAdd(dintMul(x, 31), i) % 65521;
            acc = dintAdd(dintAdd(acc, dintMul(x, 3)), i) % 1000003;
            if (x > 32760) {
                hits = dintAdd(hits, 1);
            } else if (x % 3 == 0) {
                hits = dintAdd(hits, 2);
            }
        }
        hits = hits % 1000000;
        check = static_cast<double>(acc) + static_cast<double>(hits);
    }
};

} // namespace takt::bench
