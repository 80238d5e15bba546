// The dialect setting: runtime.toml [build] dialect and the W1xxx leniencies it governs. Each
// leniency compiles with a warning by default and is an error (same code) under "iec".
#include <string>

#include <gtest/gtest.h>

#include "takt/compiler/project.h"

namespace takt::compiler {
namespace {

struct Checked {
    std::string diags; // "W1001@11:5(warning) …" in report order
    std::size_t errors = 0;
    std::size_t warnings = 0;
};

Checked check(const std::string& text, Dialect dialect) {
    BuildOptions build;
    build.dialect = dialect;
    Project p = checkSources({{"main.st", text}}, build);
    Checked out;
    for (const Diagnostic& d : p.diagnostics) {
        const LineCol lc = p.sources->lineCol(d.span);
        out.diags += (out.diags.empty() ? "" : " ") + std::string(diagInfo(d.code).code) + "@" +
                     std::to_string(lc.line) + ":" + std::to_string(lc.column) + "(" +
                     std::string(severityName(d.severity)) + ")";
    }
    out.errors = p.errorCount;
    out.warnings = p.warningCount;
    return out;
}

// Expects `code@where` as a warning by default and as an error under "iec", and nothing else.
void expectLeniency(const std::string& text, const std::string& at) {
    const Checked lenient = check(text, Dialect::Codesys);
    EXPECT_EQ(lenient.diags, at + "(warning)");
    EXPECT_EQ(lenient.errors, 0u);
    const Checked strict = check(text, Dialect::Iec);
    EXPECT_EQ(strict.diags, at + "(error)");
    EXPECT_EQ(strict.errors, 1u);
    EXPECT_EQ(strict.warnings, 0u);
}

TEST(DialectConfig, ReadsDialectFromBuildTable) {
    BuildOptions opts;
    EXPECT_EQ(opts.dialect, Dialect::Codesys);
    EXPECT_TRUE(readBuildOptions("[build]\ndialect = \"iec\"\n", "runtime.toml", opts).empty());
    EXPECT_EQ(opts.dialect, Dialect::Iec);
    EXPECT_TRUE(readBuildOptions("[build]\ndialect = \"codesys\"\n", "runtime.toml", opts).empty());
    EXPECT_EQ(opts.dialect, Dialect::Codesys);
}

TEST(DialectConfig, UnknownDialectNamesFileLineColumnAndKey) {
    BuildOptions opts;
    auto errors = readBuildOptions("[build]\noverflow = \"wrap\"\ndialect = \"twincat\"\n", "runtime.toml", opts);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].path, "runtime.toml");
    EXPECT_EQ(errors[0].line, 3u);
    EXPECT_EQ(errors[0].column, 11u);
    EXPECT_EQ(errors[0].key, "build.dialect");
    EXPECT_EQ(renderConfigError(errors[0]), "runtime.toml:3:11: error: build.dialect: unknown value \"twincat\" "
                                            "(expected \"codesys\", \"iec\" or \"openplc\")");
    EXPECT_EQ(opts.dialect, Dialect::Codesys); // unchanged
}

TEST(DialectLeniency, W1001WriteOwnInput) {
    expectLeniency(R"(FUNCTION Clamp : INT
VAR_INPUT
    x : INT;
END_VAR
    IF x > 100 THEN
        x := 100;
    END_IF;
    Clamp := x;
END_FUNCTION
PROGRAM Main
VAR
    r : INT;
END_VAR
    r := Clamp(150);
END_PROGRAM
)",
                   "W1001@6:9");
}

TEST(DialectLeniency, W1002ReadFbInternalVar) {
    expectLeniency(R"(FUNCTION_BLOCK Acc
VAR
    sum : INT;
END_VAR
    sum := sum + 1;
END_FUNCTION_BLOCK
PROGRAM Main
VAR
    a : Acc;
    r : INT;
END_VAR
    a();
    r := a.sum;
END_PROGRAM
)",
                   "W1002@13:12");
}

