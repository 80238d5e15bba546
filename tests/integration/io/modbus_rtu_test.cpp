// The modbus-rtu driver against a real RTU slave: a libmodbus server on one end of a socat
// pseudo-terminal pair (rtu_peer.h), the driver on the other; and loop://, takt's own simulated
// slave.
#include "support/rtu_peer.h"
#include "support/takt_cli.h"
#include "takt/io/driver_set.h"
#include "takt/io/io_config.h"

namespace takt::io::test {
namespace {

// A serial line and a slave 41 on it, started; skips the test without socat.
class RtuTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(kSocat)) {
            GTEST_SKIP() << "socat is not installed (scripts/setup.sh installs it)";
        }
        ASSERT_TRUE(line_.start());
        peer_.start();
    }
    void TearDown() override {
        peer_.stop();
        line_.stop();
    }
    // The driver's params: this line, slave 41 unless `params` says otherwise.
    [[nodiscard]] std::string params(std::string_view rest) const {
        return fmt::format("device = '{}'\nbaud = 19200\nparity = 'even'\n{}", line_.driverEnd(), rest);
    }

    TempDir dir_;
    SerialLine line_{dir_.path()};
    RtuPeer peer_{line_.peerEnd(), 41};
};

TEST(ModbusRtuParams, ErrorsNameTheKey) {
    EXPECT_EQ(initError("modbus-rtu", ""), "io.params.device: missing (required)");
    EXPECT_EQ(initError("modbus-rtu", "device = '/dev/ttyS0'\naddress = 'h'"),
              "io.params.address: unknown parameter of the modbus-rtu driver (known: device, baud, parity, data_bits, "
              "stop_bits, serial_mode, slave, unit_id, timeout_ms, poll_ms, on_error, input_start, output_start, "
              "input_count, output_count, inputs, outputs, comm_loss_timeout_ms, reconnect_ms, reconnect_max_ms)");
    EXPECT_EQ(initError("modbus-rtu", "device = ''"),
              "io.params.device: must not be empty (a serial device such as /dev/ttyUSB0, or loop://NAME)");
    EXPECT_EQ(initError("modbus-rtu", "device = 'loop://'"), "io.params.device: loop:// needs a name (loop://NAME)");
    EXPECT_EQ(initError("modbus-rtu", "device = '/dev/ttyS0'\nbaud = 19201"),
              "io.params.baud: 19201 is not a standard rate (expected one of 110, 300, 600, 1200, 2400, 4800, 9600, "
              "19200, 38400, 57600, 115200, 230400, 460800, 500000, 576000, 921600, 1000000, 1152000, 1500000, "
              "2000000, 2500000, 3000000, 3500000, 4000000)");
    EXPECT_EQ(initError("modbus-rtu", "device = '/dev/ttyS0'\nparity = 'mark'"),
              "io.params.parity: unknown parity 'mark' (expected none, even or odd)");
    EXPECT_EQ(initError("modbus-rtu", "device = '/dev/ttyS0'\ndata_bits = 9"),
              "io.params.data_bits: expected an integer 5..8");
    EXPECT_EQ(initError("modbus-rtu", "device = '/dev/ttyS0'\nstop_bits = 0"),
              "io.params.stop_bits: expected an integer 1..2");
    EXPECT_EQ(initError("modbus-rtu", "device = '/dev/ttyS0'\nserial_mode = 'rs422'"),
              "io.params.serial_mode: unknown mode 'rs422' (expected rs232 or rs485)");
    EXPECT_EQ(initError("modbus-rtu", "device = '/dev/ttyS0'\nslave = 0"),
              "io.params.slave: expected an integer 1..247");
    EXPECT_EQ(initError("modbus-rtu", "device = '/dev/ttyS0'\nunit_id = 248"),
              "io.params.unit_id: expected an integer 1..247");
    EXPECT_EQ(initError("modbus-rtu", "device = '/dev/ttyS0'\nslave = 1\nunit_id = 1"),
              "io.params.unit_id: give either slave or unit_id (the same thing), not both");
    EXPECT_EQ(initError("modbus-rtu", "device = '/dev/ttyS0'\ninput_start = 4\ninputs = []"),
              "io.params.input_start: belongs to the truST form; with explicit inputs/outputs maps give `start` per "
              "map");
    // truST's example projects, as written.
    EXPECT_EQ(initError("modbus-rtu", "device = 'loop://cip-conductivity-meter'\nbaud = 19200\nparity = 'even'\n"
                                      "slave = 41\ntimeout_ms = 250\non_error = 'warn'"),
              "");
}

