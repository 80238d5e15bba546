// Statements and POU bodies.
#include "codegen/lower.h"
#include "takt/compiler/names.h"

#include <algorithm>
#include <limits>

namespace takt::compiler::codegen {

using bc::Opcode;

std::uint32_t Generator::poolAlloc(std::uint32_t size, std::uint32_t align) {
    std::uint32_t at = alignUp(8 + static_cast<std::uint32_t>(pool.size()), std::max<std::uint32_t>(align, 1));
    pool.resize(at - 8 + size, 0);
    return at;
}

void Generator::layoutConstants() {
    out_.constSize = 8; // provisional: the constants grow while the code is generated (finish())
}

void Generator::generateCode() {
    for (const Symbol* p : model_.pous) {
        if (isNativeFb(p) || p->pou == nullptr || p->pou->prototypeOnly) {
            continue;
        }
        Lowerer(*this, p).lowerPou();
    }
    if (!deferredInits.empty()) {
        std::vector<DeferredInit> inits;
        inits.swap(deferredInits);
        Lowerer(*this, nullptr).lowerInits(inits);
    }
}

void Lowerer::prologue() {
    const Generator::FrameLayout& layout = g_.frameLayout(pou_);
    for (const auto& [s, at] : layout.offsets) {
        frame_.emplace(s, at);
    }
    frameTop_ = layout.size;
    frameMax_ = layout.size;
    if (layout.reinitEnd > 0) { // FUNCTION locals and VAR_TEMP are re-initialised on every call
        emit(Opcode::COPY, {Operand{bc::address(bc::kTagFrame, 0), false},
                            Operand{bc::address(bc::kTagAbsolute, layout.templ), false}, imm(layout.reinitEnd)});
    }
    if (layout.localsEnd > layout.localsBegin) { // METHOD locals (after the parameters)
        emit(Opcode::COPY, {Operand{bc::address(bc::kTagFrame, layout.localsBegin), false},
                            Operand{bc::address(bc::kTagAbsolute, layout.templ + layout.localsBegin), false},
                            imm(layout.localsEnd - layout.localsBegin)});
    }
    for (const DeferredInit& d : layout.inits) {
        scope_ = d.cx.scope;
        span_ = d.init->span;
        debugAt(d.init->span);
        assign(Loc{false, {bc::address(bc::kTagFrame, d.at), false}, 0, d.type}, *d.init);
        frameTop_ = layout.size;
    }
}

// R_EDGE / F_EDGE inputs, before the FB body: the input becomes what an R_TRIG (F_TRIG) on the
// passed value gives, with the hidden member as the trigger's memory (IEC 61131-3 2.5.2.2).
void Lowerer::edgeInputs() {
    if (pou_->pouKind != ast::PouKind::FunctionBlock && pou_->pouKind != ast::PouKind::TestFunctionBlock) {
        return;
    }
    for (const Symbol* in : pou_->scope->symbols()) {
        if (in->kind != SymbolKind::Variable || in->edgeMemory == nullptr) {
            continue;
        }
        const Loc input = locateSymbol(in, in->span);
        const Loc memory = locateSymbol(in->edgeMemory, in->span);
        const Operand passed = frameSlot(4, 4);
        const Operand other = frameSlot(4, 4);
        // R_TRIG: Q := CLK AND NOT M; M := CLK. F_TRIG is the same on NOT CLK, so that (as the
        // standard F_TRIG) the first call with the input FALSE reads TRUE.
        emit(Opcode::MOV_8, {passed, input.at});
        if (in->varDecl == nullptr || in->varDecl->edge != ast::InputEdge::Rising) {
            emit(Opcode::NOT_B, {passed, passed});
        }
        emit(Opcode::NOT_B, {other, memory.at});
        emit(Opcode::AND_B, {input.at, passed, other});
        emit(Opcode::MOV_8, {memory.at, passed});
    }
}

void Lowerer::lowerPou() {
    const std::uint32_t index = g_.pouIndex(pou_);
    function_ = pou_->pouKind == ast::PouKind::Function || pou_->pouKind == ast::PouKind::Method;
    scope_ = pou_->scope;
    const std::uint32_t entry = here();
    prologue();
    edgeInputs();
    ownEnoPrologue();
    lowerBody(pou_->pou->body);
    for (const auto& [name, patches] : jumps_) {
        if (auto it = labelAt_.find(name); it != labelAt_.end()) { // sema reported any other
            patch(patches, it->second);
        }
    }
    patch(returns_, here());
    emit(Opcode::RET, {});
    out_.pous[index].code = entry;
    out_.pous[index].codeEnd = here();
    out_.pous[index].frameSize = alignUp(frameMax_, 8);
    out_.pous[index].frame = g_.frameVars(pou_);
}

void Lowerer::lowerInits(const std::vector<DeferredInit>& inits) {
    const std::uint32_t entry = here();
    for (const DeferredInit& d : inits) {
        pou_ = d.cx.pou;
        thisAbsolute_ = d.cx.pou != nullptr ? std::optional<std::uint32_t>(d.cx.instanceBase) : std::nullopt;
        scope_ = d.cx.scope;
        span_ = d.init->span;
        frameTop_ = 0;
        frame_.clear();
        debugAt(d.init->span);
        assign(Loc{false, {bc::address(bc::kTagAbsolute, d.at), true}, 0, d.type}, *d.init);
    }
    emit(Opcode::RET, {});
    out_.initCode = entry;
    // The verifier wants the init code to be a function-like POU of its own.
    bc::PouEntry init;
    init.name = "$init";
    init.kind = bc::PouKind::Function;
    init.code = entry;
    init.codeEnd = here();
    init.frameSize = alignUp(frameMax_, 8);
    out_.pous.push_back(std::move(init));
}

void Lowerer::lowerBody(const ast::StmtList& body) {
    for (const ast::StmtPtr& s : body) {
        const std::uint32_t mark = frameTop_;
        lowerStmt(*s);
        frameTop_ = mark; // temporaries live for one statement
    }
}

void Lowerer::lowerStmt(const ast::Stmt& s) {
    span_ = s.span;
    debugAt(s.span, true);
    if (const ast::CallExpr* c = enabledCall(s); c != nullptr && c != guarded_) {
        lowerEnabled(s, *c);
        return;
    }
    switch (s.kind) {
    case ast::StmtKind::Assign: {
        const auto& a = static_cast<const ast::AssignStmt&>(s);
        if (a.bindReference) {
            bindReference(a);
            return;
        }
        if (a.target->kind == ast::ExprKind::BitAccess) {
            // w.n := b  ->  w := (w AND NOT mask) OR (b << n)
            const auto& b = static_cast<const ast::BitAccessExpr&>(*a.target);
            const Loc w = locate(*b.object);
            const Calc c = calcOf(w.type);
            const bool wide = calcWidth(c) == 8;
            const Value cur = load(w, c);
            const Value bit = eval(*a.value, g_.model().types.get(TypeKind::Bool));
            const Operand t = frameSlot(8, 8);
            const Operand m = frameSlot(8, 8);
            emit(wide ? Opcode::AND_64 : Opcode::AND_32, {m, cur.at, constant64(~(1ull << b.bit))});
            emit(Opcode::ZX_8_32, {t, bit.at});
            if (wide) {
                emit(Opcode::ZX_32_64, {t, t});
            }
            emit(wide ? Opcode::SHL_64 : Opcode::SHL_32, {t, t, constant64(b.bit)});
            emit(wide ? Opcode::OR_64 : Opcode::OR_32, {m, m, t});
            store(w, Value{m, c, w.type});
            return;
        }
        if (evaluatesFirst(*a.target, *a.value)) {
            // The value first, then the element: the IDX locating it is then the last
            // instruction and becomes the store (STX_*). Nothing observable changes: the value
            // cannot trap or write anything, and locating the target writes nothing it reads.
            const Value v = eval(*a.value, a.target->type);
            store(locate(*a.target), v);
            return;
        }
        assign(locate(*a.target), *a.value);
        return;
    }
    case ast::StmtKind::Expr: {
        const auto& x = static_cast<const ast::ExprStmt&>(s);
        if (x.expr->kind == ast::ExprKind::Call) {
            (void)call(static_cast<const ast::CallExpr&>(*x.expr), nullptr, std::nullopt);
        }
        return;
    }
    case ast::StmtKind::If: {
        const auto& i = static_cast<const ast::IfStmt&>(s);
        std::vector<std::uint32_t> end;
        for (const ast::CondBlock& b : i.branches) {
            std::vector<std::uint32_t> next;
            span_ = b.condition->span;
            condJump(*b.condition, false, next);
            lowerBody(b.body);
            if (&b != &i.branches.back() || i.hasElse) { // the last branch falls through
                emitJump(Opcode::JMP, {}, end);
            }
            patch(next, here());
        }
        if (i.hasElse) {
            lowerBody(i.elseBody);
        }
        patch(end, here());
        return;
    }
    case ast::StmtKind::Case: lowerCase(static_cast<const ast::CaseStmt&>(s)); return;
    case ast::StmtKind::For: lowerFor(static_cast<const ast::ForStmt&>(s)); return;
    case ast::StmtKind::While: {
        const auto& w = static_cast<const ast::WhileStmt&>(s);
        LoopLabels labels;
        const std::uint32_t top = here();
        condJump(*w.condition, false, labels.exits);
        loops_.push_back(&labels);
        lowerBody(w.body);
        loops_.pop_back();
        patch(labels.continues, top);
        emit(Opcode::JMP, {imm(top)});
        patch(labels.exits, here());
        return;
    }
    case ast::StmtKind::Repeat: {
        const auto& r = static_cast<const ast::RepeatStmt&>(s);
        LoopLabels labels;
        const std::uint32_t top = here();
        loops_.push_back(&labels);
        lowerBody(r.body);
        loops_.pop_back();
        patch(labels.continues, here());
        std::vector<std::uint32_t> again;
        condJump(*r.condition, false, again);
        patch(again, top);
        patch(labels.exits, here());
        return;
    }
    case ast::StmtKind::Exit:
        if (!loops_.empty()) {
            emitJump(Opcode::JMP, {}, loops_.back()->exits);
        }
        return;
    case ast::StmtKind::Continue:
        if (!loops_.empty()) {
            emitJump(Opcode::JMP, {}, loops_.back()->continues);
        }
        return;
    case ast::StmtKind::Return: emitJump(Opcode::JMP, {}, returns_); return;
    case ast::StmtKind::Empty: return;
    case ast::StmtKind::Label: labelAt_[upperName(static_cast<const ast::LabelStmt&>(s).name.name)] = here(); return;
    case ast::StmtKind::Jump: // patched once the body is lowered (the label may come later)
        emitJump(Opcode::JMP, {}, jumps_[upperName(static_cast<const ast::LabelStmt&>(s).name.name)]);
        return;
    }
}

void Lowerer::lowerCase(const ast::CaseStmt& s) {
    const Type* selType = s.selector->type;
    Calc c = calcOf(selType);
    if (c != Calc::I64 && c != Calc::U64) {
        selType = g_.model().types.get(calcOf(selType) == Calc::U32 ? TypeKind::UDInt : TypeKind::DInt);
    }
    c = calcOf(selType);
    // The selector is evaluated once, into a slot of its own.
    const Operand sel = frameSlot(8, 8);
    (void)eval(*s.selector, selType, sel);
    const std::uint32_t mark = frameTop_;
    std::vector<std::uint32_t> end;
    for (const ast::CaseBranch& b : s.branches) {
        std::vector<std::uint32_t> hit;
        for (const ast::CaseLabel& l : b.labels) {
            auto lo = g_.constant(*l.lower, scope_);
            auto hi = l.upper != nullptr ? g_.constant(*l.upper, scope_) : lo;
            if (!lo || !hi) {
                g_.error(l.span, "CASE label is not a constant");
                continue;
            }
            if (c == Calc::I32 && l.upper == nullptr) {
                emitJump(Opcode::JEQ_I32_IMM, {sel, imm(static_cast<std::uint32_t>(lo->i))}, hit);
            } else if (c == Calc::I32) {
                std::vector<std::uint32_t> miss;
                emitJump(Opcode::JLT_I32_IMM, {sel, imm(static_cast<std::uint32_t>(lo->i))}, miss);
                emitJump(Opcode::JLE_I32_IMM, {sel, imm(static_cast<std::uint32_t>(hi->i))}, hit);
                patch(miss, here());
            } else {
                const Operand t = frameSlot(4, 4);
                const Operand t2 = frameSlot(4, 4);
                const bool u = c == Calc::U32 || c == Calc::U64;
                const bool w = calcWidth(c) == 8;
                emit(w ? (u ? Opcode::GE_U64 : Opcode::GE_I64) : Opcode::GE_U32,
                     {t, sel, constant64(static_cast<std::uint64_t>(lo->i))});
                emit(w ? (u ? Opcode::LE_U64 : Opcode::LE_I64) : Opcode::LE_U32,
                     {t2, sel, constant64(static_cast<std::uint64_t>(hi->i))});
                emit(Opcode::AND_B, {t, t, t2});
                emitJump(Opcode::JMP_T, {t}, hit);
                frameTop_ = mark;
            }
        }
        std::vector<std::uint32_t> skip;
        emitJump(Opcode::JMP, {}, skip);
        patch(hit, here());
        lowerBody(b.body);
        emitJump(Opcode::JMP, {}, end);
        patch(skip, here());
    }
    if (s.hasElse) {
        lowerBody(s.elseBody);
    }
    patch(end, here());
}

namespace {

const Symbol* rootSymbol(const ast::Expr* e) {
    while (e != nullptr) {
        switch (e->kind) {
        case ast::ExprKind::Paren: e = static_cast<const ast::ParenExpr*>(e)->inner.get(); break;
        case ast::ExprKind::Member: e = static_cast<const ast::MemberExpr*>(e)->object.get(); break;
        case ast::ExprKind::Index: e = static_cast<const ast::IndexExpr*>(e)->array.get(); break;
        case ast::ExprKind::BitAccess: e = static_cast<const ast::BitAccessExpr*>(e)->object.get(); break;
        case ast::ExprKind::Name: return static_cast<const ast::NameExpr*>(e)->symbol;
        default: return nullptr;
        }
    }
    return nullptr;
}

// Whether an assignment to `target` could land in any variable: it goes through a dereference
// (`p^ := …`) or a VAR_IN_OUT, which may point at the variable tested for.
bool writesThroughReference(const ast::Expr* e) {
    while (e != nullptr) {
        switch (e->kind) {
        case ast::ExprKind::Paren: e = static_cast<const ast::ParenExpr*>(e)->inner.get(); break;
        case ast::ExprKind::Member: e = static_cast<const ast::MemberExpr*>(e)->object.get(); break;
        case ast::ExprKind::Index: e = static_cast<const ast::IndexExpr*>(e)->array.get(); break;
        case ast::ExprKind::BitAccess: e = static_cast<const ast::BitAccessExpr*>(e)->object.get(); break;
        case ast::ExprKind::Name: {
            const Symbol* s = static_cast<const ast::NameExpr*>(e)->symbol;
            return s == nullptr || s->section == ast::VarSection::InOut ||
                   (s->type != nullptr && stripAlias(s->type)->kind() == TypeKind::Ref);
        }
        default: return true;
        }
    }
    return true;
}

// Whether evaluating `e` could write the variable `v` or let something else write it: a call of
// a user POU (an FB, a METHOD of THIS, a FUNCTION through a VAR_IN_OUT), an output binding, or
// a reference taken. Standard functions only read their arguments.
bool mayWrite(const ast::Expr* e, const Symbol* v) {
    if (e == nullptr) {
        return false;
    }
    switch (e->kind) {
    case ast::ExprKind::Paren: return mayWrite(static_cast<const ast::ParenExpr*>(e)->inner.get(), v);
    case ast::ExprKind::Member: return mayWrite(static_cast<const ast::MemberExpr*>(e)->object.get(), v);
    case ast::ExprKind::BitAccess: return mayWrite(static_cast<const ast::BitAccessExpr*>(e)->object.get(), v);
    case ast::ExprKind::Deref: return mayWrite(static_cast<const ast::DerefExpr*>(e)->reference.get(), v);
    case ast::ExprKind::Index: {
        const auto* ix = static_cast<const ast::IndexExpr*>(e);
        bool w = mayWrite(ix->array.get(), v);
        for (const ast::ExprPtr& i : ix->indices) {
            w = w || mayWrite(i.get(), v);
        }
        return w;
    }
    case ast::ExprKind::Unary: return mayWrite(static_cast<const ast::UnaryExpr*>(e)->operand.get(), v);
    case ast::ExprKind::Binary: {
        const auto* b = static_cast<const ast::BinaryExpr*>(e);
        return mayWrite(b->lhs.get(), v) || mayWrite(b->rhs.get(), v);
    }
    case ast::ExprKind::Call: {
        const auto* c = static_cast<const ast::CallExpr*>(e);
        if (c->stdOverload < 0 || c->enableOut) {
            return true;
        }
        for (const ast::Argument& a : c->args) {
            if (a.output || mayWrite(a.value.get(), v)) {
                return true;
            }
        }
        return false;
    }
    case ast::ExprKind::Ref: return true;
    case ast::ExprKind::Literal:
    case ast::ExprKind::EnumLiteral:
    case ast::ExprKind::Name:
    case ast::ExprKind::DirectAddress: return false;
    default: return true;
    }
}

bool mayWrite(const ast::StmtList& body, const Symbol* v) {
    for (const ast::StmtPtr& sp : body) {
        const ast::Stmt& s = *sp;
        switch (s.kind) {
        case ast::StmtKind::Assign: {
            const auto& a = static_cast<const ast::AssignStmt&>(s);
            if (rootSymbol(a.target.get()) == v || writesThroughReference(a.target.get()) ||
                mayWrite(a.target.get(), v) || mayWrite(a.value.get(), v)) {
                return true;
            }
            break;
        }
        case ast::StmtKind::Expr:
            if (mayWrite(static_cast<const ast::ExprStmt&>(s).expr.get(), v)) {
                return true;
            }
            break;
        case ast::StmtKind::If: {
            const auto& i = static_cast<const ast::IfStmt&>(s);
            for (const ast::CondBlock& b : i.branches) {
                if (mayWrite(b.condition.get(), v) || mayWrite(b.body, v)) {
                    return true;
                }
            }
            if (mayWrite(i.elseBody, v)) {
                return true;
            }
            break;
        }
        case ast::StmtKind::Case: {
            const auto& c = static_cast<const ast::CaseStmt&>(s);
            if (mayWrite(c.selector.get(), v) || mayWrite(c.elseBody, v)) {
                return true;
            }
            for (const ast::CaseBranch& b : c.branches) {
                if (mayWrite(b.body, v)) {
                    return true;
                }
            }
            break;
        }
        case ast::StmtKind::For: {
            const auto& f = static_cast<const ast::ForStmt&>(s);
            if (rootSymbol(f.variable.get()) == v || mayWrite(f.from.get(), v) || mayWrite(f.to.get(), v) ||
                mayWrite(f.step.get(), v) || mayWrite(f.body, v)) {
                return true;
            }
            break;
        }
        case ast::StmtKind::While: {
            const auto& w = static_cast<const ast::WhileStmt&>(s);
            if (mayWrite(w.condition.get(), v) || mayWrite(w.body, v)) {
                return true;
            }
            break;
        }
        case ast::StmtKind::Repeat: {
            const auto& r = static_cast<const ast::RepeatStmt&>(s);
            if (mayWrite(r.condition.get(), v) || mayWrite(r.body, v)) {
                return true;
            }
            break;
        }
        default: break;
        }
    }
    return false;
}

} // namespace

// FOR: bounds and step evaluated once; the body runs while the counter has not passed the bound
// (i <= bound counting up, i >= bound counting down). The back-edge steps only when counter +
// step does not pass the bound, so the counter never overflows (FOR i := 32760 TO 32767 BY 5
// runs twice) and keeps the last value the body ran with; an empty loop leaves the start value
// in the variable. A narrow control variable is counted in a 32-bit slot and stored at the top
// of every iteration (so it is observable as usual); when the body cannot write it, the body
// reads the slot instead of re-widening the variable and the slot is not reloaded from it after
// the body.
bool Lowerer::directSymbol(const Symbol* s) {
    if (s == nullptr || s->kind != SymbolKind::Variable) {
        return false;
    }
    if (s->section == ast::VarSection::External && s->target != nullptr) {
        s = s->target;
    }
    if (g_.globalOffset.count(s) != 0) {
        return true;
    }
    if (auto it = frame_.find(s); it != frame_.end()) {
        return s->section != ast::VarSection::InOut;
    }
    if (const MemberSlot* slot = instanceSlot(s)) {
        return !slot->byReference;
    }
    return false;
}

bool Lowerer::evaluatesQuietly(const ast::Expr& e, bool mayTrap) {
    using B = ast::BinaryOp;
    switch (e.kind) {
    case ast::ExprKind::Paren: return evaluatesQuietly(*static_cast<const ast::ParenExpr&>(e).inner, mayTrap);
    case ast::ExprKind::Literal:
    case ast::ExprKind::EnumLiteral: return true;
    case ast::ExprKind::Name: {
        const Symbol* sym = static_cast<const ast::NameExpr&>(e).symbol;
        return sym != nullptr && (sym->kind == SymbolKind::EnumValue || directSymbol(sym));
    }
    case ast::ExprKind::Member: {
        const auto& m = static_cast<const ast::MemberExpr&>(e);
        if (m.symbol != nullptr && (m.symbol->kind == SymbolKind::EnumValue || g_.globalOffset.count(m.symbol) != 0)) {
            return true;
        }
        const Type* bt = m.object->type != nullptr ? stripAlias(m.object->type) : nullptr;
        if (bt == nullptr) {
            return false;
        }
        if (bt->kind() != TypeKind::Struct) { // a member of an FB instance: not one held by reference
            const Symbol* pou = instancePou(bt);
            if (pou == nullptr || m.symbol == nullptr) {
                return false;
            }
            const auto& slots = g_.members(pou);
            const auto it = slots.find(m.symbol);
            if (it == slots.end() || it->second.byReference) {
                return false;
            }
        }
        return evaluatesQuietly(*m.object, mayTrap);
    }
    case ast::ExprKind::Index: {
        const auto& ix = static_cast<const ast::IndexExpr&>(e);
        const Type* at = ix.array->type != nullptr ? stripAlias(ix.array->type) : nullptr;
        if (at == nullptr || at->kind() != TypeKind::Array || !evaluatesQuietly(*ix.array, mayTrap)) {
            return false;
        }
        const auto* arr = static_cast<const ArrayType*>(at);
        for (std::size_t d = 0; d < ix.indices.size(); ++d) {
            if (mayTrap) {
                if (!evaluatesQuietly(*ix.indices[d], true)) {
                    return false;
                }
                continue;
            }
            // Without traps only a constant subscript inside the bounds (an operand offset).
            const auto k = d < arr->dims.size() ? constantIndex(*ix.indices[d]) : std::nullopt;
            if (!k || *k < arr->dims[d].lower || *k > arr->dims[d].upper) {
                return false;
            }
        }
        return true;
    }
    case ast::ExprKind::Deref:
        return mayTrap && evaluatesQuietly(*static_cast<const ast::DerefExpr&>(e).reference, true);
    case ast::ExprKind::Unary: return evaluatesQuietly(*static_cast<const ast::UnaryExpr&>(e).operand, mayTrap);
    case ast::ExprKind::Binary: {
        const auto& b = static_cast<const ast::BinaryExpr&>(e);
        if (!evaluatesQuietly(*b.lhs, mayTrap) || !evaluatesQuietly(*b.rhs, mayTrap)) {
            return false;
        }
        const Calc c = e.type != nullptr ? calcOf(e.type) : Calc::Agg;
        if (mayTrap || c == Calc::F32 || c == Calc::F64 || (b.op != B::Div && b.op != B::Mod && b.op != B::Pow)) {
            return true;
        }
        // Integer division: only by a constant the instructions take without a run-time check.
        if (b.op == B::Pow || !isConstantCandidate(*b.rhs)) {
            return false;
        }
        const auto k = g_.constant(*b.rhs, scope_);
        return k && k->kind == sema::ConstValue::Kind::Int && (b.op == B::Mod ? k->i != 0 : (k->i >= 2 || k->i <= -2));
    }
    case ast::ExprKind::Call: {
        using sema::StdOp;
        const auto& c = static_cast<const ast::CallExpr&>(e);
        const auto& sigs = sema::standardSignatures();
        if (c.stdOverload < 0 || static_cast<std::size_t>(c.stdOverload) >= sigs.size() || c.enable || c.enableOut) {
            return false; // a user POU may write anything; EN/ENO make a statement of their own
        }
        for (const ast::Argument& a : c.args) {
            if (a.output || a.value == nullptr || !evaluatesQuietly(*a.value, mayTrap)) {
                return false;
            }
        }
        if (mayTrap) {
            return true;
        }
        // Numeric conversions and the math functions: computed in place, no native, no trap.
        const auto numeric = [](const Type* t) {
            const Calc k = t != nullptr ? calcOf(t) : Calc::Agg;
            return k != Calc::Str && k != Calc::WStr && k != Calc::Agg;
        };
        switch (sigs[static_cast<std::size_t>(c.stdOverload)].op) {
        case StdOp::Convert:
        case StdOp::Trunc:
            return numeric(e.type) && std::all_of(c.args.begin(), c.args.end(),
                                                  [&](const ast::Argument& a) { return numeric(a.value->type); });
        case StdOp::Abs:
        case StdOp::Sqrt:
        case StdOp::Ln:
        case StdOp::Log:
        case StdOp::Exp:
        case StdOp::Sin:
        case StdOp::Cos:
        case StdOp::Tan:
        case StdOp::Asin:
        case StdOp::Acos:
        case StdOp::Atan:
        case StdOp::Max:
        case StdOp::Min: return numeric(e.type);
        default: return false;
        }
    }
    default: return false;
    }
}

bool Lowerer::evaluatesFirst(const ast::Expr& target, const ast::Expr& value) {
    // Only for an element by a run-time subscript (which ends in an IDX), scalar or whole.
    const ast::Expr* t = &target;
    while (t->kind == ast::ExprKind::Paren || t->kind == ast::ExprKind::Member) {
        t = t->kind == ast::ExprKind::Paren ? static_cast<const ast::ParenExpr*>(t)->inner.get()
                                            : static_cast<const ast::MemberExpr*>(t)->object.get();
    }
    if (t->kind != ast::ExprKind::Index || target.type == nullptr || g_.options().overflowTrap) {
        return false;
    }
    // Constant subscripts inside the bounds make the element a plain operand: no IDX to fuse.
    const auto& ix = static_cast<const ast::IndexExpr&>(*t);
    const Type* at = ix.array->type != nullptr ? stripAlias(ix.array->type) : nullptr;
    if (at == nullptr || at->kind() != TypeKind::Array) {
        return false;
    }
    const auto* arr = static_cast<const ArrayType*>(at);
    bool runTime = false;
    for (std::size_t d = 0; d < ix.indices.size() && d < arr->dims.size(); ++d) {
        const auto k = constantIndex(*ix.indices[d]);
        runTime = runTime || !k || *k < arr->dims[d].lower || *k > arr->dims[d].upper;
    }
    if (!runTime) {
        return false;
    }
    const Calc c = calcOf(target.type);
    const Type* tt = stripAlias(target.type);
    if (c == Calc::Str || c == Calc::WStr || tt->kind() == TypeKind::Subrange) {
        return false;
    }
    return evaluatesQuietly(value, false) && evaluatesQuietly(target, true);
}

void Lowerer::lowerFor(const ast::ForStmt& s) {
    const Loc var = locate(*s.variable);
    const Type* vt = stripAlias(var.type);
    if (calcOf(vt) == Calc::U64) {
        lowerForUnsigned64(s, var);
        return;
    }
    // USINT/UINT count in a signed 32-bit slot and UDINT in a signed 64-bit one: every value and
    // every step of the type fits there, so the signed loop below applies unchanged.
    const Type* ct =
        calcOf(vt) != Calc::U32 ? vt : g_.model().types.get(storeWidth(vt) < 4 ? TypeKind::DInt : TypeKind::LInt);
    const Calc c = calcOf(ct);
    const bool wide = calcWidth(c) == 8;
    if (c != Calc::I32 && c != Calc::I64) {
        g_.error(s.span, "FOR over a non-integer control variable cannot be compiled");
        return;
    }
    // A narrow or indirect control variable is counted in a 32-bit slot and stored each iteration.
    const bool shadow = var.indirect || storeWidth(vt) != calcWidth(c);
    const Operand ctr = shadow ? frameSlot(8, 8) : var.at;
    const Symbol* varSym =
        s.variable->kind == ast::ExprKind::Name ? static_cast<const ast::NameExpr&>(*s.variable).symbol : nullptr;
    const std::uint32_t varTag = bc::addressTag(var.at.word);
    const bool pinned = shadow && !var.indirect && varSym != nullptr && !wide &&
                        (varTag == bc::kTagThis || varTag == bc::kTagFrame) && !mayWrite(s.body, varSym);
    // Bounds and step computed into their slots (a widened unsigned value may land elsewhere).
    auto evalInto = [&](const ast::Expr& x, Operand slot) {
        const Value v = eval(x, ct, slot);
        if (v.at.word != slot.word || v.at.global != slot.global) {
            emit(wide ? Opcode::MOV_64 : Opcode::MOV_32, {slot, v.at});
        }
    };
    evalInto(*s.from, ctr);
    if (shadow) { // the variable holds the start value even when the body never runs
        store(var, Value{ctr, c, vt});
    }
    std::optional<std::int64_t> toConst;
    if (auto k = s.to ? g_.constant(*s.to, scope_) : std::nullopt; k && !wide && isConstantCandidate(*s.to)) {
        toConst = k->i;
    }
    Operand to{};
    if (!toConst) {
        to = frameSlot(8, 8);
        evalInto(*s.to, to);
    }
    bool stepKnown = true;
    std::int64_t stepValue = 1;
    Operand step{};
    if (s.step != nullptr) {
        stepKnown = false;
        if (isConstantCandidate(*s.step)) {
            if (auto k = g_.constant(*s.step, scope_)) {
                stepKnown = true;
                stepValue = k->i;
            }
        }
        if (!stepKnown) {
            step = frameSlot(8, 8);
            evalInto(*s.step, step);
            debugAt(s.step->span);
            emit(wide ? Opcode::CHK_STEP_I64 : Opcode::CHK_STEP_I32, {step});
        }
    }
    const std::uint32_t mark = frameTop_;
    // An INT variable counted up or down to a constant bound by a constant step: the back-edge
    // (LOOP_I16_IMM) stores each next value into the variable, which the top of the loop would
    // otherwise do. The values stay inside INT when the bound is (the start value was stored and,
    // with overflow traps, checked above); a subrange keeps its range check on every store.
    const std::int64_t limit = toConst ? *toConst - stepValue : 0;
    const bool limitFits =
        limit >= std::numeric_limits<std::int32_t>::min() && limit <= std::numeric_limits<std::int32_t>::max();
    const bool storeOnBackEdge = shadow && !var.indirect && storeWidth(vt) == 2 && c == Calc::I32 &&
                                 vt->kind() != TypeKind::Subrange && stepKnown && toConst && limitFits &&
                                 *toConst >= std::numeric_limits<std::int16_t>::min() &&
                                 *toConst <= std::numeric_limits<std::int16_t>::max();
    // Entry test: skip the loop when the start is already past the bound (not needed when both
    // are constants and the start is not).
    std::optional<std::int64_t> fromConst;
    if (isConstantCandidate(*s.from)) {
        if (auto k = g_.constant(*s.from, scope_); k && k->kind == sema::ConstValue::Kind::Int) {
            fromConst = k->i;
        }
    }
    const bool entersAlways =
        stepKnown && toConst && fromConst && (stepValue < 0 ? *fromConst >= *toConst : *fromConst <= *toConst);
    auto exitIf = [&](std::vector<std::uint32_t>& out, bool down) {
        if (toConst) {
            emitJump(down ? Opcode::JLT_I32_IMM : Opcode::JGT_I32_IMM, {ctr, imm(static_cast<std::uint32_t>(*toConst))},
                     out);
        } else if (wide) {
            emitJump(down ? Opcode::JLT_I64 : Opcode::JGT_I64, {ctr, to}, out);
        } else {
            emitJump(down ? Opcode::JLT_I32 : Opcode::JGT_I32, {ctr, to}, out);
        }
    };
    LoopLabels labels;
    std::vector<std::uint32_t> downEntry;
    if (!stepKnown) {
        emitJump(wide ? Opcode::JLT_I64 : Opcode::JLT_I32_IMM,
                 wide ? std::initializer_list<Operand>{step, constant64(0)}
                      : std::initializer_list<Operand>{step, imm(0)},
                 downEntry);
    }
    const bool down = stepKnown && stepValue < 0;
    if (!entersAlways) {
        exitIf(labels.exits, down);
    }
    std::vector<std::uint32_t> bodyEntry;
    if (!stepKnown) {
        emitJump(Opcode::JMP, {}, bodyEntry);
        patch(downEntry, here());
        exitIf(labels.exits, true);
    }
    patch(bodyEntry, here());
    const std::uint32_t top = here();
    if (shadow && !storeOnBackEdge) {
        store(var, Value{ctr, c, vt});
    }
    loops_.push_back(&labels);
    if (pinned) {
        pinned_.emplace_back(varSym, ctr);
    }
    lowerBody(s.body);
    if (pinned) {
        pinned_.pop_back();
    }
    loops_.pop_back();
    frameTop_ = mark;
    patch(labels.continues, here());
    if (shadow && !pinned) { // the body may change the counter (through a reference or a call)
        const Value cur = c == calcOf(vt) ? load(var, c) : convert(load(var, calcOf(vt)), ct);
        if (cur.at.word != ctr.word) {
            emit(wide ? Opcode::MOV_64 : Opcode::MOV_32, {ctr, cur.at});
        }
    }
    // Test, step and jump back in one instruction; it goes on only while counter + step does not
    // pass the bound.
    // With a constant bound and step the limit bound - step is computed here: the counter steps
    // while it is at or before the limit (LOOP_STEP_I32 when the limit does not fit in 32 bits).
    if (stepKnown && !wide && (!toConst || limitFits)) {
        const auto stepImm = imm(static_cast<std::uint32_t>(stepValue));
        if (storeOnBackEdge) {
            emit(down ? Opcode::LOOP_DN_I16_IMM : Opcode::LOOP_I16_IMM,
                 {ctr, var.at, imm(static_cast<std::uint32_t>(limit)), stepImm, imm(top)});
        } else if (toConst) {
            emit(down ? Opcode::LOOP_DN_I32_IMM : Opcode::LOOP_I32_IMM,
                 {ctr, imm(static_cast<std::uint32_t>(limit)), stepImm, imm(top)});
        } else {
            emit(down ? Opcode::LOOP_DN_I32 : Opcode::LOOP_I32, {ctr, to, stepImm, imm(top)});
        }
    } else { // the step in a slot (known only at run time, or 64 bits wide)
        const Operand stepAt = stepKnown ? constant64(static_cast<std::uint64_t>(stepValue)) : step;
        // A 32-bit constant bound as a pool constant: the low half of its 64-bit sign extension.
        const Operand bound = toConst ? constant64(static_cast<std::uint64_t>(*toConst)) : to;
        emit(wide ? Opcode::LOOP_STEP_I64 : Opcode::LOOP_STEP_I32, {ctr, bound, stepAt, imm(top)});
    }
    // The loop ran out (not EXIT, not skipped at entry): the variable ends on the first value that
    // failed the test, as CODESYS leaves it (11 after FOR i := 1 TO 10). A subrange variable keeps
    // the last value the body ran with: the next one may lie outside its range.
    if (vt->kind() != TypeKind::Subrange) {
        if (stepKnown && !wide) {
            emit(Opcode::ADD_I32_IMM, {ctr, ctr, imm(static_cast<std::uint32_t>(stepValue))});
        } else {
            const Operand stepAt = stepKnown ? constant64(static_cast<std::uint64_t>(stepValue)) : step;
            emit(wide ? Opcode::ADD_I64 : Opcode::ADD_I32, {ctr, ctr, stepAt});
        }
        if (shadow && var.indirect) {
            store(var, Value{ctr, c, vt});
        } else if (shadow) { // the low bits, as the type's arithmetic wraps: never an overflow fault
            const std::uint32_t w = storeWidth(vt);
            emit(w == 1   ? Opcode::MOV_8
                 : w == 2 ? Opcode::MOV_16
                 : w == 4 ? Opcode::MOV_32
                          : Opcode::MOV_64,
                 {var.at, ctr});
        }
    }
    patch(labels.exits, here());
}

// FOR over ULINT: the same rule with unsigned comparisons (the step is unsigned, so the loop
// counts up): the body runs while the counter is at most the bound, and the counter steps only
// while bound - counter >= step, so it never wraps past the type's maximum.
void Lowerer::lowerForUnsigned64(const ast::ForStmt& s, const Loc& var) {
    const Type* vt = var.type;
    const Operand ctr = var.indirect ? frameSlot(8, 8) : var.at;
    auto evalInto = [&](const ast::Expr& x, Operand slot) {
        const Value v = eval(x, vt, slot);
        if (v.at.word != slot.word || v.at.global != slot.global) {
            emit(Opcode::MOV_64, {slot, v.at});
        }
    };
    evalInto(*s.from, ctr);
    if (var.indirect) {
        store(var, Value{ctr, Calc::U64, vt});
    }
    const Operand to = frameSlot(8, 8);
    evalInto(*s.to, to);
    Operand step = constant64(1);
    if (s.step != nullptr) {
        if (auto k = isConstantCandidate(*s.step) ? g_.constant(*s.step, scope_) : std::nullopt) {
            step = constant64(static_cast<std::uint64_t>(k->i));
        } else {
            step = frameSlot(8, 8);
            evalInto(*s.step, step);
            debugAt(s.step->span);
            emit(Opcode::CHK_STEP_I64, {step});
        }
    }
    const Operand test = frameSlot(4, 4);
    const Operand room = frameSlot(8, 8);
    const std::uint32_t mark = frameTop_;
    LoopLabels labels;
    emit(Opcode::GT_U64, {test, ctr, to});
    emitJump(Opcode::JMP_T, {test}, labels.exits);
    const std::uint32_t top = here();
    if (var.indirect) {
        store(var, Value{ctr, Calc::U64, vt});
    }
    loops_.push_back(&labels);
    lowerBody(s.body);
    loops_.pop_back();
    frameTop_ = mark;
    patch(labels.continues, here());
    if (var.indirect) { // the body may change the counter through a reference or a call
        emit(Opcode::MOV_64, {ctr, load(var, Calc::U64).at});
    }
    std::vector<std::uint32_t> fallOut;
    emit(Opcode::GT_U64, {test, ctr, to});
    emitJump(Opcode::JMP_T, {test}, labels.exits);
    emit(Opcode::SUB_I64, {room, to, ctr});
    emit(Opcode::LT_U64, {test, room, step});
    emitJump(Opcode::JMP_T, {test}, fallOut);
    emit(Opcode::ADD_I64, {ctr, ctr, step});
    emit(Opcode::JMP, {imm(top)});
    patch(fallOut, here()); // ran out: the first value that failed the test, as in lowerFor
    if (vt->kind() != TypeKind::Subrange) {
        emit(Opcode::ADD_I64, {ctr, ctr, step});
        if (var.indirect) {
            store(var, Value{ctr, Calc::U64, vt});
        }
    }
    patch(labels.exits, here());
}

} // namespace takt::compiler::codegen
