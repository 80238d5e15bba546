#include "takt/engine/program.h"

#include <algorithm>
#include <cstring>

namespace takt::engine {

LoadedProgram::LoadedProgram(std::shared_ptr<const bytecode::Module> module, std::string hash)
    : module_(std::move(module)), hash_(std::move(hash)) {
    const bytecode::Module& m = *module_;
    stacks_ = m.tasks.size() >= 2 ? 1 + static_cast<std::uint32_t>(m.tasks.size()) : 1;
    image_.assign(static_cast<std::size_t>(m.constSize) + m.globalSize + std::size_t{stacks_} * m.stackSize, 0);
    runnerStates_.resize(stacks_);
    stops_ = std::make_unique<vm::StopMap>(m);
    resetToInitialImage();
}

void LoadedProgram::resetToInitialImage() {
    const bytecode::Module& m = *module_;
    std::size_t n = std::min(m.initImage.size(), image_.size());
    if (n > 0) {
        std::memcpy(image_.data(), m.initImage.data(), n);
    }
    std::fill(image_.begin() + static_cast<std::ptrdiff_t>(n), image_.end(), std::uint8_t{0});
}

void LoadedProgram::prepareWarmRestart() {
    warmPlan_ = computeTransferPlan(*module_, *module_, true);
    scratch_.assign(image_.size(), 0);
}

FaultReport describeFault(const bytecode::Module& m, const Fault& fault) {
    FaultReport r;
    r.message = fault.message;
    if (fault.pou < m.pous.size()) {
        r.pou = m.pous[fault.pou].name;
    }
    if (fault.codeOffset != bytecode::kNone && !m.debug.empty()) {
        // The last entry at or before the faulting instruction holds its position.
        auto it = std::upper_bound(m.debug.begin(), m.debug.end(), fault.codeOffset,
                                   [](std::uint32_t off, const bytecode::DebugEntry& e) { return off < e.codeOffset; });
        if (it != m.debug.begin()) {
            const bytecode::DebugEntry& e = *(it - 1);
            if (e.file < m.files.size()) {
                r.path = m.files[e.file];
            }
            r.line = e.line;
            r.column = e.column;
        }
    }
    return r;
}

} // namespace takt::engine
