#pragma once
// A program as the engine holds it: the verified Module plus the one data image it runs on.
// The image (constants + globals + call stack) is allocated once at load; nothing in a cycle
// allocates. The code that executes POU bodies is behind CodeRunner so the engine's
// scheduling, restart and online-change logic does not depend on how instructions run.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "takt/bytecode/module.h"
#include "takt/engine/transfer.h"
#include "takt/vm/debug.h"

namespace takt::engine {

// A runtime fault as the runner reports it; the engine maps codeOffset through the debug map.
// A failed ASSERT_*: image offsets of the compared values and the message (vm.h TrapInfo).
struct AssertionDetail {
    bool failed = false;
    std::uint32_t a = 0;
    std::uint32_t b = 0;
    std::uint32_t message = 0;
    std::uint32_t format = 0; // bytecode::AssertFormat
    std::uint32_t kind = 0;   // bytecode::AssertKind | kAssertWideMessage
};

struct Fault {
    std::string message;
    AssertionDetail assertion;
    std::uint32_t pou = bytecode::kNone;        // index into Module::pous
    std::uint32_t codeOffset = bytecode::kNone; // faulting instruction (debug map key)
};

// A fault with its source position, as reported to users (PROTOCOLS.md runtime_cycle_error).
struct FaultReport {
    std::string message;
    std::string pou;
    std::string path; // source file
    std::uint32_t line = 0;
    std::uint32_t column = 0;
};

// Source position of a fault in `module` through its debug map.
[[nodiscard]] FaultReport describeFault(const bytecode::Module& module, const Fault& fault);

// What a CodeRunner builds for one program (the VM's machine over its image). The program owns
// it, so it is built off the cycle with the program and freed with it, never on the scan thread.
class RunnerState {
public:
    virtual ~RunnerState() = default;
};

class LoadedProgram {
public:
    // `hash` is the program hash (hex SHA-256 of the container) when known.
    LoadedProgram(std::shared_ptr<const bytecode::Module> module, std::string hash);

    [[nodiscard]] const bytecode::Module& module() const { return *module_; }
    [[nodiscard]] const std::shared_ptr<const bytecode::Module>& modulePtr() const { return module_; }
    [[nodiscard]] const std::string& hash() const { return hash_; }
    [[nodiscard]] std::uint8_t* image() { return image_.data(); }
    [[nodiscard]] const std::uint8_t* image() const { return image_.data(); }
    [[nodiscard]] std::size_t imageSize() const { return image_.size(); }
    // The bytes of the image that are state: the constants and the globals (every variable,
    // program and FB instance). The call stack after them is scratch: no value there outlives the
    // call that wrote it, and the native tier keeps the frames of some PROGRAM and FB bodies in
    // machine registers, so the two tiers leave different bytes there. Retain, online change,
    // forcing and the agent read only state; the one reader of the stack, `takt test` showing a
    // failed assertion's values, reads a frame both tiers keep in the image (the assertion takes
    // its address).
    [[nodiscard]] std::size_t stateSize() const {
        return static_cast<std::size_t>(module_->constSize) + module_->globalSize;
    }

    // Call stacks in the image: one for the base cycle, and one per task when the module has two
    // or more tasks (each may run on a scan thread of its own, scan_loop.h). Stack `slot` starts
    // at stackBase(slot) and is Module::stackSize bytes long.
    [[nodiscard]] std::uint32_t stackCount() const { return stacks_; }
    [[nodiscard]] std::uint32_t stackBase(std::uint32_t slot) const {
        return module_->constSize + module_->globalSize + slot * module_->stackSize;
    }

    // Copies the initial image over constants and globals and clears the stack (cold start;
    // the init code is run by the engine through its runner).
    void resetToInitialImage();

    // The program's breakpoints (takt/vm/debug.h): one stop map per loaded program, so an online
    // change starts with none. Set from any thread; every runner of the program reads it.
    [[nodiscard]] vm::StopMap& stops() const { return *stops_; }

    // Source position of a fault through the debug map (describeFault).
    [[nodiscard]] FaultReport describe(const Fault& fault) const { return describeFault(*module_, fault); }

