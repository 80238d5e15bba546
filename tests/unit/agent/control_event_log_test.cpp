// events.recent's log: a client asking with the `next` of its last answer gets only what came
// after; the log and the online-change history stay bounded, and a burst of other events never
// pushes an online change out of its history, nor a burst of overruns a fault out of the log.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "control/control_session.h"

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
    for (int i = 0; i < 300; ++i) {
        log.add("paused", event("paused", 2000 + i));
    }
    rapidjson::Document d = parsed(log.since(0));
    // The newest kEvents of the other types and the newest kOverruns overruns, in order.
    ASSERT_EQ(d["events"].Size(), EventLog::kEvents + EventLog::kOverruns);
    EXPECT_EQ(d["events"][0]["seq"].GetUint64(), 1040U - EventLog::kOverruns + 1);
    EXPECT_STREQ(d["events"][EventLog::kOverruns]["type"].GetString(), "paused");
    EXPECT_EQ(d["events"][EventLog::kOverruns + EventLog::kEvents - 1]["seq"].GetUint64(), 1340U);
    ASSERT_EQ(d["reloads"].Size(), EventLog::kReloads);
    EXPECT_EQ(d["reloads"][0]["cycle"].GetInt(), 40 - static_cast<int>(EventLog::kReloads));
    EXPECT_EQ(d["reloads"][EventLog::kReloads - 1]["cycle"].GetInt(), 39);
}

// A busy machine's overruns (103 in 40 s once) used to push a fault out of the web page's
// recent events: they now have their own list, and the fault stays.
TEST(EventLog, OverrunsNeverPushAFaultOut) {
    EventLog log;
    log.add("fault", event("fault", 1));
    for (int i = 0; i < 1000; ++i) {
        log.add("cycle_overrun", event("cycle_overrun", 10 + i));
    }
    rapidjson::Document d = parsed(log.since(0));
    ASSERT_EQ(d["events"].Size(), 1U + EventLog::kOverruns);
    EXPECT_STREQ(d["events"][0]["type"].GetString(), "fault");
    EXPECT_EQ(d["events"][0]["seq"].GetUint64(), 1U);
    EXPECT_STREQ(d["events"][1]["type"].GetString(), "cycle_overrun");
    EXPECT_EQ(d["events"][1]["seq"].GetUint64(), 1001U - EventLog::kOverruns + 1);
    // Asked from the middle: only what came after, still in order.
    rapidjson::Document fresh = parsed(log.since(999));
    ASSERT_EQ(fresh["events"].Size(), 2U);
    EXPECT_EQ(fresh["events"][0]["seq"].GetUint64(), 1000U);
}

} // namespace
} // namespace takt::agent::detail
