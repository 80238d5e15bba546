#pragma once
// Compiles one ST source, runs its program instances cycle by cycle on a virtual clock and reads
// variables through the module's variable table (the language tests of the back end).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/compile_text.h"
#include "takt/compiler/names.h"
#include "takt/engine/values.h"
#include "takt/vm/vm.h"

namespace takt::compiler::testing {

class StRunner {
public:
    // Through the one compile path (compileProgram): the VM runs what program.stbc holds.
    explicit StRunner(const std::string& text, CodegenOptions options = {}, Dialect dialect = Dialect::Codesys) {
        compiled_ = takt::test::compileText(text, options, dialect);
        ok = compiled_.program.ok();
        verifyMessage = compiled_.program.failure;
        if (ok) {
            module_ = *compiled_.program.module;
            image_.resize(vm::Vm::requiredImageSize(module_));
            vm_ = std::make_unique<vm::Vm>(module_, image_);
            vm_->resetImage();
            initTrap = vm_->runInit();
        }
    }

    [[nodiscard]] std::string errors() const { return compiled_.rendered() + verifyMessage; }

    // One cycle: every program instance in order; dtMs of virtual time per cycle.
    vm::Trap cycle(std::int64_t dtMs = 1) {
        vm_->setCycleTime(now_);
        now_ += dtMs * 1'000'000;
        for (const auto& p : module_.programs) {
            if (module_.pous[p.pou].kind != bytecode::PouKind::Program) {
                continue;
            }
            const vm::Trap t = vm_->runPou(p.pou, p.offset);
            if (t != vm::Trap::None) {
                return t;
            }
        }
        return vm::Trap::None;
    }

    // A variable of the table, or else a member path (`Main.Fill.X`, an SFC step's flag) as
    // var.read resolves it.
    template <typename T> T get(std::string_view path) const {
        for (const auto& v : module_.variables) {
            if (sameName(v.path, path)) {
                T out{};
                std::memcpy(&out, image_.data() + v.offset, sizeof(T));
                return out;
            }
        }
        engine::VarRef ref;
        std::string why;
        if (engine::resolvePath(module_, path, ref, why)) {
            T out{};
            std::memcpy(&out, image_.data() + ref.offset, sizeof(T));
            return out;
        }
        ADD_FAILURE() << "no variable " << path << ": " << why;
        return T{};
    }

    template <typename T> void set(std::string_view path, T value) {
        for (const auto& v : module_.variables) {
            if (sameName(v.path, path)) {
                std::memcpy(image_.data() + v.offset, &value, sizeof(T));
                return;
            }
        }
        ADD_FAILURE() << "no variable " << path;
    }

    // The data image cell the engine copies a process image address to/from ("%IX0.1").
    template <typename T> T io(std::string_view address) const {
        for (const auto& b : module_.io) {
            if (sameName(b.address, address)) {
                T out{};
                std::memcpy(&out, image_.data() + b.imageOffset, sizeof(T));
                return out;
            }
        }
        ADD_FAILURE() << "no I/O binding " << address;
        return T{};
    }
    template <typename T> void setIo(std::string_view address, T value) {
        for (const auto& b : module_.io) {
            if (sameName(b.address, address)) {
                std::memcpy(image_.data() + b.imageOffset, &value, sizeof(T));
                return;
            }
        }
        ADD_FAILURE() << "no I/O binding " << address;
    }

    // The bytes of a variable, and every byte of the call stack set to `b` (scratch: a program
    // that carries a stack byte it did not write into a variable shows as that byte there).
    [[nodiscard]] std::vector<std::uint8_t> bytes(std::string_view path) const {
        for (const auto& v : module_.variables) {
            if (sameName(v.path, path)) {
                return {image_.begin() + v.offset, image_.begin() + v.offset + v.size};
            }
        }
        ADD_FAILURE() << "no variable " << path;
        return {};
    }
    void fillStack(std::uint8_t b) {
        const std::size_t state = std::size_t{module_.constSize} + module_.globalSize;
        std::fill(image_.begin() + static_cast<std::ptrdiff_t>(state), image_.end(), b);
    }

    [[nodiscard]] const vm::TrapInfo& lastTrap() const { return vm_->lastTrap(); }
    [[nodiscard]] vm::Vm& vm() { return *vm_; }

    bool ok = false;
    vm::Trap initTrap = vm::Trap::None;
    std::string verifyMessage;
    const bytecode::Module& module() const { return module_; }

private:
    takt::test::CompiledText compiled_;
    bytecode::Module module_;
    std::vector<std::uint8_t> image_;
    std::unique_ptr<vm::Vm> vm_;
    std::int64_t now_ = 0;
};

// The index of the POU named `name` (any case), and the image offset of the variable at `path`
// in the module's table; a test failure and kNone when there is none.
inline std::uint32_t pouNamed(const bytecode::Module& m, std::string_view name) {
    for (std::uint32_t i = 0; i < m.pous.size(); ++i) {
        if (sameName(m.pous[i].name, name)) {
            return i;
        }
    }
    ADD_FAILURE() << "no POU " << name;
    return bytecode::kNone;
}

inline std::uint32_t offsetOf(const bytecode::Module& m, std::string_view path) {
    for (const bytecode::VarEntry& v : m.variables) {
        if (sameName(v.path, path)) {
            return v.offset;
        }
    }
    ADD_FAILURE() << "no variable " << path;
    return bytecode::kNone;
}

} // namespace takt::compiler::testing
