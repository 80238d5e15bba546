// Safe state at every field peer: one fault matrix — a division by zero, an array index out of
// bounds, a watchdog trip, runtime.stop and the stop SIGTERM makes — run over every driver, each
// with the peer that sees its outputs: a libmodbus master reading takt's modbus-server, a libmodbus
// server written by modbus-tcp, a mosquitto subscriber of mqtt, the fake chip's lines of gpio, and
// io.read for loopback (its wire comes back as %I) and simulated. The peer must end with io.toml's
// [[io.safe_state]] values (not zeros, not the program's last outputs), and io.read %Q must report
// them while they are latched.
//
// The runtime is assembled in the test as `takt run` assembles it (Engine, DriverSet, ScanLoop;
// SIGTERM is ScanLoop::stop() then DriverSet::stop()), so the gpio driver can get its fake chip
// and the master can still ask the modbus-server between the two stop steps.
#include <rapidjson/document.h>

#include <optional>

#include "gpio.h"
#include "support/gpio_fake_chip.h"
#include "support/io_test_support.h"
#include "support/modbus_peer.h"
#include "support/mqtt_peer.h"
#include "support/rtu_peer.h"
#include "support/takt_cli.h"
#include "takt/bytecode/container.h"
#include "takt/engine/scan_loop.h"
#include "takt/engine/vm_runner.h"
#include "takt/io/driver_set.h"
#include "takt/io/io_config.h"

namespace takt::io::test {
namespace {

// %MB200 selects the fault: 1 divides by zero, 2 indexes past the array, 3 loops until the
// watchdog trips. %QB0 and %QW1 (bytes 2..3) are the outputs every peer sees.
constexpr const char* kProgram = R"(PROGRAM Main
VAR
    mode AT %MB200 : BYTE;
    q0 AT %QB0 : BYTE;
    w1 AT %QW1 : WORD;
    arr : ARRAY[0..3] OF INT;
    r : INT;
    spins : DINT;
END_VAR
q0 := 16#A5;
w1 := 16#1234;
IF mode = 1 THEN
    r := 100 / (BYTE_TO_INT(mode) - 1);
END_IF;
IF mode = 2 THEN
    arr[BYTE_TO_INT(mode) + 5] := 1;
END_IF;
WHILE mode = 3 DO
    spins := spins + 1;
    IF spins > 1000000 THEN
        spins := 0;
    END_IF;
END_WHILE;
END_PROGRAM
)";

constexpr const char* kSafeState = "[[io.safe_state]]\naddress = \"%QB0\"\nvalue = \"16#3C\"\n"
                                   "[[io.safe_state]]\naddress = \"%QW1\"\nvalue = \"16#BEEF\"\n";

struct Outputs {
    std::uint8_t q0 = 0;
    std::optional<std::uint16_t> w1; // gpio has no lines for %QW1
    bool operator==(const Outputs&) const = default;
};
constexpr Outputs kProgramValues{0xA5, 0x1234};
constexpr Outputs kSafeValues{0x3C, 0xBEEF};

std::string show(const std::optional<Outputs>& o) {
    if (!o) {
        return "(nothing)";
    }
    return o->w1 ? fmt::format("%QB0={:02x} %QW1={:04x}", o->q0, *o->w1) : fmt::format("%QB0={:02x}", o->q0);
}

enum class Trigger : std::uint8_t { DivideByZero, ArrayBound, Watchdog, RuntimeStop, Sigterm };
constexpr Trigger kTriggers[] = {Trigger::DivideByZero, Trigger::ArrayBound, Trigger::Watchdog, Trigger::RuntimeStop,
                                 Trigger::Sigterm};

const char* triggerName(Trigger t) {
    switch (t) {
    case Trigger::DivideByZero: return "DivideByZero";
    case Trigger::ArrayBound: return "ArrayBound";
    case Trigger::Watchdog: return "Watchdog";
    case Trigger::RuntimeStop: return "RuntimeStop";
    case Trigger::Sigterm: return "Sigterm";
    }
    return "?";
}

constexpr const char* kDrivers[] = {"loopback",      "simulated", "modbus-tcp", "modbus-rtu",
                                    "modbus-server", "mqtt",      "gpio"};

// program.stbc of kProgram, built once by `takt build`.
std::shared_ptr<const bytecode::Module> program() {
    static const std::shared_ptr<const bytecode::Module> module = [] {
        const TempDir dir;
        std::filesystem::create_directories(dir.path() / "src");
        dir.write("runtime.toml", "[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\n");
        dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
        dir.write("src/main.st", kProgram);
        const takt::test::RunResult built =
            takt::test::runTaktMerged("build --project " + takt::test::shellQuote(dir.path().string()));
        EXPECT_EQ(built.exitCode, 0) << built.out;
        bytecode::LoadResult r = bytecode::readProgramFile(dir.path() / "program.stbc");
        EXPECT_TRUE(r.ok()) << r.error;
        return std::make_shared<const bytecode::Module>(std::move(r.module));
    }();
    return module;
}

int jsonInt(const std::string& payload) {
    rapidjson::Document doc;
    doc.Parse(payload.c_str());
    if (doc.HasParseError()) {
        return -1;
    }
    const rapidjson::Value& v = doc.IsObject() && doc.HasMember("value") ? doc["value"] : doc;
    return v.IsInt() ? v.GetInt() : -1;
}

// One driver with its peer, and how the peer sees %QB0/%QW1 now.
class Field {
public:
    Field(std::string driver, const TempDir& dir) : driver_(std::move(driver)) {
        if (driver_ == "modbus-tcp") {
            port_ = freeTcpPort();
            server_ = std::make_unique<PeerServer>(port_);
            server_->start();
        } else if (driver_ == "modbus-rtu") {
            line_ = std::make_unique<SerialLine>(dir.path());
            EXPECT_TRUE(line_->start());
            slave_ = std::make_unique<RtuPeer>(line_->peerEnd(), 1);
            slave_->start();
        } else if (driver_ == "modbus-server") {
            port_ = freeTcpPort();
            master_ = std::make_unique<Master>(port_);
        } else if (driver_ == "mqtt") {
            broker_ = std::make_unique<Broker>(dir);
            EXPECT_TRUE(broker_->start());
            subscriber_ = std::make_unique<Peer>(broker_->port());
        }
    }

