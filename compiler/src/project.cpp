#include "takt/compiler/project.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "project_files.h"
#include "takt/common/toml_names.h"
#include "takt/compiler/frontend.h"
#include "trust_manifest.h"

namespace takt::compiler {

namespace fs = std::filesystem;

namespace {

// Spans are 32-bit byte offsets; anything near that size is not a hand-written ST file anyway.
constexpr std::size_t kMaxSourceBytes = std::size_t{256} << 20;

} // namespace

bool readFile(const fs::path& path, std::string& text, std::string& error) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = std::strerror(errno);
        return false;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        error = std::strerror(errno);
        ::close(fd);
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        error = std::strerror(EISDIR);
        ::close(fd);
        return false;
    }
    text.clear();
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            error = std::strerror(errno);
            ::close(fd);
            return false;
        }
        if (n == 0) {
            break;
        }
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > kMaxSourceBytes) {
            error = fmt::format("file is larger than {} MiB", kMaxSourceBytes >> 20);
            ::close(fd);
            return false;
        }
    }
    ::close(fd);
    return true;
}

fs::path normalDirectory(const fs::path& dir) {
    std::error_code ec;
    fs::path abs = fs::absolute(dir.empty() ? fs::path(".") : dir, ec);
    if (ec) {
        abs = dir;
    }
    abs = abs.lexically_normal();
    if (!abs.has_filename() && abs.has_parent_path() && abs != abs.root_path()) {
        abs = abs.parent_path(); // "/a/b/" -> "/a/b" so relative paths do not start with "."
    }
    return abs;
}

// Relative to the project directory when inside it, else the path as the user wrote it.
std::string displayPath(const fs::path& file, const fs::path& projectDir) {
    std::error_code ec;
    fs::path abs = fs::absolute(file, ec);
    if (!ec) {
        fs::path rel = abs.lexically_normal().lexically_relative(projectDir);
        if (!rel.empty() && *rel.begin() != ".." && rel != ".") {
            return rel.generic_string();
        }
    }
    return file.generic_string();
}

namespace {

bool hasSourceExtension(const fs::path& p) {
    std::string ext = p.extension().string();
    for (char& c : ext) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return ext == ".st" || ext == ".pou" || ext == ".xml"; // .xml: PLCopen XML (plcopen.h)
}

ConfigError errorAt(const std::string& path, const toml::source_region& where, std::string key, std::string message) {
    return ConfigError{path, static_cast<std::uint32_t>(where.begin.line),
                       static_cast<std::uint32_t>(where.begin.column), std::move(key), std::move(message)};
}

// Reads one string-valued enumeration key; `choices` are the accepted spellings in order.
template <typename Enum, std::size_t N>
void readChoice(const toml::node& node, const std::string& path, const std::string& key,
                const std::pair<std::string_view, Enum> (&choices)[N], Enum& out, std::vector<ConfigError>& errors) {
    const auto* str = node.as_string();
    std::string expected;
    for (std::size_t i = 0; i < N; ++i) {
        expected += fmt::format("{}\"{}\"", i == 0 ? "" : i + 1 == N ? " or " : ", ", choices[i].first);
    }
    if (str == nullptr) {
        errors.push_back(
            errorAt(path, node.source(), key,
                    fmt::format("expected a string ({}), found {}", expected, common::tomlTypeName(node.type()))));
        return;
    }
    for (const auto& [spelling, value] : choices) {
        if (str->get() == spelling) {
            out = value;
            return;
        }
    }
    errors.push_back(
        errorAt(path, node.source(), key, fmt::format("unknown value \"{}\" (expected {})", str->get(), expected)));
}

// [build] sources_root: a relative path that stays inside the project, so a project checked
// out anywhere finds the same sources.
void readSourcesRoot(const toml::node& node, const std::string& path, const std::string& key, std::string& out,
                     std::vector<ConfigError>& errors) {
    const auto* str = node.as_string();
    if (str == nullptr) {
        errors.push_back(errorAt(path, node.source(), key,
                                 fmt::format("expected a string (a folder relative to the project), found {}",
                                             common::tomlTypeName(node.type()))));
        return;
    }
    const fs::path root = fs::path(str->get()).lexically_normal();
    if (str->get().empty() || root.is_absolute() || root.generic_string().starts_with("..")) {
        errors.push_back(
            errorAt(path, node.source(), key,
                    fmt::format("\"{}\" must be a folder inside the project (a relative path)", str->get())));
        return;
    }
    out = root.generic_string();
}

} // namespace

FileAccess::Kind FileAccess::kind(const fs::path& path) const {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    return fs::is_directory(st) ? Kind::Directory : fs::exists(st) ? Kind::File : Kind::Missing;
}

bool FileAccess::read(const fs::path& path, std::string& text, std::string& error) const {
    return readFile(path, text, error);
}

std::vector<fs::path> FileAccess::sources(const fs::path& dir) const {
    return discoverSources(dir);
}

const FileAccess& diskAccess() {
    static const FileAccess disk;
    return disk;
}

