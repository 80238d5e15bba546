// The standard function table and overload resolution, checked directly on types.
#include <gtest/gtest.h>

#include "sema/context.h"
#include "sema/stdlib.h"
#include "takt/compiler/sema.h"
#include "takt/compiler/sema/types.h"

namespace takt::compiler::sema {
namespace {

using K = TypeKind;

class StdlibTest : public ::testing::Test {
protected:
    TypeTable types;

    const Type* t(K k) const { return types.get(k); }

    StdOutcome call(std::string_view name, std::vector<const Type*> argTypes, const Type* expected = nullptr) {
        const StdFunction* fn = findStandardFunction(name);
        EXPECT_NE(fn, nullptr) << name;
        if (fn == nullptr) {
            return {};
        }
        std::vector<StdArg> args;
        for (const Type* a : argTypes) {
            args.push_back(StdArg{a, {}, false});
        }
        return resolveStandardCall(types, *fn, args, expected);
    }

    // The result type name of a call that must resolve.
    std::string result(std::string_view name, std::vector<const Type*> argTypes, const Type* expected = nullptr) {
        StdOutcome out = call(name, std::move(argTypes), expected);
        EXPECT_TRUE(out.resolution.has_value()) << name << ": " << out.message;
        return out.resolution ? out.resolution->result->name() : "<none>";
    }

