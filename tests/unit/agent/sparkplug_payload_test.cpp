// Sparkplug B payloads (agent/src/sparkplug): every IEC type through a birth and back, payloads
// assembled here byte by byte from the specification's field numbers (Sparkplug 3.0, 6.4), and the
// coded refusals of bad NCMD metrics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "sparkplug/sparkplug_payload.h"

namespace takt::agent::sparkplug {
namespace {

// --- protobuf wire format, written out by hand: varint, tag, length-delimited, fixed32/64 ------
void varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<std::uint8_t>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<std::uint8_t>(v));
}
void tag(std::vector<std::uint8_t>& out, std::uint32_t field, std::uint32_t wire) {
    varint(out, (field << 3) | wire);
}
void varintField(std::vector<std::uint8_t>& out, std::uint32_t field, std::uint64_t v) {
    tag(out, field, 0);
    varint(out, v);
}
void bytesField(std::vector<std::uint8_t>& out, std::uint32_t field, const std::vector<std::uint8_t>& bytes) {
    tag(out, field, 2);
    varint(out, bytes.size());
    out.insert(out.end(), bytes.begin(), bytes.end());
}
void stringField(std::vector<std::uint8_t>& out, std::uint32_t field, std::string_view s) {
    bytesField(out, field, std::vector<std::uint8_t>(s.begin(), s.end()));
}
void floatField(std::vector<std::uint8_t>& out, std::uint32_t field, float f) {
    tag(out, field, 5);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    for (int i = 0; i < 4; ++i) {
        out.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
    }
}
void doubleField(std::vector<std::uint8_t>& out, std::uint32_t field, double d) {
    tag(out, field, 1);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &d, 8);
    for (int i = 0; i < 8; ++i) {
        out.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
    }
}

// Payload: timestamp 1, metrics 2, seq 3. Metric: name 1, alias 2, timestamp 3, datatype 4,
// is_historical 5, is_null 7, int_value 10, long_value 11, float_value 12, double_value 13,
// boolean_value 14, string_value 15, bytes_value 16.
std::vector<std::uint8_t> payloadOf(const std::vector<std::vector<std::uint8_t>>& metrics, std::uint64_t seq = 0) {
    std::vector<std::uint8_t> out;
    varintField(out, 1, 1700000000000ULL);
    for (const auto& m : metrics) {
        bytesField(out, 2, m);
    }
    varintField(out, 3, seq);
    return out;
}

std::vector<std::uint8_t> bytesOf(const std::string& s) {
    return {s.begin(), s.end()};
}

MetricTable birthTable() {
    MetricTable t;
    const std::vector<MetricSpec> specs{
        {"P/flag", 1, IecType::Bool},    {"P/small", 2, IecType::Sint},   {"P/word", 3, IecType::Int},
        {"P/counter", 4, IecType::Dint}, {"P/big", 5, IecType::Lint},     {"P/byte", 6, IecType::Usint},
        {"P/uword", 7, IecType::Uint},   {"P/udword", 8, IecType::Udint}, {"P/ubig", 9, IecType::Ulint},
        {"P/speed", 10, IecType::Real},  {"P/exact", 11, IecType::Lreal}, {"P/text", 12, IecType::String},
        {"P/delay", 13, IecType::Time},  {"P/stamp", 14, IecType::Dt},
    };
    for (const MetricSpec& s : specs) {
        EXPECT_TRUE(t.add(s));
    }
    return t;
}

Metric metric(std::string name, std::uint64_t alias, IecType type, Value value) {
    Metric m;
    m.name = std::move(name);
    m.alias = alias;
    m.type = type;
    m.value = std::move(value);
    return m;
}