    [[nodiscard]] std::string ioToml() const {
        std::string params;
        if (driver_ == "loopback") {
            params = "bytes = 8\n";
        } else if (driver_ == "simulated") {
            params = "plant = \"tank\"\n";
        } else if (driver_ == "modbus-tcp") {
            params = fmt::format("address = \"127.0.0.1:{}\"\npoll_ms = 5\ntimeout_ms = 500\n"
                                 "outputs = [{{ area = \"coils\", start = 0, count = 8, address = \"%QX0.0\" }},\n"
                                 "  {{ area = \"holding_registers\", start = 10, count = 1, address = \"%QW1\" }}]\n",
                                 port_);
        } else if (driver_ == "modbus-rtu") {
            params = fmt::format("device = \"{}\"\npoll_ms = 5\ntimeout_ms = 500\n"
                                 "outputs = [{{ area = \"coils\", start = 0, count = 8, address = \"%QX0.0\" }},\n"
                                 "  {{ area = \"holding_registers\", start = 10, count = 1, address = \"%QW1\" }}]\n",
                                 line_->driverEnd());
        } else if (driver_ == "modbus-server") {
            params = fmt::format("listen = \"127.0.0.1:{}\"\n", port_); // default map: coils = %QX, holding = %QW
        } else if (driver_ == "mqtt") {
            params = fmt::format("broker = \"127.0.0.1:{}\"\nclient_id = \"takt-safe\"\nqos = 1\n"
                                 "publish = [{{ address = \"%QB0\", type = \"BYTE\", topic = \"line1/out/q0\" }},\n"
                                 "  {{ address = \"%QW1\", type = \"WORD\", topic = \"line1/out/w1\" }}]\n",
                                 broker_->port());
        } else if (driver_ == "gpio") {
            params = "outputs = [";
            for (int line = 0; line < 8; ++line) {
                params += fmt::format("{{ address = \"%QX0.{}\", line = {} }},", line, line);
            }
            params += "]\n";
        }
        return fmt::format("[io]\ndriver = \"{}\"\n\n[io.params]\n{}\n{}", driver_, params, kSafeState);
    }

    bool configure(DriverSet& set, const IoConfig& config, std::size_t outputBytes, std::string& error) {
        if (driver_ != "gpio") {
            return set.configure(config, outputBytes, error);
        }
        std::vector<std::unique_ptr<Driver>> drivers;
        drivers.push_back(std::make_unique<detail::GpioDriver>(
            [lines = lines_](const std::string&, std::string&) { return std::make_unique<FakeChip>(lines); }));
        return set.configure(std::move(drivers), config.drivers, config, outputBytes, error);
    }

