#pragma once
// The proleptic Gregorian calendar of DATE, TOD and DT values (nanoseconds since 1970-01-01):
// one definition for the compiler's literals and the VM's date natives, so a D#… literal and
// STRING_TO_DATE of the same text always give the same value. H. Hinnant's days_from_civil /
// civil_from_days, exact for every int64 day count the nanosecond range can hold.
#include <cstdint>

namespace takt::bytecode {

// Whole years whose every nanosecond fits a 64-bit value (1677-09-21 .. 2262-04-11).
inline constexpr std::int64_t kFirstYear = 1678;
inline constexpr std::int64_t kLastYear = 2261;

struct CivilDate {
    std::int64_t year;
    std::int64_t month; // 1..12
    std::int64_t day;   // 1..31
};

// Days since 1970-01-01 of year-month-day.
[[nodiscard]] constexpr std::int64_t daysFromCivil(std::int64_t y, std::int64_t m, std::int64_t d) noexcept {
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;
    const std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

// Year-month-day of a day count since 1970-01-01.
[[nodiscard]] constexpr CivilDate civilFromDays(std::int64_t z) noexcept {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const std::int64_t doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    const std::int64_t d = doy - (153 * mp + 2) / 5 + 1;
    const std::int64_t m = mp < 10 ? mp + 3 : mp - 9;
    return CivilDate{yoe + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

// 28..31; `m` in 1..12.
[[nodiscard]] constexpr std::int64_t daysInMonth(std::int64_t y, std::int64_t m) noexcept {
    constexpr std::int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : kDays[m - 1];
}

static_assert(daysFromCivil(1970, 1, 1) == 0);
static_assert(daysFromCivil(2000, 3, 1) == 11017);
static_assert(civilFromDays(19782).year == 2024 && civilFromDays(19782).month == 2 && civilFromDays(19782).day == 29);
static_assert(daysInMonth(2024, 2) == 29 && daysInMonth(1900, 2) == 28 && daysInMonth(2000, 2) == 29);

} // namespace takt::bytecode
