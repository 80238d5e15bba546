// DriverSet: drivers created from an IoConfig, ownership checked, cycles fanned
// out, safe state and health summarised, status blocks written without allocating.
#include <array>

#include <gtest/gtest.h>

#include "../counting_new.h"
#include "takt/io/driver_set.h"

namespace takt::io {
namespace {

DriverSpec loopbackSpec(std::int64_t bytes, const std::string& prefix) {
    DriverSpec s;
    s.name = "loopback";
    s.params.insert("bytes", bytes);
    s.source = ParamSource{"io.toml", prefix};
    return s;
}

// A driver that owns one range of each given area and records what it was
// asked.
class Probe final : public Driver {
public:
    Probe(std::vector<ByteRange> ranges, Health h = Health::Ok, bool failStart = false)
        : ranges_(std::move(ranges)), health_(h), failStart_(failStart) {}
    std::string_view name() const noexcept override { return "probe"; }
    bool init(const DriverSpec& /*spec*/, std::string& /*error*/) override { return true; }
    std::vector<ByteRange> ownedRanges() const override { return ranges_; }
    bool start(std::string& error) override {
        if (failStart_) {
            error = "peer refused";
            return false;
        }
        started = true;
        return true;
    }
    void readInputs(ImageView image) noexcept override {
        ++reads;
        for (const ByteRange& r : ranges_) {
            if (r.area == Area::Input) {
                image.inputs[r.first] = marker;
            }
        }
    }
    void writeOutputs(ImageView image) noexcept override {
        ++writes;
        lastOutput = image.outputs.empty() ? 0 : image.outputs[0];
    }
    void applySafeState(std::span<const std::uint8_t> safe) noexcept override {
        safeSeen.assign(safe.begin(), safe.end());
    }
    void releaseSafeState() noexcept override { ++releases; }
    void setSafeImage(std::span<const std::uint8_t> safe) override {
        safeImageBeforeStart = !started;
        safeImage.assign(safe.begin(), safe.end());
    }
    HealthStatus health() const override { return {health_, health_ == Health::Ok ? "" : "peer gone"}; }
    void stop() noexcept override { stopped = started; }

    std::vector<ByteRange> ranges_;
    Health health_;
    bool failStart_;
    bool started = false, stopped = false, safeImageBeforeStart = false;
    std::vector<std::uint8_t> safeImage;
    int reads = 0, writes = 0, releases = 0;
    std::uint8_t marker = 0;
    std::uint8_t lastOutput = 0;
    std::vector<std::uint8_t> safeSeen;
};

TEST(DriverSet, OverlappingRangesAreRejectedNamingBothDriversAndTheBytes) {
    IoConfig config;
    config.file = "io.toml";
    config.drivers = {loopbackSpec(8, "io.drivers[0].params"), loopbackSpec(2, "io.drivers[1].params")};
    DriverSet set;
    std::string error;
    EXPECT_FALSE(set.configure(config, 0, error));
    EXPECT_NE(error.find("io.drivers[0].params"), std::string::npos) << error;
    EXPECT_NE(error.find("io.drivers[1].params"), std::string::npos) << error;
    EXPECT_NE(error.find("both write %IB0..%IB1"), std::string::npos) << error;
}

// Outputs served to masters by modbus-server, published by mqtt and driven by loopback: only the
// server writes %Q (its masters' writes), the others only read it, so the set is accepted.
TEST(DriverSet, DriversThatOnlyReadOutputsShareThemWithTheirWriter) {
    IoConfigResult parsed = parseIoConfig(R"([io]
drivers = [
  { name = "modbus-server", params = { listen = "127.0.0.1:15020" } },
  { name = "mqtt", params = { broker = "127.0.0.1:1883", client_id = "plc", topic_out = "line1/out", publish = [{ address = "%QW0", type = "INT", topic = "line1/speed" }] } },
  { name = "loopback", params = { bytes = 4 } },
]
)",
                                          "io.toml", false);
    ASSERT_TRUE(parsed.config);
    DriverSet set;
    std::string error;
    EXPECT_TRUE(set.configure(*parsed.config, 0, error)) << error;

    // A second server's masters would write the same coils: two writers, named with their keys.
    parsed = parseIoConfig(R"([io]
drivers = [
  { name = "modbus-server", params = { listen = "127.0.0.1:15020" } },
  { name = "mqtt", params = { broker = "127.0.0.1:1883", client_id = "plc", topic_out = "line1/out" } },
  { name = "modbus-server", params = { listen = "127.0.0.1:15021", map = [{ table = "coils", start = 8, count = 8, address = "%QX1.0" }, { table = "holding_registers", start = 0, count = 4, address = "%MW100" }] } },
]
)",
                           "io.toml", false);
    ASSERT_TRUE(parsed.config);
    EXPECT_FALSE(set.configure(*parsed.config, 0, error));
    EXPECT_NE(error.find("(io.drivers[0].params) and "), std::string::npos) << error;
    EXPECT_NE(error.find("(io.drivers[2].params) both write %QB1"), std::string::npos) << error;
}

