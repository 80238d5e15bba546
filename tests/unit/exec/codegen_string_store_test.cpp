// A STRING or WSTRING stored into a variable leaves bytes that depend only on the program, never
// on stack scratch: the call stack is not state (the native tier keeps some frames in machine
// registers), so whatever a temporary held before must not reach a variable. Each test fills
// the stack with a marker byte before the cycle and looks for it in the stored buffer.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "st_runner.h"

namespace takt::compiler::testing {
namespace {

constexpr std::uint8_t kScratch = 0xEE;

// What a stored string buffer should hold: `value`, its terminator, then `tail` to the end.
std::vector<std::uint8_t> buffer(const std::string& value, std::size_t size, std::uint8_t tail) {
    std::vector<std::uint8_t> out(size, tail);
    std::copy(value.begin(), value.end(), out.begin());
    out[value.size()] = 0;
    return out;
}

StRunner runOnce(const char* text) {
    StRunner r(text);
    EXPECT_TRUE(r.ok) << r.errors();
    r.fillStack(kScratch);
    EXPECT_EQ(r.cycle(), vm::Trap::None);
    return r;
}

// A literal shorter than the element, stored by a run-time subscript (through a reference):
// only the literal's bytes are stored, the rest of the element keeps its bytes. It once stored
// the whole element from a temporary that held stack scratch after the terminator.
TEST(CodegenStringStore, ShortLiteralThroughAReferenceStoresOnlyItsBytes) {
    StRunner r = runOnce(R"(
PROGRAM p
VAR names : ARRAY[0..3] OF STRING[10]; k : INT := 2; END_VAR
names[k] := 'ab';
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)");
    const std::vector<std::uint8_t> all = r.bytes("i.names");
    ASSERT_EQ(all.size(), 44U);
    EXPECT_EQ(std::vector<std::uint8_t>(all.begin() + 22, all.begin() + 33), buffer("ab", 11, 0));
}

// A STRING variable (capacity 10, holding 2 characters) stored through a reference: the move
// into the temporary ends the value with zeros to the capacity, so no scratch follows it.
TEST(CodegenStringStore, ShortValueThroughAReferenceEndsInZerosNotScratch) {
    StRunner r = runOnce(R"(
PROGRAM p
VAR names : ARRAY[0..3] OF STRING[10]; s : STRING[10]; w : ARRAY[0..1] OF WSTRING[6]; ws : WSTRING[6];
    k : INT := 1; END_VAR
s := 'xy';
names[k] := s;
ws := "q";
w[k] := ws;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)");
    const std::vector<std::uint8_t> all = r.bytes("i.names");
    EXPECT_EQ(std::vector<std::uint8_t>(all.begin() + 11, all.begin() + 22), buffer("xy", 11, 0));
    const std::vector<std::uint8_t> wide = r.bytes("i.w");
    ASSERT_EQ(wide.size(), 28U);
    EXPECT_EQ(std::vector<std::uint8_t>(wide.begin() + 14, wide.end()), buffer(std::string("q\0", 2), 14, 0));
}

// A struct holding a STRING copied whole through a reference, after its string was set from a
// shorter value: every byte of the copy is the source's, none is scratch.
TEST(CodegenStringStore, StructWithAStringCopiedThroughAReferenceCarriesNoScratch) {
    StRunner r = runOnce(R"(
TYPE Tag : STRUCT name : STRING[10]; id : DINT; END_STRUCT; END_TYPE
PROGRAM p
VAR tags : ARRAY[0..2] OF Tag; one : Tag; k : INT := 2; END_VAR
one.name := 'motor';
one.id := 7;
tags[k] := one;
tags[k - 1].name := one.name;
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)");
    for (const std::uint8_t b : r.bytes("i.tags")) {
        EXPECT_NE(b, kScratch);
    }
}

} // namespace
} // namespace takt::compiler::testing
