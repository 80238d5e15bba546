// program.stbc container: round trip, and rejection of every kind of damaged file.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <zlib.h>

#include "takt/bytecode/container.h"
#include "takt/bytecode/version.h"

namespace takt::bytecode {
namespace {

// Every table filled, every field away from its default, so a field the encoder forgets or
// decodes into the wrong place changes the re-serialised bytes.
Module richModule() {
    Module m;
    m.code = {0x01020304u, 0xdeadbeefu, 7, 0, 0xffffffffu};
    m.initCode = 2;
    m.constSize = 4;
    m.globalSize = 12;
    m.stackSize = 256;
    m.initImage = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    m.overflowTrap = true;
    TypeDesc intType;
    intType.kind = ValueKind::Int;
    intType.name = "INT";
    intType.signature = "INT";
    intType.size = 2;
    intType.align = 2;
    TypeDesc arr;
    arr.kind = ValueKind::Array;
    arr.name = "ARRAY [0..1, -3..4] OF INT";
    arr.signature = "A[0..1,-3..4]INT";
    arr.size = 32;
    arr.align = 2;
    arr.element = 0;
    arr.bounds = {0, 1, -3, 4};
    TypeDesc str;
    str.kind = ValueKind::String;
    str.name = "STRING[20]";
    str.signature = "S20";
    str.size = 22;
    str.stringLength = 20;
    TypeDesc en;
    en.kind = ValueKind::Enum;
    en.name = "Mode";
    en.signature = "E(Idle=0,Run=-5)";
    en.element = 0;
    en.enumValues = {{"Idle", 0}, {"Run", -5}, {"Big", INT64_MIN}};
    en.size = 2;
    TypeDesc fb;
    fb.kind = ValueKind::FunctionBlock;
    fb.name = "Motor";
    fb.signature = "FB Motor{speed:INT,mode:Mode}";
    fb.size = 8;
    fb.align = 4;
    fb.fields = {{"speed", 0, 0, true}, {"mode", 3, 2, false}};
    fb.pou = 1;
    m.types = {intType, arr, str, en, fb};
    m.variables = {{"counter", 0, 4, 2, VarKind::Global, true, false},
                   {"Main.m.speed", 0, 8, 2, VarKind::ProgramVar, false, false},
                   {"PI_ISH", 0, 0, 2, VarKind::Constant, false, true}};
    m.pous = {{"Main", PouKind::Program, 0, 3, 0, 4, kNone},
              {"Motor", PouKind::FunctionBlock, 3, 5, 0, 4, kNone},
              {"TON", PouKind::Native, kNone, kNone, 16, kNone, 3}};
    m.pous[1].frame = {{"tmp", 0, 0, VarKind::Temp, false}, {"io", 1, 8, VarKind::InOut, false}};
    m.tasks = {{"Fast", 10'000'000, 1, kNone, {0, 1}}, {"Evt", 0, 7, 6, {}}};
    m.programs = {{"P1", 0, 4, 0}, {"P2", 0, 8, kNone}};
    m.io = {{IoArea::Input, 3, 5, 0, 6, 0, "%IX3.5", "Main.start"},
            {IoArea::Output, 10, 0, 2, 8, 0, "%QW10", "Main.speed"}};
    m.access = {{"SPEED", "Main.m.speed", 0, 8, false}, {"CNT", "counter", 0, 4, true}};
    m.files = {"src/main.st", "src/lib/motor.st"};
    m.debug = {{0, 0, 3, 5}, {3, 1, 10, 1}};
    return m;
}

Module smallModule() {
    Module m;
    m.code = {1, 2};
    m.constSize = 2;
    m.initImage = {7, 9};
    TypeDesc t;
    t.name = "INT";
    t.signature = "INT";
    t.size = 2;
    m.types = {t};
    m.variables = {{"x", 0, 0, 2, VarKind::Global, true, false}};
    m.pous = {{"Main", PouKind::Program, 0, 2, 0, kNone, kNone}};
    m.files = {"a.st"};
    m.debug = {{0, 0, 1, 1}};
    return m;
}

void setU32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
        b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
    }
}