TEST(DialectLeniency, W1002ReadFbInOut) {
    expectLeniency(R"(FUNCTION_BLOCK Inc
VAR_IN_OUT
    v : INT;
END_VAR
    v := v + 1;
END_FUNCTION_BLOCK
PROGRAM Main
VAR
    a : Inc;
    x : INT;
    r : INT;
END_VAR
    a(v := x);
    r := a.v;
END_PROGRAM
)",
                   "W1002@14:12");
}

TEST(DialectLeniency, FbInternalIsNeverWritableFromOutside) {
    // Reading is the leniency; writing another instance's VAR stays an error in both dialects.
    const std::string text = R"(FUNCTION_BLOCK Acc
VAR
    sum : INT;
END_VAR
    sum := sum + 1;
END_FUNCTION_BLOCK
PROGRAM Main
VAR
    a : Acc;
END_VAR
    a.sum := 5;
    a();
END_PROGRAM
)";
    EXPECT_EQ(check(text, Dialect::Codesys).diags, "E0403@11:5(error) W1002@11:7(warning)");
    EXPECT_EQ(check(text, Dialect::Iec).diags, "E0403@11:5(error) W1002@11:7(error)");
}

TEST(DialectLeniency, W1003WriteFbOutput) {
    expectLeniency(R"(PROGRAM Main
VAR
    t : TON;
END_VAR
    t(IN := TRUE, PT := T#1s);
    t.Q := FALSE;
END_PROGRAM
)",
                   "W1003@6:5");
}

TEST(DialectLeniency, W1004ArithmeticOnBitStrings) {
    expectLeniency("PROGRAM Main\nVAR\n    dw : DWORD;\nEND_VAR\n    dw := dw - 1;\nEND_PROGRAM\n", "W1004@5:11");
}

TEST(DialectLeniency, W1005BitwiseOnIntegers) {
    expectLeniency("PROGRAM Main\nVAR\n    i : INT;\nEND_VAR\n    i := i AND 1;\nEND_PROGRAM\n", "W1005@5:10");
    expectLeniency("PROGRAM Main\nVAR\n    i : INT;\nEND_VAR\n    i := NOT i;\nEND_PROGRAM\n", "W1005@5:10");
}

TEST(DialectLeniency, W1006IntegerMixedWithBitString) {
    expectLeniency(
        "PROGRAM Main\nVAR\n    w : WORD;\n    i : INT;\n    d : DINT;\nEND_VAR\n    d := w + i;\nEND_PROGRAM\n",
        "W1006@7:10");
}

TEST(DialectLeniency, W1007BitStringIndexAndSelector) {
    expectLeniency("PROGRAM Main\nVAR\n    a : ARRAY[0..3] OF INT;\n    b : BYTE;\n    i : INT;\nEND_VAR\n"
                   "    i := a[b];\nEND_PROGRAM\n",
                   "W1007@7:12");
    expectLeniency("PROGRAM Main\nVAR\n    w : WORD;\n    i : INT;\nEND_VAR\n    CASE w OF\n        1: i := 2;\n"
                   "    END_CASE;\nEND_PROGRAM\n",
                   "W1007@6:10");
}

TEST(DialectLeniency, W1008BitAccessOnInteger) {
    expectLeniency("PROGRAM Main\nVAR\n    i : INT;\n    b : BOOL;\nEND_VAR\n    b := i.3;\nEND_PROGRAM\n",
                   "W1008@6:10");
    // The bit number is still checked against the width.
    EXPECT_EQ(check("PROGRAM Main\nVAR\n    i : INT;\n    b : BOOL;\nEND_VAR\n    b := i.16;\nEND_PROGRAM\n",
                    Dialect::Codesys)
                  .diags,
              "E0212@6:10(error) W1008@6:10(warning)");
}

