#pragma once
// Crash-safe RETAIN storage (TARGETS.md "Reliability"): A/B slot files `<path>.a` and
// `<path>.b`, each a complete image with a header (magic, version, layout hash, sequence,
// length, CRC32C). A save replaces the older slot, so the newer one stays intact whatever
// happens during the write; load picks the newest slot whose CRC checks out.
//
// A slot holds the RETAIN variables by path with their type signatures, not a raw image, so a
// program whose layout changed still gets every variable that kept its path, by the rules of
// online change (transfer.h): an unchanged type is copied, an ENUM kept by value name, a widened
// elementary type or STRING converted (what those need is read back from the signature); the
// others are reported as dropped.
//
// Who calls what in `takt run`:
//   start-up   RetainStore::load(); on a warm start applyRetainImage() to the loaded program
//   scan       RetainWriter::submit(image) at a cycle boundary: a memcpy into a preallocated
//              buffer and an atomic exchange, nothing else
//   shutdown   after the last cycle: submit() once more, then RetainWriter::flush()
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <thread>
#include <vector>

#include "takt/bytecode/module.h"
#include "takt/engine/program.h"

namespace takt::engine {

// CRC-32C (Castagnoli, reflected 0x82F63B78), as iSCSI/ext4 use it. `crc` chains calls.
[[nodiscard]] std::uint32_t crc32c(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0) noexcept;

// The file system calls a save makes, behind an interface so tests can fail them (ENOSPC,
// EIO). Each returns what the POSIX call returns, with -errno in place of -1 + errno.
class FileOps {
public:
    virtual ~FileOps() = default;
    virtual int open(const char* path, int flags, mode_t mode) = 0;
    virtual ssize_t write(int fd, const void* data, std::size_t size) = 0;
    virtual int fsync(int fd) = 0;
    virtual int close(int fd) = 0;
    virtual int rename(const char* from, const char* to) = 0;
    virtual int unlink(const char* path) = 0;
};
[[nodiscard]] FileOps& systemFileOps();

// Which bytes of a program's data image are RETAIN and how a slot file describes them. Built
// once per program, off the scan thread.
class RetainLayout {
public:
    RetainLayout() = default;
    explicit RetainLayout(const bytecode::Module& module);

    [[nodiscard]] bool empty() const { return blocks_.empty(); }
    [[nodiscard]] std::size_t payloadSize() const { return payloadSize_; }
    [[nodiscard]] std::size_t entryCount() const { return entryCount_; }
    // FNV-1a 64 of the encoded entry table: equal for equal RETAIN layouts.
    [[nodiscard]] std::uint64_t hash() const { return hash_; }
    [[nodiscard]] std::span<const std::uint8_t> table() const { return table_; }
    // Copies the RETAIN bytes of a data image into `payload` (payloadSize() bytes). No
    // allocation; safe on the scan thread.
    void capture(const std::uint8_t* image, std::span<std::uint8_t> payload) const noexcept;

private:
    struct Block {
        std::uint32_t imageOffset;
        std::uint32_t payloadOffset;
        std::uint32_t size;
    };
    std::vector<Block> blocks_; // outermost RETAIN variables; members live inside them
    std::vector<std::uint8_t> table_;
    std::size_t payloadSize_ = 0;
    std::size_t entryCount_ = 0;
    std::uint64_t hash_ = 0;
};

// One decoded slot file.
struct RetainImage {
    std::uint64_t sequence = 0;
    std::uint64_t layoutHash = 0;
    bytecode::Module layout; // the saved variables: types (signatures) + variables (payload offsets)
    std::vector<std::uint8_t> payload;
};

inline constexpr std::size_t kRetainHeaderSize = 48;
inline constexpr std::size_t kRetainMaxFileSize = 256u * 1024u * 1024u;

// Encodes a complete slot file (header + entry table + payload) into `out` (resized; reuse the
// vector to avoid allocating on every save).
void encodeRetainSlot(const RetainLayout& layout, std::span<const std::uint8_t> payload, std::uint64_t sequence,
                      std::vector<std::uint8_t>& out);
// Decodes and checks one slot file. False with a reason ("bad magic", "CRC mismatch", ...) for
// anything that is not a complete image written by encodeRetainSlot.
[[nodiscard]] bool decodeRetainSlot(std::span<const std::uint8_t> bytes, RetainImage& out, std::string& error);

struct RetainLoadResult {
    bool found = false; // a valid slot exists; `image` is the newest
    char slot = 0;      // 'a' or 'b'
    RetainImage image;
    std::vector<std::string> rejected; // "<path>.b: CRC mismatch" for each unusable slot that exists
};

// The two slot files of one retain path.
class RetainStore {
public:
    explicit RetainStore(std::filesystem::path path, FileOps& ops = systemFileOps());