    StdFailure failure(std::string_view name, std::vector<const Type*> argTypes) {
        StdOutcome out = call(name, std::move(argTypes));
        EXPECT_FALSE(out.resolution.has_value()) << name;
        return out.failure;
    }
};

TEST_F(StdlibTest, EveryFamilyIsDeclared) {
    for (const char* name : {"ABS",
                             "SQRT",
                             "LN",
                             "LOG",
                             "EXP",
                             "EXPT",
                             "SIN",
                             "COS",
                             "TAN",
                             "ASIN",
                             "ACOS",
                             "ATAN",
                             "ATAN2",
                             "ADD",
                             "SUB",
                             "MUL",
                             "DIV",
                             "MOD",
                             "MOVE",
                             "AND",
                             "OR",
                             "XOR",
                             "NOT",
                             "SHL",
                             "SHR",
                             "ROL",
                             "ROR",
                             "SEL",
                             "MAX",
                             "MIN",
                             "LIMIT",
                             "MUX",
                             "GT",
                             "GE",
                             "EQ",
                             "LE",
                             "LT",
                             "NE",
                             "LEN",
                             "LEFT",
                             "RIGHT",
                             "MID",
                             "CONCAT",
                             "INSERT",
                             "DELETE",
                             "REPLACE",
                             "FIND",
                             "ADD_TIME",
                             "SUB_TIME",
                             "MUL_TIME",
                             "DIV_TIME",
                             "ADD_TOD_TIME",
                             "ADD_DT_TIME",
                             "SUB_DATE_DATE",
                             "SUB_TOD_TOD",
                             "SUB_DT_DT",
                             "CONCAT_DATE_TOD",
                             "DT_TO_DATE",
                             "DT_TO_TOD",
                             "TRUNC",
                             "INT_TO_BCD",
                             "BCD_TO_INT",
                             "ASSERT_TRUE",
                             "ASSERT_FALSE",
                             "ASSERT_EQUAL",
                             "ASSERT_NOT_EQUAL",
                             "ASSERT_GREATER",
                             "ASSERT_LESS",
                             "ASSERT_GREATER_OR_EQUAL",
                             "ASSERT_LESS_OR_EQUAL",
                             "ASSERT_NEAR"}) {
        EXPECT_NE(findStandardFunction(name), nullptr) << name;
    }
    EXPECT_NE(findStandardFunction("int_to_real"), nullptr) << "names are case-insensitive";
}

TEST_F(StdlibTest, ConversionMatrixFollowsIec) {
    EXPECT_EQ(result("INT_TO_REAL", {t(K::Int)}), "REAL");
    EXPECT_EQ(result("DINT_TO_INT", {t(K::DInt)}), "INT");
    EXPECT_EQ(result("LREAL_TO_ULINT", {t(K::LReal)}), "ULINT");
    EXPECT_EQ(result("BOOL_TO_WORD", {t(K::Bool)}), "WORD");
    EXPECT_EQ(result("TIME_TO_LTIME", {t(K::Time)}), "LTIME");
    EXPECT_EQ(result("DT_TO_DATE", {t(K::Dt)}), "DATE");
    EXPECT_EQ(result("DATE_AND_TIME_TO_TIME_OF_DAY", {t(K::Dt)}), "TOD");
    StdOutcome text = call("INT_TO_STRING", {t(K::Int)});
    ASSERT_TRUE(text.resolution.has_value());
    EXPECT_EQ(text.resolution->result, types.string(false, 80));
    EXPECT_EQ(result("TO_DINT", {t(K::Real)}), "DINT");
    // Every numeric/bit pair exists in both directions.
    const char* scalars[] = {"SINT", "INT",  "DINT",  "LINT",  "USINT", "UINT",  "UDINT", "ULINT",
                             "BYTE", "WORD", "DWORD", "LWORD", "REAL",  "LREAL", "BOOL"};
    for (const char* a : scalars) {
        for (const char* b : scalars) {
            if (std::string_view(a) != b) {
                EXPECT_NE(findStandardFunction(std::string(a) + "_TO_" + b), nullptr) << a << "_TO_" << b;
            }
        }
    }
    // Conversions IEC does not define.
    EXPECT_EQ(findStandardFunction("TIME_TO_DATE"), nullptr);
    EXPECT_EQ(findStandardFunction("DATE_TO_TOD"), nullptr);
    EXPECT_EQ(findStandardFunction("REAL_TO_CHAR"), nullptr);
    EXPECT_EQ(findStandardFunction("INT_TO_INT"), nullptr);
    // The argument must convert implicitly to the source type.
    EXPECT_EQ(failure("INT_TO_REAL", {t(K::DInt)}), StdFailure::Types);
    EXPECT_EQ(result("DINT_TO_REAL", {t(K::Int)}), "REAL");
}

TEST_F(StdlibTest, TruncAndBcd) {
    EXPECT_EQ(result("TRUNC", {t(K::LReal)}), "DINT");
    EXPECT_EQ(result("TRUNC_LINT", {t(K::Real)}), "LINT");
    EXPECT_EQ(result("LREAL_TRUNC_INT", {t(K::LReal)}), "INT");
    EXPECT_EQ(failure("TRUNC", {t(K::Int)}), StdFailure::Types);
    EXPECT_EQ(result("INT_TO_BCD", {t(K::Int)}), "WORD");
    EXPECT_EQ(result("USINT_TO_BCD_BYTE", {t(K::USInt)}), "BYTE");
    EXPECT_EQ(result("BCD_TO_DINT", {t(K::DWord)}), "DINT");
    EXPECT_EQ(result("WORD_BCD_TO_UINT", {t(K::Word)}), "UINT");
}

TEST_F(StdlibTest, ExtensibleMaxBindsTheCommonType) {
    EXPECT_EQ(result("MAX", {t(K::Int), t(K::Int), t(K::Int), t(K::Int), t(K::Int)}), "INT");
    EXPECT_EQ(result("MAX", {t(K::SInt), t(K::Int), t(K::DInt), t(K::Int), t(K::SInt)}), "DINT");
    EXPECT_EQ(result("MIN", {t(K::Real), t(K::LReal)}), "LREAL");
    EXPECT_EQ(result("ADD", {t(K::Int), t(K::Int), t(K::Int)}), "INT");
    EXPECT_EQ(result("AND", {t(K::Byte), t(K::Byte), t(K::Byte), t(K::Byte)}), "BYTE");
    EXPECT_EQ(result("GT", {t(K::Int), t(K::Int), t(K::Int)}), "BOOL");
    EXPECT_EQ(failure("MAX", {t(K::Int)}), StdFailure::Count);
    EXPECT_EQ(failure("NE", {t(K::Int), t(K::Int), t(K::Int)}), StdFailure::Count);
}

TEST_F(StdlibTest, MismatchNamesArgumentTypesAndFamily) {
    const StringType* s = types.string(false, 10);
    StdOutcome out = call("MAX", {t(K::Int), s});
    ASSERT_FALSE(out.resolution.has_value());
    EXPECT_EQ(out.failure, StdFailure::Types);
    EXPECT_NE(out.message.find("(INT, STRING[10])"), std::string::npos) << out.message;
    EXPECT_NE(out.message.find("ANY_ELEMENTARY"), std::string::npos) << out.message;
    EXPECT_EQ(failure("SQRT", {t(K::Time)}), StdFailure::Types);
    EXPECT_EQ(failure("MOD", {t(K::Real), t(K::Real)}), StdFailure::Types);
    EXPECT_EQ(failure("AND", {t(K::Bool), t(K::Word)}), StdFailure::Types);
}

TEST_F(StdlibTest, SelectionTyping) {
    EXPECT_EQ(result("SEL", {t(K::Bool), t(K::Int), t(K::DInt)}), "DINT");
    EXPECT_EQ(failure("SEL", {t(K::Int), t(K::Int), t(K::Int)}), StdFailure::Types);
    EXPECT_EQ(result("MUX", {t(K::Int), t(K::Real), t(K::Real), t(K::Real), t(K::Real)}), "REAL");
    EXPECT_EQ(result("MUX", {t(K::USInt), t(K::Time), t(K::Time)}), "TIME");
    EXPECT_EQ(failure("MUX", {t(K::Real), t(K::Int), t(K::Int)}), StdFailure::Types);
    EXPECT_EQ(result("LIMIT", {t(K::Int), t(K::Int), t(K::Int)}), "INT");
}

TEST_F(StdlibTest, NumericAndBitFunctions) {
    EXPECT_EQ(result("ABS", {t(K::SInt)}), "SINT");
    EXPECT_EQ(result("SQRT", {t(K::LReal)}), "LREAL");
    EXPECT_EQ(result("ATAN2", {t(K::Real), t(K::Real)}), "REAL");
    EXPECT_EQ(result("EXPT", {t(K::Real), t(K::Int)}), "REAL");
    EXPECT_EQ(result("SHL", {t(K::Word), t(K::Int)}), "WORD");
    EXPECT_EQ(result("ROR", {t(K::LWord), t(K::USInt)}), "LWORD");
    EXPECT_EQ(result("NOT", {t(K::Bool)}), "BOOL");
    EXPECT_EQ(result("MOVE", {t(K::Tod)}), "TOD");
}

TEST_F(StdlibTest, TimeArithmetic) {
    EXPECT_EQ(result("ADD", {t(K::Time), t(K::Time)}), "TIME");
    EXPECT_EQ(result("ADD", {t(K::Tod), t(K::Time)}), "TOD");
    EXPECT_EQ(result("SUB", {t(K::Dt), t(K::Dt)}), "TIME");
    EXPECT_EQ(result("SUB", {t(K::LDate), t(K::LDate)}), "LTIME");
    EXPECT_EQ(result("MUL", {t(K::Time), t(K::Int)}), "TIME");
    EXPECT_EQ(result("DIV_LTIME", {t(K::LTime), t(K::Real)}), "LTIME");
    EXPECT_EQ(result("ADD_DT_TIME", {t(K::Dt), t(K::Time)}), "DT");
    EXPECT_EQ(result("SUB_TOD_TOD", {t(K::Tod), t(K::Tod)}), "TIME");
    EXPECT_EQ(result("CONCAT_DATE_TOD", {t(K::Date), t(K::Tod)}), "DT");
    EXPECT_EQ(failure("ADD", {t(K::Time), t(K::Date)}), StdFailure::Types);
}

TEST_F(StdlibTest, StringFunctions) {
    const StringType* s10 = types.string(false, 10);
    const StringType* s20 = types.string(false, 20);
    EXPECT_EQ(result("LEN", {s10}), "INT");
    EXPECT_EQ(result("LEFT", {s20, t(K::Int)}), "STRING[20]");
    EXPECT_EQ(result("MID", {s10, t(K::Int), t(K::Int)}), "STRING[10]");
    EXPECT_EQ(result("CONCAT", {s10, s20, types.string(false, 5)}), "STRING[35]");
    EXPECT_EQ(result("INSERT", {s10, s20, t(K::Int)}), "STRING[30]");
    EXPECT_EQ(result("FIND", {s10, s20}), "INT");
    EXPECT_EQ(failure("CONCAT", {s10, types.string(true, 10)}), StdFailure::Types);
}

TEST_F(StdlibTest, UntypedLiteralsTakeTheContextOrADefault) {
    const Type* lit = t(K::IntLiteral);
    EXPECT_EQ(result("MAX", {lit, lit}, t(K::SInt)), "SINT");
    EXPECT_EQ(result("MAX", {lit, lit}), "DINT");
    EXPECT_EQ(result("MAX", {t(K::Int), lit}), "INT");
    EXPECT_EQ(result("SQRT", {t(K::RealLiteral)}), "LREAL");
    EXPECT_EQ(result("SQRT", {t(K::RealLiteral)}, t(K::Real)), "REAL");
    StdOutcome out = call("SHL", {t(K::Byte), lit});
    ASSERT_TRUE(out.resolution.has_value());
    EXPECT_EQ(out.resolution->paramTypes[1]->name(), "DINT");
    EXPECT_EQ(out.resolution->generic->name(), "BYTE");
}

TEST_F(StdlibTest, FormalArguments) {
    const StdFunction* limit = findStandardFunction("LIMIT");
    ASSERT_NE(limit, nullptr);
    std::vector<StdArg> args{{t(K::Int), "MX", false}, {t(K::Int), "IN", false}, {t(K::Int), "MN", false}};
    EXPECT_TRUE(resolveStandardCall(types, *limit, args, nullptr).resolution.has_value());

    args[0].name = "MAXIMUM";
    StdOutcome unknown = resolveStandardCall(types, *limit, args, nullptr);
    EXPECT_EQ(unknown.failure, StdFailure::UnknownName);
    EXPECT_EQ(unknown.argIndex, 0u);

    const StdFunction* add = findStandardFunction("ADD");
    std::vector<StdArg> ext{{t(K::Int), "IN1", false}, {t(K::Int), "IN2", false}, {t(K::Int), "IN3", false}};
    EXPECT_TRUE(resolveStandardCall(types, *add, ext, nullptr).resolution.has_value());
    ext[2].name = "IN2";
    EXPECT_EQ(resolveStandardCall(types, *add, ext, nullptr).failure, StdFailure::Duplicate);
    std::vector<StdArg> mixed{{t(K::Int), "IN1", false}, {t(K::Int), {}, false}};
    EXPECT_EQ(resolveStandardCall(types, *add, mixed, nullptr).failure, StdFailure::Mixed);
}

TEST_F(StdlibTest, AssertionsAreTestOnlyAndVoid) {
    const StdFunction* eq = findStandardFunction("ASSERT_EQUAL");
    ASSERT_NE(eq, nullptr);
    EXPECT_TRUE(standardSignatures()[eq->first].testOnly);
    EXPECT_EQ(result("ASSERT_EQUAL", {t(K::Int), t(K::DInt)}), "VOID");
    EXPECT_EQ(result("ASSERT_NEAR", {t(K::Real), t(K::Real), t(K::RealLiteral)}), "VOID");
    EXPECT_EQ(result("ASSERT_TRUE", {t(K::Bool), types.string(false, 12)}), "VOID");
    EXPECT_FALSE(standardSignatures()[findStandardFunction("MAX")->first].testOnly);
}

TEST_F(StdlibTest, StandardFbSourceDeclaresEveryBlock) {
    const std::string_view src = standardFbSource(VendorProfile::Codesys);
    for (const char* fb : {"TON",       "TOF",       "TP",        "LTON",      "LTOF",    "LTP",      "R_TRIG",
                           "F_TRIG",    "CTU",       "CTD",       "CTUD",      "CTU_INT", "CTU_DINT", "CTU_LINT",
                           "CTU_UDINT", "CTU_ULINT", "CTD_ULINT", "CTUD_LINT", "SR",      "RS",       "RTC"}) {
        EXPECT_NE(src.find("FUNCTION_BLOCK " + std::string(fb) + "\n"), std::string_view::npos) << fb;
    }
    // OpenPLC's library blocks, with their ST bodies.
    for (const char* fb : {"PID", "RAMP", "INTEGRAL", "DERIVATIVE", "HYSTERESIS", "SEMA"}) {
        EXPECT_NE(src.find("FUNCTION_BLOCK " + std::string(fb) + "\n"), std::string_view::npos) << fb;
    }
    // GX Works3's edge one-shots exist in every profile.
    EXPECT_NE(src.find("FUNCTION_BLOCK DIFU\n"), std::string_view::npos);
    const std::string_view mitsubishi = standardFbSource(VendorProfile::Mitsubishi);
    EXPECT_NE(mitsubishi.find("FUNCTION_BLOCK DIFU\n"), std::string_view::npos);
    EXPECT_NE(mitsubishi.find("FUNCTION_BLOCK DIFD\n"), std::string_view::npos);
}

// What editors show of a standard function: each overload's parameters with their generic
// families, the result, and whether the last input repeats.
TEST(StandardSignaturesOf, OverloadsWithTheirGenericTypes) {
    const std::vector<StandardSignatureInfo> limit = standardSignaturesOf("limit");
    ASSERT_EQ(limit.size(), 1u);
    ASSERT_EQ(limit[0].params.size(), 3u);
    EXPECT_EQ(limit[0].params[0].name, "MN");
    EXPECT_EQ(limit[0].params[1].type, "ANY_ELEMENTARY");
    EXPECT_EQ(limit[0].result, "ANY_ELEMENTARY");
    EXPECT_FALSE(limit[0].extensible);
    const std::vector<StandardSignatureInfo> add = standardSignaturesOf("ADD");
    ASSERT_GE(add.size(), 2u); // numbers, and the TIME / date overloads
    EXPECT_TRUE(add[0].extensible);
    EXPECT_EQ(standardSignaturesOf("INT_TO_REAL").at(0).result, "REAL");
    EXPECT_TRUE(standardSignaturesOf("NO_SUCH_FUNCTION").empty());
}

} // namespace
} // namespace takt::compiler::sema