TEST(ModbusRtuParams, LoopDeviceIsAWarningAtTheKey) {
    const IoConfigResult r = parseIoConfig("[io]\ndrivers = [\n  { name = 'modbus-rtu', params = { device = "
                                           "'loop://meter', slave = 41 } },\n]\n",
                                           "io.toml", false);
    ASSERT_TRUE(r.config.has_value());
    ASSERT_EQ(r.diagnostics.size(), 1U);
    const auto& d = r.diagnostics[0];
    EXPECT_EQ(d.severity, engine::ConfigDiagnostic::Severity::Warning);
    EXPECT_EQ(d.key, "io.drivers[0].params.device");
    EXPECT_EQ(d.line, 3U);
    EXPECT_EQ(d.column, 37U); // at `device`
    EXPECT_NE(d.message.find("'loop://meter' is not a serial port"), std::string::npos) << d.message;
}

// A bad value is reported by `takt validate` at its own line and column.
TEST(ModbusRtuParams, ValidateNamesFileLineAndKey) {
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "src");
    dir.write("runtime.toml", "[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\n");
    dir.write("io.toml",
              "[io]\ndriver = \"modbus-rtu\"\n[io.params]\ndevice = \"/dev/ttyUSB0\"\n  parity = \"mark\"\n");
    dir.write("src/main.st", "PROGRAM Main\nEND_PROGRAM\n");
    const auto r = takt::test::runTaktMerged("validate --project " + takt::test::shellQuote(dir.path().string()));
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.out.find("io.toml:5:3: error: io.params.parity: unknown parity 'mark' (expected none, even or odd)"),
              std::string::npos)
        << r.out;
}

// A device that is not there is the field's problem, not a start error: the driver reports it
// under on_error and keeps trying.
TEST(ModbusRtu, MissingDeviceIsACommunicationError) {
    TempDir dir;
    auto d = makeDriver("modbus-rtu", fmt::format("device = '{}'\non_error = 'fault'\nreconnect_ms = 10",
                                                  (dir.path() / "ttyUSB9").string()));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    EXPECT_TRUE(eventually([&] { return d->health().health == Health::Faulted; }));
    EXPECT_NE(d->health().reason.find("cannot open serial device"), std::string::npos) << d->health().reason;
    d->stop();
}

// Explicit maps of all four tables, through the driver API at cycle rate.
TEST_F(RtuTest, ReadsInputsAndWritesOutputs) {
    for (int i = 0; i < 4; ++i) {
        peer_.setInputRegister(i, static_cast<std::uint16_t>(0x4100 + i));
    }
    peer_.setDiscreteInput(2, 1);
    auto d =
        makeDriver("modbus-rtu", params("slave = 41\npoll_ms = 2\ntimeout_ms = 200\n"
                                        "inputs = [{area = 'input_registers', start = 0, count = 4, address = '%IW0'},"
                                        " {area = 'discrete_inputs', start = 0, count = 8, address = '%IX8.0'}]\n"
                                        "outputs = [{area = 'coils', start = 0, count = 8, address = '%QX0.0'},"
                                        " {area = 'holding_registers', start = 100, count = 1, address = '%QW1'}]"));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    Image img;
    img.outputs[0] = 0b1001;
    Image::setWord(img.outputs, 2, 31000);
    EXPECT_TRUE(eventually(
        [&] { return img.word(img.inputs, 6) == 0x4103 && peer_.coil(3) == 1 && peer_.holding(100) == 31000; },
        [&] { cycle(*d, img); }));
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(img.word(img.inputs, 2 * static_cast<std::size_t>(i)), 0x4100 + i) << i;
    }
    EXPECT_EQ(img.inputs[8], 0b100); // discrete input 2 -> %IX8.2
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(peer_.coil(i), (0b1001 >> i) & 1) << i;
    }
    EXPECT_EQ(d->health().health, Health::Ok);
    d->stop();
}

