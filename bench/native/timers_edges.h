#pragma once
// Native C++ twin of bench/programs/timers_edges.st: 200 TON timers each followed by an R_TRIG
// on its Q. TON and R_TRIG follow the IEC semantics takt pins (LANGUAGE.md): on the rising scan
// ET = 0 and the start time is the scan's timestamp; then ET = MIN(now - start, PT) and
// Q = ET >= PT; IN FALSE resets Q and ET. `nowNs` is the scan timestamp (1 ms per scan).
#include <algorithm>
#include <array>
#include <cstdint>

namespace takt::bench {

struct Ton {
    bool in = false;
    std::int64_t pt = 0; // ns
    bool q = false;
    std::int64_t et = 0;
    std::int64_t start = 0;
    bool running = false;

    void call(std::int64_t nowNs) noexcept {
        if (!in) {
            q = false;
            et = 0;
            running = false;
            return;
        }
        if (!running) {
            start = nowNs;
            running = true;
            et = 0;
        } else {
            const auto diff =
                static_cast<std::int64_t>(static_cast<std::uint64_t>(nowNs) - static_cast<std::uint64_t>(start));
            et = std::clamp<std::int64_t>(diff, 0, std::max<std::int64_t>(pt, 0));
        }
        q = et >= pt;
    }
};

struct RTrig {
    bool clk = false;
    bool q = false;
    bool m = false;

    void call() noexcept {
        q = clk && !m;
        m = clk;
    }
};

struct TimersEdges {
    static constexpr int kCount = 200;
    std::array<Ton, kCount> ton{};
    std::array<RTrig, kCount> trg{};
    std::array<bool, kCount> inp{};
    std::int32_t k = 0;
    std::int32_t cnt = 0;
    std::int32_t fired = 0;
    double check = 0.0;

    void scan(std::int64_t nowNs) noexcept {
        cnt = cnt + 1;
        if (cnt >= 1000000) {
            cnt = 0;
        }
        for (k = 0; k <= 199; ++k) {
            inp[k] = ((cnt + k) % 50) < 25;
        }
        for (int n = 0; n < kCount; ++n) {
            ton[n].in = inp[n];
            ton[n].pt = static_cast<std::int64_t>(5 + n % 20) * 1'000'000; // T#5ms .. T#24ms
            ton[n].call(nowNs);
            trg[n].clk = ton[n].q;
            trg[n].call();
            if (trg[n].q) {
                fired = fired + 1;
            }
        }
        fired = fired % 1000000000;
        check = static_cast<double>(fired);
    }
};

} // namespace takt::bench
