// Expressions: locations, loads and stores, constants, operators and conversions. Values are
// computed in 32 or 64 bits (narrow integers widened on load, truncated on store); a variable
// of the computation width is used in place, and a result goes straight to its destination
// when the caller names one, so `x := x + 1` is one instruction.
#include <cstring>

#include "codegen/lower.h"
#include "takt/compiler/names.h"

namespace takt::compiler::codegen {

using bc::Opcode;

Calc calcOf(const Type* type) {
    const Type* t = stripAlias(type);
    if (t == nullptr) {
        return Calc::I32;
    }
    switch (t->kind()) {
    case TypeKind::Bool: return Calc::Bool;
    case TypeKind::SInt:
    case TypeKind::Int:
    case TypeKind::DInt:
    case TypeKind::IntLiteral: return Calc::I32;
    case TypeKind::USInt:
    case TypeKind::UInt:
    case TypeKind::UDInt:
    case TypeKind::Byte:
    case TypeKind::Word:
    case TypeKind::DWord:
    case TypeKind::Char:
    case TypeKind::WChar: return Calc::U32;
    case TypeKind::LInt:
    case TypeKind::Time:
    case TypeKind::LTime:
    case TypeKind::Date:
    case TypeKind::LDate:
    case TypeKind::Tod:
    case TypeKind::LTod:
    case TypeKind::Dt:
    case TypeKind::Ldt: return Calc::I64;
    case TypeKind::ULInt:
    case TypeKind::LWord: return Calc::U64;
    case TypeKind::Real: return Calc::F32;
    case TypeKind::LReal:
    case TypeKind::RealLiteral: return Calc::F64;
    case TypeKind::String: return Calc::Str;
    case TypeKind::WString: return Calc::WStr;
    case TypeKind::Enum: return calcOf(static_cast<const EnumType*>(t)->base);
    case TypeKind::Subrange: return calcOf(static_cast<const SubrangeType*>(t)->base);
    case TypeKind::Ref:
    case TypeKind::Interface:
    case TypeKind::Null: return Calc::U32; // a 4-byte image offset in an 8-byte slot
    default: return Calc::Agg;
    }
}

std::uint32_t calcWidth(Calc c) {
    switch (c) {
    case Calc::Bool: return 1;
    case Calc::I32:
    case Calc::U32:
    case Calc::F32: return 4;
    case Calc::I64:
    case Calc::U64:
    case Calc::F64: return 8;
    default: return 0;
    }
}

namespace {} // namespace

std::uint32_t storeWidth(const Type* type) {
    const Type* t = stripAlias(type);
    if (t->kind() == TypeKind::Ref || t->kind() == TypeKind::Interface) {
        return 4;
    }
    if (t->kind() == TypeKind::Enum) {
        return stripAlias(static_cast<const EnumType*>(t)->base)->size;
    }
    if (t->kind() == TypeKind::Subrange) {
        return stripAlias(static_cast<const SubrangeType*>(t)->base)->size;
    }
    return t->size;
}

namespace {

Opcode movOf(std::uint32_t width) {
    switch (width) {
    case 1: return Opcode::MOV_8;
    case 2: return Opcode::MOV_16;
    case 4: return Opcode::MOV_32;
    default: return Opcode::MOV_64;
    }
}

} // namespace

// ---- emission ---------------------------------------------------------------------------------

void Lowerer::emit(Opcode op, std::initializer_list<Operand> operands) {
    out_.code.push_back(static_cast<std::uint32_t>(op));
    for (const Operand& o : operands) { // a 64-bit immediate is passed as two words, low first
        if (o.global) {
            g_.globalFixups.push_back(here());
        }
        out_.code.push_back(o.word);
    }
}

void Lowerer::emitJump(Opcode op, std::initializer_list<Operand> operands, std::vector<std::uint32_t>& patches) {
    emit(op, operands);
    out_.code.push_back(0);
    patches.push_back(here() - 1);
}

void Lowerer::patch(const std::vector<std::uint32_t>& patches, std::uint32_t target) {
    for (std::uint32_t at : patches) {
        out_.code[at] = target;
    }
}

void Lowerer::debugAt(Span span, bool statement) {
    if (span.file == kNoFile || span.file == kStdlibFile) {
        return;
    }
    const LineCol lc = g_.sources().lineCol(span);
    if (!out_.debug.empty() && out_.debug.back().codeOffset == here()) {
        // A statement that emitted no code, or a faulting instruction first in its statement: one
        // entry, the later position (what a fault there names), still a statement start.
        const bool starts = statement || out_.debug.back().statement;
        out_.debug.back() = {here(), span.file, lc.line, lc.column, starts};
        return;
    }
    out_.debug.push_back({here(), span.file, lc.line, lc.column, statement});
}

// ---- storage ----------------------------------------------------------------------------------

Operand Lowerer::frameSlot(std::uint32_t size, std::uint32_t align) {
    const std::uint32_t at = alignUp(frameTop_, std::max<std::uint32_t>(align, 1));
    frameTop_ = at + std::max<std::uint32_t>(size, 1);
    frameMax_ = std::max(frameMax_, frameTop_);
    return {bc::address(bc::kTagFrame, at), false};
}

Operand Lowerer::constant64(std::uint64_t bits) {
    auto it = g_.pool64.find(bits);
    if (it == g_.pool64.end()) {
        const std::uint32_t at = g_.poolAlloc(8, 8);
        for (std::uint32_t i = 0; i < 8; ++i) {
            g_.pool[at - 8 + i] = static_cast<std::uint8_t>(bits >> (8 * i));
        }
        it = g_.pool64.emplace(bits, at).first;
    }
    return {bc::address(bc::kTagAbsolute, it->second), false};
}

Loc Lowerer::locateSymbol(const Symbol* s, Span span) {
    Loc l;
    l.type = s->type;
    if (s->kind == SymbolKind::Pou) { // the result variable of the FUNCTION/METHOD being compiled
        l.at = {bc::address(bc::kTagFrame, 0), false};
        return l;
    }
    if (s->section == ast::VarSection::External && s->target != nullptr) {
        s = s->target;
    }
    if (auto it = g_.globalOffset.find(s); it != g_.globalOffset.end()) {
        l.at = {bc::address(bc::kTagAbsolute, it->second), true};
        return l;
    }
    if (auto it = frame_.find(s); it != frame_.end()) {
        l.at = {bc::address(bc::kTagFrame, it->second), false};
        if (s->section == ast::VarSection::InOut) {
            l.indirect = true;
        }
        return l;
    }
    if (const MemberSlot* slot = instanceSlot(s)) {
        if (thisAbsolute_) {
            l.at = {bc::address(bc::kTagAbsolute, *thisAbsolute_ + slot->offset), true};
        } else {
            l.at = {bc::address(bc::kTagThis, slot->offset), false};
        }
        l.indirect = slot->byReference;
        return l;
    }
    g_.error(span, "variable '" + s->name + "' has no storage in this context");
    l.at = constant64(0);
    return l;
}

const MemberSlot* Lowerer::instanceSlot(const Symbol* s) {
    const Symbol* owner = pou_;
    if (owner != nullptr && owner->pouKind == ast::PouKind::Method) {
        owner = owner->owner; // a METHOD works on its FB's instance
    }
    for (const Symbol* p = owner; p != nullptr; p = p->base) {
        const auto& slots = g_.members(p);
        if (auto it = slots.find(s); it != slots.end()) {
            return &it->second;
        }
    }
    return nullptr;
}

Operand Lowerer::pointerOf(const Loc& l) {
    if (!l.indirect) {
        const Operand p = frameSlot(4, 4);
        emit(Opcode::ADDR, {p, l.at});
        return p;
    }
    if (l.extra == 0) {
        return l.at;
    }
    const Operand p = frameSlot(4, 4);
    emit(Opcode::ADD_I32_IMM, {p, l.at, imm(l.extra)});
    return p;
}

Operand Lowerer::addressOf(const Loc& l) {
    if (!l.indirect) {
        return l.at;
    }
    const std::uint32_t size = stripAlias(l.type)->size;
    const Operand t = frameSlot(size, 8);
    const Operand p = pointerOf(l);
    debugAt(span_);
    emit(Opcode::LDI_N, {t, p, imm(size)});
    return t;
}

std::optional<std::int64_t> Lowerer::constantIndex(const ast::Expr& e) {
    if (!isConstantCandidate(e)) {
        return std::nullopt;
    }
    if (auto k = g_.constant(e, scope_); k && k->kind == sema::ConstValue::Kind::Int) {
        return k->i;
    }
    return std::nullopt;
}

Loc Lowerer::locateStorage(const ast::Expr& e) {
    lastIdx_ = kNoIdx; // set again below when this location ends in an IDX
    switch (e.kind) {
    case ast::ExprKind::Paren: return locate(*static_cast<const ast::ParenExpr&>(e).inner);
    case ast::ExprKind::Name: {
        const auto& n = static_cast<const ast::NameExpr&>(e);
        if (n.symbol == nullptr) {
            break;
        }
        return locateSymbol(n.symbol, e.span);
    }
    case ast::ExprKind::This: {
        Loc l;
        l.type = e.type;
        l.at = {bc::address(bc::kTagThis, 0), false};
        if (thisAbsolute_) {
            l.at = {bc::address(bc::kTagAbsolute, *thisAbsolute_), true};
        }
        return l;
    }
    case ast::ExprKind::Member: {
        const auto& m = static_cast<const ast::MemberExpr&>(e);
        if (m.symbol != nullptr && (m.symbol->kind == SymbolKind::EnumValue || g_.globalOffset.count(m.symbol) != 0 ||
                                    m.symbol->section == ast::VarSection::External)) {
            return locateSymbol(m.symbol, e.span); // Namespace.global
        }
        if (const Symbol* os =
                m.object->kind == ast::ExprKind::Name ? static_cast<const ast::NameExpr&>(*m.object).symbol : nullptr;
            m.symbol != nullptr && os != nullptr && os->kind == SymbolKind::Pou && os->pou != nullptr &&
            os->pou->isAction) {
            return locateSymbol(m.symbol, e.span); // an action's Q or A: the chart's flag (sema/body_names.cpp)
        }
        Loc base = locate(*m.object);
        const Type* bt = stripAlias(base.type);
        std::uint32_t offset = 0;
        bool byRef = false;
        const Type* memberType = m.symbol != nullptr ? m.symbol->type : e.type;
        if (bt->kind() == TypeKind::Struct) {
            const Field* f = static_cast<const StructType*>(bt)->field(m.member.name);
            if (f == nullptr) {
                break;
            }
            offset = f->offset;
            memberType = f->type;
        } else if (const Symbol* pou = instancePou(bt); pou != nullptr && m.symbol != nullptr) {
            const auto& slots = g_.members(pou);
            if (auto it = slots.find(m.symbol); it != slots.end()) {
                offset = it->second.offset;
                byRef = it->second.byReference;
            }
        }
        Loc l = base;
        l.type = memberType;
        if (base.indirect) {
            l.extra += offset;
        } else {
            l.at.word += offset;
        }
        if (byRef) { // the member holds the image offset of the actual argument
            const Operand p = l.indirect ? frameSlot(4, 4) : l.at;
            if (l.indirect) {
                emit(Opcode::LDI_32, {p, l.at, imm(l.extra)});
            }
            l = Loc{true, p, 0, l.type};
        }
        return l;
    }
    case ast::ExprKind::Index: {
        const auto& ix = static_cast<const ast::IndexExpr&>(e);
        Loc base = locate(*ix.array);
        const Type* at = stripAlias(base.type);
        if (at->kind() != TypeKind::Array) {
            break;
        }
        const auto* arr = static_cast<const ArrayType*>(at);
        const Type* dint = g_.model().types.get(TypeKind::DInt);
        std::uint32_t stride = arr->element->size;
        std::vector<std::uint32_t> strides(arr->dims.size());
        for (std::size_t d = arr->dims.size(); d-- > 0;) {
            strides[d] = stride;
            stride *= static_cast<std::uint32_t>(arr->dims[d].count());
        }
        // Leading subscripts that are constants inside the bounds select the element at compile
        // time (an offset, no run-time check); the first other one starts the IDX/IDXP chain.
        Loc cur = base;
        Operand ptr{};
        bool havePtr = false;
        for (std::size_t d = 0; d < ix.indices.size() && d < arr->dims.size(); ++d) {
            const auto count = static_cast<std::uint32_t>(arr->dims[d].count());
            if (!havePtr) {
                if (auto k = constantIndex(*ix.indices[d]); k && *k >= arr->dims[d].lower && *k <= arr->dims[d].upper) {
                    const auto off = static_cast<std::uint32_t>(*k - arr->dims[d].lower) * strides[d];
                    if (cur.indirect) {
                        cur.extra += off;
                    } else {
                        cur.at.word += off;
                    }
                    continue;
                }
                if (cur.indirect) {
                    ptr = pointerOf(cur);
                    havePtr = true;
                }
            }
            std::int64_t shift = 0;
            const Value iv = eval(offsetSubscript(*ix.indices[d], arr->dims[d].lower, shift), dint);
            const auto low = static_cast<std::uint32_t>(arr->dims[d].lower - shift);
            const Operand out = frameSlot(4, 4);
            debugAt(ix.indices[d]->span);
            if (havePtr) {
                emit(Opcode::IDXP, {out, ptr, iv.at, imm(low), imm(strides[d]), imm(count)});
            } else {
                lastIdx_ = here();
                emit(Opcode::IDX, {out, cur.at, iv.at, imm(low), imm(strides[d]), imm(count)});
            }
            ptr = out;
            havePtr = true;
        }
        if (!havePtr) {
            cur.type = arr->element;
            return cur;
        }
        return Loc{true, ptr, 0, arr->element};
    }
    case ast::ExprKind::Call: {
        // A call's result as the object of `.field`, `[i]` or `.n` (a STRUCT or ARRAY PROPERTY
        // read through its GET): the temporary the result is returned in.
        const Value v = eval(e, e.type);
        return Loc{false, v.at, 0, e.type};
    }
    case ast::ExprKind::DirectAddress: {
        const auto& d = static_cast<const ast::DirectAddressExpr&>(e);
        return Loc{
            false, {bc::address(bc::kTagAbsolute, g_.directAddressCell(d.address, e.type, e.span)), true}, 0, e.type};
    }
    case ast::ExprKind::Deref: {
        const auto& d = static_cast<const ast::DerefExpr&>(e);
        const Value r = eval(*d.reference, d.reference->type);
        const Type* rt = stripAlias(d.reference->type);
        const Type* target = rt->kind() == TypeKind::Ref ? static_cast<const RefType*>(rt)->target : e.type;
        if (isPointer(rt)) {
            checkPointer(r.at, target, e.span);
        }
        return Loc{true, r.at, 0, target};
    }
    default: break;
    }
    g_.error(e.span, "this expression cannot be used as a storage location");
    return Loc{false, constant64(0), 0, e.type};
}

Value Lowerer::load(const Loc& l, Calc calc) {
    const Type* t = stripAlias(l.type);
    if (calc == Calc::Str || calc == Calc::WStr || calc == Calc::Agg) {
        return Value{addressOf(l), calc, l.type};
    }
    const std::uint32_t width = storeWidth(t);
    Operand src = l.at;
    if (l.indirect) {
        src = frameSlot(std::max<std::uint32_t>(width, 4), 8);
        const Opcode op = width == 1   ? Opcode::LDI_8
                          : width == 2 ? Opcode::LDI_16
                          : width == 4 ? Opcode::LDI_32
                                       : Opcode::LDI_64;
        debugAt(span_);
        emit(op, {src, l.at, imm(l.extra)});
    }
    if (width == calcWidth(calc) || (calc == Calc::Bool)) {
        return Value{src, calc, l.type};
    }
    if (width < 4 && calcWidth(calc) == 4) {
        const Operand w = frameSlot(4, 4);
        const bool sign = calc == Calc::I32;
        emit(width == 1 ? (sign ? Opcode::SX_8_32 : Opcode::ZX_8_32) : (sign ? Opcode::SX_16_32 : Opcode::ZX_16_32),
             {w, src});
        return Value{w, calc, l.type};
    }
    if (width == 4 && calcWidth(calc) == 4) {
        return Value{src, calc, l.type};
    }
    g_.error(span_, "cannot load a value of type '" + t->name() + "'");
    return Value{src, calc, l.type};
}

// The IDX just emitted (at `lastIdx_`) when it locates exactly `l`'s element pointer and nothing
// came after it: it can be rewritten in place into a fused element access.
std::optional<std::uint32_t> Lowerer::fusableIdx(const Loc& l) const {
    const std::uint32_t at = lastIdx_;
    if (!l.indirect || l.at.global || at == kNoIdx || at + kIdxLength != here() ||
        out_.code[at] != static_cast<std::uint32_t>(Opcode::IDX) || out_.code[at + 1] != l.at.word) {
        return std::nullopt;
    }
    return at;
}

Value Lowerer::loadOnce(const Loc& l, Calc calc, std::optional<Operand> dest) {
    const std::optional<std::uint32_t> at = fusableIdx(l);
    lastIdx_ = kNoIdx;
    if (!at) {
        return load(l, calc);
    }
    // The element pointer of the IDX is used by this load only: rewrite the IDX in place (its
    // operands, global fixups and debug position stay) into the load. The offset of a field
    // inside the element moves into the array operand (the verifier checks that the operand
    // still covers the field of the last element).
    const Type* t = stripAlias(l.type);
    const std::uint32_t elementSize = out_.code[*at + 5];
    if (calc == Calc::Str || calc == Calc::WStr || calc == Calc::Agg) {
        // A whole element (struct, array, string) copied into a temporary or the destination.
        if (l.extra != 0 || t->size != elementSize || t->size == 0) {
            return load(l, calc);
        }
        const Operand d = dest ? *dest : frameSlot(t->size, 8);
        if (d.global) {
            g_.globalFixups.push_back(*at + 1);
        }
        out_.code[*at] = static_cast<std::uint32_t>(Opcode::LDX_N);
        out_.code[*at + 1] = d.word;
        return Value{d, calc, l.type};
    }
    const std::uint32_t width = storeWidth(t);
    Opcode op{};
    bool widened = false;
    if (width < 4 && calcWidth(calc) == 4 && calc != Calc::Bool) {
        const bool sign = calc == Calc::I32;
        op = width == 1 ? (sign ? Opcode::LDX_S8 : Opcode::LDX_U8) : (sign ? Opcode::LDX_S16 : Opcode::LDX_U16);
        widened = true;
    } else if (width == 1 || width == 2 || width == 4 || width == 8) {
        op = width == 1 ? Opcode::LDX_8 : width == 2 ? Opcode::LDX_16 : width == 4 ? Opcode::LDX_32 : Opcode::LDX_64;
    } else {
        return load(l, calc);
    }
    // Straight into the destination when the load fills it in the computation form.
    const bool intoDest = dest && (widened || width == calcWidth(calc));
    const Operand src = intoDest ? *dest : frameSlot(std::max<std::uint32_t>(width, 4), 8);
    if (src.global) {
        g_.globalFixups.push_back(*at + 1);
    }
    out_.code[*at] = static_cast<std::uint32_t>(op);
    out_.code[*at + 1] = src.word;
    out_.code[*at + 2] += l.extra;
    if (widened) {
        return Value{src, calc, l.type};
    }
    return load(Loc{false, src, 0, l.type}, calc);
}

void Lowerer::store(const Loc& dst, const Value& v) {
    const Type* t = stripAlias(dst.type);
    const Calc calc = calcOf(t);
    if (calc == Calc::Str || calc == Calc::WStr) {
        auto cap = static_cast<const StringType*>(t)->length;
        // A shorter source is copied whole with its own capacity: the move never reads past it.
        if (const Type* st = v.type != nullptr ? stripAlias(v.type) : nullptr;
            st != nullptr && st->kind() == t->kind()) {
            cap = std::min(cap, static_cast<const StringType*>(st)->length);
        }
        const Opcode mov = calc == Calc::Str ? Opcode::SMOV : Opcode::WSMOV;
        if (!dst.indirect) {
            emit(mov, {dst.at, v.at, imm(cap)});
            return;
        }
        // Through a reference: moved into a temporary, then stored as the bytes the move wrote
        // (the value, its terminator and zeros up to `cap`). Storing the whole destination
        // would carry the temporary's older bytes, which are stack scratch, into the variable.
        const std::uint32_t unit = calc == Calc::Str ? 1 : 2;
        const Operand tmp = frameSlot(t->size, 8);
        emit(mov, {tmp, v.at, imm(cap)});
        emit(Opcode::STI_N, {pointerOf(dst), tmp, imm((cap + 1) * unit)});
        return;
    }
    if (calc == Calc::Agg) {
        if (!dst.indirect) {
            if (dst.at.word != v.at.word || dst.at.global != v.at.global) {
                emit(Opcode::COPY, {dst.at, v.at, imm(t->size)});
            }
        } else if (!storeElement(dst, v, Opcode::STX_N)) {
            emit(Opcode::STI_N, {pointerOf(dst), v.at, imm(t->size)});
        }
        return;
    }
    const std::uint32_t width = storeWidth(t);
    if (g_.options().overflowTrap && width < 4 && calc != Calc::Bool) {
        const std::uint64_t bits = 8ull * width;
        if (calc == Calc::I32) {
            const auto lo = static_cast<std::uint32_t>(-(std::int64_t{1} << (bits - 1)));
            const auto hi = static_cast<std::uint32_t>((std::int64_t{1} << (bits - 1)) - 1);
            emit(Opcode::CHKR_I32, {v.at, imm(lo), imm(hi)});
        } else {
            emit(Opcode::CHKR_U32, {v.at, imm(0), imm(static_cast<std::uint32_t>((1ull << bits) - 1))});
        }
    }
    if (t->kind() == TypeKind::Subrange) {
        const auto* r = static_cast<const SubrangeType*>(t);
        if (width <= 4) {
            emit(calc == Calc::I32 ? Opcode::CHKR_I32 : Opcode::CHKR_U32,
                 {v.at, imm(static_cast<std::uint32_t>(r->lower)), imm(static_cast<std::uint32_t>(r->upper))});
        }
    }
    if (!dst.indirect) {
        if (dst.at.word == v.at.word && dst.at.global == v.at.global) {
            return;
        }
        emit(movOf(width), {dst.at, v.at});
        return;
    }
    const Opcode fused = width == 1   ? Opcode::STX_8
                         : width == 2 ? Opcode::STX_16
                         : width == 4 ? Opcode::STX_32
                                      : Opcode::STX_64;
    if (storeElement(dst, v, fused)) {
        return;
    }
    const Opcode op = width == 1   ? Opcode::STI_8
                      : width == 2 ? Opcode::STI_16
                      : width == 4 ? Opcode::STI_32
                                   : Opcode::STI_64;
    debugAt(span_);
    emit(op, {dst.at, imm(dst.extra), v.at});
}

bool Lowerer::storeElement(const Loc& dst, const Value& v, Opcode op) {
    const std::optional<std::uint32_t> at = fusableIdx(dst);
    lastIdx_ = kNoIdx;
    if (!at) {
        return false;
    }
    const Type* t = stripAlias(dst.type);
    if (op == Opcode::STX_N && (dst.extra != 0 || t->size != out_.code[*at + 5] || t->size == 0)) {
        return false;
    }
    // IDX out, array, index, lower, c1, c2  ->  STX value, array + field, index, lower, c1, c2.
    if (v.at.global) {
        g_.globalFixups.push_back(*at + 1);
    }
    out_.code[*at] = static_cast<std::uint32_t>(op);
    out_.code[*at + 1] = v.at.word;
    out_.code[*at + 2] += dst.extra;
    return true;
}

namespace {

// An array element by subscripts (through parentheses): `a[i]`.
bool isElement(const ast::Expr& e) {
    const ast::Expr* x = &e;
    while (x->kind == ast::ExprKind::Paren) {
        x = static_cast<const ast::ParenExpr*>(x)->inner.get();
    }
    return x->kind == ast::ExprKind::Index;
}

} // namespace

void Lowerer::assign(const Loc& dst, const ast::Expr& value) {
    const Type* t = stripAlias(dst.type);
    const Calc calc = calcOf(t);
    // An element located by the IDX just emitted: when the value takes no code (a constant, a
    // variable), the IDX is still the last instruction and becomes the store (STX_*).
    const std::uint32_t dstIdx = lastIdx_;
    const std::uint32_t mark = here();
    // Compute straight into a directly addressed destination of the computation width.
    std::optional<Operand> dest;
    if (!dst.indirect && calcWidth(calc) != 0 && storeWidth(t) == calcWidth(calc) && t->kind() != TypeKind::Subrange) {
        dest = dst.at;
    }
    Value v;
    if (calc == Calc::Agg && !dst.indirect && isElement(value) && value.type != nullptr &&
        stripAlias(value.type)->size == t->size) {
        // A whole struct or array element copied straight into the variable (LDX_N).
        v = loadOnce(locate(value), calc, dst.at);
    } else {
        v = eval(value, dst.type, dest);
    }
    if (here() == mark) {
        lastIdx_ = dstIdx;
    }
    store(dst, v);
}

} // namespace takt::compiler::codegen