// truST's example io.toml: modbus-tcp in its input_start form and mqtt's whole-image topic_in
// both write from %IB0. Accepted with a warning at the later driver's line naming both drivers
// and the shared bytes; any other writer on those bytes is still refused.
TEST(DriverSet, TrustWholeImageWritersShareInputsWithAWarning) {
    IoConfigResult parsed = parseIoConfig(R"([io]
drivers = [
  { name = "modbus-tcp", params = { address = "127.0.0.1:15502", input_start = 0, input_count = 2, output_start = 0 } },
  { name = "mqtt", params = { broker = "127.0.0.1:1883", topic_in = "line1/in", topic_out = "line1/out", in_bytes = 8 } },
]
)",
                                          "io.toml", false);
    ASSERT_TRUE(parsed.config);
    DriverSet set;
    std::string error;
    ASSERT_TRUE(set.configure(*parsed.config, 0, error)) << error;
    ASSERT_EQ(set.warnings().size(), 1U);
    const std::string& w = set.warnings()[0];
    EXPECT_NE(w.find("io.toml:3:3: driver 'modbus-tcp' (io.drivers[0].params) and io.toml:4:3: driver 'mqtt' "
                     "(io.drivers[1].params) both write %IB0..%IB3"),
              std::string::npos)
        << w;
    EXPECT_NE(w.find("the later driver in the list wins for the bytes it writes in a cycle"), std::string::npos) << w;

    // With explicit inputs maps modbus-tcp is an ordinary writer: the clash is an error again.
    parsed = parseIoConfig(R"([io]
drivers = [
  { name = "modbus-tcp", params = { address = "127.0.0.1:15502", inputs = [{ area = "input_registers", start = 0, count = 2, address = "%IW0" }] } },
  { name = "mqtt", params = { broker = "127.0.0.1:1883", topic_in = "line1/in", in_bytes = 8 } },
]
)",
                           "io.toml", false);
    ASSERT_TRUE(parsed.config);
    EXPECT_FALSE(set.configure(*parsed.config, 0, error));
    EXPECT_NE(error.find("both write %IB0..%IB3"), std::string::npos) << error;
    EXPECT_TRUE(set.warnings().empty());

    // So is a per-variable subscribe on bytes the truST form writes.
    parsed = parseIoConfig(R"([io]
drivers = [
  { name = "modbus-tcp", params = { address = "127.0.0.1:15502", input_start = 0 } },
  { name = "mqtt", params = { broker = "127.0.0.1:1883", subscribe = [{ topic = "a", address = "%IW2", type = "INT" }] } },
]
)",
                           "io.toml", false);
    ASSERT_TRUE(parsed.config);
    EXPECT_FALSE(set.configure(*parsed.config, 0, error));
    EXPECT_NE(error.find("both write %IB4..%IB5"), std::string::npos) << error;
}

TEST(DriverSet, UnknownDriverNameIsAnError) {
    IoConfig config;
    config.file = "io.toml";
    DriverSpec s;
    s.name = "teleport";
    s.source = ParamSource{"io.toml", "io.params"};
    s.line = 2;
    s.column = 1;
    config.drivers = {s};
    DriverSet set;
    std::string error;
    EXPECT_FALSE(set.configure(config, 0, error));
    EXPECT_NE(error.find("io.toml:2:1: driver 'teleport'"), std::string::npos) << error;
    EXPECT_NE(error.find("unknown driver (known: loopback"), std::string::npos) << error;
}

TEST(DriverSet, BadParamsNameTheDriver) {
    IoConfig config;
    config.file = "io.toml";
    config.drivers = {loopbackSpec(0, "io.params")};
    DriverSet set;
    std::string error;
    EXPECT_FALSE(set.configure(config, 0, error));
    EXPECT_NE(error.find("io.params.bytes"), std::string::npos) << error;
}