TEST(Container, RoundTripIsByteIdentical) {
    std::vector<std::uint8_t> first = serialize(richModule());
    LoadResult loaded = deserialize(first);
    ASSERT_TRUE(loaded.ok()) << loaded.error;
    EXPECT_EQ(loaded.formatVersion, kFormatVersion);
    EXPECT_EQ(serialize(loaded.module), first);
}

TEST(Container, RoundTripKeepsFieldValues) {
    LoadResult loaded = deserialize(serialize(richModule()));
    ASSERT_TRUE(loaded.ok()) << loaded.error;
    const Module& m = loaded.module;
    EXPECT_TRUE(m.overflowTrap);
    EXPECT_EQ(m.initCode, 2u);
    EXPECT_EQ(m.stackSize, 256u);
    EXPECT_EQ(m.types[3].enumValues[2].value, INT64_MIN);
    EXPECT_EQ(m.types[1].bounds[2], -3);
    EXPECT_EQ(m.types[4].fields[1].name, "mode");
    EXPECT_TRUE(m.types[4].fields[0].retain);
    EXPECT_EQ(m.variables[0].kind, VarKind::Global);
    EXPECT_TRUE(m.variables[2].constant);
    EXPECT_EQ(m.pous[2].native, 3u);
    ASSERT_EQ(m.pous[1].frame.size(), 2u);
    EXPECT_EQ(m.pous[1].frame[1].name, "io");
    EXPECT_EQ(m.pous[1].frame[1].offset, 8u);
    EXPECT_EQ(m.pous[1].frame[1].kind, VarKind::InOut);
    EXPECT_TRUE(m.pous[0].frame.empty());
    EXPECT_EQ(m.tasks[0].intervalNs, 10'000'000);
    EXPECT_EQ(m.tasks[1].singleOffset, 6u);
    EXPECT_EQ(m.tasks[0].io, (std::vector<std::uint32_t>{0, 1}));
    EXPECT_TRUE(m.tasks[1].io.empty());
    EXPECT_EQ(m.io[0].bit, 5);
    EXPECT_EQ(m.io[1].address, "%QW10");
    EXPECT_FALSE(m.access[0].readOnly);
    EXPECT_EQ(m.files[1], "src/lib/motor.st");
    EXPECT_EQ(m.debug[1].line, 10u);
}

TEST(Container, HashIdentifiesTheProgram) {
    LoadResult a = deserialize(serialize(richModule()));
    Module changed = richModule();
    changed.code[0] ^= 1;
    LoadResult b = deserialize(serialize(changed));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(a.hash, b.hash);
    EXPECT_EQ(hashHex(a.hash).size(), 64u);
}

TEST(Container, EverySingleBitFlipIsRejected) {
    const std::vector<std::uint8_t> good = serialize(smallModule());
    ASSERT_TRUE(deserialize(good).ok());
    std::size_t rejected = 0;
    for (std::size_t byte = 0; byte < good.size(); ++byte) {
        for (int bit = 0; bit < 8; ++bit) {
            std::vector<std::uint8_t> bad = good;
            bad[byte] ^= static_cast<std::uint8_t>(1u << bit);
            LoadResult r = deserialize(bad);
            if (!r.ok()) {
                ++rejected;
            } else {
                ADD_FAILURE() << "flip of bit " << bit << " in byte " << byte << " accepted";
            }
        }
    }
    EXPECT_EQ(rejected, good.size() * 8);
}

TEST(Container, EveryTruncationIsRejected) {
    const std::vector<std::uint8_t> good = serialize(smallModule());
    for (std::size_t len = 0; len < good.size(); ++len) {
        LoadResult r = deserialize(std::span(good.data(), len));
        EXPECT_FALSE(r.ok()) << "truncated to " << len << " bytes accepted";
    }
}