    // What the peer holds now; `loopIo` answers io.read for the drivers observed through it.
    std::optional<Outputs> seen(const std::function<std::optional<Outputs>(engine::ImageArea)>& loopIo) {
        if (driver_ == "loopback") {
            return loopIo(engine::ImageArea::Input); // the wire: this cycle's %Q is the next cycle's %I
        }
        if (driver_ == "simulated") {
            return loopIo(engine::ImageArea::Output);
        }
        if (driver_ == "modbus-tcp") {
            return Outputs{static_cast<std::uint8_t>(coilBits([&](int i) { return server_->coil(i); })),
                           server_->holding(10)};
        }
        if (driver_ == "modbus-rtu") {
            return Outputs{static_cast<std::uint8_t>(coilBits([&](int i) { return slave_->coil(i); })),
                           slave_->holding(10)};
        }
        if (driver_ == "modbus-server") {
            const auto coils = master_->coilByte(0);
            const auto reg = master_->holding(1);
            if (!coils || !reg) {
                return std::nullopt;
            }
            return Outputs{*coils, *reg};
        }
        if (driver_ == "mqtt") {
            const int q0 = jsonInt(subscriber_->last("line1/out/q0"));
            const int w1 = jsonInt(subscriber_->last("line1/out/w1"));
            if (q0 < 0 || w1 < 0) {
                return std::nullopt;
            }
            return Outputs{static_cast<std::uint8_t>(q0), static_cast<std::uint16_t>(w1)};
        }
        const std::lock_guard lock(lines_->mutex);
        return Outputs{static_cast<std::uint8_t>(coilBits([&](int i) { return lines_->level[i] ? 1 : 0; })), {}};
    }

    // Whether the peer still holds what it saw once takt is gone (a server, a subscriber, a chip).
    [[nodiscard]] bool outlivesTakt() const {
        return driver_ == "modbus-tcp" || driver_ == "modbus-rtu" || driver_ == "mqtt" || driver_ == "gpio";
    }

private:
    static int coilBits(const std::function<int(int)>& bit) {
        int v = 0;
        for (int i = 0; i < 8; ++i) {
            v |= (bit(i) != 0 ? 1 : 0) << i;
        }
        return v;
    }

