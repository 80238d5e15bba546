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

bool parseWrittenAddress(std::string_view text, WrittenAddress& out, std::string& error) {
    out = WrittenAddress{};
    DirectAddress& a = out.address;
    if (text.size() < 2 || text[0] != '%') {
        error = "address " + quoted(text) + " must start with '%' and an area I, Q or M (e.g. %QX0.0)";
        return false;
    }
    switch (upper(text[1])) {
    case 'I': a.area = IoArea::Input; break;
    case 'Q': a.area = IoArea::Output; break;
    case 'M': a.area = IoArea::Memory; break;
    default: error = "address " + quoted(text) + " must name an area I, Q or M after '%'"; return false;
    }
    std::size_t pos = 2;
    switch (pos < text.size() ? upper(text[pos]) : '\0') {
    case 'X': a.width = AddressWidth::Bit; break;
    case 'B': a.width = AddressWidth::Byte; break;
    case 'W': a.width = AddressWidth::Word; break;
    case 'D': a.width = AddressWidth::DWord; break;
    case 'L': a.width = AddressWidth::LWord; break;
    default: out.sizeLetter = false; break; // "%I0.1" is a bit address
    }
    if (out.sizeLetter) {
        ++pos;
    }
    if (pos < text.size() && text[pos] == '*') {
        if (pos + 1 != text.size()) {
            error = "nothing may follow '*' in address " + quoted(text);
            return false;
        }
        out.wildcard = true;
        return true;
    }
    // The numbers separated by dots: the first is the place, a bit address's second the bit.
    std::uint32_t first = 0;
    std::uint32_t second = 0;
    std::size_t count = 0;
    bool nonZeroAfterFirst = false;
    for (;;) {
        std::uint32_t n = 0;
        if (!readNumber(text, pos, n)) {
            error = pos < text.size() && isDigit(text[pos])
                        ? "index in address " + quoted(text) + " is too large"
                        : "address " + quoted(text) + " needs a number " +
                              (pos < text.size() ? "where " + quoted(text.substr(pos, 1)) + " is" : "at its end");
            return false;
        }
        if (count == 0) {
            first = n;
        } else if (count == 1) {
            second = n;
        }
        nonZeroAfterFirst = nonZeroAfterFirst || (count > 0 && n != 0);
        ++count;
        if (pos < text.size() && text[pos] == '.') {
            ++pos;
            continue;
        }
        break;
    }
    if (pos != text.size()) {
        error = "unexpected " + quoted(text.substr(pos)) + " in address " + quoted(text);
        return false;
    }
    a.index = first;
    if (a.isBit()) {
        if (count > 2) {
            error = "bit address " + quoted(text) + " needs the form byte.bit (e.g. %QX0.3)";
            return false;
        }
        if (second > 7) {
            error = "bit number " + std::to_string(second) + " in " + quoted(text) + " is outside 0..7";
            return false;
        }
        a.bit = static_cast<std::uint8_t>(second); // "%IX1" is "%IX1.0"
        return true;
    }
    if (nonZeroAfterFirst) {
        error = "address " + quoted(text) + " names a module below word " + std::to_string(first) +
                "; takt's process image is flat, so only the first number may be other than 0 (a bit is written "
                "%IX byte.bit)";
        return false;
    }
    return true;
}

bool parseDirectAddress(std::string_view text, DirectAddress& out, std::string& error) {
    WrittenAddress written;
    if (!parseWrittenAddress(text, written, error)) {
        out = DirectAddress{};
        return false;
    }
    if (written.wildcard) {
        out = DirectAddress{};
        error = "address " + quoted(text) +
                " needs a number in place of '*': a wildcard address exists only in an ST declaration";
        return false;
    }
    out = written.address;
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
