// Loading and checking a whole project (frontend.h): the one loader behind checkProject, the
// editor and the agent. The incremental check of one file is in frontend_incremental.cpp.
#include "takt/compiler/frontend.h"

#include <algorithm>
#include <iterator>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "frontend_cache.h"
#include "project_files.h"
#include "takt/compiler/parser.h"
#include "takt/compiler/plcopen.h"
#include "trust_manifest.h"

namespace takt::compiler {

namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& path, const fs::path& dir) {
    const fs::path rel = path.lexically_relative(dir);
    return !rel.empty() && !rel.generic_string().starts_with("..");
}

// Parses the readable files of `project.sources` and analyses them together.
std::size_t compile(Project& project, const std::vector<bool>& readable, DiagnosticSink& sink) {
    SourceManager& sm = *project.sources;
    project.units.reserve(sm.size());
    for (FileId id = 0; id < sm.size(); ++id) {
        if (!readable[id]) {
            continue;
        }
        project.units.push_back(parseSource(sm.file(id), sink, project.build.dialect));
    }
    AnalysisOptions options;
    options.addressMode = project.build.addressMode;
    options.dialect = project.build.dialect;
    options.vendor = project.build.vendor;
    project.model = analyze(project.units, sm, sink, options).model;
    sink.sort();
    project.diagnostics = sink.diagnostics();
    project.errorCount = sink.errorCount();
    project.warningCount = sink.warningCount();
    return project.units.size();
}

// A diagnostic about the text of a graphical element in an FBD or LD statement names the
// element's own line and localId (PlcopenOrigin), not the line the statement is written on.
void placeAtElements(std::vector<Diagnostic>& diagnostics,
                     const std::vector<std::pair<FileId, std::vector<PlcopenOrigin>>>& origins) {
    for (Diagnostic& d : diagnostics) {
        if (isPlcopenReaderCode(d.code)) {
            continue;
        }
        for (const auto& [file, list] : origins) {
            if (file != d.span.file) {
                continue;
            }
            const auto after = std::upper_bound(list.begin(), list.end(), d.span.begin,
                                                [](std::uint32_t at, const PlcopenOrigin& o) { return at < o.begin; });
            if (after == list.begin() || d.span.begin >= std::prev(after)->end) {
                break;
            }
            const PlcopenOrigin& o = *std::prev(after);
            if (o.hasTarget) {
                d.span = Span{file, o.target, o.target};
            }
            if (!o.localId.empty()) {
                d.message += fmt::format(" (localId {})", o.localId);
            }
            break;
        }
    }
}

fs::path absoluteOf(const fs::path& p, const fs::path& base) {
    return (p.is_absolute() ? p : base / p).lexically_normal();
}

} // namespace

fs::path projectRootFor(const fs::path& file, const fs::path& workspace) {
    const bool bounded = !workspace.empty() && inside(file, workspace);
    std::error_code ec;
    for (fs::path dir = file.parent_path(); !dir.empty(); dir = dir.parent_path()) {
        if (fs::exists(dir / "runtime.toml", ec) || fs::exists(dir / "trust-lsp.toml", ec)) {
            return dir;
        }
        if ((bounded && dir == workspace) || dir == dir.parent_path()) {
            break;
        }
    }
    return workspace.empty() ? file.parent_path() : workspace;
}

std::optional<FileId> CheckedProject::fileOf(const fs::path& path) const {
    for (FileId id = 0; id < files.size(); ++id) {
        if (files[id] == path) {
            return id;
        }
    }
    return std::nullopt;
}

Frontend::Frontend(ProjectInput input, std::optional<Dialect> dialect, bool forEdits)
    : input_(std::move(input)), dialect_(dialect), directory_(normalDirectory(input_.directory)), forEdits_(forEdits) {}

Frontend::~Frontend() = default;

void Frontend::setText(const fs::path& file, std::string text) {
    texts_.insert_or_assign(file, std::move(text));
    stale_ = true;
}