    std::string driver_;
    std::uint16_t port_ = 0;
    std::unique_ptr<PeerServer> server_;
    std::unique_ptr<Master> master_;
    std::unique_ptr<SerialLine> line_;
    std::unique_ptr<RtuPeer> slave_; // declared after line_: stops before the line goes away
    std::unique_ptr<Broker> broker_;
    std::unique_ptr<Peer> subscriber_;
    std::shared_ptr<FakeLines> lines_ = std::make_shared<FakeLines>();
};

// io.read through the scan loop's command queue, as the control endpoint submits it.
std::optional<Outputs> ioRead(engine::ScanLoop& loop, engine::ImageArea area) {
    const engine::ImageRange ranges[] = {{area, false, 0, 0, 1}, {area, false, 0, 2, 2}};
    std::uint8_t bytes[3] = {};
    engine::CommandResult result;
    engine::ScanCommand c;
    c.kind = engine::ScanCommandKind::Read;
    c.ranges = ranges;
    c.rangeCount = 2;
    c.readBytes = bytes;
    c.result = &result;
    if (!loop.submit(c)) {
        return std::nullopt;
    }
    const std::uint64_t ticket = loop.commandsSubmitted();
    if (!eventually([&] { return loop.commandsDone() >= ticket; }) || !result.ok) {
        return std::nullopt;
    }
    return Outputs{bytes[0], static_cast<std::uint16_t>(bytes[1] | (bytes[2] << 8))};
}

void submitAndWait(engine::ScanLoop& loop, engine::ScanCommand c) {
    engine::CommandResult result;
    c.result = &result;
    ASSERT_TRUE(loop.submit(c));
    const std::uint64_t ticket = loop.commandsSubmitted();
    ASSERT_TRUE(eventually([&] { return loop.commandsDone() >= ticket; }));
    EXPECT_TRUE(result.ok) << (result.refusal != nullptr ? result.refusal : "");
}

void writeMode(engine::ScanLoop& loop, std::uint8_t mode) {
    const engine::ImageRange range{engine::ImageArea::Memory, false, 0, 200, 1};
    engine::ScanCommand c;
    c.kind = engine::ScanCommandKind::Write;
    c.ranges = &range;
    c.rangeCount = 1;
    c.writeBytes = &mode;
    submitAndWait(loop, c);
}

class SafeStateMatrix : public ::testing::TestWithParam<std::tuple<const char*, Trigger>> {};

TEST_P(SafeStateMatrix, ThePeerSeesTheConfiguredSafeValues) {
    const std::string driver = std::get<0>(GetParam());
    const Trigger trigger = std::get<1>(GetParam());
    if (driver == "mqtt" && !std::filesystem::exists(kBroker)) {
        GTEST_SKIP() << "mosquitto is not installed (scripts/setup.sh installs it)";
    }
    if (driver == "modbus-rtu" && !std::filesystem::exists(kSocat)) {
        GTEST_SKIP() << "socat is not installed (scripts/setup.sh installs it)";
    }
    const TempDir dir;
    Field field(driver, dir);
    IoConfigResult parsed = parseIoConfig(field.ioToml(), "io.toml", false);
    ASSERT_TRUE(parsed.config) << field.ioToml();

    engine::CycleClock clock;
    engine::Engine engine(std::make_unique<engine::VmRunner>(0), clock);
    engine::FaultReport initFault;
    ASSERT_TRUE(engine.load(std::make_unique<engine::LoadedProgram>(program(), "matrix"), initFault))
        << initFault.message;
    DriverSet drivers;
    std::string error;
    ASSERT_TRUE(field.configure(drivers, *parsed.config, engine.area(bytecode::IoArea::Output).size(), error)) << error;
    ASSERT_TRUE(drivers.start(error)) << error;
    engine::ScanOptions options;
    options.periodNs = 5'000'000;
    options.watchdog.enabled = true;
    options.watchdog.timeoutMs = 200;
    options.watchdog.action = engine::FaultAction::SafeHalt;
    options.faultPolicy = engine::FaultAction::SafeHalt;
    engine::ScanLoop loop(engine, clock, drivers, options);
    ASSERT_TRUE(loop.start(error)) << error;
    const auto loopIo = [&](engine::ImageArea area) { return ioRead(loop, area); };

    std::optional<Outputs> seen;
    ASSERT_TRUE(eventually([&] { return (seen = field.seen(loopIo)) && seen->q0 == kProgramValues.q0; }))
        << driver << ": the peer never saw the program's outputs: " << show(seen);

    switch (trigger) {
    case Trigger::DivideByZero: writeMode(loop, 1); break;
    case Trigger::ArrayBound: writeMode(loop, 2); break;
    case Trigger::Watchdog: writeMode(loop, 3); break;
    case Trigger::RuntimeStop: {
        engine::ScanCommand c;
        c.kind = engine::ScanCommandKind::Stop;
        submitAndWait(loop, c);
        break;
    }
    case Trigger::Sigterm: loop.stop(); break;
    }
    // The expected safe values for this peer (gpio carries %QB0 only).
    Outputs safe = kSafeValues;
    if (driver == "gpio") {
        safe.w1.reset();
    }
    if (trigger == Trigger::Sigterm) {
        // What `takt run` reports in its last status line; the drivers are still up here.
        const engine::ScanSnapshot s = loop.snapshot();
        ASSERT_GE(s.outputBytes, 4U);
        EXPECT_EQ((Outputs{s.outputs[0], static_cast<std::uint16_t>(s.outputs[2] | (s.outputs[3] << 8))}), kSafeValues);
        const auto fromSnapshot = [&](engine::ImageArea area) -> std::optional<Outputs> {
            const auto& b = area == engine::ImageArea::Input ? s.inputs : s.outputs;
            return Outputs{b[0], static_cast<std::uint16_t>(b[2] | (b[3] << 8))};
        };
        EXPECT_TRUE(eventually([&] { return field.seen(fromSnapshot) == safe; }))
            << driver << " after the scan stopped: " << show(field.seen(fromSnapshot));
        drivers.stop();
        if (field.outlivesTakt()) {
            EXPECT_EQ(field.seen(fromSnapshot), safe) << driver << " after the drivers stopped";
        }
        return;
    }
    if (trigger != Trigger::RuntimeStop) {
        ASSERT_TRUE(eventually([&] { return loop.snapshot().state == engine::ScanState::Halted; }))
            << triggerName(trigger) << " did not halt the program";
        ASSERT_TRUE(loop.lastFault().has_value());
        EXPECT_EQ(loop.lastFault()->kind, trigger == Trigger::Watchdog ? "watchdog" : "runtime");
    }
    EXPECT_TRUE(eventually([&] { return field.seen(loopIo) == safe; }))
        << driver << " after " << triggerName(trigger) << ": " << show(field.seen(loopIo));
    EXPECT_EQ(ioRead(loop, engine::ImageArea::Output), kSafeValues) << "io.read %QB0, %QW1 while latched";
    loop.stop();
    drivers.stop();
    if (field.outlivesTakt()) {
        EXPECT_EQ(field.seen(loopIo), safe) << driver << " after the drivers stopped";
    }
}

INSTANTIATE_TEST_SUITE_P(EveryDriver, SafeStateMatrix,
                         ::testing::Combine(::testing::ValuesIn(kDrivers), ::testing::ValuesIn(kTriggers)),
                         [](const ::testing::TestParamInfo<SafeStateMatrix::ParamType>& info) {
                             std::string name = std::get<0>(info.param);
                             std::erase(name, '-');
                             return name + "_" + triggerName(std::get<1>(info.param));
                         });

} // namespace
} // namespace takt::io::test
