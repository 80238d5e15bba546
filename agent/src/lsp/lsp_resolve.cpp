#include "lsp/lsp_resolve.h"

#include "takt/compiler/lexer.h"
#include "takt/compiler/names.h"

namespace takt::agent::lsp {

using compiler::Symbol;
using compiler::TokenKind;

namespace {

std::string_view textOf(const compiler::SourceFile& file, const compiler::Token& t) {
    return file.text().substr(t.begin, t.end - t.begin);
}

Target ofSymbol(const Symbol* s) {
    Target t;
    t.symbol = s;
    t.decl = s->span;
    return t;
}

// A member `name` of a value of type `type`: an FB/program/interface member (through EXTENDS),
// a struct field, or a value of an enumeration.
std::optional<Target> memberOf(const compiler::SemanticModel& model, const compiler::Type* type,
                               std::string_view name) {
    type = compiler::stripAlias(type);
    while (type != nullptr && type->kind() == compiler::TypeKind::Ref) {
        type = compiler::stripAlias(static_cast<const compiler::RefType*>(type)->target);
    }
    if (type == nullptr) {
        return std::nullopt;
    }
    if (const auto* pou = dynamic_cast<const compiler::PouType*>(type); pou != nullptr) {
        for (const Symbol* s = pou->symbol; s != nullptr; s = s->base) {
            if (s->scope != nullptr) {
                if (const Symbol* m = s->scope->findLocal(name); m != nullptr) {
                    return ofSymbol(m);
                }
            }
        }
        return std::nullopt;
    }
    if (const auto* st = dynamic_cast<const compiler::StructType*>(type); st != nullptr) {
        if (const compiler::Field* f = st->field(name); f != nullptr) {
            Target t;
            t.field = f;
            t.owner = st;
            t.decl = f->span;
            return t;
        }
        return std::nullopt;
    }
    if (const auto* en = dynamic_cast<const compiler::EnumType*>(type); en != nullptr) {
        const auto range = model.enumValuesByName.equal_range(compiler::upperName(name));
        for (auto it = range.first; it != range.second; ++it) {
            if (compiler::stripAlias(it->second->type) == en) {
                return ofSymbol(it->second);
            }
        }
    }
    return std::nullopt;
}

// The type a resolved object has as a value (a variable's type; an FB or type name used as a
// qualifier has its own type).
const compiler::Type* typeOf(const Target& t) {
    if (t.field != nullptr) {
        return t.field->type;
    }
    return t.symbol != nullptr ? t.symbol->type : nullptr;
}

} // namespace

FileTokens tokensOf(const compiler::SourceFile& file) {
    compiler::DiagnosticSink ignored;
    return FileTokens{compiler::lex(file, ignored).tokens};
}

int tokenAt(const FileTokens& t, std::uint32_t offset) {
    for (std::size_t i = 0; i < t.tokens.size(); ++i) {
        const compiler::Token& tok = t.tokens[i];
        if (tok.begin > offset) {
            break;
        }
        if (tok.kind == TokenKind::Identifier && offset <= tok.end) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

const compiler::Scope* scopeAt(const compiler::SemanticModel& model, compiler::FileId file, std::uint32_t offset) {
    const Symbol* best = nullptr;
    for (const Symbol* s : model.pous) {
        if (s->pou == nullptr || s->scope == nullptr || s->pou->span.file != file) {
            continue;
        }
        const compiler::Span sp = s->pou->span;
        if (offset >= sp.begin && offset <= sp.end &&
            (best == nullptr || sp.end - sp.begin < best->pou->span.end - best->pou->span.begin)) {
            best = s;
        }
    }
    return best != nullptr ? best->scope : model.global.get();
}

std::optional<Target> resolve(const compiler::Project& project, const compiler::SourceFile& file,
                              const FileTokens& tokens, int index) {
    if (!project.model || index < 0 || static_cast<std::size_t>(index) >= tokens.tokens.size()) {
        return std::nullopt;
    }
    const compiler::SemanticModel& model = *project.model;
    const compiler::Token& tok = tokens.tokens[static_cast<std::size_t>(index)];
    const std::string_view name = textOf(file, tok);
    // Mode#Run: the value of the named enumeration.
    if (index >= 2 && tokens.tokens[index - 1].kind == TokenKind::Hash &&
        tokens.tokens[index - 2].kind == TokenKind::Identifier) {
        const std::optional<Target> type = resolve(project, file, tokens, index - 2);
        if (!type || type->symbol == nullptr) {
            return std::nullopt;
        }
        return memberOf(model, type->symbol->type, name);
    }
    // a.b: the member of what `a` names (one level per `.`, so a.b.c resolves left to right).
    if (index >= 2 && tokens.tokens[index - 1].kind == TokenKind::Dot) {
        const std::optional<Target> object = resolve(project, file, tokens, index - 2);
        if (!object) {
            return std::nullopt;
        }
        if (object->symbol != nullptr && object->symbol->kind == compiler::SymbolKind::Namespace &&
            object->symbol->scope != nullptr) {
            const Symbol* s = object->symbol->scope->findLocal(name);
            return s != nullptr ? std::optional(ofSymbol(s)) : std::nullopt;
        }
        return memberOf(model, typeOf(*object), name);
    }
    const compiler::Scope* scope = scopeAt(model, file.id(), tok.begin);
    for (const compiler::Scope* s = scope; s != nullptr; s = s->parent()) {
        if (const Symbol* found = s->findLocal(name); found != nullptr) {
            return ofSymbol(found);
        }
        for (const compiler::Scope* u : s->usings) {
            if (const Symbol* found = u->findLocal(name); found != nullptr) {
                return ofSymbol(found);
            }
        }
    }
    // A field where it is declared.
    for (const Symbol* t : model.typeDecls) {
        if (const auto* st = dynamic_cast<const compiler::StructType*>(compiler::stripAlias(t->type)); st != nullptr) {
            for (const compiler::Field& f : st->fields) {
                if (f.span.file == file.id() && f.span.begin == tok.begin) {
                    Target target;
                    target.field = &f;
                    target.owner = st;
                    target.decl = f.span;
                    return target;
                }
            }
        }
    }
    // A bare enumeration value (CODESYS resolves `Run` when one enumeration has it).
    const auto range = model.enumValuesByName.equal_range(compiler::upperName(name));
    if (range.first != range.second) {
        return ofSymbol(range.first->second);
    }
    return std::nullopt;
}

} // namespace takt::agent::lsp
