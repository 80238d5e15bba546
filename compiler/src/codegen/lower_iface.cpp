// INTERFACE and METHOD dispatch. An interface value is the image offset of an FB instance (0:
// NULL); the root of every FB hierarchy that implements an interface or overrides a method
// reserves the first 4 bytes of its instances for the image offset of the instance type's
// dispatch table, written with the initial image. A table has one u32 POU index per slot;
// slots number the method prototypes of every interface of the program, then one slot per
// overridden method family, so one table per FB type serves all its interfaces and late-bound
// calls, and an interface value converts to a base interface without any work. A call through
// an interface, or a METHOD call on an instance that may be of a type overriding it, is
// CALL_IFACE with the slot; METHOD frames keep the parameters first (see frameLayout), so the
// arguments land where every implementation expects them.
#include "codegen/lower.h"
#include "takt/compiler/names.h"

namespace takt::compiler::codegen {

using bc::Opcode;

namespace {

void numberScope(const Scope* scope, std::unordered_map<const Symbol*, std::uint32_t>& slots,
                 std::vector<const Symbol*>& fbs, int depth) {
    if (scope == nullptr || depth > 64) {
        return;
    }
    for (const Symbol* s : scope->symbols()) {
        if (s->kind == SymbolKind::Namespace) {
            numberScope(s->scope, slots, fbs, depth + 1);
        } else if (s->kind == SymbolKind::Interface && s->scope != nullptr) {
            for (const Symbol* m : s->scope->symbols()) {
                if (m->kind == SymbolKind::Pou) {
                    slots.emplace(m, static_cast<std::uint32_t>(slots.size()));
                }
            }
        } else if (s->kind == SymbolKind::Pou && s->scope != nullptr &&
                   (s->pouKind == ast::PouKind::FunctionBlock || s->pouKind == ast::PouKind::TestFunctionBlock)) {
            fbs.push_back(s);
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

// The METHOD named `name` in the base-most FB of `fb`'s EXTENDS chain that declares one: the
// key of the dispatch slot shared by every override of it.
const Symbol* rootMethod(const Symbol* fb, std::string_view name) {
    const Symbol* root = nullptr;
    for (int depth = 0; fb != nullptr && depth < 64; ++depth, fb = fb->base) {
        const Symbol* m = fb->scope != nullptr ? fb->scope->findLocal(name) : nullptr;
        if (m != nullptr && m->kind == SymbolKind::Pou && m->pouKind == ast::PouKind::Method) {
            root = m;
        }
    }
    return root;
}

} // namespace

// Interface prototypes first, then one slot per overridden method family, so that every table
// is sized before the first is written.
void Generator::numberSlots() {
    if (interfaceSlotsNumbered_) {
        return;
    }
    interfaceSlotsNumbered_ = true;
    std::vector<const Symbol*> fbs;
    numberScope(model_.global.get(), interfaceSlots_, fbs, 0);
    for (const Symbol* fb : fbs) {
        if (fb->base == nullptr) {
            continue;
        }
        for (const Symbol* m : fb->scope->symbols()) {
            if (m->kind != SymbolKind::Pou || m->pouKind != ast::PouKind::Method ||
                findMethod(fb->base, m->name) == nullptr) {
                continue;
            }
            interfaceSlots_.emplace(rootMethod(fb->base, m->name), static_cast<std::uint32_t>(interfaceSlots_.size()));
            const Symbol* a = fb->base;
            for (int depth = 0; a != nullptr && depth < 64; ++depth, a = a->base) {
                overridden_.emplace(a, upperName(m->name));
            }
        }
    }
}

std::uint32_t Generator::interfaceSlot(const Symbol* prototype) {
    numberSlots();
    if (auto it = interfaceSlots_.find(prototype); it != interfaceSlots_.end()) {
        return it->second;
    }
    // Not reachable from the global scope (a declaration error elsewhere): a fresh slot that no
    // table fills, so a call through it traps InvalidCall instead of calling the wrong method.
    return interfaceSlots_.emplace(prototype, static_cast<std::uint32_t>(interfaceSlots_.size())).first->second;
}

std::optional<std::uint32_t> Generator::virtualSlot(const Symbol* method, const Symbol* fb) {
    numberSlots();
    if (fb == nullptr || method == nullptr || overridden_.count({fb, upperName(method->name)}) == 0) {
        return std::nullopt;
    }
    auto it = interfaceSlots_.find(rootMethod(fb, method->name));
    if (it == interfaceSlots_.end()) {
        return std::nullopt;
    }
    return it->second;
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
    numberSlots();
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
    const std::vector<Value> values = frameArguments(e, target, binding);
    const std::uint32_t c = bindFrameArguments(layout, e, target, binding, values);
    setOwnEnable(e, [&](const Symbol* m) {
        return Loc{false, Operand{bc::address(bc::kTagFrame, c + layout.offsets.at(m)), false}, 0, m->type};
    });
    debugAt(e.span);
    emit(Opcode::CALL_IFACE, {self, imm(g_.interfaceSlot(target)), imm(c)});
    return frameCallResult(layout, e, target, binding, c, want, dest);
}

} // namespace takt::compiler::codegen