TEST(DialectLeniency, W1009CodesysFbParameterNamesTheIecOne) {
    const std::string text = "PROGRAM Main\nVAR\n    c : CTU;\n    x : BOOL;\nEND_VAR\n"
                             "    c(CU := x, RESET := x, PV := 3);\nEND_PROGRAM\n";
    expectLeniency(text, "W1009@6:16");
    BuildOptions build;
    build.dialect = Dialect::Iec;
    Project p = checkSources({{"main.st", text}}, build);
    ASSERT_EQ(p.diagnostics.size(), 1u);
    EXPECT_NE(p.diagnostics[0].message.find("IEC 61131-3 calls it 'R'"), std::string::npos) << p.diagnostics[0].message;
}

TEST(DialectLeniency, W1009OnlyForTheStandardFbs) {
    // A user FB has only the parameters it declares.
    const std::string text = "FUNCTION_BLOCK Counter\nVAR_INPUT\n    R : BOOL;\nEND_VAR\nEND_FUNCTION_BLOCK\n"
                             "PROGRAM Main\nVAR\n    c : Counter;\nEND_VAR\n    c(RESET := TRUE);\nEND_PROGRAM\n";
    EXPECT_EQ(check(text, Dialect::Codesys).diags, "E0302@10:7(error)");
}

TEST(DialectLeniency, W1010ImplicitNarrowing) {
    expectLeniency("PROGRAM Main\nVAR\n    d : DINT;\n    i : INT;\nEND_VAR\n    i := d;\nEND_PROGRAM\n", "W1010@6:10");
    expectLeniency("PROGRAM Main\nVAR\n    d : DINT;\n    b : BYTE;\nEND_VAR\n    b := INT_TO_BYTE(d);\nEND_PROGRAM\n",
                   "W1010@6:22");
    // BOOL and TIME keep needing an explicit conversion.
    EXPECT_EQ(
        check("PROGRAM Main\nVAR\n    i : INT;\n    b : BOOL;\nEND_VAR\n    b := i;\nEND_PROGRAM\n", Dialect::Codesys)
            .diags,
        "E0202@6:10(error)");
}

TEST(DialectLeniency, W1011UserFunctionNamedLikeStandardWins) {
    expectLeniency("FUNCTION MAX : INT\nVAR_INPUT\n    a : INT;\nEND_VAR\n    MAX := a;\nEND_FUNCTION\n"
                   "PROGRAM Main\nVAR\n    i : INT;\nEND_VAR\n    i := MAX(3);\nEND_PROGRAM\n",
                   "W1011@1:10");
    expectLeniency("PROGRAM Main\nVAR\n    TP : BOOL;\n    x : BOOL;\nEND_VAR\n    x := TP;\nEND_PROGRAM\n",
                   "W1011@3:5");
    // A user FUNCTION_BLOCK named like a standard FB replaces it too.
    expectLeniency("FUNCTION_BLOCK CTU\nVAR_INPUT\n    CU : BOOL;\nEND_VAR\nEND_FUNCTION_BLOCK\n"
                   "PROGRAM Main\nVAR\n    c : CTU;\nEND_VAR\n    c(CU := TRUE);\nEND_PROGRAM\n",
                   "W1011@1:16");
}

TEST(DialectLeniency, W1012ShiftOnSignedInteger) {
    expectLeniency("PROGRAM Main\nVAR\n    i : INT;\nEND_VAR\n    i := SHR(i, 2);\nEND_PROGRAM\n", "W1012@5:14");
    // The result keeps the signed type: no W1010 for assigning it back.
    expectLeniency("PROGRAM Main\nVAR\n    d : DINT;\nEND_VAR\n    d := ROL(IN := d, N := 1);\nEND_PROGRAM\n",
                   "W1012@5:20");
}

