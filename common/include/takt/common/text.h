#pragma once
// Small text helpers every layer needs; the one place they are written.
#include <cstdint>
#include <string>
#include <string_view>

namespace takt::common {

// The characters std::isspace accepts in the "C" locale.
inline constexpr std::string_view kSpace = " \t\n\v\f\r";

// `s` without the leading and trailing characters found in `chars`. Allocates nothing, throws
// nothing: the VM (built without exceptions) calls it on the scan path.
[[nodiscard]] std::string_view trim(std::string_view s, std::string_view chars = kSpace) noexcept;

// Appends code point `cp` (at most U+10FFFF, no surrogate) as UTF-8.
void appendUtf8(std::string& out, std::uint32_t cp);

} // namespace takt::common
