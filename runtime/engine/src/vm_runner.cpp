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

void VmRunner::attach(LoadedProgram& program) {
    if (prepared_ == &program && next_ != nullptr) {
        // Online change: the machine was built off the cycle; the old one is kept in next_ so
        // it is not freed on the scan thread.
        vm_.swap(next_);
        prepared_ = nullptr;
        vm_->setAbortFlag(abort_);
    } else {
        vm_ = std::make_unique<vm::Vm>(program.module(), std::span<std::uint8_t>(program.image(), program.imageSize()));
        vm_->setBudget(budget_);
        vm_->setAbortFlag(abort_);
    }
    attached_ = &program;
}

void VmRunner::prepare(LoadedProgram& program) {
    next_ = std::make_unique<vm::Vm>(program.module(), std::span<std::uint8_t>(program.image(), program.imageSize()));
    next_->setBudget(budget_);
    next_->setAbortFlag(abort_);
    prepared_ = &program;
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
