#pragma once
// The front end of one project, kept between checks. `takt check`, `takt build`, `takt run`,
// `takt validate`, `takt reload` and `takt test` (through checkProject), `takt lsp` and the Agent
// API's project methods (lsp.diagnostics, runtime.build, …) load a project through a Frontend, so
// they read it the same way (runtime.toml [build], trust-lsp.toml include paths, libraries and
// vendor profile, the sources root) and see the same diagnostics. The Agent API reads every file
// through its workspace (ProjectInput::access): a library outside the workspace root is E0024.
//
// A Frontend also holds what lets an editor re-check one file quickly. After a full check it
// keeps, per file and keyed by its text, the facts semantic analysis recorded while checking it
// (what it declares, as names and as a digest of its symbols and types; the calls its bodies
// make; the locals of other files they name; the files its diagnostics point into) and its
// declarations: the file's text with every POU body blanked, parsed once. An edit that leaves a
// file's declarations as they were is then checked by that file in full against the kept
// declarations of the files it needs, with no other file parsed again: those it was checked with
// last, and every file declaring a name the analysis looked up (in the global scope or a
// namespace) — analysis records those names, and the check runs again with any file it lacked.
// The rules that send an edit back to a full check are in checkFile() (docs/editor.md).
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "takt/compiler/project.h"

namespace takt::compiler {

// The project a file belongs to: the nearest folder at or above the file's folder holding
// runtime.toml or trust-lsp.toml, looking no higher than `workspace` when the file lies inside
// it; `workspace` (or the file's folder without one) when no folder has either.
[[nodiscard]] std::filesystem::path projectRootFor(const std::filesystem::path& file,
                                                   const std::filesystem::path& workspace);

// One answer of a Frontend: the Project (what checkProject returns) and the file of each FileId.
struct CheckedProject {
    Project project;
    // The absolute path of each FileId: the trust-lsp.toml files read, then the ST files.
    std::vector<std::filesystem::path> files;
    // Set by an incremental check: only this file was checked in full; the others were checked
    // by their declarations, so their diagnostics and bodies here are not theirs.
    std::filesystem::path focus;

    [[nodiscard]] std::optional<FileId> fileOf(const std::filesystem::path& path) const;
    [[nodiscard]] std::filesystem::path pathOf(FileId id) const {
        return id < files.size() ? files[id] : std::filesystem::path();
    }
};

class Frontend {
public:
    // How much work the checks did (tests and docs/performance.md read them).
    struct Stats {
        std::size_t fullChecks = 0;
        std::size_t incrementalChecks = 0;
        std::size_t parses = 0; // ST files parsed (a file's declarations count once per text)
    };

    // `dialect` (`takt check --dialect`) replaces runtime.toml's [build] dialect when set.
    // `forEdits`: keep what incremental checks need after each full check (an editor); a tool
    // that checks once (`takt check`, `takt build`) saves that work.
    explicit Frontend(ProjectInput input, std::optional<Dialect> dialect = std::nullopt, bool forEdits = true);
    ~Frontend();
    Frontend(const Frontend&) = delete;
    Frontend& operator=(const Frontend&) = delete;

    [[nodiscard]] const std::filesystem::path& directory() const { return directory_; }

    // An editor's text of `file` (absolute) in place of the file on disk, until dropText().
    void setText(const std::filesystem::path& file, std::string text);
    void dropText(const std::filesystem::path& file);
    [[nodiscard]] const std::string* textOf(const std::filesystem::path& file) const;
    // Files changed on disk: the next check reads the configuration, folders and files again.
    void invalidate();

    // The whole project, every file in full: what `takt check` prints. `also`: a file that belongs
    // to the project although its folders do not hold it (an editor's open document), checked
    // with the rest. Kept until a text changes; valid until the next call.
    const CheckedProject& check(const std::filesystem::path& also = {});
    // The answer for `file` after its text changed: its bodies checked against the kept
    // declarations of the others when that gives the diagnostics of `file` a full check would,
    // else a full check. Valid until the next call.
    const CheckedProject& checkFile(const std::filesystem::path& file);
    // The last answer, when there is one and no text changed since.
    [[nodiscard]] const CheckedProject* last() const { return stale_ ? nullptr : last_.get(); }
    // Hands the answer of check() over (checkProject).
    [[nodiscard]] CheckedProject takeCheck();

    [[nodiscard]] const Stats& stats() const { return stats_; }

    struct FileState; // frontend_cache.h
    struct Loaded;

private:
    void fullCheck(const std::filesystem::path& also);
    bool incremental(const std::filesystem::path& file);

    ProjectInput input_;
    std::optional<Dialect> dialect_;
    std::filesystem::path directory_;
    std::map<std::filesystem::path, std::string> texts_; // the editor's texts by absolute path
    std::unique_ptr<CheckedProject> last_;
    bool forEdits_ = true;
    bool stale_ = true; // last_ is not the answer for the current texts
    // What the last full check loaded, for the incremental checks after it.
    std::unique_ptr<Loaded> loaded_;
    Stats stats_;
};

} // namespace takt::compiler
