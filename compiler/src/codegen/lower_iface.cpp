// INTERFACE dispatch. An interface value is the image offset of an FB instance (0: NULL); the
// root of every FB hierarchy that implements an interface reserves the first 4 bytes of its
// instances for the image offset of the instance type's dispatch table, written with the
// initial image. A table has one u32 POU index per slot; slots number the method prototypes of
// every interface of the program, so one table per FB type serves all its interfaces and an
// interface value converts to a base interface without any work. A call through an interface
// is CALL_IFACE with the prototype's slot; METHOD frames keep the parameters first (see
// frameLayout), so the arguments land where every implementation expects them.
#include "codegen/lower.h"
#include "takt/compiler/names.h"

namespace takt::compiler::codegen {

using bc::Opcode;

namespace {

void numberScope(const Scope* scope, std::unordered_map<const Symbol*, std::uint32_t>& slots, int depth) {
    if (scope == nullptr || depth > 64) {
        return;
    }
    for (const Symbol* s : scope->symbols()) {
        if (s->kind == SymbolKind::Namespace) {
            numberScope(s->scope, slots, depth + 1);
        } else if (s->kind == SymbolKind::Interface && s->scope != nullptr) {
            for (const Symbol* m : s->scope->symbols()) {
                if (m->kind == SymbolKind::Pou) {
                    slots.emplace(m, static_cast<std::uint32_t>(slots.size()));
                }
            }
        }
    }
}

// The METHOD of `fb` (or of its nearest base) named `name`.
const Symbol* findMethod(const Symbol* fb, std::string_view name) {
    for (int depth = 0; fb != nullptr && depth < 64; ++depth, fb = fb->base) {
        const Symbol* m = fb->scope != nullptr ? fb->scope->findLocal(name) : nullptr;
        if (m != nullptr && m->kind == SymbolKind::Pou && m->pouKind == ast::PouKind::Method) {
            return m;
        }
    }
    return nullptr;
}

} // namespace

std::uint32_t Generator::interfaceSlot(const Symbol* prototype) {
    if (!interfaceSlotsNumbered_) {
        numberScope(model_.global.get(), interfaceSlots_, 0);
        interfaceSlotsNumbered_ = true;
    }
    if (auto it = interfaceSlots_.find(prototype); it != interfaceSlots_.end()) {
        return it->second;
    }
    // Not reachable from the global scope (a declaration error elsewhere): a fresh slot that no
    // table fills, so a call through it traps InvalidCall instead of calling the wrong method.
    return interfaceSlots_.emplace(prototype, static_cast<std::uint32_t>(interfaceSlots_.size())).first->second;
}

std::uint32_t Generator::dispatchHeaderOf(const Symbol* fb) {
    for (int depth = 0; fb != nullptr && depth < 1000; ++depth) {
        if (fb->base == nullptr) {
            return fb->dispatchHeader;
        }
        fb = fb->base;
    }
    return 0;
}

std::uint32_t Generator::dispatchTable(const Symbol* fb) {
    if (auto it = dispatchTables_.find(fb); it != dispatchTables_.end()) {
        return it->second;
    }
    if (!interfaceSlotsNumbered_) {
        numberScope(model_.global.get(), interfaceSlots_, 0);
        interfaceSlotsNumbered_ = true;
    }
    std::vector<std::uint32_t> entries(interfaceSlots_.size(), bc::kNone);
    for (const auto& [prototype, slot] : interfaceSlots_) {
        if (const Symbol* impl = findMethod(fb, prototype->name); impl != nullptr && impl->pou != nullptr) {
            entries[slot] = pouIndex(impl);
        }
    }
    const auto size = static_cast<std::uint32_t>(std::max<std::size_t>(entries.size(), 1) * 4);
    const std::uint32_t at = poolAlloc(size, 4);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        for (std::uint32_t b = 0; b < 4; ++b) {
            pool[at - 8 + 4 * i + b] = static_cast<std::uint8_t>(entries[i] >> (8 * b));
        }
    }
    return dispatchTables_.emplace(fb, at).first->second;
}

Value Lowerer::interfaceCall(const ast::CallExpr& e, const ast::Expr& object, const Type* want,
                             std::optional<Operand> dest) {
    const Symbol* target = e.target; // the INTERFACE's method prototype
    // The interface value, kept in a temporary: argument expressions may reassign the variable.
    const Value iface = eval(object, object.type);
    const Operand self = frameSlot(4, 4);
    emit(Opcode::MOV_32, {self, iface.at});
    const Generator::FrameLayout& layout = g_.frameLayout(target);
    const std::vector<int> binding = bindArguments(e, target->params);
    std::vector<Value> values(e.args.size());
    for (std::size_t i = 0; i < e.args.size(); ++i) {
        const ast::Argument& a = e.args[i];
        if (binding[i] < 0 || a.output || a.value == nullptr) {
            continue;
        }
        const Symbol* p = target->params[static_cast<std::size_t>(binding[i])];
        if (p->section == ast::VarSection::InOut) {
            values[i] = Value{pointerOf(locate(*a.value)), Calc::U32, nullptr};
        } else {
            values[i] = eval(*a.value, p->type);
        }
    }
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
    debugAt(e.span);
    emit(Opcode::CALL_IFACE, {self, imm(g_.interfaceSlot(target)), imm(c)});
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

} // namespace takt::compiler::codegen
