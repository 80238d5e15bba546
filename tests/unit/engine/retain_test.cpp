// Retain: the slot format, A/B slot selection, layout changes, I/O faults during saves and the
// writer thread.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <sys/stat.h>

#include "module_builder.h"
#include "support/temp_dir.h"
#include "takt/engine/engine.h"
#include "takt/engine/retain.h"

namespace takt::engine {
namespace {

using testing::ModuleBuilder;
using testing::peek;
using testing::poke;

std::span<const std::uint8_t> bytesOf(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

TEST(Crc32c, MatchesTheCastagnoliCheckValue) {
    EXPECT_EQ(crc32c(bytesOf("123456789")), 0xE3069283U);
    EXPECT_EQ(crc32c({}), 0U);
    EXPECT_EQ(crc32c(bytesOf("56789"), crc32c(bytesOf("1234"))), 0xE3069283U);
    EXPECT_EQ(crc32c(bytesOf(std::string(32, '\0'))), 0x8A9136AAU); // RFC 3720 B.4
}

// A program with RETAIN and non-RETAIN globals and a program instance whose FB is RETAIN.
struct Fixture {
    explicit Fixture(bool changed = false) {
        const auto dint = b.elementary(bytecode::ValueKind::DInt, "DINT", 4);
        const auto real = b.elementary(bytecode::ValueKind::Real, "REAL", 4);
        const auto intT = b.elementary(bytecode::ValueKind::Int, "INT", 2);
        const auto ton = b.composite(bytecode::ValueKind::FunctionBlock, "TON", {{"ET", dint}, {"Q", dint}});
        const auto prog = b.composite(bytecode::ValueKind::Program, "MainProg", {{"fb", ton}, {"x", dint}});
        counter = b.global("counter", dint, true);
        scratch = b.global("scratch", dint, false);
        if (changed) {
            // `level` changed its type, `old` is gone, `fresh` is new.
            level = b.global("level", real, true);
            fresh = b.global("fresh", dint, true);
        } else {
            level = b.global("level", intT, true);
            old = b.global("old", dint, true);
        }
        b.program("Main", prog, bytecode::kNone, {"fb"});
        main = b.m.programs.back().offset;
    }
    std::unique_ptr<LoadedProgram> load() {
        auto p = std::make_unique<LoadedProgram>(b.build(), "");
        p->resetToInitialImage();
        return p;
    }
    ModuleBuilder b;
    std::uint32_t counter = 0, scratch = 0, level = 0, old = 0, fresh = 0, main = 0;
};

std::vector<std::uint8_t> snapshot(const RetainLayout& layout, const LoadedProgram& p) {
    std::vector<std::uint8_t> payload(layout.payloadSize());
    layout.capture(p.image(), payload);
    return payload;
}

TEST(RetainLayout, CoversRetainVariablesOnly) {
    Fixture f;
    const RetainLayout layout(f.b.m);
    // counter 4 + level 2 + old 4 + Main.fb (two DINTs, 8-byte slots) 16
    EXPECT_EQ(layout.payloadSize(), 4U + 2U + 4U + 16U);
    // the four plus Main.fb.ET and Main.fb.Q described inside Main.fb's block
    EXPECT_EQ(layout.entryCount(), 6U);
    EXPECT_EQ(layout.hash(), RetainLayout(Fixture().b.m).hash());
    EXPECT_NE(layout.hash(), RetainLayout(Fixture(true).b.m).hash());
}

TEST(RetainSlot, RoundTripsAndRejectsDamage) {
    Fixture f;
    auto p = f.load();
    poke<std::int32_t>(p->image(), f.counter, 42);
    const RetainLayout layout(f.b.m);
    std::vector<std::uint8_t> file;
    encodeRetainSlot(layout, snapshot(layout, *p), 7, file);

    RetainImage image;
    std::string error;
    ASSERT_TRUE(decodeRetainSlot(file, image, error)) << error;
    EXPECT_EQ(image.sequence, 7U);
    EXPECT_EQ(image.layoutHash, layout.hash());
    EXPECT_EQ(image.layout.variables.size(), 6U);

    for (std::size_t at : {std::size_t{0}, std::size_t{20}, std::size_t{44}, file.size() / 2, file.size() - 1}) {
        auto damaged = file;
        damaged[at] ^= 0x01;
        EXPECT_FALSE(decodeRetainSlot(damaged, image, error)) << "flip at " << at;
    }
    EXPECT_FALSE(decodeRetainSlot(std::span(file).first(file.size() - 1), image, error));
    EXPECT_NE(error.find("length mismatch"), std::string::npos) << error;
    auto padded = file;
    padded.push_back(0);
    EXPECT_FALSE(decodeRetainSlot(padded, image, error));
    EXPECT_FALSE(decodeRetainSlot(std::span(file).first(10), image, error));
    EXPECT_EQ(error, "truncated header (10 bytes)");
}

std::vector<std::uint8_t> readAll(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(RetainStore, SavesAlternateSlotsAndLoadPicksTheNewest) {
    test::TempDir dir;
    Fixture f;
    auto p = f.load();
    const RetainLayout layout(f.b.m);
    RetainStore store(dir.path() / ".takt" / "retain");
    EXPECT_FALSE(store.load().found);
    std::string error;
    for (std::int32_t v = 1; v <= 3; ++v) {
        poke<std::int32_t>(p->image(), f.counter, v);
        ASSERT_TRUE(store.save(layout, snapshot(layout, *p), error)) << error;
    }
    EXPECT_TRUE(std::filesystem::exists(store.slotPath('a')));
    EXPECT_TRUE(std::filesystem::exists(store.slotPath('b')));
    EXPECT_FALSE(std::filesystem::exists(store.slotPath('a').string() + ".tmp"));

    RetainStore reader(store.path());
    RetainLoadResult r = reader.load();
    ASSERT_TRUE(r.found);
    EXPECT_EQ(r.image.sequence, 3U);
    EXPECT_EQ(r.slot, 'a'); // 1 -> a, 2 -> b, 3 -> a
    EXPECT_TRUE(r.rejected.empty());

    auto fresh = f.load();
    const RetainApplyReport applied = applyRetainImage(r.image, *fresh);
    EXPECT_EQ(peek<std::int32_t>(fresh->image(), f.counter), 3);
    EXPECT_TRUE(applied.dropped.empty());
    EXPECT_FALSE(applied.layoutChanged);

    // Damage the newest slot: the older one (sequence 2) is what loads now.
    auto bytes = readAll(store.slotPath('a'));
    bytes[bytes.size() - 3] ^= 0xFF;
    std::ofstream(store.slotPath('a'), std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    r = reader.load();
    ASSERT_TRUE(r.found);
    EXPECT_EQ(r.image.sequence, 2U);
    ASSERT_EQ(r.rejected.size(), 1U);
    EXPECT_NE(r.rejected[0].find("retain.a: CRC mismatch"), std::string::npos) << r.rejected[0];
    // The next save replaces the damaged slot, not the valid one.
    poke<std::int32_t>(p->image(), f.counter, 4);
    ASSERT_TRUE(reader.save(layout, snapshot(layout, *p), error)) << error;
    r = RetainStore(store.path()).load();
    EXPECT_EQ(r.image.sequence, 3U);
    EXPECT_EQ(r.slot, 'a');
    EXPECT_TRUE(r.rejected.empty());
}

TEST(RetainApply, RestoresOnlyRetainAndKeepsMatchesAcrossALayoutChange) {
    Fixture f;
    auto p = f.load();
    poke<std::int32_t>(p->image(), f.counter, 11);
    poke<std::int32_t>(p->image(), f.scratch, 12);
    poke<std::int16_t>(p->image(), f.level, 13);
    poke<std::int32_t>(p->image(), f.old, 14);
    poke<std::int32_t>(p->image(), f.main, 15);      // Main.fb.ET
    poke<std::int32_t>(p->image(), f.main + 8, 16);  // Main.fb.Q
    poke<std::int32_t>(p->image(), f.main + 16, 17); // Main.x, not RETAIN
    const RetainLayout layout(f.b.m);
    std::vector<std::uint8_t> file;
    encodeRetainSlot(layout, snapshot(layout, *p), 1, file);
    RetainImage image;
    std::string error;
    ASSERT_TRUE(decodeRetainSlot(file, image, error)) << error;

    auto same = f.load();
    RetainApplyReport r = applyRetainImage(image, *same);
    EXPECT_EQ(peek<std::int32_t>(same->image(), f.counter), 11);
    EXPECT_EQ(peek<std::int32_t>(same->image(), f.scratch), 0);
    EXPECT_EQ(peek<std::int16_t>(same->image(), f.level), 13);
    EXPECT_EQ(peek<std::int32_t>(same->image(), f.main), 15);
    EXPECT_EQ(peek<std::int32_t>(same->image(), f.main + 8), 16);
    EXPECT_EQ(peek<std::int32_t>(same->image(), f.main + 16), 0);
    EXPECT_TRUE(r.dropped.empty());

    Fixture g(true);
    auto changed = g.load();
    r = applyRetainImage(image, *changed);
    EXPECT_TRUE(r.layoutChanged);
    EXPECT_EQ(peek<std::int32_t>(changed->image(), g.counter), 11);
    EXPECT_EQ(peek<float>(changed->image(), g.level), 0.0F) << "a retyped variable keeps its initial value";
    EXPECT_EQ(peek<std::int32_t>(changed->image(), g.fresh), 0);
    EXPECT_EQ(peek<std::int32_t>(changed->image(), g.main + 8), 16);
    EXPECT_EQ(r.dropped, (std::vector<std::string>{"level", "old"}));
}

// The slots hold the process's RETAIN data: owner-only, also when a crash left a temp file with
// wider permissions behind (it is replaced, not reused) and whatever the umask lets through.
TEST(RetainStore, SlotFilesAreCreatedOwnerOnly) {
    const mode_t oldMask = ::umask(022);
    test::TempDir dir;
    Fixture f;
    auto p = f.load();
    const RetainLayout layout(f.b.m);
    RetainStore store(dir.path() / ".takt" / "retain");
    std::filesystem::create_directories(dir.path() / ".takt");
    const std::string staleTmp = store.slotPath('b').string() + ".tmp";
    std::ofstream(staleTmp) << "left by a crash";
    ::chmod(staleTmp.c_str(), 0644);
    std::string error;
    for (std::int32_t v = 1; v <= 2; ++v) {
        poke<std::int32_t>(p->image(), f.counter, v);
        ASSERT_TRUE(store.save(layout, snapshot(layout, *p), error)) << error;
    }
    ::umask(oldMask);
    for (const char slot : {'a', 'b'}) {
        struct stat st {};
        ASSERT_EQ(::stat(store.slotPath(slot).c_str(), &st), 0) << slot;
        EXPECT_EQ(st.st_mode & 0777, 0600U) << "retain." << slot << " has mode " << std::oct << (st.st_mode & 0777);
    }
    EXPECT_EQ(RetainStore(store.path()).load().image.sequence, 2U);
}

// File operations that fail on demand and record what was done to which descriptor.
class FaultyOps final : public FileOps {
public:
    std::atomic<int> writeErrno{0}; // fail every write (after writing half of the first chunk)
    std::atomic<int> fsyncErrno{0}; // fail fsync of files (not directories)
    int open(const char* path, int flags, mode_t mode) override {
        const int fd = systemFileOps().open(path, flags, mode);
        const std::lock_guard lock(mutex_);
        if (fd >= 0) {
            directories_[fd] = (flags & O_DIRECTORY) != 0;
        }
        return fd;
    }
    ssize_t write(int fd, const void* data, std::size_t size) override {
        if (const int e = writeErrno.load(); e != 0) {
            if (size > 1) {
                (void)systemFileOps().write(fd, data, size / 2); // a torn write, then the error
            }
            return -e;
        }
        return systemFileOps().write(fd, data, size);
    }
    int fsync(int fd) override {
        const std::lock_guard lock(mutex_);
        ++fsyncs_[fd];
        if (fsyncs_[fd] > 1) {
            refsynced_ = true;
        }
        if (const int e = fsyncErrno.load(); e != 0 && !directories_[fd]) {
            return -e;
        }
        return systemFileOps().fsync(fd);
    }
    int close(int fd) override {
        const std::lock_guard lock(mutex_);
        fsyncs_.erase(fd);
        directories_.erase(fd);
        ++closes_;
        return systemFileOps().close(fd);
    }
    int rename(const char* from, const char* to) override { return systemFileOps().rename(from, to); }
    int unlink(const char* path) override { return systemFileOps().unlink(path); }

    [[nodiscard]] bool refsynced() const {
        const std::lock_guard lock(mutex_);
        return refsynced_;
    }
    [[nodiscard]] std::size_t openDescriptors() const {
        const std::lock_guard lock(mutex_);
        return directories_.size();
    }

private:
    mutable std::mutex mutex_;
    std::map<int, int> fsyncs_;
    std::map<int, bool> directories_;
    int closes_ = 0;
    bool refsynced_ = false;
};

TEST(RetainStore, FailedWriteOrFsyncKeepsThePreviousImage) {
    for (const int failure : {ENOSPC, EIO}) {
        for (const bool inFsync : {false, true}) {
            SCOPED_TRACE(std::string(inFsync ? "fsync " : "write ") + std::strerror(failure));
            test::TempDir dir;
            Fixture f;
            auto p = f.load();
            const RetainLayout layout(f.b.m);
            FaultyOps ops;
            RetainStore store(dir.path() / "retain", ops);
            std::string error;
            for (std::int32_t v = 1; v <= 2; ++v) {
                poke<std::int32_t>(p->image(), f.counter, v);
                ASSERT_TRUE(store.save(layout, snapshot(layout, *p), error)) << error;
            }
            (inFsync ? ops.fsyncErrno : ops.writeErrno) = failure;
            for (int attempt = 0; attempt < 3; ++attempt) {
                poke<std::int32_t>(p->image(), f.counter, 100 + attempt);
                EXPECT_FALSE(store.save(layout, snapshot(layout, *p), error));
                EXPECT_NE(error.find(std::strerror(failure)), std::string::npos) << error;
                EXPECT_NE(error.find(inFsync ? "fsync" : "write"), std::string::npos) << error;
                RetainLoadResult r = RetainStore(store.path()).load();
                ASSERT_TRUE(r.found);
                EXPECT_EQ(r.image.sequence, 2U);
                EXPECT_TRUE(r.rejected.empty()) << r.rejected[0];
                auto restored = f.load();
                (void)applyRetainImage(r.image, *restored);
                EXPECT_EQ(peek<std::int32_t>(restored->image(), f.counter), 2);
            }
            EXPECT_FALSE(ops.refsynced()) << "a descriptor was fsync'ed again";
            EXPECT_EQ(ops.openDescriptors(), 0U);
            EXPECT_FALSE(std::filesystem::exists(store.slotPath('a').string() + ".tmp"));
            EXPECT_FALSE(std::filesystem::exists(store.slotPath('b').string() + ".tmp"));

            ops.writeErrno = 0;
            ops.fsyncErrno = 0;
            poke<std::int32_t>(p->image(), f.counter, 7);
            ASSERT_TRUE(store.save(layout, snapshot(layout, *p), error)) << error;
            RetainLoadResult r = RetainStore(store.path()).load();
            EXPECT_EQ(r.image.sequence, 3U);
        }
    }
}

TEST(RetainWriter, SavesChangedSnapshotsAndSurvivesIoErrors) {
    test::TempDir dir;
    Fixture f;
    auto p = f.load();
    FaultyOps ops;
    RetainStore store(dir.path() / "retain", ops);
    (void)store.load();
    RetainWriter writer(store, RetainLayout(f.b.m), 5);
    writer.start();
    std::string error;
    EXPECT_TRUE(writer.flush(error)) << "nothing submitted yet: nothing to do";
    EXPECT_EQ(writer.stats().saves, 0U);

    for (std::int32_t v = 1; v <= 50; ++v) {
        poke<std::int32_t>(p->image(), f.counter, v);
        writer.submit(p->image());
    }
    ASSERT_TRUE(writer.flush(error)) << error;
    const RetainWriter::Stats s1 = writer.stats();
    EXPECT_GE(s1.saves, 1U);
    EXPECT_EQ(RetainStore(store.path()).load().image.sequence, s1.lastSequence);
    auto restored = f.load();
    (void)applyRetainImage(RetainStore(store.path()).load().image, *restored);
    EXPECT_EQ(peek<std::int32_t>(restored->image(), f.counter), 50);

    // An unchanged snapshot is not written again.
    writer.submit(p->image());
    ASSERT_TRUE(writer.flush(error));
    EXPECT_EQ(writer.stats().saves, s1.saves);

    // The disk fills up: saves fail, the writer keeps running, the last image stays.
    ops.writeErrno = ENOSPC;
    poke<std::int32_t>(p->image(), f.counter, 51);
    writer.submit(p->image());
    EXPECT_FALSE(writer.flush(error));
    EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
    EXPECT_GE(writer.stats().failures, 1U);
    EXPECT_EQ(writer.stats().lastError, error);
    EXPECT_EQ(RetainStore(store.path()).load().image.sequence, s1.lastSequence);

    ops.writeErrno = 0;
    ASSERT_TRUE(writer.flush(error)) << error; // the same snapshot, now written
    EXPECT_TRUE(writer.stats().lastError.empty());
    restored = f.load();
    (void)applyRetainImage(RetainStore(store.path()).load().image, *restored);
    EXPECT_EQ(peek<std::int32_t>(restored->image(), f.counter), 51);

    // stop() writes what was submitted last.
    poke<std::int32_t>(p->image(), f.counter, 52);
    writer.submit(p->image());
    writer.stop();
    restored = f.load();
    (void)applyRetainImage(RetainStore(store.path()).load().image, *restored);
    EXPECT_EQ(peek<std::int32_t>(restored->image(), f.counter), 52);
}

TEST(RetainWarmStart, WarmRestoresRetainColdDoesNot) {
    test::TempDir dir;
    Fixture f;
    testing::ScriptedRunner* runner = nullptr;
    VirtualClock clock;
    auto makeEngine = [&] {
        auto r = std::make_unique<testing::ScriptedRunner>();
        runner = r.get();
        return std::make_unique<Engine>(std::move(r), clock);
    };
    (void)runner;
    RetainStore store(dir.path() / "retain");
    {
        auto engine = makeEngine();
        FaultReport report;
        ASSERT_TRUE(engine->load(f.load(), report));
        poke<std::int32_t>(engine->program().image(), f.counter, 99);
        poke<std::int32_t>(engine->program().image(), f.scratch, 98);
        RetainWriter writer(store, RetainLayout(engine->program().module()), 1000);
        writer.start();
        writer.submit(engine->program().image());
        writer.stop(); // orderly shutdown
    }
    for (const RestartMode mode : {RestartMode::Warm, RestartMode::Cold}) {
        auto engine = makeEngine();
        FaultReport report;
        ASSERT_TRUE(engine->load(f.load(), report));
        RetainStore reader(store.path());
        const RetainLoadResult loaded = reader.load();
        ASSERT_TRUE(loaded.found);
        if (mode == RestartMode::Warm) {
            (void)applyRetainImage(loaded.image, engine->program());
        }
        EXPECT_EQ(peek<std::int32_t>(engine->program().image(), f.counter), mode == RestartMode::Warm ? 99 : 0);
        EXPECT_EQ(peek<std::int32_t>(engine->program().image(), f.scratch), 0);
    }
}

} // namespace
} // namespace takt::engine
