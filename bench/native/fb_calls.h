#pragma once
// Native C++ twin of bench/programs/fb_calls.st: the PID_LIKE FUNCTION_BLOCK as a struct with
// the same REAL (float) inputs, outputs and state, called for 100 instances in order, each
// followed by the first-order plant update. The ST text calls pid000..pid099 one by one (MATIEC
// rejects ARRAY OF FB); an array of instances in a loop is the same work.
#include <array>
#include <cstdint>

namespace takt::bench {

struct PidLike {
    // VAR_INPUT
    float sp = 0.0F;
    float pv = 0.0F;
    float kp = 0.0F;
    float ki = 0.0F;
    float kd = 0.0F;
    float ts = 0.0F;
    float outMax = 0.0F;
    float outMin = 0.0F;
    // VAR_OUTPUT
    float out = 0.0F;
    float err = 0.0F;
    // VAR
    float integ = 0.0F;
    float prevErr = 0.0F;
    float deriv = 0.0F;

    void call() noexcept {
        err = sp - pv;
        integ = integ + ki * err * ts;
        if (integ > outMax) {
            integ = outMax;
        } else if (integ < outMin) {
            integ = outMin;
        }
        deriv = (err - prevErr) / ts;
        out = kp * err + integ + kd * deriv;
        if (out > outMax) {
            out = outMax;
        } else if (out < outMin) {
            out = outMin;
        }
        prevErr = err;
    }
};

struct FbCalls {
    static constexpr int kCount = 100;
    std::array<PidLike, kCount> pid{};
    std::array<float, kCount> sp{};
    std::array<float, kCount> pv{};
    std::int16_t k = 0;
    std::int32_t cycle = 0;
    bool initdone = false;
    double check = 0.0;

    void scan() noexcept {
        if (!initdone) {
            for (k = 0; k <= 99; ++k) {
                sp[k] = static_cast<float>(k) * 0.5F + 10.0F;
                pv[k] = 0.0F;
            }
            initdone = true;
        }
        cycle = cycle + 1;
        if (cycle >= 500) {
            cycle = 0;
            for (k = 0; k <= 99; ++k) {
                sp[k] = -sp[k];
            }
        }
        for (int n = 0; n < kCount; ++n) {
            PidLike& p = pid[n];
            p.sp = sp[n];
            p.pv = pv[n];
            p.kp = 1.2F;
            p.ki = 0.5F;
            p.kd = 0.01F;
            p.ts = 0.01F;
            p.outMax = 100.0F;
            p.outMin = -100.0F;
            p.call();
            pv[n] = pv[n] + (p.out - pv[n]) * 0.05F;
        }
        check = static_cast<double>(pv[0] + pv[50] + pv[99]);
    }
};

} // namespace takt::bench
