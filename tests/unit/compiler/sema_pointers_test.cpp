// CODESYS pointers, references and unions in semantic analysis: the types ADR, SIZEOF and
// pointer arithmetic give, the UNION layout, and where each conversion is warned.
#include <gtest/gtest.h>

#include "sema_body_test_util.h"

namespace takt::compiler::test {
namespace {

TEST(SemaPointers, AdrSizeofAndArithmeticHaveCodesysTypes) {
    Analysis a(R"(TYPE Big : STRUCT data : ARRAY[1..300] OF BYTE; END_STRUCT END_TYPE
PROGRAM Main
VAR
    x : INT;
    big : Big;
    p : POINTER TO INT;
    n : UDINT;
    ok : BOOL;
END_VAR
    p := ADR(x);
    n := SIZEOF(x);
    n := SIZEOF(big);
    p := p + SIZEOF(INT);
    ok := p <> 0;
END_PROGRAM
)");
    EXPECT_EQ(a.errors(), 0u) << a.rendered();
    EXPECT_EQ(assignedType(a, "Main", 0), "POINTER TO INT");
    EXPECT_EQ(assignedType(a, "Main", 1), "USINT"); // the smallest unsigned type holding 2
    EXPECT_EQ(assignedType(a, "Main", 2), "UINT");  // 300
    EXPECT_EQ(assignedType(a, "Main", 3), "POINTER TO INT");
    EXPECT_EQ(assignedType(a, "Main", 4), "BOOL");
}

TEST(SemaPointers, UnionMembersOverlapAndTheLargestSetsTheSize) {
    Analysis a(R"(TYPE U :
UNION
    b : BYTE;
    l : LREAL;
    w : ARRAY[0..4] OF WORD;
END_UNION
END_TYPE
TYPE S : STRUCT tag : BYTE; u : U; END_STRUCT END_TYPE
)");
    EXPECT_EQ(a.errors(), 0u) << a.rendered();
    const auto* u = static_cast<const StructType*>(stripAlias(a.symbol("U")->type));
    ASSERT_TRUE(u->isUnion);
    for (const Field& f : u->fields) {
        EXPECT_EQ(f.offset, 0u) << f.name;
    }
    EXPECT_EQ(u->align, 8u);
    EXPECT_EQ(u->size, 16u); // 10 bytes of WORDs, rounded to LREAL's alignment
    const auto* s = static_cast<const StructType*>(stripAlias(a.symbol("S")->type));
    EXPECT_EQ(s->field("u")->offset, 8u);
    EXPECT_EQ(s->size, 24u);
}

TEST(SemaPointers, SizeofIsAConstantForArrayBounds) {
    Analysis a(R"(TYPE Point : STRUCT x : INT; y : DINT; END_STRUCT END_TYPE
PROGRAM Main
VAR
    buf : ARRAY[0..SIZEOF(Point) - 1] OF BYTE;
END_VAR
END_PROGRAM
)");
    EXPECT_EQ(a.errors(), 0u) << a.rendered();
    const Symbol* main = a.symbol("Main");
    ASSERT_NE(main, nullptr);
    const Symbol* buf = main->scope->findLocal("buf");
    ASSERT_NE(buf, nullptr);
    EXPECT_EQ(stripAlias(buf->type)->size, 8u);
}

TEST(SemaPointers, ReferencesReadAsTheirTargetExceptWhereTheyAreBound) {
    Analysis a(R"(PROGRAM Main
VAR
    x : DINT;
    r : REFERENCE TO DINT;
    y : DINT;
    ok : BOOL;
END_VAR
    r REF= x;
    y := r;
    ok := __ISVALIDREF(r);
END_PROGRAM
)");
    EXPECT_EQ(a.errors(), 0u) << a.rendered();
    EXPECT_EQ(assignedType(a, "Main", 1), "DINT");
    EXPECT_EQ(assignedType(a, "Main", 2), "BOOL");
    const ast::PouDecl* p = findPou(a, "Main");
    const auto& bind = static_cast<const ast::AssignStmt&>(*p->body[0]);
    EXPECT_TRUE(bind.bindReference);
    EXPECT_EQ(bind.target->type->name(), "REFERENCE TO DINT");
}

TEST(SemaPointers, UserPousNamedLikeTheOperatorsWin) {
    Analysis a(R"(FUNCTION ADR : INT
VAR_INPUT
    v : INT;
END_VAR
    ADR := v * 2;
END_FUNCTION
PROGRAM Main
VAR
    x : INT;
END_VAR
    x := ADR(4);
END_PROGRAM
)");
    EXPECT_EQ(a.errors(), 0u) << a.rendered();
    EXPECT_EQ(assignedType(a, "Main", 0), "INT");
}

TEST(SemaPointers, PointerAndReferenceAreNamesBeforeAnythingButTo) {
    EXPECT_EQ(diagsOf(R"(PROGRAM Main
VAR
    pointer : INT;
    reference : INT;
    union2 : INT;
END_VAR
    pointer := reference + union2;
END_PROGRAM
)"),
              "");
}

} // namespace
} // namespace takt::compiler::test
