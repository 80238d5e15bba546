#pragma once
// Board files (CONFIG.md "boards/"): one TOML file per target with its default I/O (the same
// [io] section as io.toml), recommended [runtime.realtime] settings and install notes.
//
//   name = "raspberry-pi-4"          # must equal the file name without .toml
//   description = "…"
//   arch = "aarch64"                 # x86_64 | aarch64 | armv7l | any
//   [install]
//   packages = ["libgpiod2"]         # Debian packages the board needs at run time
//   notes = """…"""
//   [runtime.realtime]               # as in runtime.toml
//   [io]                             # as in io.toml
//
// Board names are looked up in the first of: $TAKT_BOARDS_DIR; <dir of takt>/../share/takt/boards
// (installed: /usr/bin/takt -> /usr/share/takt/boards); <dir of takt>/boards (a build tree, where
// CMake links it to the source's boards/); else /usr/share/takt/boards, named in the error.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "takt/engine/config.h"
#include "takt/io/io_config.h"

namespace takt::io {

inline constexpr std::string_view kDefaultBoard = "host-sim";
inline constexpr std::string_view kSystemIoConfig = "/etc/takt/io.toml";
inline constexpr std::string_view kInstalledBoardsDir = "/usr/share/takt/boards";

struct Board {
    std::filesystem::path file;
    std::string name;
    std::string description;
    std::string arch;
    std::vector<std::string> installPackages;
    std::string installNotes;
    std::optional<engine::RuntimeConfig::Realtime> realtime; // [runtime.realtime] when given
    IoConfig io;
};

struct BoardResult {
    std::optional<Board> board; // empty when any error was found
    std::vector<engine::ConfigDiagnostic> diagnostics;
};

// The directory board names are looked up in (the search order above).
[[nodiscard]] std::filesystem::path boardsDirectory();

// `nameOrPath` is a board name ("raspberry-pi-4": <boardsDirectory()>/raspberry-pi-4.toml) or,
// when it contains '/' or ends in ".toml", a path to a board file. Never throws.
[[nodiscard]] BoardResult loadBoard(std::string_view nameOrPath, bool byteAddressing = false);
// The same from text; `file` names it in diagnostics and, when it ends in ".toml", its stem
// must equal `name`.
[[nodiscard]] BoardResult parseBoard(std::string_view text, const std::string& file, bool byteAddressing = false);

struct BoardSummary {
    std::string name;
    std::string description;
    std::string arch;
    std::filesystem::path file;
    bool valid = false; // the file loads without errors
};

// Every *.toml in `dir`, sorted by name.
[[nodiscard]] std::vector<BoardSummary> listBoards(const std::filesystem::path& dir = boardsDirectory());

// Where a project's I/O comes from (CONFIG.md "Project folder"): <project>/io.toml; else the
// board given with --board; else /etc/takt/io.toml; else the default board (host-sim). The
// project's simulation.toml, when there is one, is loaded too (its diagnostics join `io`'s) and
// handed to every `simulated` driver without a plant (DriverSpec::simulation).
struct IoSelection {
    IoConfigResult io;
    std::string origin;         // "io.toml", "board raspberry-pi-4", "/etc/takt/io.toml"
    std::optional<Board> board; // when the I/O came from a board (its io moved into `io`)
};

// A board's recommended [runtime.realtime] applies when runtime.toml has none of its own (the
// project's settings always win). True when `config.realtime` was taken from the board.
bool applyBoardRealtime(const Board& board, engine::RuntimeConfig& config);

[[nodiscard]] IoSelection selectIoConfig(const std::filesystem::path& projectDir, std::string_view board,
                                         bool byteAddressing);

} // namespace takt::io
