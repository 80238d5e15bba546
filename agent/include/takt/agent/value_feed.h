#pragma once
// What value subscriptions (var.subscribe, docs/control.md "Value subscriptions") read from a
// target: the target resolves the subscribed variables into slots, keeps one watch of every slot
// in use for the scan thread to publish at each cycle boundary (takt/engine/value_watch.h), and
// hands out the bytes of the last publication and their rendering as var.read renders them. The
// sessions decide what changed and when to send it (value_subscription.h). Server thread only.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "takt/agent/rpc_method.h"

namespace takt::agent {

// The absolute deadband (OPC UA's), one rule for var.subscribe and the Sparkplug edge node's
// NDATA: a number is reported once it moved by more than `deadband` from the value last
// reported; always without a deadband or a value reported before. NaN is never within one.
[[nodiscard]] inline bool movedBeyondDeadband(double value, std::optional<double> reported, double deadband) {
    if (deadband <= 0 || !reported) {
        return true;
    }
    const double moved = value > *reported ? value - *reported : *reported - value;
    return !(moved <= deadband);
}

class ValueFeed {
public:
    virtual ~ValueFeed() = default;
    ValueFeed() = default;
    ValueFeed(const ValueFeed&) = delete;
    ValueFeed& operator=(const ValueFeed&) = delete;

    // Variables one subscription may hold, and subscribed values of all sessions together.
    static constexpr std::size_t kMaxPerSubscription = 1000;
    static constexpr std::size_t kMaxSlots = 16384;

    // The variables `pattern` matches, as var.list lists them (a glob with * and ?, else a
    // substring; case-insensitive): at most `limit` + 1 paths, so a caller sees that there are more.
    [[nodiscard]] virtual std::vector<std::string> match(std::string_view pattern, std::size_t limit) const = 0;
    // Resolves every name and takes a slot for each (one slot per distinct path, shared). One name
    // that does not resolve fails the whole call with a -32602 naming `member[i]` and the reason,
    // and takes nothing.
    [[nodiscard]] virtual bool acquire(std::span<const std::string> names, std::string_view member,
                                       std::vector<std::uint32_t>& slots, MethodAnswer& error) = 0;
    virtual void release(std::span<const std::uint32_t> slots) = 0;
    // Reads the last publication (once per round of sampling; the slots taken since are in it a
    // cycle later). False when there is none yet: the caller tries again shortly.
    [[nodiscard]] virtual bool refresh() = 0;
    // The cycle count of the publication refresh() read.
    [[nodiscard]] virtual std::uint64_t cycle() const = 0;
    // A slot's bytes in that publication; empty when it is not in it (an online change removed
    // the variable, or it was taken after the publication).
    [[nodiscard]] virtual std::span<const std::uint8_t> bytes(std::uint32_t slot) const = 0;
    // Appends the value of `bytes` as var.read renders it to `out`: typed JSON, or (iec) IEC
    // literal text as a JSON string; `number` gets the value of a numeric elementary type (for the
    // deadband). Called for every changed value of every subscription, so it allocates nothing
    // of its own for an elementary value (`out` keeps its capacity from one call to the next).
    virtual void render(std::uint32_t slot, std::span<const std::uint8_t> bytes, bool iec, std::string& out,
                        std::optional<double>& number) const = 0;
};

} // namespace takt::agent
