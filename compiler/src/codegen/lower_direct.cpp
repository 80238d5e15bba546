// Direct addresses used as values in statements (`%QX0.1 := %IX0.0;`, `w := %IW2;`). Each
// distinct address gets one hidden cell in the globals region with an I/O binding, exactly as
// a located variable `AT %IX0.0` would: the engine copies inputs (and %M) into it before the
// cycle and outputs (and %M) out of it after, so a direct address reads the value of the cycle
// start and its writes reach the process image at the cycle end.
#include "codegen/lower.h"

namespace takt::compiler::codegen {

std::uint32_t Generator::directAddressCell(const ast::Address& address, const Type* type, Span span) {
    const std::string key = address.text();
    if (auto it = directCells_.find(key); it != directCells_.end()) {
        return it->second;
    }
    if (address.wildcard) {
        error(span, "the wildcard address '" + key + "' cannot be used as a value; declare a variable AT it");
        return 0;
    }
    const Type* t = stripAlias(type);
    const std::uint32_t at = allocGlobal(t->size, t->align);
    out_.globalSize = alignUp(globalEnd_, 8) - out_.constSize;
    bc::IoBinding io;
    io.area = address.area == ast::AddressArea::Input    ? bc::IoArea::Input
              : address.area == ast::AddressArea::Output ? bc::IoArea::Output
                                                         : bc::IoArea::Memory;
    io.byteOffset = addressByteOffset(address, options_.addressMode);
    const bool bit =
        address.size == ast::AddressSize::Bit || (address.size == ast::AddressSize::None && address.indices.size() > 1);
    io.bit = bit && address.indices.size() > 1 ? static_cast<std::uint8_t>(address.indices[1]) : 0;
    io.size = bit ? 0 : t->size;
    io.imageOffset = at;
    io.type = typeIndex(type);
    io.address = key;
    io.path = key;
    out_.io.push_back(std::move(io));
    ioOwners_.push_back({{}, key});
    return directCells_.emplace(key, at).first->second;
}

} // namespace takt::compiler::codegen
