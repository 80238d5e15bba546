// The project driver: source discovery, runtime.toml [build], unreadable and missing files,
// display paths and diagnostic order. Only lexical errors are used to provoke diagnostics, so
// these tests pin the driver, not the parser or the semantic analysis.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "takt/compiler/project.h"
#include "takt/compiler/sema/model.h"

namespace takt::compiler {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

constexpr const char* kValidProgram = "PROGRAM Main\nVAR x : INT; END_VAR\nx := 1;\nEND_PROGRAM\n";

std::vector<std::string> relativeNames(const std::vector<fs::path>& paths, const fs::path& base) {
    std::vector<std::string> out;
    for (const fs::path& p : paths) {
        out.push_back(p.lexically_relative(base).generic_string());
    }
    return out;
}

TEST(ProjectDiscovery, FindsStAndPouRecursivelySortedByPath) {
    TempDir dir;
    dir.write("src/z.st", "");
    dir.write("src/b/a.pou", "");
    dir.write("src/a.ST", "");
    dir.write("src/notes.txt", "");
    dir.write("src/.hidden/x.st", "");
    dir.write("src/b/.swap.st", "");
    std::vector<std::string> names = relativeNames(discoverSources(dir.path() / "src"), dir.path() / "src");
    EXPECT_EQ(names, (std::vector<std::string>{"a.ST", "b/a.pou", "z.st"}));
}

TEST(ProjectDiscovery, MissingDirectoryGivesNothing) {
    TempDir dir;
    EXPECT_TRUE(discoverSources(dir.path() / "src").empty());
}

TEST(BuildOptionsTest, DefaultsWhenTableIsAbsent) {
    BuildOptions opts;
    opts.overflow = OverflowMode::Trap; // must stay untouched
    EXPECT_TRUE(readBuildOptions("[resource]\nname = \"x\"\n", "runtime.toml", opts).empty());
    EXPECT_EQ(opts.overflow, OverflowMode::Trap);
    EXPECT_EQ(opts.addressMode, AddressMode::Word);
}

TEST(BuildOptionsTest, ReadsBothKeys) {
    BuildOptions opts;
    auto errors = readBuildOptions("[build]\noverflow = \"trap\"\naddress_mode = \"byte\"\n", "runtime.toml", opts);
    EXPECT_TRUE(errors.empty());
    EXPECT_EQ(opts.overflow, OverflowMode::Trap);
    EXPECT_EQ(opts.addressMode, AddressMode::Byte);
}

TEST(BuildOptionsTest, SelectTheCodeGeneratorsOptions) {
    BuildOptions opts;
    EXPECT_FALSE(opts.codegenOptions().overflowTrap);
    EXPECT_EQ(opts.codegenOptions().addressMode, AddressMode::Word);
    ASSERT_TRUE(
        readBuildOptions("[build]\noverflow = \"trap\"\naddress_mode = \"byte\"\n", "runtime.toml", opts).empty());
    const CodegenOptions cg = opts.codegenOptions();
    EXPECT_TRUE(cg.overflowTrap);
    EXPECT_EQ(cg.addressMode, AddressMode::Byte);
    EXPECT_EQ(cg.stackSize, CodegenOptions{}.stackSize);
}

TEST(BuildOptionsTest, BadValueNamesFileLineAndKey) {
    BuildOptions opts;
    auto errors = readBuildOptions("[bundle]\nversion = 1\n\n[build]\noverflow = \"saturate\"\n", "runtime.toml", opts);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].path, "runtime.toml");
    EXPECT_EQ(errors[0].line, 5u);
    EXPECT_EQ(errors[0].key, "build.overflow");
    EXPECT_NE(errors[0].message.find("saturate"), std::string::npos);
    EXPECT_EQ(renderConfigError(errors[0]).rfind("runtime.toml:5:", 0), 0u) << renderConfigError(errors[0]);
    EXPECT_EQ(opts.overflow, OverflowMode::Wrap);
}

TEST(BuildOptionsTest, WrongTypeAndUnknownKeyAreErrorsInFileOrder) {
    BuildOptions opts;
    auto errors = readBuildOptions("[build]\nzeta = true\naddress_mode = 2\noverflow = \"wrap\"\nalpha = 1\n",
                                   "cfg/runtime.toml", opts);
    ASSERT_EQ(errors.size(), 3u);
    EXPECT_EQ(errors[0].key, "build.zeta");
    EXPECT_EQ(errors[0].line, 2u);
    EXPECT_EQ(errors[1].key, "build.address_mode");
    EXPECT_NE(errors[1].message.find("integer"), std::string::npos);
    EXPECT_EQ(errors[2].key, "build.alpha");
    EXPECT_EQ(errors[2].line, 5u);
    EXPECT_EQ(errors[2].path, "cfg/runtime.toml");
}

TEST(BuildOptionsTest, BuildThatIsNotATable) {
    BuildOptions opts;
    auto errors = readBuildOptions("build = \"fast\"\n", "runtime.toml", opts);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].key, "build");
    EXPECT_EQ(errors[0].line, 1u);
}

