// `takt build` and `takt disasm` as a user runs them: exit codes, the --ci document, the file
// written (or not) and the listing.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "takt/bytecode/container.h"
#include "takt/bytecode/opcodes.h"
#include "takt/bytecode/version.h"

namespace {

using takt::test::TempDir;

using takt::test::RunResult;
using takt::test::runTakt;

constexpr const char* kMain = "PROGRAM Main\n"
                              "VAR\n"
                              "    count : INT;\n"
                              "END_VAR\n"
                              "count := count + 1;\n"
                              "END_PROGRAM\n";

constexpr const char* kBroken = "PROGRAM Main\n"
                                "VAR\n"
                                "    level : INT;\n"
                                "END_VAR\n"
                                "level := 2 * undeclaredThing;\n"
                                "END_PROGRAM\n";

void writeBytes(const std::filesystem::path& p, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A verified one-POU program: PROGRAM Main with `count` at g:0x8, incremented once per cycle.
std::vector<std::uint8_t> tinyProgram() {
    using namespace takt::bytecode;
    Module m;
    m.constSize = 8;
    m.globalSize = 8;
    m.stackSize = 64;
    m.initImage.assign(16, 0);
    TypeDesc dint;
    dint.kind = ValueKind::DInt;
    dint.name = "DINT";
    dint.signature = "DINT";
    dint.size = 4;
    TypeDesc main;
    main.kind = ValueKind::Program;
    main.name = "Main";
    main.signature = "PROGRAM Main{count:DINT}";
    main.size = 4;
    main.fields = {{"count", 0, 0, false}};
    m.types = {dint, main};
    m.code = {static_cast<std::uint32_t>(Opcode::ADD_I32_IMM), address(kTagThis, 0), address(kTagThis, 0), 1,
              static_cast<std::uint32_t>(Opcode::RET)};
    m.pous = {{"Main", PouKind::Program, 0, 5, 0, 1, kNone}};
    m.programs = {{"Main", 0, 8, kNone}};
    m.variables = {{"Main.count", 0, 8, 4, VarKind::ProgramVar, false, false}};
    m.files = {"src/main.st"};
    m.debug = {{0, 0, 5, 1}};
    return serialize(m);
}

TEST(BuildCli, InvalidProjectExitsTen) {
    TempDir dir;
    RunResult r = runTakt("build --ci --project does-not-exist", dir.path());
    EXPECT_EQ(r.exitCode, 10) << r.err;
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    ASSERT_FALSE(doc.HasParseError()) << r.out;
    EXPECT_STREQ(doc["command"].GetString(), "build");
    EXPECT_STREQ(doc["status"].GetString(), "error");
    EXPECT_TRUE(doc["program"].IsNull());
}

TEST(BuildCli, SourceErrorExitsElevenAndWritesNothing) {
    TempDir dir;
    dir.write("src/main.st", kBroken);
    RunResult r = runTakt("build --ci", dir.path());
    EXPECT_EQ(r.exitCode, 11) << r.err;
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    ASSERT_FALSE(doc.HasParseError()) << r.out;
    EXPECT_EQ(doc["version"].GetInt(), 1);
    EXPECT_STREQ(doc["command"].GetString(), "build");
    EXPECT_STREQ(doc["status"].GetString(), "error");
    EXPECT_EQ(std::filesystem::path(doc["project"].GetString()), dir.path());
    EXPECT_TRUE(doc["program"].IsNull());
    EXPECT_EQ(doc["source_count"].GetUint(), 1u);
    ASSERT_TRUE(doc["sources"].IsArray());
    EXPECT_STREQ(doc["sources"][0].GetString(), "src/main.st");
    ASSERT_TRUE(doc["diagnostics"].IsArray());
    ASSERT_GE(doc["diagnostics"].Size(), 1u);
    EXPECT_NE(std::string(doc["diagnostics"][0]["message"].GetString()).find("undeclaredThing"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "program.stbc"));
}

TEST(BuildCli, HumanOutputGoesToStderr) {
    TempDir dir;
    dir.write("src/main.st", kBroken);
    RunResult r = runTakt("build", dir.path());
    EXPECT_EQ(r.exitCode, 11);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("src/main.st:5:14: error[E0104]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("program.stbc not written"), std::string::npos) << r.err;
}

// Needs the back end to emit code for PROGRAM bodies; until it does, the build stops with the
// verifier's reason (exit 20) instead of writing a file the runtime would refuse.
TEST(BuildCli, CleanProjectWritesALoadableProgram) {
    TempDir dir;
    dir.write("src/main.st", kMain);
    RunResult r = runTakt("build --ci", dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    ASSERT_FALSE(doc.HasParseError()) << r.out;
    EXPECT_STREQ(doc["status"].GetString(), "ok");
    std::filesystem::path program = doc["program"].GetString();
    EXPECT_EQ(program, dir.path() / "program.stbc");
    takt::bytecode::LoadResult loaded = takt::bytecode::readProgramFile(program);
    ASSERT_TRUE(loaded.ok()) << loaded.error;
    EXPECT_EQ(takt::bytecode::hashHex(loaded.hash), doc["program_hash"].GetString());
    RunResult listing = runTakt("disasm program.stbc", dir.path());
    EXPECT_EQ(listing.exitCode, 0) << listing.err;
    EXPECT_NE(listing.out.find("pou 0 Main PROGRAM"), std::string::npos) << listing.out;
}

TEST(DisasmCli, ListsAValidFile) {
    TempDir dir;
    writeBytes(dir.path() / "program.stbc", tinyProgram());
    RunResult r = runTakt("disasm program.stbc", dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("program.stbc format " + std::to_string(takt::bytecode::kFormatVersion)), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("ADD_I32_IMM  this+0 <Main.count>, this+0 <Main.count>, 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("; src/main.st:5:1"), std::string::npos) << r.out;
}

TEST(DisasmCli, MissingFileExitsTenWithReason) {
    TempDir dir;
    RunResult r = runTakt("disasm nothing.stbc", dir.path());
    EXPECT_EQ(r.exitCode, 10);
    EXPECT_NE(r.err.find("cannot open"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
}

TEST(DisasmCli, CorruptFileExitsTenWithReason) {
    TempDir dir;
    std::vector<std::uint8_t> bytes = tinyProgram();
    bytes[bytes.size() / 2] ^= 0x10;
    writeBytes(dir.path() / "program.stbc", bytes);
    RunResult r = runTakt("disasm program.stbc", dir.path());
    EXPECT_EQ(r.exitCode, 10);
    EXPECT_NE(r.err.find("CRC32 mismatch"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
}

TEST(DisasmCli, UnverifiableFileExitsTenUnlessAsked) {
    using namespace takt::bytecode;
    LoadResult loaded = deserialize(tinyProgram());
    ASSERT_TRUE(loaded.ok());
    loaded.module.code[1] = address(kTagThis, 8); // outside Main's 4-byte instance
    TempDir dir;
    writeBytes(dir.path() / "program.stbc", serialize(loaded.module));
    RunResult r = runTakt("disasm program.stbc", dir.path());
    EXPECT_EQ(r.exitCode, 10);
    EXPECT_NE(r.err.find("verification failed"), std::string::npos) << r.err;
    RunResult forced = runTakt("disasm --no-verify program.stbc", dir.path());
    EXPECT_EQ(forced.exitCode, 0) << forced.err;
    EXPECT_NE(forced.out.find("NOT VERIFIED"), std::string::npos) << forced.out;
}

} // namespace
