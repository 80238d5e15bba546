// Name resolution inside bodies: locals -> POU members -> base FBs -> globals (VAR_EXTERNAL or
// top-level) -> enum values (bare when unambiguous, E0106 otherwise); member access on
// structs, FB instances, programs and namespaces.
#include <algorithm>

#include "sema/body.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

const ast::Expr* stripParen(const ast::Expr* e) {
    while (e != nullptr && e->kind == ast::ExprKind::Paren) {
        e = static_cast<const ast::ParenExpr*>(e)->inner.get();
    }
    return e;
}

bool isSelfExpr(const ast::Expr* e) {
    e = stripParen(e);
    if (e != nullptr && e->kind == ast::ExprKind::Deref) {
        e = stripParen(static_cast<const ast::DerefExpr*>(e)->reference.get());
    }
    return e != nullptr && (e->kind == ast::ExprKind::This || e->kind == ast::ExprKind::Super);
}

const Type* baseType(const Type* t) {
    t = stripAlias(t);
    if (t != nullptr && t->kind() == TypeKind::Subrange) {
        return stripAlias(static_cast<const SubrangeType*>(t)->base);
    }
    return t;
}

BodyChecker::BodyChecker(Context& cx) : cx_(cx) {
    buildEnumIndex();
}

std::string BodyChecker::text(const Span& span) const {
    if (!span.valid() || span.file >= cx_.sources.size()) {
        return "";
    }
    return std::string(cx_.sources.text(span));
}

// ---- enum index ---------------------------------------------------------------------------

void BodyChecker::indexEnum(const Type* t) {
    t = stripAlias(t);
    if (t == nullptr || t->kind() != TypeKind::Enum) {
        return;
    }
    const auto* e = static_cast<const EnumType*>(t);
    for (std::size_t i = 0; i < e->values.size(); ++i) {
        auto& list = enumValues_[upperName(e->values[i].name)];
        if (std::find(list.begin(), list.end(), std::pair{e, i}) == list.end()) {
            list.emplace_back(e, i);
        }
    }
}

void BodyChecker::buildEnumIndex() {
    for (const Symbol* v : cx_.model.enumValues) {
        const Type* t = stripAlias(v->type);
        if (t == nullptr || t->kind() != TypeKind::Enum) {
            continue;
        }
        const auto* e = static_cast<const EnumType*>(t);
        indexEnum(e);
        for (std::size_t i = 0; i < e->values.size(); ++i) {
            if (sameName(e->values[i].name, v->name)) {
                enumSymbols_.emplace(std::pair{e, i}, v);
            }
        }
    }
}

const Symbol* BodyChecker::enumValueSymbol(const EnumType* type, std::size_t index) {
    auto key = std::pair{type, index};
    if (auto it = enumSymbols_.find(key); it != enumSymbols_.end()) {
        return it->second;
    }
    const EnumValue& v = type->values[index];
    const Symbol* found = nullptr;
    if (type->symbol != nullptr && type->symbol->scope != nullptr) {
        found = type->symbol->scope->findLocal(v.name);
    }
    if (found == nullptr || found->kind != SymbolKind::EnumValue || stripAlias(found->type) != type) {
        Symbol* s = cx_.model.newSymbol();
        s->kind = SymbolKind::EnumValue;
        s->name = v.name;
        s->span = v.span;
        s->type = type;
        s->enumValue = v.value;
        s->owner = type->symbol;
        found = s;
    }
    enumSymbols_.emplace(key, found);
    return found;
}

// ---- lookup ------------------------------------------------------------------------------

const Symbol* BodyChecker::findMember(const Symbol* owner, std::string_view name) const {
    int guard = 0;
    for (const Symbol* s = owner; s != nullptr && guard < 64; s = s->base, ++guard) {
        if (s->scope != nullptr) {
            if (const Symbol* m = s->scope->findLocal(name)) {
                return m;
            }
        }
        if (s->kind == SymbolKind::Interface) {
            for (const Symbol* i : s->interfaces) {
                if (i != s) {
                    if (const Symbol* m = findMember(i, name)) {
                        return m;
                    }
                }
            }
        }
    }
    return nullptr;
}

