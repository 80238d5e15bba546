#pragma once
// ST names are case-insensitive (LANGUAGE.md). Symbol tables key on the upper-cased form.
// Identifiers are ASCII (letters, digits, '_'), so the fold is ASCII-only: the same result as
// std::toupper in the "C" locale, without a library call per character (name comparison is
// the front end's hottest loop).
#include <string>
#include <string_view>

namespace takt::compiler {

[[nodiscard]] constexpr char upperAscii(char c) {
    return c >= 'a' && c <= 'z' ? static_cast<char>(c - ('a' - 'A')) : c;
}

[[nodiscard]] inline std::string upperName(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        c = upperAscii(c);
    }
    return out;
}

[[nodiscard]] constexpr bool sameName(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (upperAscii(a[i]) != upperAscii(b[i])) {
            return false;
        }
    }
    return true;
}

} // namespace takt::compiler
