#include "takt/bytecode/address.h"

#include <limits>

namespace takt::bytecode {

namespace {

char upper(char c) noexcept {
    return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}
bool isDigit(char c) noexcept {
    return c >= '0' && c <= '9';
}

std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
}

// Reads decimal digits at `pos`; false when there are none or the number exceeds 32 bits.
bool readNumber(std::string_view text, std::size_t& pos, std::uint32_t& value) {
    const std::size_t start = pos;
    std::uint64_t v = 0;
    while (pos < text.size() && isDigit(text[pos])) {
        v = v * 10 + static_cast<std::uint64_t>(text[pos] - '0');
        if (v > std::numeric_limits<std::uint32_t>::max()) {
            return false;
        }
        ++pos;
    }
    value = static_cast<std::uint32_t>(v);
    return pos != start;
}

} // namespace

bool parseDirectAddress(std::string_view text, DirectAddress& out, std::string& error) {
    out = DirectAddress{};
    if (text.size() < 2 || text[0] != '%') {
        error = "address " + quoted(text) + " must start with '%' and an area I, Q or M (e.g. %QX0.0)";
        return false;
    }
    switch (upper(text[1])) {
    case 'I': out.area = IoArea::Input; break;
    case 'Q': out.area = IoArea::Output; break;
    case 'M': out.area = IoArea::Memory; break;
    default: error = "address " + quoted(text) + " must name an area I, Q or M after '%'"; return false;
    }
    std::size_t pos = 2;
    bool sized = true;
    switch (pos < text.size() ? upper(text[pos]) : '\0') {
    case 'X': out.width = AddressWidth::Bit; break;
    case 'B': out.width = AddressWidth::Byte; break;
    case 'W': out.width = AddressWidth::Word; break;
    case 'D': out.width = AddressWidth::DWord; break;
    case 'L': out.width = AddressWidth::LWord; break;
    default: sized = false; break; // "%I0.1" is a bit address
    }
    if (sized) {
        ++pos;
    }
    if (!readNumber(text, pos, out.index)) {
        error = pos < text.size() && isDigit(text[pos])
                    ? "index in address " + quoted(text) + " is too large"
                    : "address " + quoted(text) + " needs a number after the area and size letters";
        return false;
    }
    if (out.isBit()) {
        std::uint32_t bit = 0;
        if (pos >= text.size() || text[pos] != '.' || !readNumber(text, ++pos, bit)) {
            error = "bit address " + quoted(text) + " needs the form byte.bit (e.g. %QX0.3)";
            return false;
        }
        if (bit > 7) {
            error = "bit number " + std::to_string(bit) + " in " + quoted(text) + " is outside 0..7";
            return false;
        }
        out.bit = static_cast<std::uint8_t>(bit);
    }
    if (pos != text.size()) {
        error = "unexpected " + quoted(text.substr(pos)) + " in address " + quoted(text);
        return false;
    }
    return true;
}

std::string formatDirectAddress(const DirectAddress& a) {
    std::string s = "%";
    s += a.area == IoArea::Input ? 'I' : a.area == IoArea::Output ? 'Q' : 'M';
    static constexpr char kWidth[] = {'X', 'B', 'W', 'D', 'L'};
    s += kWidth[static_cast<std::size_t>(a.width)];
    s += std::to_string(a.index);
    if (a.isBit()) {
        s += '.';
        s += std::to_string(a.bit);
    }
    return s;
}

} // namespace takt::bytecode
