// The incremental check of one edited file (frontend.h): the file in full against the kept
// declarations of every other file, each parsed once per text and re-analysed in place.
//
// The answer is the full check's whenever the diagnostics of the edited file depend only on its
// own text and the declarations of the others. Semantic analysis records, while it checks the
// bodies, where that is not so: the calls (E0115 looks for cycles over every body), the locals
// named from another file (W0001 counts uses in every body), and each diagnostic's related
// locations (a note in another file moves with that file's text). With those, and with the
// declarations of the edited file unchanged (the others see nothing new), this file decides
// when to fall back to a full check.
#include <algorithm>
#include <functional>
#include <map>

#include "frontend_cache.h"
#include "takt/compiler/ast_dump.h"
#include "takt/compiler/call_graph.h"
#include "takt/compiler/lexer.h"
#include "takt/compiler/names.h"
#include "takt/compiler/parser.h"
#include "takt/compiler/sema/model.h"

namespace takt::compiler {

namespace fs = std::filesystem;

namespace {

// Every POU of a unit (methods and namespaces included), for `visit`.
void forEachPou(std::vector<ast::DeclPtr>& decls, const std::function<void(ast::PouDecl&)>& visit) {
    for (ast::DeclPtr& d : decls) {
        if (d->kind == ast::DeclKind::Pou) {
            auto& pou = static_cast<ast::PouDecl&>(*d);
            visit(pou);
            for (auto& m : pou.methods) {
                visit(*m);
            }
        } else if (d->kind == ast::DeclKind::Namespace) {
            forEachPou(static_cast<ast::NamespaceDecl&>(*d).decls, visit);
        }
    }
}

// The unit as the syntax tree prints it without its bodies and positions: two texts with the same
// interface declare the same things for the other files.
std::string interfaceOf(ast::CompilationUnit& unit, const SourceManager& sm) {
    std::vector<ast::StmtList> bodies;
    forEachPou(unit.decls, [&](ast::PouDecl& p) { bodies.push_back(std::move(p.body)); });
    std::string out = dumpAst(unit, sm);
    std::size_t i = 0;
    forEachPou(unit.decls, [&](ast::PouDecl& p) { p.body = std::move(bodies[i++]); });
    return out;
}

// `text` with each POU body turned into a comment of the same length: the lexer skips it, the
// parser sees an empty body, and every other byte (so every offset, line and UTF-16 column of the
// declarations) stays where it was.
std::string declarationsOnly(ast::CompilationUnit& unit, std::string text) {
    forEachPou(unit.decls, [&](ast::PouDecl& p) {
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

bool isSyntaxError(const Diagnostic& d) {
    return diagInfo(d.code).code.starts_with("E00");
}

// A symbol by its upper-case qualified name (`LIB.MOTOR.START`): the same across analyses.
std::string keyOf(const Symbol* s) {
    std::string key = upperName(s->name);
    for (const Symbol* o = s->owner; o != nullptr; o = o->owner) {
        key = upperName(o->name) + "." + key;
    }
    return key;
}

// The identifiers of a lexed file, upper-cased: what it can name.
std::set<std::string> identifiersOf(std::string_view text, const LexResult& lexed) {
    std::set<std::string> out;
    for (const Token& t : lexed.tokens) {
        if (t.kind == TokenKind::Identifier) {
            out.insert(upperName(text.substr(t.begin, t.end - t.begin)));
        }
    }
    return out;
}

const std::set<std::string>& mentionsOf(Frontend::FileState& s) {
    if (!s.mentionsKnown) {
        const SourceFile file(0, {}, s.declText.empty() ? s.text : s.declText);
        DiagnosticSink ignored;
        s.mentions = identifiersOf(file.text(), lex(file, ignored));
        s.mentionsKnown = true;
    }
    return s.mentions;
}

// The names file `id` declares where other files can name them: the global scope, namespaces,
// and enumeration values (a bare value resolves across the project).
void declaredNames(const Scope& scope, FileId id, std::set<std::string>& out) {
    for (const Symbol* s : scope.symbols()) {
        if (s->span.file == id) {
            out.insert(upperName(s->name));
        }
        if (s->kind == SymbolKind::Namespace && s->scope != nullptr) {
            declaredNames(*s->scope, id, out);
        }
    }
}

// The files `focus` is checked with, in compilation order with it: those declaring a name it
// mentions (`names`: the identifiers of its new text), then a name those mention, to the end;
// and every file that reaches into all others.
std::vector<bool> dependencies(std::vector<Frontend::FileState>& states, std::size_t focus,
                               std::set<std::string> names) {
    std::map<std::string, std::vector<std::size_t>> declaredBy;
    std::vector<bool> in(states.size(), false);
    in[focus] = true;
    for (std::size_t i = 0; i < states.size(); ++i) {
        for (const std::string& name : states[i].declares) {
            declaredBy[name].push_back(i);
        }
        if (states[i].reachesAll && !in[i]) {
            in[i] = true;
            const std::set<std::string>& m = mentionsOf(states[i]);
            names.insert(m.begin(), m.end());
        }
    }
    while (!names.empty()) {
        std::set<std::string> next;
        for (const std::string& n : names) {
            const auto d = declaredBy.find(n);
            if (d == declaredBy.end()) {
                continue;
            }
            for (const std::size_t i : d->second) {
                if (!in[i]) {
                    in[i] = true;
                    const std::set<std::string>& m = mentionsOf(states[i]);
                    next.insert(m.begin(), m.end());
                }
            }
        }
        names = std::move(next);
    }
    return in;
}

// ---- reusing a parsed unit ------------------------------------------------------------------
// Semantic analysis writes its results into the syntax tree (a type's resolution, an
// expression's type and symbol). Before a kept declarations unit goes into the next analysis
// those are cleared, so nothing of the last model survives into the new one. A call moves its
// EN / ENO arguments out of the argument list, which cannot be undone here: a unit with a call
// in its declarations (a rare initialiser) is parsed again instead. So is one with a
// CONFIGURATION (program arguments are checked like calls).

bool clearExpr(ast::Expr* e);

bool clearType(ast::TypeSpec* t);

bool clearVar(ast::VarDecl& v) {
    return clearType(v.type.get()) && clearExpr(v.init.get());
}

bool clearType(ast::TypeSpec* t) {
    if (t == nullptr) {
        return true;
    }
    t->resolved = nullptr;
    switch (t->kind) {
    case ast::TypeSpecKind::Named: return true;
    case ast::TypeSpecKind::String: return clearExpr(static_cast<ast::StringTypeSpec*>(t)->length.get());
    case ast::TypeSpecKind::Array: {
        auto* a = static_cast<ast::ArrayTypeSpec*>(t);
        for (ast::Range& r : a->dimensions) {
            if (!clearExpr(r.lower.get()) || !clearExpr(r.upper.get())) {
                return false;
            }
        }
        return clearType(a->element.get());
    }
    case ast::TypeSpecKind::Ref: return clearType(static_cast<ast::RefTypeSpec*>(t)->target.get());
    case ast::TypeSpecKind::Subrange: {
        auto* s = static_cast<ast::SubrangeTypeSpec*>(t);
        return clearType(s->base.get()) && clearExpr(s->range.lower.get()) && clearExpr(s->range.upper.get());
    }
    case ast::TypeSpecKind::Enum: {
        auto* en = static_cast<ast::EnumTypeSpec*>(t);
        bool ok = clearType(en->base.get());
        for (ast::EnumValueDecl& v : en->values) {
            ok = ok && clearExpr(v.value.get());
        }
        return ok;
    }
    case ast::TypeSpecKind::Struct: {
        bool ok = true;
        for (ast::VarDecl& f : static_cast<ast::StructTypeSpec*>(t)->fields) {
            ok = ok && clearVar(f);
        }
        return ok;
    }
    }
    return false;
}

bool clearExpr(ast::Expr* e) {
    if (e == nullptr) {
        return true;
    }
    e->type = nullptr;
    switch (e->kind) {
    case ast::ExprKind::Name: static_cast<ast::NameExpr*>(e)->symbol = nullptr; return true;
    case ast::ExprKind::Member: {
        auto* m = static_cast<ast::MemberExpr*>(e);
        m->symbol = nullptr;
        return clearExpr(m->object.get());
    }
    case ast::ExprKind::BitAccess: return clearExpr(static_cast<ast::BitAccessExpr*>(e)->object.get());
    case ast::ExprKind::Index: {
        auto* x = static_cast<ast::IndexExpr*>(e);
        bool ok = clearExpr(x->array.get());
        for (ast::ExprPtr& i : x->indices) {
            ok = ok && clearExpr(i.get());
        }
        return ok;
    }
    case ast::ExprKind::Deref: return clearExpr(static_cast<ast::DerefExpr*>(e)->reference.get());
    case ast::ExprKind::Call: return false;
    case ast::ExprKind::Unary: return clearExpr(static_cast<ast::UnaryExpr*>(e)->operand.get());
    case ast::ExprKind::Binary: {
        auto* b = static_cast<ast::BinaryExpr*>(e);
        return clearExpr(b->lhs.get()) && clearExpr(b->rhs.get());
    }
    case ast::ExprKind::Ref: return clearExpr(static_cast<ast::RefExpr*>(e)->operand.get());
    case ast::ExprKind::ArrayInit: {
        bool ok = true;
        for (ast::ArrayInitElement& el : static_cast<ast::ArrayInitExpr*>(e)->elements) {
            ok = ok && clearExpr(el.repeat.get()) && clearExpr(el.value.get());
        }
        return ok;
    }
    case ast::ExprKind::StructInit: {
        bool ok = true;
        for (ast::FieldInit& f : static_cast<ast::StructInitExpr*>(e)->fields) {
            ok = ok && clearExpr(f.value.get());
        }
        return ok;
    }
    case ast::ExprKind::Paren: return clearExpr(static_cast<ast::ParenExpr*>(e)->inner.get());
    case ast::ExprKind::Literal:
    case ast::ExprKind::EnumLiteral:
    case ast::ExprKind::This:
    case ast::ExprKind::Super:
    case ast::ExprKind::DirectAddress:
    case ast::ExprKind::Error: return true;
    }
    return false;
}

bool clearBlock(ast::VarBlock& b) {
    bool ok = b.access.empty() && b.config.empty(); // paths are resolved like expressions in bodies
    for (ast::VarDecl& v : b.vars) {
        ok = ok && clearVar(v);
    }
    return ok;
}

bool clearPou(ast::PouDecl& p) {
    bool ok = p.body.empty() && clearType(p.returnType.get());
    for (ast::VarBlock& b : p.varBlocks) {
        ok = ok && clearBlock(b);
    }
    for (auto& m : p.methods) {
        ok = ok && clearPou(*m);
    }
    return ok;
}

bool clearDecls(std::vector<ast::DeclPtr>& decls) {
    bool ok = true;
    for (ast::DeclPtr& d : decls) {
        switch (d->kind) {
        case ast::DeclKind::Pou: ok = ok && clearPou(static_cast<ast::PouDecl&>(*d)); break;
        case ast::DeclKind::Interface:
            for (auto& m : static_cast<ast::InterfaceDecl&>(*d).methods) {
                ok = ok && clearPou(*m);
            }
            break;
        case ast::DeclKind::Type: {
            auto& t = static_cast<ast::TypeDecl&>(*d);
            ok = ok && clearType(t.spec.get()) && clearExpr(t.init.get());
            break;
        }
        case ast::DeclKind::GlobalVars: ok = ok && clearBlock(static_cast<ast::GlobalVarsDecl&>(*d).block); break;
        case ast::DeclKind::Configuration: ok = false; break;
        case ast::DeclKind::Namespace: ok = ok && clearDecls(static_cast<ast::NamespaceDecl&>(*d).decls); break;
        case ast::DeclKind::Using: break;
        }
    }
    return ok;
}

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

} // namespace

void recordFacts(const CheckedProject& checked, FileId id, ast::CompilationUnit& unit, Frontend::FileState& out) {
    const Project& p = checked.project;
    const SourceManager& sm = *p.sources;
    bool syntax = false;
    out.errors = 0;
    out.relatedFiles.clear();
    for (const Diagnostic& d : p.diagnostics) {
        if (d.span.file != id) {
            continue;
        }
        syntax = syntax || isSyntaxError(d);
        out.errors += d.severity == Severity::Error ? 1 : 0;
        for (const RelatedLocation& r : d.related) {
            if (r.span.file != id && r.span.file < checked.files.size()) {
                out.relatedFiles.insert(checked.files[r.span.file]);
            }
        }
    }
    out.interface = interfaceOf(unit, sm);
    out.declText = syntax ? std::string() : declarationsOnly(unit, std::string(sm.file(id).text()));
    out.declUnit.reset();
    out.mentions.clear();
    out.mentionsKnown = false;
    out.reachesAll = false;
    for (const ast::DeclPtr& d : unit.decls) {
        out.reachesAll = out.reachesAll || d->kind == ast::DeclKind::Configuration || d->kind == ast::DeclKind::Using;
    }
    out.calls.clear();
    out.foreignLocals.clear();
    const SemanticModel& model = *p.model;
    out.declares.clear();
    declaredNames(*model.global, id, out.declares);
    for (const Symbol* v : model.enumValues) {
        if (v->span.file == id) {
            out.declares.insert(upperName(v->name));
        }
    }
    for (const SemanticModel::BodyUse& c : model.calls) {
        if (c.at.file == id) {
            out.calls.insert(keyOf(c.user) + ">" + keyOf(c.used));
        }
    }
    for (const SemanticModel::BodyUse& u : model.foreignLocalUses) {
        if (u.at.file == id && u.used->span.file < checked.files.size()) {
            out.foreignLocals.insert(checked.files[u.used->span.file].generic_string() + "|" + keyOf(u.used));
        }
    }
}

bool Frontend::incremental(const fs::path& file) {
    const std::string* edited = textOf(file);
    if (loaded_ == nullptr || !loaded_->usable || edited == nullptr) {
        return false;
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

    auto out = std::make_unique<CheckedProject>();
    Project& project = out->project;
    project.directory = directory_;
    project.build = loaded_->build;
    out->files = loaded_->files;
    out->focus = file;
    SourceManager& sm = *project.sources;
    for (std::size_t i = 0; i < loaded_->manifestTexts.size(); ++i) {
        (void)sm.add(loaded_->display[i], loaded_->manifestTexts[i]);
    }
    const auto focusId = static_cast<FileId>(first + focus);
    DiagnosticSink sink;
    std::vector<ast::CompilationUnit> units;
    std::vector<std::size_t> unitState; // the FileState of each unit
    units.reserve(states.size());
    bool brokenDeclarations = false;
    std::vector<bool> kept(states.size(), false); // the unit goes back to its FileState afterwards
    // The files left out keep their FileId with no text, so the kept units' spans stay valid.
    // The edited file is lexed once: for the names it spells, then for its parse.
    const SourceFile focusFile(first + static_cast<FileId>(focus), {}, *edited);
    const LexResult focusTokens = lex(focusFile, sink);
    const std::vector<bool> needed = dependencies(states, focus, identifiersOf(*edited, focusTokens));
    for (std::size_t i = 0; i < states.size(); ++i) {
        FileState& s = states[i];
        const auto id = static_cast<FileId>(first + i);
        const bool declarations = i != focus && !s.declText.empty();
        project.sourcePaths.push_back(loaded_->display[id]);
        if (!needed[i]) {
            (void)sm.add(loaded_->display[id], {});
            continue;
        }
        (void)sm.add(loaded_->display[id], i == focus ? *edited : declarations ? s.declText : s.text);
        unitState.push_back(i);
        if (declarations && s.declUnit != nullptr && clearDecls(s.declUnit->decls)) {
            units.push_back(std::move(*s.declUnit));
            kept[i] = true;
            continue;
        }
        const std::size_t errorsBefore = sink.errorCount();
        units.push_back(i == focus ? parse(sm.file(id), focusTokens, sink) : parseSource(sm.file(id), sink));
        ++stats_.parses;
        if (declarations) {
            // Blanking the bodies never changes how the declarations parse; if it did, this
            // answer would not be the full check's.
            if (sink.errorCount() != errorsBefore) {
                brokenDeclarations = true;
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
    options.bodiesOf = focusId;
    project.model = analyze(units, sm, sink, options).model;
    sink.sort();

    // The declarations units go back to their files (the model points into them, and lives in
    // last_, which is released before any of them is used again); the edited file's stays here.
    ast::CompilationUnit focusUnit;
    for (std::size_t u = 0; u < units.size(); ++u) {
        const std::size_t i = unitState[u];
        if (i == focus) {
            focusUnit = std::move(units[u]);
        } else if (kept[i]) {
            states[i].declUnit = std::make_unique<ast::CompilationUnit>(std::move(units[u]));
        }
    }
    units.clear();
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
    recordFacts(*out, focusId, focusUnit, now);
    project.diagnostics = std::move(own);
    project.units.push_back(std::move(focusUnit));

    FileState& was = states[focus];
    // The error limit stops a full check early: which errors survive depends on all files.
    const bool nearLimit = otherErrors + now.errors + 1 >= DiagnosticSink::kDefaultErrorLimit;
    const bool foreign = !now.foreignLocals.empty() || !was.foreignLocals.empty();
    if (brokenDeclarations || now.interface != was.interface || nearLimit || foreign ||
        callsOnCycle(states, focus, was.calls, now.calls)) {
        return false;
    }
    now.text = *edited;
    was = std::move(now);
    ++stats_.incrementalChecks;
    stale_ = false;
    last_ = std::move(out);
    return true;
}

} // namespace takt::compiler
