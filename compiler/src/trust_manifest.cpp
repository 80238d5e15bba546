#include "trust_manifest.h"

#include <set>
#include <system_error>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace takt::compiler {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kManifestName = "trust-lsp.toml";

// One trust-lsp.toml being read: reports point into its text.
class ManifestReader {
public:
    ManifestReader(const SourceFile& file, DiagnosticSink& sink, const FileAccess& access)
        : access(access), file_(file), sink_(sink) {}

    Span spanOf(const toml::source_region& where) const {
        const auto offset = [&](const toml::source_position& p) -> std::uint32_t {
            if (p.line == 0 || p.line > file_.lineCount()) {
                return 0;
            }
            const std::string_view line = file_.lineText(static_cast<std::uint32_t>(p.line));
            const auto start = static_cast<std::uint32_t>(line.data() - file_.text().data());
            return start + static_cast<std::uint32_t>(p.column > 0 ? p.column - 1 : 0);
        };
        const std::uint32_t begin = offset(where.begin);
        const std::uint32_t end = offset(where.end);
        return Span{file_.id(), begin, end > begin ? end : begin + 1};
    }

    void report(DiagCode code, const toml::source_region& where, const std::string& key, const std::string& message) {
        (void)sink_.report(code, spanOf(where), fmt::format("{}: {}", key, message));
        if (diagInfo(code).severity == Severity::Error) {
            failed = true;
        }
    }

    void ignored(const toml::source_region& where, const std::string& key, const std::string& why) {
        report(DiagCode::ManifestKeyIgnored, where, key, fmt::format("ignored by takt ({})", why));
    }

    const toml::table* table(const toml::node& node, const std::string& key) {
        const toml::table* t = node.as_table();
        if (t == nullptr) {
            report(DiagCode::ManifestInvalid, node.source(), key, "expected a table");
        }
        return t;
    }

    const toml::value<std::string>* string(const toml::node& node, const std::string& key) {
        const auto* s = node.as_string();
        if (s == nullptr) {
            report(DiagCode::ManifestInvalid, node.source(), key, "expected a string");
        }
        return s;
    }

    // Whether `folder` (named by `key` at `where`) is a folder to read: E0024 when it lies
    // outside what the access may read; false without a report when it does not exist.
    bool folderToRead(const fs::path& folder, const toml::source_region& where, const std::string& key,
                      const std::string& given, FileAccess::Kind& kind) {
        kind = access.kind(folder);
        if (kind == FileAccess::Kind::Outside) {
            report(DiagCode::FolderOutside, where, key,
                   fmt::format("'{}' ({}) lies outside {}; nothing is read from it", given, folder.string(),
                               access.boundary()));
        }
        return kind == FileAccess::Kind::Directory;
    }

    bool failed = false;
    const FileAccess& access;

private:
    const SourceFile& file_;
    DiagnosticSink& sink_;
};

struct Dependency {
    std::string name;
    fs::path folder;
    std::string version; // asked for; empty: any
    toml::source_region versionAt;
    FileId manifest = kNoFile; // where it was declared
};

struct Library {
    std::vector<fs::path> folders;
    std::vector<Dependency> dependencies;
    std::string version; // [package] version; empty when not declared
    VendorProfile vendor = VendorProfile::Codesys;
};

