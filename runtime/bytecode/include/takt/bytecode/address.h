#pragma once
// IEC 61131-3 direct addresses of the process image (%IX0.1, %QW3, %MD2) as configuration files
// name them: io.toml safe state, driver maps, board files. One parser and one address-mode rule
// for every layer, so the runtime and the compiler never disagree about which bytes %QW3 names.
#include <cstdint>
#include <string>
#include <string_view>

#include "takt/bytecode/module.h"

namespace takt::bytecode {

enum class AddressWidth : std::uint8_t { Bit, Byte, Word, DWord, LWord };

// Bytes an address of this width covers; 1 for a bit (the byte holding it).
[[nodiscard]] constexpr std::uint32_t addressWidthBytes(AddressWidth w) noexcept {
    switch (w) {
    case AddressWidth::Word: return 2;
    case AddressWidth::DWord: return 4;
    case AddressWidth::LWord: return 8;
    default: return 1;
    }
}

// The width of a byte-aligned address covering `bytes` bytes: 1 BYTE, 2 WORD, 4 DWORD, else LWORD.
[[nodiscard]] constexpr AddressWidth addressWidthOfBytes(std::uint32_t bytes) noexcept {
    switch (bytes) {
    case 1: return AddressWidth::Byte;
    case 2: return AddressWidth::Word;
    case 4: return AddressWidth::DWord;
    default: return AddressWidth::LWord;
    }
}

// The elementary kind an address of this width reads and writes as (%IX BOOL, %IB BYTE, %IW
// WORD, %ID DWORD, %IL LWORD): the bit-string type of its size, whatever variable sits there.
[[nodiscard]] constexpr ValueKind addressValueKind(AddressWidth w) noexcept {
    switch (w) {
    case AddressWidth::Byte: return ValueKind::Byte;
    case AddressWidth::Word: return ValueKind::Word;
    case AddressWidth::DWord: return ValueKind::DWord;
    case AddressWidth::LWord: return ValueKind::LWord;
    case AddressWidth::Bit: break;
    }
    return ValueKind::Bool;
}

// The first byte of an address with index `index` and `widthBytes` bytes. Word mode (CODESYS,
// takt's default): %QW3 starts at byte 6, %QD1 at byte 4. Byte mode (S7 / truST,
// runtime.toml [build] address_mode = "byte"): the index is the byte offset. Bit and byte
// addresses name their byte directly in both modes.
[[nodiscard]] constexpr std::uint64_t addressByteOffset(std::uint32_t index, std::uint32_t widthBytes,
                                                        bool byteAddressing) noexcept {
    return byteAddressing || widthBytes <= 1 ? std::uint64_t{index} : std::uint64_t{index} * widthBytes;
}

struct DirectAddress {
    IoArea area = IoArea::Input;
    AddressWidth width = AddressWidth::Bit;
    std::uint32_t index = 0; // byte number of a bit address, else the word/dword/... number
    std::uint8_t bit = 0;    // 0..7 for a bit address

    [[nodiscard]] bool isBit() const noexcept { return width == AddressWidth::Bit; }
    [[nodiscard]] std::uint32_t bytes() const noexcept { return addressWidthBytes(width); }
    [[nodiscard]] std::uint64_t byteOffset(bool byteAddressing) const noexcept {
        return addressByteOffset(index, bytes(), byteAddressing);
    }
};

// An address as written, in the one grammar every layer reads (ST declarations and expressions,
// io.toml, the harness, `takt ctl io.*`): "%IX0.1", "%I0.1" (no size letter: a bit), "%QB2",
// "%IW3", "%QD1", "%ML0", letters in any case; "%IX1" is "%IX1.0" (IronPLC, CODESYS's optional bit
// number); "%IW0.0", "%ID1.0.0" (OpenPLC's EtherCAT mapping, CODESYS's module addresses) are
// "%IW0" and "%ID1", since takt's process image is flat and every number after the first must
// be 0; "%I*", "%QW*" are the wildcards of an ST declaration VAR_CONFIG completes.
struct WrittenAddress {
    DirectAddress address;  // the place; only the area and the width for a wildcard
    bool sizeLetter = true; // false: "%I0.1", "%I*" (the width is then Bit)
    bool wildcard = false;
};
[[nodiscard]] bool parseWrittenAddress(std::string_view text, WrittenAddress& out, std::string& error);

// A complete address (parseWrittenAddress without the wildcards, which name no place). On
// failure returns false and sets `error` to a sentence naming the text.
[[nodiscard]] bool parseDirectAddress(std::string_view text, DirectAddress& out, std::string& error);

// The canonical spelling, e.g. "%QX0.1", "%IW3".
[[nodiscard]] std::string formatDirectAddress(const DirectAddress& a);

} // namespace takt::bytecode
