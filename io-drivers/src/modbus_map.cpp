#include "modbus_map.h"

#include <cstring>

#include <fmt/format.h>

namespace takt::io::detail {

std::string_view tableName(ModbusTable t) {
    switch (t) {
    case ModbusTable::Coils: return "coils";
    case ModbusTable::DiscreteInputs: return "discrete_inputs";
    case ModbusTable::InputRegisters: return "input_registers";
    case ModbusTable::HoldingRegisters: return "holding_registers";
    }
    return "?";
}

BitExtent ModbusMap::extent() const {
    BitExtent e;
    e.area = address.area;
    e.first = address.bitPosition();
    e.last = e.first + (isBitTable(table) ? count : std::uint64_t{count} * 16);
    return e;
}

bool readModbusMaps(ParamReader& params, std::string_view key, std::string_view tableKey,
                    std::span<const ModbusTable> tables, std::span<const Area> areas, bool byteAddressing,
                    std::vector<ModbusMap>& out) {
    const toml::array* list = params.tableArray(key);
    if (list == nullptr) {
        return params.ok();
    }
    std::string tableList;
    for (ModbusTable t : tables) {
        tableList += fmt::format("{}\"{}\"", tableList.empty() ? "" : ", ", tableName(t));
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
        const toml::table& entry = *(*list)[i].as_table();
        std::string sub;
        ParamReader r(entry, elementPrefix(params, key, i), sub);
        const std::string_view known[] = {tableKey, "start", "count", "address"};
        ModbusMap m;
        r.onlyKeys(known, "a Modbus map entry");
        const auto table = r.string(tableKey, true);
        if (table) {
            bool found = false;
            for (ModbusTable t : tables) {
                if (tableName(t) == *table) {
                    m.table = t;
                    found = true;
                }
            }
            if (!found) {
                r.fail(tableKey, fmt::format("'{}' is not allowed here (expected one of {})", *table, tableList));
            }
        }
        const auto start = r.integer("start", 0, 65535);
        if (r.ok() && !start) {
            r.fail("start", "missing (required)");
        }
        const auto count = r.integer("count", 1, 65536);
        if (r.ok() && !count) {
            r.fail("count", "missing (required)");
        }
        const auto address = r.string("address", true);
        if (r.ok() && *start + *count > 65536) {
            r.fail("count", fmt::format("start {} + count {} runs past Modbus address 65535", *start, *count));
        }
        if (r.ok()) {
            m.start = static_cast<std::uint32_t>(*start);
            m.count = static_cast<std::uint32_t>(*count);
            std::string why;
            if (!parseImageAddress(*address, byteAddressing, m.address, why)) {
                r.fail("address", why);
            } else if (isBitTable(m.table) != m.address.isBit()) {
                r.fail("address", isBitTable(m.table)
                                      ? fmt::format("{} map to bits: expected a %X address, got '{}'", *table, *address)
                                      : fmt::format("{} map to words: expected a %W/%B/%D/%L address, got '{}'", *table,
                                                    *address));
            } else {
                bool areaOk = false;
                std::string areaList;
                for (Area a : areas) {
                    areaOk = areaOk || a == m.address.area;
                    areaList += fmt::format("{}{}", areaList.empty() ? "" : " or ", areaName(a));
                }
                if (!areaOk) {
                    r.fail("address", fmt::format("'{}' is not in {}", *address, areaList));
                }
            }
        }
        if (!r.ok()) {
            return params.adopt(sub);
        }
        out.push_back(m);
    }
    return true;
}

bool checkNoOverlap(ParamReader& params, std::string_view key, const std::vector<ModbusMap>& maps) {
    std::vector<BitExtent> seen;
    for (std::size_t i = 0; i < maps.size(); ++i) {
        const BitExtent e = maps[i].extent();
        if (const int j = findOverlap(seen, e); j >= 0) {
            return params.fail(fmt::format("{}[{}]", key, i),
                               fmt::format("overlaps {}[{}] in the process image", key, j));
        }
        seen.push_back(e);
    }
    return true;
}

void bitsToImage(const ModbusMap& m, std::span<const std::uint8_t> bits, std::span<std::uint8_t> area) {
    const std::uint64_t base = m.address.bitPosition();
    for (std::size_t k = 0; k < m.count && k < bits.size(); ++k) {
        setBit(area, base + k, bits[k] != 0);
    }
}

void imageToBits(const ModbusMap& m, std::span<const std::uint8_t> area, std::span<std::uint8_t> bits) {
    const std::uint64_t base = m.address.bitPosition();
    for (std::size_t k = 0; k < m.count && k < bits.size(); ++k) {
        bits[k] = getBit(area, base + k) ? 1 : 0;
    }
}

void regsToImage(const ModbusMap& m, std::span<const std::uint16_t> regs, std::span<std::uint8_t> area) {
    for (std::size_t k = 0; k < m.count && k < regs.size(); ++k) {
        const std::size_t at = m.address.byteOffset + 2 * k;
        if (at + 2 > area.size()) {
            return;
        }
        std::memcpy(area.data() + at, &regs[k], 2); // host order == the VM's (little-endian)
    }
}

void imageToRegs(const ModbusMap& m, std::span<const std::uint8_t> area, std::span<std::uint16_t> regs) {
    for (std::size_t k = 0; k < m.count && k < regs.size(); ++k) {
        const std::size_t at = m.address.byteOffset + 2 * k;
        if (at + 2 > area.size()) {
            return;
        }
        std::memcpy(&regs[k], area.data() + at, 2);
    }
}

} // namespace takt::io::detail
