// What a Frontend records of each file after a check (frontend_cache.h): from the facts semantic
// analysis kept in the model (what the file declares, the calls its bodies make, the locals of
// other files they name) and the file's diagnostics; and the file's declarations alone, the
// text its incremental checks parse in place of the file (frontend_incremental.cpp).
#include <functional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "frontend_cache.h"
#include "takt/compiler/names.h"
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

// The names file `id` declares where other files can name them: the global scope, namespaces,
// and enumeration values (a bare value resolves across the project).
void namesIn(const Scope& scope, FileId id, std::set<std::string>& out) {
    for (const Symbol* s : scope.symbols()) {
        if (s->span.file == id) {
            out.insert(upperName(s->name));
        }
        if (s->kind == SymbolKind::Namespace && s->scope != nullptr) {
            namesIn(*s->scope, id, out);
        }
    }
}

// ---- what a file declares for the others -----------------------------------------------------
// A digest of the declarations of file `id` as the model holds them: each symbol the file
// declares where another file can reach it (the global scope, namespaces, and the members of its
// POUs, interfaces, types, configurations), with its kind, spelling, type, section, flags,
// address, value, the relations of a POU and, for a constant or a field, the source of its
// initial value (another file's array bounds may be computed from it). Positions are left out:
// a diagnostic of another file that points into this one sends an edit to a full check anyway.

void digestType(const Type* t, std::string& out) {
    out += t == nullptr ? std::string("?") : t->name();
}

void digestInit(const ast::Expr* init, std::string_view text, std::string& out) {
    if (init != nullptr && init->span.end <= text.size() && init->span.begin <= init->span.end) {
        out += ":=";
        out += text.substr(init->span.begin, init->span.end - init->span.begin);
    }
}

// The structure of a type the file declares (a named type prints only its name elsewhere).
void digestTypeBody(const Type* t, std::string_view text, std::string& out) {
    if (t == nullptr) {
        return;
    }
    out += fmt::format("<{}", static_cast<int>(t->kind()));
    switch (t->kind()) {
    case TypeKind::Enum: {
        const auto* e = static_cast<const EnumType*>(t);
        digestType(e->base, out);
        for (const EnumValue& v : e->values) {
            out += fmt::format(",{}={}", v.name, v.value);
        }
        break;
    }
    case TypeKind::Subrange: {
        const auto* s = static_cast<const SubrangeType*>(t);
        digestType(s->base, out);
        out += fmt::format("({}..{})", s->lower, s->upper);
        break;
    }
    case TypeKind::Array: {
        const auto* a = static_cast<const ArrayType*>(t);
        for (const ArrayDim& d : a->dims) {
            out += fmt::format("[{}..{}]", d.lower, d.upper);
        }
        digestType(a->element, out);
        break;
    }
    case TypeKind::Struct: {
        const auto* s = static_cast<const StructType*>(t);
        out += s->isUnion ? "union" : "struct";
        digestType(s->base, out);
        for (const Field& f : s->fields) {
            out += "," + f.name + ":";
            digestType(f.type, out);
            digestInit(f.init, text, out);
        }
        break;
    }
    case TypeKind::Ref: {
        const auto* r = static_cast<const RefType*>(t);
        out += fmt::format("{}", static_cast<int>(r->spelling));
        digestType(r->target, out);
        break;
    }
    case TypeKind::Alias: digestType(static_cast<const AliasType*>(t)->target, out); break;
    default: digestType(t, out); break;
    }
    out += ">";
}

void digestSymbol(const Symbol& s, FileId id, std::string_view text, std::string& out);

void digestScope(const Scope& scope, FileId id, std::string_view text, std::string& out) {
    for (const Symbol* s : scope.symbols()) {
        if (s->kind == SymbolKind::Namespace && s->scope != nullptr) {
            out += "{ns " + s->name;
            digestScope(*s->scope, id, text, out);
            out += "}";
        } else if (s->span.file == id) {
            digestSymbol(*s, id, text, out);
        }
    }
}

void digestSymbol(const Symbol& s, FileId id, std::string_view text, std::string& out) {
    out += fmt::format("\n{}|{}|", static_cast<int>(s.kind), s.name);
    digestType(s.type, out);
    out += fmt::format("|{}{}{}{}{}|", static_cast<int>(s.section), s.constant ? "C" : "", s.retain ? "R" : "",
                       s.configLocated ? "L" : "", s.readOnly ? "O" : "");
    if (s.address) {
        out += s.address->text();
    }
    if (s.kind == SymbolKind::EnumValue) {
        out += fmt::format("={}", s.enumValue);
    }
    if (s.kind == SymbolKind::Variable && s.constant) {
        digestInit(s.init, text, out);
    }
    if (s.kind == SymbolKind::Type) {
        digestTypeBody(s.type, text, out);
        if (s.typeDecl != nullptr) {
            digestInit(s.typeDecl->init.get(), text, out);
        }
    }
    if (s.kind == SymbolKind::Pou) {
        out += fmt::format("|pou{}", static_cast<int>(s.pouKind));
        if (const ast::PouDecl* p = s.pou; p != nullptr) {
            out += fmt::format("{}{}{}{}{}{}{}{}", static_cast<int>(p->access), p->isAbstract ? "A" : "",
                               p->isFinal ? "F" : "", p->isAction ? "a" : "", p->prototypeOnly ? "p" : "",
                               p->isOverride ? "o" : "", p->isClass ? "c" : "", static_cast<int>(p->accessor));
            out += fmt::format("{}", static_cast<int>(p->propertyAccess));
        }
        out += "|";
        out += s.base != nullptr ? keyOf(s.base) : std::string();
        for (const Symbol* i : s.interfaces) {
            out += "," + keyOf(i);
        }
        for (const Symbol* q : s.params) {
            out += "," + q->name;
        }
    }
    if (s.kind == SymbolKind::Interface) {
        for (const Symbol* i : s.interfaces) {
            out += "," + keyOf(i);
        }
    }
    if (s.kind == SymbolKind::Task) {
        out += fmt::format("|{}|{}", s.taskInterval, s.taskPriority);
    }
    if (s.scope != nullptr && s.kind != SymbolKind::Namespace) {
        out += "{";
        for (const Symbol* m : s.scope->symbols()) {
            digestSymbol(*m, id, text, out);
        }
        out += "}";
    }
}

} // namespace

std::set<std::string> declaredNames(const SemanticModel& model, FileId id) {
    std::set<std::string> out;
    namesIn(*model.global, id, out);
    for (const Symbol* v : model.enumValues) {
        if (v->span.file == id) {
            out.insert(upperName(v->name));
        }
    }
    return out;
}

std::string declarationsDigest(const SemanticModel& model, FileId id, std::string_view text) {
    std::string out;
    digestScope(*model.global, id, text, out);
    return out;
}

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
    out.declText = syntax ? std::string() : declarationsOnly(unit, std::string(sm.file(id).text()));
    out.declUnit.reset();
    out.reachesAll = false;
    for (const ast::DeclPtr& d : unit.decls) {
        out.reachesAll = out.reachesAll || d->kind == ast::DeclKind::Configuration || d->kind == ast::DeclKind::Using;
    }
    out.calls.clear();
    out.foreignLocals.clear();
    const SemanticModel& model = *p.model;
    out.declares = declaredNames(model, id);
    out.digest = declarationsDigest(model, id, sm.file(id).text());
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

} // namespace takt::compiler
