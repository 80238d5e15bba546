// A session's value subscriptions over a feed whose publication the test sets (value_subscription.h):
// the first notification carries every value, later ones only what changed, at most every
// interval; the deadband; and the one pending notification of a backlogged client, where the
// latest value of each variable wins and `skipped` counts the rounds merged into it.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "control/value_subscription.h"

namespace takt::agent::detail {
namespace {

using Clock = ValueSubscriptions::Clock;
using std::chrono::milliseconds;

// Variables "a", "b", "c" as one byte each, rendered as {"value":n}; numbers for the deadband.
class FakeFeed final : public ValueFeed {
public:
    std::map<std::string, std::uint32_t> slotOf{{"a", 0}, {"b", 1}, {"c", 2}};
    std::vector<std::uint8_t> values = {0, 0, 0};
    std::uint64_t publishedCycle = 1;
    std::vector<int> users = std::vector<int>(3, 0);

    std::vector<std::string> match(std::string_view pattern, std::size_t) const override {
        std::vector<std::string> out;
        for (const auto& [name, slot] : slotOf) {
            if (name.starts_with(pattern)) {
                out.push_back(name);
            }
        }
        return out;
    }
    bool acquire(std::span<const std::string> names, std::string_view member, std::vector<std::uint32_t>& slots,
                 MethodAnswer& error) override {
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (!slotOf.contains(names[i])) {
                error = MethodAnswer::error(-32602, "unknown " + names[i],
                                            "{\"param\":\"" + std::string(member) + "[" + std::to_string(i) + "]\"}");
                return false;
            }
        }
        for (const std::string& n : names) {
            slots.push_back(slotOf.at(n));
            ++users[slotOf.at(n)];
        }
        return true;
    }
    void release(std::span<const std::uint32_t> slots) override {
        for (const std::uint32_t s : slots) {
            --users[s];
        }
    }
    bool refresh() override { return true; }
    std::uint64_t cycle() const override { return publishedCycle; }
    std::span<const std::uint8_t> bytes(std::uint32_t slot) const override { return {values.data() + slot, 1}; }
    void render(std::uint32_t, std::span<const std::uint8_t> b, bool, std::string& out,
                std::optional<double>& number) const override {
        number = b[0];
        out += "{\"value\":" + std::to_string(b[0]) + "}";
    }
};

struct Note {
    std::int64_t subscription = 0, cycle = 0, skipped = 0;
    std::map<std::string, int> values;
};

Note parseNote(const std::string& params) {
    rapidjson::Document doc;
    doc.Parse(params.c_str());
    EXPECT_FALSE(doc.HasParseError()) << params;
    const rapidjson::Value& p = doc;
    Note n{p["subscription"].GetInt64(), p["cycle"].GetInt64(), p["skipped"].GetInt64(), {}};
    for (const auto& m : p["values"].GetObject()) {
        n.values[m.name.GetString()] = m.value["value"].GetInt();
    }
    return n;
}

rapidjson::Document params(const char* json) {
    rapidjson::Document d;
    d.Parse(json);
    return d;
}

class ValueSubscriptionsTest : public ::testing::Test {
protected:
    // One round at t0 + `ms`; the notifications it sent.
    std::vector<Note> round(int ms, bool backlogged = false, std::size_t budget = ValueSubscriptions::kRoundVariables) {
        std::vector<Note> out;
        next_ = subs_.sample(
            t0_ + milliseconds(ms), backlogged, [&](std::string params) { out.push_back(parseNote(params)); }, budget);
        return out;
    }
    std::int64_t subscribe(const char* json) {
        const MethodAnswer a = subs_.subscribe(params(json), t0_);
        EXPECT_TRUE(a.ok) << a.message;
        rapidjson::Document d;
        d.Parse(a.json.c_str());
        return d["subscription"].GetInt64();
    }

