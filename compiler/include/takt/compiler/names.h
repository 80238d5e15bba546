#pragma once
// ST names are case-insensitive (LANGUAGE.md). Symbol tables key on the upper-cased form.
#include <cctype>
#include <string>
#include <string_view>

namespace takt::compiler {

[[nodiscard]] inline std::string upperName(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return out;
}

[[nodiscard]] inline bool sameName(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return true;
}

} // namespace takt::compiler
