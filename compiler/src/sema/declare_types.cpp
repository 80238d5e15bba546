// Type resolution: TYPE declarations, inline type specifications, struct and FB instance layout.
#include <algorithm>

#include "sema/declare.h"
#include "sema/pointers.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

constexpr std::uint32_t kDefaultStringLength = 80;
constexpr std::uint64_t kMaxObjectSize = 0x7FFFFFFFull; // bytes: a data image offset is 31-bit safe

std::uint32_t alignUp(std::uint64_t value, std::uint32_t align) {
    const std::uint64_t a = align == 0 ? 1 : align;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>((value + a - 1) / a * a, kMaxObjectSize));
}

const Type* errorType(Context& cx) {
    return cx.model.types.get(TypeKind::Error);
}

const Symbol* instanceSymbol(const Type* t) {
    t = stripAlias(t);
    if (t != nullptr && (t->kind() == TypeKind::FunctionBlock || t->kind() == TypeKind::Program)) {
        return static_cast<const PouType*>(t)->symbol;
    }
    return nullptr;
}

// An FB element or field needs the FB's size: lay the FB out first.
void requireLayout(Context& cx, const Type* t, Span use) {
    if (const Symbol* fb = instanceSymbol(t)) {
        completePouLayout(cx, const_cast<Symbol*>(fb), use);
    }
}

std::optional<std::int64_t> constInt(Context& cx, const ast::Expr* e, const Scope* scope) {
    if (e == nullptr) {
        return std::nullopt;
    }
    auto v = evaluateConstant(cx, *e, scope, true);
    if (!v) {
        return std::nullopt;
    }
    if (v->kind != ConstValue::Kind::Int && v->kind != ConstValue::Kind::Enum) {
        cx.error(DiagCode::NotConstant, e->span, "an integer constant is required here");
        return std::nullopt;
    }
    return v->i;
}

class TypeResolver {
public:
    TypeResolver(Context& cx, Scope* scope) : cx_(cx), scope_(scope) {}

    const Type* resolve(ast::TypeSpec& spec, bool viaRef) {
        if (spec.resolved != nullptr) {
            return spec.resolved;
        }
        const Type* t = nullptr;
        switch (spec.kind) {
        case ast::TypeSpecKind::Named: t = named(static_cast<ast::NamedTypeSpec&>(spec), viaRef); break;
        case ast::TypeSpecKind::String: t = string(static_cast<ast::StringTypeSpec&>(spec)); break;
        case ast::TypeSpecKind::Array: t = array(static_cast<ast::ArrayTypeSpec&>(spec)); break;
        case ast::TypeSpecKind::Ref: {
            auto& r = static_cast<ast::RefTypeSpec&>(spec);
            const Type* target = r.target != nullptr ? resolve(*r.target, true) : errorType(cx_);
            t = cx_.model.types.ref(target, r.spelling);
            if (r.spelling != ast::RefSpelling::RefTo) {
                codesysExtension(cx_, spec.span,
                                 r.spelling == ast::RefSpelling::PointerTo ? "POINTER TO" : "REFERENCE TO");
            }
            break;
        }
        case ast::TypeSpecKind::Subrange: t = subrange(static_cast<ast::SubrangeTypeSpec&>(spec)); break;
        case ast::TypeSpecKind::Enum: {
            // Inline enumerations are named by their values.
            auto& es = static_cast<ast::EnumTypeSpec&>(spec);
            std::string display = "(";
            for (const ast::EnumValueDecl& v : es.values) {
                display += (display.size() > 1 ? ", " : "") + v.name.name;
            }
            auto et = std::make_unique<EnumType>(display + ")", cx_.model.types.get(TypeKind::Int));
            EnumType* raw = cx_.model.types.add(std::move(et));
            enumeration(es, raw, cx_.model.newScope(nullptr, nullptr), nullptr);
            t = raw;
            break;
        }
        case ast::TypeSpecKind::Struct: {
            auto& ss = static_cast<ast::StructTypeSpec&>(spec);
            StructType* raw = cx_.model.types.add(std::make_unique<StructType>(ss.isUnion ? "UNION" : "STRUCT"));
            structure(ss, raw);
            t = raw;
            break;
        }
        }
        spec.resolved = t;
        return t;
    }

