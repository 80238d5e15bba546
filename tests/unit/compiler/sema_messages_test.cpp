// The wording of front-end diagnostics where it names what a declaration is: a member outside
// VAR_INPUT/VAR_OUTPUT is named by its section (W1002 for an FB's VAR and VAR_IN_OUT, which the
// default dialect lets callers read; E0105 for a VAR_TEMP), a POU that contains itself by its
// kind (E0111).
#include <string>

#include <gtest/gtest.h>

#include "sema_test_support.h"

namespace takt::compiler {
namespace {

std::string message(const test::Analysis& a, std::string_view code) {
    const Diagnostic* d = a.first(code);
    return d != nullptr ? d->message : std::string();
}

TEST(SemaMessages, HiddenMemberIsNamedByItsSection) {
    const char* const kFb = "FUNCTION_BLOCK Fb\nVAR_IN_OUT io : INT; END_VAR\nVAR state : INT; END_VAR\n"
                            "VAR_TEMP scratch : INT; END_VAR\nio := state + scratch;\nEND_FUNCTION_BLOCK\n";
    const auto read = [&](const char* member) {
        return test::Analysis(std::string(kFb) + "PROGRAM Main\nVAR f : Fb; v : INT; END_VAR\nv := f." + member +
                              ";\nEND_PROGRAM\n");
    };
    const test::Analysis inOut = read("io");
    EXPECT_EQ(message(inOut, "W1002"), "'io' is a VAR_IN_OUT member internal to 'Fb'; IEC 61131-3 makes only "
                                       "VAR_INPUT and VAR_OUTPUT accessible from outside")
        << inOut.rendered();
    const test::Analysis temp = read("scratch");
    EXPECT_EQ(message(temp, "E0105"),
              "'scratch' is a VAR_TEMP of 'Fb'; only VAR_INPUT and VAR_OUTPUT are accessible from outside")
        << temp.rendered();
    const test::Analysis internal = read("state");
    EXPECT_EQ(message(internal, "W1002"), "'state' is a VAR member internal to 'Fb'; IEC 61131-3 makes only "
                                          "VAR_INPUT and VAR_OUTPUT accessible from outside")
        << internal.rendered();
}

TEST(SemaMessages, ProgramThatContainsItselfIsNamedAsAProgram) {
    const test::Analysis a("PROGRAM MissingType\nVAR\n    self : MissingType;\nEND_VAR\nEND_PROGRAM\n");
    EXPECT_EQ(a.at("E0111"), std::vector<std::string>{"main.st:3:5"}) << a.rendered();
    const std::string m = message(a, "E0111");
    EXPECT_TRUE(m.starts_with("PROGRAM 'MissingType' contains itself")) << m;
    EXPECT_EQ(m.find("FUNCTION_BLOCK"), std::string::npos) << m;
}

TEST(SemaMessages, FunctionBlockThatContainsItselfIsNamedAsAFunctionBlock) {
    const test::Analysis a("FUNCTION_BLOCK Fb\nVAR\n    inner : Fb;\nEND_VAR\nEND_FUNCTION_BLOCK\n");
    EXPECT_TRUE(message(a, "E0111").starts_with("FUNCTION_BLOCK 'Fb' contains itself")) << a.rendered();
}

} // namespace
// A message quotes at most kQuotedTextLimit characters of user text: a 1 MB identifier does not
// make a 1 MB message, and the cut never splits a UTF-8 character.
TEST(SemaMessages, QuotedUserTextIsBounded) {
    const std::string name(std::size_t{1} << 20, 'x');
    const test::Analysis a("PROGRAM Main\nVAR v : INT; END_VAR\nv := " + name + ";\nEND_PROGRAM\n");
    const std::string m = message(a, "E0104");
    ASSERT_FALSE(m.empty()) << a.rendered().substr(0, 300);
    EXPECT_EQ(m.find("'" + std::string(kQuotedTextLimit, 'x') + "…'"), m.find('\'')) << m.substr(0, 300);
    EXPECT_LT(m.size(), 200u);

    EXPECT_EQ(boundQuotedText("unknown 'abc' in the FB's input 'de'"), "unknown 'abc' in the FB's input 'de'");
    std::string wide;
    for (std::size_t i = 0; i < kQuotedTextLimit + 3; ++i) {
        wide += "ä"; // two bytes each
    }
    EXPECT_EQ(boundQuotedText("string '" + wide + "' too long"),
              "string '" + wide.substr(0, 2 * kQuotedTextLimit) + "…' too long");
    EXPECT_EQ(boundQuotedText("'" + std::string(kQuotedTextLimit, 'y') + "'"),
              "'" + std::string(kQuotedTextLimit, 'y') + "'");
    const std::string two = boundQuotedText("'" + name + "' and '" + name + "'");
    EXPECT_EQ(two, "'" + std::string(kQuotedTextLimit, 'x') + "…' and '" + std::string(kQuotedTextLimit, 'x') + "…'");
}

} // namespace takt::compiler
