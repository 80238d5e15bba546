#include "harness/harness_support.h"

#include <fmt/format.h>

#include "takt/bytecode/address.h"

namespace takt::agent::detail {

bool parseDirectAddress(std::string_view text, compiler::AddressMode mode, DirectAddress& out, std::string& error) {
    // One parser and one address-mode rule for every layer (takt/bytecode/address.h).
    bytecode::DirectAddress a;
    if (!bytecode::parseDirectAddress(text, a, error)) {
        return false;
    }
    const std::uint64_t offset = a.byteOffset(mode == compiler::AddressMode::Byte);
    if (offset > 0xFFFFFFU) {
        error = "address " + std::string(text) + " lies beyond the largest process image";
        return false;
    }
    out.area = a.area;
    out.width = a.width;
    out.byteOffset = static_cast<std::uint32_t>(offset);
    out.bit = a.bit;
    out.size = a.isBit() ? 0 : a.bytes();
    return true;
}

} // namespace takt::agent::detail
