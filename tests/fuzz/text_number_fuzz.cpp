// libFuzzer: arbitrary text read as a number (STRING_TO_INT, STRING_TO_REAL …; text_number.h).
// The first byte picks the target type, the rest is the text. Beyond "no crash" the target
// checks the pinned rule's invariants: an integer result lies in the target type's range, a REAL
// result is finite and exact in single precision, blanks around a text never change the result.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "takt/bytecode/opcodes.h"
#include "text_number.h"

namespace {

using takt::bytecode::TextNumber;

struct Range {
    std::int64_t min;
    std::int64_t max; // for the unsigned 64-bit types every bit pattern is in range
};

constexpr Range kRanges[] = {
    {0, 1},     {-128, 127},       {-32768, 32767},        {-2147483648LL, 2147483647LL}, {INT64_MIN, INT64_MAX},
    {0, 255},   {0, 65535},        {0, 4294967295LL},      {INT64_MIN, INT64_MAX},        {0, 255},
    {0, 65535}, {0, 4294967295LL}, {INT64_MIN, INT64_MAX},
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const auto type = static_cast<TextNumber>(data[0] % takt::bytecode::kTextNumberCount);
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    const std::string padded = " \t" + std::string(text) + " ";
    if (type == TextNumber::Real || type == TextNumber::Lreal) {
        const double v = takt::vm::textToReal(text, type);
        if (!std::isfinite(v) || (type == TextNumber::Real && static_cast<double>(static_cast<float>(v)) != v)) {
            std::abort();
        }
        const double p = takt::vm::textToReal(padded, type);
        if (!(p == v || (std::isnan(p) && std::isnan(v)))) {
            std::abort();
        }
        if (takt::vm::textToInt(text, type) != 0) {
            std::abort();
        }
        return 0;
    }
    const std::int64_t v = takt::vm::textToInt(text, type);
    const Range& r = kRanges[static_cast<std::uint32_t>(type)];
    if (v < r.min || v > r.max || takt::vm::textToInt(padded, type) != v) {
        std::abort();
    }
    return 0;
}