bool BodyChecker::isResultName(std::string_view name) const {
    const Symbol* p = pc_.pou;
    if (p == nullptr || (p->pouKind != ast::PouKind::Function && p->pouKind != ast::PouKind::Method) ||
        !sameName(p->name, name) || p->type == nullptr || stripAlias(p->type)->kind() == TypeKind::Void) {
        return false;
    }
    const Symbol* local = p->scope != nullptr ? p->scope->findLocal(name) : nullptr;
    return local == nullptr || local->kind != SymbolKind::Variable;
}

Symbol* BodyChecker::findName(std::string_view name, const Span* where) const {
    const Scope* s = pc_.scope;
    int guard = 0;
    while (s != nullptr && s->owner() != nullptr && s->owner()->kind == SymbolKind::Pou && guard++ < 64) {
        if (Symbol* found = s->findLocal(name)) {
            return found;
        }
        for (const Symbol* b = s->owner()->base; b != nullptr && guard++ < 64; b = b->base) {
            if (b->scope != nullptr) {
                if (Symbol* found = b->scope->findLocal(name)) {
                    return found;
                }
            }
        }
        s = s->parent();
    }
    // A METHOD whose scope does not chain to its FB still sees the FB's members.
    if (pc_.fb != nullptr) {
        if (const Symbol* m = findMember(pc_.fb, name)) {
            return const_cast<Symbol*>(m);
        }
    }
    return lookup(cx_, pc_.scope != nullptr ? pc_.scope : cx_.model.global.get(), name, false, where);
}

const Scope* BodyChecker::namespaceOf(const ast::Expr& e) const {
    if (e.kind == ast::ExprKind::Name) {
        const auto& n = static_cast<const ast::NameExpr&>(e);
        const Symbol* s = findName(n.name.name);
        return s != nullptr && s->kind == SymbolKind::Namespace ? s->scope : nullptr;
    }
    if (e.kind == ast::ExprKind::Member) {
        const auto& m = static_cast<const ast::MemberExpr&>(e);
        if (const Scope* outer = namespaceOf(*m.object)) {
            const Symbol* s = outer->findLocal(m.member.name);
            return s != nullptr && s->kind == SymbolKind::Namespace ? s->scope : nullptr;
        }
    }
    return nullptr;
}

// ---- names as values ---------------------------------------------------------------------

const Type* BodyChecker::symbolValueType(const Symbol* sym, const ast::Expr& e, std::string_view name) {
    switch (sym->kind) {
    case SymbolKind::Variable:
    case SymbolKind::EnumValue:
    case SymbolKind::AccessPath:
    case SymbolKind::ProgramInstance: return sym->type != nullptr ? sym->type : errorType();
    case SymbolKind::Pou:
        if (sym->pouKind == ast::PouKind::Program && sym->type != nullptr &&
            stripAlias(sym->type)->kind() == TypeKind::Program) {
            return sym->type; // Main.x reads a program's variable
        }
        cx_.error(DiagCode::NameIsNotValue, e.span,
                  "'" + std::string(name) + "' is a POU, not a value" +
                      (sym->pouKind == ast::PouKind::Function ? "; call it with ()" : ""));
        return errorType();
    default:
        cx_.error(DiagCode::NameIsNotValue, e.span, "'" + std::string(name) + "' is not a value");
        return errorType();
    }
}

bool BodyChecker::ownVariable(const Symbol* sym) const {
    if (sym->kind != SymbolKind::Variable) {
        return false;
    }
    // The POU's own variables, and for a METHOD or ACTION those of its FB.
    for (const Symbol* o = pc_.pou; o != nullptr && o->kind == SymbolKind::Pou; o = o->owner) {
        if (sym->owner == o) {
            return true;
        }
    }
    return false;
}

