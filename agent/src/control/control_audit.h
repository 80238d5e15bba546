#pragma once
// The control endpoint's audit log: one line per request, bounded on disk. The file is rotated
// by size (audit.log -> audit.log.1 -> ... -> audit.log.N, the oldest dropped), and a rejection
// repeated by the same peer (a flood of rate-limited or unauthorized requests) is written once,
// then summed up as "... repeated N times" at the end of a one-second window, so a hostile
// client can neither fill the disk nor bury the lines that matter.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "control/control_auth.h"

namespace takt::agent::detail {

class AuditLog {
public:
    static constexpr auto kRepeatWindow = std::chrono::seconds(1);
    static constexpr std::size_t kMaxTracked = 64; // distinct rejections summed up at a time

    AuditLog() = default;
    ~AuditLog();
    AuditLog(const AuditLog&) = delete;
    AuditLog& operator=(const AuditLog&) = delete;

    // Opens (appends to) `path`, mode 0600. Rotates when a line would take the file past
    // `maxBytes`, keeping `keep` older files. False with `error` naming the file.
    bool open(std::string path, std::uint64_t maxBytes, std::uint32_t keep, std::string& error);
    [[nodiscard]] bool isOpen() const { return fd_ >= 0; }

    // One request: `body` is the line without its time stamp; `rejection` when it was refused.
    void record(std::string_view body, bool rejection, Clock::time_point now);
    // Writes the summary of every repeat window that has ended (all of them with `all`).
    void flush(Clock::time_point now, bool all = false);

private:
    struct Repeat {
        std::string body;
        std::uint64_t count = 0; // suppressed since the line was written
        Clock::time_point since;
    };
    void write(std::string_view body, std::string_view suffix);
    void rotate();
    bool reopen();

    int fd_ = -1;
    std::string path_;
    std::uint64_t maxBytes_ = 0;
    std::uint32_t keep_ = 0;
    std::uint64_t size_ = 0;
    std::vector<Repeat> repeats_;
    std::string line_;
};

} // namespace takt::agent::detail
