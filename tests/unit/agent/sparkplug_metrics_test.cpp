// The edge node's metric set (agent/src/sparkplug/sparkplug_metrics.h): which var.list rows are
// metrics, and the deadband that decides which changes NDATA carries.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "sparkplug/sparkplug_metrics.h"

namespace takt::agent::sparkplug {
namespace {

rapidjson::Document json(const std::string& text) {
    rapidjson::Document d;
    d.Parse(text.c_str());
    EXPECT_FALSE(d.HasParseError()) << text;
    return d;
}

// The changes of one var.changed `values` object, marked as sent the way NDATA marks them.
std::vector<std::size_t> takeAndSend(MetricSet& set, const std::string& values) {
    std::vector<std::size_t> changed;
    const rapidjson::Document d = json(values);
    set.take(d, changed);
    for (MetricState& m : set.metrics()) {
        if (m.dirty) {
            m.dirty = false;
            m.sent = m.value;
        }
    }
    return changed;
}

TEST(SparkplugMetrics, ANumberIsSentOnlyOnceItMovedBeyondItsDeadbandFromTheLastSentValue) {
    MetricSet set;
    ASSERT_TRUE(set.addListed(json(R"({"path":"P.ramp","type":"LREAL"})"), 1.0));
    ASSERT_TRUE(set.addListed(json(R"({"path":"P.count","type":"DINT"})"), 5));
    ASSERT_TRUE(set.addListed(json(R"({"path":"P.flag","type":"BOOL"})"), 1.0));
    ASSERT_TRUE(set.addListed(json(R"({"path":"P.text","type":"STRING[10]"})"), 1.0));
    ASSERT_TRUE(set.addListed(json(R"({"path":"P.delay","type":"TIME"})"), 1.0));
    set.seal();
    EXPECT_EQ(set.byPath("P.flag")->deadband, 0.0) << "a BOOL has no deadband";
    EXPECT_EQ(set.byPath("P.text")->deadband, 0.0);
    EXPECT_EQ(set.byPath("P.delay")->deadband, 0.0) << "TIME is no number a deadband applies to";
    // The first values: everything is sent (the birth).
    EXPECT_EQ(takeAndSend(set, R"({"P.ramp":{"type":"LREAL","value":0.0},"P.count":{"type":"DINT","value":0},)"
                               R"("P.flag":{"type":"BOOL","value":false},"P.text":{"type":"STRING","value":"a"},)"
                               R"("P.delay":{"type":"TIME","nanos":0}})")
                  .size(),
              5U);
    std::vector<double> sent;
    for (int n = 1; n <= 40; ++n) {
        const double ramp = n * 0.1;
        std::array<char, 64> text{};
        (void)std::snprintf(text.data(), text.size(), "%.17g", ramp);
        const std::vector<std::size_t> changed =
            takeAndSend(set, R"({"P.ramp":{"type":"LREAL","value":)" + std::string(text.data()) + "}}");
        if (!changed.empty()) {
            sent.push_back(std::get<double>(*set.byPath("P.ramp")->sent));
            EXPECT_EQ(std::get<double>(*set.byPath("P.ramp")->sent), ramp) << "the value itself, not rounded";
        }
    }
    // Strictly more than 1.0 from the last sent: 1.1, 2.2, 3.3 (n = 11, 22, 33), each exact.
    ASSERT_EQ(sent.size(), 3U);
    EXPECT_EQ(sent[0], 11 * 0.1);
    EXPECT_EQ(sent[1], 22 * 0.1);
    EXPECT_EQ(sent[2], 33 * 0.1);
    // An integer: exactly 5 away is within, 6 is beyond; back and forth within never sends.
    EXPECT_TRUE(takeAndSend(set, R"({"P.count":{"type":"DINT","value":5}})").empty());
    EXPECT_TRUE(takeAndSend(set, R"({"P.count":{"type":"DINT","value":-5}})").empty());
    EXPECT_EQ(takeAndSend(set, R"({"P.count":{"type":"DINT","value":-6}})").size(), 1U);
    // Other types: every change.
    EXPECT_EQ(takeAndSend(set, R"({"P.flag":{"type":"BOOL","value":true}})").size(), 1U);
    EXPECT_EQ(takeAndSend(set, R"({"P.text":{"type":"STRING","value":"b"}})").size(), 1U);
    EXPECT_EQ(takeAndSend(set, R"({"P.delay":{"type":"TIME","nanos":1}})").size(), 1U);
}

TEST(SparkplugMetrics, WithoutADeadbandEveryChangeIsSent) {
    MetricSet set;
    ASSERT_TRUE(set.addListed(json(R"({"path":"P.speed","type":"REAL"})")));
    set.seal();
    (void)takeAndSend(set, R"({"P.speed":{"type":"REAL","value":1.0}})");
    EXPECT_EQ(takeAndSend(set, R"({"P.speed":{"type":"REAL","value":1.0000001}})").size(), 1U);
    EXPECT_TRUE(takeAndSend(set, R"({"P.speed":{"type":"REAL","value":1.0000001}})").empty()) << "no change";
}

} // namespace
} // namespace takt::agent::sparkplug
