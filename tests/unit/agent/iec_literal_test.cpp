// IEC literal text on the control endpoint: parsed for a variable's type with the compiler's
// literal rules, range-checked by the typed JSON codec, rendered back for `takt watch`.
#include <gtest/gtest.h>

#include <limits>

#include "takt/agent/iec_literal.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/diagnostics.h"
#include "takt/engine/values.h"

namespace takt::agent {
namespace {

const char* const kProgram = R"(
TYPE Mode : (Off, Manual, Auto := 5); END_TYPE
PROGRAM Main
VAR
  t : TIME; lt : LTIME; d : DATE; tod1 : TOD; dt1 : DT;
  b : BYTE; w : WORD; lw : LWORD;
  i : INT; di : DINT; ul : ULINT;
  r : REAL; lr : LREAL; flag : BOOL;
  s : STRING[8]; ws : WSTRING[8]; c : CHAR;
  mode : Mode;
  arr : ARRAY[0..1] OF INT;
END_VAR
END_PROGRAM
)";

struct Fixture {
    Fixture() {
        compiler::Project project = compiler::checkSources({{"main.st", kProgram}});
        compiled = compiler::compileProgram(project);
        EXPECT_TRUE(compiled.ok()) << compiler::renderHuman(compiled.diagnostics, *project.sources) << compiled.failure;
    }
    std::uint32_t typeOf(const std::string& path) {
        engine::VarRef ref;
        std::string why;
        EXPECT_TRUE(engine::resolvePath(*compiled.module, path, ref, why)) << why;
        return ref.type;
    }
    // Parse for the type of `path`, store as the runtime would, read back and render.
    std::string roundTrip(const std::string& path, std::string_view text) {
        const std::uint32_t type = typeOf(path);
        rapidjson::Document typed;
        std::string error;
        if (!parseIecLiteral(*compiled.module, type, text, typed, typed.GetAllocator(), error)) {
            return "parse: " + error;
        }
        std::vector<std::uint8_t> bytes(compiled.module->types[type].size + 8, 0);
        if (!engine::decodeValue(*compiled.module, type, typed, bytes.data(), error)) {
            return "decode: " + error;
        }
        rapidjson::Document back;
        engine::encodeValue(*compiled.module, type, bytes.data(), back, back.GetAllocator());
        return formatIecLiteral(back);
    }
    compiler::CompiledProgram compiled;
};

TEST(IecLiteral, DurationsRoundTripInTheirLargestUnits) {
    Fixture f;
    EXPECT_EQ(f.roundTrip("Main.t", "T#330ms"), "T#330ms");
    EXPECT_EQ(f.roundTrip("Main.t", "TIME#90s"), "T#1m30s");
    EXPECT_EQ(f.roundTrip("Main.t", "t#1d2h3m4s5ms6us7ns"), "T#1d2h3m4s5ms6us7ns");
    EXPECT_EQ(f.roundTrip("Main.t", "T#-5s"), "T#-5s");
    EXPECT_EQ(f.roundTrip("Main.t", "T#0s"), "T#0s");
    EXPECT_EQ(f.roundTrip("Main.t", "1.5s"), "T#1s500ms"); // the prefix may be left out
    EXPECT_EQ(f.roundTrip("Main.lt", "LTIME#5us"), "LTIME#5us");
    EXPECT_EQ(f.roundTrip("Main.lt", "LT#1ns"), "LTIME#1ns");
}

TEST(IecLiteral, DatesAndTimesOfDayRoundTrip) {
    Fixture f;
    EXPECT_EQ(f.roundTrip("Main.d", "D#2024-01-15"), "D#2024-01-15");
    EXPECT_EQ(f.roundTrip("Main.d", "DATE#1969-12-31"), "D#1969-12-31"); // before the epoch
    EXPECT_EQ(f.roundTrip("Main.d", "D#2024-02-29"), "D#2024-02-29");
    EXPECT_EQ(f.roundTrip("Main.tod1", "TOD#12:30:00.5"), "TOD#12:30:00.5");
    EXPECT_EQ(f.roundTrip("Main.tod1", "TIME_OF_DAY#23:59:59.999999999"), "TOD#23:59:59.999999999");
    EXPECT_EQ(f.roundTrip("Main.dt1", "DT#2024-01-15-12:30:00"), "DT#2024-01-15-12:30:00");
    EXPECT_EQ(f.roundTrip("Main.dt1", "DT#1960-06-01-00:00:01"), "DT#1960-06-01-00:00:01");
    EXPECT_NE(f.roundTrip("Main.d", "D#2023-02-29").find("does not exist"), std::string::npos);
    EXPECT_NE(f.roundTrip("Main.tod1", "TOD#24:00:00").find("out of range"), std::string::npos);
}

TEST(IecLiteral, BitStringsShowAsPaddedHex) {
    Fixture f;
    EXPECT_EQ(f.roundTrip("Main.w", "16#00FF"), "16#00FF");
    EXPECT_EQ(f.roundTrip("Main.w", "255"), "16#00FF");
    EXPECT_EQ(f.roundTrip("Main.w", "2#1010"), "16#000A");
    EXPECT_EQ(f.roundTrip("Main.b", "16#ff"), "16#FF");
    EXPECT_EQ(f.roundTrip("Main.lw", "16#FFFF_FFFF_FFFF_FFFF"), "16#FFFFFFFFFFFFFFFF");
    EXPECT_EQ(f.roundTrip("Main.w", "WORD#16#8000"), "16#8000");
    EXPECT_NE(f.roundTrip("Main.w", "16#1_0000").find("decode: value 65536 does not fit WORD"), std::string::npos);
    EXPECT_NE(f.roundTrip("Main.w", "-1").find("decode:"), std::string::npos);
}

TEST(IecLiteral, IntegersAtTheirEdges) {
    Fixture f;
    EXPECT_EQ(f.roundTrip("Main.i", "-32768"), "-32768");
    EXPECT_EQ(f.roundTrip("Main.i", "INT#32767"), "32767");
    EXPECT_EQ(f.roundTrip("Main.i", "+7"), "7");
    EXPECT_EQ(f.roundTrip("Main.di", "16#7FFFFFFF"), "2147483647");
    EXPECT_EQ(f.roundTrip("Main.di", "-16#10"), "-16");
    EXPECT_EQ(f.roundTrip("Main.ul", "18446744073709551615"), "18446744073709551615");
    EXPECT_NE(f.roundTrip("Main.i", "32768").find("does not fit INT"), std::string::npos);
    EXPECT_NE(f.roundTrip("Main.i", "1.5").find("parse: '1.5' is not a INT literal; expected an integer"),
              std::string::npos);
    EXPECT_NE(f.roundTrip("Main.i", "T#1s").find("parse: 'T#1s' is not a INT literal"), std::string::npos);
}

TEST(IecLiteral, RealsKeepAPointAndBoolsAreWords) {
    Fixture f;
    EXPECT_EQ(f.roundTrip("Main.r", "-1.5"), "-1.5");
    EXPECT_EQ(f.roundTrip("Main.r", "3"), "3.0");
    EXPECT_EQ(f.roundTrip("Main.r", "0.1"), "0.1"); // shortest text of the float, not 0.100000001
    EXPECT_EQ(f.roundTrip("Main.lr", "1.0E20"), "1.0E+20");
    EXPECT_EQ(f.roundTrip("Main.lr", "LREAL#2.5E-3"), "0.0025");
    EXPECT_NE(f.roundTrip("Main.r", "1.0E39").find("does not fit REAL"), std::string::npos);
    EXPECT_EQ(f.roundTrip("Main.flag", "TRUE"), "TRUE");
    EXPECT_EQ(f.roundTrip("Main.flag", "false"), "FALSE");
    EXPECT_EQ(f.roundTrip("Main.flag", "BOOL#1"), "TRUE");
    EXPECT_NE(f.roundTrip("Main.flag", "yes").find("expected TRUE or FALSE"), std::string::npos);
}

TEST(IecLiteral, StringsUseQuotesAndDollarEscapes) {
    Fixture f;
    EXPECT_EQ(f.roundTrip("Main.s", "'text'"), "'text'");
    EXPECT_EQ(f.roundTrip("Main.s", "'it$'s$N'"), "'it$'s$N'");
    EXPECT_EQ(f.roundTrip("Main.s", "'$$5'"), "'$$5'");
    EXPECT_EQ(f.roundTrip("Main.s", "''"), "''");
    EXPECT_NE(f.roundTrip("Main.s", "'123456789'").find("does not fit STRING[8]"), std::string::npos);
    EXPECT_NE(f.roundTrip("Main.s", "text").find("expected a string in quotes"), std::string::npos);
    EXPECT_EQ(f.roundTrip("Main.ws", "\"wide\""), "\"wide\"");
    EXPECT_EQ(f.roundTrip("Main.ws", "'wide'"), "\"wide\""); // single quotes too, easier in a shell
    EXPECT_EQ(f.roundTrip("Main.ws", "\"$\"q$\"\""), "\"$\"q$\"\"");
    EXPECT_EQ(f.roundTrip("Main.c", "'A'"), "'A'");
}

TEST(IecLiteral, EnumsByQualifiedOrBareNameOrValue) {
    Fixture f;
    EXPECT_EQ(f.roundTrip("Main.mode", "Mode#Auto"), "Mode#Auto");
    EXPECT_EQ(f.roundTrip("Main.mode", "manual"), "Mode#Manual");
    EXPECT_EQ(f.roundTrip("Main.mode", "5"), "Mode#Auto");
    const std::string bad = f.roundTrip("Main.mode", "Mode#Fast");
    EXPECT_NE(bad.find("expected one of Mode#Off, Mode#Manual, Mode#Auto"), std::string::npos) << bad;
    EXPECT_NE(f.roundTrip("Main.mode", "Color#Red").find("is not a value of Mode"), std::string::npos);
    EXPECT_NE(f.roundTrip("Main.mode", "3").find("decode: 3 is not a value of Mode"), std::string::npos);
}

TEST(IecLiteral, CompositesNeedTypedJsonAndRenderAsLists) {
    Fixture f;
    EXPECT_NE(f.roundTrip("Main.arr", "[1, 2]").find("takes a typed JSON value"), std::string::npos);
    rapidjson::Document d;
    d.Parse(R"({"type":"ARRAY","elements":[{"type":"INT","value":1},{"type":"TIME","nanos":2000000}]})");
    EXPECT_EQ(formatIecLiteral(d), "[1, T#2ms]");
    d.Parse(R"({"type":"STRUCT","type_name":"S","fields":{"a":{"type":"BOOL","value":true}}})");
    EXPECT_EQ(formatIecLiteral(d), "(a := TRUE)");
}

TEST(IecLiteral, RenderingAtTheEdgesOfTheRepresentation) {
    rapidjson::Document d;
    d.Parse(R"({"type":"TIME","nanos":-9223372036854775808})");
    EXPECT_EQ(formatIecLiteral(d), "T#-106751d23h47m16s854ms775us808ns");
    d.Parse(R"({"type":"REAL","value":"NaN"})");
    EXPECT_EQ(formatIecLiteral(d), "NaN");
    d.Parse(R"({"type":"LWORD","value":0})");
    EXPECT_EQ(formatIecLiteral(d), "16#0000000000000000");
    d.Parse(R"({"type":"STRING","value":"a\u0001b"})");
    EXPECT_EQ(formatIecLiteral(d), "'a$01b'");
    d.Parse(R"({"type":"ENUM","type_name":"Mode","variant":null,"numeric":9})");
    EXPECT_EQ(formatIecLiteral(d), "Mode#9");
}

TEST(IecLiteral, DirectAddressesParseByTheirWidth) {
    rapidjson::Document typed;
    std::string error;
    ASSERT_TRUE(parseIecLiteral(bytecode::ValueKind::Word, "16#0102", typed, typed.GetAllocator(), error)) << error;
    EXPECT_EQ(typed["value"].GetUint64(), 0x0102u);
    EXPECT_FALSE(parseIecLiteral(bytecode::ValueKind::Bool, "2", typed, typed.GetAllocator(), error));
    EXPECT_NE(error.find("BOOL"), std::string::npos);
}

} // namespace
} // namespace takt::agent