void Frontend::dropText(const fs::path& file) {
    if (texts_.erase(file) > 0) {
        stale_ = true;
    }
}

const std::string* Frontend::textOf(const fs::path& file) const {
    const auto it = texts_.find(file);
    return it == texts_.end() ? nullptr : &it->second;
}

void Frontend::invalidate() {
    stale_ = true;
    last_.reset();
    loaded_.reset();
}

const CheckedProject& Frontend::check(const fs::path& also) {
    if (stale_ || last_ == nullptr || !last_->focus.empty() ||
        (!also.empty() && texts_.contains(also) && !last_->fileOf(also) && last_->project.valid() &&
         (loaded_ == nullptr || loaded_->usable))) {
        fullCheck(also);
    }
    return *last_;
}

const CheckedProject& Frontend::checkFile(const fs::path& file) {
    if (!stale_ && last_ != nullptr && (last_->focus.empty() || last_->focus == file) && last_->fileOf(file)) {
        return *last_;
    }
    if (!incremental(file)) {
        fullCheck(texts_.contains(file) ? file : fs::path());
    }
    return *last_;
}

CheckedProject Frontend::takeCheck() {
    CheckedProject out = last_ != nullptr ? std::move(*last_) : CheckedProject{};
    last_.reset();
    loaded_.reset();
    stale_ = true;
    return out;
}

