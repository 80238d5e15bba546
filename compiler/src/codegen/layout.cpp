// Data image layout and the module's symbol tables: types, POUs, globals, program instances
// with their nested FB instances, tasks, I/O bindings and VAR_ACCESS entries. Offsets of FB
// and PROGRAM members follow sema's layout rule exactly (completePouLayout), so the sizes sema
// reports and the image agree.
#include <algorithm>
#include <cstring>

#include "codegen/codegen_internal.h"
#include "takt/bytecode/opcodes.h"
#include "takt/compiler/names.h"

namespace takt::compiler::codegen {

namespace bc = bytecode;

const Symbol* instancePou(const Type* type) {
    const Type* t = stripAlias(type);
    if (t == nullptr || (t->kind() != TypeKind::FunctionBlock && t->kind() != TypeKind::Program)) {
        return nullptr;
    }
    return static_cast<const PouType*>(t)->symbol;
}

void Generator::error(Span span, std::string message) {
    diags_.report(DiagCode::CodegenUnsupported, span, std::move(message));
    failed = true;
}

// The native implementing a standard FB family (natives.def): TON, TON_TIME and LTON all use Ton.
static std::uint32_t nativeFb(const std::string& name) {
    const std::string n = upperName(name);
    auto starts = [&](std::string_view p) { return n.rfind(p, 0) == 0; };
    using bytecode::Native;
    Native k;
    if (starts("TON") || starts("LTON")) {
        k = Native::Ton;
    } else if (starts("TOF") || starts("LTOF")) {
        k = Native::Tof;
    } else if (starts("TP") || starts("LTP")) {
        k = Native::Tp;
    } else if (starts("R_TRIG") || n == "DIFU") {
        k = Native::RTrig;
    } else if (starts("F_TRIG") || n == "DIFD") {
        k = Native::FTrig;
    } else if (starts("CTUD")) {
        k = Native::Ctud;
    } else if (starts("CTU")) {
        k = Native::Ctu;
    } else if (starts("CTD")) {
        k = Native::Ctd;
    } else if (n == "SR") {
        k = Native::Sr;
    } else if (n == "RS") {
        k = Native::Rs;
    } else if (n == "RTC") {
        k = Native::Rtc;
    } else {
        return bytecode::kNone;
    }
    return static_cast<std::uint32_t>(k);
}

bool isNativeFb(const Symbol* pou) {
    return pou->span.file == kStdlibFile && nativeFb(pou->name) != bytecode::kNone;
}

std::uint32_t Generator::pouIndex(const Symbol* pou) {
    if (auto it = pous_.find(pou); it != pous_.end()) {
        return it->second;
    }
    const auto index = static_cast<std::uint32_t>(out_.pous.size());
    pous_.emplace(pou, index);
    bc::PouEntry e;
    std::string name = pou->name;
    if (pou->pou != nullptr && pou->pou->accessor != ast::Accessor::None) {
        // Listings and online change show a property's accessors as Fb.P.GET and Fb.P.SET.
        name = pou->pou->name.name + (pou->pou->accessor == ast::Accessor::Get ? ".GET" : ".SET");
    }
    for (const Symbol* o = pou->owner; o != nullptr; o = o->owner) {
        if (o->kind == SymbolKind::Namespace || o->kind == SymbolKind::Pou) {
            name = o->name + "." + name;
        }
    }
    e.name = name;
    const bool native = isNativeFb(pou);
    switch (pou->pouKind) {
    case ast::PouKind::Program: e.kind = bc::PouKind::Program; break;
    case ast::PouKind::Function: e.kind = bc::PouKind::Function; break;
    case ast::PouKind::FunctionBlock: e.kind = native ? bc::PouKind::Native : bc::PouKind::FunctionBlock; break;
    case ast::PouKind::Method: e.kind = bc::PouKind::Method; break;
    case ast::PouKind::TestProgram: e.kind = bc::PouKind::TestProgram; break;
    case ast::PouKind::TestFunctionBlock: e.kind = bc::PouKind::TestFunctionBlock; break;
    }
    if (native) {
        e.native = nativeFb(pou->name);
    }
    out_.pous.push_back(std::move(e));
    if (pou->pouKind == ast::PouKind::FunctionBlock || pou->pouKind == ast::PouKind::Program ||
        pou->pouKind == ast::PouKind::TestProgram || pou->pouKind == ast::PouKind::TestFunctionBlock) {
        const std::uint32_t t = typeIndex(pou->type);
        out_.pous[index].instanceType = t;
    } else if (pou->pouKind == ast::PouKind::Method && pou->owner != nullptr && pou->owner->kind == SymbolKind::Pou) {
        // A METHOD runs on its FB's instance: the verifier bounds its `this` operands by it.
        out_.pous[index].instanceType = typeIndex(pou->owner->type);
    }
    return index;
}

std::vector<const Symbol*> Generator::memberList(const Symbol* pou) {
    std::vector<const Symbol*> list;
    if (pou->base != nullptr) {
        list = memberList(pou->base);
    }
    if (pou->scope == nullptr) {
        return list;
    }
    for (const Symbol* s : pou->scope->symbols()) {
        if (s->kind == SymbolKind::Variable && s->type != nullptr &&
            (s->section == ast::VarSection::Var || s->section == ast::VarSection::Input ||
             s->section == ast::VarSection::Output || s->section == ast::VarSection::InOut)) {
            list.push_back(s);
        }
    }
    return list;
}

const std::unordered_map<const Symbol*, MemberSlot>& Generator::members(const Symbol* pou) {
    if (auto it = members_.find(pou); it != members_.end()) {
        return it->second;
    }
    std::unordered_map<const Symbol*, MemberSlot> slots;
    std::uint32_t offset = pou->dispatchHeader;
    if (pou->base != nullptr) {
        slots = members(pou->base);
        offset = pou->base->type != nullptr ? pou->base->type->size : 0;
    }
    if (pou->scope != nullptr) {
        for (const Symbol* s : pou->scope->symbols()) {
            if (s->kind != SymbolKind::Variable || s->type == nullptr) {
                continue;
            }
            MemberSlot slot;
            std::uint32_t align = 1;
            switch (s->section) {
            case ast::VarSection::Var:
            case ast::VarSection::Input:
            case ast::VarSection::Output:
                slot.size = s->type->size;
                align = s->type->align;
                break;
            case ast::VarSection::InOut:
                slot.size = 8;
                align = 8;
                slot.byReference = true;
                break;
            default: continue;
            }
            slot.offset = alignUp(offset, align);
            offset = slot.offset + slot.size;
            slots.emplace(s, slot);
        }
    }
    return members_.emplace(pou, std::move(slots)).first->second;
}

std::string Generator::signature(const Type* type) {
    const Type* t = stripAlias(type);
    switch (t->kind()) {
    case TypeKind::Enum: {
        const auto* e = static_cast<const EnumType*>(t);
        std::string s = "ENUM " + t->name() + "(" + stripAlias(e->base)->name() + "){";
        for (const EnumValue& v : e->values) {
            s += v.name + "=" + std::to_string(v.value) + ";";
        }
        return s + "}";
    }
    case TypeKind::Subrange: {
        const auto* r = static_cast<const SubrangeType*>(t);
        return stripAlias(r->base)->name() + "(" + std::to_string(r->lower) + ".." + std::to_string(r->upper) + ")";
    }
    case TypeKind::Array: {
        const auto* a = static_cast<const ArrayType*>(t);
        std::string s = "ARRAY[";
        for (std::size_t i = 0; i < a->dims.size(); ++i) {
            s += (i > 0 ? "," : "") + std::to_string(a->dims[i].lower) + ".." + std::to_string(a->dims[i].upper);
        }
        return s + "] OF " + signature(a->element);
    }
    case TypeKind::Struct: {
        std::string s = "STRUCT " + t->name() + "{";
        for (const Field& f : static_cast<const StructType*>(t)->fields) {
            s += upperName(f.name) + ":" + signature(f.type) + "@" + std::to_string(f.offset) + ";";
        }
        return s + "}";
    }
    // A reference names its target only: recursive types stay finite, and a reference is an
    // image offset whose transfer does not depend on the target's layout.
    case TypeKind::Ref: return "REF_TO " + stripAlias(static_cast<const RefType*>(t)->target)->name();
    case TypeKind::FunctionBlock:
    case TypeKind::Program: {
        const Symbol* pou = instancePou(t);
        std::string s = (t->kind() == TypeKind::Program ? "PROGRAM " : "FB ") + t->name() + "{";
        if (dispatchHeaderOf(pou) > 0) {
            // The header holds the image offset of the type's dispatch table: an instance copied
            // whole by an online change or a retain restore must not bring an offset from a
            // program whose tables sat elsewhere, so a moved table makes the type differ (its
            // members are then carried over one by one and the header comes from the new image).
            s += "DISPATCH@" + std::to_string(dispatchTable(pou)) + ";";
        }
        const auto& slots = members(pou);
        for (const Symbol* m : memberList(pou)) {
            const MemberSlot& slot = slots.at(m);
            s += upperName(m->name) + ":" + (slot.byReference ? "IN_OUT " : "") + signature(m->type) + "@" +
                 std::to_string(slot.offset) + ";";
        }
        return s + "}";
    }
    case TypeKind::Interface: return "INTERFACE " + t->name();
    default: return t->name(); // elementary, STRING[n]
    }
}

std::uint32_t Generator::typeIndex(const Type* type) {
    const Type* t = stripAlias(type);
    if (auto it = types_.find(t); it != types_.end()) {
        return it->second;
    }
    const auto index = static_cast<std::uint32_t>(out_.types.size());
    types_.emplace(t, index);
    out_.types.emplace_back();
    bc::TypeDesc d;
    d.name = t->name();
    d.size = t->size;
    d.align = t->align;
    if (hasValueKind(t->kind())) {
        d.kind = valueKind(t->kind());
    }
    switch (t->kind()) {
    case TypeKind::String:
    case TypeKind::WString: d.stringLength = static_cast<const StringType*>(t)->length; break;
    case TypeKind::Enum: {
        const auto* e = static_cast<const EnumType*>(t);
        d.element = typeIndex(e->base);
        for (const EnumValue& v : e->values) {
            d.enumValues.push_back({v.name, v.value});
        }
        break;
    }
    case TypeKind::Subrange: {
        const auto* r = static_cast<const SubrangeType*>(t);
        d.element = typeIndex(r->base);
        d.bounds = {r->lower, r->upper};
        break;
    }
    case TypeKind::Array: {
        const auto* a = static_cast<const ArrayType*>(t);
        d.element = typeIndex(a->element);
        for (const ArrayDim& dim : a->dims) {
            d.bounds.push_back(dim.lower);
            d.bounds.push_back(dim.upper);
        }
        break;
    }
    case TypeKind::Struct:
        for (const Field& f : static_cast<const StructType*>(t)->fields) {
            const std::uint32_t ft = typeIndex(f.type);
            d.fields.push_back({f.name, ft, f.offset, false});
        }
        break;
    case TypeKind::Ref: d.element = typeIndex(static_cast<const RefType*>(t)->target); break;
    case TypeKind::FunctionBlock:
    case TypeKind::Program: {
        const Symbol* pou = instancePou(t);
        const auto& slots = members(pou);
        for (const Symbol* m : memberList(pou)) {
            const std::uint32_t ft = m->section == ast::VarSection::InOut
                                         ? typeIndex(const_cast<TypeTable&>(model_.types).ref(m->type))
                                         : typeIndex(m->type);
            d.fields.push_back({m->name, ft, slots.at(m).offset, m->retain});
        }
        d.pou = pouIndex(pou);
        break;
    }
    default: break;
    }
    d.signature = signature(t);
    out_.types[index] = std::move(d);
    return index;
}

} // namespace takt::compiler::codegen
