#pragma once
// Online-change transfer plans (ARCHITECTURE.md "Online change"): which bytes of the old data
// image survive into the new one. Variables are matched by path (case-insensitive) AND type
// signature. A match is copied whole — an FB instance with an identical signature keeps its
// timers, counters and edge memories — and its members are then not considered separately. A
// variable whose type changed is re-initialised and reported; its members are still matched
// one by one (a FB that gained a variable keeps the state of the others). New variables keep
// their initial values; removed ones are dropped.
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

struct TransferReport {
    std::string oldHash;
    std::string newHash;
    std::uint32_t kept = 0;
    std::uint32_t initialised = 0;
    std::uint32_t dropped = 0;
    std::uint32_t retyped = 0;
    std::vector<std::string> retypedPaths;
    std::int64_t pauseNs = 0; // what the swap cost the cycle thread
};

struct TransferPlan {
    std::vector<TransferCopy> copies; // sorted, adjacent runs merged
    TransferReport report;
};

// What "same type" means for the matching: the type's signature, or "name/size" for modules
// without signatures. Retain slot files store it per variable.
[[nodiscard]] std::string typeSignature(const bytecode::Module& module, std::uint32_t type);

// `retainOnly`: only RETAIN variables are carried over (warm-restart semantics on reload).
[[nodiscard]] TransferPlan computeTransferPlan(const bytecode::Module& from, const bytecode::Module& to,
                                               bool retainOnly = false);

// Executes the memcpy runs. Both images must be those the plan was computed for.
void applyTransferPlan(const TransferPlan& plan, const std::uint8_t* oldImage, std::uint8_t* newImage);

} // namespace takt::engine
