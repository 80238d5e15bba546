// Expressions and statements, checked through the S-expression dump.
#include <gtest/gtest.h>

#include "parser_test_util.h"

namespace takt::compiler {
namespace {

using testing::parseText;

// Parses `x := <expr>;` inside a PROGRAM and returns the dump of the value.
std::string expr(const std::string& text) {
    auto p = parseText("PROGRAM p\nx := " + text + ";\nEND_PROGRAM\n");
    EXPECT_TRUE(p->diags.diagnostics().empty()) << text << "\n" << p->messages();
    if (p->unit.decls.empty()) {
        return "<no decl>";
    }
    const auto& pou = static_cast<const ast::PouDecl&>(*p->unit.decls[0]);
    if (pou.body.empty() || pou.body[0]->kind != ast::StmtKind::Assign) {
        return "<no assignment>";
    }
    return dumpExpr(*static_cast<const ast::AssignStmt&>(*pou.body[0]).value, p->sm);
}

// Parses a PROGRAM body and returns its statements' dumps, one per line.
std::string body(const std::string& text) {
    auto p = parseText("PROGRAM p\n" + text + "\nEND_PROGRAM\n");
    EXPECT_TRUE(p->diags.diagnostics().empty()) << text << "\n" << p->messages();
    std::string out;
    if (p->unit.decls.empty()) {
        return "<no decl>";
    }
    for (const auto& s : static_cast<const ast::PouDecl&>(*p->unit.decls[0]).body) {
        out += dumpStmt(*s, p->sm) + "\n";
    }
    return out;
}

TEST(ParserExpr, PrecedenceTable) {
    EXPECT_EQ(expr("a OR b XOR c AND d"), "(OR a (XOR b (AND c d)))");
    EXPECT_EQ(expr("a AND b XOR c OR d"), "(OR (XOR (AND a b) c) d)");
    EXPECT_EQ(expr("a & b OR c"), "(OR (AND a b) c)");
    EXPECT_EQ(expr("a = b AND c <> d"), "(AND (= a b) (<> c d))");
    EXPECT_EQ(expr("a < b = c >= d"), "(= (< a b) (>= c d))");
    EXPECT_EQ(expr("a <= b + c"), "(<= a (+ b c))");
    EXPECT_EQ(expr("a + b * c"), "(+ a (* b c))");
    EXPECT_EQ(expr("a - b - c"), "(- (- a b) c)");
    EXPECT_EQ(expr("a / b MOD c * d"), "(* (MOD (/ a b) c) d)");
    EXPECT_EQ(expr("-a * b"), "(* (neg a) b)");
    EXPECT_EQ(expr("NOT a AND b"), "(AND (NOT a) b)");
    EXPECT_EQ(expr("NOT NOT a"), "(NOT (NOT a))");
    EXPECT_EQ(expr("+a"), "(plus a)");
    EXPECT_EQ(expr("(a + b) * c"), "(* (paren (+ a b)) c)");
}

TEST(ParserExpr, PowerBindsTighterThanUnaryAndIsLeftAssociative) {
    EXPECT_EQ(expr("-2 ** 2"), "(neg (** 2 2))");
    EXPECT_EQ(expr("a ** b ** c"), "(** (** a b) c)");
    EXPECT_EQ(expr("2 ** -1"), "(** 2 (neg 1))");
    EXPECT_EQ(expr("a * b ** c"), "(* a (** b c))");
}

TEST(ParserExpr, PostfixChains) {
    EXPECT_EQ(expr("x.y[1, 2]^.z"), "(. (^ (index (. x y) 1 2)) z)");
    EXPECT_EQ(expr("w.3"), "(bit w 3)");
    EXPECT_EQ(expr("w.%X3"), "(bit%X w 3)");
    EXPECT_EQ(expr("a[i].b.0"), "(bit (. (index a i) b) 0)");
    EXPECT_EQ(expr("THIS^.a"), "(. (^ THIS) a)");
    EXPECT_EQ(expr("SUPER^.m()"), "(call (. (^ SUPER) m))");
    EXPECT_EQ(expr("REF(x)"), "(REF x)");
    EXPECT_EQ(expr("r^"), "(^ r)");
    EXPECT_EQ(expr("NULL"), "NULL");
    EXPECT_EQ(expr("%IX1.2"), "%IX1.2");
    EXPECT_EQ(expr("%QW4 + 1"), "(+ %QW4 1)");
}

TEST(ParserExpr, CallArguments) {
    EXPECT_EQ(expr("f()"), "(call f)");
    EXPECT_EQ(expr("f(1, x := 2, q => v, NOT r => w, s =>)"), "(call f 1 (:= x 2) (=> q v) (NOT=> r w) (=> s))");
    EXPECT_EQ(expr("fb.m(a)"), "(call (. fb m) a)");
    EXPECT_EQ(expr("AND(a, b) OR MOD(c, d)"), "(OR (call AND a b) (call MOD c d))");
    EXPECT_EQ(expr("f(g(1))[2]"), "(index (call f (call g 1)) 2)");
}

TEST(ParserExpr, Literals) {
    EXPECT_EQ(expr("42"), "42");
    EXPECT_EQ(expr("1_000"), "1000");
    EXPECT_EQ(expr("16#FF"), "255");
    EXPECT_EQ(expr("2#1010"), "10");
    EXPECT_EQ(expr("8#17"), "15");
    EXPECT_EQ(expr("1.5E3"), "1500.0");
    EXPECT_EQ(expr("TRUE"), "TRUE");
    EXPECT_EQ(expr("'a$'b$N'"), "\"a'b\\n\"");
    EXPECT_EQ(expr("\"$00E9\""), "W\"\xC3\xA9\"");
    EXPECT_EQ(expr("T#1h2m3s4ms"), "T#3723004000000ns");
    EXPECT_EQ(expr("TIME#1.5s"), "TIME#1500000000ns");
    EXPECT_EQ(expr("T#-5s"), "T#-5000000000ns");
    EXPECT_EQ(expr("LTIME#5ns"), "LTIME#5ns");
    EXPECT_EQ(expr("D#1970-01-02"), "D#86400000000000ns");
    EXPECT_EQ(expr("TOD#12:30:00.5"), "TOD#45000500000000ns");
    EXPECT_EQ(expr("DT#1970-01-01-00:00:01"), "DT#1000000000ns");
}

TEST(ParserExpr, TypedLiterals) {
    EXPECT_EQ(expr("INT#-5"), "INT#-5");
    EXPECT_EQ(expr("WORD#16#FF"), "WORD#255");
    EXPECT_EQ(expr("BOOL#1"), "BOOL#TRUE");
    EXPECT_EQ(expr("BOOL#FALSE"), "BOOL#FALSE");
    EXPECT_EQ(expr("REAL#1.5"), "REAL#1.5");
    EXPECT_EQ(expr("LREAL#-2"), "LREAL#-2.0");
    EXPECT_EQ(expr("STRING#'ab'"), "STRING#\"ab\"");
    EXPECT_EQ(expr("LINT#-9223372036854775808"), "LINT#-9223372036854775808");
    EXPECT_EQ(expr("Mode#Run"), "Mode#Run");
    EXPECT_EQ(expr("x = Mode#Run"), "(= x Mode#Run)");
}

TEST(ParserExpr, LiteralDetailsAreDecodedIntoTheTree) {
    auto p = parseText("PROGRAM p x := INT#-5; END_PROGRAM");
    const auto& pou = static_cast<const ast::PouDecl&>(*p->unit.decls[0]);
    const auto& lit = static_cast<const ast::LiteralExpr&>(*static_cast<const ast::AssignStmt&>(*pou.body[0]).value);
    EXPECT_EQ(lit.literalKind, ast::LiteralKind::Int);
    ASSERT_NE(lit.typePrefix, nullptr);
    EXPECT_EQ(lit.typePrefix->name, "INT");
    EXPECT_TRUE(lit.negative);
    EXPECT_EQ(lit.intValue, 5u);
    EXPECT_EQ(p->sm.text(lit.span), "INT#-5");
}

TEST(ParserExpr, BadLiteralsAreReportedWithTheirCode) {
    auto p = parseText("PROGRAM p\n"
                       "a := 2#102;\n"
                       "b := '$Q';\n"
                       "c := T#5x;\n"
                       "d := INT#70000;\n"
                       "e := %IX1.9;\n"
                       "f := D#2023-02-29;\n"
                       "g := USINT#-1;\n"
                       "END_PROGRAM\n");
    EXPECT_EQ(p->codes(), (std::vector<std::string>{"2:6 E0004", "3:6 E0006", "4:6 E0005", "5:6 E0008", "6:6 E0601",
                                                    "7:6 E0005", "8:6 E0008"}))
        << p->messages();
    EXPECT_NE(p->messages().find("2#102"), std::string::npos);
    EXPECT_NE(p->messages().find("70000"), std::string::npos);
}

TEST(ParserStmt, AssignmentsAndCalls) {
    EXPECT_EQ(body("x := 1;\nfb(IN := TRUE, PT := T#1s, Q => done);\nf();\n;"),
              "(:= x 1)\n(expr (call fb (:= IN TRUE) (:= PT T#1000000000ns) (=> Q done)))\n(expr (call f))\n(empty)\n");
    EXPECT_EQ(body("a[1].b := c.d;"), "(:= (. (index a 1) b) (. c d))\n");
}

TEST(ParserStmt, IfElsifElse) {
    EXPECT_EQ(body("IF a THEN x := 1; ELSIF b THEN x := 2; ELSIF c THEN ; ELSE x := 3; END_IF;"),
              "(IF\n  (cond a\n    (:= x 1))\n  (ELSIF b\n    (:= x 2))\n  (ELSIF c\n    (empty))\n  (ELSE\n    (:= x "
              "3)))\n");
    EXPECT_EQ(body("IF a THEN END_IF"), "(IF\n  (cond a))\n");
}

TEST(ParserStmt, CaseLabelsRangesEnumsAndElse) {
    EXPECT_EQ(body("CASE x OF\n"
                   "1, 2: y := 1; z := 2;\n"
                   "3..5, 10: y := 2;\n"
                   "Mode#Run: y := 3;\n"
                   "Idle: ;\n"
                   "-1: y := 4;\n"
                   "ELSE y := 0;\n"
                   "END_CASE;"),
              "(CASE x\n"
              "  (branch (1 2)\n    (:= y 1)\n    (:= z 2))\n"
              "  (branch ((.. 3 5) 10)\n    (:= y 2))\n"
              "  (branch (Mode#Run)\n    (:= y 3))\n"
              "  (branch (Idle)\n    (empty))\n"
              "  (branch ((neg 1))\n    (:= y 4))\n"
              "  (ELSE\n    (:= y 0)))\n");
}

TEST(ParserStmt, CaseBranchBodiesEndOnlyAtALabelFollowedByColon) {
    // `a := b;` inside a branch must not be mistaken for a label; `b:` starts the next branch.
    EXPECT_EQ(body("CASE s OF\na: a := b;\nb: f(x := 1);\nEND_CASE"),
              "(CASE s\n  (branch (a)\n    (:= a b))\n  (branch (b)\n    (expr (call f (:= x 1)))))\n");
}

TEST(ParserStmt, Loops) {
    EXPECT_EQ(body("FOR i := 1 TO 10 BY 2 DO s := s + i; END_FOR;"), "(FOR i 1 10 (BY 2)\n  (:= s (+ s i)))\n");
    EXPECT_EQ(body("FOR i := 0 TO n DO EXIT; END_FOR"), "(FOR i 0 n\n  (EXIT))\n");
    EXPECT_EQ(body("WHILE a < 10 DO a := a + 1; CONTINUE; END_WHILE;"),
              "(WHILE (< a 10)\n  (:= a (+ a 1))\n  (CONTINUE))\n");
    EXPECT_EQ(body("REPEAT a := a - 1; UNTIL a = 0 END_REPEAT;"), "(REPEAT\n  (:= a (- a 1))\n  (UNTIL (= a 0)))\n");
    EXPECT_EQ(body("RETURN;"), "(RETURN)\n");
}

TEST(ParserStmt, SpansCoverTheWholeConstruct) {
    auto p = parseText("PROGRAM p\n  IF a THEN\n    x := f(1) + 2;\n  END_IF;\nEND_PROGRAM\n");
    const auto& pou = static_cast<const ast::PouDecl&>(*p->unit.decls[0]);
    const auto& ifs = static_cast<const ast::IfStmt&>(*pou.body[0]);
    EXPECT_EQ(p->sm.text(ifs.span), "IF a THEN\n    x := f(1) + 2;\n  END_IF;");
    const auto& assign = static_cast<const ast::AssignStmt&>(*ifs.branches[0].body[0]);
    EXPECT_EQ(p->sm.text(assign.span), "x := f(1) + 2");
    EXPECT_EQ(p->sm.text(assign.value->span), "f(1) + 2");
    EXPECT_EQ(p->sm.text(pou.span).substr(0, 9), "PROGRAM p");
    EXPECT_EQ(p->sm.text(pou.span).substr(p->sm.text(pou.span).size() - 11), "END_PROGRAM");
}

TEST(ParserStmt, DumpWithPositions) {
    auto p = parseText("PROGRAM p\n  x := a + 1;\nEND_PROGRAM\n");
    EXPECT_EQ(p->dump(true), "(PROGRAM@1:1 p\n  (body\n    (:=@2:3 x@2:3 (+@2:8 a@2:8 1@2:12))))\n");
}

} // namespace
} // namespace takt::compiler