// Reads the keys of one trust-lsp.toml that takt uses and warns on each one it does not.
void readTables(const toml::table& root, const fs::path& dir, ManifestReader& r, Library& out) {
    static const toml::table kEmpty;
    for (const auto& [key, node] : root) {
        const std::string name(key.str());
        if (name == "project") {
            const toml::table* project = r.table(node, name);
            for (const auto& [k, v] : project != nullptr ? *project : kEmpty) {
                const std::string path = fmt::format("project.{}", k.str());
                if (k.str() == "include_paths") {
                    const toml::array* list = v.as_array();
                    if (list == nullptr) {
                        r.report(DiagCode::ManifestInvalid, v.source(), path, "expected an array of folder names");
                        continue;
                    }
                    for (const toml::node& item : *list) {
                        const auto* folder = r.string(item, path);
                        if (folder == nullptr) {
                            continue;
                        }
                        fs::path abs = (dir / folder->get()).lexically_normal();
                        FileAccess::Kind kind{};
                        if (!r.folderToRead(abs, item.source(), path, folder->get(), kind)) {
                            if (kind == FileAccess::Kind::Outside) {
                                continue;
                            }
                            // truST's own examples name include paths that are not there and
                            // still build from src/: a warning, and src/ when none is left.
                            r.ignored(item.source(), path,
                                      fmt::format("no folder '{}' at {}; with no include path left, src/ is "
                                                  "compiled",
                                                  folder->get(), abs.string()));
                            continue;
                        }
                        out.folders.push_back(std::move(abs));
                    }
                } else if (k.str() == "stdlib") {
                    const auto* s = r.string(v, path);
                    if (s != nullptr && s->get() != "iec") {
                        r.ignored(v.source(), path,
                                  "takt always provides the IEC 61131-3 standard library and no other");
                    }
                } else if (k.str() == "vendor_profile") {
                    const auto* s = r.string(v, path);
                    if (s != nullptr && (s->get() == "mitsubishi" || s->get() == "gxworks3")) {
                        out.vendor = VendorProfile::Mitsubishi;
                    } else if (s != nullptr && s->get() != "codesys") {
                        r.ignored(v.source(), path,
                                  fmt::format("takt compiles every project as CODESYS does; \"{}\" library blocks "
                                              "and syntax are not provided",
                                              s->get()));
                    }
                } else {
                    r.ignored(k.source(), path, "not a key takt reads");
                }
            }
        } else if (name == "package") {
            const toml::table* package = r.table(node, name);
            for (const auto& [k, v] : package != nullptr ? *package : kEmpty) {
                const std::string path = fmt::format("package.{}", k.str());
                if (k.str() == "version") {
                    if (const auto* s = r.string(v, path); s != nullptr) {
                        out.version = s->get();
                    }
                } else if (k.str() != "name") {
                    r.ignored(k.source(), path, "not a key takt reads");
                }
            }
        } else if (name == "dependencies") {
            const toml::table* deps = r.table(node, name);
            for (const auto& [k, v] : deps != nullptr ? *deps : kEmpty) {
                const std::string path = fmt::format("dependencies.{}", k.str());
                Dependency dep{std::string(k.str()), {}, {}, {}, kNoFile};
                const toml::node* where = &v;
                if (const auto* shorthand = v.as_string(); shorthand != nullptr) {
                    dep.folder = shorthand->get();
                } else if (const toml::table* entry = r.table(v, path); entry != nullptr) {
                    where = nullptr;
                    for (const auto& [f, fv] : *entry) {
                        const std::string fieldPath = fmt::format("{}.{}", path, f.str());
                        if (f.str() == "path") {
                            if (const auto* s = r.string(fv, fieldPath); s != nullptr) {
                                dep.folder = s->get();
                                where = &fv;
                            }
                        } else if (f.str() == "version") {
                            if (const auto* s = r.string(fv, fieldPath); s != nullptr) {
                                dep.version = s->get();
                                dep.versionAt = fv.source();
                            }
                        } else if (f.str() == "git" || f.str() == "rev" || f.str() == "tag" || f.str() == "branch") {
                            r.report(DiagCode::DependencyUnsupported, fv.source(), fieldPath,
                                     "takt reads path dependencies only; check the library out and name its folder "
                                     "with path = \"…\"");
                        } else {
                            r.ignored(f.source(), fieldPath, "not a key takt reads");
                        }
                    }
                    if (where == nullptr) {
                        r.report(DiagCode::ManifestInvalid, v.source(), path,
                                 "the dependency has no path = \"…\" naming the library's folder");
                        continue;
                    }
                } else {
                    continue;
                }
                const fs::path given = dep.folder;
                dep.folder = (dir / given).lexically_normal();
                const std::string keyPath = where == &v ? path : path + ".path";
                FileAccess::Kind kind{};
                if (!r.folderToRead(dep.folder, where->source(), keyPath, given.generic_string(), kind)) {
                    if (kind == FileAccess::Kind::Outside) {
                        continue;
                    }
                    r.report(DiagCode::DependencyNotFound, where->source(), keyPath,
                             fmt::format("library folder '{}' does not exist (looked for {})", given.generic_string(),
                                         dep.folder.string()));
                    continue;
                }
                out.dependencies.push_back(std::move(dep));
            }
        } else if (name == "runtime") {
            r.ignored(node.source(), name, "takt takes the control endpoint from runtime.toml [runtime.control]");
        } else {
            r.ignored(key.source(), name, "an editor or truST setting takt does not read");
        }
    }
}

} // namespace

