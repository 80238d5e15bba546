#include "takt/engine/vm_runner.h"

#include <span>
#include <string>

#include "takt/vm/vm.h"

namespace takt::engine {
namespace {

bool report(const vm::Vm& machine, vm::Trap trap, Fault& fault) {
    if (trap == vm::Trap::None) {
        return true;
    }
    const vm::TrapInfo& info = machine.lastTrap();
    fault.message = std::string(vm::trapMessage(trap));
    fault.pou = info.pou;
    fault.codeOffset = info.codeOffset;
    fault.assertion = AssertionDetail{};
    if (trap == vm::Trap::AssertionFailed) {
        fault.assertion =
            AssertionDetail{true, info.assertA, info.assertB, info.assertMessage, info.assertFormat, info.assertKind};
    }
    return false;
}

} // namespace

VmRunner::VmRunner(std::uint64_t budget) : budget_(budget) {}

VmRunner::~VmRunner() = default;

namespace {
// The machine prepare() built for a program. attach() takes it and parks the previous machine
// here instead, so that one is freed with this program, off the cycle.
struct VmState final : RunnerState {
    std::unique_ptr<vm::Vm> machine;
    bool fresh = true; // `machine` is this program's, not yet taken
};
} // namespace

void VmRunner::attach(LoadedProgram& program) {
    auto* state = static_cast<VmState*>(program.runnerState());
    if (state == nullptr || !state->fresh) {
        prepare(program);
        state = static_cast<VmState*>(program.runnerState());
    }
    vm_.swap(state->machine);
    state->fresh = false;
    vm_->setAbortFlag(abort_);
    attached_ = &program;
}

void VmRunner::prepare(LoadedProgram& program) const {
    auto state = std::make_unique<VmState>();
    state->machine =
        std::make_unique<vm::Vm>(program.module(), std::span<std::uint8_t>(program.image(), program.imageSize()));
    state->machine->setBudget(budget_);
    state->machine->setAbortFlag(abort_);
    program.setRunnerState(std::move(state));
}

void VmRunner::setAbortFlag(const std::atomic<bool>* flag) {
    abort_ = flag;
    if (vm_ != nullptr) {
        vm_->setAbortFlag(flag);
    }
}

vm::Vm& VmRunner::vmFor(LoadedProgram& program) {
    if (attached_ != &program || vm_ == nullptr) {
        attach(program);
    }
    return *vm_;
}

bool VmRunner::runInit(LoadedProgram& program, Fault& fault) {
    if (attached_ == &program && vm_ != nullptr) {
        return report(*vm_, vm_->runInit(), fault);
    }
    // Online change prepares the next program while the current one stays attached.
    vm::Vm machine(program.module(), std::span<std::uint8_t>(program.image(), program.imageSize()));
    machine.setBudget(budget_);
    machine.setAbortFlag(abort_);
    return report(machine, machine.runInit(), fault);
}

bool VmRunner::runProgram(LoadedProgram& program, const bytecode::ProgramInstance& instance, std::int64_t nowNs,
                          Fault& fault) {
    vm::Vm& machine = vmFor(program);
    machine.setCycleTime(nowNs);
    return report(machine, machine.runPou(instance.pou, instance.offset), fault);
}

} // namespace takt::engine
