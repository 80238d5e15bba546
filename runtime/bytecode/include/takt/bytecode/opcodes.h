#pragma once
// takt instruction encoding. The list of instructions is opcodes.def (one line each, with its
// operand format and semantics); everything here is generated from it.
//
// An instruction is a run of 32-bit words in Module::code:
//
//   word 0          word 1 …                                       (length = 1 + operand words)
//   +---------------+---------------+---------------+-----
//   | opcode (u32)  | operand 1     | operand 2     | …
//   +---------------+---------------+---------------+-----
//
// A data address operand (d, s) is one word:
//
//    31 30 29                                                0
//   +-----+---------------------------------------------------+
//   | tag |  byte offset (30 bits)                            |
//   +-----+---------------------------------------------------+
//   tag 0 absolute: offset in the data image (constants, globals, program instances)
//   tag 1 this:     offset from the current instance (FB / PROGRAM / METHOD's instance)
//   tag 2 frame:    offset from the current call frame (FUNCTION/METHOD locals, temporaries)
//   tag 3 reserved (the verifier rejects it)
//   The VM resolves it as image + base[tag] + offset; the bases are image offsets held in the
//   interpreter's locals, changed only by calls and returns.
//
// Immediates i, counts c, jump targets j, POU indices p and native indices n are one word; a
// 64-bit immediate l is two words, low word first. Jump targets are absolute word indices.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace takt::bytecode {

enum class Opcode : std::uint32_t {
#define TAKT_OP(name, format, doc) name,
#include "takt/bytecode/opcodes.def"
#undef TAKT_OP
};

namespace detail {
// Counting enumerators: one per list entry, so the sentinel is the count.
enum OpcodeCounter : std::uint32_t {
#define TAKT_OP(name, format, doc) kCount##name,
#include "takt/bytecode/opcodes.def"
#undef TAKT_OP
    kOpcodeCounterEnd
};
} // namespace detail

inline constexpr std::uint32_t kOpcodeCount = detail::kOpcodeCounterEnd;

enum class Native : std::uint32_t {
#define TAKT_NATIVE(name, kind, doc) name,
#include "takt/bytecode/natives.def"
#undef TAKT_NATIVE
};

enum class NativeKind : std::uint8_t { Fb, Fn };

namespace detail {
enum NativeCounter : std::uint32_t {
#define TAKT_NATIVE(name, kind, doc) kCount##name,
#include "takt/bytecode/natives.def"
#undef TAKT_NATIVE
    kNativeCounterEnd
};
} // namespace detail

inline constexpr std::uint32_t kNativeCount = detail::kNativeCounterEnd;

// How `takt test` renders the operands of ASSERT_FAIL (i1): the computation form of the values.
// Value (STRUCT, ARRAY) carries the index of the values' type in Module::types in the bits
// above kAssertFormatMask: i1 = Value | type << kAssertTypeShift.
enum class AssertFormat : std::uint32_t { None, Bool, I32, U32, I64, U64, F32, F64, Str, WStr, Time, Value };
// Which assertion failed (ASSERT_FAIL i2).
enum class AssertKind : std::uint32_t {
    True,
    False,
    Equal,
    NotEqual,
    Greater,
    Less,
    GreaterOrEqual,
    LessOrEqual,
    Near,
    Finished // TEST_FINISHED(): not a failure; the multi-cycle test ends and passes
};
inline constexpr std::uint32_t kAssertFormatCount = 12;
inline constexpr std::uint32_t kAssertFormatMask = 0xFF;
inline constexpr std::uint32_t kAssertTypeShift = 8;
inline constexpr std::uint32_t kAssertKindCount = 10;
inline constexpr std::uint32_t kAssertWideMessage = 0x100;

// Selector of MATH_F32 / MATH_F64 (the i operand).
enum class MathFn : std::uint32_t { Ln, Log, Exp, Sin, Cos, Tan, Asin, Acos, Atan };
inline constexpr std::uint32_t kMathFnCount = 9;

// Slot 2 of the StringToInt / StringToReal natives: the number type the text is read as (its
// literal forms, its type prefix, its range).
enum class TextNumber : std::uint32_t {
    Bool,
    Sint,
    Int,
    Dint,
    Lint,
    Usint,
    Uint,
    Udint,
    Ulint,
    Byte,
    Word,
    Dword,
    Lword,
    Real,
    Lreal
};
inline constexpr std::uint32_t kTextNumberCount = 15;