    // A warm restart keeps the RETAIN variables: the engine saves the image to the scratch
    // copy, cold-starts and copies them back by the RETAIN plan. Both are built here, off the
    // cycle, when the program is loaded or prepared for an online change, so a restart
    // requested at a cycle boundary allocates nothing.
    void prepareWarmRestart();
    [[nodiscard]] const TransferPlan& warmRestartPlan() const { return warmPlan_; }
    [[nodiscard]] std::uint8_t* restartScratch() { return scratch_.data(); }

    // The runner's state for this program (CodeRunner::prepare / attach); null until built. One
    // per stack slot: the runner of a task thread prepares its own (slot < stackCount()).
    [[nodiscard]] RunnerState* runnerState(std::uint32_t slot = 0) const {
        return slot < runnerStates_.size() ? runnerStates_[slot].get() : nullptr;
    }
    void setRunnerState(std::unique_ptr<RunnerState> state, std::uint32_t slot = 0) {
        if (slot < runnerStates_.size()) {
            runnerStates_[slot] = std::move(state);
        }
    }

private:
    std::shared_ptr<const bytecode::Module> module_;
    std::string hash_;
    std::vector<std::uint8_t> image_;
    TransferPlan warmPlan_;
    std::vector<std::uint8_t> scratch_;
    std::vector<std::unique_ptr<RunnerState>> runnerStates_;
    std::uint32_t stacks_ = 1;
    std::unique_ptr<vm::StopMap> stops_;
};

// Executes bytecode on a LoadedProgram's image. The VM implements it; tests use scripted
// runners. `nowNs` is the cycle timestamp (one per cycle; TIME()/timers read it).
class CodeRunner {
public:
    virtual ~CodeRunner() = default;
    // Called off the cycle when `program` becomes the one that runs (load, online change), so
    // per-program set-up never happens inside a cycle.
    virtual void attach(LoadedProgram& program) { (void)program; }
    // Called off the cycle before `program` will be attached by an online change: builds what
    // attach() needs into the program itself (LoadedProgram::runnerState), so the swap stays
    // short and the runner the scan thread uses is not written from another thread.
    virtual void prepare(LoadedProgram& program) const { (void)program; }
    // The watchdog's abort flag (set from another thread): a runner that can stop a run early
    // polls it and returns a fault. Set off the cycle; nullptr clears it.
    virtual void setAbortFlag(const std::atomic<bool>* flag) { (void)flag; }
    // The debugger of the thread this runner runs on (takt/vm/debug.h): while it is armed, runs
    // may halt at a statement; attach() points it at the attached program's stop map. Set off the
    // cycle; nullptr clears it.
    virtual void setDebugger(vm::Debugger* debugger) { (void)debugger; }
    // Runs Module::initCode (if any) after the initial image was copied.
    virtual bool runInit(LoadedProgram& program, Fault& fault) = 0;
    // The start of a cycle of the thread this runner runs on, before setWallClock: on the scan
    // or task thread, between cycles, so the runner may switch what it runs (the native code a
    // background compile finished). Nothing else calls it.
    virtual void cycleBoundary() {}
    // The date and time for the programs of the cycle about to run (NOW_DT(), RTC): called by the
    // engine once per cycle before the first runProgram, on the scan thread.
    virtual void setWallClock(std::int64_t wallNs) { (void)wallNs; }
    // A runner of the same kind for a task on a scan thread of its own: it runs on call stack
    // `slot` (>= 1, LoadedProgram::stackBase) with state of its own, so it may run while this one
    // does. nullptr when the runner cannot (the tasks then share the base cycle). Off the cycle.
    [[nodiscard]] virtual std::unique_ptr<CodeRunner> forTask(std::uint32_t slot) const {
        (void)slot;
        return nullptr;
    }
    // Runs one PROGRAM body on its instance data.
    virtual bool runProgram(LoadedProgram& program, const bytecode::ProgramInstance& instance, std::int64_t nowNs,
                            Fault& fault) = 0;
};

} // namespace takt::engine
