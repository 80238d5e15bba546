#pragma once
// Maps between Modbus tables and the process image, shared by the modbus-tcp client and the
// modbus-server.
//
// Byte order in the image: the process image is little-endian like the VM's data image (the
// engine memcpys %IW bytes straight into an INT variable). A register is a 16-bit value, and
// it lands as that value: register 0x1234 mapped to %IW0 makes `x AT %IW0 : INT` read 16#1234
// (image bytes 34 12). Consecutive registers take consecutive words, so a DINT/REAL spanning
// two registers has the lower-numbered register in its low word; swap words in ST for a peer
// that puts the high word first. Bits (coils, discrete inputs) take consecutive image bits:
// coil `start + k` is bit k after the map's %X address (byte = k / 8 further on, LSB first).
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "driver_support.h"

namespace takt::io::detail {

enum class ModbusTable : std::uint8_t { Coils, DiscreteInputs, InputRegisters, HoldingRegisters };
[[nodiscard]] std::string_view tableName(ModbusTable t);
[[nodiscard]] inline bool isBitTable(ModbusTable t) {
    return t == ModbusTable::Coils || t == ModbusTable::DiscreteInputs;
}

struct ModbusMap {
    ModbusTable table = ModbusTable::HoldingRegisters;
    std::uint32_t start = 0; // first Modbus address (0-based, as on the wire)
    std::uint32_t count = 0; // bits or registers
    ImageAddress address;    // where table[start] lands in the image

    [[nodiscard]] BitExtent extent() const;
};

// Reads `key = [{<tableKey> = "…", start, count, address}]`. `tables` are the allowed tables
// (in the order the error lists them), `areas` the allowed image areas for `address`.
// Appends to `out`; errors name "prefix.key[i].field".
[[nodiscard]] bool readModbusMaps(ParamReader& params, std::string_view key, std::string_view tableKey,
                                  std::span<const ModbusTable> tables, std::span<const Area> areas, bool byteAddressing,
                                  std::vector<ModbusMap>& out);

// Overlap check of one side's maps in image space; names the two entries.
[[nodiscard]] bool checkNoOverlap(ParamReader& params, std::string_view key, const std::vector<ModbusMap>& maps);

// Table values <-> image. `bits` holds one byte 0/1 per bit (libmodbus's layout), `regs` one
// uint16 per register; both start at the map's `start`. Image bytes past the view are skipped.
void bitsToImage(const ModbusMap& m, std::span<const std::uint8_t> bits, std::span<std::uint8_t> area);
void imageToBits(const ModbusMap& m, std::span<const std::uint8_t> area, std::span<std::uint8_t> bits);
void regsToImage(const ModbusMap& m, std::span<const std::uint16_t> regs, std::span<std::uint8_t> area);
void imageToRegs(const ModbusMap& m, std::span<const std::uint8_t> area, std::span<std::uint16_t> regs);

} // namespace takt::io::detail