// The l operand of DIV_*_IMM / MOD_*_IMM: ceil(2^64 / d) (wrapping to 0 for d = 1), so that for
// every 32-bit n, n / d = mulhi64(r, n) (d >= 2) and n MOD d = mulhi64(r * n, d) (D. Lemire,
// O. Kaser, N. Kurz, "Faster remainder by direct computation", 2019).
constexpr std::uint64_t divisorReciprocal(std::uint32_t d) noexcept {
    return d == 0 ? 0 : ~std::uint64_t{0} / d + 1;
}
// The magnitude of a signed 32-bit divisor as an unsigned divisor.
constexpr std::uint32_t divisorMagnitude(std::int32_t d) noexcept {
    return d < 0 ? 0u - static_cast<std::uint32_t>(d) : static_cast<std::uint32_t>(d);
}

// Data address operands.
inline constexpr std::uint32_t kTagAbsolute = 0;
inline constexpr std::uint32_t kTagThis = 1;
inline constexpr std::uint32_t kTagFrame = 2;
inline constexpr std::uint32_t kOffsetBits = 30;
inline constexpr std::uint32_t kOffsetMask = (1u << kOffsetBits) - 1;
inline constexpr std::uint32_t kNullRef = 0; // REF_TO / interface value NULL

constexpr std::uint32_t address(std::uint32_t tag, std::uint32_t offset) noexcept {
    return (tag << kOffsetBits) | (offset & kOffsetMask);
}
constexpr std::uint32_t addressTag(std::uint32_t word) noexcept {
    return word >> kOffsetBits;
}
constexpr std::uint32_t addressOffset(std::uint32_t word) noexcept {
    return word & kOffsetMask;
}

enum class OperandKind : std::uint8_t { Dest, Source, Imm32, Imm64, Jump, Pou, Native, Count };

struct OperandInfo {
    OperandKind kind;
    std::uint8_t width; // Dest/Source: bytes accessed, 0 = given by a Count operand or checked at run time
    std::uint8_t word;  // index of the operand's first word after the opcode word (0-based)
};

inline constexpr std::size_t kMaxOperands = 7;

struct OpcodeInfo {
    std::string_view name;
    std::string_view format; // as written in opcodes.def
    std::string_view doc;
    std::uint8_t length; // words including the opcode word
    std::uint8_t operandCount;
    std::array<OperandInfo, kMaxOperands> operands;
};

namespace detail {
constexpr OpcodeInfo makeInfo(std::string_view name, std::string_view format, std::string_view doc) {
    OpcodeInfo info{name, format, doc, 1, 0, {}};
    std::uint8_t word = 0;
    for (std::size_t i = 0; i < format.size(); ++i) {
        OperandInfo op{OperandKind::Count, 0, word};
        std::uint8_t words = 1;
        switch (format[i]) {
        case 'd':
        case 's':
            op.kind = format[i] == 'd' ? OperandKind::Dest : OperandKind::Source;
            op.width = static_cast<std::uint8_t>(format[i + 1] - '0');
            ++i;
            break;
        case 'i': op.kind = OperandKind::Imm32; break;
        case 'l':
            op.kind = OperandKind::Imm64;
            words = 2;
            break;
        case 'j': op.kind = OperandKind::Jump; break;
        case 'p': op.kind = OperandKind::Pou; break;
        case 'n': op.kind = OperandKind::Native; break;
        default: op.kind = OperandKind::Count; break;
        }
        info.operands[info.operandCount++] = op;
        word = static_cast<std::uint8_t>(word + words);
    }
    info.length = static_cast<std::uint8_t>(1 + word);
    return info;
}
} // namespace detail

inline constexpr std::array<OpcodeInfo, kOpcodeCount> kOpcodeInfo = {{
#define TAKT_OP(name, format, doc) detail::makeInfo(#name, format, doc),
#include "takt/bytecode/opcodes.def"
#undef TAKT_OP
}};

struct NativeInfo {
    std::string_view name;
    NativeKind kind;
    std::string_view doc;
};

inline constexpr std::array<NativeInfo, kNativeCount> kNativeInfo = {{
#define TAKT_NATIVE(name, kind, doc) NativeInfo{#name, NativeKind::kind, doc},
#include "takt/bytecode/natives.def"
#undef TAKT_NATIVE
}};

constexpr const OpcodeInfo& opcodeInfo(Opcode op) noexcept {
    return kOpcodeInfo[static_cast<std::uint32_t>(op)];
}
constexpr std::uint32_t instructionLength(Opcode op) noexcept {
    return kOpcodeInfo[static_cast<std::uint32_t>(op)].length;
}
constexpr std::string_view opcodeName(Opcode op) noexcept {
    return kOpcodeInfo[static_cast<std::uint32_t>(op)].name;
}

} // namespace takt::bytecode
