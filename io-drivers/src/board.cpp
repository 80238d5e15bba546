// Board files (board.h): name, description, arch, install notes, recommended real-time
// settings and the board's default [io] section, read with the same checks as io.toml.
#include "takt/io/board.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <memory>
#include <system_error>

#include <fmt/format.h>

#include "io_config_internal.h"
#include "takt/engine/config_reader.h"
#include "takt/io/simulation.h"

namespace takt::io {

namespace {

using engine::ConfigDiagnostic;
using engine::diagnosticAt;
using engine::TableReader;
using Severity = ConfigDiagnostic::Severity;

bool validBoardName(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    });
}

void readInstall(TableReader& r, Board& board) {
    if (const toml::array* packages = r.array("packages")) {
        for (std::size_t i = 0; i < packages->size(); ++i) {
            const toml::node& n = *packages->get(i);
            if (const auto* s = n.as_string()) {
                board.installPackages.push_back(s->get());
            } else {
                r.diagnostics().push_back(diagnosticAt(Severity::Error, r.file(), n.source(),
                                                       engine::indexedPath(r.keyPath("packages"), i),
                                                       "expected a package name (a string)"));
            }
        }
    }
    board.installNotes = r.string("notes").value_or("");
    r.finish();
}

BoardResult parseBoardDocument(std::string_view text, const std::string& file, bool byteAddressing) {
    BoardResult result;
    std::optional<toml::table> doc = engine::parseTomlText(text, file, result.diagnostics);
    if (!doc) {
        return result;
    }
    Board board;
    board.file = file;
    TableReader root(*doc, "", file, result.diagnostics);
    if (auto name = root.string("name", true)) {
        board.name = *name;
        if (!validBoardName(*name)) {
            root.error("name", "a board name uses a-z, 0-9, '-' and '_' only");
        }
        const std::filesystem::path path(file);
        if (path.extension() == ".toml" && path.stem().string() != *name) {
            root.error("name", fmt::format("\"{}\" differs from the file name {}; `--board {}` would not find it",
                                           *name, path.filename().string(), *name));
        }
    }
    board.description = root.string("description", true).value_or("");
    if (auto arch = root.choice<std::string_view>(
            "arch", {{"x86_64", "x86_64"}, {"aarch64", "aarch64"}, {"armv7l", "armv7l"}, {"any", "any"}}, true)) {
        board.arch = *arch;
    }
    if (const toml::table* install = root.table("install")) {
        TableReader r(*install, "install", file, result.diagnostics);
        readInstall(r, board);
    }
    if (const toml::table* runtime = root.table("runtime")) {
        TableReader r(*runtime, "runtime", file, result.diagnostics);
        if (const toml::table* rt = r.table("realtime")) {
            TableReader rr(*rt, "runtime.realtime", file, result.diagnostics);
            board.realtime.emplace();
            engine::readRealtime(rr, *board.realtime);
        }
        r.finish();
    }
    std::optional<IoConfig> io;
    if (root.table("io", true) != nullptr) {
        io = detail::readIoSection(*(*doc)["io"].as_table(), "io", file, byteAddressing, result.diagnostics);
    }
    root.finish();
    detail::sortDiagnostics(result.diagnostics);
    if (io && !detail::hasErrors(result.diagnostics)) {
        board.io = std::move(*io);
        result.board = std::move(board);
    }
    return result;
}

} // namespace

std::filesystem::path boardsDirectory() {
    if (const char* env = std::getenv("TAKT_BOARDS_DIR"); env != nullptr && *env != '\0') {
        return env;
    }
    // Relative to the running binary, never a path of the machine that built it: the same
    // package works under /usr, /usr/local or an unpacked tree.
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        for (const char* relative : {"../share/takt/boards", "boards"}) {
            std::filesystem::path dir = (exe.parent_path() / relative).lexically_normal();
            if (std::filesystem::is_directory(dir, ec)) {
                return dir;
            }
        }
    }
    return kInstalledBoardsDir;
}

BoardResult parseBoard(std::string_view text, const std::string& file, bool byteAddressing) {
    try {
        return parseBoardDocument(text, file, byteAddressing);
    } catch (const std::exception& e) {
        BoardResult result;
        result.diagnostics.push_back(
            diagnosticAt(Severity::Error, file, {}, {}, fmt::format("internal error: {}", e.what())));
        return result;
    }
}

BoardResult loadBoard(std::string_view nameOrPath, bool byteAddressing) {
    BoardResult result;
    std::filesystem::path path;
    if (nameOrPath.find('/') != std::string_view::npos || nameOrPath.ends_with(".toml")) {
        path = std::string(nameOrPath);
    } else if (validBoardName(nameOrPath)) {
        path = boardsDirectory() / (std::string(nameOrPath) + ".toml");
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) {
            std::string known;
            for (const BoardSummary& b : listBoards()) {
                known += known.empty() ? "" : ", ";
                known += b.name;
            }
            result.diagnostics.push_back(
                diagnosticAt(Severity::Error, path.string(), {}, {},
                             fmt::format("no board \"{}\" in {} (known: {})", nameOrPath, boardsDirectory().string(),
                                         known.empty() ? "none" : known)));
            return result;
        }
    } else {
        result.diagnostics.push_back(diagnosticAt(Severity::Error, std::string(nameOrPath), {}, {},
                                                  "not a board name (a-z, 0-9, '-', '_') or a path to a .toml file"));
        return result;
    }
    return engine::loadConfigFile<BoardResult>(
        path,
        [&](const std::string& text, const std::string& display) { return parseBoard(text, display, byteAddressing); },
        [&](BoardResult& r) {
            if (r.board) {
                r.board->file = path;
                r.board->io.file = path;
            }
        });
}