    FakeFeed feed_;
    ValueSubscriptions subs_{feed_};
    Clock::time_point t0_ = Clock::now();
    std::optional<Clock::time_point> next_;
};

TEST_F(ValueSubscriptionsTest, FirstEveryValueThenOnlyWhatChangedAtMostEveryInterval) {
    const std::int64_t id = subscribe(R"({"names":["a","b"],"interval_ms":100})");
    std::vector<Note> n = round(0);
    ASSERT_EQ(n.size(), 1u);
    EXPECT_EQ(n[0].subscription, id);
    EXPECT_EQ(n[0].values, (std::map<std::string, int>{{"a", 0}, {"b", 0}}));
    ASSERT_TRUE(next_);
    EXPECT_EQ(*next_, t0_ + milliseconds(100));
    feed_.values[0] = 7;
    feed_.publishedCycle = 5;
    EXPECT_TRUE(round(50).empty()) << "sampled before the interval";
    n = round(100);
    ASSERT_EQ(n.size(), 1u);
    EXPECT_EQ(n[0].values, (std::map<std::string, int>{{"a", 7}}));
    EXPECT_EQ(n[0].cycle, 5);
    EXPECT_TRUE(round(200).empty()) << "nothing changed, nothing sent";
}

TEST_F(ValueSubscriptionsTest, ABackloggedClientGetsOneNotificationWithTheLatestValuesAndTheSkippedCount) {
    subscribe(R"({"names":["a","b","c"],"interval_ms":10})");
    ASSERT_EQ(round(0).size(), 1u);
    // Three rounds with changes while the client has not taken what was sent.
    feed_.values = {1, 0, 0};
    EXPECT_TRUE(round(10, true).empty());
    feed_.values = {2, 5, 0};
    EXPECT_TRUE(round(20, true).empty());
    feed_.values = {3, 5, 0};
    feed_.publishedCycle = 9;
    EXPECT_TRUE(round(30, true).empty());
    // Held back, it is offered again soon (not only at the next due time).
    ASSERT_TRUE(next_);
    EXPECT_LE(*next_, t0_ + milliseconds(30) + ValueSubscriptions::kRetry);
    // A round where nothing changed but the client caught up: the merged notification goes.
    const std::vector<Note> n = round(35);
    ASSERT_EQ(n.size(), 1u);
    EXPECT_EQ(n[0].values, (std::map<std::string, int>{{"a", 3}, {"b", 5}})); // the latest of each
    EXPECT_EQ(n[0].skipped, 2); // three rounds merged into one: two notifications dropped
    EXPECT_EQ(n[0].cycle, 9);
    feed_.values = {4, 5, 0};
    const std::vector<Note> later = round(40);
    ASSERT_EQ(later.size(), 1u);
    EXPECT_EQ(later[0].skipped, 0);
}

TEST_F(ValueSubscriptionsTest, TheDeadbandComparesWithTheValueLastReported) {
    subscribe(R"({"names":["a"],"interval_ms":10,"deadband":2})");
    ASSERT_EQ(round(0).size(), 1u);
    feed_.values[0] = 1;
    EXPECT_TRUE(round(10).empty());
    feed_.values[0] = 2;
    EXPECT_TRUE(round(20).empty()) << "2 from 0 is not more than the deadband";
    feed_.values[0] = 3;
    const std::vector<Note> n = round(30);
    ASSERT_EQ(n.size(), 1u);
    EXPECT_EQ(n[0].values.at("a"), 3);
    feed_.values[0] = 1;
    EXPECT_TRUE(round(40).empty());
}

TEST_F(ValueSubscriptionsTest, ARoundSamplesNoMoreVariablesThanItsBudgetAndLeavesTheRestDue) {
    const std::int64_t first = subscribe(R"({"names":["a","b"],"interval_ms":100})");
    const std::int64_t second = subscribe(R"({"names":["c"],"interval_ms":100})");
    std::vector<Note> n = round(0, false, 2);
    ASSERT_EQ(n.size(), 1u) << "the budget of two variables covers the first subscription only";
    EXPECT_EQ(n[0].subscription, first);
    ASSERT_TRUE(next_);
    EXPECT_EQ(*next_, t0_) << "the second is still due: the next round comes at once";
    n = round(1, false, 2);
    ASSERT_EQ(n.size(), 1u);
    EXPECT_EQ(n[0].subscription, second);
    EXPECT_EQ(n[0].values, (std::map<std::string, int>{{"c", 0}}));
    EXPECT_EQ(*next_, t0_ + milliseconds(100)) << "the first keeps its own schedule";
    // Both due again: the round starts where the budget ran out last time (the second), so the
    // first in the list does not take every round. A budget smaller than a subscription still
    // samples it whole: one subscription is the unit.
    feed_.values = {1, 1, 1};
    n = round(100, false, 1);
    ASSERT_EQ(n.size(), 1u);
    EXPECT_EQ(n[0].subscription, second);
    EXPECT_EQ(n[0].values, (std::map<std::string, int>{{"c", 1}}));
    n = round(101, false, 1);
    ASSERT_EQ(n.size(), 1u);
    EXPECT_EQ(n[0].subscription, first);
    EXPECT_EQ(n[0].values, (std::map<std::string, int>{{"a", 1}, {"b", 1}}));
}

TEST_F(ValueSubscriptionsTest, UnsubscribeAndClearReleaseTheSlots) {
    const std::int64_t id = subscribe(R"({"names":["a","b"]})");
    subscribe(R"({"pattern":"c"})");
    EXPECT_EQ(feed_.users, (std::vector<int>{1, 1, 1}));
    const MethodAnswer a = subs_.unsubscribe(params(("{\"subscription\":" + std::to_string(id) + "}").c_str()));
    EXPECT_TRUE(a.ok);
    EXPECT_EQ(feed_.users, (std::vector<int>{0, 0, 1}));
    const MethodAnswer again = subs_.unsubscribe(params(("{\"subscription\":" + std::to_string(id) + "}").c_str()));
    EXPECT_FALSE(again.ok);
    EXPECT_NE(again.data.find("\"param\":\"subscription\""), std::string::npos);
    subs_.clear();
    EXPECT_EQ(feed_.users, (std::vector<int>{0, 0, 0}));
    EXPECT_FALSE(round(1000).size());
    EXPECT_FALSE(next_);
}

TEST_F(ValueSubscriptionsTest, BadParamsNameTheParamAndTakeNothing) {
    const auto expectParam = [&](const char* json, const char* param) {
        const MethodAnswer a = subs_.subscribe(params(json), t0_);
        EXPECT_FALSE(a.ok) << json;
        EXPECT_EQ(a.code, -32602) << json;
        EXPECT_NE(a.data.find(std::string("\"param\":\"") + param + "\""), std::string::npos) << json << a.data;
    };
    expectParam(R"({"names":["a","x"]})", "names[1]");
    expectParam(R"({"names":["a"],"pattern":"a"})", "pattern");
    expectParam(R"({})", "names");
    expectParam(R"({"names":[]})", "names");
    expectParam(R"({"pattern":"z"})", "pattern");
    EXPECT_EQ(feed_.users, (std::vector<int>{0, 0, 0}));
    EXPECT_TRUE(subs_.empty());
}

TEST_F(ValueSubscriptionsTest, ASessionHoldsAtMostSixteenSubscriptions) {
    for (std::size_t i = 0; i < ValueSubscriptions::kMaxSubscriptions; ++i) {
        subscribe(R"({"names":["a"]})");
    }
    const MethodAnswer a = subs_.subscribe(params(R"({"names":["a"]})"), t0_);
    EXPECT_FALSE(a.ok);
    EXPECT_EQ(a.code, -32002);
}

} // namespace
} // namespace takt::agent::detail