// The stale answer and its kept declarations go before the new ones are built, so a check never
// holds two syntax trees of the project (docs/performance.md, memory); the declarations of a
// file whose text did not change are kept.
void Frontend::fullCheck(const fs::path& also) {
    last_.reset();
    std::vector<FileState> previous;
    if (loaded_ != nullptr) {
        previous = std::move(loaded_->states);
        loaded_.reset();
    }
    ++stats_.fullChecks;
    stale_ = false;
    auto out = std::make_unique<CheckedProject>();
    Project& project = out->project;
    project.directory = directory_;
    std::error_code ec;
    const FileAccess& access = input_.access != nullptr ? *input_.access : diskAccess();
    const bool explicitFiles = !input_.files.empty();
    const FileAccess::Kind dirKind = explicitFiles ? FileAccess::Kind::Directory : access.kind(project.directory);
    if (dirKind != FileAccess::Kind::Directory) {
        const bool exists = dirKind != FileAccess::Kind::Missing;
        project.configErrors.push_back(
            ConfigError{input_.directory.empty() ? project.directory.string() : input_.directory.generic_string(),
                        0,
                        0,
                        {},
                        exists ? "the project path is not a directory" : "the project directory does not exist"});
        last_ = std::move(out);
        return;
    }
    if (!explicitFiles || input_.readConfig) {
        readProjectConfig(project, access);
        if (!project.valid()) {
            last_ = std::move(out);
            return;
        }
    }
    if (dialect_) {
        project.build.dialect = *dialect_;
    }
    if (!input_.sourcesRoot.empty()) {
        project.build.sourcesRoot = input_.sourcesRoot;
    }

    DiagnosticSink sink;
    std::vector<bool> readable; // by FileId: the trust-lsp.toml files read are not ST
    ManifestSources manifest;
    auto loaded = std::make_unique<Loaded>();
    if (!explicitFiles) {
        manifest = readTrustManifest(project.directory, *project.sources, sink, &displayPath, access);
        project.build.vendor = manifest.vendor;
        readable.assign(project.sources->size(), false);
        for (FileId id = 0; id < project.sources->size(); ++id) {
            const SourceFile& f = project.sources->file(id);
            loaded->display.push_back(f.path());
            loaded->files.push_back(absoluteOf(f.path(), project.directory));
            loaded->manifestTexts.emplace_back(f.text());
        }
    }
    std::vector<fs::path> files =
        explicitFiles ? input_.files : projectSources(project.directory, manifest, project.build.sourcesRoot, access);
    if (manifest.failed) {
        files.clear(); // a missing library would only show as unknown names in every file using it
    }
    std::vector<fs::path> absolute;
    absolute.reserve(files.size() + 1);
    for (const fs::path& f : files) {
        absolute.push_back(absoluteOf(f, fs::current_path(ec)));
    }
    if (!also.empty() && !manifest.failed && texts_.contains(also) &&
        std::find(absolute.begin(), absolute.end(), also) == absolute.end()) {
        files.push_back(also); // an open document outside the project's folders
        absolute.push_back(also);
    }
    bool allRead = true;
    std::vector<std::pair<FileId, std::vector<PlcopenOrigin>>> origins; // of each XML file's networks
    readable.reserve(readable.size() + files.size());
    for (std::size_t i = 0; i < files.size(); ++i) {
        std::string shown = displayPath(files[i], project.directory);
        std::string text;
        std::string error;
        bool ok = true;
        if (const std::string* open = textOf(absolute[i]); open != nullptr) {
            text = *open;
        } else {
            ok = access.read(files[i], text, error);
        }
        // A PLCopen XML file is compiled as the ST it translates to, line for line (plcopen.h).
        PlcopenTranslation xml;
        if (ok && isPlcopenPath(files[i])) {
            xml = translatePlcopen(text);
            text = std::move(xml.text);
        }
        const FileId id = project.sources->add(shown, ok ? std::move(text) : std::string());
        for (PlcopenProblem& p : xml.problems) {
            (void)sink.report(p.code, Span{id, p.offset, p.offset}, std::move(p.message));
        }
        if (!xml.origins.empty()) {
            origins.emplace_back(id, std::move(xml.origins));
        }
        project.sourcePaths.push_back(shown);
        loaded->display.push_back(shown);
        loaded->files.push_back(absolute[i]);
        readable.push_back(ok);
        allRead = allRead && ok;
        if (!ok) {
            (void)sink.report(DiagCode::FileReadError, Span{id, 0, 0},
                              fmt::format("cannot read '{}': {}", shown, error));
        }
    }
    if (files.empty() && !manifest.failed) {
        (void)sink.report(
            DiagCode::EmptyProject, Span{},
            fmt::format("no source files (*.st, *.pou, *.xml) found under '{}'",
                        displayPath(project.directory / project.build.sourcesRoot, project.directory) + "/"));
    }
    stats_.parses += compile(project, readable, sink);
    placeAtElements(project.diagnostics, origins);
    out->files = loaded->files;
    loaded->build = project.build;
    loaded->usable = forEdits_ && !manifest.failed && allRead && !files.empty();
    if (loaded->usable) {
        const auto first = static_cast<FileId>(loaded->manifestTexts.size());
        loaded->states.resize(files.size());
        for (ast::CompilationUnit& unit : project.units) {
            FileState& st = loaded->states[unit.file - first];
            st.path = loaded->files[unit.file];
            st.text = std::string(project.sources->file(unit.file).text());
            recordFacts(*out, unit.file, unit, st);
            for (FileState& was : previous) {
                if (was.path == st.path && was.text == st.text && was.declUnit != nullptr) {
                    st.declUnit = std::move(was.declUnit); // its declarations, already parsed
                    break;
                }
            }
        }
    }
    loaded_ = std::move(loaded);
    last_ = std::move(out);
}

Project checkSources(std::vector<SourceText> sources, const BuildOptions& build) {
    Project project;
    project.directory = ".";
    project.build = build;
    DiagnosticSink sink;
    std::vector<bool> readable(sources.size(), true);
    for (SourceText& s : sources) {
        project.sourcePaths.push_back(s.path);
        (void)project.sources->add(std::move(s.path), std::move(s.text));
    }
    if (sources.empty()) {
        (void)sink.report(DiagCode::EmptyProject, Span{}, "no source files were given");
    }
    (void)compile(project, readable, sink);
    return project;
}

} // namespace takt::compiler
