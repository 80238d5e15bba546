#pragma once
// Equality of two values of one type of Module::types, by value: what EQ_AGG computes and what
// `takt test` walks again to say where a failed ASSERT_EQUAL on a STRUCT or ARRAY first
// differs. Members and elements are compared in declaration order, each by the rule of its
// type: integers, BOOL, bit strings, times, enums, references exactly; REAL/LREAL with `=`
// (0.0 = -0.0, NaN <> NaN); STRING/WSTRING up to the terminator. Padding bytes and the bytes
// after a string's terminator never count, so the raw bytes are not compared.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "takt/bytecode/module.h"

namespace takt::bytecode {

// Types nest at most this deep (a STRUCT holding an ARRAY of STRUCT is depth 3) for EQ_AGG;
// the verifier refuses deeper and cyclic type descriptions, so the walk's recursion is bounded.
inline constexpr std::uint32_t kMaxCompareDepth = 64;

// Why the value type `type` cannot be compared by EQ_AGG (an FB instance, ARRAY [*], a size
// that does not match its members, nesting deeper than kMaxCompareDepth, a cycle); empty when
// it can. `memo` holds what earlier calls found (pass the same vector for one module).
[[nodiscard]] std::string compareTypeError(const Module& m, std::uint32_t type, std::vector<std::int32_t>& memo);

// a = b by value as `type` (a type compareTypeError accepts). Allocates nothing.
[[nodiscard]] bool valuesEqual(const Module& m, std::uint32_t type, const std::uint8_t* a,
                               const std::uint8_t* b) noexcept;

// One step into a value: field `index` of a STRUCT or element `index` (counted from 0 in
// storage order, the last subscript fastest) of an ARRAY, `container` being its type.
struct ValueStep {
    std::uint32_t container;
    std::uint32_t index;
};

// Where two values first differ: the steps from the whole value to an elementary member
// (or STRING) `leaf`, which starts `offset` bytes into the value.
struct ValueDifference {
    std::vector<ValueStep> path;
    std::uint32_t leaf = kNone;
    std::uint32_t offset = 0;
};

// The first difference in declaration order; nullopt when the values are equal.
[[nodiscard]] std::optional<ValueDifference> firstDifference(const Module& m, std::uint32_t type, const std::uint8_t* a,
                                                             const std::uint8_t* b);

// The subscript text of element `index` of array type `array`: "[3]", "[1, 2]".
[[nodiscard]] std::string elementSubscript(const TypeDesc& array, std::uint32_t index);

} // namespace takt::bytecode
