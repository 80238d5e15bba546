// The text of a failed ASSERT_*: which assertion, the compared values read back from the data
// image (the VM recorded where they are), and the user's message. For STRUCT and ARRAY values
// the comparison is walked again to name where they first differ: "expected[3].val = 1.5,
// actual[3].val = 2".
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "takt/bytecode/opcodes.h"
#include "takt/bytecode/value_compare.h"
#include "test/test_assertion.h"

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

// A NUL-terminated STRING or WSTRING in the image (bounded by the image end and by `limit`
// characters, the n of STRING[n]).
std::string readString(const engine::LoadedProgram& p, std::uint32_t offset, bool wide,
                       std::size_t limit = static_cast<std::size_t>(-1)) {
    std::string s;
    const std::size_t unit = wide ? 2 : 1;
    for (std::size_t at = offset, n = 0; at + unit <= p.imageSize() && n < limit; at += unit, ++n) {
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
    case bc::AssertFormat::Value: // rendered member by member (describeValues)
    case bc::AssertFormat::None: break;
    }
    return "?";
}

// ---- STRUCT / ARRAY values (AssertFormat::Value) ----------------------------------------------

// An elementary value (or STRING) of type `t` at `offset`, written as the scalar assertions
// write it; enumeration values by name.
std::string renderLeaf(const engine::LoadedProgram& p, std::uint32_t t, std::uint32_t offset) {
    const bc::Module& m = p.module();
    const bc::TypeDesc& d = m.types[t];
    using K = bc::ValueKind;
    switch (d.kind) {
    case K::Bool: return render(p, offset, bc::AssertFormat::Bool);
    case K::SInt: {
        std::int8_t v = 0;
        return read(p, offset, v) ? std::to_string(v) : "?";
    }
    case K::Int: {
        std::int16_t v = 0;
        return read(p, offset, v) ? std::to_string(v) : "?";
    }
    case K::USInt:
    case K::Byte:
    case K::Char: {
        std::uint8_t v = 0;
        return read(p, offset, v) ? std::to_string(v) : "?";
    }
    case K::UInt:
    case K::Word:
    case K::WChar: {
        std::uint16_t v = 0;
        return read(p, offset, v) ? std::to_string(v) : "?";
    }
    case K::DInt: return render(p, offset, bc::AssertFormat::I32);
    case K::UDInt:
    case K::DWord: return render(p, offset, bc::AssertFormat::U32);
    case K::LInt:
    case K::Date:
    case K::LDate:
    case K::Tod:
    case K::LTod:
    case K::Dt:
    case K::Ldt: return render(p, offset, bc::AssertFormat::I64);
    case K::ULInt:
    case K::LWord: return render(p, offset, bc::AssertFormat::U64);
    case K::Real: return render(p, offset, bc::AssertFormat::F32);
    case K::LReal: return render(p, offset, bc::AssertFormat::F64);
    case K::Time:
    case K::LTime: return render(p, offset, bc::AssertFormat::Time);
    case K::String: return "'" + readString(p, offset, false, d.stringLength) + "'";
    case K::WString: return "\"" + readString(p, offset, true, d.stringLength) + "\"";
    case K::Enum: {
        std::int64_t v = 0;
        const std::uint32_t size = d.size;
        if (size == 0 || size > 8 || offset + std::uint64_t{size} > p.imageSize()) {
            return "?";
        }
        std::memcpy(&v, p.image() + offset, size);
        if (size < 8 && (v & (std::int64_t{1} << (8 * size - 1))) != 0) {
            v -= std::int64_t{1} << (8 * size); // sign-extend the base type
        }
        for (const bc::EnumValueDesc& e : d.enumValues) {
            if (e.value == v) {
                return d.name + "#" + e.name;
            }
        }
        return std::to_string(v);
    }
    case K::Subrange: return renderLeaf(p, d.element, offset);
    case K::Ref:
    case K::Interface: {
        std::uint32_t v = 0;
        return !read(p, offset, v) ? "?" : v == 0 ? "NULL" : fmt::format("REF 0x{:x}", v);
    }
    default: return "?";
    }
}

constexpr std::size_t kValueTextLimit = 160;