TEST(BuildOptionsTest, TomlSyntaxErrorHasPosition) {
    BuildOptions opts;
    auto errors = readBuildOptions("[build]\noverflow = \"wrap\n", "runtime.toml", opts);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].line, 2u);
    EXPECT_GT(errors[0].column, 0u);
}

TEST(CheckProjectTest, MissingDirectoryIsInvalidProject) {
    TempDir dir;
    Project p = checkProject({dir.path() / "nope", {}, false, {}, {}});
    EXPECT_FALSE(p.valid());
    ASSERT_EQ(p.configErrors.size(), 1u);
    EXPECT_NE(p.configErrors[0].message.find("does not exist"), std::string::npos);
    EXPECT_TRUE(p.sourcePaths.empty());
}

TEST(CheckProjectTest, BadRuntimeTomlStopsBeforeCompiling) {
    TempDir dir;
    dir.write("runtime.toml", "[build]\naddress_mode = \"bit\"\n");
    dir.write("src/main.st", kValidProgram);
    Project p = checkProject({dir.path(), {}, false, {}, {}});
    ASSERT_FALSE(p.valid());
    EXPECT_EQ(p.configErrors[0].key, "build.address_mode");
    EXPECT_EQ(p.configErrors[0].line, 2u);
    EXPECT_TRUE(p.sourcePaths.empty());
}

TEST(CheckProjectTest, BuildOptionsAreApplied) {
    TempDir dir;
    dir.write("runtime.toml", "[build]\noverflow = \"trap\"\naddress_mode = \"byte\"\n");
    dir.write("src/main.st", kValidProgram);
    Project p = checkProject({dir.path(), {}, false, {}, {}});
    ASSERT_TRUE(p.valid());
    EXPECT_EQ(p.build.overflow, OverflowMode::Trap);
    EXPECT_EQ(p.build.addressMode, AddressMode::Byte);
}

TEST(CheckProjectTest, SourcesRootNamesTheSourceFolder) {
    TempDir dir;
    dir.write("runtime.toml", "[build]\nsources_root = \"st/plc\"\n");
    dir.write("st/plc/main.st", kValidProgram);
    dir.write("src/ignored.st", "this is not ST");
    Project p = checkProject({dir.path(), {}, false, {}, {}});
    ASSERT_TRUE(p.valid());
    EXPECT_EQ(p.build.sourcesRoot, "st/plc");
    EXPECT_EQ(p.sourcePaths, (std::vector<std::string>{"st/plc/main.st"}));
    EXPECT_TRUE(p.ok());
}

// What takt run and takt validate compile: the sources root when it exists (or a trust-lsp.toml
// names the folders, or [build] is broken and compiling says why), else nothing: program.stbc.
TEST(CheckProjectTest, SourcesToCompileFollowsSourcesRoot) {
    TempDir dir;
    EXPECT_EQ(sourcesToCompile(dir.path()), std::nullopt);
    dir.write("src/main.st", kValidProgram);
    EXPECT_EQ(sourcesToCompile(dir.path()), dir.path() / "src");
    dir.write("runtime.toml", "[build]\nsources_root = \"st/plc\"\n");
    EXPECT_EQ(sourcesToCompile(dir.path()), std::nullopt) << "src/ is not this project's sources folder";
    dir.write("st/plc/main.st", kValidProgram);
    EXPECT_EQ(sourcesToCompile(dir.path()), dir.path() / "st/plc");
    dir.write("runtime.toml", "[build]\nsources_root = \"/etc\"\n");
    EXPECT_TRUE(sourcesToCompile(dir.path()).has_value()) << "compiling reports the bad key";

    TempDir trust;
    trust.write("trust-lsp.toml", "[project]\ninclude_paths = [\"sources\"]\n");
    EXPECT_TRUE(sourcesToCompile(trust.path()).has_value());
}

TEST(BuildOptionsTest, SourcesRootMustStayInsideTheProject) {
    for (const char* bad : {"\"/etc\"", "\"../other\"", "\"\"", "3"}) {
        BuildOptions opts;
        const auto errors =
            readBuildOptions(std::string("[build]\nsources_root = ") + bad + "\n", "runtime.toml", opts);
        ASSERT_EQ(errors.size(), 1u) << bad;
        EXPECT_EQ(errors[0].key, "build.sources_root");
        EXPECT_EQ(errors[0].line, 2u);
        EXPECT_EQ(opts.sourcesRoot, "src");
    }
}

TEST(CheckProjectTest, EmptySrcIsE0018) {
    TempDir dir;
    dir.write("runtime.toml", "[resource]\nname = \"x\"\n");
    Project p = checkProject({dir.path(), {}, false, {}, {}});
    ASSERT_TRUE(p.valid());
    ASSERT_EQ(p.diagnostics.size(), 1u);
    EXPECT_EQ(p.diagnostics[0].code, DiagCode::EmptyProject);
    EXPECT_EQ(p.errorCount, 1u);
    EXPECT_FALSE(p.ok());
}

