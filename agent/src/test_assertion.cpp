// The text of a failed ASSERT_*: which assertion, the compared values read back from the data
// image (the VM recorded where they are), and the user's message.
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "takt/bytecode/opcodes.h"
#include "test_assertion.h"

namespace takt::agent {
namespace {

namespace bc = bytecode;

template <typename T> bool read(const engine::LoadedProgram& p, std::uint32_t offset, T& out) {
    if (static_cast<std::size_t>(offset) + sizeof(T) > p.imageSize()) {
        return false;
    }
    std::memcpy(&out, p.image() + offset, sizeof(T));
    return true;
}

// A NUL-terminated STRING or WSTRING in the image (bounded by the image end).
std::string readString(const engine::LoadedProgram& p, std::uint32_t offset, bool wide) {
    std::string s;
    const std::size_t unit = wide ? 2 : 1;
    for (std::size_t at = offset; at + unit <= p.imageSize(); at += unit) {
        std::uint16_t c = p.image()[at];
        if (wide) {
            c = static_cast<std::uint16_t>(c | (p.image()[at + 1] << 8));
        }
        if (c == 0) {
            break;
        }
        if (c < 0x80) {
            s.push_back(static_cast<char>(c));
        } else {
            s += fmt::format("\\u{:04X}", c); // shown escaped: test output stays ASCII
        }
    }
    return s;
}

std::string renderTime(std::int64_t ns) {
    if (ns % 1'000'000 == 0) {
        return fmt::format("T#{}ms", ns / 1'000'000);
    }
    return fmt::format("T#{}us", static_cast<double>(ns) / 1000.0);
}

std::string render(const engine::LoadedProgram& p, std::uint32_t offset, bc::AssertFormat f) {
    switch (f) {
    case bc::AssertFormat::Bool: {
        std::uint8_t v = 0;
        return read(p, offset, v) ? (v != 0 ? "TRUE" : "FALSE") : "?";
    }
    case bc::AssertFormat::I32: {
        std::int32_t v = 0;
        return read(p, offset, v) ? std::to_string(v) : "?";
    }
    case bc::AssertFormat::U32: {
        std::uint32_t v = 0;
        return read(p, offset, v) ? std::to_string(v) : "?";
    }
    case bc::AssertFormat::I64: {
        std::int64_t v = 0;
        return read(p, offset, v) ? std::to_string(v) : "?";
    }
    case bc::AssertFormat::U64: {
        std::uint64_t v = 0;
        return read(p, offset, v) ? std::to_string(v) : "?";
    }
    case bc::AssertFormat::F32: {
        float v = 0;
        return read(p, offset, v) ? fmt::format("{}", v) : "?";
    }
    case bc::AssertFormat::F64: {
        double v = 0;
        return read(p, offset, v) ? fmt::format("{}", v) : "?";
    }
    case bc::AssertFormat::Time: {
        std::int64_t v = 0;
        return read(p, offset, v) ? renderTime(v) : "?";
    }
    case bc::AssertFormat::Str: return "'" + readString(p, offset, false) + "'";
    case bc::AssertFormat::WStr: return "\"" + readString(p, offset, true) + "\"";
    case bc::AssertFormat::None: break;
    }
    return "?";
}

} // namespace

std::string describeAssertion(const engine::LoadedProgram& program, const engine::AssertionDetail& d) {
    static const char* const kNames[] = {"ASSERT_TRUE",
                                         "ASSERT_FALSE",
                                         "ASSERT_EQUAL",
                                         "ASSERT_NOT_EQUAL",
                                         "ASSERT_GREATER",
                                         "ASSERT_LESS",
                                         "ASSERT_GREATER_OR_EQUAL",
                                         "ASSERT_LESS_OR_EQUAL",
                                         "ASSERT_NEAR"};
    const std::uint32_t kind = d.kind & ~bc::kAssertWideMessage;
    if (kind >= bc::kAssertKindCount || d.format >= bc::kAssertFormatCount) {
        return "assertion failed";
    }
    const auto f = static_cast<bc::AssertFormat>(d.format);
    const std::string a = render(program, d.a, f);
    const std::string b = render(program, d.b, f);
    std::string text = std::string(kNames[kind]) + " failed";
    switch (static_cast<bc::AssertKind>(kind)) {
    case bc::AssertKind::True:
    case bc::AssertKind::False: break;
    case bc::AssertKind::Equal: text += ": expected " + a + ", actual " + b; break;
    case bc::AssertKind::NotEqual: text += ": both are " + a; break;
    case bc::AssertKind::Greater: text += ": " + a + " is not greater than " + b; break;
    case bc::AssertKind::Less: text += ": " + a + " is not less than " + b; break;
    case bc::AssertKind::GreaterOrEqual: text += ": " + a + " is less than " + b; break;
    case bc::AssertKind::LessOrEqual: text += ": " + a + " is greater than " + b; break;
    case bc::AssertKind::Near: text += ": expected " + a + ", actual " + b + ", outside the allowed delta"; break;
    }
    const std::string message = readString(program, d.message, (d.kind & bc::kAssertWideMessage) != 0);
    if (!message.empty()) {
        text += ": " + message;
    }
    return text;
}

} // namespace takt::agent