// truST's form: input registers input_start.. -> %IW0.., %QW0.. -> holding registers output_start...
TEST_F(RtuTest, TrustFormMapsInputAndHoldingRegisters) {
    peer_.setInputRegister(10, 77);
    peer_.setInputRegister(11, 78);
    auto d = makeDriver("modbus-rtu", params("slave = 41\ntimeout_ms = 250\non_error = 'warn'\npoll_ms = 2\n"
                                             "input_start = 10\noutput_start = 20\ninput_count = 2\n"
                                             "output_count = 2"));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    Image img;
    Image::setWord(img.outputs, 0, 5);
    Image::setWord(img.outputs, 2, 6);
    EXPECT_TRUE(eventually(
        [&] {
            return img.word(img.inputs, 0) == 77 && img.word(img.inputs, 2) == 78 && peer_.holding(20) == 5 &&
                   peer_.holding(21) == 6;
        },
        [&] { cycle(*d, img); }));
    d->stop();
}

// Nobody answers slave 42 on this line: each request times out. on_error decides the health
// until comm_loss_timeout_ms, then the inputs are bad.
TEST_F(RtuTest, TimeoutFollowsOnErrorThenCommunicationLoss) {
    for (const char* policy : {"warn", "fault", "ignore"}) {
        auto d = makeDriver("modbus-rtu",
                            params(fmt::format("slave = 42\ntimeout_ms = 50\non_error = '{}'\n"
                                               "comm_loss_timeout_ms = 600\nreconnect_ms = 10\nreconnect_max_ms = 20",
                                               policy)));
        std::string error;
        ASSERT_TRUE(d->start(error)) << error;
        Image img;
        const Health expected = std::string_view(policy) == "fault" ? Health::Faulted : Health::Degraded;
        if (std::string_view(policy) != "ignore") {
            ASSERT_TRUE(eventually([&] { return d->health().reason.find("timed out") != std::string::npos; },
                                   [&] { cycle(*d, img); }))
                << policy << ": " << d->health().reason;
            EXPECT_EQ(d->health().health, expected) << policy;
        }
        ASSERT_TRUE(eventually([&] { return d->health().reason.find("communication lost") != std::string::npos; },
                               [&] { cycle(*d, img); }))
            << policy << ": " << d->health().reason;
        EXPECT_EQ(d->health().health, expected) << policy;
        EXPECT_NE(d->health().reason.find("inputs bad"), std::string::npos) << d->health().reason;
        d->stop();
    }
}

