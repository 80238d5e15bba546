// The host-side view of `takt fleet status` (takt/agent/sparkplug_fleet.h): what births, deaths and
// data make of an edge node, payloads from takt's own encoder and, for datatypes takt does not
// carry, metrics written out in protobuf's wire format.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sparkplug/sparkplug_metrics.h"
#include "sparkplug/sparkplug_payload.h"
#include "takt/agent/sparkplug_fleet.h"

namespace takt::agent {
namespace {

namespace sp = sparkplug;

sp::Metric metric(std::string name, sp::IecType type, sp::Value value) {
    sp::Metric m;
    m.name = std::move(name);
    m.type = type;
    m.value = std::move(value);
    return m;
}

std::string encode(std::uint64_t timestamp, std::vector<sp::Metric> metrics) {
    sp::Payload p;
    p.timestamp = timestamp;
    p.metrics = std::move(metrics);
    std::string out;
    sp::Error error;
    EXPECT_TRUE(sp::encodePayload(p, out, error)) << error.message;
    return out;
}

std::string birth(std::int64_t bdSeq, std::uint64_t timestamp, const std::string& hash = "") {
    std::vector<sp::Metric> metrics{
        metric("bdSeq", sp::IecType::Lint, bdSeq),
        metric("Node Control/Rebirth", sp::IecType::Bool, false),
        metric("Node Control/Next Server", sp::IecType::Bool, false),
        metric("P/counter", sp::IecType::Dint, std::int64_t{3}),
        metric("P/speed", sp::IecType::Real, 1.5F),
    };
    if (!hash.empty()) {
        metrics.push_back(metric("Properties/Program Hash", sp::IecType::String, hash));
    }
    return encode(timestamp, std::move(metrics));
}

std::string death(std::int64_t bdSeq) {
    return encode(5, {metric("bdSeq", sp::IecType::Lint, bdSeq)});
}

const std::string kServer = "tcp://127.0.0.1:1883";

TEST(SparkplugFleet, BirthThenDeathOfTheSameBdSeqIsOffline) {
    FleetView view("Plant1");
    EXPECT_EQ(view.take("spBv1.0/Plant1/NBIRTH/Line3", birth(4, 1700000000123ULL, "abc123"), kServer),
              std::optional<std::string>("Line3"));
    const EdgeNodeView& n = view.nodes().at("Line3");
    EXPECT_TRUE(n.online);
    EXPECT_TRUE(n.birthSeen);
    EXPECT_EQ(n.bdSeq, std::optional<std::uint64_t>(4));
    EXPECT_EQ(n.lastBirthMs, 1700000000123ULL);
    EXPECT_EQ(n.metrics, 2U) << "bdSeq, Node Control and Properties are not the node's data";
    EXPECT_EQ(n.programHash, "abc123");
    EXPECT_EQ(n.server, kServer);
    (void)view.take("spBv1.0/Plant1/NDEATH/Line3", death(4), kServer);
    EXPECT_FALSE(view.nodes().at("Line3").online);
    EXPECT_EQ(view.nodes().at("Line3").bdSeq, std::optional<std::uint64_t>(4));
    EXPECT_EQ(view.nodes().at("Line3").messages, 2U);
}

TEST(SparkplugFleet, ALateDeathOfAnEarlierSessionLeavesTheBirthOnline) {
    FleetView view("Plant1");
    (void)view.take("spBv1.0/Plant1/NBIRTH/Line3", birth(7, 10), kServer);
    (void)view.take("spBv1.0/Plant1/NDEATH/Line3", death(6), kServer);
    const EdgeNodeView& n = view.nodes().at("Line3");
    EXPECT_TRUE(n.online);
    EXPECT_EQ(n.lastDeathBdSeq, std::optional<std::uint64_t>(6));
    // A new birth after a death is online again, with its own bdSeq and no program hash.
    (void)view.take("spBv1.0/Plant1/NDEATH/Line3", death(7), kServer);
    EXPECT_FALSE(view.nodes().at("Line3").online);
    (void)view.take("spBv1.0/Plant1/NBIRTH/Line3", birth(8, 20), "tcp://other:1883");
    EXPECT_TRUE(view.nodes().at("Line3").online);
    EXPECT_EQ(view.nodes().at("Line3").bdSeq, std::optional<std::uint64_t>(8));
    EXPECT_EQ(view.nodes().at("Line3").server, "tcp://other:1883");
}

TEST(SparkplugFleet, DataWithoutABirthIsOnlineUnbornAndADeathAloneIsOffline) {
    FleetView view("Plant1");
    (void)view.take("spBv1.0/Plant1/NDATA/Line1", encode(1, {metric("", sp::IecType::Dint, std::int64_t{1})}), kServer);
    EXPECT_TRUE(view.nodes().at("Line1").online);
    EXPECT_FALSE(view.nodes().at("Line1").birthSeen);
    EXPECT_FALSE(view.nodes().at("Line1").bdSeq);
    (void)view.take("spBv1.0/Plant1/NDEATH/Line2", death(9), kServer);
    EXPECT_FALSE(view.nodes().at("Line2").online);
    EXPECT_EQ(view.nodes().at("Line2").bdSeq, std::optional<std::uint64_t>(9));
    // A device's data is its node's session going on.
    (void)view.take("spBv1.0/Plant1/DDATA/Line2/Pump", encode(1, {}), kServer);
    EXPECT_TRUE(view.nodes().at("Line2").online);
}

TEST(SparkplugFleet, HostMessagesOtherGroupsAndOtherTopicsAreNotEdgeNodes) {
    FleetView view("Plant1");
    EXPECT_FALSE(view.take("spBv1.0/Plant1/NCMD/Line3", birth(1, 1), kServer));
    EXPECT_FALSE(view.take("spBv1.0/Plant1/DCMD/Line3/Pump", birth(1, 1), kServer));
    EXPECT_FALSE(view.take("spBv1.0/Plant2/NBIRTH/Line3", birth(1, 1), kServer));
    EXPECT_FALSE(view.take("spBv1.0/STATE/SCADA", R"({"online":true,"timestamp":1})", kServer));
    EXPECT_FALSE(view.take("spBv1.0/Plant1/NBIRTH/Line3/Pump", birth(1, 1), kServer));
    EXPECT_FALSE(view.take("spBv1.0/Plant1/DBIRTH/Line3", birth(1, 1), kServer));
    EXPECT_FALSE(view.take("spBv1.0/Plant1/NBIRTH/", birth(1, 1), kServer));
    EXPECT_FALSE(view.take("other/Plant1/NBIRTH/Line3", birth(1, 1), kServer));
    EXPECT_TRUE(view.nodes().empty());
}

// Metric: name 1, datatype 4, string_value 15, bytes_value 16; Payload: metrics 2.
void appendVarint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}
void appendField(std::string& out, std::uint32_t field, const std::string& bytes) {
    appendVarint(out, (field << 3) | 2);
    appendVarint(out, bytes.size());
    out += bytes;
}

TEST(SparkplugFleet, ABirthWithDatatypesTaktDoesNotCarryIsCountedNotRefused) {
    std::string text;
    appendField(text, 1, "P/note");
    text += std::string{static_cast<char>(4 << 3), 14}; // datatype Text
    appendField(text, 15, "hello");
    std::string bytes;
    appendField(bytes, 1, "Properties/Blob");
    bytes += std::string{static_cast<char>(4 << 3), 17}; // datatype Bytes
    appendField(bytes, 16, "xy");
    std::string payload = birth(2, 30);
    appendField(payload, 2, text); // one more metrics entry: protobuf appends repeated fields
    appendField(payload, 2, bytes);

    sp::Payload decoded;
    sp::Error error;
    const std::span raw(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size());
    EXPECT_FALSE(sp::decodePayload(raw, decoded, error)) << "takt's own payloads carry no Text";
    ASSERT_TRUE(sp::decodePayload(raw, decoded, error, sp::Foreign::List)) << error.message;
    EXPECT_EQ(decoded.foreign, (std::vector<std::string>{"P/note", "Properties/Blob"}));

    FleetView view("Plant1");
    (void)view.take("spBv1.0/Plant1/NBIRTH/Other", payload, kServer);
    const EdgeNodeView& n = view.nodes().at("Other");
    EXPECT_TRUE(n.birthSeen);
    EXPECT_EQ(n.metrics, 3U) << "P/counter, P/speed and P/note";
    EXPECT_EQ(n.bdSeq, std::optional<std::uint64_t>(2));
    EXPECT_TRUE(n.problem.empty());

    (void)view.take("spBv1.0/Plant1/NBIRTH/Broken", std::string("\xff\xff\xff"), kServer);
    EXPECT_TRUE(view.nodes().at("Broken").online);
    EXPECT_FALSE(view.nodes().at("Broken").birthSeen);
    EXPECT_NE(view.nodes().at("Broken").problem.find("NBIRTH not decoded: malformed_payload"), std::string::npos)
        << view.nodes().at("Broken").problem;
}

} // namespace
} // namespace takt::agent
