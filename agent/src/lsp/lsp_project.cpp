#include "lsp/lsp_project.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace takt::agent::lsp {

namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& path, const fs::path& dir) {
    const fs::path rel = path.lexically_relative(dir);
    return !rel.empty() && !rel.generic_string().starts_with("..");
}

bool readText(const fs::path& path, std::string& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return true;
}

} // namespace

fs::path projectRootFor(const fs::path& file, const fs::path& workspace) {
    const bool bounded = !workspace.empty() && inside(file, workspace);
    std::error_code ec;
    for (fs::path dir = file.parent_path(); !dir.empty(); dir = dir.parent_path()) {
        if (fs::exists(dir / "runtime.toml", ec)) {
            return dir;
        }
        if ((bounded && dir == workspace) || dir == dir.parent_path()) {
            break;
        }
    }
    return workspace.empty() ? file.parent_path() : workspace;
}

std::optional<compiler::FileId> Analysis::fileOf(const fs::path& path) const {
    for (compiler::FileId id = 0; id < files.size(); ++id) {
        if (files[id] == path) {
            return id;
        }
    }
    return std::nullopt;
}

Analysis analyse(const fs::path& root, const Documents& docs, const fs::path& also) {
    Analysis a;
    a.root = root;
    a.sourcesDir = root;
    compiler::BuildOptions build;
    std::vector<compiler::ConfigError> configErrors;
    if (std::string toml; readText(root / "runtime.toml", toml)) {
        configErrors = compiler::readBuildOptions(toml, "runtime.toml", build);
        a.sourcesDir = root / build.sourcesRoot;
    }
    if (!configErrors.empty()) {
        a.project.directory = root;
        a.project.configErrors = std::move(configErrors);
        return a;
    }
    std::vector<fs::path> paths = compiler::discoverSources(a.sourcesDir);
    for (fs::path& p : paths) {
        p = p.lexically_normal();
    }
    if (!also.empty() && std::find(paths.begin(), paths.end(), also) == paths.end()) {
        paths.push_back(also);
    }
    std::vector<compiler::SourceText> sources;
    for (const fs::path& p : paths) {
        compiler::SourceText s;
        s.path = inside(p, root) ? p.lexically_relative(root).generic_string() : p.generic_string();
        if (const Documents::Document* doc = docs.find(p); doc != nullptr) {
            s.text = doc->text;
        } else if (!readText(p, s.text)) {
            continue; // removed since discovery: the next change sees the folder again
        }
        a.files.push_back(p);
        sources.push_back(std::move(s));
    }
    a.project = compiler::checkSources(std::move(sources), build);
    a.project.directory = root;
    return a;
}

} // namespace takt::agent::lsp