// The slave goes silent, then the line itself goes away (socat ends: the device disappears);
// both come back: the safe state reaches the slave first, then the program's outputs again.
TEST_F(RtuTest, CommunicationLossAndRecovery) {
    peer_.setInputRegister(0, 7);
    auto d = makeDriver("modbus-rtu",
                        params("slave = 41\npoll_ms = 5\ntimeout_ms = 100\non_error = 'warn'\n"
                               "comm_loss_timeout_ms = 300\nreconnect_ms = 20\nreconnect_max_ms = 100\n"
                               "inputs = [{area = 'input_registers', start = 0, count = 1, address = '%IW0'}]\n"
                               "outputs = [{area = 'coils', start = 0, count = 1, address = '%QX0.0'}]"));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    Image img;
    Image::setBit(img.outputs, 0, true);
    ASSERT_TRUE(
        eventually([&] { return img.word(img.inputs, 0) == 7 && peer_.coil(0) == 1; }, [&] { cycle(*d, img); }));

    peer_.stop();
    ASSERT_TRUE(eventually([&] { return d->health().reason.find("communication lost") != std::string::npos; },
                           [&] { cycle(*d, img); }));
    EXPECT_EQ(d->health().health, Health::Degraded);
    cycle(*d, img);
    EXPECT_EQ(img.word(img.inputs, 0), 0); // bad inputs read as zero

    line_.stop();
    ASSERT_TRUE(eventually([&] { return d->health().reason.find("cannot open serial device") != std::string::npos; },
                           [&] { cycle(*d, img); }))
        << d->health().reason;

    ASSERT_TRUE(line_.start());
    peer_.setCoil(0, 1); // so that a safe write of 0 is visible in the history
    peer_.clearHistory();
    peer_.setInputRegister(0, 9);
    peer_.start();
    ASSERT_TRUE(eventually(
        [&] { return img.word(img.inputs, 0) == 9 && peer_.coil(0) == 1 && d->health().health == Health::Ok; },
        [&] { cycle(*d, img); }))
        << d->health().reason;
    const auto history = peer_.coil0History();
    ASSERT_GE(history.size(), 2U);
    EXPECT_EQ(history.front(), 0); // the safe state reached the slave first
    EXPECT_EQ(history.back(), 1);  // then the program's output again
    d->stop();
}

// What `takt run` does on SIGTERM: applySafeState and stop at once; the slave ends safe.
TEST_F(RtuTest, StopRightAfterApplySafeStateLeavesTheSlaveSafe) {
    for (int round = 0; round < 3; ++round) {
        auto d =
            makeDriver("modbus-rtu", params("slave = 41\npoll_ms = 5\n"
                                            "outputs = [{area = 'coils', start = 0, count = 2, address = '%QX0.0'}]"));
        std::string error;
        ASSERT_TRUE(d->start(error)) << error;
        Image img;
        Image::setBit(img.outputs, 0, true);
        ASSERT_TRUE(eventually([&] { return peer_.coil(0) == 1 && peer_.coil(1) == 0; }, [&] { cycle(*d, img); }));
        std::vector<std::uint8_t> safe(4, 0);
        safe[0] = 0b10;        // %QX0.0 FALSE, %QX0.1 TRUE
        d->setSafeImage(safe); // the safe image latched is the one configured
        d->applySafeState(safe);
        d->stop();
        EXPECT_EQ(peer_.coil(0), 0) << "round " << round;
        EXPECT_EQ(peer_.coil(1), 1) << "round " << round;
    }
}