const Type* BodyChecker::checkName(ast::NameExpr& e, const Type* expected) {
    const std::string& name = e.name.name;
    if (isResultName(name)) {
        e.symbol = pc_.pou;
        return pc_.pou->type;
    }
    Symbol* sym = findName(name, &e.name.span);
    if (sym == nullptr) {
        sym = findName(name + ast::kSetterSuffix); // a SET-only PROPERTY of the FB
    }
    if (sym == nullptr || sym->kind == SymbolKind::EnumValue) {
        auto it = enumValues_.find(upperName(name));
        if (it != enumValues_.end() && !it->second.empty()) {
            const auto& cands = it->second;
            const Type* want = expected != nullptr ? stripAlias(expected) : nullptr;
            const std::pair<const EnumType*, std::size_t>* pick = nullptr;
            for (const auto& c : cands) {
                if (c.first == want) {
                    pick = &c;
                }
            }
            if (pick == nullptr && sym != nullptr) {
                for (const auto& c : cands) {
                    if (c.first == stripAlias(sym->type)) {
                        pick = &c;
                    }
                }
            }
            if (pick == nullptr && cands.size() == 1) {
                pick = &cands.front();
            }
            if (pick == nullptr) {
                std::string list;
                for (const auto& c : cands) {
                    list += (list.empty() ? "" : ", ") + c.first->name() + "#" + name;
                }
                cx_.error(DiagCode::AmbiguousEnumValue, e.span,
                          "'" + name + "' is a value of several enumerations; write one of " + list);
                return errorType();
            }
            e.symbol = enumValueSymbol(pick->first, pick->second);
            return pick->first;
        }
    }
    if (sym == nullptr) {
        cx_.error(DiagCode::UnknownIdentifier, e.span, "unknown identifier '" + name + "'");
        return errorType();
    }
    if (e.span.begin < e.name.span.begin && !ownVariable(sym)) { // SCL's #name (parser_exprs.cpp)
        cx_.error(DiagCode::UnknownIdentifier, e.span,
                  "'#" + name + "' names a variable of '" + pc_.pou->name + "' itself, and '" + name +
                      "' is not one (write it without '#')");
        return errorType();
    }
    e.symbol = sym;
    markUsed(sym, e.span);
    if (propertyOf(e) != nullptr) {
        return propertyType(*sym, e); // access is checked per accessor once reads and writes are known
    }
    if (pc_.initIndex && sym->kind == SymbolKind::Variable && pc_.pou != nullptr && sym->owner == pc_.pou &&
        sym->declIndex >= *pc_.initIndex && sym->section != ast::VarSection::External) {
        cx_.error(DiagCode::InitializerOrder, e.span,
                  "the initialiser uses '" + name + "', which is declared at or after the variable it initialises");
    }
    return symbolValueType(sym, e, name);
}

const Type* BodyChecker::checkEnumLiteral(ast::EnumLiteralExpr& e) {
    const Symbol* t = findName(e.typeName.name, &e.typeName.span);
    if (t != nullptr && t->kind == SymbolKind::Variable) { // `color : Color := Color#Red`
        if (const Symbol* type =
                lookup(cx_, pc_.scope != nullptr ? pc_.scope : cx_.model.global.get(), e.typeName.name, true)) {
            t = type;
        }
    }
    if (t == nullptr) {
        cx_.error(DiagCode::UnknownType, e.typeName.span, "unknown enumeration type '" + e.typeName.name + "'");
        return errorType();
    }
    const Type* st = stripAlias(t->type);
    if (t->kind != SymbolKind::Type || st == nullptr || st->kind() != TypeKind::Enum) {
        cx_.error(DiagCode::NameIsNotType, e.typeName.span, "'" + e.typeName.name + "' is not an enumeration type");
        return errorType();
    }
    const auto* et = static_cast<const EnumType*>(st);
    for (std::size_t i = 0; i < et->values.size(); ++i) {
        if (sameName(et->values[i].name, e.value.name)) {
            return t->type;
        }
    }
    cx_.error(DiagCode::UnknownMember, e.value.span,
              "enumeration '" + e.typeName.name + "' has no value '" + e.value.name + "'");
    return errorType();
}

