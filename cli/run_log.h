#pragma once
// The log of `takt run`. On a terminal or in a file each line is "<time> <level> <message>".
// When stderr is the journal's stream (systemd sets JOURNAL_STREAM to its device:inode,
// systemd.exec(5)), each line starts with its syslog priority instead ("<4>warning …"): journald
// strips the prefix and files the line at that priority, so `journalctl -u takt -p warning`
// shows the warnings and errors only; the journal adds the time itself.
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace takt::cli {

// syslog(3) priorities of the lines takt writes.
inline constexpr int kPriorityError = 3;
inline constexpr int kPriorityWarning = 4;

// True when stderr is the stream systemd connected to the journal.
[[nodiscard]] bool stderrIsJournal();

// The run logger at `level` (spdlog level name), formatted for the terminal or the journal.
[[nodiscard]] std::shared_ptr<spdlog::logger> makeRunLogger(const std::string& level);

// "<N>" under the journal, "" elsewhere: the prefix of a line written to stderr directly.
[[nodiscard]] std::string journalPrefix(int priority);

} // namespace takt::cli