// Two drivers on one line (slaves 41 and 42 of one RS-485 bus) take turns: the one whose
// slave is silent times out without ever garbling the other's exchanges.
TEST_F(RtuTest, DriversOnOneLineTakeTurns) {
    peer_.setInputRegister(0, 41);
    // A generous timeout for the answering slave: on a loaded machine (sanitizers, two cores) a
    // reply can take longer than 200 ms; what fails without turns is a garbled frame, not a slow one.
    auto good = makeDriver("modbus-rtu", params("slave = 41\npoll_ms = 1\ntimeout_ms = 2000\non_error = 'fault'\n"
                                                "input_count = 1\noutput_count = 1"));
    auto silent = makeDriver("modbus-rtu", params("slave = 42\npoll_ms = 1\ntimeout_ms = 20\non_error = 'warn'\n"
                                                  "reconnect_ms = 1\nreconnect_max_ms = 1\ninput_count = 1\n"
                                                  "output_count = 1"));
    std::string error;
    ASSERT_TRUE(good->start(error)) << error;
    ASSERT_TRUE(silent->start(error)) << error;
    Image a, b;
    std::uint16_t n = 0;
    bool goodFailed = false;
    const auto step = [&] {
        Image::setWord(a.outputs, 0, ++n);
        cycle(*good, a);
        cycle(*silent, b);
        goodFailed = goodFailed || (good->health().health == Health::Faulted);
    };
    // The silent slave holds the line for its 20 ms timeout on each of its turns and asks again at
    // once; turns are granted in order, so the answering slave gets every other one. Counted in
    // turns, not in time: under load both drivers slow down alike, but with an unfair lock the
    // silent one re-took the line and the answering one fell far behind it.
    ASSERT_TRUE(eventually([&] { return peer_.ignored() >= 40 && peer_.answered() >= 20; }, step))
        << peer_.answered() << " answers, " << peer_.ignored() << " requests to the silent slave; "
        << silent->health().reason;
    EXPECT_GE(peer_.answered() * 2, peer_.ignored())
        << peer_.answered() << " answers for " << peer_.ignored() << " requests to the silent slave";
    EXPECT_FALSE(goodFailed) << good->health().reason;
    EXPECT_EQ(a.word(a.inputs, 0), 41);
    EXPECT_NE(silent->health().health, Health::Ok);
    // A third driver on the line at another speed cannot join it.
    auto other = makeDriver("modbus-rtu", fmt::format("device = '{}'\nbaud = 9600\nslave = 43", line_.driverEnd()));
    EXPECT_FALSE(other->start(error));
    EXPECT_NE(error.find("already in use at 19200 8E1 rs232"), std::string::npos) << error;
    silent->stop();
    good->stop();
}

// truST's mixed_vendor example: two modbus-rtu drivers on two lines, one io.toml safe state. A
// stop (the runtime latches the safe state first) puts it on both slaves.
TEST_F(RtuTest, TheSafeStateReachesEverySlave) {
    const TempDir dir2;
    SerialLine line2(dir2.path());
    ASSERT_TRUE(line2.start());
    RtuPeer peer2(line2.peerEnd(), 62);
    peer2.start();
    const std::string map = "outputs = [{ area = 'coils', start = 0, count = 2, address = '%QX0.0' }]";
    const auto parsed = parseIoConfig(
        fmt::format(
            "[io]\ndrivers = [\n  {{ name = 'modbus-rtu', params = {{ device = '{}', slave = 41, poll_ms = 5, "
            "{} }} }},\n  {{ name = 'modbus-rtu', params = {{ device = '{}', slave = 62, poll_ms = 5, {} }} }},\n"
            "]\n[[io.safe_state]]\naddress = '%QX0.0'\nvalue = 'TRUE'\n",
            line_.driverEnd(), map, line2.driverEnd(), map),
        "io.toml", false);
    ASSERT_TRUE(parsed.config.has_value()) << (parsed.diagnostics.empty() ? "" : parsed.diagnostics[0].message);
    DriverSet set;
    std::string error;
    ASSERT_TRUE(set.configure(*parsed.config, 1, error)) << error;
    ASSERT_TRUE(set.start(error)) << error;
    std::vector<std::uint8_t> in(set.inputBytes()), out(set.outputBytes(), 0), mem(set.memoryBytes());
    out[0] = 0b10; // the program: %QX0.0 FALSE, %QX0.1 TRUE
    const engine::ProcessImageView view{in, out, mem, 0, 1'000'000};
    ASSERT_TRUE(eventually([&] { return peer_.coil(1) == 1 && peer2.coil(1) == 1; },
                           [&] {
                               set.readInputs(view);
                               set.writeOutputs(view);
                           }));
    EXPECT_EQ(peer_.coil(0), 0);
    EXPECT_EQ(peer2.coil(0), 0);
    set.applySafeState();
    set.stop();
    for (RtuPeer* p : {&peer_, &peer2}) {
        EXPECT_EQ(p->coil(0), 1); // the configured safe value
        EXPECT_EQ(p->coil(1), 0); // zero where io.toml gives none
    }
    peer2.stop();
    line2.stop();
}

