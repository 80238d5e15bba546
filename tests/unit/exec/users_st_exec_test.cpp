// Structured Text from third-party projects (OpenPLC programs, OSCAT, matiec, truST) that
// takt accepts beside CODESYS's own: compiled and run cycle by cycle, with the values worked
// out by hand from the documented rules (docs/language-notes.md, docs/dialects.md).
#include <gtest/gtest.h>

#include "st_runner.h"

namespace takt::compiler {
namespace {

using Runner = testing::StRunner;

// `F(EN := c)` is a formal call without further arguments: the inputs keep their initial
// values, EN FALSE skips it.
TEST(UsersSt, CallWithOnlyEnRunsWithTheInitialInputs) {
    Runner r(R"(
FUNCTION Scaled : INT
VAR_INPUT x : INT := 7; k : INT := 3; END_VAR
    Scaled := x * k;
END_FUNCTION
FUNCTION_BLOCK Count
VAR_INPUT step : INT := 2; END_VAR
VAR_OUTPUT n : INT; END_VAR
    n := n + step;
END_FUNCTION_BLOCK
PROGRAM Main
VAR c : BOOL; y : INT := -1; ok : BOOL; cnt : Count; END_VAR
    y := Scaled(EN := c, ENO => ok);
    cnt(EN := c);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.y"), -1);
    EXPECT_FALSE(r.get<bool>("Main.ok"));
    EXPECT_EQ(r.get<std::int16_t>("Main.cnt.n"), 0);
    r.set<bool>("Main.c", true);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.y"), 21);
    EXPECT_TRUE(r.get<bool>("Main.ok"));
    EXPECT_EQ(r.get<std::int16_t>("Main.cnt.n"), 2);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.cnt.n"), 4);
}

// SQRT, SIN … of an integer (W1016): converted to REAL when it is at most 16 bits wide and the
// context does not want LREAL, else to LREAL; the function computes in that type.
TEST(UsersSt, RealFunctionsOfIntegersComputeInRealOrLreal) {
    Runner r(R"(
PROGRAM Main
VAR
    i : INT := 2; n : INT := 16; d : DINT := 1000000; big : DINT := 2; l : LINT := 4;
    r16 : REAL; rInt : REAL; lInt : LREAL; rDint : LREAL; cosZero : REAL; lnOne : LREAL; sqL : LREAL;
END_VAR
    r16 := SQRT(n);
    rInt := SQRT(i);
    lInt := SQRT(i);
    rDint := SQRT(big);
    cosZero := COS(d - d);
    lnOne := LN(IN := d / d);
    sqL := SQRT(l);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<float>("Main.r16"), 4.0F);
    EXPECT_EQ(r.get<float>("Main.rInt"), 1.41421353816986083984375F); // sqrtf(2.0f)
    EXPECT_EQ(r.get<double>("Main.lInt"), 1.4142135623730951);        // sqrt(2.0): LREAL expected
    EXPECT_EQ(r.get<double>("Main.rDint"), 1.4142135623730951);       // a DINT computes in LREAL
    EXPECT_EQ(r.get<float>("Main.cosZero"), 1.0F);
    EXPECT_EQ(r.get<double>("Main.lnOne"), 0.0);
    EXPECT_EQ(r.get<double>("Main.sqL"), 2.0);
}

// MULTIME and DIVTIME are MUL_TIME and DIV_TIME.
TEST(UsersSt, MultimeAndDivtime) {
    Runner r(R"(
PROGRAM Main
VAR a : TIME; b : TIME; c : TIME; k : INT := 3; END_VAR
    a := MULTIME(T#100ms, k);
    b := DIVTIME(T#1s, 4);
    c := MULTIME(IN1 := T#1s, IN2 := 1.5);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int64_t>("Main.a"), 300'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.b"), 250'000'000);
    EXPECT_EQ(r.get<std::int64_t>("Main.c"), 1'500'000'000);
}

const bytecode::IoBinding* binding(const Runner& r, std::string_view address) {
    for (const auto& b : r.module().io) {
        if (b.address == address) {
            return &b;
        }
    }
    ADD_FAILURE() << "no I/O binding " << address;
    return nullptr;
}

// `%IX1` is `%IX1.0`; `%IW0.0` and `%ID1.0` (OpenPLC's EtherCAT mapping) are `%IW0` and `%ID1`;
// a DWORD at `%ML50` takes 4 bytes from byte 400 (word addressing: LWORD 50 starts there).
TEST(UsersSt, ShortBitHierarchicalAndWiderAddresses) {
    Runner r(R"(
PROGRAM Main
VAR
    button AT %IX1 : BOOL;
    status AT %IW0.0 : UINT;
    position AT %ID1.0 : DINT;
    wide AT %ML50 : DWORD;
    seen : BOOL; st : UINT; pos : DINT; count : DWORD;
END_VAR
    seen := button;
    st := status;
    pos := position;
    count := wide;
    wide := count + 1;
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    const auto* bit = binding(r, "%IX1.0");
    const auto* word = binding(r, "%IW0");
    const auto* dword = binding(r, "%ID1");
    const auto* lword = binding(r, "%ML50");
    ASSERT_TRUE(bit != nullptr && word != nullptr && dword != nullptr && lword != nullptr);
    EXPECT_EQ(bit->byteOffset, 1U);
    EXPECT_EQ(bit->bit, 0);
    EXPECT_EQ(bit->size, 0U);
    EXPECT_EQ(word->byteOffset, 0U);
    EXPECT_EQ(word->size, 2U);
    EXPECT_EQ(dword->byteOffset, 4U);
    EXPECT_EQ(dword->size, 4U);
    EXPECT_EQ(lword->byteOffset, 400U);
    EXPECT_EQ(lword->size, 4U); // the DWORD's own size, not the LWORD's
    r.setIo<bool>("%IX1.0", true);
    r.setIo<std::uint16_t>("%IW0", 513);
    r.setIo<std::int32_t>("%ID1", -7);
    r.setIo<std::uint32_t>("%ML50", 41);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_TRUE(r.get<bool>("Main.seen"));
    EXPECT_EQ(r.get<std::uint16_t>("Main.st"), 513);
    EXPECT_EQ(r.get<std::int32_t>("Main.pos"), -7);
    EXPECT_EQ(r.get<std::uint32_t>("Main.count"), 41U);
    EXPECT_EQ(r.io<std::uint32_t>("%ML50"), 42U);
}

// OpenPLC's library blocks, cycle by cycle. The values follow the formulas of
// docs/language-notes.md ("OpenPLC's library blocks"), with inputs chosen so every step is exact
// in REAL: CYCLE T#500ms is 0.5 s, T#250ms of T#1s a quarter.
TEST(UsersSt, OpenPlcLibraryBlocksCycleByCycle) {
    Runner r(R"(
PROGRAM Main
VAR
    run : BOOL; r1 : BOOL; x : REAL; hx : REAL; pv : REAL; autoMode : BOOL; claim : BOOL; release : BOOL;
    integ : INTEGRAL; deriv : DERIVATIVE; hyst : HYSTERESIS; ctl : PID; ramp1 : RAMP; sem : SEMA;
END_VAR
    integ(RUN := run, R1 := r1, XIN := 2.0, X0 := 1.0, CYCLE := T#500ms);
    deriv(RUN := run, XIN := x, CYCLE := T#500ms);
    hyst(XIN1 := hx, XIN2 := 10.0, EPS := 2.0);
    ctl(AUTO := autoMode, PV := pv, SP := 0.0, X0 := 3.0, KP := 2.0, TR := 1.0, TD := 0.5, CYCLE := T#500ms);
    ramp1(RUN := run, X0 := 0.0, X1 := 10.0, TR := T#1s, CYCLE := T#250ms);
    sem(CLAIM := claim, RELEASE := release);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    struct Row {
        bool run, r1;
        float x, hx, pv;
        bool autoMode, claim, release;
        // expected
        bool integQ;
        float integOut, derivOut;
        bool hystQ;
        float pidOut;
        bool rampBusy;
        float rampOut;
        bool semBusy;
    };
    const Row rows[] = {
        // R1: XOUT = X0; RUN FALSE: DERIVATIVE 0, its samples = XIN (1); 11 is not above 12: FALSE;
        // PID manual: ITERM = TR (X0 - ERROR) = 2, XOUT = 2 (1 + 2) = KP * X0 = 6; RAMP at X0; CLAIM.
        {false, true, 1.0F, 11.0F, 1.0F, false, true, false, false, 1.0F, 0.0F, false, 6.0F, false, 0.0F, true},
        // 1 + 2 * 0.5 = 2; (3 (6 - 1) + 1 - 1) / 5 = 3; 12.5 > 12: TRUE; PID auto, ERROR 1: ITERM
        // 2 + 1 * 0.5 = 2.5, DTERM 3 (1 - 1) / 5 = 0: 2 (1 + 2.5 + 0) = 7; RAMP at T = 0: 0, BUSY.
        {true, false, 6.0F, 12.5F, 1.0F, true, false, false, true, 2.0F, 3.0F, true, 7.0F, true, 0.0F, true},
        // 3; (3 (11 - 1) + 6 - 1) / 5 = 7; 9 is not below 8: TRUE; ERROR 6: ITERM 2.5 + 3 = 5.5, DTERM
        // (3 (6 - 1) + 1 - 1) / 5 = 3: 2 (6 + 5.5 + 3 * 0.5) = 26; RAMP 10 * 0.25 / 1 = 2.5.
        {true, false, 11.0F, 9.0F, 6.0F, true, false, false, true, 3.0F, 7.0F, true, 26.0F, true, 2.5F, true},
        // 4; (3 (16 - 1) + 11 - 6) / 5 = 10; 7.5 < 8: FALSE; ERROR 6: ITERM 8.5, DTERM (3 (6 - 1) + 6
        // - 1) / 5 = 4: 2 (6 + 8.5 + 2) = 33; RAMP 5; RELEASE frees SEMA.
        {true, false, 16.0F, 7.5F, 6.0F, true, false, true, true, 4.0F, 10.0F, false, 33.0F, true, 5.0F, false},
        // RUN FALSE holds INTEGRAL at 4, DERIVATIVE 0 (samples 9); 12 is not above 12: FALSE; AUTO
        // FALSE: KP * X0 = 6; RAMP back to X0 = 0; CLAIM with RELEASE: claimed.
        {false, false, 9.0F, 12.0F, 6.0F, false, true, true, true, 4.0F, 0.0F, false, 6.0F, false, 0.0F, true},
        // 5; (3 (9 - 9) + 9 - 9) / 5 = 0; 12.1 > 12: TRUE; RAMP restarts from 0 at T = 0.
        {true, false, 9.0F, 12.1F, 6.0F, false, false, false, true, 5.0F, 0.0F, true, 6.0F, true, 0.0F, true},
    };
    int cycle = 0;
    for (const Row& row : rows) {
        ++cycle;
        r.set<bool>("Main.run", row.run);
        r.set<bool>("Main.r1", row.r1);
        r.set<float>("Main.x", row.x);
        r.set<float>("Main.hx", row.hx);
        r.set<float>("Main.pv", row.pv);
        r.set<bool>("Main.autoMode", row.autoMode);
        r.set<bool>("Main.claim", row.claim);
        r.set<bool>("Main.release", row.release);
        ASSERT_EQ(r.cycle(), vm::Trap::None) << "cycle " << cycle;
        EXPECT_EQ(r.get<bool>("Main.integ.Q"), row.integQ) << "cycle " << cycle;
        EXPECT_EQ(r.get<float>("Main.integ.XOUT"), row.integOut) << "cycle " << cycle;
        EXPECT_EQ(r.get<float>("Main.deriv.XOUT"), row.derivOut) << "cycle " << cycle;
        EXPECT_EQ(r.get<bool>("Main.hyst.Q"), row.hystQ) << "cycle " << cycle;
        EXPECT_EQ(r.get<float>("Main.ctl.XOUT"), row.pidOut) << "cycle " << cycle;
        EXPECT_EQ(r.get<bool>("Main.ramp1.BUSY"), row.rampBusy) << "cycle " << cycle;
        EXPECT_EQ(r.get<float>("Main.ramp1.XOUT"), row.rampOut) << "cycle " << cycle;
        EXPECT_EQ(r.get<bool>("Main.sem.BUSY"), row.semBusy) << "cycle " << cycle;
    }
    // The ramp goes on from T = 0.25 s and reaches X1 once T reaches TR.
    const float ramp[] = {2.5F, 5.0F, 7.5F, 10.0F};
    const bool busy[] = {true, true, true, false};
    for (int k = 0; k < 4; ++k) {
        ASSERT_EQ(r.cycle(), vm::Trap::None);
        EXPECT_EQ(r.get<float>("Main.ramp1.XOUT"), ramp[k]) << k;
        EXPECT_EQ(r.get<bool>("Main.ramp1.BUSY"), busy[k]) << k;
    }
}

// SCL's `#count` is the FB's own `count`; DIFU and DIFD are R_TRIG and F_TRIG, with no profile.
TEST(UsersSt, SclLocalsAndDifuDifd) {
    Runner r(R"(
FUNCTION_BLOCK Edges
VAR_INPUT clk : BOOL; END_VAR
VAR_OUTPUT rises : INT; falls : INT; END_VAR
VAR up : DIFU; down : DIFD; END_VAR
    #up(CLK := #clk);
    #down(CLK := #clk);
    IF #up.Q THEN #rises := #rises + 1; END_IF;
    IF down.Q THEN falls := falls + 1; END_IF;
END_FUNCTION_BLOCK
PROGRAM Main
VAR x : BOOL; e : Edges; END_VAR
    e(clk := x);
END_PROGRAM
)");
    ASSERT_TRUE(r.ok) << r.errors();
    // clk: F (DIFD fires on a first FALSE, as F_TRIG), T, T, F, T.
    const bool clk[] = {false, true, true, false, true};
    const std::int16_t rises[] = {0, 1, 1, 1, 2};
    const std::int16_t falls[] = {1, 1, 1, 2, 2};
    for (int k = 0; k < 5; ++k) {
        r.set<bool>("Main.x", clk[k]);
        ASSERT_EQ(r.cycle(), vm::Trap::None);
        EXPECT_EQ(r.get<std::int16_t>("Main.e.rises"), rises[k]) << k;
        EXPECT_EQ(r.get<std::int16_t>("Main.e.falls"), falls[k]) << k;
    }
}

// Dialect openplc (W1019): a program sets an instance's private VAR as matiec lets it; the FB's
// next call starts from the written value. Flat comments (W1018) leave `x := 1` code.
TEST(UsersSt, OpenplcWritesAnFbVarFromOutside) {
    const char* text = R"(
FUNCTION_BLOCK Acc
VAR sum : INT; END_VAR
VAR_OUTPUT out : INT; END_VAR
    sum := sum + 1;
    out := sum;
END_FUNCTION_BLOCK
PROGRAM Main
VAR a : Acc; x : INT; preset : BOOL; END_VAR
    (* (* nested in CODESYS, closed here *)
    x := 1;
    IF preset THEN a.sum := 100; END_IF;
    a();
END_PROGRAM
)";
    Runner r(text, {}, Dialect::Openplc);
    ASSERT_TRUE(r.ok) << r.errors();
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.x"), 1);
    EXPECT_EQ(r.get<std::int16_t>("Main.a.out"), 1);
    r.set<bool>("Main.preset", true);
    ASSERT_EQ(r.cycle(), vm::Trap::None);
    EXPECT_EQ(r.get<std::int16_t>("Main.a.out"), 101);
    EXPECT_FALSE(Runner(text).ok) << "the default dialect refuses both";
}

} // namespace
} // namespace takt::compiler
