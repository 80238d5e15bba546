#pragma once
// The CodeRunner that executes bytecode with the takt VM.
#include <cstdint>
#include <memory>

#include "takt/engine/program.h"

namespace takt::vm {
class Vm;
}

namespace takt::engine {

class VmRunner final : public CodeRunner {
public:
    // `budget`: watchdog ticks (back-edges and calls) per program run; 0 = unlimited.
    explicit VmRunner(std::uint64_t budget = 0);
    ~VmRunner() override;

    bool runInit(LoadedProgram& program, Fault& fault) override;
    bool runProgram(LoadedProgram& program, const bytecode::ProgramInstance& instance, std::int64_t nowNs,
                    Fault& fault) override;
    void attach(LoadedProgram& program) override;
    void prepare(LoadedProgram& program) const override;
    void setAbortFlag(const std::atomic<bool>* flag) override;

private:
    vm::Vm& vmFor(LoadedProgram& program);

    std::uint64_t budget_;
    const std::atomic<bool>* abort_ = nullptr;
    std::unique_ptr<vm::Vm> vm_;
    const LoadedProgram* attached_ = nullptr;
};

} // namespace takt::engine
