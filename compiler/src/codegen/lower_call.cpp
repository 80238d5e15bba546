// Calls: FUNCTIONs (arguments written in place into the callee's frame; the callee
// re-initialises its locals), FB instances (inputs kept when omitted), METHODs, standard FBs
// (natives) and the standard functions (opcodes where one exists, natives for strings).
#include "codegen/lower.h"
#include "sema/stdlib.h"
#include "takt/compiler/names.h"

#include <algorithm>

namespace takt::compiler::codegen {

namespace {

// THIS, SUPER, THIS^, SUPER^ (also parenthesised): the instance the method runs on.
bool isSelf(const ast::Expr& e) {
    const ast::Expr* x = &e;
    while (x->kind == ast::ExprKind::Paren || x->kind == ast::ExprKind::Deref) {
        x = x->kind == ast::ExprKind::Paren ? static_cast<const ast::ParenExpr*>(x)->inner.get()
                                            : static_cast<const ast::DerefExpr*>(x)->reference.get();
    }
    return x->kind == ast::ExprKind::Super || x->kind == ast::ExprKind::This;
}

bool isSuper(const ast::Expr& e) {
    const ast::Expr* x = &e;
    while (x->kind == ast::ExprKind::Paren || x->kind == ast::ExprKind::Deref) {
        x = x->kind == ast::ExprKind::Paren ? static_cast<const ast::ParenExpr*>(x)->inner.get()
                                            : static_cast<const ast::DerefExpr*>(x)->reference.get();
    }
    return x->kind == ast::ExprKind::Super;
}

// Whether `e` designates an instance of exactly its declared type: a variable, member or array
// element declared with an FB type. A VAR_IN_OUT, a REFERENCE TO or a dereferenced pointer may
// designate an instance of a derived type.
bool exactInstance(const ast::Expr& e) {
    switch (e.kind) {
    case ast::ExprKind::Paren: return exactInstance(*static_cast<const ast::ParenExpr&>(e).inner);
    case ast::ExprKind::Index: return true; // elements have the array's element type
    case ast::ExprKind::Name:
    case ast::ExprKind::Member: {
        const Symbol* s = e.kind == ast::ExprKind::Name ? static_cast<const ast::NameExpr&>(e).symbol
                                                        : static_cast<const ast::MemberExpr&>(e).symbol;
        return s != nullptr && s->kind == SymbolKind::Variable && s->section != ast::VarSection::InOut &&
               !isReference(s->type);
    }
    default: return false;
    }
}

} // namespace

using bc::Opcode;

// The parameter each argument binds to (formal by name, positional in order); -1 when none.
std::vector<int> bindArguments(const ast::CallExpr& e, const std::vector<const Symbol*>& params) {
    std::vector<int> binding(e.args.size(), -1);
    int positional = 0;
    for (std::size_t i = 0; i < e.args.size(); ++i) {
        const ast::Argument& a = e.args[i];
        if (a.name) {
            for (std::size_t p = 0; p < params.size(); ++p) {
                if (sameName(params[p]->name, a.name->name)) {
                    binding[i] = static_cast<int>(p);
                }
            }
        } else if (positional < static_cast<int>(params.size())) {
            binding[i] = positional++;
        }
    }
    return binding;
}

const Generator::FrameLayout& Generator::frameLayout(const Symbol* pou) {
    if (auto it = frames.find(pou); it != frames.end()) {
        return it->second;
    }
    FrameLayout f;
    const bool callable = pou->pouKind == ast::PouKind::Function || pou->pouKind == ast::PouKind::Method;
    std::uint32_t offset = 0;
    auto place = [&](const Symbol* s, std::uint32_t size, std::uint32_t align) {
        offset = alignUp(offset, align);
        f.offsets.emplace(s, offset);
        offset += size;
    };
    const Type* result = stripAlias(pou->type);
    if (callable && result != nullptr && result->kind() != TypeKind::Void && result->size > 0) {
        place(pou, result->size, result->align);
    }
    std::vector<const Symbol*> vars;
    if (pou->scope != nullptr) {
        for (const Symbol* s : pou->scope->symbols()) {
            if (s->kind == SymbolKind::Variable && s->type != nullptr) {
                vars.push_back(s);
            }
        }
    }
    auto inSection = [&](std::initializer_list<ast::VarSection> sections) {
        for (const Symbol* s : vars) {
            for (ast::VarSection sec : sections) {
                if (s->section == sec) {
                    place(s, s->section == ast::VarSection::InOut ? 8 : s->type->size,
                          s->section == ast::VarSection::InOut ? 8 : s->type->align);
                }
            }
        }
    };
    if (pou->pouKind == ast::PouKind::Method) {
        inSection({ast::VarSection::Output});
        f.reinitEnd = offset;
        inSection({ast::VarSection::Input, ast::VarSection::InOut});
        f.localsBegin = offset;
        inSection({ast::VarSection::Var, ast::VarSection::Temp});
        f.localsEnd = offset;
    } else if (callable) {
        inSection({ast::VarSection::Output, ast::VarSection::Var, ast::VarSection::Temp});
        f.reinitEnd = offset;
        inSection({ast::VarSection::Input, ast::VarSection::InOut});
    } else {
        inSection({ast::VarSection::Temp});
        f.reinitEnd = offset;
    }
    f.size = alignUp(offset, 8);
    // The initial frame, kept in the constants: the callee copies [0, reinitEnd) on entry and
    // a caller copies the default of an input it omits.
    std::vector<std::uint8_t> bytes(f.size, 0);
    std::vector<std::uint8_t>* saved = image;
    std::vector<DeferredInit> savedInits;
    savedInits.swap(deferredInits);
    image = &bytes;
    for (const auto& [s, at] : f.offsets) {
        if (s != pou && s->section != ast::VarSection::InOut) {
            writeInitial(s->type, s->init, at, InitContext{s->declScope, nullptr, 0});
        }
    }
    image = saved;
    f.inits.swap(deferredInits);
    deferredInits.swap(savedInits);
    if (f.size > 0) {
        f.templ = poolAlloc(f.size, 8);
        std::copy(bytes.begin(), bytes.end(), pool.begin() + (f.templ - 8));
    }
    return frames.emplace(pou, std::move(f)).first->second;
}

std::vector<bc::FrameVar> Generator::frameVars(const Symbol* pou) {
    std::vector<bc::FrameVar> out;
    for (const auto& [s, at] : frameLayout(pou).offsets) {
        bc::FrameVar v;
        // A FUNCTION's or METHOD's result is assigned by the POU's (unqualified) name.
        v.name = s == pou ? s->name.substr(s->name.rfind('.') + 1) : s->name;
        v.type = s == pou ? typeIndex(s->type) : storedTypeIndex(s);
        v.offset = at;
        v.constant = s != pou && s->constant;
        v.kind = s == pou                                ? bc::VarKind::Output
                 : s->section == ast::VarSection::Input  ? bc::VarKind::Input
                 : s->section == ast::VarSection::Output ? bc::VarKind::Output
                 : s->section == ast::VarSection::InOut  ? bc::VarKind::InOut
                                                         : bc::VarKind::Temp;
        out.push_back(std::move(v));
    }
    std::sort(out.begin(), out.end(), [](const bc::FrameVar& a, const bc::FrameVar& b) { return a.offset < b.offset; });
    return out;
}

Value Lowerer::call(const ast::CallExpr& e, const Type* want, std::optional<Operand> dest) {
    const Symbol* target = e.target;
    if (target != nullptr && target->kind == SymbolKind::StandardFunction) {
        return standardCall(e, want, dest);
    }
    span_ = e.span;
    if (auto v = builtinCall(e, want, dest)) {
        return *v;
    }
    // FB instance call: the callee names an instance.
    const Type* calleeType = e.callee->type != nullptr ? stripAlias(e.callee->type) : nullptr;
    const Symbol* fb = calleeType != nullptr ? instancePou(calleeType) : nullptr;
    if (target == nullptr && fb == nullptr) {
        g_.error(e.span, "call target could not be compiled");
        return Value{constant64(0), calcOf(want), want};
    }
    if (fb != nullptr &&
        (target == nullptr || target->pouKind == ast::PouKind::FunctionBlock ||
         target->pouKind == ast::PouKind::Program || target->kind != SymbolKind::Pou || target == fb)) {
        const Loc inst = locate(*e.callee);
        // The instance pointer of `fbs[i](…)` serves every input store and the call itself: the
        // IDX that computes it must stay, not be fused into the first member access.
        lastIdx_ = kNoIdx;
        const auto& slots = g_.members(fb);
        auto member = [&](const Symbol* m) {
            Loc l = inst;
            l.type = m->type;
            const MemberSlot& slot = slots.at(m);
            if (l.indirect) {
                l.extra += slot.offset;
            } else {
                l.at.word += slot.offset;
            }
            return std::pair<Loc, bool>{l, slot.byReference};
        };
        const std::vector<int> binding = bindArguments(e, fb->params);
        // Constant inputs: a run of them, consecutive among the arguments, that fills adjacent
        // members is written by one COPY from the constants (`KP := 1.2, KI := 0.5, …`).
        struct ConstInput {
            std::uint32_t word;
            std::uint32_t width;
            std::uint64_t bits;
        };
        std::vector<std::optional<ConstInput>> constInputs(e.args.size());
        for (std::size_t i = 0; i < e.args.size() && !inst.indirect; ++i) {
            const ast::Argument& a = e.args[i];
            if (binding[i] < 0 || a.output || a.value == nullptr || !isConstantCandidate(*a.value)) {
                continue;
            }
            const Symbol* p = fb->params[static_cast<std::size_t>(binding[i])];
            const Type* pt = stripAlias(p->type);
            const Type* vt = stripAlias(a.value->type);
            const Calc pc = calcOf(pt);
            const bool plain = pc == Calc::I32 || pc == Calc::U32 || pc == Calc::I64 || pc == Calc::U64 ||
                               pc == Calc::F32 || pc == Calc::F64;
            const bool sameType =
                vt == nullptr || vt == pt || vt->kind() == TypeKind::IntLiteral || vt->kind() == TypeKind::RealLiteral;
            if (p->section != ast::VarSection::Input || !plain || !sameType || pt->kind() == TypeKind::Subrange ||
                pt->kind() == TypeKind::Enum || storeWidth(pt) != calcWidth(pc)) {
                continue;
            }
            auto [l, byRef] = member(p);
            if (byRef || l.indirect) {
                continue;
            }
            if (auto k = g_.constant(*a.value, scope_)) {
                if (auto bits = constantBits(*k, pc)) {
                    constInputs[i] = ConstInput{l.at.word, calcWidth(pc), *bits};
                }
            }
        }
        for (std::size_t i = 0; i < e.args.size(); ++i) {
            const ast::Argument& a = e.args[i];
            if (binding[i] < 0 || a.output || a.value == nullptr) {
                continue;
            }
            if (constInputs[i]) {
                std::size_t j = i + 1;
                std::uint32_t size = constInputs[i]->width;
                while (j < e.args.size() && constInputs[j] && constInputs[j]->word == constInputs[i]->word + size) {
                    size += constInputs[j]->width;
                    ++j;
                }
                if (j - i >= 2) {
                    std::string bytes(size, '\0');
                    for (std::size_t k = i; k < j; ++k) {
                        const std::uint32_t off = constInputs[k]->word - constInputs[i]->word;
                        for (std::uint32_t b = 0; b < constInputs[k]->width; ++b) {
                            bytes[off + b] = static_cast<char>(constInputs[k]->bits >> (8 * b));
                        }
                    }
                    // One block per distinct run: a hundred calls with the same constants share it.
                    auto it = g_.poolStrings.find("B" + bytes);
                    if (it == g_.poolStrings.end()) {
                        const std::uint32_t pos = g_.poolAlloc(size, 8);
                        std::copy(bytes.begin(), bytes.end(), g_.pool.begin() + (pos - 8));
                        it = g_.poolStrings.emplace("B" + bytes, pos).first;
                    }
                    const std::uint32_t at = it->second;
                    emit(Opcode::COPY, {Operand{constInputs[i]->word, inst.at.global},
                                        Operand{bc::address(bc::kTagAbsolute, at), false}, imm(size)});
                    i = j - 1;
                    continue;
                }
            }
            const Symbol* p = fb->params[static_cast<std::size_t>(binding[i])];
            const std::uint32_t mark = frameTop_;
            const auto [l, byRef] = member(p);
            if (byRef || p->section == ast::VarSection::Input) {
                storeInput(l, byRef, *a.value);
            }
            frameTop_ = std::max(mark, frameTop_);
        }
        setOwnEnable(e, [&](const Symbol* m) { return member(m).first; });
        const std::uint32_t c = alignUp(frameTop_, 8);
        debugAt(e.span);
        const std::uint32_t p = g_.pouIndex(fb);
        if (inst.indirect) {
            emit(Opcode::CALL_FB_IND, {imm(p), pointerOf(inst), imm(alignUp(frameTop_, 8))});
        } else {
            emit(Opcode::CALL_FB, {imm(p), inst.at, imm(c)});
        }
        for (std::size_t i = 0; i < e.args.size(); ++i) {
            const ast::Argument& a = e.args[i];
            if (binding[i] < 0 || !a.output || a.value == nullptr) {
                continue;
            }
            storeOutput(a, member(fb->params[static_cast<std::size_t>(binding[i])]).first);
        }
        return Value{constant64(0), Calc::Bool, want};
    }
    // FUNCTION or METHOD: arguments go straight into the callee's frame.
    const bool method = target->pouKind == ast::PouKind::Method;
    std::optional<Loc> instance;
    // The declared type of an instance whose actual type may extend it (THIS, a VAR_IN_OUT, a
    // dereferenced REFERENCE/POINTER): the call dispatches when a derived FB overrides the method.
    const Symbol* openType = nullptr;
    const Symbol* self = pou_->pouKind == ast::PouKind::Method ? pou_->owner : pou_;
    if (method) {
        if (e.callee->kind == ast::ExprKind::Member) {
            const auto& m = static_cast<const ast::MemberExpr&>(*e.callee);
            if (isSelf(*m.object)) {
                instance = Loc{false, {bc::address(bc::kTagThis, 0), false}, 0, nullptr};
                openType = isSuper(*m.object) ? nullptr : self; // SUPER^.M() runs the base's body
            } else {
                const Type* ot = stripAlias(m.object->type);
                if (ot != nullptr && ot->kind() == TypeKind::Interface) {
                    return interfaceCall(e, *m.object, want, dest);
                }
                instance = locate(*m.object);
                lastIdx_ = kNoIdx; // the instance pointer is passed to the call: keep its IDX
                openType = instance->indirect && !exactInstance(*m.object) ? instancePou(ot) : nullptr;
            }
        } else {
            instance = Loc{false, {bc::address(bc::kTagThis, 0), false}, 0, nullptr};
            openType = self;
        }
    }
    const std::optional<std::uint32_t> slot = method ? g_.virtualSlot(target, openType) : std::nullopt;
    const Generator::FrameLayout& layout = g_.frameLayout(target);
    const std::vector<int> binding = bindArguments(e, target->params);
    const std::vector<Value> values = frameArguments(e, target, binding);
    Operand instPtr{};
    if (instance && instance->indirect) {
        instPtr = pointerOf(*instance);
    }
    const std::uint32_t c = bindFrameArguments(layout, e, target, binding, values);
    setOwnEnable(e, [&](const Symbol* m) {
        return Loc{false, Operand{bc::address(bc::kTagFrame, c + layout.offsets.at(m)), false}, 0, m->type};
    });
    debugAt(e.span);
    const std::uint32_t p = g_.pouIndex(target);
    if (!method) {
        emit(Opcode::CALL_FN, {imm(p), imm(c)});
    } else if (slot && instance->indirect) {
        emit(Opcode::CALL_IFACE, {instPtr, imm(*slot), imm(c)});
    } else if (slot) {
        emit(Opcode::CALL_VIRT, {instance->at, imm(*slot), imm(c)});
    } else if (instance->indirect) {
        emit(Opcode::CALL_FB_IND, {imm(p), instPtr, imm(c)});
    } else {
        emit(Opcode::CALL_FB, {imm(p), instance->at, imm(c)});
    }
    return frameCallResult(layout, e, target, binding, c, want, dest);
}

void Lowerer::storeInput(Loc member, bool byReference, const ast::Expr& value) {
    if (!byReference && !isReference(member.type)) { // a REFERENCE TO input is bound like a VAR_IN_OUT
        assign(member, value);
        return;
    }
    const Operand ptr = pointerOf(locate(value));
    member.type = g_.model().types.get(TypeKind::UDInt);
    store(member, Value{ptr, Calc::U32, member.type});
}

void Lowerer::storeOutput(const ast::Argument& a, const Loc& src) {
    Value v = load(src, calcOf(src.type));
    if (a.negated) {
        const Operand d = frameSlot(4, 4);
        emit(Opcode::NOT_B, {d, v.at});
        v.at = d;
    }
    const Loc dst = locate(*a.value);
    store(dst, convert(v, dst.type));
}

std::vector<Value> Lowerer::frameArguments(const ast::CallExpr& e, const Symbol* target,
                                           const std::vector<int>& binding) {
    std::vector<Value> values(e.args.size());
    for (std::size_t i = 0; i < e.args.size(); ++i) {
        const ast::Argument& a = e.args[i];
        if (binding[i] < 0 || a.output || a.value == nullptr) {
            continue;
        }
        const Symbol* p = target->params[static_cast<std::size_t>(binding[i])];
        if (p->section == ast::VarSection::InOut) {
            values[i] = Value{pointerOf(locate(*a.value)), Calc::U32, nullptr};
        } else if (isReference(p->type)) { // a REFERENCE TO input is bound to the variable passed
            values[i] = Value{pointerOf(locate(*a.value)), Calc::U32, p->type};
        } else {
            values[i] = eval(*a.value, p->type);
        }
    }
    return values;
}

std::uint32_t Lowerer::bindFrameArguments(const Generator::FrameLayout& layout, const ast::CallExpr& e,
                                          const Symbol* target, const std::vector<int>& binding,
                                          const std::vector<Value>& values) {
    const std::uint32_t c = alignUp(frameTop_, 8);
    auto slot = [&](const Symbol* s) { return Operand{bc::address(bc::kTagFrame, c + layout.offsets.at(s)), false}; };
    std::vector<bool> given(target->params.size(), false);
    for (std::size_t i = 0; i < e.args.size(); ++i) {
        if (binding[i] < 0 || e.args[i].output || e.args[i].value == nullptr) {
            continue;
        }
        const Symbol* p = target->params[static_cast<std::size_t>(binding[i])];
        given[static_cast<std::size_t>(binding[i])] = true;
        if (p->section == ast::VarSection::InOut) {
            emit(Opcode::MOV_32, {slot(p), values[i].at});
        } else {
            store(Loc{false, slot(p), 0, p->type}, values[i]);
        }
    }
    for (std::size_t k = 0; k < target->params.size(); ++k) {
        const Symbol* p = target->params[k];
        if (!given[k] && p->section == ast::VarSection::Input) {
            emit(Opcode::COPY,
                 {slot(p), Operand{bc::address(bc::kTagAbsolute, layout.templ + layout.offsets.at(p)), false},
                  imm(p->type->size)});
        }
    }
    frameTop_ = c + layout.size;
    frameMax_ = std::max(frameMax_, frameTop_);
    return c;
}

Value Lowerer::frameCallResult(const Generator::FrameLayout& layout, const ast::CallExpr& e, const Symbol* target,
                               const std::vector<int>& binding, std::uint32_t frame, const Type* want,
                               std::optional<Operand> dest) {
    auto slot = [&](const Symbol* s) {
        return Operand{bc::address(bc::kTagFrame, frame + layout.offsets.at(s)), false};
    };
    for (std::size_t i = 0; i < e.args.size(); ++i) {
        const ast::Argument& a = e.args[i];
        if (binding[i] < 0 || !a.output || a.value == nullptr) {
            continue;
        }
        const Symbol* p = target->params[static_cast<std::size_t>(binding[i])];
        const Loc dst = locate(*a.value);
        store(dst, convert(load(Loc{false, slot(p), 0, p->type}, calcOf(p->type)), dst.type));
    }
    const Type* result = stripAlias(target->type);
    if (result == nullptr || result->kind() == TypeKind::Void || layout.offsets.count(target) == 0) {
        return Value{constant64(0), Calc::Bool, want};
    }
    const Value r = load(Loc{false, slot(target), 0, target->type}, calcOf(target->type));
    return want != nullptr ? convert(r, want, dest) : r;
}

Value Lowerer::standardCall(const ast::CallExpr& e, const Type* want, std::optional<Operand> dest) {
    using sema::StdOp;
    const auto& sigs = sema::standardSignatures();
    if (e.stdOverload < 0 || static_cast<std::size_t>(e.stdOverload) >= sigs.size()) {
        g_.error(e.span, "standard function call could not be compiled");
        return Value{constant64(0), calcOf(want), want};
    }
    const sema::StdSignature& sig = sigs[static_cast<std::size_t>(e.stdOverload)];
    span_ = e.span;
    const std::vector<const ast::Expr*> args = standardInputs(e, sig);
    const Type* rt = e.type;
    const Type* t = e.genericType != nullptr ? e.genericType : rt;
    auto finish = [&](Value v) { return want != nullptr ? convert(v, want, dest) : v; };
    // The result of a one-instruction function goes straight into the destination when it is
    // computed in the wanted form (the instruction reads its argument before it writes).
    auto resultSlot = [&](Calc c) { return dest && want != nullptr && calcOf(want) == c ? *dest : frameSlot(8, 8); };
    auto unary = [&](Opcode o32, Opcode o64, const Type* type) {
        const Value a = eval(*args[0], type);
        const Calc c = calcOf(type);
        const Operand d = resultSlot(c);
        emit(calcWidth(c) == 8 ? o64 : o32, {d, a.at});
        return finish(Value{d, c, type});
    };
    auto math = [&](bc::MathFn fn) {
        const Value a = eval(*args[0], t);
        const Calc c = calcOf(t);
        const Operand d = resultSlot(c);
        emit(c == Calc::F32 ? Opcode::MATH_F32 : Opcode::MATH_F64, {d, a.at, imm(static_cast<std::uint32_t>(fn))});
        return finish(Value{d, c, t});
    };
    // Extensible MIN/MAX and friends fold left to right.
    auto fold = [&](auto pick) {
        Value acc = eval(*args[0], t);
        const Calc c = calcOf(t);
        for (std::size_t i = 1; i < args.size(); ++i) {
            const Value b = eval(*args[i], t);
            const Operand d = frameSlot(8, 8);
            emit(pick(c), {d, acc.at, b.at});
            acc = Value{d, c, t};
        }
        return finish(acc);
    };
    auto minOp = [](Calc c) {
        switch (c) {
        case Calc::I32: return Opcode::MIN_I32;
        case Calc::U32: return Opcode::MIN_U32;
        case Calc::I64: return Opcode::MIN_I64;
        case Calc::U64: return Opcode::MIN_U64;
        case Calc::F32: return Opcode::MIN_F32;
        default: return Opcode::MIN_F64;
        }
    };
    auto maxOp = [](Calc c) {
        switch (c) {
        case Calc::I32: return Opcode::MAX_I32;
        case Calc::U32: return Opcode::MAX_U32;
        case Calc::I64: return Opcode::MAX_I64;
        case Calc::U64: return Opcode::MAX_U64;
        case Calc::F32: return Opcode::MAX_F32;
        default: return Opcode::MAX_F64;
        }
    };
    switch (sig.op) {
    case StdOp::AssertTrue:
    case StdOp::AssertFalse:
    case StdOp::AssertEqual:
    case StdOp::AssertNotEqual:
    case StdOp::AssertGreater:
    case StdOp::AssertLess:
    case StdOp::AssertGreaterOrEqual:
    case StdOp::AssertLessOrEqual:
    case StdOp::AssertNear:
    case StdOp::TestFinished: return assertion(e, sig, args, t);
    case StdOp::Convert: {
        const Type* from = args[0]->type;
        if (calcOf(from) == Calc::Str || calcOf(rt) == Calc::Str || calcOf(from) == Calc::WStr ||
            calcOf(rt) == Calc::WStr || (isDateLike(from) && isDateLike(rt))) {
            break; // nativeStandardCall: text conversions, DT_TO_DATE / DT_TO_TOD
        }
        if (auto counted = countConversion(*args[0], rt)) {
            return finish(*counted);
        }
        Value v = eval(*args[0], stripAlias(from)->kind() == TypeKind::IntLiteral ? rt : from);
        // A conversion to a full-width type writes straight into the destination.
        const bool direct = dest && stripAlias(rt)->size >= 4 && calcOf(rt) == calcOf(want);
        v = narrow(convert(v, rt, direct ? dest : std::nullopt), rt);
        return finish(v);
    }
    case StdOp::Trunc: {
        const Value a = eval(*args[0], args[0]->type);
        return finish(realToInt(a, rt, true, frameSlot(8, 8)));
    }
    case StdOp::Abs: {
        const Calc c = calcOf(t);
        if (c == Calc::U32 || c == Calc::U64) {
            return finish(eval(*args[0], t));
        }
        return c == Calc::F32 || c == Calc::F64 ? unary(Opcode::ABS_F32, Opcode::ABS_F64, t)
                                                : unary(Opcode::ABS_I32, Opcode::ABS_I64, t);
    }
    case StdOp::Sqrt: return unary(Opcode::SQRT_F32, Opcode::SQRT_F64, t);
    case StdOp::Ln: return math(bc::MathFn::Ln);
    case StdOp::Log: return math(bc::MathFn::Log);
    case StdOp::Exp: return math(bc::MathFn::Exp);
    case StdOp::Sin: return math(bc::MathFn::Sin);
    case StdOp::Cos: return math(bc::MathFn::Cos);
    case StdOp::Tan: return math(bc::MathFn::Tan);
    case StdOp::Asin: return math(bc::MathFn::Asin);
    case StdOp::Acos: return math(bc::MathFn::Acos);
    case StdOp::Atan: return math(bc::MathFn::Atan);
    case StdOp::Min: return fold(minOp);
    case StdOp::Max: return fold(maxOp);
    case StdOp::Limit: {
        // LIMIT(MN, IN, MX) = MIN(MAX(IN, MN), MX)
        const Calc c = calcOf(t);
        const Value mn = eval(*args[0], t);
        const Value in = eval(*args[1], t);
        const Value mx = eval(*args[2], t);
        const Operand d = frameSlot(8, 8);
        emit(maxOp(c), {d, in.at, mn.at});
        emit(minOp(c), {d, d, mx.at});
        return finish(Value{d, c, t});
    }
    case StdOp::Move: return eval(*args[0], want != nullptr ? want : t, dest);
    case StdOp::Sel: {
        const Calc c = calcOf(t);
        const Operand d = frameSlot(std::max<std::uint32_t>(stripAlias(t)->size, 8), 8);
        const Loc out{false, d, 0, t};
        std::vector<std::uint32_t> toOne;
        std::vector<std::uint32_t> end;
        condJump(*args[0], true, toOne);
        assign(out, *args[1]);
        emitJump(Opcode::JMP, {}, end);
        patch(toOne, here());
        assign(out, *args[2]);
        patch(end, here());
        return finish(load(out, c));
    }
    case StdOp::Add:
    case StdOp::Sub:
    case StdOp::Mul:
    case StdOp::Div:
    case StdOp::Mod:
    case StdOp::And:
    case StdOp::Or:
    case StdOp::Xor: {
        if (isTimeLike(t) || isDateLike(t) || args.size() < 2) {
            break;
        }
        static const ast::BinaryOp kOp[] = {ast::BinaryOp::Add, ast::BinaryOp::Sub, ast::BinaryOp::Mul,
                                            ast::BinaryOp::Div, ast::BinaryOp::Mod};
        ast::BinaryOp op = ast::BinaryOp::Add;
        switch (sig.op) {
        case StdOp::And: op = ast::BinaryOp::And; break;
        case StdOp::Or: op = ast::BinaryOp::Or; break;
        case StdOp::Xor: op = ast::BinaryOp::Xor; break;
        default: op = kOp[static_cast<int>(sig.op) - static_cast<int>(StdOp::Add)]; break;
        }
        const Opcode o = arithOpcode(op, calcOf(t), g_.options().overflowTrap);
        if (const std::uint32_t nw = stripAlias(t)->size;
            op == ast::BinaryOp::Div && calcOf(t) == Calc::I32 && nw < 4 && args.size() == 2) {
            // As for the `/` operator: SINT/INT INT_MIN / -1 faults (LANGUAGE.md), checked on the quotient.
            const std::int64_t lim = std::int64_t{1} << (8 * nw - 1);
            const Value a = eval(*args[0], t);
            const Value b = eval(*args[1], t);
            const Operand d = frameSlot(8, 8);
            emit(o, {d, a.at, b.at});
            emit(Opcode::CHKR_I32,
                 {d, imm(static_cast<std::uint32_t>(-lim)), imm(static_cast<std::uint32_t>(lim - 1))});
            return finish(Value{d, Calc::I32, t});
        }
        return fold([o](Calc) { return o; });
    }
    case StdOp::Not: {
        const Calc c = calcOf(t);
        const Value a = eval(*args[0], t);
        const Operand d = frameSlot(8, 8);
        if (c == Calc::Bool) {
            emit(Opcode::NOT_B, {d, a.at});
        } else {
            emit(calcWidth(c) == 8 ? Opcode::NOT_64 : Opcode::NOT_32, {d, a.at});
            if (stripAlias(t)->size < 4) {
                emit(Opcode::AND_32, {d, d, constant64((1ull << (8 * stripAlias(t)->size)) - 1)});
            }
        }
        return finish(Value{d, c, t});
    }
    case StdOp::Shl:
    case StdOp::Shr:
    case StdOp::Rol:
    case StdOp::Ror: {
        const Calc c = calcOf(t);
        const std::uint32_t bits = stripAlias(t)->size * 8;
        const Value a = eval(*args[0], t);
        const Value n = eval(*args[1], g_.model().types.get(TypeKind::UDInt));
        const Operand d = frameSlot(8, 8);
        const bool wide = calcWidth(c) == 8;
        Opcode op = Opcode::NOP;
        if (sig.op == StdOp::Shl || sig.op == StdOp::Shr) {
            op = sig.op == StdOp::Shl ? (wide ? Opcode::SHL_64 : Opcode::SHL_32)
                                      : (wide ? Opcode::SHR_64 : Opcode::SHR_32);
        } else {
            const bool left = sig.op == StdOp::Rol;
            op = bits == 8    ? (left ? Opcode::ROL_8 : Opcode::ROR_8)
                 : bits == 16 ? (left ? Opcode::ROL_16 : Opcode::ROR_16)
                 : bits == 32 ? (left ? Opcode::ROL_32 : Opcode::ROR_32)
                              : (left ? Opcode::ROL_64 : Opcode::ROR_64);
        }
        const bool isSigned = c == Calc::I32 || c == Calc::I64; // W1012: SHL(anInt, n), CODESYS
        if (isSigned && sig.op == StdOp::Shr) {
            // Arithmetic: x XOR s shifted logically, XOR s again, with s all ones for x < 0.
            const Operand s = frameSlot(8, 8);
            emit(wide ? Opcode::LT_I64 : Opcode::LT_I32, {s, a.at, constant64(0)});
            emit(Opcode::ZX_8_32, {s, s});
            if (wide) {
                emit(Opcode::ZX_32_64, {s, s});
            }
            emit(wide ? Opcode::NEG_I64 : Opcode::NEG_I32, {s, s});
            emit(wide ? Opcode::XOR_64 : Opcode::XOR_32, {d, a.at, s});
            emit(op, {d, d, n.at});
            emit(wide ? Opcode::XOR_64 : Opcode::XOR_32, {d, d, s});
            return finish(Value{d, c, t});
        }
        emit(op, {d, a.at, n.at});
        if (sig.op == StdOp::Shl && bits < 32) { // keep the narrow value's bits only
            emit(Opcode::AND_32, {d, d, constant64((1ull << bits) - 1)});
        }
        if (isSigned && bits < 32) { // a narrow signed result is kept sign-extended
            emit(bits == 8 ? Opcode::SX_8_32 : Opcode::SX_16_32, {d, d});
        }
        return finish(Value{d, c, t});
    }
    case StdOp::Gt:
    case StdOp::Ge:
    case StdOp::Eq:
    case StdOp::Le:
    case StdOp::Lt:
    case StdOp::Ne: {
        // Extensible comparisons chain: GT(a, b, c) = a > b AND b > c; on numbers, STRING,
        // WSTRING and BOOL alike (compareInto).
        static const ast::BinaryOp kRel[] = {ast::BinaryOp::Gt, ast::BinaryOp::Ge, ast::BinaryOp::Eq,
                                             ast::BinaryOp::Le, ast::BinaryOp::Lt, ast::BinaryOp::Ne};
        const ast::BinaryOp rel = kRel[static_cast<int>(sig.op) - static_cast<int>(StdOp::Gt)];
        const Calc c = calcOf(t);
        if (c == Calc::Agg) {
            break;
        }
        const Operand d = frameSlot(4, 4);
        Value prev = eval(*args[0], t);
        for (std::size_t i = 1; i < args.size(); ++i) {
            const Value next = eval(*args[i], t);
            const Operand r = i == 1 ? d : frameSlot(4, 4);
            compareInto(rel, prev, next, c, r);
            if (i > 1) {
                emit(Opcode::AND_B, {d, d, r});
            }
            prev = next;
        }
        return finish(Value{d, Calc::Bool, g_.model().types.get(TypeKind::Bool)});
    }
    case StdOp::Mux: {
        // MUX(K, IN0, IN1, …): a compare chain on K (in its own width, so a 64-bit K never
        // selects by its low bits); K out of range traps MuxSelector at the call.
        const Calc c = calcOf(t);
        const Operand d = frameSlot(std::max<std::uint32_t>(stripAlias(t)->size, 8), 8);
        const Loc out{false, d, 0, t};
        const bool wideK = calcWidth(calcOf(args[0]->type)) == 8;
        const Value k = eval(*args[0], g_.model().types.get(wideK ? TypeKind::LInt : TypeKind::DInt));
        std::vector<std::uint32_t> end;
        for (std::size_t i = 1; i < args.size(); ++i) {
            std::vector<std::uint32_t> next;
            if (wideK) {
                emitJump(Opcode::JNE_I64, {k.at, constant64(i - 1)}, next);
            } else {
                emitJump(Opcode::JNE_I32_IMM, {k.at, imm(static_cast<std::uint32_t>(i - 1))}, next);
            }
            assign(out, *args[i]);
            emitJump(Opcode::JMP, {}, end);
            patch(next, here());
        }
        debugAt(e.span);
        emit(Opcode::TRAP, {imm(static_cast<std::uint32_t>(bc::Trap::MuxSelector))});
        patch(end, here());
        return finish(load(out, c));
    }
    case StdOp::AddTime:
    case StdOp::SubTime:
    case StdOp::AddTodTime:
    case StdOp::AddDtTime:
    case StdOp::SubTodTime:
    case StdOp::SubDtTime:
    case StdOp::SubDateDate:
    case StdOp::SubTodTod:
    case StdOp::SubDtDt: {
        // Times and dates are int64 nanoseconds: these are 64-bit additions and subtractions.
        const bool add = sig.op == StdOp::AddTime || sig.op == StdOp::AddTodTime || sig.op == StdOp::AddDtTime;
        const Type* lint = g_.model().types.get(TypeKind::LInt);
        const Value a = eval(*args[0], lint);
        const Value b = eval(*args[1], lint);
        const Operand d = frameSlot(8, 8);
        emit(add ? Opcode::ADD_I64 : Opcode::SUB_I64, {d, a.at, b.at});
        return finish(Value{d, Calc::I64, rt});
    }
    case StdOp::PlcTime:
    case StdOp::NowDt: {
        const Operand block = nativeBlock(1); // CALL_NATIVE's block is at least two slots (the verifier's bound)
        callNative(sig.op == StdOp::PlcTime ? bc::Native::PlcTime : bc::Native::NowDt, block, e.span);
        return finish(Value{block, Calc::I64, rt});
    }
    default: break;
    }
    if (auto v = nativeStandardCall(e, sig, args, want, dest)) {
        return *v;
    }
    g_.error(e.span, "standard function '" + sig.name + "' is not supported by the code generator yet");
    return Value{constant64(0), calcOf(want), want};
}

} // namespace takt::compiler::codegen
