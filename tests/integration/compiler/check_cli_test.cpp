// `takt check` and `takt explain` as a user runs them: exit codes, human output on stderr,
// one JSON document on stdout.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "takt/compiler/diagnostics.h"

namespace {

using takt::test::TempDir;

using takt::test::RunResult;
using takt::test::runTakt;
using takt::test::shellQuote;

constexpr const char* kMain = "PROGRAM Main\n"
                              "VAR\n"
                              "    count : INT;\n"
                              "END_VAR\n"
                              "count := count + 1;\n"
                              "END_PROGRAM\n";

// The second file (by path order) reads a name nobody declares: line 5, columns 14..28.
constexpr const char* kBroken = "PROGRAM Second\n"
                                "VAR\n"
                                "    level : INT;\n"
                                "END_VAR\n"
                                "level := 2 * undeclaredThing;\n"
                                "END_PROGRAM\n";

TEST(CheckCli, CleanProjectExitsZero) {
    TempDir dir;
    dir.write("runtime.toml", "[build]\noverflow = \"wrap\"\n");
    dir.write("src/main.st", kMain);
    RunResult r = runTakt("check --project .", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("0 errors, 0 warnings"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CheckCli, WarningsDoNotFail) {
    // A CASE over an enumeration that forgets a value and has no ELSE: W0007, not an error.
    TempDir dir;
    dir.write("src/main.st", "TYPE Phase : (Idle, Run, Stop); END_TYPE\n"
                             "PROGRAM Main\n"
                             "VAR p : Phase; n : INT; END_VAR\n"
                             "CASE p OF\n"
                             "    Idle: n := 0;\n"
                             "    Run: n := 1;\n"
                             "END_CASE;\n"
                             "END_PROGRAM\n");
    RunResult r = runTakt("check", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("warning[W0007]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("0 errors, 1 warning "), std::string::npos) << r.err;

    RunResult j = runTakt("check --json", dir.path());
    EXPECT_EQ(j.exitCode, 0);
    rapidjson::Document doc;
    doc.Parse(j.out.c_str());
    ASSERT_FALSE(doc.HasParseError()) << j.out;
    EXPECT_STREQ(doc["status"].GetString(), "ok");
    ASSERT_EQ(doc["diagnostics"].Size(), 1u);
    EXPECT_STREQ(doc["diagnostics"][0]["severity"].GetString(), "warning");
}

TEST(CheckCli, DefaultProjectIsTheCurrentDirectory) {
    TempDir dir;
    dir.write("src/main.st", kMain);
    RunResult r = runTakt("check", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("1 file checked"), std::string::npos) << r.err;
}

TEST(CheckCli, ErrorInSecondFileIsReportedWithItsPath) {
    TempDir dir;
    dir.write("src/a_main.st", kMain);
    dir.write("src/b/second.st", kBroken);
    RunResult r = runTakt("check --project " + shellQuote(dir.path().string()), dir.path().parent_path());
    EXPECT_EQ(r.exitCode, 11);
    EXPECT_NE(r.err.find("src/b/second.st:5:14: error[E0104]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("undeclaredThing"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("1 error,"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("a_main.st"), std::string::npos) << r.err;
}

TEST(CheckCli, JsonDocumentShape) {
    TempDir dir;
    dir.write("src/a_main.st", kMain);
    dir.write("src/b/second.st", kBroken);
    RunResult r = runTakt("check --json --project .", dir.path());
    EXPECT_EQ(r.exitCode, 11);
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    ASSERT_FALSE(doc.HasParseError()) << r.out;
    ASSERT_TRUE(doc.IsObject());
    EXPECT_EQ(doc["version"].GetInt(), 1);
    EXPECT_STREQ(doc["command"].GetString(), "check");
    EXPECT_STREQ(doc["status"].GetString(), "error");
    EXPECT_EQ(std::filesystem::path(doc["project"].GetString()), dir.path());
    EXPECT_EQ(doc["source_count"].GetUint(), 2u);
    ASSERT_TRUE(doc["sources"].IsArray());
    ASSERT_EQ(doc["sources"].Size(), 2u);
    EXPECT_STREQ(doc["sources"][0].GetString(), "src/a_main.st");
    EXPECT_STREQ(doc["sources"][1].GetString(), "src/b/second.st");
    const rapidjson::Value& diags = doc["diagnostics"];
    ASSERT_TRUE(diags.IsArray());
    ASSERT_EQ(diags.Size(), 1u) << r.out;
    const rapidjson::Value& d = diags[0];
    EXPECT_STREQ(d["path"].GetString(), "src/b/second.st");
    EXPECT_EQ(d["line"].GetUint(), 5u);
    EXPECT_EQ(d["column"].GetUint(), 14u);
    EXPECT_EQ(d["end_line"].GetUint(), 5u);
    EXPECT_EQ(d["end_column"].GetUint(), 29u);
    EXPECT_STREQ(d["severity"].GetString(), "error");
    EXPECT_STREQ(d["code"].GetString(), "E0104");
    EXPECT_TRUE(d["message"].IsString());
    EXPECT_TRUE(d["related"].IsArray());
}

TEST(CheckCli, JsonCleanProject) {
    TempDir dir;
    dir.write("src/main.st", kMain);
    RunResult r = runTakt("check --json", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    ASSERT_FALSE(doc.HasParseError()) << r.out;
    EXPECT_STREQ(doc["status"].GetString(), "ok");
    EXPECT_EQ(doc["diagnostics"].Size(), 0u);
    EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CheckCli, MissingProjectDirectoryExitsTen) {
    TempDir dir;
    RunResult r = runTakt("check --project does/not/exist", dir.path());
    EXPECT_EQ(r.exitCode, 10);
    EXPECT_NE(r.err.find("does/not/exist"), std::string::npos) << r.err;
}

TEST(CheckCli, BadRuntimeTomlExitsTenNamingLineAndKey) {
    TempDir dir;
    dir.write("runtime.toml", "[resource]\nname = \"l1\"\n[build]\noverflow = \"wrap\"\nadress_mode = \"byte\"\n");
    dir.write("src/main.st", kMain);
    RunResult r = runTakt("check", dir.path());
    EXPECT_EQ(r.exitCode, 10);
    EXPECT_NE(r.err.find("runtime.toml:5:1: error: build.adress_mode"), std::string::npos) << r.err;

    RunResult j = runTakt("check --json", dir.path());
    EXPECT_EQ(j.exitCode, 10);
    rapidjson::Document doc;
    doc.Parse(j.out.c_str());
    ASSERT_FALSE(doc.HasParseError()) << j.out;
    EXPECT_STREQ(doc["status"].GetString(), "error");
    ASSERT_TRUE(doc["project_errors"].IsArray());
    ASSERT_EQ(doc["project_errors"].Size(), 1u);
    EXPECT_STREQ(doc["project_errors"][0]["key"].GetString(), "build.adress_mode");
    EXPECT_EQ(doc["project_errors"][0]["line"].GetUint(), 5u);
}

TEST(CheckCli, ExplicitFilesAreCheckedWithoutAProject) {
    TempDir dir;
    dir.write("one.st", kMain);
    dir.write("two.st", kBroken);
    RunResult ok = runTakt("check one.st", dir.path());
    EXPECT_EQ(ok.exitCode, 0) << ok.err;
    RunResult bad = runTakt("check one.st two.st", dir.path());
    EXPECT_EQ(bad.exitCode, 11);
    EXPECT_NE(bad.err.find("two.st:5:14: error[E0104]"), std::string::npos) << bad.err;
    RunResult missing = runTakt("check one.st nothere.st", dir.path());
    EXPECT_EQ(missing.exitCode, 11);
    EXPECT_NE(missing.err.find("error[E0017]"), std::string::npos) << missing.err;
    EXPECT_NE(missing.err.find("nothere.st"), std::string::npos) << missing.err;
}

TEST(CheckCli, EmptyProjectIsE0018) {
    TempDir dir;
    dir.write("src/readme.txt", "no sources here");
    RunResult r = runTakt("check", dir.path());
    EXPECT_EQ(r.exitCode, 11);
    EXPECT_NE(r.err.find("error[E0018]"), std::string::npos) << r.err;
}

TEST(CheckCli, ProjectAndFilesAreExclusive) {
    TempDir dir;
    dir.write("one.st", kMain);
    RunResult r = runTakt("check --project . one.st", dir.path());
    EXPECT_EQ(r.exitCode, 10);
}

TEST(ExplainCli, OneCode) {
    TempDir dir;
    RunResult r = runTakt("explain e0104", dir.path());
    EXPECT_EQ(r.exitCode, 0);
    const auto& info = takt::compiler::diagInfo(takt::compiler::DiagCode::UnknownIdentifier);
    EXPECT_NE(r.out.find("E0104"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(std::string(info.explanation)), std::string::npos) << r.out;
}

TEST(ExplainCli, ListsEveryCode) {
    TempDir dir;
    RunResult r = runTakt("explain", dir.path());
    EXPECT_EQ(r.exitCode, 0);
    for (std::size_t i = 0; i < static_cast<std::size_t>(takt::compiler::DiagCode::Count_); ++i) {
        std::string code(takt::compiler::diagInfo(static_cast<takt::compiler::DiagCode>(i)).code);
        EXPECT_NE(r.out.find(code + " "), std::string::npos) << code;
    }
}

TEST(ExplainCli, UnknownCodeFails) {
    TempDir dir;
    RunResult r = runTakt("explain E9999", dir.path());
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.err.find("E9999"), std::string::npos) << r.err;
}

} // namespace
