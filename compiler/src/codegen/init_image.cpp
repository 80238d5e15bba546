// The cold-start image: every variable's initial value, evaluated at compile time when its
// initialiser is constant (literals, CONSTANTs, enum values, constant arithmetic), else the
// type's default now and an assignment in the init code later (initialisers that read
// variables declared earlier, LANGUAGE.md "initial values").
#include <cstring>

#include "codegen/codegen_internal.h"
#include "sema/context.h"
#include "takt/compiler/names.h"

namespace takt::compiler::codegen {

namespace {

void putInt(std::vector<std::uint8_t>& image, std::uint32_t at, std::uint32_t size, std::uint64_t v) {
    for (std::uint32_t i = 0; i < size && i < 8; ++i) {
        image[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
    }
}

// STRING[n] is n+1 bytes: the characters, then a NUL (the string ends at the first NUL).
// WSTRING[n] is n+1 UTF-16 code units, likewise terminated.
void putString(std::vector<std::uint8_t>& image, std::uint32_t at, const StringType* t, const std::string& s) {
    const std::size_t n = std::min<std::size_t>(s.size(), t->length);
    if (t->kind() == TypeKind::String) {
        std::memcpy(image.data() + at, s.data(), n);
        image[at + n] = 0;
        return;
    }
    std::size_t units = 0;
    for (std::size_t i = 0; i < s.size() && units < t->length;) {
        std::uint32_t cp = static_cast<unsigned char>(s[i]);
        int extra = cp >= 0xF0 ? 3 : cp >= 0xE0 ? 2 : cp >= 0xC0 ? 1 : 0;
        cp &= extra == 0 ? 0x7F : (0x3F >> extra);
        for (++i; extra > 0 && i < s.size(); --extra, ++i) {
            cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3F);
        }
        if (cp > 0xFFFF) {
            if (units + 2 > t->length) {
                break;
            }
            cp -= 0x10000;
            putInt(image, at + 2 * static_cast<std::uint32_t>(units++), 2, 0xD800 + (cp >> 10));
            putInt(image, at + 2 * static_cast<std::uint32_t>(units++), 2, 0xDC00 + (cp & 0x3FF));
        } else {
            putInt(image, at + 2 * static_cast<std::uint32_t>(units++), 2, cp);
        }
    }
    putInt(image, at + 2 * static_cast<std::uint32_t>(units), 2, 0);
}

// The UNION member whose initial value fills the union's bytes: the one the initialiser names,
// else the first with a default of its own; null leaves the bytes zero.
const Field* initialisedUnionMember(const StructType& st, const ast::StructInitExpr* si) {
    if (si != nullptr && !si->fields.empty()) {
        return st.field(si->fields.front().field.name);
    }
    for (const Field& f : st.fields) {
        if (f.init != nullptr) {
            return &f;
        }
    }
    return nullptr;
}

} // namespace

sema::ConstValue charConstant(const sema::ConstValue& text, const Type* ch) {
    sema::ConstValue c;
    c.kind = sema::ConstValue::Kind::Int;
    c.type = ch;
    const std::string& s = text.s;
    if (s.empty()) {
        return c;
    }
    std::uint32_t cp = static_cast<unsigned char>(s[0]);
    if (ch->kind() == TypeKind::WChar && cp >= 0xC0) {
        int extra = cp >= 0xF0 ? 3 : cp >= 0xE0 ? 2 : 1;
        cp &= 0x3Fu >> extra;
        for (std::size_t i = 1; extra > 0 && i < s.size(); --extra, ++i) {
            cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3Fu);
        }
        cp = cp > 0xFFFF ? 0xD800 + ((cp - 0x10000) >> 10) : cp; // the high surrogate
    }
    c.i = cp;
    return c;
}

static bool putConstant(std::vector<std::uint8_t>& image, std::uint32_t at, const Type* t, const sema::ConstValue& v);

std::optional<sema::ConstValue> Generator::constant(const ast::Expr& expr, const Scope* scope) {
    sema::Context cx{const_cast<SemanticModel&>(model_), scratch_, sm_, analysisOptions_, units_};
    return sema::evaluateConstant(cx, expr, scope != nullptr ? scope : model_.global.get(), false);
}

bool Generator::writeConstant(const Type* type, const sema::ConstValue& v, std::uint32_t at) {
    return putConstant(*image, at, stripAlias(type), v);
}

void Generator::collectTypeInits() {
    for (const Symbol* s : model_.typeDecls) {
        if (s->typeDecl != nullptr && s->typeDecl->init != nullptr && s->type != nullptr) {
            typeInit_.emplace(s->type, s->typeDecl->init.get());
        }
    }
}

// Writes a constant scalar of (alias-stripped) type `t`; false when the value does not suit it.
static bool putConstant(std::vector<std::uint8_t>& image, std::uint32_t at, const Type* t, const sema::ConstValue& v) {
    using K = sema::ConstValue::Kind;
    if (isString(t)) {
        if (v.kind != K::String) {
            return false;
        }
        putString(image, at, static_cast<const StringType*>(t), v.s);
        return true;
    }
    if (t->kind() == TypeKind::Real || t->kind() == TypeKind::LReal) {
        const double d = v.kind == K::Real ? v.r
                         : v.isUnsigned    ? static_cast<double>(static_cast<std::uint64_t>(v.i))
                                           : static_cast<double>(v.i);
        if (v.kind == K::String) {
            return false;
        }
        if (t->kind() == TypeKind::Real) {
            const float f = static_cast<float>(d);
            std::memcpy(image.data() + at, &f, 4);
        } else {
            std::memcpy(image.data() + at, &d, 8);
        }
        return true;
    }
    if (v.kind == K::String) {
        if (t->kind() == TypeKind::Char || t->kind() == TypeKind::WChar) {
            putInt(image, at, t->size, static_cast<std::uint64_t>(charConstant(v, t).i));
            return true;
        }
        return false;
    }
    const std::int64_t i = v.kind == K::Real ? static_cast<std::int64_t>(v.r) : v.i;
    putInt(image, at, t->size, static_cast<std::uint64_t>(i));
    return true;
}

