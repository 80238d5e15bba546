// Variable paths and the typed value codec (PROTOCOLS.md "Typed values").
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "module_builder.h"
#include "takt/engine/path_index.h"
#include "takt/engine/program.h"
#include "takt/engine/values.h"

namespace takt::engine {
namespace {

using testing::ModuleBuilder;
using testing::peek;
using testing::poke;

std::string toJson(const rapidjson::Value& v) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    v.Accept(w);
    return b.GetString();
}

struct Fixture {
    ModuleBuilder b;
    std::uint32_t tBool, tInt, tLint, tUlint, tReal, tTime, tString, tArr, tMat, tStruct, tFb, tEnum, tProg;
    std::uint32_t gCounter, gArr, gMat, gPoint;
    Fixture() {
        tBool = b.elementary(bytecode::ValueKind::Bool, "BOOL", 1);
        tInt = b.elementary(bytecode::ValueKind::Int, "INT", 2);
        tLint = b.elementary(bytecode::ValueKind::LInt, "LINT", 8);
        tUlint = b.elementary(bytecode::ValueKind::ULInt, "ULINT", 8);
        tReal = b.elementary(bytecode::ValueKind::Real, "REAL", 4);
        tTime = b.elementary(bytecode::ValueKind::Time, "TIME", 8);
        bytecode::TypeDesc s;
        s.kind = bytecode::ValueKind::String;
        s.name = "STRING[5]";
        s.stringLength = 5;
        s.size = 6;
        tString = b.add(s);
        tArr = b.array(tInt, {0, 3});
        tMat = b.array(tInt, {1, 2, 1, 3});
        tStruct = b.composite(bytecode::ValueKind::Struct, "Point", {{"x", tInt}, {"flag", tBool}});
        tFb = b.composite(bytecode::ValueKind::FunctionBlock, "TON", {{"IN", tBool}, {"Q", tBool}, {"ET", tTime}});
        bytecode::TypeDesc e;
        e.kind = bytecode::ValueKind::Enum;
        e.name = "Mode";
        e.element = tInt;
        e.size = 2;
        e.enumValues = {{"Off", 0}, {"Auto", 1}, {"Manual", 5}};
        tEnum = b.add(e);
        gCounter = b.global("counter", tInt);
        gArr = b.global("arr", tArr);
        gMat = b.global("m", tMat);
        gPoint = b.global("s", tStruct);
        tProg = b.composite(bytecode::ValueKind::Program, "MainProg",
                            {{"counter", tLint}, {"level", tLint}, {"fb", tFb}, {"mode", tEnum}, {"name", tString}});
        b.program("P1", tProg);
    }
};

TEST(Paths, BareNamePrefersGlobalThenFirstProgram) {
    Fixture f;
    auto m = f.b.build();
    VarRef r;
    std::string err;
    ASSERT_TRUE(resolvePath(*m, "COUNTER", r, err)) << err;
    EXPECT_EQ(r.offset, f.gCounter);
    EXPECT_EQ(r.type, f.tInt);
    ASSERT_TRUE(resolvePath(*m, "level", r, err)) << err;
    EXPECT_EQ(r.offset, m->programs[0].offset + m->types[f.tProg].fields[1].offset);
    ASSERT_TRUE(resolvePath(*m, "p1.Counter", r, err)) << err;
    EXPECT_EQ(r.type, f.tLint); // the qualified path reaches the program's own `counter`
}

TEST(Paths, MembersAndIndices) {
    Fixture f;
    auto m = f.b.build();
    VarRef r;
    std::string err;
    ASSERT_TRUE(resolvePath(*m, "fb.q", r, err)) << err;
    EXPECT_EQ(r.offset, m->programs[0].offset + m->types[f.tProg].fields[2].offset + 8);
    EXPECT_EQ(r.type, f.tBool);
    ASSERT_TRUE(resolvePath(*m, "arr[2]", r, err)) << err;
    EXPECT_EQ(r.offset, f.gArr + 4);
    ASSERT_TRUE(resolvePath(*m, "m[2, 3]", r, err)) << err;
    EXPECT_EQ(r.offset, f.gMat + 2 * (1 * 3 + 2)); // row-major
    ASSERT_TRUE(resolvePath(*m, "s.FLAG", r, err)) << err;
    EXPECT_EQ(r.offset, f.gPoint + 8);
}

TEST(Paths, ErrorsNameTheProblem) {
    Fixture f;
    auto m = f.b.build();
    VarRef r;
    std::string err;
    EXPECT_FALSE(resolvePath(*m, "nosuch", r, err));
    EXPECT_NE(err.find("nosuch"), std::string::npos);
    EXPECT_FALSE(resolvePath(*m, "arr[4]", r, err));
    EXPECT_NE(err.find("out of bounds"), std::string::npos);
    EXPECT_FALSE(resolvePath(*m, "m[1]", r, err));
    EXPECT_FALSE(resolvePath(*m, "s.z", r, err));
    EXPECT_NE(err.find("'z'"), std::string::npos);
    EXPECT_FALSE(resolvePath(*m, "arr[", r, err));
    EXPECT_FALSE(resolvePath(*m, "counter.x", r, err));
}

// The index answers exactly what the search over the Module answers, messages included.
TEST(Paths, IndexAgreesWithTheModuleSearch) {
    Fixture f;
    auto m = f.b.build();
    const PathIndex index(m);
    for (const char* path :
         {"COUNTER", "level", "p1.Counter", "P1.FB.Q", "fb.q", "arr[2]", "m[2, 3]", "s.FLAG", "mode", "name", "nosuch",
          "arr[4]", "m[1]", "s.z", "arr[", "counter.x", "p1", "P1.nosuch", " level "}) {
        VarRef a;
        VarRef b;
        std::string errA;
        std::string errB;
        const bool okA = resolvePath(*m, path, a, errA);
        const bool okB = index.resolve(path, b, errB);
        EXPECT_EQ(okA, okB) << path;
        EXPECT_EQ(errA, errB) << path;
        if (okA && okB) {
            EXPECT_EQ(a.offset, b.offset) << path;
            EXPECT_EQ(a.type, b.type) << path;
            EXPECT_EQ(a.constant, b.constant) << path;
        }
    }
}

// A program of 10,000 variables subscribed as a whole (OPC UA monitored items, var.subscribe
// pages): every path resolves in O(its depth). The search over the Module took 100 million name
// comparisons for the same and seconds in this build.
TEST(Paths, TenThousandPathsOfATenThousandVariableProgramResolveFast) {
    ModuleBuilder b;
    const std::uint32_t tDint = b.elementary(bytecode::ValueKind::DInt, "DINT", 4);
    std::vector<std::pair<std::string, std::uint32_t>> members;
    constexpr int kVariables = 10000;
    for (int i = 0; i < kVariables; ++i) {
        members.emplace_back("v" + std::to_string(i), tDint);
    }
    b.program("Main", b.composite(bytecode::ValueKind::Program, "Main", members));
    auto m = b.build();
    const auto start = std::chrono::steady_clock::now();
    const PathIndex index(m);
    VarRef r;
    std::string err;
    for (int i = 0; i < kVariables; ++i) {
        ASSERT_TRUE(index.resolve("Main.V" + std::to_string(i), r, err)) << err;
        ASSERT_EQ(r.offset, m->programs[0].offset + m->types[m->pous[0].instanceType].fields[i].offset);
    }
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(ms, 500) << "building the index and resolving 10,000 paths took " << ms << " ms";
}

class Codec : public ::testing::Test {
protected:
    Fixture f;
    std::shared_ptr<const bytecode::Module> m = f.b.build();
    std::uint8_t buf[64] = {};
    rapidjson::Document doc;

