#pragma once
// How a project's files are found and read (project.cpp), shared by checkProject's Frontend
// (frontend.cpp) and sourcesToCompile: one loader for every tool.
#include <filesystem>
#include <string>
#include <vector>

#include "takt/compiler/project.h"
#include "trust_manifest.h"

namespace takt::compiler {

// Reads a whole file; on failure returns false and sets `error` to the OS reason.
[[nodiscard]] bool readFile(const std::filesystem::path& path, std::string& text, std::string& error);
// `dir` absolute and normalised ("" is the current directory; no trailing separator).
[[nodiscard]] std::filesystem::path normalDirectory(const std::filesystem::path& dir);
// Relative to the project directory when inside it, else the path as the user wrote it.
[[nodiscard]] std::string displayPath(const std::filesystem::path& file, const std::filesystem::path& projectDir);
// Reads `<project.directory>/runtime.toml` [build] into project.build (nothing when absent);
// problems go to project.configErrors.
void readProjectConfig(Project& project, const FileAccess& access);
// The project's ST: [build] sources_root (src/ by default) or, with a trust-lsp.toml, its include
// paths and then its libraries' folders; a file reached through two folders is compiled once.
[[nodiscard]] std::vector<std::filesystem::path> projectSources(const std::filesystem::path& dir,
                                                                const ManifestSources& manifest,
                                                                const std::string& sourcesRoot,
                                                                const FileAccess& access);

} // namespace takt::compiler