// 3.5 character times of silence between frames: at 9600 8E1 (11 bits a character) 4.01 ms, even
// between the requests of one exchange and with poll_ms = 1.
TEST_F(RtuTest, FramesAreSeparatedByThreeAndAHalfCharacterTimes) {
    auto d = makeDriver("modbus-rtu", fmt::format("device = '{}'\nbaud = 9600\nslave = 41\npoll_ms = 1\n"
                                                  "input_count = 1\noutput_count = 1",
                                                  line_.driverEnd()));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    Image img;
    ASSERT_TRUE(eventually([&] { return peer_.answered() >= 40; }, [&] { cycle(*d, img); }));
    d->stop();
    EXPECT_GE(peer_.shortestQuiet(), std::chrono::nanoseconds(11 * 3'500'000'000LL / 9600));
}

TEST_F(RtuTest, Rs485ModeOnAPortWithoutItIsACommunicationError) {
    auto d =
        makeDriver("modbus-rtu", params("slave = 41\nserial_mode = 'rs485'\non_error = 'fault'\nreconnect_ms = 10"));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    EXPECT_TRUE(eventually([&] { return d->health().reason.find("RS-485") != std::string::npos; }))
        << d->health().reason;
    EXPECT_EQ(d->health().health, Health::Faulted);
    d->stop();
}

// loop://NAME: takt's own slave; what %QW0 writes comes back as %IW0 in the truST form, with
// the RTU framing of a real line.
TEST(ModbusRtu, LoopDeviceLoopsOutputsBack) {
    auto d = makeDriver("modbus-rtu", "device = 'loop://meter'\nslave = 41\ntimeout_ms = 250\non_error = 'warn'\n"
                                      "poll_ms = 2");
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    Image img;
    Image::setWord(img.outputs, 0, 1234);
    Image::setWord(img.outputs, 14, 4321);
    EXPECT_TRUE(eventually([&] { return img.word(img.inputs, 0) == 1234 && img.word(img.inputs, 14) == 4321; },
                           [&] { cycle(*d, img); }));
    EXPECT_EQ(d->health().health, Health::Ok) << d->health().reason;
    d->stop();
    d->stop(); // idempotent
}

// truST's example io.toml as written, through `takt run`: the warning at the device key, and the
// program reads its own %QW0 back as %IW0 through the simulated slave.
TEST(RunModbusRtu, TrustLoopDeviceRunsAndLoopsBack) {
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "src");
    // Debug level: the status with the process image once a second.
    dir.write("runtime.toml", "[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\ncycle_interval_ms = 5\n\n"
                              "[runtime.log]\nlevel = \"debug\"\n");
    dir.write("io.toml", "[io]\ndrivers = [\n  { name = \"modbus-rtu\", params = { device = \"loop://meter\", baud = "
                         "19200, parity = \"even\", slave = 41, timeout_ms = 250, on_error = \"warn\" } }\n]\n\n"
                         "[[io.safe_state]]\naddress = \"%QX0.0\"\nvalue = \"FALSE\"\n");
    dir.write("src/main.st", "PROGRAM Main\nVAR\n    echo AT %IW0 : INT;\n    out AT %QW0 : INT;\n"
                             "    seen AT %QW1 : INT;\nEND_VAR\nout := 1234;\nseen := echo;\nEND_PROGRAM\n");
    Process takt(takt::test::taktArgv({"run", "--project", dir.path().string(), "--for", "60s"}),
                 {.log = dir.path() / "run.log"});
    ASSERT_TRUE(takt.started());
    EXPECT_FALSE(takt.waitForLine({"io.toml:3:", "device", "'loop://meter' is not a serial port"}).empty())
        << takt.log();
    EXPECT_FALSE(takt.waitForLine({"modbus-rtu=ok", "%Q=d204d204"}).empty()) << takt.log();
    EXPECT_EQ(takt.terminate(), 0) << takt.log();
}

} // namespace
} // namespace takt::io::test
