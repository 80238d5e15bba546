// Scopes and name lookup.
#include "takt/compiler/sema/symbols.h"

#include "sema/context.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

const Symbol* Scope::declare(Symbol* symbol) {
    auto [it, inserted] = byName_.emplace(upperName(symbol->name), symbol);
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
    auto it = byName_.find(upperName(name));
    return it == byName_.end() ? nullptr : it->second;
}

Symbol* Scope::find(std::string_view name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent()) {
        if (Symbol* found = s->findLocal(name)) {
            return found;
        }
    }
    return nullptr;
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

} // namespace

Symbol* lookup(const Context& cx, const Scope* scope, std::string_view name, bool typeName) {
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
        for (const Scope* u : s->usings) {
            if (Symbol* found = u->findLocal(name); wanted(found)) {
                return found;
            }
        }
    }
    Symbol* found = cx.model.global->findLocal(name);
    return wanted(found) ? found : nullptr;
}

} // namespace sema
} // namespace takt::compiler
