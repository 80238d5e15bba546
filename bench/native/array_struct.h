#pragma once
// Native C++ twin of bench/programs/array_struct.st: ARRAY[0..255] OF SAMPLE (INT id, REAL val,
// REAL avg), one new sample, a moving average of window 8 and one bubble-sort pass by id that
// swaps whole structs.
#include <array>
#include <cstdint>

namespace takt::bench {

struct Sample {
    std::int16_t id = 0;
    float val = 0.0F;
    float avg = 0.0F;
};

struct ArrayStruct {
    std::array<Sample, 256> data{};
    Sample tmp{};
    std::int16_t i = 0;
    std::int16_t j = 0;
    std::int16_t head = 0;
    std::int32_t seed = 12345;
    float sum = 0.0F;
    std::int32_t swaps = 0;
    double check = 0.0;

    void scan() noexcept {
        seed = (seed * 75 + 74) % 65537;
        data[head].id = static_cast<std::int16_t>(seed % 30000);
        data[head].val = static_cast<float>(seed) * 0.001F;
        head = static_cast<std::int16_t>((head + 1) % 256);

        for (int a = 0; a <= 255; ++a) {
            sum = 0.0F;
            for (int b = 0; b <= 7; ++b) {
                sum = sum + data[(a + b) % 256].val;
            }
            data[a].avg = sum * 0.125F;
        }

        for (int a = 0; a <= 254; ++a) {
            if (data[a].id > data[a + 1].id) {
                tmp = data[a];
                data[a] = data[a + 1];
                data[a + 1] = tmp;
                swaps = swaps + 1;
            }
        }
        swaps = swaps % 1000000;
        check = static_cast<double>(data[0].avg + data[255].avg) + static_cast<double>(swaps);
    }
};

} // namespace takt::bench
