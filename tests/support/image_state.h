#pragma once
// What the execution tiers must agree on byte for byte: the state part of a program's image
// (LoadedProgram::stateSize). The stack after it is scratch, which is only sound while no
// program reads a scratch byte it did not write in the same call; scribbleStack tests that by
// filling the stack with a different pattern on each tier before every cycle.
#include <cstdint>
#include <cstring>
#include <vector>

#include "takt/engine/program.h"

namespace takt::test {

inline std::vector<std::uint8_t> stateOf(const engine::LoadedProgram& p) {
    return {p.image(), p.image() + p.stateSize()};
}

inline void scribbleStack(engine::LoadedProgram& p, std::uint8_t pattern) {
    std::memset(p.image() + p.stateSize(), pattern, p.imageSize() - p.stateSize());
}

} // namespace takt::test
