#pragma once
// The project a document belongs to, and the front end run over it as the editor sees it: the
// sources below the project's sources root, with every open document's text in place of the
// file on disk.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lsp/lsp_text.h"
#include "takt/compiler/project.h"

namespace takt::agent::lsp {

// The folder holding runtime.toml at or above `file`'s folder, up to `workspace` when `file`
// is inside it (else up to the filesystem root); `workspace` when none has one.
[[nodiscard]] std::filesystem::path projectRootFor(const std::filesystem::path& file,
                                                   const std::filesystem::path& workspace);

struct Analysis {
    std::filesystem::path root;
    std::filesystem::path sourcesDir;         // root/sources_root, or root when it has no runtime.toml
    compiler::Project project;                // display paths relative to root; valid() false: configErrors
    std::vector<std::filesystem::path> files; // absolute path of each FileId
    // Set by an incremental check (lsp_incremental.h): only this file was checked in full, the
    // others by their declarations; their diagnostics and bodies here are not theirs.
    std::filesystem::path focus;

    [[nodiscard]] std::optional<compiler::FileId> fileOf(const std::filesystem::path& path) const;
    [[nodiscard]] std::filesystem::path pathOf(compiler::FileId id) const {
        return id < files.size() ? files[id] : std::filesystem::path();
    }
};

// Runs the front end over the project at `root`. `also`: an open document that belongs to the
// project although it lies outside its sources root (it is checked with the rest).
[[nodiscard]] Analysis analyse(const std::filesystem::path& root, const Documents& docs,
                               const std::filesystem::path& also = {});

} // namespace takt::agent::lsp