    void enumeration(ast::EnumTypeSpec& spec, EnumType* et, Scope* values, const Symbol* owner) {
        if (spec.base != nullptr) {
            const Type* base = resolve(*spec.base, false);
            // Any integer or bit-string type except BOOL (CODESYS allows BYTE..LWORD bases too).
            const bool integral = isInteger(base) || (isBitString(base) && stripAlias(base)->kind() != TypeKind::Bool);
            if (integral && stripAlias(base)->kind() != TypeKind::Subrange) {
                et->base = base;
            } else if (stripAlias(base)->kind() != TypeKind::Error) {
                cx_.error(DiagCode::InvalidEnumBase, spec.base->span,
                          "enumeration base type '" + base->name() + "' is not an integer type");
            }
        }
        et->size = stripAlias(et->base)->size;
        et->align = stripAlias(et->base)->align;
        std::int64_t next = 0;
        for (ast::EnumValueDecl& v : spec.values) {
            if (v.value != nullptr) {
                if (auto value = constInt(cx_, v.value.get(), scope_)) {
                    next = *value;
                }
            }
            Symbol* s = cx_.model.newSymbol();
            s->kind = SymbolKind::EnumValue;
            s->name = v.name.name;
            s->span = v.name.span;
            s->type = et;
            s->owner = owner;
            s->enumValue = next;
            s->declScope = values;
            if (declareSymbol(cx_, values, s)) {
                et->values.push_back(EnumValue{v.name.name, next, v.name.span});
                cx_.model.addEnumValue(s);
            }
            ++next;
        }
    }

    void structure(ast::StructTypeSpec& spec, StructType* st) {
        std::uint64_t offset = 0;
        std::uint32_t align = 1;
        std::uint64_t largest = 0; // UNION: members overlap at offset 0
        st->isUnion = spec.isUnion;
        if (spec.isUnion) {
            codesysExtension(cx_, spec.span, "UNION");
        }
        if (spec.extends) {
            Symbol* baseSym = lookupQualified(cx_, *spec.extends, scope_, true);
            const Type* base = nullptr;
            if (baseSym != nullptr && baseSym->kind == SymbolKind::Type) {
                base = completeTypeSymbol(cx_, baseSym);
                if (base == nullptr) {
                    recursive(spec.extends->span, baseSym->name);
                }
            }
            if (baseSym == nullptr) {
                cx_.error(DiagCode::UnknownType, spec.extends->span, "unknown type '" + spec.extends->text() + "'");
            } else if (base != nullptr && stripAlias(base)->kind() == TypeKind::Struct) {
                st->base = static_cast<const StructType*>(stripAlias(base));
                st->fields = st->base->fields;
                offset = st->base->size;
                align = st->base->align;
            } else if (base != nullptr) {
                cx_.error(DiagCode::TypeMismatch, spec.extends->span,
                          "STRUCT EXTENDS '" + spec.extends->text() + "', which is not a STRUCT");
            }
        }
        for (ast::VarDecl& field : spec.fields) {
            const Type* t = field.type != nullptr ? resolve(*field.type, false) : errorType(cx_);
            requireLayout(cx_, t, field.span);
            for (const ast::Identifier& name : field.names) {
                if (const Field* existing = st->field(name.name)) {
                    if (Diagnostic* d = cx_.error(DiagCode::DuplicateDeclaration, name.span,
                                                  "field '" + name.name + "' is already declared")) {
                        d->relate(existing->span, "'" + existing->name + "' is first declared here");
                    }
                    continue;
                }
                align = std::max(align, t->align);
                if (spec.isUnion) {
                    st->fields.push_back(Field{name.name, t, 0, field.init.get(), name.span});
                    largest = std::max<std::uint64_t>(largest, t->size);
                    continue;
                }
                offset = alignUp(offset, t->align);
                st->fields.push_back(
                    Field{name.name, t, static_cast<std::uint32_t>(offset), field.init.get(), name.span});
                offset += t->size;
            }
        }
        st->align = align;
        st->size = alignUp(spec.isUnion ? largest : offset, align);
    }