TEST(Container, TruncationIsNamed) {
    std::vector<std::uint8_t> good = serialize(smallModule());
    good.pop_back();
    EXPECT_NE(deserialize(good).error.find("truncated"), std::string::npos) << deserialize(good).error;
}

TEST(Container, FutureVersionHasItsOwnMessage) {
    std::vector<std::uint8_t> b = serialize(smallModule());
    setU32(b, 4, kFormatVersion + 1);
    LoadResult r = deserialize(b);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error.find("future format version " + std::to_string(kFormatVersion + 1)), std::string::npos)
        << r.error;
}

TEST(Container, WrongMagicHasItsOwnMessage) {
    std::vector<std::uint8_t> b = serialize(smallModule());
    b[0] = 'X';
    LoadResult r = deserialize(b);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error.find("wrong magic"), std::string::npos) << r.error;
    EXPECT_FALSE(deserialize(std::vector<std::uint8_t>{}).ok());
}

TEST(Container, WrongCrcIsNamed) {
    std::vector<std::uint8_t> b = serialize(smallModule());
    b[16] ^= 0x80;
    LoadResult r = deserialize(b);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error.find("CRC32 mismatch"), std::string::npos) << r.error;
}

// A file whose CRC was recomputed after tampering still fails the program hash.
TEST(Container, TamperingWithRecomputedCrcFailsTheHash) {
    std::vector<std::uint8_t> b = serialize(smallModule());
    b[b.size() - 1] ^= 1;
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, b.data(), 16);
    crc = crc32(crc, b.data() + 20, static_cast<uInt>(b.size() - 20));
    setU32(b, 16, static_cast<std::uint32_t>(crc));
    LoadResult r = deserialize(b);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error.find("program hash mismatch"), std::string::npos) << r.error;
}

TEST(Container, MalformedSectionNamesSectionAndOffset) {
    // A module whose image size disagrees with constSize + globalSize is encodable but not loadable.
    Module m = smallModule();
    m.globalSize = 5;
    LoadResult r = deserialize(serialize(m));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error.find("section IMAGE at offset 0x"), std::string::npos) << r.error;
}

TEST(Container, FileRoundTripIsAtomicAndReadable) {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / "takt_container_test";
    std::filesystem::create_directories(dir);
    std::filesystem::path file = dir / "program.stbc";
    std::vector<std::uint8_t> bytes = serialize(richModule());
    ASSERT_EQ(writeFileAtomically(file, bytes), "");
    LoadResult r = readProgramFile(file);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(serialize(r.module), bytes);
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) {
        ++entries;
    }
    EXPECT_EQ(entries, 1u) << "temporary file left behind";
    EXPECT_FALSE(readProgramFile(dir / "missing.stbc").ok());
    std::filesystem::remove_all(dir);
}

// One fsync of a directory serves every atomic write in takt; it reports why it could not.
TEST(Container, SyncDirectorySyncsAnExistingDirectoryOnly) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "takt_container_sync_test";
    std::filesystem::create_directories(dir);
    EXPECT_FALSE(syncDirectory(dir));
    EXPECT_EQ(syncDirectory(dir / "missing"), std::errc::no_such_file_or_directory);
    std::ofstream(dir / "file") << "x";
    EXPECT_EQ(syncDirectory(dir / "file"), std::errc::not_a_directory) << "a plain file is not a directory";
    std::filesystem::remove_all(dir);
}

// A directory where a program is expected opens, and its first read fails (EISDIR): an error
// naming it, never an exception (a stream's filebuf threw one, which ended `takt run`).
TEST(Container, ADirectoryIsAnErrorNotAnException) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "takt_container_dir_test";
    std::filesystem::create_directories(dir / "program.stbc");
    std::vector<std::uint8_t> bytes;
    std::string error;
    EXPECT_FALSE(readFileBytes(dir / "program.stbc", bytes, error));
    EXPECT_NE(error.find("program.stbc: Is a directory"), std::string::npos) << error;
    const LoadResult r = readProgramFile(dir / "program.stbc");
    EXPECT_FALSE(r.ok());
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace takt::bytecode