    bool set(std::uint32_t type, const char* json, std::string& err) {
        rapidjson::Document in;
        in.Parse(json);
        return decodeValue(*m, type, in, buf, err);
    }
    std::string get(std::uint32_t type) {
        rapidjson::Value v;
        encodeValue(*m, type, buf, v, doc.GetAllocator());
        return toJson(v);
    }
};

TEST_F(Codec, SixtyFourBitExtremesAreExact) {
    std::string err;
    ASSERT_TRUE(set(f.tLint, R"({"type":"LINT","value":-9223372036854775808})", err)) << err;
    EXPECT_EQ(peek<std::int64_t>(buf, 0), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(get(f.tLint), R"({"type":"LINT","value":-9223372036854775808})");
    ASSERT_TRUE(set(f.tLint, R"({"type":"LINT","value":9223372036854775807})", err)) << err;
    EXPECT_EQ(get(f.tLint), R"({"type":"LINT","value":9223372036854775807})");
    ASSERT_TRUE(set(f.tUlint, R"({"type":"ULINT","value":18446744073709551615})", err)) << err;
    EXPECT_EQ(peek<std::uint64_t>(buf, 0), std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(get(f.tUlint), R"({"type":"ULINT","value":18446744073709551615})");
    ASSERT_TRUE(set(f.tLint, R"({"type":"LINT","value":9007199254740993})", err)) << err;
    EXPECT_EQ(peek<std::int64_t>(buf, 0), 9007199254740993); // not representable as double
}

TEST_F(Codec, ValuesThatDoNotFitAreErrors) {
    std::string err;
    poke<std::int16_t>(buf, 0, 7);
    EXPECT_FALSE(set(f.tInt, R"({"type":"INT","value":32768})", err));
    EXPECT_NE(err.find("32768"), std::string::npos);
    EXPECT_FALSE(set(f.tInt, R"({"type":"INT","value":1.5})", err));
    EXPECT_FALSE(set(f.tUlint, R"({"type":"ULINT","value":-1})", err));
    EXPECT_FALSE(set(f.tLint, R"({"type":"LINT","value":9223372036854775808})", err));
    EXPECT_FALSE(set(f.tInt, R"({"type":"BOOL","value":true})", err));
    EXPECT_FALSE(set(f.tString, R"({"type":"STRING","value":"toolong"})", err));
    EXPECT_FALSE(set(f.tReal, R"({"type":"REAL","value":1e300})", err));
    EXPECT_EQ(peek<std::int16_t>(buf, 0), 7); // nothing truncated into place
    ASSERT_TRUE(set(f.tInt, R"({"type":"DINT","value":-32768})", err)) << err;
    EXPECT_EQ(peek<std::int16_t>(buf, 0), -32768);
}

TEST_F(Codec, ElementaryShapes) {
    std::string err;
    ASSERT_TRUE(set(f.tBool, R"({"type":"BOOL","value":true})", err)) << err;
    EXPECT_EQ(get(f.tBool), R"({"type":"BOOL","value":true})");
    ASSERT_TRUE(set(f.tReal, R"({"type":"REAL","value":1.5})", err)) << err;
    EXPECT_EQ(get(f.tReal), R"({"type":"REAL","value":1.5})");
    ASSERT_TRUE(set(f.tTime, R"({"type":"TIME","nanos":30000000})", err)) << err;
    EXPECT_EQ(get(f.tTime), R"({"type":"TIME","nanos":30000000})");
    ASSERT_TRUE(set(f.tString, R"({"type":"STRING","value":"hello"})", err)) << err;
    EXPECT_EQ(get(f.tString), R"({"type":"STRING","value":"hello"})");
}

TEST_F(Codec, EnumByVariantOrNumeric) {
    std::string err;
    ASSERT_TRUE(set(f.tEnum, R"({"type":"ENUM","type_name":"Mode","variant":"auto"})", err)) << err;
    EXPECT_EQ(get(f.tEnum), R"({"type":"ENUM","type_name":"Mode","variant":"Auto","numeric":1})");
    ASSERT_TRUE(set(f.tEnum, R"({"type":"ENUM","numeric":5})", err)) << err;
    EXPECT_EQ(get(f.tEnum), R"({"type":"ENUM","type_name":"Mode","variant":"Manual","numeric":5})");
    EXPECT_FALSE(set(f.tEnum, R"({"type":"ENUM","numeric":2})", err));
}

TEST_F(Codec, ArraysAndStructs) {
    std::string err;
    ASSERT_TRUE(set(
        f.tArr,
        R"({"type":"ARRAY","dimensions":[[0,3]],"elements":[{"type":"INT","value":1},{"type":"INT","value":2},{"type":"INT","value":3},{"type":"INT","value":4}]})",
        err))
        << err;
    EXPECT_EQ(peek<std::int16_t>(buf, 6), 4);
    EXPECT_EQ(
        get(f.tArr),
        R"({"type":"ARRAY","dimensions":[[0,3]],"elements":[{"type":"INT","value":1},{"type":"INT","value":2},{"type":"INT","value":3},{"type":"INT","value":4}]})");
    EXPECT_FALSE(set(f.tArr, R"({"type":"ARRAY","elements":[{"type":"INT","value":1}]})", err));
    std::fill(std::begin(buf), std::end(buf), 0);
    ASSERT_TRUE(
        set(f.tStruct, R"({"type":"STRUCT","type_name":"Point","fields":{"flag":{"type":"BOOL","value":true}}})", err))
        << err;
    EXPECT_EQ(
        get(f.tStruct),
        R"({"type":"STRUCT","type_name":"Point","fields":{"x":{"type":"INT","value":0},"flag":{"type":"BOOL","value":true}}})");
    EXPECT_FALSE(set(f.tStruct, R"({"type":"STRUCT","fields":{"nope":{"type":"BOOL","value":true}}})", err));
}

TEST(Elementary, DirectAddressKinds) {
    std::uint8_t b[8] = {0x34, 0x12};
    rapidjson::Document d;
    rapidjson::Value v;
    encodeElementary(bytecode::ValueKind::Word, b, v, d.GetAllocator());
    EXPECT_EQ(toJson(v), R"({"type":"WORD","value":4660})");
    rapidjson::Document in;
    in.Parse(R"({"type":"BYTE","value":256})");
    std::string err;
    EXPECT_FALSE(decodeElementary(bytecode::ValueKind::Byte, 1, 0, in, b, err));
}

// JSON has no NaN or infinities: they travel as strings both ways, and the output stays JSON.
TEST(Elementary, NonFiniteRealsAreStrings) {
    rapidjson::Document d;
    const struct {
        double value;
        const char* json;
    } cases[] = {{std::numeric_limits<double>::quiet_NaN(), R"({"type":"LREAL","value":"NaN"})"},
                 {std::numeric_limits<double>::infinity(), R"({"type":"LREAL","value":"Infinity"})"},
                 {-std::numeric_limits<double>::infinity(), R"({"type":"LREAL","value":"-Infinity"})"}};
    for (const auto& c : cases) {
        std::uint8_t b[8];
        std::memcpy(b, &c.value, 8);
        rapidjson::Value v;
        encodeElementary(bytecode::ValueKind::LReal, b, v, d.GetAllocator());
        EXPECT_EQ(toJson(v), c.json);
        std::uint8_t back[4] = {};
        std::string err;
        ASSERT_TRUE(decodeElementary(bytecode::ValueKind::Real, 4, 0, v, back, err)) << err;
        float f = 0;
        std::memcpy(&f, back, 4);
        EXPECT_EQ(std::isnan(f), std::isnan(c.value));
        EXPECT_EQ(std::isinf(f) && (f > 0) == (c.value > 0), std::isinf(c.value));
    }
    rapidjson::Document in;
    in.Parse(R"({"type":"REAL","value":"nan"})");
    std::uint8_t b[4] = {};
    std::string err;
    EXPECT_FALSE(decodeElementary(bytecode::ValueKind::Real, 4, 0, in, b, err));
}

} // namespace
} // namespace takt::engine
