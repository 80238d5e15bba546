#include "lsp/lsp_incremental.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "takt/compiler/ast_dump.h"
#include "takt/compiler/call_graph.h"
#include "takt/compiler/names.h"
#include "takt/compiler/sema/model.h"

namespace takt::agent::lsp {

namespace fs = std::filesystem;
using compiler::FileId;
using compiler::Symbol;

namespace {

// Every POU of a unit (methods and namespaces included), for `visit`.
void forEachPou(std::vector<compiler::ast::DeclPtr>& decls, const std::function<void(compiler::ast::PouDecl&)>& visit) {
    using namespace compiler::ast;
    for (DeclPtr& d : decls) {
        if (d->kind == DeclKind::Pou) {
            auto& pou = static_cast<PouDecl&>(*d);
            visit(pou);
            for (auto& m : pou.methods) {
                visit(*m);
            }
        } else if (d->kind == DeclKind::Namespace) {
            forEachPou(static_cast<NamespaceDecl&>(*d).decls, visit);
        }
    }
}

// The unit as the syntax tree prints it without its bodies and positions: two texts with the same
// interface declare the same things for the other files.
std::string interfaceOf(compiler::ast::CompilationUnit& unit, const compiler::SourceManager& sm) {
    std::vector<compiler::ast::StmtList> bodies;
    forEachPou(unit.decls, [&](compiler::ast::PouDecl& p) { bodies.push_back(std::move(p.body)); });
    std::string out = compiler::dumpAst(unit, sm);
    std::size_t i = 0;
    forEachPou(unit.decls, [&](compiler::ast::PouDecl& p) { p.body = std::move(bodies[i++]); });
    return out;
}

// `text` with each POU body turned into a comment of the same length: the lexer skips it, the
// parser sees an empty body, and every other byte (so every offset, line and UTF-16 column of the
// declarations) stays where it was.
std::string declarationsOnly(compiler::ast::CompilationUnit& unit, std::string text) {
    forEachPou(unit.decls, [&](compiler::ast::PouDecl& p) {
        if (p.body.empty()) {
            return;
        }
        std::size_t begin = p.body.front()->span.begin;
        std::size_t end = p.body.back()->span.end;
        for (std::size_t k = end; k < text.size() && (text[k] == ';' || text[k] == ' ' || text[k] == '\t');) {
            if (text[k++] == ';') {
                end = k; // a statement's span may stop before its ';'
            }
        }
        for (std::size_t k = begin; k < end && k < text.size(); ++k) {
            if (static_cast<unsigned char>(text[k]) < 0x80 && text[k] != '\n') {
                text[k] = ' ';
            }
        }
        if (end - begin >= 4) {
            text.replace(begin, 2, "(*");
            text.replace(end - 2, 2, "*)");
        }
    });
    return text;
}

// Every word of `text` (identifier-like, upper-cased); comments and strings included, which only
// makes the dependencies found larger.
std::set<std::string> wordsOf(std::string_view text) {
    std::set<std::string> out;
    const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
    for (std::size_t i = 0; i < text.size();) {
        if (!word(text[i])) {
            ++i;
            continue;
        }
        const std::size_t from = i;
        while (i < text.size() && word(text[i])) {
            ++i;
        }
        out.insert(compiler::upperName(text.substr(from, i - from)));
    }
    return out;
}

// The names file `id` declares where other files can name them: the global scope, namespaces,
// and enumeration values (a bare value resolves across the project).
void declaredNames(const compiler::Scope& scope, FileId id, std::set<std::string>& out) {
    for (const Symbol* s : scope.symbols()) {
        if (s->span.file == id) {
            out.insert(compiler::upperName(s->name));
        }
        if (s->kind == compiler::SymbolKind::Namespace && s->scope != nullptr) {
            declaredNames(*s->scope, id, out);
        }
    }
}

bool isSyntaxError(const compiler::Diagnostic& d) {
    const std::string_view code = compiler::diagInfo(d.code).code;
    return code.starts_with("E00");
}

// A symbol by its upper-case qualified name (`LIB.MOTOR.START`): the same across analyses.
std::string keyOf(const Symbol* s) {
    std::string key = compiler::upperName(s->name);
    for (const Symbol* o = s->owner; o != nullptr; o = o->owner) {
        key = compiler::upperName(o->name) + "." + key;
    }
    return key;
}

// The facts of file `id` of `a`, whose bodies were all checked.
FileFacts factsOfFile(Analysis& a, FileId id, std::string text) {
    FileFacts f;
    const compiler::SourceManager& sm = *a.project.sources;
    compiler::ast::CompilationUnit* unit = nullptr;
    for (compiler::ast::CompilationUnit& u : a.project.units) {
        if (u.file == id) {
            unit = &u;
        }
    }
    bool syntax = false;
    for (const compiler::Diagnostic& d : a.project.diagnostics) {
        if (d.span.file != id) {
            continue;
        }
        syntax = syntax || isSyntaxError(d);
        f.errors += d.severity == compiler::Severity::Error ? 1 : 0;
        for (const compiler::RelatedLocation& r : d.related) {
            if (r.span.file != id && r.span.file < a.files.size()) {
                f.relatedFiles.insert(a.files[r.span.file]);
            }
        }
    }
    if (unit != nullptr) {
        f.interface = interfaceOf(*unit, sm);
        if (!syntax) {
            f.declarationsOnly = declarationsOnly(*unit, text);
        }
        for (const compiler::ast::DeclPtr& d : unit->decls) {
            f.reachesAll = f.reachesAll || d->kind == compiler::ast::DeclKind::Configuration ||
                           d->kind == compiler::ast::DeclKind::Using;
        }
    }
    f.mentions = wordsOf(f.declarationsOnly.empty() ? text : f.declarationsOnly);
    const compiler::SemanticModel& model = *a.project.model;
    declaredNames(*model.global, id, f.declares);
    for (const Symbol* v : model.enumValues) {
        if (v->span.file == id) {
            f.declares.insert(compiler::upperName(v->name));
        }
    }
    for (const compiler::SemanticModel::BodyUse& c : model.calls) {
        if (c.at.file == id) {
            f.calls.insert(keyOf(c.user) + ">" + keyOf(c.used));
        }
    }
    for (const compiler::SemanticModel::BodyUse& u : model.foreignLocalUses) {
        if (u.at.file == id && u.used->span.file < a.files.size()) {
            f.foreignLocals.insert(a.files[u.used->span.file].generic_string() + "|" + keyOf(u.used));
        }
    }
    f.text = std::move(text);
    return f;
}

// Whether a call of `facts[focus]` lies on a cycle of the project's calls (the focus file's calls
// before and after the edit, the others' as last checked): E0115 then depends on other bodies.
bool callsOnCycle(const ProjectFacts& facts, std::size_t focus, const std::set<std::string>& before) {
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
    for (std::size_t i = 0; i < facts.facts.size(); ++i) {
        for (const std::string& e : facts.facts[i].calls) {
            add(e, i == focus);
        }
    }
    for (const std::string& e : before) {
        add(e, true);
    }
    for (const auto& [caller, callee] : mine) {
        if (compiler::reaches(graph, callee, caller)) {
            return true;
        }
    }
    return false;
}

// The files `focus` depends on, in compilation order with it: those declaring a word it mentions
// (`words`: its whole text), then a word those mention, to the end; and every file that reaches
// into all others.
std::vector<std::size_t> dependencies(const ProjectFacts& facts, std::size_t focus, std::set<std::string> words) {
    std::map<std::string, std::vector<std::size_t>> declaredBy;
    std::vector<bool> in(facts.files.size(), false);
    std::vector<std::size_t> todo{focus};
    in[focus] = true;
    for (std::size_t i = 0; i < facts.facts.size(); ++i) {
        for (const std::string& name : facts.facts[i].declares) {
            declaredBy[name].push_back(i);
        }
        if (facts.facts[i].reachesAll && !in[i]) {
            in[i] = true;
            todo.push_back(i);
        }
    }
    for (std::size_t k = 1; k < todo.size(); ++k) {
        words.insert(facts.facts[todo[k]].mentions.begin(), facts.facts[todo[k]].mentions.end());
    }
    while (!words.empty()) {
        std::set<std::string> next;
        for (const std::string& w : words) {
            const auto d = declaredBy.find(w);
            if (d == declaredBy.end()) {
                continue;
            }
            for (const std::size_t i : d->second) {
                if (!in[i]) {
                    in[i] = true;
                    next.insert(facts.facts[i].mentions.begin(), facts.facts[i].mentions.end());
                }
            }
        }
        words = std::move(next);
    }
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i]) {
            out.push_back(i);
        }
    }
    return out;
}

} // namespace

