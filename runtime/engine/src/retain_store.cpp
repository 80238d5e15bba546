// The A/B slot files of a retain path: loading the newest valid image and replacing the older
// slot crash-safely (retain.h says why by rename).
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <unistd.h>

#include <fmt/format.h>

#include "takt/engine/retain.h"

namespace takt::engine {
namespace {

int negErrno(int rc) {
    return rc < 0 ? -errno : rc;
}

class SystemFileOps final : public FileOps {
public:
    int open(const char* path, int flags, mode_t mode) override { return negErrno(::open(path, flags, mode)); }
    ssize_t write(int fd, const void* data, std::size_t size) override {
        const ssize_t n = ::write(fd, data, size);
        return n < 0 ? -errno : n;
    }
    int fsync(int fd) override { return negErrno(::fsync(fd)); }
    int close(int fd) override { return negErrno(::close(fd)); }
    int rename(const char* from, const char* to) override { return negErrno(::rename(from, to)); }
    int unlink(const char* path) override { return negErrno(::unlink(path)); }
};

std::string describeErrno(std::string_view what, const std::filesystem::path& path, long rc) {
    return fmt::format("retain: {} {}: {}", what, path.string(), std::strerror(static_cast<int>(-rc)));
}

// Reads a whole slot file; false when it does not exist or cannot be read.
bool readFile(const std::filesystem::path& path, std::vector<std::uint8_t>& out, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return false;
    }
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0 || static_cast<std::uint64_t>(size) > kRetainMaxFileSize) {
        error = fmt::format("unreadable or larger than {} bytes", kRetainMaxFileSize);
        return true;
    }
    in.seekg(0, std::ios::beg);
    out.resize(static_cast<std::size_t>(size));
    if (!in.read(reinterpret_cast<char*>(out.data()), size)) {
        error = "read error";
    }
    return true;
}

} // namespace

FileOps& systemFileOps() {
    static SystemFileOps ops;
    return ops;
}

RetainStore::RetainStore(std::filesystem::path path, FileOps& ops) : path_(std::move(path)), ops_(ops) {}

std::filesystem::path RetainStore::slotPath(char slot) const {
    std::filesystem::path p = path_;
    p += slot == 'b' ? ".b" : ".a";
    return p;
}

RetainLoadResult RetainStore::load() {
    RetainLoadResult result;
    sequence_[0] = sequence_[1] = 0;
    std::vector<std::uint8_t> bytes;
    for (int i = 0; i < 2; ++i) {
        const char slot = i == 0 ? 'a' : 'b';
        const std::filesystem::path file = slotPath(slot);
        std::string error;
        bytes.clear();
        if (!readFile(file, bytes, error)) {
            continue; // no such slot yet
        }
        RetainImage image;
        if (error.empty()) {
            (void)decodeRetainSlot(bytes, image, error); // false always comes with an error
        }
        if (!error.empty()) {
            result.rejected.push_back(fmt::format("{}: {}", file.string(), error));
            continue;
        }
        sequence_[i] = image.sequence;
        if (!result.found || image.sequence > result.image.sequence) {
            result.found = true;
            result.slot = slot;
            result.image = std::move(image);
        }
    }
    loaded_ = true;
    return result;
}

bool RetainStore::save(const RetainLayout& layout, std::span<const std::uint8_t> payload, std::string& error) {
    if (!loaded_) {
        (void)load();
    }
    // The older slot (or one that holds no valid image) is replaced; the newer one stays.
    const int target = sequence_[0] <= sequence_[1] ? 0 : 1;
    const std::uint64_t sequence = lastSequence() + 1;
    encodeRetainSlot(layout, payload, sequence, buffer_);

    const std::filesystem::path slot = slotPath(target == 0 ? 'a' : 'b');
    std::filesystem::path tmp = slot;
    tmp += ".tmp";
    std::filesystem::path dir = path_.parent_path();
    if (dir.empty()) {
        dir = ".";
    }
    std::error_code ec;
    std::filesystem::create_directories(dir, ec); // a failure shows up as the open's error

    // Owner-only: the image holds the process's RETAIN data (setpoints, counters, recipes). A
    // temp file left by a crash (perhaps by an older takt, with wider permissions) is replaced,
    // not reused, so the slot never inherits its mode; O_EXCL also refuses a planted symlink.
    (void)ops_.unlink(tmp.c_str());
    const int fd = ops_.open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        error = describeErrno("open", tmp, fd);
        return false;
    }
    // From here on a failure abandons this descriptor and this file for good.
    const auto abandon = [&](std::string_view what, long rc) {
        error = describeErrno(what, tmp, rc);
        (void)ops_.close(fd);
        (void)ops_.unlink(tmp.c_str());
        return false;
    };
    std::size_t done = 0;
    while (done < buffer_.size()) {
        const ssize_t n = ops_.write(fd, buffer_.data() + done, buffer_.size() - done);
        if (n == -EINTR) {
            continue;
        }
        if (n <= 0) {
            return abandon("write", n == 0 ? -EIO : n);
        }
        done += static_cast<std::size_t>(n);
    }
    if (const int rc = ops_.fsync(fd); rc < 0) {
        return abandon("fsync", rc);
    }
    if (const int rc = ops_.close(fd); rc < 0) {
        error = describeErrno("close", tmp, rc);
        (void)ops_.unlink(tmp.c_str());
        return false;
    }
    if (const int rc = ops_.rename(tmp.c_str(), slot.c_str()); rc < 0) {
        error = describeErrno("rename to " + slot.string() + " from", tmp, rc);
        (void)ops_.unlink(tmp.c_str());
        return false;
    }
    sequence_[target] = sequence; // the slot now holds the new image, durable or not

    // The rename is durable only once the directory is.
    const int dfd = ops_.open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (dfd < 0) {
        error = describeErrno("open directory", dir, dfd);
        return false;
    }
    const int rc = ops_.fsync(dfd);
    (void)ops_.close(dfd);
    if (rc < 0) {
        error = describeErrno("fsync directory", dir, rc);
        return false;
    }
    return true;
}

} // namespace takt::engine
