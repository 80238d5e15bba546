#include "takt/engine/vm_runner.h"

#include <limits>
#include <span>
#include <string>

#include "takt/bytecode/opcodes.h"
#include "takt/native/native.h"
#include "takt/vm/vm.h"

namespace takt::engine {
namespace {

void fill(Fault& fault, vm::Trap trap, std::uint32_t pou, std::uint32_t codeOffset) {
    fault.message = std::string(vm::trapMessage(trap));
    fault.pou = pou;
    fault.codeOffset = codeOffset;
    fault.assertion = AssertionDetail{};
}

bool report(const vm::Vm& machine, vm::Trap trap, Fault& fault) {
    if (trap == vm::Trap::None) {
        return true;
    }
    const vm::TrapInfo& info = machine.lastTrap();
    fill(fault, trap, info.pou, info.codeOffset);
    if (trap == vm::Trap::AssertionFailed) {
        fault.assertion =
            AssertionDetail{true, info.assertA, info.assertB, info.assertMessage, info.assertFormat, info.assertKind};
    }
    return false;
}

const std::atomic<bool> kNeverAbort{false};

std::uint32_t instanceBytes(const bytecode::Module& module, std::uint32_t pou) {
    const std::uint32_t type = module.pous[pou].instanceType;
    return type < module.types.size() ? module.types[type].size : 0;
}

// Why a program runs on the interpreter although native was asked for.
std::string fallbackStatus(const LoadedProgram& program, const native::CompileResult& result) {
    if (result.unsupportedPc == bytecode::kNone) {
        return "interpreter (native: " + result.error + ")";
    }
    const bytecode::Module& module = program.module();
    Fault at;
    at.pou = native::pouContaining(module, result.unsupportedPc);
    at.codeOffset = result.unsupportedPc;
    const FaultReport where = program.describe(at);
    std::string text = "interpreter (native: unsupported ";
    text += result.unsupportedOp < bytecode::kOpcodeCount ? bytecode::kOpcodeInfo[result.unsupportedOp].name
                                                          : std::string_view("opcode");
    text += " at " + (where.pou.empty() ? std::string("?") : where.pou);
    if (where.line != 0) {
        text += ":" + std::to_string(where.line);
    }
    return text + ")";
}

} // namespace

bool parseExecution(std::string_view text, Execution& out) {
    if (text == "interpreter") {
        out = Execution::Interpreter;
        return true;
    }
    if (text == "native") {
        out = Execution::Native;
        return true;
    }
    return false;
}

VmRunner::VmRunner(std::uint64_t budget, Execution execution) : budget_(budget), execution_(execution) {}

VmRunner::~VmRunner() = default;

namespace {
// The machine (and native code) prepare() built for a program. attach() takes them and parks
// the previous ones here instead, so those are freed with this program, off the cycle.
struct VmState final : RunnerState {
    std::unique_ptr<vm::Vm> machine;
    std::unique_ptr<native::CompiledModule> native;
    std::string status;
    double compileMs = 0;
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
    native_.swap(state->native);
    {
        const std::lock_guard<std::mutex> lock(statusMutex_);
        status_.swap(state->status);
        compileMs_ = state->compileMs;
    }
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
    state->status = "interpreter";
    if (execution_ == Execution::Native) {
        native::CompileResult compiled = native::compile(program.module());
        state->compileMs = compiled.compileMs;
        if (compiled.code != nullptr) {
            state->native = std::move(compiled.code);
            state->status = "native";
        } else {
            state->status = fallbackStatus(program, compiled);
        }
    }
    program.setRunnerState(std::move(state));
}

std::string VmRunner::executionStatus() const {
    const std::lock_guard<std::mutex> lock(statusMutex_);
    return status_;
}

double VmRunner::nativeCompileMs() const {
    const std::lock_guard<std::mutex> lock(statusMutex_);
    return compileMs_;
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
    if (native_ != nullptr) {
        const bytecode::Module& module = program.module();
        const native::Entry entry = native_->entry(instance.pou);
        const std::uint64_t stackBase = static_cast<std::uint64_t>(module.constSize) + module.globalSize;
        // A body the tier has no entry for, or whose frame does not fit, goes to the interpreter,
        // which reports InvalidCall / StackOverflow as it always has. The compiled code also
        // relies on the instance lying below the stack (translator.cpp: alias scopes).
        if (entry != nullptr && stackBase + module.pous[instance.pou].frameSize <= program.imageSize() &&
            instance.offset + static_cast<std::uint64_t>(instanceBytes(module, instance.pou)) <= stackBase) {
            native::RunContext ctx{budget_ != 0 ? budget_ : std::numeric_limits<std::uint64_t>::max(),
                                   abort_ != nullptr ? abort_ : &kNeverAbort, bytecode::kNone};
            const vm::Trap trap =
                native::trapOf(entry(program.image(), instance.offset, static_cast<std::uint32_t>(stackBase), &ctx));
            if (trap == vm::Trap::None) {
                return true;
            }
            fill(fault, trap, native::pouContaining(module, ctx.pc), ctx.pc);
            return false;
        }
    }
    return report(machine, machine.runPou(instance.pou, instance.offset), fault);
}

} // namespace takt::engine