TEST(DriverSet, FansOutSizesTheImageAndHandsEveryDriverTheSafeImage) {
    auto a = std::make_unique<Probe>(std::vector<ByteRange>{{Area::Input, 0, 2}, {Area::Output, 0, 2}});
    auto b = std::make_unique<Probe>(std::vector<ByteRange>{{Area::Input, 4, 4}, {Area::Memory, 0, 16}});
    Probe* pa = a.get();
    Probe* pb = b.get();
    pa->marker = 0xA1;
    pb->marker = 0xB2;
    std::vector<std::unique_ptr<Driver>> drivers;
    drivers.push_back(std::move(a));
    drivers.push_back(std::move(b));
    IoConfig config;
    config.file = "io.toml";
    SafeValue v;
    v.address = "%QX1.0";
    v.range = {Area::Output, 1, 1};
    v.isBit = true;
    v.bit = 0;
    v.value = 1;
    config.safeState = {v};
    DriverSet set;
    std::string error;
    ASSERT_TRUE(set.configure(std::move(drivers), {DriverSpec{}, DriverSpec{}}, config, 6, error)) << error;
    EXPECT_EQ(set.inputBytes(), 8u);
    EXPECT_EQ(set.outputBytes(), 6u); // the program's 6 bytes of %Q
    EXPECT_EQ(set.memoryBytes(), 16u);
    // Handed over up front, for a driver's own comm-loss path.
    const std::vector<std::uint8_t> safe{0, 1, 0, 0, 0, 0};
    EXPECT_EQ(pa->safeImage, safe);
    EXPECT_EQ(pb->safeImage, safe);
    EXPECT_TRUE(pa->safeImageBeforeStart);
    ASSERT_TRUE(set.start(error)) << error;
    std::vector<std::uint8_t> in(8), out(6, 0x33), mem(16);
    engine::ProcessImageView view{in, out, mem, 0, 1'000'000};
    set.readInputs(view);
    set.writeOutputs(view);
    EXPECT_EQ(in[0], 0xA1);
    EXPECT_EQ(in[4], 0xB2);
    EXPECT_EQ(pa->lastOutput, 0x33);
    EXPECT_EQ(pb->writes, 1);
    set.applySafeState();
    const std::vector<std::uint8_t> expected{0, 1, 0, 0, 0, 0};
    EXPECT_EQ(pa->safeSeen, expected);
    EXPECT_EQ(pb->safeSeen, expected);
    set.releaseSafeState();
    EXPECT_EQ(pa->releases + pb->releases, 2);
    set.stop();
    EXPECT_TRUE(pa->stopped);
    EXPECT_TRUE(pb->stopped);
}

TEST(DriverSet, HealthSummaryIsTheWorstAfterARefresh) {
    std::vector<std::unique_ptr<Driver>> drivers;
    drivers.push_back(std::make_unique<Probe>(std::vector<ByteRange>{{Area::Input, 0, 1}}));
    drivers.push_back(std::make_unique<Probe>(std::vector<ByteRange>{{Area::Input, 1, 1}}, Health::Degraded));
    IoConfig config;
    DriverSet set;
    std::string error;
    ASSERT_TRUE(set.configure(std::move(drivers), {DriverSpec{}, DriverSpec{}}, config, 0, error));
    const auto health = set.refreshHealth();
    ASSERT_EQ(health.size(), 2u);
    EXPECT_EQ(health[1].status.reason, "peer gone");
    const engine::IoHealthSummary s = set.healthSummary();
    EXPECT_EQ(s.worst, static_cast<std::uint8_t>(Health::Degraded));
    EXPECT_EQ(s.degraded, 1);
    EXPECT_EQ(s.faulted, 0);
}

TEST(DriverSet, AFailedStartStopsTheDriversAlreadyStarted) {
    auto a = std::make_unique<Probe>(std::vector<ByteRange>{{Area::Input, 0, 1}});
    Probe* pa = a.get();
    std::vector<std::unique_ptr<Driver>> drivers;
    drivers.push_back(std::move(a));
    drivers.push_back(std::make_unique<Probe>(std::vector<ByteRange>{{Area::Input, 1, 1}}, Health::Ok, true));
    IoConfig config;
    config.file = "io.toml";
    DriverSet set;
    std::string error;
    ASSERT_TRUE(set.configure(std::move(drivers), {DriverSpec{}, DriverSpec{}}, config, 0, error));
    EXPECT_FALSE(set.start(error));
    EXPECT_NE(error.find("cannot start: peer refused"), std::string::npos) << error;
    EXPECT_TRUE(pa->stopped);
}

// A peer driver that counts its exchanges, with a health the test sets.
class Exchanger final : public Driver {
public:
    std::string_view name() const noexcept override { return "exchanger"; }
    bool init(const DriverSpec& /*spec*/, std::string& /*error*/) override { return true; }
    std::vector<ByteRange> ownedRanges() const override { return {{Area::Input, 0, 2}}; }
    bool start(std::string& /*error*/) override { return true; }
    void readInputs(ImageView /*image*/) noexcept override {}
    void writeOutputs(ImageView /*image*/) noexcept override {}
    void applySafeState(std::span<const std::uint8_t> /*safe*/) noexcept override {}
    void releaseSafeState() noexcept override {}
    HealthStatus health() const override { return status; }
    bool countsExchanges() const noexcept override { return true; }
    void stop() noexcept override {}
    void exchange() { countGoodExchange(); }