TEST(SparkplugPayload, EveryIecTypeRoundTripsThroughABirth) {
    Payload birth;
    birth.timestamp = 1700000000123ULL;
    birth.seq = 0;
    const std::int64_t ms = 1'000'000;
    birth.metrics = {
        metric("P/flag", 1, IecType::Bool, true),
        metric("P/small", 2, IecType::Sint, std::int64_t{-128}),
        metric("P/word", 3, IecType::Int, std::int64_t{32767}),
        metric("P/counter", 4, IecType::Dint, std::int64_t{std::numeric_limits<std::int32_t>::min()}),
        metric("P/big", 5, IecType::Lint, std::int64_t{std::numeric_limits<std::int64_t>::min()}),
        metric("P/byte", 6, IecType::Usint, std::uint64_t{255}),
        metric("P/uword", 7, IecType::Uint, std::uint64_t{65535}),
        metric("P/udword", 8, IecType::Udint, std::uint64_t{std::numeric_limits<std::uint32_t>::max()}),
        metric("P/ubig", 9, IecType::Ulint, std::uint64_t{std::numeric_limits<std::uint64_t>::max()}),
        metric("P/speed", 10, IecType::Real, -1.5F),
        metric("P/exact", 11, IecType::Lreal, 3.141592653589793),
        metric("P/text", 12, IecType::String, std::string("Grüße, 'quoted'")),
        metric("P/delay", 13, IecType::Time, std::int64_t{-90'500} * ms),
        metric("P/stamp", 14, IecType::Dt, std::int64_t{1700000000123} * ms),
    };
    std::string bytes;
    Error error;
    ASSERT_TRUE(encodePayload(birth, bytes, error)) << error.message;

    Payload back;
    ASSERT_TRUE(decodePayload(bytesOf(bytes), back, error)) << error.message;
    EXPECT_EQ(back.timestamp, birth.timestamp);
    ASSERT_EQ(back.seq, std::optional<std::uint64_t>(0));
    ASSERT_EQ(back.metrics.size(), birth.metrics.size());
    for (std::size_t i = 0; i < birth.metrics.size(); ++i) {
        const Metric& want = birth.metrics[i];
        const Metric& got = back.metrics[i];
        EXPECT_EQ(got.name, want.name);
        EXPECT_EQ(got.alias, want.alias);
        // Int64 comes back as LINT: TIME is told apart by the birth's table, not the wire.
        EXPECT_EQ(got.type, want.type == IecType::Time ? IecType::Lint : want.type) << want.name;
        if (want.type == IecType::Time) {
            EXPECT_EQ(std::get<std::int64_t>(got.value), -90'500) << "TIME travels in milliseconds";
        } else {
            EXPECT_EQ(got.value, want.value) << want.name;
        }
    }

    // An NCMD of the same metrics, by name, writes the same values (TIME in nanoseconds again).
    std::vector<MetricWrite> writes;
    ASSERT_TRUE(decodeCommand(bytesOf(bytes), birthTable(), writes, error)) << error.message;
    ASSERT_EQ(writes.size(), birth.metrics.size());
    for (std::size_t i = 0; i < writes.size(); ++i) {
        EXPECT_EQ(writes[i].name, birth.metrics[i].name);
        EXPECT_EQ(writes[i].type, birth.metrics[i].type);
        EXPECT_EQ(writes[i].value, birth.metrics[i].value) << writes[i].name;
    }
}

TEST(SparkplugPayload, TimeAndDtAreSentInWholeMilliseconds) {
    Payload p;
    p.metrics = {metric("t", 1, IecType::Time, std::int64_t{1'999'999}),
                 metric("d", 2, IecType::Dt, std::int64_t{5'000'001})};
    std::string bytes;
    Error error;
    ASSERT_TRUE(encodePayload(p, bytes, error));
    Payload back;
    ASSERT_TRUE(decodePayload(bytesOf(bytes), back, error));
    EXPECT_EQ(std::get<std::int64_t>(back.metrics[0].value), 1);             // Int64 ms
    EXPECT_EQ(std::get<std::int64_t>(back.metrics[1].value), 5 * 1'000'000); // DT back in ns
}

TEST(SparkplugPayload, EncodesTheSpecificationsBytes) {
    // NDATA: one metric by alias, Int32 -5, and a null one; seq 7.
    Payload p;
    p.timestamp = 1700000000000ULL;
    p.seq = 7;
    Metric byAlias;
    byAlias.alias = 4;
    byAlias.type = IecType::Dint;
    byAlias.value = std::int64_t{-5};
    Metric null;
    null.alias = 5;
    null.type = IecType::Real;
    null.isNull = true;
    p.metrics = {byAlias, null};
    std::string bytes;
    Error error;
    ASSERT_TRUE(encodePayload(p, bytes, error));

    std::vector<std::uint8_t> m1;
    varintField(m1, 2, 4);
    varintField(m1, 4, 3);            // Int32
    varintField(m1, 10, 0xFFFFFFFBU); // -5 as its 32-bit two's complement
    std::vector<std::uint8_t> m2;
    varintField(m2, 2, 5);
    varintField(m2, 4, 9); // Float
    varintField(m2, 7, 1); // is_null
    EXPECT_EQ(bytesOf(bytes), payloadOf({m1, m2}, 7));
}

// UInt32 goes out in long_value, where Ignition and Tahu's host libraries (sparkplug-payload) read
// it; an NCMD may carry it in long_value or, as the specification's text has it, in int_value.
TEST(SparkplugPayload, UInt32TravelsInLongValueAndIsTakenFromEither) {
    Payload p;
    p.metrics = {metric("P/udword", 8, IecType::Udint, std::uint64_t{4'000'000'000U})};
    std::string bytes;
    Error error;
    ASSERT_TRUE(encodePayload(p, bytes, error));
    std::vector<std::uint8_t> m;
    stringField(m, 1, "P/udword");
    varintField(m, 2, 8);
    varintField(m, 4, 7); // UInt32
    varintField(m, 11, 4'000'000'000U);
    const std::vector<std::uint8_t> got = bytesOf(bytes);
    EXPECT_NE(std::search(got.begin(), got.end(), m.begin(), m.end()), got.end());

    std::vector<MetricWrite> writes;
    for (const int field : {10, 11}) {
        std::vector<std::uint8_t> cmd;
        stringField(cmd, 1, "P/udword");
        varintField(cmd, 4, 7);
        varintField(cmd, field, 4'000'000'000U);
        ASSERT_TRUE(decodeCommand(payloadOf({cmd}), birthTable(), writes, error)) << field << ": " << error.message;
        ASSERT_EQ(writes.size(), 1U);
        EXPECT_EQ(writes[0].value, Value{std::uint64_t{4'000'000'000U}});
    }
    std::vector<std::uint8_t> tooBig;
    stringField(tooBig, 1, "P/udword");
    varintField(tooBig, 4, 7);
    varintField(tooBig, 11, 4'294'967'296ULL);
    EXPECT_FALSE(decodeCommand(payloadOf({tooBig}), birthTable(), writes, error));
    EXPECT_EQ(error.code, ErrorCode::OutOfRange);
    EXPECT_EQ(error.metric, "P/udword");
}

TEST(SparkplugPayload, DecodesAnIndependentlyAssembledNcmd) {
    std::vector<std::uint8_t> byName;
    stringField(byName, 1, "P/counter");
    varintField(byName, 4, 3);
    varintField(byName, 10, 0xFFFFFFFBU);
    std::vector<std::uint8_t> byAlias; // no datatype: the birth's
    varintField(byAlias, 2, 1);
    varintField(byAlias, 14, 1);
    std::vector<std::uint8_t> real;
    stringField(real, 1, "P/speed");
    varintField(real, 4, 9);
    floatField(real, 12, 2.25F);
    std::vector<std::uint8_t> lreal;
    varintField(lreal, 2, 11);
    doubleField(lreal, 13, -0.125);
    std::vector<std::uint8_t> text;
    stringField(text, 1, "P/text");
    varintField(text, 4, 12);
    stringField(text, 15, "on");
    std::vector<std::uint8_t> small8; // Int8 -1 as the 8-bit pattern some hosts send
    varintField(small8, 2, 2);
    varintField(small8, 10, 0xFF);
    std::vector<std::uint8_t> stamp;
    stringField(stamp, 1, "P/stamp");
    varintField(stamp, 4, 13);
    varintField(stamp, 11, 1700000000123ULL);

    std::vector<MetricWrite> writes;
    Error error;
    ASSERT_TRUE(
        decodeCommand(payloadOf({byName, byAlias, real, lreal, text, small8, stamp}), birthTable(), writes, error))
        << error.message;
    ASSERT_EQ(writes.size(), 7U);
    EXPECT_EQ(writes[0].name, "P/counter");
    EXPECT_EQ(writes[0].value, Value(std::int64_t{-5}));
    EXPECT_EQ(writes[1].name, "P/flag");
    EXPECT_EQ(writes[1].value, Value(true));
    EXPECT_EQ(writes[2].value, Value(2.25F));
    EXPECT_EQ(writes[3].name, "P/exact");
    EXPECT_EQ(writes[3].value, Value(-0.125));
    EXPECT_EQ(writes[4].value, Value(std::string("on")));
    EXPECT_EQ(writes[5].name, "P/small");
    EXPECT_EQ(writes[5].value, Value(std::int64_t{-1}));
    EXPECT_EQ(writes[6].value, Value(std::int64_t{1700000000123} * 1'000'000));
}

struct BadCase {
    const char* what;
    std::vector<std::uint8_t> metric;
    ErrorCode code;
    const char* names;
};

TEST(SparkplugPayload, BadNcmdMetricsAreRefusedByCodeAndName) {
    std::vector<BadCase> cases;
    auto add = [&](const char* what, ErrorCode code, const char* names, auto build) {
        BadCase c{what, {}, code, names};
        build(c.metric);
        cases.push_back(std::move(c));
    };
    add("unknown name", ErrorCode::UnknownMetric, "P/nothing", [](auto& m) {
        stringField(m, 1, "P/nothing");
        varintField(m, 10, 1);
    });
    add("unknown alias", ErrorCode::UnknownMetric, "alias 99", [](auto& m) {
        varintField(m, 2, 99);
        varintField(m, 10, 1);
    });
    add("unknown datatype", ErrorCode::UnknownDatatype, "P/counter", [](auto& m) {
        stringField(m, 1, "P/counter");
        varintField(m, 4, 99);
        varintField(m, 10, 1);
    });
    add("datatype not the birth's", ErrorCode::DatatypeMismatch, "P/counter", [](auto& m) {
        stringField(m, 1, "P/counter");
        varintField(m, 4, 4); // Int64 for a DINT
        varintField(m, 11, 1);
    });
    add("string for a DINT", ErrorCode::ValueTypeMismatch, "P/counter", [](auto& m) {
        stringField(m, 1, "P/counter");
        stringField(m, 15, "12");
    });
    add("no value", ErrorCode::ValueTypeMismatch, "P/flag", [](auto& m) { stringField(m, 1, "P/flag"); });
    add("null", ErrorCode::ValueTypeMismatch, "P/flag", [](auto& m) {
        stringField(m, 1, "P/flag");
        varintField(m, 7, 1);
        varintField(m, 14, 1);
    });
    add("bytes for a STRING", ErrorCode::ValueTypeMismatch, "P/text", [](auto& m) {
        stringField(m, 1, "P/text");
        bytesField(m, 16, {1, 2});
    });
    add("300 for a SINT", ErrorCode::OutOfRange, "P/small", [](auto& m) {
        stringField(m, 1, "P/small");
        varintField(m, 10, 300);
    });
    add("70000 for a UINT", ErrorCode::OutOfRange, "P/uword", [](auto& m) {
        stringField(m, 1, "P/uword");
        varintField(m, 10, 70000);
    });
    add("a DT before 1970", ErrorCode::OutOfRange, "P/stamp", [](auto& m) {
        stringField(m, 1, "P/stamp");
        varintField(m, 11, static_cast<std::uint64_t>(-1));
    });
    add("a TIME past LTIME's nanoseconds", ErrorCode::OutOfRange, "P/delay", [](auto& m) {
        stringField(m, 1, "P/delay");
        varintField(m, 11, std::uint64_t{1} << 62);
    });
    for (const BadCase& c : cases) {
        std::vector<std::uint8_t> good;
        stringField(good, 1, "P/flag");
        varintField(good, 14, 1);
        std::vector<MetricWrite> writes{MetricWrite{}};
        Error error;
        // The good metric first: nothing of the payload is written when a later one is bad.
        EXPECT_FALSE(decodeCommand(payloadOf({good, c.metric}), birthTable(), writes, error)) << c.what;
        EXPECT_EQ(error.code, c.code) << c.what << ": " << errorCodeName(error.code) << " " << error.message;
        EXPECT_EQ(error.metric, c.names) << c.what;
        EXPECT_FALSE(error.message.empty()) << c.what;
        EXPECT_TRUE(writes.empty()) << c.what;
    }
}

TEST(SparkplugPayload, MalformedAndOversizedPayloadsAreRefusedWhole) {
    const MetricTable table = birthTable();
    std::vector<MetricWrite> writes;
    Error error;
    EXPECT_FALSE(decodeCommand(std::vector<std::uint8_t>{0x12, 0x05, 0x0A}, table, writes, error)); // truncated
    EXPECT_EQ(error.code, ErrorCode::Malformed);
    EXPECT_TRUE(error.metric.empty());
    EXPECT_FALSE(decodeCommand(std::vector<std::uint8_t>(kMaxPayloadBytes + 1, 0), table, writes, error));
    EXPECT_EQ(error.code, ErrorCode::TooLarge);
    // An empty NCMD is a valid payload with nothing to write.
    EXPECT_TRUE(decodeCommand(std::vector<std::uint8_t>{}, table, writes, error));
    EXPECT_TRUE(writes.empty());
}

TEST(SparkplugPayload, DeeplyNestedTemplatesAreRefusedNotRecursedInto) {
    // A metric holding a template holding a metric ... 20,000 levels deep in 175 KB: protobuf-c
    // would recurse once per level and overflow the stack.
    // Built back to front (each level's header prepended), in linear time.
    std::vector<std::uint8_t> reversed;
    auto prepend = [&](std::uint32_t field) {
        std::vector<std::uint8_t> header;
        tag(header, field, 2);
        varint(header, reversed.size());
        reversed.insert(reversed.end(), header.rbegin(), header.rend());
    };
    for (int i = 0; i < 20000; ++i) {
        prepend(2);  // Template.metrics
        prepend(18); // Metric.template_value
    }
    prepend(2); // Payload.metrics
    const std::vector<std::uint8_t> payload(reversed.rbegin(), reversed.rend());
    ASSERT_LE(payload.size(), kMaxPayloadBytes);
    std::vector<MetricWrite> writes;
    Error error;
    EXPECT_FALSE(decodeCommand(payload, birthTable(), writes, error));
    EXPECT_EQ(error.code, ErrorCode::TooLarge) << error.message;
    Payload out;
    EXPECT_FALSE(decodePayload(payload, out, error));
    EXPECT_EQ(error.code, ErrorCode::TooLarge);
}

TEST(SparkplugPayload, EncodeRefusesAValueNotOfTheMetricsType) {
    Payload p;
    p.metrics = {metric("P/counter", 4, IecType::Dint, 1.5), metric("P/small", 2, IecType::Sint, std::int64_t{200})};
    std::string bytes;
    Error error;
    EXPECT_FALSE(encodePayload(p, bytes, error));
    EXPECT_EQ(error.code, ErrorCode::ValueTypeMismatch);
    EXPECT_EQ(error.metric, "P/counter");
    p.metrics.erase(p.metrics.begin());
    EXPECT_FALSE(encodePayload(p, bytes, error));
    EXPECT_EQ(error.code, ErrorCode::OutOfRange);
    EXPECT_EQ(error.metric, "P/small");
}

TEST(SparkplugPayload, BitStringsAndEnumerationsTravelAsUnsignedAndInt32WithTheirProperties) {
    MetricTable table;
    for (const MetricSpec& s : {MetricSpec{"P/mask", 1, IecType::Byte}, MetricSpec{"P/flags", 2, IecType::Word},
                                MetricSpec{"P/wide", 3, IecType::Dword}, MetricSpec{"P/huge", 4, IecType::Lword},
                                MetricSpec{"P/mode", 5, IecType::Enum}}) {
        ASSERT_TRUE(table.add(s));
    }
    Payload p;
    p.metrics = {metric("P/mask", 1, IecType::Byte, std::uint64_t{0xFF}),
                 metric("P/flags", 2, IecType::Word, std::uint64_t{0xFFFF}),
                 metric("P/wide", 3, IecType::Dword, std::uint64_t{0xDEADBEEF}),
                 metric("P/huge", 4, IecType::Lword, std::uint64_t{0xFFFFFFFFFFFFFFFF}),
                 metric("P/mode", 5, IecType::Enum, std::int64_t{-2})};
    p.metrics[4].properties = {{"Text", "Reverse"}};
    std::string bytes;
    Error error;
    ASSERT_TRUE(encodePayload(p, bytes, error)) << error.message;
    EXPECT_NE(bytes.find("Reverse"), std::string::npos) << "the property is in the payload";
    Payload back;
    ASSERT_TRUE(decodePayload(bytesOf(bytes), back, error)) << error.message;
    const std::vector<DataType> wire{DataType::UInt8, DataType::UInt16, DataType::UInt32, DataType::UInt64,
                                     DataType::Int32};
    for (std::size_t i = 0; i < wire.size(); ++i) {
        EXPECT_EQ(dataTypeOf(p.metrics[i].type), wire[i]) << p.metrics[i].name;
    }
    std::vector<MetricWrite> writes;
    ASSERT_TRUE(decodeCommand(bytesOf(bytes), table, writes, error)) << error.message;
    ASSERT_EQ(writes.size(), 5U);
    for (std::size_t i = 0; i < writes.size(); ++i) {
        EXPECT_EQ(writes[i].type, p.metrics[i].type);
        EXPECT_EQ(writes[i].value, p.metrics[i].value) << writes[i].name;
    }
    // 256 does not fit a BYTE.
    std::vector<std::uint8_t> raw = payloadOf({[] {
        std::vector<std::uint8_t> m;
        stringField(m, 1, "P/mask");
        varintField(m, 4, 5);
        varintField(m, 10, 256);
        return m;
    }()});
    EXPECT_FALSE(decodeCommand(raw, table, writes, error));
    EXPECT_EQ(error.code, ErrorCode::OutOfRange);
    EXPECT_EQ(error.metric, "P/mask");
    EXPECT_EQ(iecTypeByName("ENUM"), std::nullopt) << "an enumeration is told by var.list's enum list";
    EXPECT_EQ(iecTypeByName("dword"), IecType::Dword);
}

TEST(SparkplugPayload, TypeNamesAndTheTableRefuseDuplicates) {
    EXPECT_EQ(iecTypeByName("lreal"), IecType::Lreal);
    EXPECT_EQ(iecTypeByName("WSTRING"), std::nullopt);
    EXPECT_EQ(dataTypeOf(IecType::Udint), DataType::UInt32);
    EXPECT_EQ(dataTypeOf(IecType::Dt), DataType::DateTime);
    MetricTable t;
    EXPECT_TRUE(t.add({"a", 1, IecType::Bool}));
    EXPECT_FALSE(t.add({"a", 2, IecType::Bool}));
    EXPECT_FALSE(t.add({"b", 1, IecType::Bool}));
    EXPECT_EQ(t.size(), 1U);
    ASSERT_NE(t.byAlias(1), nullptr);
    EXPECT_EQ(t.byAlias(1)->name, "a");
}

} // namespace
} // namespace takt::agent::sparkplug