    void recursive(Span span, const std::string& name) {
        cx_.error(DiagCode::RecursiveType, span, "type '" + name + "' contains itself");
    }

private:
    const Type* named(ast::NamedTypeSpec& spec, bool viaRef) {
        if (spec.name.parts.size() == 1) {
            if (const Type* e = cx_.model.types.elementary(spec.name.parts[0].name)) {
                return e;
            }
            if (const Type* e = pointerSizedType(cx_.model.types, spec.name.parts[0].name)) {
                codesysExtension(cx_, spec.span, upperName(spec.name.parts[0].name));
                return e;
            }
        }
        bool reported = false;
        Symbol* sym = lookupQualified(cx_, spec.name, scope_, true, &reported);
        if (sym == nullptr) {
            if (!reported) {
                cx_.error(DiagCode::UnknownType, spec.span, "unknown type '" + spec.name.text() + "'");
            }
            return errorType(cx_);
        }
        switch (sym->kind) {
        case SymbolKind::Type: {
            if (viaRef && sym->type != nullptr) {
                return sym->type; // REF_TO a struct/enum being declared: no layout needed
            }
            const Type* t = completeTypeSymbol(cx_, sym);
            if (t == nullptr) {
                recursive(spec.span, sym->name);
                return errorType(cx_);
            }
            return t;
        }
        case SymbolKind::Interface: return sym->type;
        case SymbolKind::Pou:
            if (sym->type != nullptr && sym->pouKind != ast::PouKind::Function &&
                sym->pouKind != ast::PouKind::Method) {
                return sym->type;
            }
            break;
        default: break;
        }
        cx_.error(DiagCode::NameIsNotType, spec.span, "'" + spec.name.text() + "' is not a type");
        return errorType(cx_);
    }

    const Type* string(ast::StringTypeSpec& spec) {
        std::uint32_t length = kDefaultStringLength;
        if (spec.length != nullptr) {
            auto v = evaluateConstant(cx_, *spec.length, scope_, false);
            if (!v || v->kind != ConstValue::Kind::Int || v->isUnsigned || v->i <= 0 || v->i > 65535) {
                cx_.error(DiagCode::InvalidStringLength, spec.length->span,
                          std::string(spec.wide ? "WSTRING" : "STRING") +
                              " length must be a positive integer constant (1..65535)");
                return errorType(cx_);
            }
            length = static_cast<std::uint32_t>(v->i);
        }
        return cx_.model.types.string(spec.wide, length);
    }

    const Type* array(ast::ArrayTypeSpec& spec) {
        const Type* element = spec.element != nullptr ? resolve(*spec.element, false) : errorType(cx_);
        requireLayout(cx_, element, spec.span);
        std::vector<ArrayDim> dims;
        bool ok = true;
        std::uint64_t count = 1;
        for (ast::Range& r : spec.dimensions) {
            auto lo = constInt(cx_, r.lower.get(), scope_);
            auto hi = constInt(cx_, r.upper.get(), scope_);
            if (!lo || !hi) {
                ok = false;
                continue;
            }
            if (*hi < *lo) {
                cx_.error(DiagCode::InvalidArrayBounds, r.span,
                          "array range " + std::to_string(*lo) + ".." + std::to_string(*hi) +
                              " has its upper bound below its lower bound");
                ok = false;
                continue;
            }
            const ArrayDim d{*lo, *hi};
            count = d.count() > kMaxObjectSize ? kMaxObjectSize + 1 : count * d.count();
            if (count > kMaxObjectSize || count * std::max<std::uint32_t>(element->size, 1) > kMaxObjectSize) {
                cx_.error(DiagCode::InvalidArrayBounds, r.span, "array of " + element->name() + " is too large");
                ok = false;
                count = 1;
                continue;
            }
            dims.push_back(d);
        }
        if (!ok) {
            return errorType(cx_);
        }
        return cx_.model.types.array(element, std::move(dims));
    }