ManifestSources readTrustManifest(const fs::path& projectDir, SourceManager& sources, DiagnosticSink& sink,
                                  std::string (*display)(const fs::path&, const fs::path&), const FileAccess& access) {
    ManifestSources out;
    std::error_code ec;
    std::set<fs::path> seen; // library folders already read: each once, and no cycles

    // Reads one folder's trust-lsp.toml (a library may have none: then src/, else the folder).
    const auto readFolder = [&](const fs::path& dir, bool isProject) -> Library {
        Library lib;
        const fs::path file = dir / kManifestName;
        std::string text;
        std::string error;
        const auto hasSrc = [&] { return access.kind(dir / "src") == FileAccess::Kind::Directory; };
        if (access.kind(file) != FileAccess::Kind::File || !access.read(file, text, error)) {
            lib.folders.push_back(isProject || hasSrc() ? dir / "src" : dir);
            return lib;
        }
        const FileId id = sources.add(display(file, projectDir), text);
        out.manifests.push_back(id);
        ManifestReader reader(sources.file(id), sink, access);
        toml::table root;
        // The packaged toml++ is built with exceptions; its parse errors surface only this way.
        try {
            root = toml::parse(text, file.string());
        } catch (const toml::parse_error& e) {
            reader.report(DiagCode::ManifestInvalid, e.source(), std::string(kManifestName),
                          std::string(e.description()));
            out.failed = true;
            return lib;
        }
        readTables(root, dir, reader, lib);
        if (lib.folders.empty()) {
            lib.folders.push_back(isProject || hasSrc() ? dir / "src" : dir);
        }
        for (Dependency& d : lib.dependencies) {
            d.manifest = id;
        }
        out.failed = out.failed || reader.failed;
        return lib;
    };

    if (access.kind(projectDir / kManifestName) != FileAccess::Kind::File) {
        return out;
    }
    out.present = true;
    Library project = readFolder(projectDir, true);
    out.folders = project.folders;
    out.vendor = project.vendor; // a library's own profile does not change the project's
    std::vector<Dependency> pending(project.dependencies.rbegin(), project.dependencies.rend());
    while (!pending.empty()) {
        Dependency dep = std::move(pending.back());
        pending.pop_back();
        fs::path key = fs::weakly_canonical(dep.folder, ec);
        if (!seen.insert(ec ? dep.folder : key).second) {
            continue;
        }
        Library lib = readFolder(dep.folder, false);
        if (!dep.version.empty() && !lib.version.empty() && lib.version != dep.version) {
            ManifestReader reader(sources.file(dep.manifest), sink, access);
            reader.report(DiagCode::DependencyVersionMismatch, dep.versionAt,
                          fmt::format("dependencies.{}.version", dep.name),
                          fmt::format("asks for {} but the library at {} declares version {}; its sources are "
                                      "compiled as they are",
                                      dep.version, dep.folder.string(), lib.version));
        }
        out.folders.insert(out.folders.end(), lib.folders.begin(), lib.folders.end());
        pending.insert(pending.end(), lib.dependencies.rbegin(), lib.dependencies.rend());
    }
    return out;
}

} // namespace takt::compiler
