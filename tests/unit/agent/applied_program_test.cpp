// The program an online change applied, kept for the next start (agent/applied_program.h): what
// is kept is read back as the same programs, only over the same project, and a damaged or foreign
// record is refused with the file and key named.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/compile_text.h"
#include "support/temp_dir.h"
#include "takt/agent/applied_program.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;

test::CompiledText program(int version) {
    test::CompiledText c = test::compileText(
        "PROGRAM Main\nVAR\n    version : INT;\nEND_VAR\nversion := " + std::to_string(version) + ";\nEND_PROGRAM\n");
    EXPECT_TRUE(c.program.ok()) << c.rendered();
    return c;
}

const std::string kHash(64, 'a');

// A project whose fingerprint is `text` for as long as it lives.
std::function<std::string()> project(std::string text) {
    return [text] { return text; };
}

std::vector<std::string> filesIn(const fs::path& dir) {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
        names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

TEST(AppliedProgram, WhatIsKeptIsReadBackAsTheSamePrograms) {
    test::TempDir state;
    const test::CompiledText v1 = program(1);
    const test::CompiledText v2 = program(2);
    const AppliedProgramStore store(state.path(), project("project-1"), v1.program.hash);
    EXPECT_EQ(store.load().outcome, AppliedOutcome::None);

    ASSERT_EQ(store.save(*v2.program.module, v1.program.module.get()), "");
    const AppliedLoad kept = store.load();
    ASSERT_EQ(kept.outcome, AppliedOutcome::Kept) << kept.message;
    EXPECT_EQ(kept.programs.running.hash, v2.program.hash);
    EXPECT_EQ(kept.programs.replaced.hash, v1.program.hash);
    ASSERT_NE(kept.programs.running.module, nullptr);
    EXPECT_EQ(kept.programs.appliedAt.size(), 20U) << kept.programs.appliedAt; // 2026-11-30T19:12:46Z

    // A rollback trades the places; the record then names the same two files, and no other stays.
    ASSERT_EQ(store.save(*v1.program.module, v2.program.module.get()), "");
    const AppliedLoad back = store.load();
    ASSERT_EQ(back.outcome, AppliedOutcome::Kept) << back.message;
    EXPECT_EQ(back.programs.running.hash, v1.program.hash);
    EXPECT_EQ(back.programs.replaced.hash, v2.program.hash);
    std::vector<std::string> expected{v1.program.hash + ".stbc", v2.program.hash + ".stbc", "applied.toml"};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(filesIn(store.directory()), expected);

    // Without a program replaced (none to roll back to), an earlier one's file is removed.
    ASSERT_EQ(store.save(*v2.program.module, nullptr), "");
    const AppliedLoad alone = store.load();
    ASSERT_EQ(alone.outcome, AppliedOutcome::Kept) << alone.message;
    EXPECT_EQ(alone.programs.replaced.module, nullptr);
    EXPECT_FALSE(fs::exists(store.directory() / (v1.program.hash + ".stbc")));
}

// A save that fails part-way (here the new program's file cannot be written) leaves the former
// record and its programs as they were.
TEST(AppliedProgram, AFailedSaveLeavesTheFormerProgramsKept) {
    test::TempDir state;
    const test::CompiledText v1 = program(1);
    const test::CompiledText v2 = program(2);
    const AppliedProgramStore store(state.path(), project("p"), kHash);
    ASSERT_EQ(store.save(*v1.program.module, nullptr), "");
    fs::create_directories(store.directory() / (v2.program.hash + ".stbc")); // a folder in its place
    EXPECT_NE(store.save(*v2.program.module, v1.program.module.get()), "");
    const AppliedLoad load = store.load();
    ASSERT_EQ(load.outcome, AppliedOutcome::Kept) << load.message;
    EXPECT_EQ(load.programs.running.hash, v1.program.hash);
    EXPECT_EQ(load.programs.replaced.module, nullptr);
}

TEST(AppliedProgram, AnotherProjectWinsAndTheKeptProgramsAreMovedAside) {
    test::TempDir state;
    const test::CompiledText v1 = program(1);
    ASSERT_EQ(AppliedProgramStore(state.path(), project("project-1"), kHash).save(*v1.program.module, nullptr), "");
    const AppliedProgramStore edited(state.path(), project("project-2"), kHash);
    const AppliedLoad load = edited.load();
    EXPECT_EQ(load.outcome, AppliedOutcome::ProjectChanged);
    EXPECT_NE(load.message.find(v1.program.hash.substr(0, 16)), std::string::npos) << load.message;
    EXPECT_FALSE(fs::exists(edited.directory()));
    EXPECT_TRUE(fs::exists(state.path() / ".takt" / "applied.discarded" / (v1.program.hash + ".stbc")));
    EXPECT_EQ(edited.load().outcome, AppliedOutcome::None); // said once
}

// The project is remembered as it was when the change was applied, not when takt started: sources
// edited and applied with `takt reload`, then reverted, are a changed project again.
TEST(AppliedProgram, TheProjectIsTheOneTheChangeWasAppliedOver) {
    test::TempDir state;
    const test::CompiledText v1 = program(1);
    const test::CompiledText v2 = program(2);
    std::string sources = "F0";
    const AppliedProgramStore store(
        state.path(), [&sources] { return sources; }, v1.program.hash);
    sources = "F1"; // edited, then reloaded
    ASSERT_EQ(store.save(*v2.program.module, v1.program.module.get()), "");
    EXPECT_EQ(store.load().outcome, AppliedOutcome::Kept);
    sources = "F0"; // reverted
    EXPECT_EQ(store.load().outcome, AppliedOutcome::ProjectChanged);
}

// The everyday loop: the sources edited, then applied with `takt reload`. The project now builds
// the kept program: it runs, and the one it replaced is still there to roll back to.
TEST(AppliedProgram, SourcesThatNowBuildTheKeptProgramAreNoChange) {
    test::TempDir state;
    const test::CompiledText v1 = program(1);
    const test::CompiledText v2 = program(2);
    ASSERT_EQ(AppliedProgramStore(state.path(), project("sources-1"), v1.program.hash)
                  .save(*v2.program.module, v1.program.module.get()),
              "");
    const AppliedLoad load = AppliedProgramStore(state.path(), project("sources-2"), v2.program.hash).load();
    ASSERT_EQ(load.outcome, AppliedOutcome::Kept) << load.message;
    EXPECT_EQ(load.programs.running.hash, v2.program.hash);
    EXPECT_EQ(load.programs.replaced.hash, v1.program.hash);
}

TEST(AppliedProgram, AProgramFileThatIsNotTheOneNamedIsMovedAside) {
    test::TempDir state;
    const test::CompiledText v1 = program(1);
    const test::CompiledText v2 = program(2);
    const AppliedProgramStore store(state.path(), project("p"), kHash);
    ASSERT_EQ(store.save(*v1.program.module, nullptr), "");
    // v1's bytes under v2's name (a file swapped by hand): verified, but not the program named.
    fs::copy_file(store.directory() / (v1.program.hash + ".stbc"), state.path() / "v1.stbc");
    ASSERT_EQ(store.save(*v2.program.module, nullptr), "");
    fs::rename(state.path() / "v1.stbc", store.directory() / (v2.program.hash + ".stbc"));
    const AppliedLoad load = store.load();
    EXPECT_EQ(load.outcome, AppliedOutcome::Unreadable);
    EXPECT_NE(load.message.find(v2.program.hash + ".stbc: holds program " + v1.program.hash), std::string::npos)
        << load.message;
    EXPECT_NE(load.message.find("running the project's program instead"), std::string::npos) << load.message;
    EXPECT_TRUE(fs::exists(state.path() / ".takt" / "applied.unreadable" / "applied.toml"));
    EXPECT_EQ(store.load().outcome, AppliedOutcome::None); // said once
}

// Only the way back is lost when the program to roll back to cannot be read.
TEST(AppliedProgram, ADamagedRollbackProgramLeavesNothingToRollBackTo) {
    test::TempDir state;
    const test::CompiledText v1 = program(1);
    const test::CompiledText v2 = program(2);
    const AppliedProgramStore store(state.path(), project("p"), kHash);
    ASSERT_EQ(store.save(*v2.program.module, v1.program.module.get()), "");
    fs::remove(store.directory() / (v1.program.hash + ".stbc"));
    const AppliedLoad load = store.load();
    ASSERT_EQ(load.outcome, AppliedOutcome::Kept) << load.message;
    EXPECT_EQ(load.programs.running.hash, v2.program.hash);
    EXPECT_EQ(load.programs.replaced.module, nullptr);
    EXPECT_NE(load.message.find("nothing to roll back to"), std::string::npos) << load.message;
}

TEST(AppliedProgram, TheRecordNamesItsFileLineAndKey) {
    AppliedRecord r;
    std::string error;
    const std::string ok = "project = \"p\"\nprogram = \"" + kHash + "\"\napplied_at = \"t\"\n";
    EXPECT_TRUE(parseAppliedRecord(ok, "applied.toml", r, error)) << error;
    EXPECT_EQ(r.program, kHash);
    EXPECT_EQ(r.replaced, "");

    // A hash names a file: a path in its place is refused, not followed.
    EXPECT_FALSE(parseAppliedRecord("project = \"p\"\nprogram = \"../../etc/passwd\"\napplied_at = \"t\"\n",
                                    "applied.toml", r, error));
    EXPECT_EQ(error, "applied.toml:2:11: key 'program': expected a program hash (64 hex digits)");
    EXPECT_FALSE(parseAppliedRecord("project = \"p\"\nprogram = \"" + kHash + "\"\n", "applied.toml", r, error));
    EXPECT_EQ(error, "applied.toml: key 'applied_at' is missing");
    EXPECT_FALSE(parseAppliedRecord("project = 3\n", "applied.toml", r, error));
    EXPECT_EQ(error, "applied.toml:1:11: key 'project': expected a string");
    EXPECT_FALSE(parseAppliedRecord("project = \"p\n", "applied.toml", r, error));
    EXPECT_TRUE(error.starts_with("applied.toml:1:")) << error;
}

TEST(AppliedProgram, ADamagedRecordIsNamedWithItsLine) {
    test::TempDir state;
    const AppliedProgramStore store(state.path(), project("p"), kHash);
    state.write(".takt/applied/applied.toml", "project = \"p\"\nprogram = \"" + kHash.substr(1) + "\"\n");
    const AppliedLoad load = store.load();
    EXPECT_EQ(load.outcome, AppliedOutcome::Unreadable);
    EXPECT_NE(load.message.find((store.directory() / "applied.toml").string() + ":2:"), std::string::npos)
        << load.message;
}

TEST(AppliedProgram, TheFingerprintCoversPathsAndTexts) {
    const SourceText a[] = {{"src/a.st", "x"}, {"src/b.st", "y"}};
    const SourceText moved[] = {{"src/a.st", "xy"}, {"src/b.st", ""}};
    const SourceText renamed[] = {{"src/c.st", "x"}, {"src/b.st", "y"}};
    EXPECT_EQ(projectFingerprint(a).size(), 64U);
    EXPECT_EQ(projectFingerprint(a), projectFingerprint(a));
    EXPECT_NE(projectFingerprint(a), projectFingerprint(moved));
    EXPECT_NE(projectFingerprint(a), projectFingerprint(renamed));
}

} // namespace
} // namespace takt::agent