    HealthStatus status;
};

// The status block at %IB8 as the program reads it: flags, health, code, cycles since the last
// good exchange — written by the scan thread's readInputs from what refreshHealth packed.
TEST(DriverSet, TheStatusBlockTellsTheProgramHowItsDriverIs) {
    auto owned = std::make_unique<Exchanger>();
    Exchanger* d = owned.get();
    std::vector<std::unique_ptr<Driver>> drivers;
    drivers.push_back(std::move(owned));
    DriverSpec spec;
    spec.status = ByteRange{Area::Input, 8, kStatusBlockBytes};
    IoConfig config;
    DriverSet set;
    std::string error;
    ASSERT_TRUE(set.configure(std::move(drivers), {spec}, config, 0, error)) << error;
    ASSERT_EQ(set.inputBytes(), 16u); // the block's bytes are part of %I
    std::vector<std::uint8_t> in(16, 0xEE);
    std::vector<std::uint8_t> out(1, 0);
    engine::ProcessImageView view;
    view.inputs = in;
    view.outputs = out;
    const auto cycles = [&in] {
        return static_cast<std::uint32_t>(in[12] | in[13] << 8 | in[14] << 16 | in[15] << 24);
    };
    (void)set.refreshHealth();
    d->exchange();
    set.readInputs(view);
    EXPECT_EQ(in[8], 0x01); // ok
    EXPECT_EQ(in[9], 0);    // health ok
    EXPECT_EQ(in[10] | in[11] << 8, 0);
    EXPECT_EQ(cycles(), 0u);
    set.readInputs(view);
    set.readInputs(view);
    EXPECT_EQ(cycles(), 2u); // no exchange for two cycles
    d->exchange();
    set.readInputs(view);
    EXPECT_EQ(cycles(), 0u);
    // The peer is lost: degraded, bad, "communication lost" (7), and the count climbs.
    d->status = HealthStatus{Health::Degraded, "lost", IoError::CommLost, true};
    (void)set.refreshHealth();
    // The scan thread's part allocates nothing.
    test::gAllocations = 0;
    test::gCounting = true;
    for (int i = 0; i < 5; ++i) {
        set.readInputs(view);
    }
    test::gCounting = false;
    EXPECT_EQ(test::gAllocations.load(), 0u);
    EXPECT_EQ(in[8], 0x02);
    EXPECT_EQ(in[9], 1);
    EXPECT_EQ(in[10] | in[11] << 8, 7);
    EXPECT_EQ(cycles(), 5u);
    d->status = HealthStatus{Health::Faulted, "lost", IoError::Timeout, false};
    (void)set.refreshHealth();
    set.readInputs(view);
    EXPECT_EQ(in[8], 0x04);
    EXPECT_EQ(in[9], 2);
    EXPECT_EQ(in[10] | in[11] << 8, 4);
    EXPECT_EQ(in[0], 0xEE); // the driver's own bytes are not the block's
}

// The block is one more writer of its bytes: overlapping the driver's own inputs is refused.
TEST(DriverSet, AStatusBlockOverTheDriversOwnBytesIsRefused) {
    std::vector<std::unique_ptr<Driver>> drivers;
    drivers.push_back(std::make_unique<Exchanger>());
    DriverSpec spec;
    spec.name = "exchanger";
    spec.source = ParamSource{"io.toml", "io.drivers[0].params"};
    spec.status = ByteRange{Area::Input, 0, kStatusBlockBytes};
    spec.statusLine = 4;
    spec.statusColumn = 1;
    IoConfig config;
    config.file = "io.toml";
    DriverSet set;
    std::string error;
    EXPECT_FALSE(set.configure(std::move(drivers), {spec}, config, 0, error));
    EXPECT_NE(error.find("io.toml:4:1: status block of driver 'exchanger' (io.drivers[0].status)"), std::string::npos)
        << error;
    EXPECT_NE(error.find("both write %IB0..%IB1"), std::string::npos) << error;
}

// A driver whose init() failed (or never ran) has no exchange buffers: the scan thread's calls
// read and write nothing rather than reach past a null slot (UBSan stops the test otherwise).
TEST(DriverSet, EveryDriverWithoutInitReadsAndWritesNothing) {
    for (const std::string_view name : driverNames()) {
        SCOPED_TRACE(name);
        std::unique_ptr<Driver> d = createDriver(name);
        ASSERT_NE(d, nullptr);
        std::array<std::uint8_t, 8> in{1, 2, 3, 4, 5, 6, 7, 8}, out{}, mem{};
        const ImageView image{in, out, mem};
        d->readInputs(image);
        d->writeOutputs(image);
        d->applySafeState(out);
        d->releaseSafeState();
        d->writeOutputs(image);
        d->stop();
    }
}

} // namespace
} // namespace takt::io
