// Project files through the confined workspace (workspace_files.h).
#include "api/workspace_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace takt::agent::detail {

namespace fs = std::filesystem;

namespace {

// As large as the compiler reads from disk (spans are 32-bit offsets).
constexpr std::size_t kMaxSourceBytes = std::size_t{256} << 20;

} // namespace

bool WorkspaceFiles::relative(const fs::path& path, std::string& rel) const {
    const fs::path r = path.lexically_normal().lexically_relative(workspace_.root());
    if (r.empty() || *r.begin() == "..") {
        return false;
    }
    rel = r.generic_string();
    return true;
}

compiler::FileAccess::Kind WorkspaceFiles::kind(const fs::path& path) const {
    std::string rel;
    if (!relative(path, rel)) {
        return Kind::Outside;
    }
    int fd = -1;
    if (const Workspace::Result r = workspace_.openBeneath(rel, O_PATH, fd); !r.ok()) {
        return r.status == Workspace::Status::Escapes ? Kind::Outside : Kind::Missing;
    }
    struct stat st {};
    const bool known = ::fstat(fd, &st) == 0;
    ::close(fd);
    return !known ? Kind::Missing : S_ISDIR(st.st_mode) ? Kind::Directory : Kind::File;
}

bool WorkspaceFiles::read(const fs::path& path, std::string& text, std::string& error) const {
    std::string rel;
    if (!relative(path, rel)) {
        error = fmt::format("it lies outside {}", boundary());
        return false;
    }
    if (const Workspace::Result r = workspace_.readFile(rel, kMaxSourceBytes, text); !r.ok()) {
        error = r.message;
        return false;
    }
    return true;
}

// The folder is listed where the kernel resolved it beneath the root; the files keep the
// spelling of `dir`, so their display paths are what `takt check` shows.
std::vector<fs::path> WorkspaceFiles::sources(const fs::path& dir) const {
    std::string rel;
    fs::path real;
    if (!relative(dir, rel) || !workspace_.resolve(rel, true, real).ok()) {
        return {};
    }
    std::vector<fs::path> out;
    for (const fs::path& file : compiler::discoverSources(real)) {
        out.push_back((dir / file.lexically_relative(real)).lexically_normal());
    }
    return out;
}

std::string WorkspaceFiles::boundary() const {
    return fmt::format("the Agent API's workspace root {}", workspace_.root().string());
}

} // namespace takt::agent::detail
