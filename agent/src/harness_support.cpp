#include "harness_support.h"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace takt::agent::detail {

bool parseDirectAddress(std::string_view text, compiler::AddressMode mode, DirectAddress& out, std::string& error) {
    const auto fail = [&] {
        error = fmt::format("invalid direct address '{}'", text);
        return false;
    };
    if (text.size() < 3 || text[0] != '%') {
        return fail();
    }
    switch (std::toupper(static_cast<unsigned char>(text[1]))) {
    case 'I': out.area = bytecode::IoArea::Input; break;
    case 'Q': out.area = bytecode::IoArea::Output; break;
    case 'M': out.area = bytecode::IoArea::Memory; break;
    default: return fail();
    }
    std::size_t i = 2;
    char letter = 'X';
    if (std::isalpha(static_cast<unsigned char>(text[i])) != 0) {
        letter = static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
        ++i;
    }
    if (letter != 'X' && letter != 'B' && letter != 'W' && letter != 'D' && letter != 'L') {
        return fail();
    }
    std::uint64_t index = 0;
    auto [p, ec] = std::from_chars(text.data() + i, text.data() + text.size(), index);
    if (ec != std::errc{} || p == text.data() + i || index > 0xFFFFFFu) {
        return fail();
    }
    const char* end = text.data() + text.size();
    out.sizeLetter = letter;
    out.bit = 0;
    if (letter == 'X') {
        if (p == end || *p != '.') {
            return fail();
        }
        std::uint32_t bit = 0;
        auto [q, ec2] = std::from_chars(p + 1, end, bit);
        if (ec2 != std::errc{} || q != end || q == p + 1 || bit > 7) {
            return fail();
        }
        out.byteOffset = static_cast<std::uint32_t>(index);
        out.bit = static_cast<std::uint8_t>(bit);
        out.size = 0;
        return true;
    }
    if (p != end) {
        return fail();
    }
    const std::uint32_t size = letter == 'B' ? 1 : letter == 'W' ? 2 : letter == 'D' ? 4 : 8;
    out.size = size;
    out.byteOffset = static_cast<std::uint32_t>(mode == compiler::AddressMode::Word ? index * size : index);
    return true;
}

bytecode::ValueKind addressKind(const DirectAddress& a) {
    switch (a.sizeLetter) {
    case 'B': return bytecode::ValueKind::Byte;
    case 'W': return bytecode::ValueKind::Word;
    case 'D': return bytecode::ValueKind::DWord;
    case 'L': return bytecode::ValueKind::LWord;
    default: return bytecode::ValueKind::Bool;
    }
}

} // namespace takt::agent::detail