    [[nodiscard]] const std::filesystem::path& path() const { return path_; }
    [[nodiscard]] std::filesystem::path slotPath(char slot) const;

    // Reads both slots and picks the valid one with the highest sequence. Also what the next
    // save() continues from, so call it before saving into an existing store.
    RetainLoadResult load();

    // Writes a new image into the older slot: `<slot>.tmp` is written and fsync'ed, renamed
    // over the slot, and the directory is fsync'ed. Replacing by rename keeps both slots
    // complete images at every instant (a crash leaves at most a stray .tmp), so even the
    // older image survives a save that dies half-way. A failed write or fsync abandons that
    // descriptor and its file (after a failed fsync the kernel may have dropped the dirty pages
    // and a second fsync could report success for data that never reached the disk); the next
    // save starts over with a new file. False with `error` naming the file and the errno text;
    // the previous image stays the newest valid one.
    bool save(const RetainLayout& layout, std::span<const std::uint8_t> payload, std::string& error);

    [[nodiscard]] std::uint64_t lastSequence() const { return std::max(sequence_[0], sequence_[1]); }

private:
    std::filesystem::path path_;
    FileOps& ops_;
    std::uint64_t sequence_[2] = {0, 0}; // per slot: sequence of its valid image, 0 = none
    bool loaded_ = false;
    std::vector<std::uint8_t> buffer_;
};

struct RetainApplyReport {
    std::uint32_t restored = 0;       // variables (or whole instances) restored
    std::vector<std::string> dropped; // saved variables the program no longer has (or retyped)
    bool layoutChanged = false;       // the image was saved by a program with another RETAIN layout
};

// Copies the RETAIN variables of `image` into `program`'s data image (warm start, after the
// program was cold-initialised). Variables are matched by path with the online-change rules
// (computeTransferPlan); only variables RETAIN in `program` are written.
RetainApplyReport applyRetainImage(const RetainImage& image, LoadedProgram& program);

// The low-priority thread that writes retain images. The scan thread hands it snapshots with
// submit(); it saves every `saveIntervalMs` when the newest snapshot differs from the last one
// saved, and on flush(). A failed save is counted and retried at the next interval with a new
// file; the thread keeps running.
class RetainWriter {
public:
    struct Stats {
        std::uint64_t saves = 0;
        std::uint64_t failures = 0;
        std::uint64_t lastSequence = 0;
        std::string lastError; // empty after a successful save
    };

    RetainWriter(RetainStore& store, RetainLayout layout, std::int64_t saveIntervalMs);
    ~RetainWriter();
    RetainWriter(const RetainWriter&) = delete;
    RetainWriter& operator=(const RetainWriter&) = delete;

    // Starts the thread (normal scheduling class, nice +10, whatever the creating thread had).
    void start();

    // Scan thread: snapshot the RETAIN bytes of `image`. Never blocks, never allocates: the
    // snapshot goes into a free one of three preallocated buffers and is published with one
    // atomic exchange (a triple buffer, so the scan never waits for a save in progress).
    void submit(const std::uint8_t* image) noexcept;

    // Any other thread: saves the newest snapshot now if it differs from the last saved one and
    // waits for that save. True when the newest snapshot is on disk.
    bool flush(std::string& error);

    // Stops the thread after a final save of the newest snapshot. Idempotent.
    void stop();

    [[nodiscard]] Stats stats() const;
    [[nodiscard]] const RetainLayout& layout() const { return layout_; }

private:
    void run();
    bool saveLatest(std::string& error); // writer thread (or flush with the thread stopped)

    static constexpr std::uint32_t kFresh = 4; // flag in slot indices: published, not yet taken

    RetainStore& store_;
    RetainLayout layout_;
    std::int64_t intervalMs_;
    std::vector<std::uint8_t> buffers_[3];
    std::uint32_t scanBuffer_ = 0;         // scan thread only
    std::atomic<std::uint32_t> middle_{1}; // exchanged buffer (+ kFresh when published)
    std::uint32_t writerBuffer_ = 2;       // writer side only
    std::vector<std::uint8_t> lastSaved_;
    bool haveSnapshot_ = false;
    bool haveSaved_ = false;

    mutable std::mutex mutex_; // writer thread and control threads; never the scan thread
    std::condition_variable wake_;
    std::condition_variable done_;
    bool stopping_ = false;
    std::uint64_t flushRequests_ = 0;
    std::uint64_t flushesDone_ = 0;
    bool lastFlushOk_ = true;
    std::string lastFlushError_;
    Stats stats_;
    std::thread thread_;
    std::mutex saveMutex_; // serialises saveLatest between the thread and a stopped-thread flush
};

} // namespace takt::engine
