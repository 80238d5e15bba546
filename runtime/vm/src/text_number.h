#pragma once
// Reading a number from text (STRING_TO_INT, STRING_TO_REAL … and TO_* from STRING/WSTRING):
// the whole text, blanks around it allowed, must be an ST literal of the target type whose value
// that type holds; anything else reads as 0 (docs/language-notes.md). Nothing allocates.
#include <cstdint>
#include <string_view>

#include "takt/bytecode/opcodes.h"

namespace takt::vm {

// An integer type (or BOOL): the value as int64 (ULINT/LWORD above 2^63 - 1 as its bit
// pattern); 0 when the text is not such a literal or the value is out of the type's range.
std::int64_t textToInt(std::string_view text, bytecode::TextNumber type) noexcept;

// REAL or LREAL (other types give 0): the value, rounded once to the type's precision; 0 when
// the text is not a literal or the value is beyond the type's range.
double textToReal(std::string_view text, bytecode::TextNumber type) noexcept;

} // namespace takt::vm
