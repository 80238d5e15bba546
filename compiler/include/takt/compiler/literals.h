#pragma once
// Decoding of ST literal texts into values (LANGUAGE.md "Literals"). The lexer only finds where
// a literal ends; these pure functions check the shape and the range and compute the value.
// Each returns false and a message naming the offending text on failure; none throws.
#include <cstdint>
#include <string>
#include <string_view>

#include "takt/compiler/ast.h"

namespace takt::compiler {

// The text after the first '#' ("T#1s" -> "1s", "16#FF" -> "FF"); the whole text when none.
[[nodiscard]] std::string_view literalBody(std::string_view text);
// The text before the first '#' ("TIME#1s" -> "TIME"); empty when none.
[[nodiscard]] std::string_view literalPrefix(std::string_view text);

// 42, 1_000, 2#1010, 8#17, 16#FF -> magnitude. Fails on bad digits and on overflow of 64 bits.
[[nodiscard]] bool decodeInteger(std::string_view text, std::uint64_t& value, std::string& error);

// 1.5, 1.0E-3, 2E5, 1_000.5 -> double. Fails on malformed text and on overflow to infinity.
[[nodiscard]] bool decodeReal(std::string_view text, double& value, std::string& error);

// 'text' or "text" including the quotes. Resolves $$ $' $" $L $N $P $R $T, $hh (STRING) and
// $hhhh (WSTRING, encoded as UTF-8).
[[nodiscard]] bool decodeString(std::string_view text, bool wide, std::string& value, std::string& error);

// A duration body ("1h2m3s4ms", "-5s", "1.5s", "1d_2h") -> nanoseconds. Units d h m s ms us ns.
[[nodiscard]] bool decodeDuration(std::string_view body, std::int64_t& nanos, std::string& error);
// "2024-01-15" -> nanoseconds since 1970-01-01.
[[nodiscard]] bool decodeDate(std::string_view body, std::int64_t& nanos, std::string& error);
// "12:30:00.5" -> nanoseconds since midnight.
[[nodiscard]] bool decodeTimeOfDay(std::string_view body, std::int64_t& nanos, std::string& error);
// "2024-01-15-12:30:00" -> nanoseconds since 1970-01-01 00:00:00.
[[nodiscard]] bool decodeDateAndTime(std::string_view body, std::int64_t& nanos, std::string& error);

// "%IX1.2", "%QW3", "%MD10", "%I*", "%QX*", "%IB0", "%I0.0" -> Address (span left unset).
[[nodiscard]] bool parseAddress(std::string_view text, ast::Address& address, std::string& error);

// BOOL, INT, …, STRING, WSTRING, CHAR, WCHAR (case-insensitive).
[[nodiscard]] bool isElementaryTypeName(std::string_view name);

} // namespace takt::compiler