TEST(DialectLeniency, W1013ConfigLocatesPlainVariable) {
    expectLeniency("PROGRAM Main\nVAR\n    x : BOOL;\n    y : BOOL;\nEND_VAR\n    y := x;\nEND_PROGRAM\n"
                   "CONFIGURATION C\nRESOURCE R ON PLC\nTASK T (INTERVAL := T#10ms, PRIORITY := 1);\n"
                   "PROGRAM P WITH T : Main;\nEND_RESOURCE\nVAR_CONFIG\n    R.P.x AT %IX0.0 : BOOL;\nEND_VAR\n"
                   "END_CONFIGURATION\n",
                   "W1013@14:5");
}

TEST(DialectLeniency, W1016RealFunctionOnInteger) {
    expectLeniency("PROGRAM Main\nVAR\n    i : INT;\n    r : REAL;\nEND_VAR\n    r := SQRT(i);\nEND_PROGRAM\n",
                   "W1016@6:15");
    expectLeniency("PROGRAM Main\nVAR\n    d : DINT;\n    x : LREAL;\nEND_VAR\n    x := SIN(IN := d);\nEND_PROGRAM\n",
                   "W1016@6:20");
    // A DINT computes in LREAL, which then narrows into a REAL (W1010 as for any LREAL).
    EXPECT_EQ(check("PROGRAM Main\nVAR\n    d : DINT;\n    r : REAL;\nEND_VAR\n    r := COS(d);\nEND_PROGRAM\n",
                    Dialect::Codesys)
                  .diags,
              "W1010@6:10(warning) W1016@6:14(warning)");
    // Bit strings, BOOL and TIME are no numbers: rejected as before, also by CODESYS.
    for (const char* type : {"WORD", "BOOL", "TIME"}) {
        EXPECT_EQ(check(std::string("PROGRAM Main\nVAR\n    v : ") + type +
                            ";\n    r : REAL;\nEND_VAR\n    r := SQRT(v);\nEND_PROGRAM\n",
                        Dialect::Codesys)
                      .diags,
                  "E0306@6:10(error)")
            << type;
    }
    // A REAL argument is standard and never warned.
    EXPECT_EQ(check("PROGRAM Main\nVAR\n    r : REAL;\nEND_VAR\n    r := SQRT(r);\nEND_PROGRAM\n", Dialect::Iec).diags,
              "");
}

// MULTIME and DIVTIME: edition 1's names of MUL_TIME and DIV_TIME (matiec, OpenPLC), on TIME only.
TEST(DialectLeniency, OlderTimeFunctionNames) {
    EXPECT_EQ(check("PROGRAM Main\nVAR\n    t : TIME;\nEND_VAR\n    t := MULTIME(t, 2);\n    t := DIVTIME(IN1 := t, "
                    "IN2 := 1.5);\nEND_PROGRAM\n",
                    Dialect::Iec)
                  .diags,
              "");
    EXPECT_EQ(check("PROGRAM Main\nVAR\n    t : LTIME;\n    i : INT;\nEND_VAR\n    t := MULTIME(t, 2);\n    i := "
                    "DIVTIME(i, 2);\nEND_PROGRAM\n",
                    Dialect::Codesys)
                  .diags,
              "E0306@6:10(error) E0306@7:10(error)");
}

TEST(DialectLeniency, W1017AddressSizeDiffers) {
    expectLeniency("PROGRAM Main\nVAR\n    d AT %ML50 : DWORD;\nEND_VAR\n    d := 16#FF;\nEND_PROGRAM\n", "W1017@3:10");
    expectLeniency("PROGRAM Main\nVAR\n    r AT %MW2 : REAL;\nEND_VAR\n    r := 1.5;\nEND_PROGRAM\n", "W1017@3:10");
}

