// Scopes and name lookup.
#include "takt/compiler/sema/symbols.h"

#include "sema/context.h"
#include "sema/declare.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

const Symbol* Scope::declare(Symbol* symbol) {
    std::string key = upperName(symbol->name);
    if (probes != nullptr) {
        probes->insert(key); // a declaration another file's of the same name makes a duplicate
    }
    auto [it, inserted] = byName_.emplace(std::move(key), symbol);
    if (!inserted) {
        return it->second;
    }
    ordered_.push_back(symbol);
    return nullptr;
}

void Scope::replace(Symbol* symbol) {
    Symbol*& slot = byName_[upperName(symbol->name)];
    for (Symbol*& s : ordered_) {
        if (s == slot) {
            s = symbol;
        }
    }
    if (slot == nullptr) {
        ordered_.push_back(symbol);
    }
    slot = symbol;
}

Symbol* Scope::findLocal(std::string_view name) const {
    std::string key = upperName(name);
    auto it = byName_.find(key);
    Symbol* found = it == byName_.end() ? nullptr : it->second;
    if (probes != nullptr) {
        probes->insert(std::move(key));
    }
    return found;
}

Symbol* Scope::find(std::string_view name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent()) {
        if (Symbol* found = s->findLocal(name)) {
            return found;
        }
    }
    return nullptr;
}

bool memberAccessible(const Symbol& member, const Symbol* from) {
    if (member.pou == nullptr || member.owner == nullptr || member.owner->kind != SymbolKind::Pou) {
        return true; // interface prototypes are public
    }
    const ast::Access a = member.pou->access;
    if (a != ast::Access::Private && a != ast::Access::Protected) {
        return true;
    }
    while (from != nullptr && from->kind == SymbolKind::Pou && from->pouKind == ast::PouKind::Method) {
        from = from->owner;
    }
    int guard = 0;
    for (const Symbol* b = from; b != nullptr && guard < 64; b = b->base, ++guard) {
        if (b == member.owner) {
            return true;
        }
        if (a == ast::Access::Private) {
            break;
        }
    }
    return false;
}

bool variableVisibleOutside(const Symbol& member) {
    if (member.section == ast::VarSection::Input || member.section == ast::VarSection::Output) {
        return true;
    }
    return member.owner != nullptr && member.owner->kind == SymbolKind::Pou &&
           member.owner->pouKind == ast::PouKind::Program && member.section != ast::VarSection::Temp;
}

bool isGeneratedName(std::string_view name) {
    return name.find('$') != std::string_view::npos;
}

namespace sema {

namespace {

// Members inherited through EXTENDS are visible inside the derived FB and its methods.
Symbol* findInBases(const Symbol* pou, std::string_view name) {
    for (int depth = 0; pou != nullptr && depth < 64; ++depth) {
        pou = pou->base;
        if (pou != nullptr && pou->scope != nullptr) {
            if (Symbol* found = pou->scope->findLocal(name)) {
                return found;
            }
        }
    }
    return nullptr;
}

void reportAmbiguousUsing(const Context& cx, Span where, std::string_view name, const Symbol& first,
                          const Symbol& second) {
    const std::string a = qualifiedName(first.owner);
    const std::string b = qualifiedName(second.owner);
    if (Diagnostic* d = cx.diags.report(DiagCode::AmbiguousName, where,
                                        "'" + std::string(name) + "' is declared in both '" + a + "' and '" + b +
                                            "', which USING makes visible here; write '" + a + "." + std::string(name) +
                                            "' or '" + b + "." + std::string(name) + "'")) {
        d->relate(first.span, "'" + a + "." + first.name + "' is declared here");
        d->relate(second.span, "'" + b + "." + second.name + "' is declared here");
    }
}

} // namespace

Symbol* lookup(const Context& cx, const Scope* scope, std::string_view name, bool typeName, const Span* where) {
    auto wanted = [typeName](Symbol* found) {
        return found != nullptr && !(typeName && found->kind == SymbolKind::Variable);
    };
    for (const Scope* s = scope; s != nullptr; s = s->parent()) {
        if (Symbol* found = s->findLocal(name); wanted(found)) {
            return found;
        }
        const Symbol* owner = s->owner();
        if (owner != nullptr && owner->kind == SymbolKind::Pou && owner->base != nullptr) {
            if (Symbol* found = findInBases(owner, name); wanted(found)) {
                return found;
            }
        }
        // A name two USING namespaces both declare is ambiguous (IEC 61131-3 ed.3; CODESYS:
        // "ambiguous use of name"); one declared in the scope itself was found above and wins.
        Symbol* imported = nullptr;
        for (const Scope* u : s->usings) {
            Symbol* found = u->findLocal(name);
            if (!wanted(found) || found == imported) {
                continue;
            }
            if (imported == nullptr) {
                imported = found;
            } else if (where != nullptr) {
                reportAmbiguousUsing(cx, *where, name, *imported, *found);
                break;
            }
        }
        if (imported != nullptr) {
            return imported;
        }
    }
    Symbol* found = cx.model.global->findLocal(name);
    return wanted(found) ? found : nullptr;
}

} // namespace sema
} // namespace takt::compiler
