// Literals typed by where they are used, as CODESYS, TwinCAT, OpenPLC and OSCAT sources write
// them: integer constants where a REAL is expected, 0 and 1 where a BOOL is expected, literals
// inside nested calls, and enumeration literals next to a variable named like their type.
#include <gtest/gtest.h>

#include "sema_body_test_util.h"

namespace takt::compiler::test {
namespace {

TEST(SemaLiteralTyping, IntegerConstantsIncludingNegatedOnesFitRealAndLreal) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    r : REAL := -5;
    l : LREAL := -9007199254740993;
    big : REAL := 4294967296;
END_VAR
    r := -42;
    l := -7;
    r := 3 - 10;
    l := -(7);
    big := big + r;
END_PROGRAM
)"),
              "");
}

} // namespace
} // namespace takt::compiler::test