// A variable named like its enumeration type (`color : Color`) has no members, so `Color.Red`
// still means the type there, as in CODESYS.
std::optional<const Type*> BodyChecker::qualifiedEnumValue(ast::MemberExpr& e) {
    if (e.object->kind != ast::ExprKind::Name) {
        return std::nullopt;
    }
    const std::string& typeName = static_cast<const ast::NameExpr&>(*e.object).name.name;
    const Symbol* s = findName(typeName);
    if (s == nullptr || s->type == nullptr || stripAlias(s->type) == nullptr ||
        stripAlias(s->type)->kind() != TypeKind::Enum) {
        return std::nullopt;
    }
    if (s->kind != SymbolKind::Type &&
        !(s->kind == SymbolKind::Variable &&
          (sameName(s->type->name(), typeName) || sameName(stripAlias(s->type)->name(), typeName)))) {
        return std::nullopt;
    }
    const auto* et = static_cast<const EnumType*>(stripAlias(s->type));
    e.object->type = s->type;
    for (std::size_t i = 0; i < et->values.size(); ++i) {
        if (sameName(et->values[i].name, e.member.name)) {
            e.symbol = enumValueSymbol(et, i);
            return s->type;
        }
    }
    cx_.error(DiagCode::UnknownMember, e.member.span,
              "enumeration '" + typeName + "' has no value '" + e.member.name + "'");
    return errorType();
}

// IEC 61131-3's action control outputs of an ACTION `a` that the POU's SFC chart associates:
// `a.Q` (the action is active) and `a.A` (active, or running its final scan) read the chart's own
// flags `a$Q` and `a$A` (sfc_lower.cpp). Null when `e` is no such read; an error type when it names
// an ACTION that no chart associates.
const Type* BodyChecker::actionControlOutput(ast::MemberExpr& e) {
    const std::string& name = e.member.name;
    if (e.object->kind != ast::ExprKind::Name || (!sameName(name, "Q") && !sameName(name, "A"))) {
        return nullptr;
    }
    auto& object = static_cast<ast::NameExpr&>(*e.object);
    const Symbol* action = findName(object.name.name);
    if (action == nullptr || action->kind != SymbolKind::Pou || action->pou == nullptr || !action->pou->isAction) {
        return nullptr;
    }
    Symbol* flag = findName(object.name.name + "$" + upperName(name));
    if (flag == nullptr || flag->kind != SymbolKind::Variable) {
        cx_.error(DiagCode::UnknownMember, e.member.span,
                  "ACTION '" + action->name + "' has no " + upperName(name) +
                      ": only an action that a step of the POU's SFC chart associates has Q and A");
        return errorType();
    }
    object.symbol = action;
    object.type = errorType(); // an action has no value; its control outputs do
    e.symbol = flag;
    markUsed(flag, e.member.span);
    return flag->type;
}

bool BodyChecker::reportActionFlagWrite(const ast::Expr& e, std::string_view how) {
    const ast::Expr* x = &e;
    while (x->kind == ast::ExprKind::Paren) {
        x = static_cast<const ast::ParenExpr*>(x)->inner.get();
    }
    if (x->kind != ast::ExprKind::Member) {
        return false;
    }
    const auto& m = static_cast<const ast::MemberExpr&>(*x);
    const Symbol* action =
        m.object->kind == ast::ExprKind::Name ? static_cast<const ast::NameExpr&>(*m.object).symbol : nullptr;
    if (action == nullptr || action->kind != SymbolKind::Pou || action->pou == nullptr || !action->pou->isAction ||
        m.symbol == nullptr || m.symbol->kind != SymbolKind::Variable) {
        return false;
    }
    cx_.error(DiagCode::NotAssignable, e.span,
              "'" + text(e.span) + "' is a control output of ACTION '" + action->name +
                  "', set by the SFC chart: it is read-only, also inside the action (" + std::string(how) + ")");
    return true;
}