TEST(CheckProjectTest, UnreadableFileIsE0017WithReason) {
    TempDir dir;
    fs::path missing = dir.path() / "src" / "gone.st";
    Project p = checkProject({dir.path(), {missing}, false, {}, {}});
    ASSERT_EQ(p.diagnostics.size(), 1u);
    const Diagnostic& d = p.diagnostics[0];
    EXPECT_EQ(d.code, DiagCode::FileReadError);
    EXPECT_NE(d.message.find("src/gone.st"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("No such file"), std::string::npos) << d.message;
    EXPECT_EQ(p.sources->file(d.span.file).path(), "src/gone.st");
}

TEST(CheckProjectTest, DirectoryGivenAsFileIsE0017) {
    TempDir dir;
    fs::create_directories(dir.path() / "src" / "folder.st");
    Project p = checkProject({dir.path(), {dir.path() / "src" / "folder.st"}, false, {}, {}});
    ASSERT_EQ(p.diagnostics.size(), 1u);
    EXPECT_EQ(p.diagnostics[0].code, DiagCode::FileReadError);
    EXPECT_NE(p.diagnostics[0].message.find("directory"), std::string::npos) << p.diagnostics[0].message;
}

TEST(CheckProjectTest, PathsAreRelativeToProjectAndSorted) {
    TempDir dir;
    dir.write("src/b.st", "PROGRAM B\n  x := 1 ? 2;\nEND_PROGRAM\n"); // '?' is a lexical error
    dir.write("src/a/c.st", "PROGRAM C\nEND_PROGRAM ?\n");
    Project p = checkProject({dir.path() / "", {}, false, {}, {}});
    EXPECT_EQ(p.sourcePaths, (std::vector<std::string>{"src/a/c.st", "src/b.st"}));
    std::vector<std::string> invalid;
    for (const Diagnostic& d : p.diagnostics) {
        if (d.code == DiagCode::InvalidCharacter) {
            LineCol lc = p.sources->lineCol(d.span);
            invalid.push_back(p.sources->file(d.span.file).path() + ":" + std::to_string(lc.line) + ":" +
                              std::to_string(lc.column));
        }
    }
    EXPECT_EQ(invalid, (std::vector<std::string>{"src/a/c.st:2:13", "src/b.st:2:10"}));
    EXPECT_FALSE(p.ok());
    EXPECT_EQ(p.directory, dir.path());
}

TEST(CheckProjectTest, FileOutsideProjectKeepsItsPath) {
    TempDir project;
    TempDir other;
    fs::path outside = other.write("lib.st", "?");
    Project p = checkProject({project.path(), {outside}, false, {}, {}});
    ASSERT_EQ(p.sourcePaths.size(), 1u);
    EXPECT_EQ(p.sourcePaths[0], outside.generic_string());
}

TEST(CheckSourcesTest, InMemorySourcesKeepTheirNamesAndOrder) {
    Project p = checkSources({{"one.st", "?"}, {"two.st", "PROGRAM P END_PROGRAM ?"}});
    ASSERT_TRUE(p.valid());
    EXPECT_EQ(p.sourcePaths, (std::vector<std::string>{"one.st", "two.st"}));
    ASSERT_GE(p.diagnostics.size(), 2u);
    EXPECT_EQ(p.sources->file(p.diagnostics.front().span.file).path(), "one.st");
    EXPECT_EQ(p.sources->file(p.diagnostics.back().span.file).path(), "two.st");
    EXPECT_NE(p.model, nullptr);
}

// The body facts a tool needs to re-check one file alone (takt lsp): every call between POUs,
// and each local named from a file other than its declaration's (here through EXTENDS).
TEST(CheckSourcesTest, ModelRecordsCallsAndLocalsUsedFromOtherFiles) {
    Project p = checkSources(
        {{"base.st", "FUNCTION_BLOCK Base\nVAR\n    count : INT;\nEND_VAR\ncount := F(count);\nEND_FUNCTION_BLOCK\n"},
         {"derived.st",
          "FUNCTION_BLOCK Derived EXTENDS Base\nVAR\n    own : INT;\nEND_VAR\nown := count;\n"
          "END_FUNCTION_BLOCK\nFUNCTION F : INT\nVAR_INPUT\n    n : INT;\nEND_VAR\nF := n;\nEND_FUNCTION\n"}});
    ASSERT_TRUE(p.ok()) << (p.diagnostics.empty() ? "" : p.diagnostics.front().message);
    ASSERT_EQ(p.model->calls.size(), 1u);
    EXPECT_EQ(p.model->calls[0].user->name, "Base");
    EXPECT_EQ(p.model->calls[0].used->name, "F");
    EXPECT_EQ(p.model->calls[0].at.file, 0u);
    ASSERT_EQ(p.model->foreignLocalUses.size(), 1u); // `own` and Base's own use of `count` stay home
    EXPECT_EQ(p.model->foreignLocalUses[0].used->name, "count");
    EXPECT_EQ(p.model->foreignLocalUses[0].at.file, 1u);
}

} // namespace
} // namespace takt::compiler
