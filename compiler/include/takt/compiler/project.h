#pragma once
// The project-level front end: find a project's sources (or take an explicit list), read the
// [build] table of runtime.toml, lex + parse every file and analyse them together. `takt check`,
// `takt build`, the ST corpus runner, the fuzzers and the benchmarks all go through here, so
// they see the same diagnostics in the same order.
//
// Two kinds of failure are kept apart because they mean different things to the user and to
// CI (CONFIG.md exit codes): a *project* that is unusable (missing directory, malformed
// runtime.toml) gives ConfigErrors and nothing is compiled; problems in the ST sources
// (including unreadable files and an empty src/) are coded Diagnostics.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "takt/compiler/ast.h"
#include "takt/compiler/codegen.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/sema.h"
#include "takt/compiler/source.h"

namespace takt::compiler {

enum class OverflowMode : std::uint8_t { Wrap, Trap }; // runtime.toml [build] overflow

// runtime.toml [build] (CONFIG.md). Defaults apply when the table or a key is absent.
struct BuildOptions {
    OverflowMode overflow = OverflowMode::Wrap;
    AddressMode addressMode = AddressMode::Word;
    Dialect dialect = Dialect::Codesys;
    VendorProfile vendor = VendorProfile::Codesys; // trust-lsp.toml [project] vendor_profile
    std::string sourcesRoot = "src";               // [build] sources_root: the folder below the project holding its ST

    // The code generator's options these settings select (the rest keep their defaults).
    [[nodiscard]] CodegenOptions codegenOptions() const {
        CodegenOptions o;
        o.overflowTrap = overflow == OverflowMode::Trap;
        o.addressMode = addressMode;
        return o;
    }
};

// A problem with the project's configuration files, not with its ST. `line`/`column` are
// 1-based; 0 when the problem has no position (a missing directory).
struct ConfigError {
    std::string path; // display path, e.g. "runtime.toml"
    std::uint32_t line = 0;
    std::uint32_t column = 0;
    std::string key; // dotted key path, e.g. "build.overflow"; empty when not about a key
    std::string message;
};

// `runtime.toml:4:12: error: build.overflow: …` (position and key omitted when absent).
[[nodiscard]] std::string renderConfigError(const ConfigError& error);

// Reads the [build] table of a runtime.toml text. Unknown keys inside [build] and bad values
// are errors; other tables are ignored here. `displayPath` names the file in errors.
[[nodiscard]] std::vector<ConfigError> readBuildOptions(std::string_view tomlText, const std::string& displayPath,
                                                        BuildOptions& out);

// Every `*.st` / `*.pou` / `*.xml` (PLCopen XML) file below `dir` (recursive, extensions case-insensitive, hidden
// entries skipped), sorted by relative path so results do not depend on directory order.
[[nodiscard]] std::vector<std::filesystem::path> discoverSources(const std::filesystem::path& dir);

// One source given as text (fuzzers, benchmarks, tests, editors with unsaved buffers).
struct SourceText {
    std::string path; // display path
    std::string text;
};

// How a Frontend reaches a project's files: the disk by default. A client that must confine what
// it reads (the Agent API reads only below its workspace root) gives its own; a folder it refuses
// is Outside, and a trust-lsp.toml naming one gets E0024 at the key that names it. Paths are
// absolute and normalised.
class FileAccess {
public:
    enum class Kind : std::uint8_t { Missing, File, Directory, Outside };

    FileAccess() = default;
    virtual ~FileAccess() = default;
    FileAccess(const FileAccess&) = delete;
    FileAccess& operator=(const FileAccess&) = delete;

    [[nodiscard]] virtual Kind kind(const std::filesystem::path& path) const;
    // Reads a whole file; false with the reason in `error`.
    [[nodiscard]] virtual bool read(const std::filesystem::path& path, std::string& text, std::string& error) const;
    // The ST files below `dir`, as discoverSources() finds them.
    [[nodiscard]] virtual std::vector<std::filesystem::path> sources(const std::filesystem::path& dir) const;
    // What Outside means, for E0024 ("the Agent API's workspace root /srv/ws").
    [[nodiscard]] virtual std::string boundary() const { return "the folders takt may read"; }
};

// The disk, unconfined.
[[nodiscard]] const FileAccess& diskAccess();

struct ProjectInput {
    // The project directory; empty means the current directory. Display paths are relative to
    // it when a file lies inside it.
    std::filesystem::path directory;
    // Explicit source files. Empty: discover `<directory>/src/**`. With explicit files no
    // runtime.toml is read (the files are not necessarily a project), unless readConfig is set.
    std::vector<std::filesystem::path> files;
    bool readConfig = false;
    // Replaces runtime.toml's [build] sources_root when set (the Agent API's `sources_root`).
    std::string sourcesRoot;
    // Every file and folder is reached through this; null: the disk.
    std::shared_ptr<const FileAccess> access;
};

// The result of checking a project. Owns every source and AST; the model refers into both, so
// the SourceManager lives on the heap: moving a Project never moves what the model points at.
struct Project {
    std::filesystem::path directory; // absolute, normalised
    BuildOptions build;
    std::vector<ConfigError> configErrors; // non-empty: the project is invalid, nothing was compiled
    std::unique_ptr<SourceManager> sources = std::make_unique<SourceManager>();
    std::vector<std::string> sourcePaths; // display paths in compilation order
    std::vector<ast::CompilationUnit> units;
    std::shared_ptr<SemanticModel> model; // null only when configErrors is non-empty
    std::vector<Diagnostic> diagnostics;  // sorted (file, position, code)
    std::size_t errorCount = 0;
    std::size_t warningCount = 0;

    [[nodiscard]] bool valid() const { return configErrors.empty(); }
    [[nodiscard]] bool ok() const { return valid() && errorCount == 0; }
};

// Loads, parses and analyses a project from disk. `dialect` (`takt check --dialect`) replaces
// runtime.toml's [build] dialect when set.
[[nodiscard]] Project checkProject(const ProjectInput& input, std::optional<Dialect> dialect = std::nullopt);

// The folder of ST sources `takt run` and `takt validate` compile the project in `dir` from:
// `dir` / [build] sources_root (src/ by default) when it exists or a trust-lsp.toml names the
// folders, or when runtime.toml's [build] is broken (compiling reports why). Nothing when the
// project has no sources and runs its program.stbc alone.
[[nodiscard]] std::optional<std::filesystem::path> sourcesToCompile(const std::filesystem::path& dir);

// The same pipeline over in-memory sources (no disk access, default directory ".").
[[nodiscard]] Project checkSources(std::vector<SourceText> sources, const BuildOptions& build = {});

} // namespace takt::compiler