    const Type* subrange(ast::SubrangeTypeSpec& spec) {
        const Type* base = spec.base != nullptr ? resolve(*spec.base, false) : errorType(cx_);
        if (!isInteger(base)) {
            if (stripAlias(base)->kind() != TypeKind::Error) {
                cx_.error(DiagCode::TypeMismatch, spec.base->span,
                          "subrange base type '" + base->name() + "' is not an integer type");
            }
            return errorType(cx_);
        }
        auto lo = constInt(cx_, spec.range.lower.get(), scope_);
        auto hi = constInt(cx_, spec.range.upper.get(), scope_);
        if (!lo || !hi) {
            return errorType(cx_);
        }
        if (*hi < *lo) {
            cx_.error(DiagCode::InvalidArrayBounds, spec.range.span,
                      "subrange " + std::to_string(*lo) + ".." + std::to_string(*hi) +
                          " has its upper bound below its lower bound");
            return errorType(cx_);
        }
        auto t = std::make_unique<SubrangeType>(
            base->name() + " (" + std::to_string(*lo) + ".." + std::to_string(*hi) + ")", base, *lo, *hi);
        t->size = base->size;
        t->align = base->align;
        return cx_.model.types.add(std::move(t));
    }

    Context& cx_;
    Scope* scope_;
};

} // namespace

const Type* resolveType(Context& cx, ast::TypeSpec& spec, Scope* scope) {
    TypeResolver r(cx, scope);
    return r.resolve(spec, false);
}

Symbol* lookupQualified(Context& cx, const ast::QualifiedName& name, const Scope* scope, bool report, bool* reported) {
    if (name.parts.empty()) {
        return nullptr;
    }
    const Span* where = report ? &name.parts[0].span : nullptr;
    Symbol* sym = lookup(cx, scope, name.parts[0].name, true, where);
    if (sym == nullptr) { // reported as what it is (E0112 for a variable used as a type)
        sym = lookup(cx, scope, name.parts[0].name, false, where);
    }
    for (std::size_t i = 1; i < name.parts.size(); ++i) {
        if (sym == nullptr || sym->kind != SymbolKind::Namespace) {
            if (report) {
                std::string prefix;
                for (std::size_t k = 0; k < i; ++k) {
                    prefix += (k > 0 ? "." : "") + name.parts[k].name;
                }
                cx.error(DiagCode::UnknownNamespace, name.parts[i - 1].span,
                         (sym == nullptr ? "unknown namespace '" : "'") + prefix +
                             (sym == nullptr ? "'" : "' is not a namespace"));
                if (reported != nullptr) {
                    *reported = true;
                }
            }
            return nullptr;
        }
        sym = sym->scope->findLocal(name.parts[i].name);
    }
    return sym;
}

const Type* completeTypeSymbol(Context& cx, Symbol* symbol) {
    if (cx.decl == nullptr) {
        return symbol->type;
    }
    auto it = cx.decl->types.find(symbol);
    if (it == cx.decl->types.end() || it->second.progress == Progress::Done) {
        return symbol->type;
    }
    PendingType& pending = it->second;
    if (pending.progress == Progress::Running) {
        return nullptr;
    }
    pending.progress = Progress::Running;
    ast::TypeSpec* spec = pending.decl->spec.get();
    TypeResolver r(cx, pending.scope);
    if (spec == nullptr) {
        symbol->type = cx.model.types.get(TypeKind::Error);
    } else if (spec->kind == ast::TypeSpecKind::Struct) {
        r.structure(static_cast<ast::StructTypeSpec&>(*spec),
                    static_cast<StructType*>(const_cast<Type*>(symbol->type)));
        spec->resolved = symbol->type;
    } else if (spec->kind == ast::TypeSpecKind::Enum) {
        r.enumeration(static_cast<ast::EnumTypeSpec&>(*spec), static_cast<EnumType*>(const_cast<Type*>(symbol->type)),
                      symbol->scope, symbol);
        spec->resolved = symbol->type;
    } else {
        // Every other TYPE is a named alias of its specification; the alias carries the name, the
        // declaration (and its initial value) to later phases.
        const Type* target = r.resolve(*spec, false);
        auto alias = std::make_unique<AliasType>(qualifiedName(symbol), target);
        alias->symbol = symbol;
        alias->size = target->size;
        alias->align = target->align;
        symbol->type = cx.model.types.add(std::move(alias));
    }
    // A Running mark left by recursion inside may have been overwritten; make it final now.
    cx.decl->types[symbol].progress = Progress::Done;
    return symbol->type;
}

