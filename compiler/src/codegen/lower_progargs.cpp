// Program instances with arguments (`PROGRAM p1 WITH t1 : Main (in1 := %IX0.0, out1 => %QX0.0)`).
// Such an instance runs through a small entry POU of its own (same kind and instance type as
// the PROGRAM, so everything that reads ProgramInstance::pou sees a PROGRAM of that type): it
// assigns the inputs from their expressions (evaluated in the resource's scope: globals and
// direct addresses), calls the PROGRAM body on the instance, then writes the outputs to their
// variables, on every run of the instance.
#include "codegen/lower.h"
#include "takt/compiler/names.h"

namespace takt::compiler::codegen {

using bc::Opcode;

void Generator::lowerProgramArguments() {
    for (std::size_t i = 0; i < out_.programs.size() && i < programPous.size(); ++i) {
        const Symbol* program = programPous[i];
        const Symbol* instance = nullptr;
        for (const Symbol* s : model_.programInstances) {
            const auto it = instanceOffset.find(s);
            if (it != instanceOffset.end() && it->second == out_.programs[i].offset && s->instance != nullptr &&
                !s->instance->args.empty()) {
                instance = s;
            }
        }
        if (instance == nullptr) {
            continue;
        }
        bc::PouEntry e;
        e.name = out_.pous[out_.programs[i].pou].name + "@" + instance->name;
        e.kind = bc::PouKind::Program;
        e.instanceType = out_.pous[out_.programs[i].pou].instanceType;
        const auto index = static_cast<std::uint32_t>(out_.pous.size());
        out_.pous.push_back(std::move(e));
        Lowerer(*this, program).lowerProgramEntry(*instance, out_.programs[i].pou, index);
        out_.programs[i].pou = index;
    }
}

void Lowerer::lowerProgramEntry(const Symbol& instance, std::uint32_t body, std::uint32_t index) {
    scope_ = instance.declScope;
    const std::uint32_t entry = here();
    const auto& slots = g_.members(pou_);
    auto member = [&](const Symbol* p) {
        const MemberSlot& slot = slots.at(p);
        return std::pair<Loc, bool>{Loc{false, {bc::address(bc::kTagThis, slot.offset), false}, 0, p->type},
                                    slot.byReference};
    };
    auto param = [&](const ast::Argument& a) -> const Symbol* {
        for (const Symbol* p : pou_->params) {
            if (a.name && a.value && sameName(p->name, a.name->name)) {
                return p;
            }
        }
        return nullptr;
    };
    for (const ast::Argument& a : instance.instance->args) {
        const Symbol* p = param(a);
        if (p == nullptr || a.output) {
            continue;
        }
        span_ = a.span;
        const std::uint32_t mark = frameTop_;
        const auto [l, byRef] = member(p);
        storeInput(l, byRef, *a.value);
        frameTop_ = mark;
    }
    debugAt(instance.span);
    emit(Opcode::CALL_FB, {imm(body), Operand{bc::address(bc::kTagThis, 0), false}, imm(alignUp(frameTop_, 8))});
    for (const ast::Argument& a : instance.instance->args) {
        const Symbol* p = param(a);
        if (p == nullptr || !a.output) {
            continue;
        }
        span_ = a.span;
        const std::uint32_t mark = frameTop_;
        storeOutput(a, member(p).first);
        frameTop_ = mark;
    }
    emit(Opcode::RET, {});
    out_.pous[index].code = entry;
    out_.pous[index].codeEnd = here();
    out_.pous[index].frameSize = alignUp(frameMax_, 8);
}

} // namespace takt::compiler::codegen