void readProjectConfig(Project& project, const FileAccess& access) {
    fs::path toml = project.directory / "runtime.toml";
    if (access.kind(toml) == FileAccess::Kind::Missing) {
        return; // runtime.toml is required to run, not to check
    }
    std::string text;
    std::string error;
    if (!access.read(toml, text, error)) {
        project.configErrors.push_back(ConfigError{"runtime.toml", 0, 0, {}, fmt::format("cannot read: {}", error)});
        return;
    }
    std::vector<ConfigError> errors = readBuildOptions(text, "runtime.toml", project.build);
    project.configErrors.insert(project.configErrors.end(), errors.begin(), errors.end());
}

std::vector<fs::path> projectSources(const fs::path& dir, const ManifestSources& manifest,
                                     const std::string& sourcesRoot, const FileAccess& access) {
    if (!manifest.present) {
        return access.sources(dir / sourcesRoot);
    }
    std::vector<fs::path> files;
    std::vector<fs::path> seen;
    for (const fs::path& folder : manifest.folders) {
        for (fs::path& file : access.sources(folder)) {
            std::error_code ec;
            fs::path key = fs::weakly_canonical(file, ec);
            if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
                continue;
            }
            seen.push_back(std::move(key));
            files.push_back(std::move(file));
        }
    }
    return files;
}

std::string renderConfigError(const ConfigError& e) {
    std::string out = e.path;
    if (e.line > 0) {
        out += fmt::format(":{}:{}", e.line, e.column);
    }
    out += ": error: ";
    if (!e.key.empty()) {
        out += e.key;
        out += ": ";
    }
    out += e.message;
    return out;
}

std::vector<ConfigError> readBuildOptions(std::string_view tomlText, const std::string& displayPath,
                                          BuildOptions& out) {
    std::vector<ConfigError> errors;
    toml::table root;
    // The packaged toml++ is built with exceptions; this is the one place its parse errors surface.
    try {
        root = toml::parse(tomlText, displayPath);
    } catch (const toml::parse_error& e) {
        errors.push_back(errorAt(displayPath, e.source(), {}, std::string(e.description())));
        return errors;
    }
    const toml::node* build = root.get("build");
    if (build == nullptr) {
        return errors;
    }
    const toml::table* table = build->as_table();
    if (table == nullptr) {
        errors.push_back(errorAt(displayPath, build->source(), "build",
                                 fmt::format("expected a table, found {}", common::tomlTypeName(build->type()))));
        return errors;
    }
    static constexpr std::pair<std::string_view, OverflowMode> kOverflow[] = {{"wrap", OverflowMode::Wrap},
                                                                              {"trap", OverflowMode::Trap}};
    static constexpr std::pair<std::string_view, AddressMode> kAddress[] = {{"word", AddressMode::Word},
                                                                            {"byte", AddressMode::Byte}};
    static constexpr std::pair<std::string_view, Dialect> kDialect[] = {
        {"codesys", Dialect::Codesys}, {"iec", Dialect::Iec}, {"openplc", Dialect::Openplc}};
    for (const auto& [key, node] : *table) {
        std::string path = fmt::format("build.{}", key.str());
        if (key.str() == "overflow") {
            readChoice(node, displayPath, path, kOverflow, out.overflow, errors);
        } else if (key.str() == "address_mode") {
            readChoice(node, displayPath, path, kAddress, out.addressMode, errors);
        } else if (key.str() == "dialect") {
            readChoice(node, displayPath, path, kDialect, out.dialect, errors);
        } else if (key.str() == "sources_root") {
            readSourcesRoot(node, displayPath, path, out.sourcesRoot, errors);
        } else {
            errors.push_back(errorAt(
                displayPath, key.source(), path,
                fmt::format("unknown key \"{}\" (known: overflow, address_mode, dialect, sources_root)", key.str())));
        }
    }
    // toml++ iterates tables in key order; report in file order like every other diagnostic.
    std::stable_sort(errors.begin(), errors.end(), [](const ConfigError& a, const ConfigError& b) {
        return a.line != b.line ? a.line < b.line : a.column < b.column;
    });
    return errors;
}

std::vector<fs::path> discoverSources(const fs::path& dir) {
    std::vector<std::pair<std::string, fs::path>> found;
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const fs::path& p = it->path();
        if (p.filename().string().starts_with('.')) {
            if (it->is_directory(ec)) {
                it.disable_recursion_pending(); // editor and VCS folders are not sources
            }
            continue;
        }
        if (it->is_regular_file(ec) && hasSourceExtension(p)) {
            found.emplace_back(p.lexically_relative(dir).generic_string(), p);
        }
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<fs::path> out;
    out.reserve(found.size());
    for (auto& f : found) {
        out.push_back(std::move(f.second));
    }
    return out;
}

std::optional<fs::path> sourcesToCompile(const fs::path& dir) {
    Project probe;
    probe.directory = dir;
    readProjectConfig(probe, diskAccess());
    const fs::path root = dir / probe.build.sourcesRoot;
    std::error_code ec;
    if (!probe.valid() || fs::is_directory(root, ec) || fs::exists(dir / "trust-lsp.toml", ec)) {
        return root;
    }
    return std::nullopt;
}

Project checkProject(const ProjectInput& input, std::optional<Dialect> dialect) {
    Frontend frontend(input, dialect, false);
    (void)frontend.check();
    return std::move(frontend.takeCheck().project);
}

} // namespace takt::compiler
