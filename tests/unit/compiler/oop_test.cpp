// PROPERTY accessors and CLASS: how they parse (as METHODs of their POU), how reads and
// assignments of a property become accessor calls, and the names GET, SET and OVERRIDE stay
// free for variables and methods.
#include <gtest/gtest.h>

#include "parser_test_util.h"
#include "sema_body_test_util.h"

namespace takt::compiler {
namespace {

std::string dumpOf(const std::string& text) {
    auto p = testing::parseText(text);
    EXPECT_TRUE(p->diags.diagnostics().empty()) << text << "\n" << p->messages();
    return p->dump();
}

TEST(OopParse, PropertyBecomesGetAndSetMethods) {
    EXPECT_EQ(dumpOf("FUNCTION_BLOCK Fb\n"
                     "PROPERTY PUBLIC Level : INT\n"
                     "GET\n"
                     "VAR t : INT; END_VAR\n"
                     "Level := t;\n"
                     "END_GET\n"
                     "SET\n"
                     "t2 := Level;\n"
                     "END_SET\n"
                     "END_PROPERTY\n"
                     "PRIVATE PROPERTY Count : DINT\n"
                     "GET Count := 1; END_GET\n"
                     "END_PROPERTY\n"
                     "END_FUNCTION_BLOCK\n"),
              "(FUNCTION_BLOCK Fb\n"
              "  (PROPERTY_GET Level PUBLIC : INT\n"
              "    (VAR\n"
              "      (var (t) INT))\n"
              "    (body\n"
              "      (:= Level t)))\n"
              "  (PROPERTY_SET Level PUBLIC\n"
              "    (VAR_INPUT\n"
              "      (var (Level) INT))\n"
              "    (body\n"
              "      (:= t2 Level)))\n"
              "  (PROPERTY_GET Count PRIVATE : DINT\n"
              "    (body\n"
              "      (:= Count 1)))\n"
              "  (body))\n");
}

TEST(OopParse, InterfacePropertyPrototypesAndClasses) {
    EXPECT_EQ(dumpOf("INTERFACE I\n"
                     "PROPERTY P : BOOL\n"
                     "GET END_GET\n"
                     "END_PROPERTY\n"
                     "END_INTERFACE\n"
                     "CLASS FINAL C EXTENDS B IMPLEMENTS I\n"
                     "METHOD PROTECTED OVERRIDE Run END_METHOD\n"
                     "END_CLASS\n"),
              "(INTERFACE I\n"
              "  (PROPERTY_GET P prototype : BOOL))\n"
              "(CLASS C FINAL (EXTENDS B) (IMPLEMENTS I)\n"
              "  (METHOD Run PROTECTED OVERRIDE\n"
              "    (body))\n"
              "  (body))\n");
}

TEST(OopParse, GetSetAndOverrideRemainNames) {
    // CODESYS's RS has an input named SET; methods and variables may be called Get or Override.
    EXPECT_EQ(dumpOf("FUNCTION_BLOCK Fb\n"
                     "VAR set, get, override : BOOL; END_VAR\n"
                     "METHOD Get : BOOL Get := get; END_METHOD\n"
                     "METHOD Override END_METHOD\n"
                     "METHOD Override2\n"
                     "set := get OR override;\n"
                     "END_METHOD\n"
                     "METHOD OVERRIDE Override3\n"
                     "override := TRUE;\n"
                     "END_METHOD\n"
                     "set := get OR override;\n"
                     "END_FUNCTION_BLOCK\n"),
              "(FUNCTION_BLOCK Fb\n"
              "  (VAR\n"
              "    (var (set get override) BOOL))\n"
              "  (METHOD Get : BOOL\n"
              "    (body\n"
              "      (:= Get get)))\n"
              "  (METHOD Override\n"
              "    (body))\n"
              "  (METHOD Override2\n"
              "    (body\n"
              "      (:= set (OR get override))))\n"
              "  (METHOD Override3 OVERRIDE\n"
              "    (body\n"
              "      (:= override TRUE)))\n"
              "  (body\n"
              "    (:= set (OR get override))))\n");
}

TEST(OopParse, UnclosedAccessorsAreReportedAndRecovered) {
    auto p = testing::parseText("FUNCTION_BLOCK Fb\n"
                                "PROPERTY P : INT\n"
                                "GET\n"
                                "P := 1;\n"
                                "END_PROPERTY\n"
                                "METHOD M END_METHOD\n"
                                "END_FUNCTION_BLOCK\n");
    ASSERT_EQ(p->diags.diagnostics().size(), 1u) << p->messages();
    EXPECT_EQ(p->diags.diagnostics()[0].code, DiagCode::MissingEnd);
    EXPECT_NE(p->dump().find("(METHOD M"), std::string::npos) << p->dump();
}

// The body statement at `index` of a POU's first member named `name` (or of the POU).
const ast::Stmt& stmtOf(const ast::PouDecl& pou, std::size_t index) {
    return *pou.body.at(index);
}

TEST(OopSema, PropertyReadsAndWritesBecomeAccessorCalls) {
    test::Analysis a(R"(FUNCTION_BLOCK Fb
VAR
    v : INT;
END_VAR
PROPERTY P : INT
GET
    P := v;
END_GET
SET
    v := P;
END_SET
END_PROPERTY
END_FUNCTION_BLOCK
PROGRAM Main
VAR
    fb : Fb;
    x : INT;
END_VAR
    fb.P := 3;
    x := fb.P + 1;
END_PROGRAM
)");
    ASSERT_EQ(test::diagList(a), "");
    const ast::PouDecl* main = test::findPou(a, "Main");
    ASSERT_NE(main, nullptr);
    // fb.P := 3 is a call of the setter with the value as its argument.
    const ast::Stmt& write = stmtOf(*main, 0);
    ASSERT_EQ(write.kind, ast::StmtKind::Expr);
    const auto& set = static_cast<const ast::CallExpr&>(*static_cast<const ast::ExprStmt&>(write).expr);
    ASSERT_NE(set.target, nullptr);
    EXPECT_EQ(set.target->name, std::string("P") + ast::kSetterSuffix);
    ASSERT_EQ(set.args.size(), 1u);
    // x := fb.P + 1 reads through the getter, typed INT.
    const auto& read = static_cast<const ast::AssignStmt&>(stmtOf(*main, 1));
    const auto& sum = static_cast<const ast::BinaryExpr&>(*read.value);
    ASSERT_EQ(sum.lhs->kind, ast::ExprKind::Call);
    const auto& get = static_cast<const ast::CallExpr&>(*sum.lhs);
    ASSERT_NE(get.target, nullptr);
    EXPECT_EQ(get.target->name, "P");
    ASSERT_NE(get.type, nullptr);
    EXPECT_EQ(get.type->name(), "INT");
}

TEST(OopSema, AccessorMessagesNameTheProperty) {
    test::Analysis a(R"(INTERFACE I
PROPERTY P : INT
GET
END_GET
SET
END_SET
END_PROPERTY
END_INTERFACE
FUNCTION_BLOCK Fb IMPLEMENTS I
PROPERTY P : INT
GET
    P := 1;
END_GET
END_PROPERTY
END_FUNCTION_BLOCK
)");
    EXPECT_EQ(test::diagList(a), "E0702@9:30");
    EXPECT_EQ(test::messageOf(a, "E0702"),
              "FUNCTION_BLOCK 'Fb' does not implement the SET of PROPERTY 'P' of INTERFACE 'I'");
}

} // namespace
} // namespace takt::compiler