// A whole value in IEC initialiser syntax, "(x := 1, y := 2)" and "[1, 2, 3]", cut with "..."
// once the text reaches kValueTextLimit.
void renderValue(const engine::LoadedProgram& p, std::uint32_t t, std::uint32_t offset, std::string& out) {
    const bc::TypeDesc& d = p.module().types[t];
    if (out.size() >= kValueTextLimit) {
        return;
    }
    if (d.kind == bc::ValueKind::Struct) {
        out += "(";
        for (std::size_t i = 0; i < d.fields.size(); ++i) {
            if (out.size() >= kValueTextLimit) {
                out += "...";
                break;
            }
            out += (i > 0 ? ", " : "") + d.fields[i].name + " := ";
            renderValue(p, d.fields[i].type, offset + d.fields[i].offset, out);
        }
        out += ")";
        return;
    }
    if (d.kind == bc::ValueKind::Array) {
        const std::uint32_t size = p.module().types[d.element].size;
        const std::uint32_t count = size == 0 ? 0 : d.size / size;
        out += "[";
        for (std::uint32_t i = 0; i < count; ++i) {
            if (out.size() >= kValueTextLimit) {
                out += "...";
                break;
            }
            out += i > 0 ? ", " : "";
            renderValue(p, d.element, offset + i * size, out);
        }
        out += "]";
        return;
    }
    out += renderLeaf(p, t, offset);
}

// "[3].val" for the path of a difference.
std::string pathText(const bc::Module& m, const bc::ValueDifference& diff) {
    std::string text;
    for (const bc::ValueStep& step : diff.path) {
        const bc::TypeDesc& c = m.types[step.container];
        text += c.kind == bc::ValueKind::Struct ? "." + c.fields[step.index].name : bc::elementSubscript(c, step.index);
    }
    return text;
}

// The text after "ASSERT_EQUAL failed" / "ASSERT_NOT_EQUAL failed" for STRUCT/ARRAY values.
std::string describeValues(const engine::LoadedProgram& p, const engine::AssertionDetail& d, bc::AssertKind kind) {
    const bc::Module& m = p.module();
    const std::uint32_t type = d.format >> bc::kAssertTypeShift;
    if (type >= m.types.size()) {
        return "";
    }
    const std::uint64_t size = m.types[type].size;
    if (d.a + size > p.imageSize() || d.b + size > p.imageSize()) {
        return "";
    }
    if (kind == bc::AssertKind::NotEqual) {
        std::string value;
        renderValue(p, type, d.a, value);
        return ": both are " + value;
    }
    const auto diff = bc::firstDifference(m, type, p.image() + d.a, p.image() + d.b);
    if (!diff) {
        return ": the values differ";
    }
    const std::string path = pathText(m, *diff);
    return ": expected" + path + " = " + renderLeaf(p, diff->leaf, d.a + diff->offset) + ", actual" + path + " = " +
           renderLeaf(p, diff->leaf, d.b + diff->offset);
}

// The text of a scalar comparison after "ASSERT_x failed".
void appendScalar(std::string& text, bc::AssertKind kind, const std::string& a, const std::string& b) {
    switch (kind) {
    case bc::AssertKind::True:
    case bc::AssertKind::False:
    case bc::AssertKind::Finished: break;
    case bc::AssertKind::Equal: text += ": expected " + a + ", actual " + b; break;
    case bc::AssertKind::NotEqual: text += ": both are " + a; break;
    case bc::AssertKind::Greater: text += ": " + a + " is not greater than " + b; break;
    case bc::AssertKind::Less: text += ": " + a + " is not less than " + b; break;
    case bc::AssertKind::GreaterOrEqual: text += ": " + a + " is less than " + b; break;
    case bc::AssertKind::LessOrEqual: text += ": " + a + " is greater than " + b; break;
    case bc::AssertKind::Near: text += ": expected " + a + ", actual " + b + ", outside the allowed delta"; break;
    }
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
                                         "ASSERT_NEAR",
                                         "TEST_FINISHED"};
    const std::uint32_t kind = d.kind & ~bc::kAssertWideMessage;
    const std::uint32_t format = d.format & bc::kAssertFormatMask;
    if (kind >= bc::kAssertKindCount || format >= bc::kAssertFormatCount) {
        return "assertion failed";
    }
    const auto f = static_cast<bc::AssertFormat>(format);
    const std::string a = render(program, d.a, f);
    const std::string b = render(program, d.b, f);
    std::string text = std::string(kNames[kind]) + " failed";
    const auto k = static_cast<bc::AssertKind>(kind);
    const std::uint32_t type = d.format >> bc::kAssertTypeShift;
    const bool leaf = f == bc::AssertFormat::Value && type < program.module().types.size() &&
                      program.module().types[type].kind != bc::ValueKind::Struct &&
                      program.module().types[type].kind != bc::ValueKind::Array;
    if (leaf) {
        // An enumeration (the only leaf type the compiler names): its values by name.
        appendScalar(text, k, renderLeaf(program, type, d.a), renderLeaf(program, type, d.b));
    } else if (f == bc::AssertFormat::Value && (k == bc::AssertKind::Equal || k == bc::AssertKind::NotEqual)) {
        text += describeValues(program, d, k);
    } else {
        appendScalar(text, k, a, b);
    }
    const std::string message = readString(program, d.message, (d.kind & bc::kAssertWideMessage) != 0);
    if (!message.empty()) {
        text += ": " + message;
    }
    return text;
}

} // namespace takt::agent
