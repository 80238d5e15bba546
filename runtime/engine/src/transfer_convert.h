#pragma once
// The type rules of an online change (transfer.h): how one value of an old type becomes a value
// of a new type, as memcpy runs and precomputed conversions appended to a plan.
#include <string>
#include <vector>

#include "takt/engine/transfer.h"

namespace takt::engine::detail {

// What happened to one value (a variable, or an array's elements together).
struct ConvertResult {
    TransferOutcome outcome = TransferOutcome::Kept;
    std::string reason;
    std::vector<std::string> lostValues; // ENUM values that no longer exist
};

class Converter {
public:
    Converter(const bytecode::Module& from, const bytecode::Module& to, TransferPlan& plan)
        : from_(from), to_(to), plan_(plan) {}

    // One variable at `path`: appends its report entries (one, or one per member of a STRUCT or
    // FB instance whose type changed) and its copies and conversions.
    void variable(const std::string& path, std::uint32_t fromType, std::uint32_t fromOffset, std::uint32_t toType,
                  std::uint32_t toOffset);

    // The value rules with no entries of their own; conversions name report entry `entry`.
    ConvertResult value(std::uint32_t fromType, std::uint32_t fromOffset, std::uint32_t toType, std::uint32_t toOffset,
                        std::uint32_t entry);

    // "INT", "State(Idle, Fill, Heat)" — an ENUM with its values when both sides share the name.
    [[nodiscard]] static std::string describe(const bytecode::Module& m, std::uint32_t type, bool withValues);

private:
    [[nodiscard]] bool composite(std::uint32_t fromType, std::uint32_t toType) const;
    ConvertResult enumeration(const bytecode::TypeDesc& o, std::uint32_t fromOffset, const bytecode::TypeDesc& n,
                              std::uint32_t toOffset, std::uint32_t entry);
    ConvertResult elementary(const bytecode::TypeDesc& o, std::uint32_t fromOffset, const bytecode::TypeDesc& n,
                             std::uint32_t toOffset);
    ConvertResult array(const bytecode::TypeDesc& o, std::uint32_t fromOffset, const bytecode::TypeDesc& n,
                        std::uint32_t toOffset, std::uint32_t entry);
    ConvertResult members(const bytecode::TypeDesc& o, std::uint32_t fromOffset, const bytecode::TypeDesc& n,
                          std::uint32_t toOffset, std::uint32_t entry);
    std::uint32_t addEntry(TransferEntry e);

    const bytecode::Module& from_;
    const bytecode::Module& to_;
    TransferPlan& plan_;
};

// Field names compare case-insensitively, like every IEC identifier.
[[nodiscard]] bool sameName(std::string_view a, std::string_view b);

} // namespace takt::engine::detail