void Generator::writeInitial(const Type* type, const ast::Expr* init, std::uint32_t at, const InitContext& cx) {
    if (type == nullptr) {
        return;
    }
    // A TYPE declaration's own initialiser (`TYPE Level : INT (0..100) := 50;`) is the default
    // of every variable of that type.
    if (init == nullptr) {
        if (auto it = typeInit_.find(type); it != typeInit_.end()) {
            init = it->second;
        }
    }
    const Type* t = stripAlias(type);
    if (init == nullptr && type != t) {
        if (auto it = typeInit_.find(t); it != typeInit_.end()) {
            init = it->second;
        }
    }
    while (init != nullptr && init->kind == ast::ExprKind::Paren) {
        init = static_cast<const ast::ParenExpr*>(init)->inner.get();
    }
    auto& img = *image;
    switch (t->kind()) {
    case TypeKind::Array: {
        const auto* a = static_cast<const ArrayType*>(t);
        const std::uint32_t es = a->element->size;
        const std::uint64_t count = es == 0 ? 0 : t->size / es;
        if (count == 0) {
            return;
        }
        writeInitial(a->element, nullptr, at, cx);
        for (std::uint64_t k = 1; k < count; ++k) { // the default element, copied
            std::memcpy(img.data() + at + k * es, img.data() + at, es);
        }
        if (init != nullptr && init->kind == ast::ExprKind::ArrayInit) {
            std::uint64_t k = 0;
            for (const ast::ArrayInitElement& el : static_cast<const ast::ArrayInitExpr*>(init)->elements) {
                std::int64_t repeat = 1;
                if (el.repeat != nullptr) {
                    if (auto r = constant(*el.repeat, cx.scope); r && r->kind == sema::ConstValue::Kind::Int) {
                        repeat = r->i;
                    }
                }
                for (std::int64_t j = 0; j < repeat && k < count; ++j, ++k) {
                    if (el.value != nullptr) {
                        writeInitial(a->element, el.value.get(), at + static_cast<std::uint32_t>(k * es), cx);
                    }
                }
            }
        } else if (init != nullptr) {
            deferredInits.push_back({type, init, at, cx});
        }
        return;
    }
    case TypeKind::Struct: {
        const auto* st = static_cast<const StructType*>(t);
        const auto* si = init != nullptr && init->kind == ast::ExprKind::StructInit
                             ? static_cast<const ast::StructInitExpr*>(init)
                             : nullptr;
        const Field* unionMember = st->isUnion ? initialisedUnionMember(*st, si) : nullptr;
        for (const Field& f : st->fields) {
            if (st->isUnion && &f != unionMember) {
                continue; // members share their bytes: only the initialised one is written
            }
            const ast::Expr* fieldInit = f.init;
            if (si != nullptr) {
                for (const ast::FieldInit& fi : si->fields) {
                    if (sameName(fi.field.name, f.name)) {
                        fieldInit = fi.value.get();
                    }
                }
            }
            writeInitial(f.type, fieldInit, at + f.offset, fieldInit == f.init ? InitContext{} : cx);
        }
        if (init != nullptr && si == nullptr) {
            deferredInits.push_back({type, init, at, cx});
        }
        return;
    }
    case TypeKind::FunctionBlock:
    case TypeKind::Program: {
        const Symbol* pou = instancePou(t);
        const auto& slots = members(pou);
        const auto* si = init != nullptr && init->kind == ast::ExprKind::StructInit
                             ? static_cast<const ast::StructInitExpr*>(init)
                             : nullptr;
        for (const Symbol* m : memberList(pou)) {
            if (slots.at(m).byReference) {
                continue; // unbound VAR_IN_OUT: NULL (0)
                continue;
            }
            const ast::Expr* memberInit = m->init;
            if (si != nullptr) {
                for (const ast::FieldInit& fi : si->fields) {
                    if (sameName(fi.field.name, m->name)) {
                        memberInit = fi.value.get();
                    }
                }
            }
            const InitContext inner = memberInit == m->init ? InitContext{m->declScope, pou, at} : cx;
            writeInitial(m->type, memberInit, at + slots.at(m).offset, inner);
        }
        if (dispatchHeaderOf(pou) > 0) { // where CALL_IFACE finds this type's methods
            putInt(img, at, 4, dispatchTable(pou));
        }
        return;
    }
    case TypeKind::Enum:
        if (init == nullptr) {
            const auto* e = static_cast<const EnumType*>(t);
            putInt(img, at, t->size, e->values.empty() ? 0 : static_cast<std::uint64_t>(e->values.front().value));
            return;
        }
        break;
    case TypeKind::Subrange:
        if (init == nullptr) {
            putInt(img, at, t->size, static_cast<std::uint64_t>(static_cast<const SubrangeType*>(t)->lower));
            return;
        }
        break;
    case TypeKind::Ref:
    case TypeKind::Interface:
        if (init == nullptr) {
            return; // NULL is image offset 0
            return;
        }
        break;
    default:
        if (init == nullptr) {
            return; // zero / FALSE / empty string
        }
        break;
    }
    if (auto v = constant(*init, cx.scope); v && putConstant(img, at, t, *v)) {
        return;
    }
    deferredInits.push_back({type, init, at, cx});
}

} // namespace takt::compiler::codegen