std::vector<BoardSummary> listBoards(const std::filesystem::path& dir) {
    std::vector<BoardSummary> boards;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::filesystem::path& p = it->path();
        if (p.extension() != ".toml") {
            continue;
        }
        BoardSummary s;
        s.file = p;
        s.name = p.stem().string();
        std::vector<ConfigDiagnostic> ignored;
        std::string text;
        if (engine::readConfigFile(p, text, ignored)) {
            BoardResult r = parseBoard(text, p.string(), false);
            s.valid = r.board.has_value();
            // The summary shows what the file says even when another part of it is wrong.
            if (auto doc = engine::parseTomlText(text, p.string(), ignored)) {
                s.description = (*doc)["description"].value_or(std::string());
                s.arch = (*doc)["arch"].value_or(std::string());
            }
        }
        boards.push_back(std::move(s));
    }
    std::sort(boards.begin(), boards.end(),
              [](const BoardSummary& a, const BoardSummary& b) { return a.name < b.name; });
    return boards;
}

namespace {

// The project's simulation.toml goes to every `simulated` driver without a plant (truST runs its
// couplings on such a project); a file nothing uses is a warning, an invalid one refuses the I/O.
void attachSimulation(const std::filesystem::path& projectDir, bool byteAddressing, IoSelection& sel) {
    std::error_code ec;
    const std::filesystem::path file = projectDir / "simulation.toml";
    if (!std::filesystem::exists(file, ec)) {
        return;
    }
    SimulationResult loaded = loadSimulation(file, byteAddressing);
    sel.io.diagnostics.insert(sel.io.diagnostics.end(), loaded.diagnostics.begin(), loaded.diagnostics.end());
    if (!loaded.script) {
        sel.io.config.reset();
        return;
    }
    if (!sel.io.config) {
        return;
    }
    const auto script = std::make_shared<const SimulationScript>(std::move(*loaded.script));
    bool used = false;
    for (DriverSpec& spec : sel.io.config->drivers) {
        if (spec.name == "simulated" && !spec.params.contains("plant")) {
            spec.simulation = script;
            used = true;
        }
    }
    if (!used) {
        engine::ConfigDiagnostic d;
        d.severity = engine::ConfigDiagnostic::Severity::Warning;
        d.file = file.string();
        d.message = fmt::format("not used: takt applies simulation.toml to a `simulated` driver without `plant`, and "
                                "the I/O from {} has none",
                                sel.origin);
        sel.io.diagnostics.push_back(std::move(d));
    }
}

IoSelection selectIoFile(const std::filesystem::path& projectDir, std::string_view board, bool byteAddressing);

} // namespace

IoSelection selectIoConfig(const std::filesystem::path& projectDir, std::string_view board, bool byteAddressing) {
    IoSelection sel = selectIoFile(projectDir, board, byteAddressing);
    attachSimulation(projectDir, byteAddressing, sel);
    return sel;
}

namespace {

IoSelection selectIoFile(const std::filesystem::path& projectDir, std::string_view board, bool byteAddressing) {
    IoSelection sel;
    std::error_code ec;
    const std::filesystem::path projectIo = projectDir / "io.toml";
    if (std::filesystem::exists(projectIo, ec)) {
        sel.origin = "io.toml";
        sel.io = loadIoConfig(projectIo, byteAddressing);
        return sel;
    }
    if (board.empty() && std::filesystem::exists(std::filesystem::path(kSystemIoConfig), ec)) {
        sel.origin = std::string(kSystemIoConfig);
        sel.io = loadIoConfig(std::filesystem::path(kSystemIoConfig), byteAddressing);
        return sel;
    }
    if (board.empty() && std::filesystem::exists(projectDir / "simulation.toml", ec)) {
        // truST drives such a project's I/O from simulation.toml alone: a `simulated` driver
        // without a plant, which attachSimulation() hands the script.
        sel.origin = "simulation.toml";
        sel.io = parseIoConfig("[io]\ndriver = \"simulated\"\n[io.params]\n", (projectDir / "simulation.toml").string(),
                               byteAddressing);
        return sel;
    }
    const std::string_view name = board.empty() ? kDefaultBoard : board;
    BoardResult b = loadBoard(name, byteAddressing);
    sel.origin = fmt::format("board {}", name);
    sel.io.diagnostics = std::move(b.diagnostics);
    if (b.board) {
        sel.io.config = std::move(b.board->io); // moved: a copy would drop the params' source positions
        sel.board = std::move(b.board);
    }
    return sel;
}

} // namespace

bool applyBoardRealtime(const Board& board, engine::RuntimeConfig& config) {
    if (config.realtimeGiven || !board.realtime) {
        return false;
    }
    config.realtime = *board.realtime;
    return true;
}

} // namespace takt::io
