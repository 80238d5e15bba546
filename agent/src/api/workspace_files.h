#pragma once
// The compiler front end's view of the files below the workspace root (frontend.h, FileAccess):
// every file and folder a project check reads goes through the Workspace's confined resolution,
// so a trust-lsp.toml include path or library outside the root is refused (E0024 at its key),
// and a source linked out of the root cannot be read (E0017), as workspace.read refuses it.
#include <filesystem>
#include <string>
#include <vector>

#include "api/workspace.h"
#include "takt/compiler/project.h"

namespace takt::agent::detail {

class WorkspaceFiles final : public compiler::FileAccess {
public:
    explicit WorkspaceFiles(const Workspace& workspace) : workspace_(workspace) {}

    [[nodiscard]] Kind kind(const std::filesystem::path& path) const override;
    [[nodiscard]] bool read(const std::filesystem::path& path, std::string& text, std::string& error) const override;
    [[nodiscard]] std::vector<std::filesystem::path> sources(const std::filesystem::path& dir) const override;
    [[nodiscard]] std::string boundary() const override;

private:
    // `path` relative to the root, false when it lies lexically above it.
    bool relative(const std::filesystem::path& path, std::string& rel) const;

    const Workspace& workspace_;
};

} // namespace takt::agent::detail
