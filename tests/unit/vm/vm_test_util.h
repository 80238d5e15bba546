#pragma once
// A tiny assembler and a one-program harness for VM tests: programs are written by hand as
// opcode + operand words, run in both dispatch modes (computed goto and switch).
#include "vm_internal.h"

#include "takt/bytecode/module.h"
#include "takt/bytecode/opcodes.h"
#include "takt/vm/debug.h"
#include "takt/vm/vm.h"

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace takt::vm::test {

using bytecode::Opcode;

// Data address operands.
inline std::uint32_t abs(std::uint32_t off) {
    return bytecode::address(bytecode::kTagAbsolute, off);
}
inline std::uint32_t self(std::uint32_t off) {
    return bytecode::address(bytecode::kTagThis, off);
}
inline std::uint32_t fr(std::uint32_t off) {
    return bytecode::address(bytecode::kTagFrame, off);
}
inline std::uint32_t imm(std::int32_t v) {
    return static_cast<std::uint32_t>(v);
}

class Asm {
public:
    // Emits one instruction; a 64-bit immediate is given as two words (lo(), hi()).
    std::uint32_t op(Opcode o, std::initializer_list<std::uint32_t> operands = {}) {
        const std::uint32_t at = here();
        EXPECT_EQ(operands.size() + 1, bytecode::instructionLength(o)) << bytecode::opcodeName(o);
        code.push_back(static_cast<std::uint32_t>(o));
        code.insert(code.end(), operands.begin(), operands.end());
        return at;
    }
    [[nodiscard]] std::uint32_t here() const { return static_cast<std::uint32_t>(code.size()); }
    // Sets the jump target word `word` (operand index) of the instruction at `at`.
    void patch(std::uint32_t at, std::uint32_t operand, std::uint32_t target) { code[at + 1 + operand] = target; }

    static std::uint32_t lo(std::int64_t v) { return static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)); }
    static std::uint32_t hi(std::int64_t v) { return static_cast<std::uint32_t>(static_cast<std::uint64_t>(v) >> 32); }

    std::vector<std::uint32_t> code;
};

// Image: [0, 64) constants (0..7 unused), [64, 64 + 1024) globals with the program instance at
// kInst, then the stack.
inline constexpr std::uint32_t kConst = 64;
inline constexpr std::uint32_t kInst = 64;
inline constexpr std::uint32_t kGlobals = 1024;
inline constexpr std::uint32_t kStack = 4096;

struct TestProgram {
    bytecode::Module module;
    std::vector<std::uint8_t> image;
    Vm::Resolved resolved;
    TrapInfo trap;
    std::int64_t nowNs = 0;
    std::int64_t wallNs = 0; // NOW_DT(), RTC
    std::uint64_t budget = 0;
    const std::atomic<bool>* abort = nullptr;
    Debugger* debugger = nullptr; // set: runs take the loop that looks the stop map up
    bool plainLoop = false;       // with a debugger, the loop without stops (Vm::run's when nothing is armed)

    TestProgram() {
        module.constSize = kConst;
        module.globalSize = kGlobals;
        module.stackSize = kStack;
        image.assign(kConst + kGlobals + kStack, 0);
        bytecode::TypeDesc programType;
        programType.kind = bytecode::ValueKind::Program;
        programType.name = "Main";
        programType.size = kGlobals;
        module.types.push_back(programType);
        bytecode::PouEntry main;
        main.name = "Main";
        main.kind = bytecode::PouKind::Program;
        main.code = 0;
        main.frameSize = 256;
        main.instanceType = 0;
        module.pous.push_back(main);
    }

    // The program body is pou 0; further POUs are appended by the test.
    void setMain(const Asm& a) {
        module.code = a.code;
        module.pous[0].codeEnd = static_cast<std::uint32_t>(module.code.size());
    }

    Trap run(bool useSwitch, std::uint32_t pou = 0) {
        resolveModule(module, resolved);
        trap = TrapInfo{};
        RunState rs{&module, &resolved, image.data(), static_cast<std::uint32_t>(image.size()), nowNs, wallNs, budget,
                    abort,   &trap,     debugger};
        const std::uint32_t stackBase = kConst + kGlobals;
        // As Vm::run picks the loop: breakpoints alone, the plain loop on the patched code; else the
        // loop that can halt.
        if (debugger != nullptr && !plainLoop && debugger->armed() && debugger->plainCode() != nullptr) {
            rs.code = debugger->plainCode();
            return useSwitch ? execute<true>(rs, module.pous[pou].code, kInst, stackBase)
                             : execute<false>(rs, module.pous[pou].code, kInst, stackBase);
        }
        if (debugger != nullptr && !plainLoop) {
            return useSwitch ? execute<true, true>(rs, module.pous[pou].code, kInst, stackBase)
                             : execute<false, true>(rs, module.pous[pou].code, kInst, stackBase);
        }
        return useSwitch ? execute<true>(rs, module.pous[pou].code, kInst, stackBase)
                         : execute<false>(rs, module.pous[pou].code, kInst, stackBase);
    }

    template <typename T> T get(std::uint32_t instOff) const {
        T v;
        std::memcpy(&v, image.data() + kInst + instOff, sizeof(T));
        return v;
    }
    template <typename T> void set(std::uint32_t instOff, T v) {
        std::memcpy(image.data() + kInst + instOff, &v, sizeof(T));
    }
    template <typename T> void setAbs(std::uint32_t off, T v) { std::memcpy(image.data() + off, &v, sizeof(T)); }
    void setString(std::uint32_t instOff, const std::string& s) {
        std::memcpy(image.data() + kInst + instOff, s.c_str(), s.size() + 1);
    }
    [[nodiscard]] std::string getString(std::uint32_t instOff) const {
        return std::string(reinterpret_cast<const char*>(image.data() + kInst + instOff));
    }
};

// Runs every test in both dispatch modes.
class DispatchTest : public ::testing::TestWithParam<bool> {
protected:
    [[nodiscard]] bool useSwitch() const { return GetParam(); }
};

#define TAKT_VM_BOTH_DISPATCH_MODES(suite)                                                                             \
    INSTANTIATE_TEST_SUITE_P(Dispatch, suite, ::testing::Values(false, true),                                          \
                             [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Switch" : "Goto"; })

} // namespace takt::vm::test
