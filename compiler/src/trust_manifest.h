#pragma once
// truST's project file, trust-lsp.toml: which folders hold a project's ST ([project]
// include_paths) and which libraries it needs ([dependencies] Name = { path = "…" }), each
// library read the same way from its own trust-lsp.toml, transitively. takt compiles the
// libraries' sources with the project's, as truST does (docs/trust-projects.md).
//
// Each trust-lsp.toml read is added to the SourceManager (never parsed as ST) so that its
// problems are ordinary coded diagnostics with file:line:column.
#include <filesystem>
#include <string>
#include <vector>

#include "takt/compiler/diagnostics.h"
#include "takt/compiler/project.h"
#include "takt/compiler/sema.h"
#include "takt/compiler/source.h"

namespace takt::compiler {

struct ManifestSources {
    bool present = false;                          // the project has a trust-lsp.toml
    bool failed = false;                           // an error was reported: compile no ST
    VendorProfile vendor = VendorProfile::Codesys; // the project's [project] vendor_profile
    std::vector<std::filesystem::path> folders;    // the project's folders, then each library's once
    std::vector<FileId> manifests;                 // the trust-lsp.toml files added to the SourceManager
};

// Reads `<projectDir>/trust-lsp.toml` when it exists. `display` turns a path into the name
// diagnostics show.
[[nodiscard]] ManifestSources
readTrustManifest(const std::filesystem::path& projectDir, SourceManager& sources, DiagnosticSink& sink,
                  std::string (*display)(const std::filesystem::path&, const std::filesystem::path&),
                  const FileAccess& access);

} // namespace takt::compiler
