// `takt check --dialect` and runtime.toml [build] dialect as a user runs them: the same W1xxx
// diagnostic is a warning (exit 0) by default and an error (exit 11) under "iec".
#include <string>

#include <gtest/gtest.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace {

using takt::test::RunResult;
using takt::test::runTakt;
using takt::test::TempDir;

// Writes its own VAR_INPUT on line 6, column 9 (W1001).
constexpr const char* kOwnInput = "FUNCTION Clamp : INT\n"
                                  "VAR_INPUT\n"
                                  "    x : INT;\n"
                                  "END_VAR\n"
                                  "    IF x > 100 THEN\n"
                                  "        x := 100;\n"
                                  "    END_IF;\n"
                                  "    Clamp := x;\n"
                                  "END_FUNCTION\n"
                                  "PROGRAM Main\n"
                                  "VAR\n"
                                  "    r : INT;\n"
                                  "END_VAR\n"
                                  "    r := Clamp(150);\n"
                                  "END_PROGRAM\n";

TEST(DialectCli, LeniencyIsAWarningByDefault) {
    TempDir dir;
    dir.write("src/main.st", kOwnInput);
    RunResult r = runTakt("check", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("src/main.st:6:9: warning[W1001]:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("0 errors, 1 warning "), std::string::npos) << r.err;
}

TEST(DialectCli, CheckDialectIecMakesItAnError) {
    TempDir dir;
    dir.write("src/main.st", kOwnInput);
    RunResult r = runTakt("check --dialect iec", dir.path());
    EXPECT_EQ(r.exitCode, 11) << r.err;
    EXPECT_NE(r.err.find("src/main.st:6:9: error[W1001]:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("1 error, 0 warnings"), std::string::npos) << r.err;
}

TEST(DialectCli, CheckDialectIecOnExplicitFiles) {
    TempDir dir;
    dir.write("clamp.st", kOwnInput);
    RunResult r = runTakt("check --dialect iec clamp.st", dir.path());
    EXPECT_EQ(r.exitCode, 11) << r.err;
    EXPECT_NE(r.err.find("error[W1001]"), std::string::npos) << r.err;
}

TEST(DialectCli, RuntimeTomlDialectIecAndCommandLineOverride) {
    TempDir dir;
    dir.write("runtime.toml", "[build]\ndialect = \"iec\"\n");
    dir.write("src/main.st", kOwnInput);
    RunResult strict = runTakt("check", dir.path());
    EXPECT_EQ(strict.exitCode, 11) << strict.err;
    EXPECT_NE(strict.err.find("error[W1001]"), std::string::npos) << strict.err;
    RunResult lenient = runTakt("check --dialect codesys", dir.path());
    EXPECT_EQ(lenient.exitCode, 0) << lenient.err;
    EXPECT_NE(lenient.err.find("warning[W1001]"), std::string::npos) << lenient.err;
}

TEST(DialectCli, UnknownDialectInRuntimeTomlIsAConfigError) {
    TempDir dir;
    dir.write("runtime.toml", "[build]\ndialect = \"strict\"\n");
    dir.write("src/main.st", kOwnInput);
    RunResult r = runTakt("check", dir.path());
    EXPECT_EQ(r.exitCode, 10) << r.err;
    EXPECT_NE(r.err.find("runtime.toml:2:11: error: build.dialect: unknown value \"strict\""), std::string::npos)
        << r.err;
}

TEST(DialectCli, UnknownDialectOnTheCommandLineIsRejected) {
    TempDir dir;
    dir.write("src/main.st", kOwnInput);
    RunResult r = runTakt("check --dialect twincat", dir.path());
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.err.find("--dialect"), std::string::npos) << r.err;
}

} // namespace