const Type* ensureVarType(Context& cx, Symbol* variable) {
    if (variable->type != nullptr || cx.decl == nullptr) {
        return variable->type;
    }
    auto it = cx.decl->varOf.find(variable);
    if (it == cx.decl->varOf.end()) {
        return variable->type;
    }
    PendingVar& pending = *it->second;
    if (pending.resolved) {
        return variable->type; // being resolved (a type naming its own variable); stays null for now
    }
    pending.resolved = true;
    const Type* t = pending.decl->type != nullptr ? resolveType(cx, *pending.decl->type, pending.scope)
                                                  : cx.model.types.get(TypeKind::Error);
    for (Symbol* s : pending.symbols) {
        s->type = t;
    }
    return t;
}

void completePouLayout(Context& cx, Symbol* pou, Span use) {
    if (cx.decl == nullptr) {
        return;
    }
    auto it = cx.decl->pous.find(pou);
    if (it == cx.decl->pous.end() || it->second.layout == Progress::Done) {
        return;
    }
    if (it->second.layout == Progress::Running || it->second.members == Progress::Running) {
        // Named by what it is: a PROGRAM can hold an instance of itself as much as an FB can.
        cx.error(DiagCode::RecursiveInstance, use,
                 std::string(ast::pouKeyword(pou->pouKind)) + " '" + pou->name + "' contains itself (an instance of '" +
                     pou->name + "', directly or through its members)");
        return;
    }
    it->second.layout = Progress::Running;
    completePouMembers(cx, pou);
    std::uint64_t offset = pou->dispatchHeader;
    std::uint32_t align = pou->dispatchHeader > 0 ? 4 : 1;
    if (pou->base != nullptr) {
        completePouLayout(cx, const_cast<Symbol*>(pou->base), use);
        if (pou->base->type != nullptr) {
            offset = pou->base->type->size;
            align = pou->base->type->align;
        }
    }
    // Instance data: VAR, VAR_INPUT, VAR_OUTPUT inline; VAR_IN_OUT as an 8-byte reference;
    // VAR_TEMP lives in the call frame and VAR_EXTERNAL/VAR_GLOBAL in the global image.
    for (Symbol* s : pou->scope->symbols()) {
        if (s->kind != SymbolKind::Variable || s->type == nullptr) {
            continue;
        }
        std::uint32_t size = 0;
        std::uint32_t a = 1;
        switch (s->section) {
        case ast::VarSection::Var:
        case ast::VarSection::Input:
        case ast::VarSection::Output:
            if (const Symbol* inner = instanceSymbol(s->type)) {
                completePouLayout(cx, const_cast<Symbol*>(inner), s->span);
            }
            size = s->type->size;
            a = s->type->align;
            break;
        case ast::VarSection::InOut:
            size = 8;
            a = 8;
            break;
        default: continue;
        }
        offset = alignUp(offset, a) + size;
        align = std::max(align, a);
    }
    auto* type = const_cast<Type*>(pou->type);
    type->align = align;
    type->size = alignUp(offset, align);
    cx.decl->pous[pou].layout = Progress::Done;
}

} // namespace takt::compiler::sema
