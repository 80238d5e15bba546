#pragma once
// A session's value subscriptions (var.subscribe / var.unsubscribe, docs/control.md "Value
// subscriptions"): what each one watches, when it is due, what changed since it last sent, and
// what waits for a client that has not taken the last notification yet.
//
// At each due time a subscription compares the feed's publication (one cycle boundary) with what
// it saw before and renders only the variables whose bytes changed and, with a deadband, whose
// number moved by more than the deadband since the value last reported. The changes go into the
// subscription's one pending notification, the latest value of each variable replacing an older
// one; while the client is backlogged (it has not read what was sent) nothing more is sent, and
// each further round with changes merged into the waiting notification counts one `skipped`. So a
// slow client costs at most one notification per subscription, never a growing queue, and never
// holds up the scan thread or another client.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "takt/agent/rpc_method.h"
#include "takt/agent/value_feed.h"

namespace takt::agent::detail {

class ValueSubscriptions {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::size_t kMaxSubscriptions = 16; // per session
    static constexpr std::uint32_t kDefaultIntervalMs = 100;
    static constexpr std::uint32_t kMinIntervalMs = 10;
    static constexpr std::uint32_t kMaxIntervalMs = 3'600'000;
    // How soon a notification held back for a backlogged client is offered again.
    static constexpr std::chrono::milliseconds kRetry{20};
    // Variables one round of sampling compares and renders, at most (all sessions together): a
    // round runs on the control thread, and the calls of every client wait while it runs. Due
    // subscriptions past it are sampled in the next round, which comes once the calls that have
    // arrived meanwhile are served (docs/control.md "Value subscriptions").
    static constexpr std::size_t kRoundVariables = 2000;

    explicit ValueSubscriptions(ValueFeed& feed) : feed_(feed) {}
    ~ValueSubscriptions() { clear(); }
    ValueSubscriptions(const ValueSubscriptions&) = delete;
    ValueSubscriptions& operator=(const ValueSubscriptions&) = delete;

    // var.subscribe (params checked against its schema already): {subscription, names, interval_ms}.
    [[nodiscard]] MethodAnswer subscribe(const rapidjson::Value& params, Clock::time_point now);
    // var.unsubscribe: {subscription, unsubscribed: true}.
    [[nodiscard]] MethodAnswer unsubscribe(const rapidjson::Value& params);
    void clear();
    [[nodiscard]] bool empty() const { return subs_.empty(); }

    // One round at `now`, after the feed's refresh(): due subscriptions sample while `budget`
    // (variables, shared by the sessions of the round) lasts, each taking its variables' count
    // from it; pending notifications go to `send` (the params object of one var.changed each, as
    // JSON text) unless `backlogged`. Returns when the next subscription is due (`now` when one
    // due is left for the next round), or nothing without subscriptions.
    std::optional<Clock::time_point> sample(Clock::time_point now, bool backlogged,
                                            const std::function<void(std::string)>& send, std::size_t& budget);

private:
    struct Subscription {
        std::uint64_t id = 0;
        std::vector<std::string> names;
        std::vector<std::string> keys; // each name as a JSON member name, `"P.x":`
        std::vector<std::uint32_t> slots;
        std::uint32_t intervalMs = kDefaultIntervalMs;
        double deadband = 0;
        bool iec = false;
        Clock::time_point due;
        std::vector<std::vector<std::uint8_t>> seen; // bytes at the last sample (empty: none yet)
        std::vector<std::optional<double>> reported; // the number last reported (deadband)
        // Rendered, not sent yet (the latest wins) where `waits`; each string keeps its capacity, so
        // a value rendered again reuses it.
        std::vector<std::string> pending;
        std::vector<std::uint8_t> waits;
        std::size_t pendingCount = 0;
        std::uint64_t pendingCycle = 0;
        std::uint64_t skipped = 0; // rounds merged into the pending notification
    };
    void sampleOne(Subscription& s);
    [[nodiscard]] static std::string notification(Subscription& s);
    std::string text_;      // sampleOne's rendering of one value, before the deadband decides
    std::size_t start_ = 0; // where the next round starts: the first due one the budget left out

    ValueFeed& feed_;
    std::vector<Subscription> subs_;
    std::uint64_t nextId_ = 1;
};

} // namespace takt::agent::detail
