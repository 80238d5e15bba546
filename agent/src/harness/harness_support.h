#pragma once
// Private pieces of the harness: direct-address parsing.
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "rpc/method_table.h"
#include "takt/agent/harness.h"
#include "takt/bytecode/address.h"
#include "takt/bytecode/module.h"
#include "takt/compiler/sema.h"

namespace takt::agent {

struct Harness::CommandFacts {
    rpc::MethodFacts facts;
};

} // namespace takt::agent

namespace takt::agent::detail {

// A parsed direct address ("%IX0.1", "%QW2", "%MD0").
struct DirectAddress {
    bytecode::IoArea area = bytecode::IoArea::Input;
    bytecode::AddressWidth width = bytecode::AddressWidth::Bit;
    std::uint32_t byteOffset = 0; // address mode applied
    std::uint8_t bit = 0;
    std::uint32_t size = 0; // bytes; 0 for a bit
};

// False with `error` for anything but a complete, fully specified address.
[[nodiscard]] bool parseDirectAddress(std::string_view text, compiler::AddressMode mode, DirectAddress& out,
                                      std::string& error);

} // namespace takt::agent::detail
