// events.recent's log: a client asking with the `next` of its last answer gets only what came
// after; the log and the online-change history stay bounded, and a burst of other events never
// pushes an online change out of its history.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "control_session.h"

namespace takt::agent::detail {
namespace {

rapidjson::Document parsed(const std::string& text) {
    rapidjson::Document d;
    d.Parse(text.c_str());
    EXPECT_FALSE(d.HasParseError()) << text;
    return d;
}

std::string event(const char* type, int n) {
    return fmt::format(R"({{"type":"{}","ts":{},"cycle":{}}})", type, 1000 + n, n);
}

TEST(EventLog, SinceAnswersOnlyWhatCameAfterWithSequenceNumbers) {
    EventLog log;
    log.add("runtime_started", event("runtime_started", 0));
    log.add("cycle_overrun", event("cycle_overrun", 1));
    rapidjson::Document all = parsed(log.since(0));
    EXPECT_EQ(all["next"].GetUint64(), 3U);
    ASSERT_EQ(all["events"].Size(), 2U);
    EXPECT_EQ(all["events"][0]["seq"].GetUint64(), 1U);
    EXPECT_STREQ(all["events"][1]["type"].GetString(), "cycle_overrun");
    EXPECT_EQ(all["events"][1]["cycle"].GetInt(), 1);

    log.add("reload_applied", event("reload_applied", 2));
    rapidjson::Document fresh = parsed(log.since(2));
    ASSERT_EQ(fresh["events"].Size(), 1U);
    EXPECT_EQ(fresh["events"][0]["seq"].GetUint64(), 3U);
    ASSERT_EQ(fresh["reloads"].Size(), 1U);
    EXPECT_STREQ(fresh["reloads"][0]["type"].GetString(), "reload_applied");
    EXPECT_EQ(parsed(log.since(3))["events"].Size(), 0U);
}

TEST(EventLog, StaysBoundedAndKeepsTheOnlineChangesApart) {
    EventLog log;
    for (int i = 0; i < 40; ++i) {
        log.add(i % 2 == 0 ? "reload_applied" : "reload_rejected",
                event(i % 2 == 0 ? "reload_applied" : "reload_rejected", i));
    }
    for (int i = 0; i < 1000; ++i) {
        log.add("cycle_overrun", event("cycle_overrun", 100 + i));
    }
    rapidjson::Document d = parsed(log.since(0));
    ASSERT_EQ(d["events"].Size(), EventLog::kEvents);
    EXPECT_EQ(d["events"][0]["seq"].GetUint64(), 1040U - EventLog::kEvents + 1);
    ASSERT_EQ(d["reloads"].Size(), EventLog::kReloads);
    EXPECT_EQ(d["reloads"][0]["cycle"].GetInt(), 40 - static_cast<int>(EventLog::kReloads));
    EXPECT_EQ(d["reloads"][EventLog::kReloads - 1]["cycle"].GetInt(), 39);
}

} // namespace
} // namespace takt::agent::detail