// OpenPLC's library blocks need no declaration, and their ST bodies report nothing to the user
// in either dialect; a project's own PID replaces the standard one (W1011) as for TON.
TEST(OpenPlcLibrary, BlocksCompileWithoutDiagnostics) {
    const std::string text =
        "PROGRAM Main\nVAR\n    p : PID;\n    r : RAMP;\n    i : INTEGRAL;\n    d : DERIVATIVE;\n"
        "    h : HYSTERESIS;\n    s : SEMA;\n    x : REAL;\n    b : BOOL;\nEND_VAR\n"
        "    p(AUTO := b, PV := x, SP := 1.0, KP := 2.0, TR := 1.0, TD := 0.0, CYCLE := T#10ms);\n"
        "    r(RUN := b, X0 := 0.0, X1 := 5.0, TR := T#1s, CYCLE := T#10ms);\n"
        "    i(RUN := b, XIN := x, CYCLE := T#10ms);\n    d(RUN := b, XIN := x, CYCLE := T#10ms);\n"
        "    h(XIN1 := x, XIN2 := 1.0, EPS := 0.5);\n    s(CLAIM := b);\n"
        "    x := p.XOUT + r.XOUT + i.XOUT + d.XOUT;\n    b := h.Q AND s.BUSY AND r.BUSY AND i.Q;\n"
        "END_PROGRAM\n";
    EXPECT_EQ(check(text, Dialect::Codesys).diags, "");
    EXPECT_EQ(check(text, Dialect::Iec).diags, "");
    // Not IEC names: a project's own Ramp or PID replaces the library block silently, also
    // under iec, and calls it with its own parameters.
    for (const Dialect d : {Dialect::Codesys, Dialect::Iec}) {
        EXPECT_EQ(check("FUNCTION_BLOCK Pid\nVAR_INPUT\n    Setpoint : REAL;\nEND_VAR\nEND_FUNCTION_BLOCK\n"
                        "PROGRAM Main\nVAR\n    p : PID;\nEND_VAR\n    p(Setpoint := 1.0);\nEND_PROGRAM\n",
                        d)
                      .diags,
                  "");
    }
    // An IEC name still warns.
    expectLeniency("FUNCTION_BLOCK TON\nVAR_INPUT\n    SP : REAL;\nEND_VAR\nEND_FUNCTION_BLOCK\n"
                   "PROGRAM Main\nVAR\n    p : TON;\nEND_VAR\n    p(SP := 1.0);\nEND_PROGRAM\n",
                   "W1011@1:16");
}

// truST's vendor built-ins without a profile: DIFU and DIFD, and Siemens SCL's `#name` for a
// variable of the POU itself (its FB's, in a METHOD), in both dialects.
TEST(VendorBuiltins, DifuDifdAndSclLocalsNeedNoProfile) {
    const std::string text = "VAR_GLOBAL\n    g : INT;\nEND_VAR\nFUNCTION_BLOCK Valve\nVAR_INPUT\n    open : BOOL;\n"
                             "END_VAR\nVAR\n    count : INT;\n    up : DIFU;\n    down : DIFD;\nEND_VAR\n"
                             "    up(CLK := #open);\n    down(CLK := #open);\n    IF up.Q OR down.Q THEN\n"
                             "        #count := #count + g;\n    END_IF;\nEND_FUNCTION_BLOCK\n";
    EXPECT_EQ(check(text, Dialect::Codesys).diags, "");
    EXPECT_EQ(check(text, Dialect::Iec).diags, "");
    // `#` names the POU's own variables only: a global, another POU's local or an unknown name
    // is E0104, as in TIA Portal; a lone '#' is a syntax error.
    EXPECT_EQ(check("VAR_GLOBAL\n    g : INT;\nEND_VAR\nPROGRAM Main\nVAR\n    i : INT;\nEND_VAR\n"
                    "    #i := #g;\n    #i := #nothing;\nEND_PROGRAM\n",
                    Dialect::Codesys)
                  .diags,
              "E0104@8:11(error) E0104@9:11(error)");
    EXPECT_NE(check("PROGRAM Main\nVAR\n    i : INT;\nEND_VAR\n    i := #;\nEND_PROGRAM\n", Dialect::Codesys).errors,
              0u);
}

} // namespace
} // namespace takt::compiler
