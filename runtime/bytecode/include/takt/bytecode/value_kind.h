#pragma once
// What an elementary value kind is in the image: its width and whether it is signed. One list,
// read by the verifier's value comparison, the VM's FB field access and the debugger's
// expressions.
#include <cstdint>

#include "takt/bytecode/module.h"

namespace takt::bytecode {

// Bytes an elementary value of kind `k` occupies in the image; 0 for strings, references and the
// composite kinds.
[[nodiscard]] constexpr std::uint32_t elementaryWidth(ValueKind k) noexcept {
    switch (k) {
    case ValueKind::Bool:
    case ValueKind::SInt:
    case ValueKind::USInt:
    case ValueKind::Byte:
    case ValueKind::Char: return 1;
    case ValueKind::Int:
    case ValueKind::UInt:
    case ValueKind::Word:
    case ValueKind::WChar: return 2;
    case ValueKind::DInt:
    case ValueKind::UDInt:
    case ValueKind::DWord:
    case ValueKind::Real: return 4;
    case ValueKind::LInt:
    case ValueKind::ULInt:
    case ValueKind::LWord:
    case ValueKind::LReal:
    case ValueKind::Time:
    case ValueKind::LTime:
    case ValueKind::Date:
    case ValueKind::LDate:
    case ValueKind::Tod:
    case ValueKind::LTod:
    case ValueKind::Dt:
    case ValueKind::Ldt: return 8;
    default: return 0;
    }
}

// The kinds held as two's complement integers: the signed integers, the durations, dates and
// times of day (signed counts from their epoch) and enumerations (their integer base).
[[nodiscard]] constexpr bool isSignedKind(ValueKind k) noexcept {
    switch (k) {
    case ValueKind::SInt:
    case ValueKind::Int:
    case ValueKind::DInt:
    case ValueKind::LInt:
    case ValueKind::Time:
    case ValueKind::LTime:
    case ValueKind::Date:
    case ValueKind::LDate:
    case ValueKind::Tod:
    case ValueKind::LTod:
    case ValueKind::Dt:
    case ValueKind::Ldt:
    case ValueKind::Enum: return true;
    default: return false;
    }
}

} // namespace takt::bytecode