const Type* BodyChecker::checkMember(ast::MemberExpr& e) {
    const std::string& name = e.member.name;
    if (auto t = qualifiedEnumValue(e)) {
        return *t;
    }
    if (const Scope* ns = namespaceOf(*e.object)) {
        e.object->type = errorType(); // a namespace has no value; its members do
        Symbol* sym = ns->findLocal(name);
        if (sym == nullptr) {
            cx_.error(DiagCode::UnknownIdentifier, e.member.span,
                      "namespace '" + text(e.object->span) + "' has no '" + name + "'");
            return errorType();
        }
        e.symbol = sym;
        return symbolValueType(sym, e, name);
    }
    if (const Type* flag = actionControlOutput(e)) {
        return flag;
    }
    const Type* objType = checkExpr(*e.object);
    if (isError(objType)) {
        return errorType();
    }
    const Type* t = stripAlias(objType);
    switch (t->kind()) {
    case TypeKind::Struct: {
        const Field* f = static_cast<const StructType*>(t)->field(name);
        if (f == nullptr) {
            cx_.error(DiagCode::UnknownMember, e.member.span, "'" + t->name() + "' has no field '" + name + "'");
            return errorType();
        }
        return f->type;
    }
    case TypeKind::FunctionBlock:
    case TypeKind::Program:
    case TypeKind::Interface: {
        const Symbol* owner = static_cast<const PouType*>(t)->symbol;
        const Symbol* m = findMember(owner, name);
        if (m == nullptr) {
            m = findSetter(owner, name);
        }
        if (m == nullptr && owner != nullptr) {
            m = codesysParameter(*owner, e.member);
        }
        if (m == nullptr) {
            // CODESYS has implicit EN/ENO only on graphical boxes: in ST an FB has ENO when it
            // declares it.
            const bool eno = sameName(name, "ENO") && t->kind() == TypeKind::FunctionBlock;
            cx_.error(DiagCode::UnknownMember, e.member.span,
                      "'" + t->name() + "' has no member '" + name + "'" +
                          (eno ? "; it declares no ENO output: read the variable connected with 'ENO =>' in the "
                                 "call, or declare ENO : BOOL as VAR_OUTPUT"
                               : ""));
            return errorType();
        }
        e.symbol = m;
        markUsed(m, e.member.span);
        if (propertyOf(e) != nullptr) {
            return propertyType(*m, e); // access is checked per accessor once reads and writes are known
        }
        if (m->kind != SymbolKind::Variable) {
            cx_.error(DiagCode::UnknownMember, e.member.span,
                      "'" + name + "' of '" + t->name() + "' is not a variable" +
                          (m->kind == SymbolKind::Pou ? "; call the method with ()" : ""));
            return errorType();
        }
        const bool visible = isSelfExpr(e.object.get()) || variableVisibleOutside(*m);
        if (!visible && t->kind() == TypeKind::FunctionBlock &&
            (m->section == ast::VarSection::Var || m->section == ast::VarSection::InOut)) {
            // CODESYS lets callers peek at an instance's state (OSCAT reads timers' internals).
            cx_.lenient(DiagCode::ReadFbInternal, e.member.span,
                        "'" + name + "' is a " + sectionKeyword(m->section) + " member internal to '" + t->name() +
                            "'; IEC 61131-3 makes only VAR_INPUT and VAR_OUTPUT accessible from outside");
        } else if (!visible) {
            // Name the section the member is in: "internal" is right for VAR, but a VAR_IN_OUT
            // (a reference to the caller's variable) or a VAR_TEMP is not what it says.
            const std::string what =
                m->section == ast::VarSection::Var
                    ? "is internal to '" + t->name() + "' (VAR)"
                    : "is a " + std::string(ast::sectionKeyword(m->section)) + " of '" + t->name() + "'";
            cx_.error(DiagCode::UnknownMember, e.member.span,
                      "'" + name + "' " + what + "; only VAR_INPUT and VAR_OUTPUT are accessible from outside");
            return errorType();
        }
        return m->type != nullptr ? m->type : errorType();
    }
    default:
        cx_.error(DiagCode::NotAStruct, e.member.span,
                  "'" + text(e.object->span) + "' of type " + t->name() + " has no member '" + name + "'" +
                      (t->kind() == TypeKind::Ref ? "; dereference it with ^ first" : ""));
        return errorType();
    }
}

} // namespace takt::compiler::sema
