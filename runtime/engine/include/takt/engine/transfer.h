#pragma once
// Online-change transfer plans (ARCHITECTURE.md "Online change"; the user's view is
// docs/runtime-control.md "Online change"): which values of the old data image survive into the
// new one, matched by meaning rather than by layout.
//
// Variables are matched by path (case-insensitive). A variable whose type signature is unchanged
// is copied whole (an FB instance keeps its timers, counters and edge memories). Otherwise:
//   - an ENUM keeps its value by NAME (a value that no longer exists gets the initial value);
//   - STRUCT members and FB instance members (nested, inherited) are kept by name, recursively;
//   - an ARRAY keeps the overlapping index range of every dimension, elements by these rules;
//   - an elementary type converts when every value of the old type exists in the new one
//     (INT -> DINT, UINT -> DINT, REAL -> LREAL, STRING[20] -> STRING[40], BYTE -> WORD); any
//     other change (DINT -> INT, LREAL -> REAL, BOOL -> INT, ...) re-initialises the variable.
// New variables keep their initial values; removed ones are dropped. Every variable path gets one
// report entry saying which of these happened and why.
//
// The plan is computed off the scan thread; applying it is memcpy runs plus a few precomputed
// conversions, with no allocation, so the scan thread runs it at a cycle boundary.
#include <cstdint>
#include <string>
#include <vector>

#include "takt/bytecode/module.h"

namespace takt::engine {

struct TransferCopy {
    std::uint32_t from; // offset in the old image
    std::uint32_t to;   // offset in the new image
    std::uint32_t size;
};

enum class ConvertOp : std::uint8_t {
    Integer,   // two's-complement widening: fromSize bytes (sign- or zero-extended) into toSize bytes
    RealWiden, // REAL -> LREAL
    Text,      // STRING/WSTRING into a longer one: fromSize bytes copied, the rest zeroed
    Enum,      // by value name: enumMap[mapBegin, mapEnd) sorted by old value; no match keeps the initial value
};

// One value whose representation changes. Precomputed off the scan thread.
struct TransferConvert {
    std::uint32_t from;
    std::uint32_t to;
    ConvertOp op;
    std::uint8_t fromSize; // Integer/Enum: 1, 2, 4, 8 (Text: up to the string's bytes, see textSize)
    std::uint8_t toSize;
    bool fromSigned = false;
    std::uint32_t textSize = 0; // Text: old bytes to copy; the new variable's bytes beyond are zeroed
    std::uint32_t textEnd = 0;  // Text: the new variable's size
    std::uint32_t mapBegin = 0;
    std::uint32_t mapEnd = 0;
    std::uint32_t entry = 0; // TransferReport::entries index (an enum value that no longer exists)
};

struct TransferEnumMap {
    std::int64_t from;
    std::int64_t to;
};

enum class TransferOutcome : std::uint8_t { Kept, Converted, Reinitialised, Dropped, Added };
[[nodiscard]] const char* outcomeName(TransferOutcome o);

// One variable path and what the change does to it.
struct TransferEntry {
    std::string path;
    TransferOutcome outcome = TransferOutcome::Kept;
    std::string fromType; // Converted, Reinitialised, Dropped: the old type
    std::string toType;   // Converted, Reinitialised, Added: the new type
    std::string reason;   // Converted, Reinitialised: why (and, for an ENUM, the values it no longer has)
    // An ENUM (or an array of them) whose type lost values: a variable holding one of them at the
    // swap gets the initial value; `lostValues` names them, applying sets `lost`.
    std::vector<std::string> lostValues;
    bool lost = false;
};

[[nodiscard]] TransferEntry transferEntry(std::string path, TransferOutcome outcome, std::string fromType = {},
                                          std::string toType = {});

struct TransferReport {
    std::string oldHash;
    std::string newHash;
    std::uint32_t kept = 0;
    std::uint32_t converted = 0;
    std::uint32_t reinitialised = 0;
    std::uint32_t dropped = 0;
    std::uint32_t added = 0;
    std::vector<TransferEntry> entries; // sorted by path
    std::int64_t pauseNs = 0;           // what the swap cost the cycle thread

    // Whether the change may lose state: something re-initialised or dropped, or an ENUM that lost
    // values (the preview cannot know what the variable will hold at the swap).
    [[nodiscard]] bool losesState() const;
};

struct TransferPlan {
    std::vector<TransferCopy> copies; // sorted, adjacent runs merged
    std::vector<TransferConvert> converts;
    std::vector<TransferEnumMap> enumMap;
    std::vector<std::uint8_t> missed; // per convert: set by applying when an ENUM value had no match
    TransferReport report;
};

// What "same type" means for copying whole: the type's signature, or "name/size" for modules
// without signatures. Retain slot files store it per variable.
[[nodiscard]] std::string typeSignature(const bytecode::Module& module, std::uint32_t type);

// Whether a copy or a conversion reads and writes inside images of these sizes: an online change
// refuses a plan that does not, a RETAIN restore leaves such an entry out.
[[nodiscard]] bool copyInside(const TransferCopy& c, std::size_t fromSize, std::size_t toSize);
[[nodiscard]] bool convertInside(const TransferConvert& c, std::size_t fromSize, std::size_t toSize);

// `retainOnly`: only RETAIN variables are carried over (warm-restart semantics on reload).
[[nodiscard]] TransferPlan computeTransferPlan(const bytecode::Module& from, const bytecode::Module& to,
                                               bool retainOnly = false);

// Executes the memcpy runs and conversions and records in `plan.missed` which ENUM values had no
// match. Both images must be those the plan was computed for. No allocation.
void applyTransferPlan(TransferPlan& plan, const std::uint8_t* oldImage, std::uint8_t* newImage) noexcept;
// The same without recording (a plan from a program to itself has no conversions).
void applyTransferPlan(const TransferPlan& plan, const std::uint8_t* oldImage, std::uint8_t* newImage) noexcept;

// After applying (off the scan thread): entries whose ENUM value had no match become
// Re-initialised, the counts follow.
void settleTransferReport(const TransferPlan& plan, TransferReport& report);

} // namespace takt::engine
