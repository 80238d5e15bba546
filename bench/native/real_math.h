#pragma once
// Native C++ twin of bench/programs/real_math.st: REAL is float and LREAL double, each operation
// in its own width and in source order, so the result is bit-identical to the VM's when both use
// the same libm (SQRT on REAL is sqrtf, SIN on LREAL is sin).
#include <cmath>
#include <cstdint>

namespace takt::bench {

struct RealMath {
    std::int16_t i = 0;
    std::int16_t cnt = 0;
    float base = 0.0F;
    float r = 0.0F;
    float s = 0.0F;
    double lr = 0.0;
    double acc = 0.0;
    float accr = 0.0F;
    double check = 0.0;

    void scan() noexcept {
        cnt = static_cast<std::int16_t>(cnt + 1);
        if (cnt >= 1000) {
            cnt = 0;
        }
        base = static_cast<float>(cnt) * 0.001F;
        for (int k = 1; k <= 1000; ++k) {
            i = static_cast<std::int16_t>(k);
            r = base + static_cast<float>(i) * 0.0005F;
            s = std::sqrt(r * r + 1.0F);
            lr = std::sin(static_cast<double>(s) * 2.5) * 0.5 + static_cast<double>(r) / 3.0;
            acc = acc * 0.999 + lr;
            accr = accr * 0.99F + s * 0.01F;
        }
        check = acc + static_cast<double>(accr);
    }
};

} // namespace takt::bench