std::optional<ProjectFacts> factsOf(Analysis& full) {
    if (!full.project.valid() || full.project.model == nullptr || !full.focus.empty()) {
        return std::nullopt;
    }
    ProjectFacts p;
    p.build = full.project.build;
    p.files = full.files;
    const compiler::SourceManager& sm = *full.project.sources;
    for (FileId id = 0; id < full.files.size(); ++id) {
        p.displayPaths.emplace_back(sm.file(id).path());
        p.facts.push_back(factsOfFile(full, id, std::string(sm.file(id).text())));
    }
    return p;
}

std::optional<Analysis> recheckFile(ProjectFacts& facts, const fs::path& root, const fs::path& sourcesDir,
                                    const fs::path& file, const std::string& text) {
    const auto it = std::find(facts.files.begin(), facts.files.end(), file);
    if (it == facts.files.end()) {
        return std::nullopt;
    }
    const auto focus = static_cast<std::size_t>(it - facts.files.begin());
    std::size_t otherErrors = 0;
    for (std::size_t i = 0; i < facts.files.size(); ++i) {
        const FileFacts& f = facts.facts[i];
        if (i == focus) {
            continue;
        }
        otherErrors += f.errors;
        if (f.relatedFiles.contains(file)) {
            return std::nullopt; // its diagnostics point at positions the edit may have moved
        }
        for (const std::string& local : f.foreignLocals) {
            if (local.starts_with(file.generic_string() + "|")) {
                return std::nullopt; // W0001 of this file depends on that file's bodies
            }
        }
    }
    const std::vector<std::size_t> needed = dependencies(facts, focus, wordsOf(text));
    std::vector<compiler::SourceText> sources;
    Analysis a;
    a.root = root;
    a.sourcesDir = sourcesDir;
    a.focus = file;
    FileId focusId = 0;
    for (const std::size_t i : needed) {
        const FileFacts& f = facts.facts[i];
        focusId = i == focus ? static_cast<FileId>(a.files.size()) : focusId;
        a.files.push_back(facts.files[i]);
        sources.push_back({facts.displayPaths[i], i == focus                   ? text
                                                  : f.declarationsOnly.empty() ? f.text
                                                                               : f.declarationsOnly});
    }
    a.project = compiler::checkSources(std::move(sources), facts.build);
    a.project.directory = root;
    FileFacts now = factsOfFile(a, focusId, text);
    FileFacts& was = facts.facts[focus];
    const bool sameInterface = now.interface == was.interface;
    for (const compiler::Diagnostic& d : a.project.diagnostics) {
        if (d.span.file != focusId && d.span.file < needed.size() && isSyntaxError(d) &&
            !facts.facts[needed[d.span.file]].declarationsOnly.empty()) {
            return std::nullopt; // a body left out changed how the rest parses (never expected)
        }
    }
    // The error limit stops a full check early: which errors survive depends on all files.
    const bool nearLimit = otherErrors + now.errors + 1 >= compiler::DiagnosticSink::kDefaultErrorLimit;
    const std::set<std::string> before = std::move(was.calls);
    const bool foreign = !now.foreignLocals.empty() || !was.foreignLocals.empty();
    was.calls = now.calls;
    const bool cycle = callsOnCycle(facts, focus, before);
    if (!sameInterface || nearLimit || foreign || cycle) {
        was.calls = before;
        return std::nullopt;
    }
    was = std::move(now);
    return a;
}

} // namespace takt::agent::lsp
