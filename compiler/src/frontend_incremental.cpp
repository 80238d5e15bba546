// The incremental check of one edited file (frontend.h): the file in full against the kept
// declarations of the files it needs, each parsed once per text and re-analysed in place.
//
// The answer is the full check's whenever the diagnostics of the edited file depend only on its
// own text and the declarations of the others. Semantic analysis records, while it checks, what
// decides that: every name looked up in the global scope or a namespace (hit or miss: a file left
// out may declare it), the calls (E0115 looks for cycles over every body), the locals named from
// another file (W0001 counts uses in every body), and each diagnostic's related locations (a note
// in another file moves with that file's text). The edited file is checked with the files it was
// checked with last; while analysis looked up a name a file left out declares, that file is added
// and the check runs again. With the declarations of the edited file unchanged (a digest of what
// the model holds of them: the others see nothing new), this file decides when to fall back to a
// full check.
#include <algorithm>
#include <map>
#include <set>

#include "frontend_cache.h"
#include "takt/compiler/call_graph.h"
#include "takt/compiler/parser.h"
#include "takt/compiler/plcopen.h"
#include "takt/compiler/sema/model.h"

namespace takt::compiler {

namespace fs = std::filesystem;

namespace {

// Whether a call of file `focus` lies on a cycle of the project's calls (its calls before and
// after the edit, the others' as last checked): E0115 then depends on other bodies.
bool callsOnCycle(const std::vector<Frontend::FileState>& states, std::size_t focus,
                  const std::set<std::string>& before, const std::set<std::string>& now) {
    std::map<std::string, std::vector<std::string>> graph;
    std::vector<std::pair<std::string, std::string>> mine;
    const auto add = [&](const std::string& edge, bool own) {
        const std::size_t gt = edge.find('>');
        std::string from = edge.substr(0, gt);
        std::string to = edge.substr(gt + 1);
        graph[from].push_back(to);
        if (own) {
            mine.emplace_back(std::move(from), std::move(to));
        }
    };
    for (std::size_t i = 0; i < states.size(); ++i) {
        if (i != focus) {
            for (const std::string& e : states[i].calls) {
                add(e, false);
            }
        }
    }
    for (const std::string& e : before) {
        add(e, true);
    }
    for (const std::string& e : now) {
        add(e, true);
    }
    for (const auto& [caller, callee] : mine) {
        if (reaches(graph, callee, caller)) {
            return true;
        }
    }
    return false;
}

// One analysis of the edited file in full with the declarations of the files `in` holds.
struct Round {
    std::unique_ptr<CheckedProject> out;
    std::unique_ptr<DiagnosticSink> sink;
    ast::CompilationUnit focusUnit;
    bool brokenDeclarations = false;
};

Round checkWith(Frontend::Loaded& loaded, std::size_t focus, const fs::path& file, const std::string& edited,
                const std::vector<bool>& in, const fs::path& directory, Frontend::Stats& stats) {
    std::vector<Frontend::FileState>& states = loaded.states;
    const auto first = static_cast<FileId>(loaded.manifestTexts.size());
    Round r;
    r.out = std::make_unique<CheckedProject>();
    r.sink = std::make_unique<DiagnosticSink>();
    DiagnosticSink& sink = *r.sink;
    Project& project = r.out->project;
    project.directory = directory;
    project.build = loaded.build;
    r.out->files = loaded.files;
    r.out->focus = file;
    SourceManager& sm = *project.sources;
    for (std::size_t i = 0; i < loaded.manifestTexts.size(); ++i) {
        (void)sm.add(loaded.display[i], loaded.manifestTexts[i]);
    }
    std::vector<ast::CompilationUnit> units;
    std::vector<std::size_t> unitState; // the FileState of each unit
    units.reserve(states.size());
    std::vector<bool> kept(states.size(), false); // the unit goes back to its FileState afterwards
    // The files left out keep their FileId with no text, so the kept units' spans stay valid.
    for (std::size_t i = 0; i < states.size(); ++i) {
        Frontend::FileState& s = states[i];
        const auto id = static_cast<FileId>(first + i);
        const bool declarations = i != focus && !s.declText.empty();
        project.sourcePaths.push_back(loaded.display[id]);
        if (!in[i]) {
            (void)sm.add(loaded.display[id], {});
            continue;
        }
        (void)sm.add(loaded.display[id], i == focus ? edited : declarations ? s.declText : s.text);
        unitState.push_back(i);
        if (declarations && s.declUnit != nullptr && clearForReuse(*s.declUnit)) {
            units.push_back(std::move(*s.declUnit));
            kept[i] = true;
            continue;
        }
        const std::size_t errorsBefore = sink.errorCount();
        units.push_back(parseSource(sm.file(id), sink, project.build.dialect));
        ++stats.parses;
        if (declarations) {
            // Blanking the bodies never changes how the declarations parse; if it did, this
            // answer would not be the full check's.
            if (sink.errorCount() != errorsBefore) {
                r.brokenDeclarations = true;
                s.declText.clear(); // checked by its whole text from now on
            } else {
                kept[i] = true;
            }
        }
    }
    AnalysisOptions options;
    options.addressMode = project.build.addressMode;
    options.dialect = project.build.dialect;
    options.vendor = project.build.vendor;
    options.bodiesOf = static_cast<FileId>(first + focus);
    project.model = analyze(units, sm, sink, options).model;
    sink.sort();

    // The declarations units go back to their files (the model points into them, and lives in
    // the answer, which is released before any of them is used again); the edited file's stays.
    for (std::size_t u = 0; u < units.size(); ++u) {
        const std::size_t i = unitState[u];
        if (i == focus) {
            r.focusUnit = std::move(units[u]);
        } else if (kept[i]) {
            states[i].declUnit = std::make_unique<ast::CompilationUnit>(std::move(units[u]));
        }
    }
    return r;
}

// The files `in` lacks that declare a name the analysis looked up (or the edited file declares:
// two declarations of one name are an error wherever they are); true when it added any.
bool addDeclarers(const std::vector<Frontend::FileState>& states, std::size_t focus, const SemanticModel& model,
                  FileId focusId, std::vector<bool>& in) {
    std::set<std::string> names(model.probedNames.begin(), model.probedNames.end());
    const std::set<std::string> own = declaredNames(model, focusId);
    names.insert(own.begin(), own.end());
    bool added = false;
    for (std::size_t i = 0; i < states.size(); ++i) {
        if (in[i] || i == focus) {
            continue;
        }
        for (const std::string& name : states[i].declares) {
            if (names.contains(name)) {
                in[i] = true;
                added = true;
                break;
            }
        }
    }
    return added;
}

} // namespace

bool Frontend::incremental(const fs::path& file) {
    const std::string* edited = textOf(file);
    if (loaded_ == nullptr || !loaded_->usable || edited == nullptr || isPlcopenPath(file)) {
        return false; // an XML file's edit is translated again by a full check
    }
    std::vector<FileState>& states = loaded_->states;
    const auto first = static_cast<FileId>(loaded_->manifestTexts.size());
    const auto at = std::find_if(states.begin(), states.end(), [&](const FileState& s) { return s.path == file; });
    if (at == states.end()) {
        return false;
    }
    const auto focus = static_cast<std::size_t>(at - states.begin());
    std::size_t otherErrors = 0;
    const std::string prefix = file.generic_string() + "|";
    for (std::size_t i = 0; i < states.size(); ++i) {
        if (i == focus) {
            continue;
        }
        const FileState& s = states[i];
        otherErrors += s.errors;
        if (s.relatedFiles.contains(file)) {
            return false; // its diagnostics point at positions the edit may have moved
        }
        for (const std::string& local : s.foreignLocals) {
            if (local.starts_with(prefix)) {
                return false; // W0001 of this file depends on that file's bodies
            }
        }
    }
    last_.reset(); // the answer this one replaces goes first: one syntax tree of the file at a time

    // The files it was checked with last time (none after a full check), and every file that
    // reaches into all others; then, while the analysis looked up a name a file left out
    // declares, that file too. Each round adds a file, so the rounds end.
    std::vector<bool> in(states.size(), false);
    in[focus] = true;
    for (const std::size_t i : states[focus].checkedWith) {
        in[i] = i < states.size();
    }
    for (std::size_t i = 0; i < states.size(); ++i) {
        in[i] = in[i] || states[i].reachesAll;
    }
    const auto focusId = static_cast<FileId>(first + focus);
    Round round;
    for (;;) {
        round.out.reset(); // the last round's model goes before its units are analysed again
        round = checkWith(*loaded_, focus, file, *edited, in, directory_, stats_);
        if (round.brokenDeclarations || !addDeclarers(states, focus, *round.out->project.model, focusId, in)) {
            break;
        }
    }

    std::unique_ptr<CheckedProject> out = std::move(round.out);
    Project& project = out->project;
    const DiagnosticSink& sink = *round.sink;
    for (const Diagnostic& d : sink.diagnostics()) {
        if (d.span.file == focusId) {
            project.diagnostics.push_back(d);
            project.errorCount += d.severity == Severity::Error ? 1 : 0;
            project.warningCount += d.severity == Severity::Warning ? 1 : 0;
        }
    }
    FileState now;
    now.path = file;
    // recordFacts reads the diagnostics of the file: give it every one of them.
    std::vector<Diagnostic> own = std::move(project.diagnostics);
    project.diagnostics = sink.diagnostics();
    recordFacts(*out, focusId, round.focusUnit, now);
    project.diagnostics = std::move(own);
    project.units.push_back(std::move(round.focusUnit));

    FileState& was = states[focus];
    // The error limit stops a full check early: which errors survive depends on all files.
    const bool nearLimit = otherErrors + now.errors + 1 >= DiagnosticSink::kDefaultErrorLimit;
    const bool foreign = !now.foreignLocals.empty() || !was.foreignLocals.empty();
    if (round.brokenDeclarations || now.digest != was.digest || nearLimit || foreign ||
        callsOnCycle(states, focus, was.calls, now.calls)) {
        return false;
    }
    now.text = *edited;
    for (std::size_t i = 0; i < states.size(); ++i) {
        if (in[i] && i != focus) {
            now.checkedWith.push_back(i);
        }
    }
    was = std::move(now);
    ++stats_.incrementalChecks;
    stale_ = false;
    last_ = std::move(out);
    return true;
}

} // namespace takt::compiler
