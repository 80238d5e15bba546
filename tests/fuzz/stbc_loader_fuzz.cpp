// libFuzzer target for the program.stbc loader and verifier. Whatever the bytes, loading must
// not crash; and a file that loads and verifies must run clean: 1,000 cycles of every program
// instance (after the cold-start init code) with an instruction budget, under ASan/UBSan. A
// sanitizer report here means the verifier accepted something the VM cannot run safely.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "takt/bytecode/container.h"
#include "takt/bytecode/verifier.h"
#include "takt/vm/vm.h"

namespace {

constexpr int kCycles = 1000;
constexpr std::uint64_t kBudget = 2000;                // back-edges + calls per run
constexpr std::uint64_t kMaxImage = 16u * 1024 * 1024; // keep fuzzing fast, not a limit of the format

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    takt::bytecode::LoadResult loaded = takt::bytecode::deserialize(std::span(data, size));
    if (!loaded.ok()) {
        return 0;
    }
    const takt::bytecode::Module& module = loaded.module;
    if (!takt::bytecode::verify(module).ok()) {
        return 0;
    }
    std::size_t imageSize = takt::vm::Vm::requiredImageSize(module);
    if (imageSize > kMaxImage) {
        return 0;
    }
    std::vector<std::uint8_t> image(imageSize);
    takt::vm::Vm vm(module, image);
    vm.resetImage();
    vm.setBudget(kBudget);
    (void)vm.runInit();
    for (int cycle = 0; cycle < kCycles; ++cycle) {
        vm.setCycleTime(static_cast<std::int64_t>(cycle) * 10'000'000);
        for (const takt::bytecode::ProgramInstance& inst : module.programs) {
            // A trap is a legal outcome (the engine would apply its fault policy); only
            // sanitizer reports are failures.
            (void)vm.runPou(inst.pou, inst.offset);
        }
    }
    return 0;
}
