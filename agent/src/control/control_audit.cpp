// The audit log's file handling: time stamps, rotation by size and the summing up of repeated
// rejections (control_audit.h says why).
#include "control/control_audit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

namespace takt::agent::detail {

namespace {

// "2026-11-22T04:01:02.123Z"
std::string stampNow() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t secs = std::chrono::system_clock::to_time_t(now);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    return fmt::format("{}.{:03}Z", stamp, ms);
}

} // namespace

AuditLog::~AuditLog() {
    flush(Clock::now(), true);
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

bool AuditLog::open(std::string path, std::uint64_t maxBytes, std::uint32_t keep, std::string& error) {
    path_ = std::move(path);
    maxBytes_ = maxBytes;
    keep_ = keep;
    if (!reopen()) {
        error = fmt::format("audit log '{}': {}", path_, std::strerror(errno));
        return false;
    }
    return true;
}

bool AuditLog::reopen() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0600);
    if (fd_ < 0) {
        return false;
    }
    struct stat st {};
    if (::fstat(fd_, &st) == 0) {
        size_ = static_cast<std::uint64_t>(st.st_size);
        // A file made by an older takt or by hand may be readable by others: the log names
        // peers, roles and methods, so it is made owner-only.
        if ((st.st_mode & 077) != 0) {
            (void)::fchmod(fd_, st.st_mode & 0700);
        }
    }
    return true;
}

void AuditLog::record(std::string_view body, bool rejection, Clock::time_point now) {
    if (fd_ < 0) {
        return;
    }
    flush(now);
    if (rejection) {
        const auto it = std::find_if(repeats_.begin(), repeats_.end(), [&](const Repeat& r) { return r.body == body; });
        if (it != repeats_.end()) {
            ++it->count;
            return;
        }
        if (repeats_.size() >= kMaxTracked) {
            flush(now, true);
        }
        repeats_.push_back({std::string(body), 0, now});
    }
    write(body, {});
}

void AuditLog::flush(Clock::time_point now, bool all) {
    if (repeats_.empty()) {
        return;
    }
    // The oldest windows are first; each ends one window after its line was written.
    auto end = repeats_.begin();
    while (end != repeats_.end() && (all || now - end->since >= kRepeatWindow)) {
        if (end->count > 0) {
            write(end->body, fmt::format(" repeated {} times", end->count));
        }
        ++end;
    }
    repeats_.erase(repeats_.begin(), end);
}

void AuditLog::write(std::string_view body, std::string_view suffix) {
    if (fd_ < 0) {
        return;
    }
    line_ = stampNow();
    line_ += ' ';
    line_ += body;
    line_ += suffix;
    line_ += '\n';
    if (size_ > 0 && size_ + line_.size() > maxBytes_) {
        rotate();
        if (fd_ < 0) {
            return;
        }
    }
    // One write per line: O_APPEND keeps lines whole even when several processes share the file.
    const ssize_t n = ::write(fd_, line_.data(), line_.size());
    if (n > 0) {
        size_ += static_cast<std::uint64_t>(n);
    }
}

// audit.log.(N-1) -> audit.log.N, ..., audit.log -> audit.log.1; the oldest is overwritten.
void AuditLog::rotate() {
    for (std::uint32_t i = keep_; i > 1; --i) {
        (void)::rename(fmt::format("{}.{}", path_, i - 1).c_str(), fmt::format("{}.{}", path_, i).c_str());
    }
    if (keep_ > 0) {
        (void)::rename(path_.c_str(), (path_ + ".1").c_str());
    } else {
        (void)::unlink(path_.c_str());
    }
    // When the file cannot be made again, auditing stops rather than the endpoint.
    (void)reopen();
}

} // namespace takt::agent::detail
