#pragma once
#include <string>

#include "takt/engine/program.h"

namespace takt::agent {

// "ASSERT_EQUAL failed: expected 4, actual 3: <message>" for a fault from a failed ASSERT_*.
[[nodiscard]] std::string describeAssertion(const engine::LoadedProgram& program, const engine::AssertionDetail& d);

} // namespace takt::agent
