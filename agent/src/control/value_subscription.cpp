#include "control/value_subscription.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rpc/rpc_envelope.h"
#include "rpc/rpc_json.h"

namespace takt::agent::detail {

namespace {

MethodAnswer badParam(std::string_view member, const std::string& message) {
    const rpc::Error e = rpc::invalidParam(member, std::string(member) + ": " + message);
    return MethodAnswer::error(e.code, e.message, e.data);
}

const rapidjson::Value* member(const rapidjson::Value& params, const char* name) {
    if (!params.IsObject()) {
        return nullptr;
    }
    const auto it = params.FindMember(name);
    return it == params.MemberEnd() ? nullptr : &it->value;
}

} // namespace

MethodAnswer ValueSubscriptions::subscribe(const rapidjson::Value& params, Clock::time_point now) {
    const rapidjson::Value* names = member(params, "names");
    const rapidjson::Value* pattern = member(params, "pattern");
    if ((names == nullptr) == (pattern == nullptr)) {
        return badParam(names != nullptr ? "pattern" : "names",
                        "give either \"names\" (an array of variable paths) or \"pattern\" (a var.list filter)");
    }
    if (subs_.size() >= kMaxSubscriptions) {
        return MethodAnswer::error(rpc::kCommandFailed,
                                   fmt::format("this session has {} subscriptions, the most one session may hold; "
                                               "var.unsubscribe one first",
                                               kMaxSubscriptions));
    }
    Subscription s;
    const char* listMember = "names";
    if (names != nullptr) {
        // The schema has checked: an array of strings.
        if (names->Empty() || names->Size() > ValueFeed::kMaxPerSubscription) {
            return badParam("names", fmt::format("expected 1 to {} variable paths", ValueFeed::kMaxPerSubscription));
        }
        for (const rapidjson::Value& n : names->GetArray()) {
            s.names.emplace_back(n.GetString(), n.GetStringLength());
        }
    } else {
        listMember = "pattern";
        const std::string_view filter(pattern->GetString(), pattern->GetStringLength());
        s.names = feed_.match(filter, ValueFeed::kMaxPerSubscription);
        if (s.names.empty()) {
            return badParam("pattern", fmt::format("'{}' matches no variable (var.list shows what there is)", filter));
        }
        if (s.names.size() > ValueFeed::kMaxPerSubscription) {
            return badParam("pattern", fmt::format("'{}' matches more than {} variables; narrow it", filter,
                                                   ValueFeed::kMaxPerSubscription));
        }
    }
    MethodAnswer error;
    if (!feed_.acquire(s.names, listMember, s.slots, error)) {
        return error;
    }
    if (const rapidjson::Value* interval = member(params, "interval_ms")) {
        s.intervalMs = interval->GetUint();
    }
    if (const rapidjson::Value* deadband = member(params, "deadband")) {
        s.deadband = deadband->GetDouble();
    }
    if (const rapidjson::Value* format = member(params, "format")) {
        s.iec = std::string_view(format->GetString()) == "iec";
    }
    s.id = nextId_++;
    s.due = now; // the first notification carries every value
    s.seen.resize(s.slots.size());
    s.reported.resize(s.slots.size());
    s.pending.resize(s.slots.size());
    s.waits.resize(s.slots.size());
    std::string list;
    for (const std::string& n : s.names) {
        s.keys.push_back(rpc::quoted(n) + ':');
        list += (list.empty() ? "" : ",") + rpc::quoted(n);
    }
    const std::string answer =
        fmt::format(R"({{"subscription":{},"names":[{}],"interval_ms":{}}})", s.id, list, s.intervalMs);
    subs_.push_back(std::move(s));
    return MethodAnswer::result(answer);
}

MethodAnswer ValueSubscriptions::unsubscribe(const rapidjson::Value& params) {
    const std::uint64_t id = params["subscription"].GetUint64(); // the schema has checked it
    const auto it = std::find_if(subs_.begin(), subs_.end(), [id](const Subscription& s) { return s.id == id; });
    if (it == subs_.end()) {
        return badParam("subscription", fmt::format("{} is not a subscription of this session", id));
    }
    feed_.release(it->slots);
    subs_.erase(it);
    return MethodAnswer::result(fmt::format(R"({{"subscription":{},"unsubscribed":true}})", id));
}

void ValueSubscriptions::clear() {
    for (const Subscription& s : subs_) {
        feed_.release(s.slots);
    }
    subs_.clear();
}

std::optional<ValueSubscriptions::Clock::time_point>
ValueSubscriptions::sample(Clock::time_point now, bool backlogged, const std::function<void(std::string)>& send,
                           std::size_t& budget) {
    std::optional<Clock::time_point> next;
    // From where the last round's budget ran out: the subscriptions first in the list must not
    // take every round's budget while those after them wait.
    const std::size_t from = subs_.empty() ? 0 : start_ % subs_.size();
    bool cut = false;
    for (std::size_t k = 0; k < subs_.size(); ++k) {
        const std::size_t at = (from + k) % subs_.size();
        Subscription& s = subs_[at];
        if (s.due <= now && budget == 0 && !cut) {
            cut = true;
            start_ = at;
        }
        if (s.due <= now && budget > 0) {
            budget -= std::min(budget, s.slots.size());
            sampleOne(s);
            const auto interval = std::chrono::milliseconds(s.intervalMs);
            s.due += interval;
            if (s.due <= now) {
                s.due = now + interval; // a late round does not make the next ones come in a burst
            }
        }
        // Sent whenever the client has taken the last one: at a due time, or at the first round
        // after it caught up (the values are still the latest sampled).
        if (s.pendingCount > 0 && !backlogged) {
            send(notification(s));
        }
        // A notification held back is offered again soon, not only at the next due time.
        const Clock::time_point when = s.pendingCount > 0 ? std::min(s.due, now + kRetry) : s.due;
        next = next ? std::min(*next, when) : when;
    }
    return next;
}

void ValueSubscriptions::sampleOne(Subscription& s) {
    const bool waiting = s.pendingCount > 0;
    bool changed = false;
    for (std::size_t i = 0; i < s.slots.size(); ++i) {
        const std::span<const std::uint8_t> bytes = feed_.bytes(s.slots[i]);
        if (bytes.empty() || std::equal(bytes.begin(), bytes.end(), s.seen[i].begin(), s.seen[i].end())) {
            continue;
        }
        s.seen[i].assign(bytes.begin(), bytes.end());
        std::optional<double> number;
        text_.clear();
        feed_.render(s.slots[i], bytes, s.iec, text_, number);
        // The deadband holds back a number that moved by no more than it since it was last
        // reported (OPC UA's absolute deadband); without one every change is reported.
        if (number && !movedBeyondDeadband(*number, s.reported[i], s.deadband)) {
            continue;
        }
        s.reported[i] = number;
        if (s.waits[i] == 0) {
            s.waits[i] = 1;
            ++s.pendingCount;
        }
        s.pending[i].assign(text_);
        changed = true;
    }
    if (changed) {
        s.pendingCycle = feed_.cycle();
        if (waiting) {
            ++s.skipped;
        }
    }
}

std::string ValueSubscriptions::notification(Subscription& s) {
    std::string params =
        fmt::format(R"({{"subscription":{},"cycle":{},"skipped":{},"values":{{)", s.id, s.pendingCycle, s.skipped);
    bool first = true;
    for (std::size_t i = 0; i < s.pending.size(); ++i) {
        if (s.waits[i] != 0) {
            if (!first) {
                params += ',';
            }
            first = false;
            params += s.keys[i];
            params += s.pending[i];
            s.waits[i] = 0;
        }
    }
    params += "}}";
    s.pendingCount = 0;
    s.skipped = 0;
    return params;
}

} // namespace takt::agent::detail
