// A driver's status block, read by the program: `takt run` with a modbus-tcp driver whose peer
// (a real libmodbus slave) is stopped mid-run. The program copies what it sees — the level from
// peer A and A's status block — to a second peer, B, where the test reads it. Without the block
// a lost peer's inputs read 0: "tank empty" and "sensor lost" looked the same to the program.
#include <fmt/format.h>

#include "support/io_test_support.h"
#include "support/modbus_peer.h"
#include "support/takt_cli.h"
#include "takt/io/driver_set.h"
#include "takt/io/io_config.h"

namespace takt::io::test {
namespace {

// Peer A gives the level (holding register 0 -> %IW0) and its driver's status block lands at
// %IB100; the program writes flags, error code, stale cycles and the level to peer B's registers
// 0..3.
void writeProject(const TempDir& dir, std::uint16_t portA, std::uint16_t portB) {
    std::filesystem::create_directories(dir.path() / "src");
    dir.write("runtime.toml", "[bundle]\nversion = 1\n\n[resource]\nname = \"tank\"\ncycle_interval_ms = 5\n");
    dir.write(
        "io.toml",
        fmt::format("[[io.drivers]]\nname = \"modbus-tcp\"\nstatus = \"%IB100\"\n[io.drivers.params]\n"
                    "address = \"127.0.0.1:{}\"\ntimeout_ms = 100\npoll_ms = 10\nreconnect_ms = 50\n"
                    "reconnect_max_ms = 50\ncomm_loss_timeout_ms = 300\n"
                    "inputs = [ {{ area = \"holding_registers\", start = 0, count = 1, address = \"%IW0\" }} ]\n\n"
                    "[[io.drivers]]\nname = \"modbus-tcp\"\n[io.drivers.params]\naddress = \"127.0.0.1:{}\"\n"
                    "outputs = [ {{ area = \"holding_registers\", start = 0, count = 4, address = \"%QW0\" }} ]\n",
                    portA, portB));
    dir.write("src/main.st", R"(PROGRAM Main
VAR
    Level AT %IW0 : INT;
    TankOk AT %IX100.0 : BOOL;
    TankBad AT %IX100.1 : BOOL;
    TankHealth AT %IB101 : USINT;
    TankError AT %IW51 : UINT;
    TankStale AT %ID26 : UDINT;
    Flags AT %QW0 : WORD;
    Error AT %QW1 : UINT;
    Stale AT %QW2 : UINT;
    Seen AT %QW3 : INT;
END_VAR
Flags := SHL(USINT_TO_WORD(TankHealth), 8);
IF TankOk THEN Flags := Flags OR 16#0001; END_IF;
IF TankBad THEN Flags := Flags OR 16#0002; END_IF;
Error := TankError;
Stale := UDINT_TO_UINT(MIN(TankStale, UDINT#60000));
Seen := Level;
END_PROGRAM
)");
}

TEST(DriverStatus, TheProgramTellsALostPeerFromAnEmptyTank) {
    const std::uint16_t portA = freeTcpPort();
    const std::uint16_t portB = freeTcpPort();
    PeerServer a{portA};
    PeerServer b{portB};
    a.start();
    b.start();
    a.setRegister(0, 42);
    TempDir dir;
    writeProject(dir, portA, portB);
    Process takt(takt::test::taktArgv({"run", "--project", dir.path().string(), "--for", "60s"}),
                 takt::test::ProcessOptions{.log = dir.path() / "run.log"});
    // Running: ok, not bad, health 0, no error, the level, and a stale count that stays within a
    // few cycles (a poll every 10 ms, a cycle every 5 ms).
    ASSERT_TRUE(eventually([&] { return b.holding(3) == 42 && b.holding(0) == 0x0001; })) << takt.log();
    EXPECT_EQ(b.holding(1), 0);
    EXPECT_LT(b.holding(2), 200) << takt.log(); // a loaded machine may delay a poll
    // An empty tank is a level of 0 from a healthy peer.
    a.setRegister(0, 0);
    ASSERT_TRUE(eventually([&] { return b.holding(3) == 0; })) << takt.log();
    EXPECT_EQ(b.holding(0), 0x0001);

    a.setRegister(0, 42);
    ASSERT_TRUE(eventually([&] { return b.holding(3) == 42; })) << takt.log();
    a.stop(); // the peer is gone
    // At once: not ok, degraded (1), an error code saying why, the last level still held, and
    // the cycles since the last good exchange counting up.
    ASSERT_TRUE(eventually([&] { return (b.holding(0) & 0x0001) == 0; })) << takt.log();
    // After comm_loss_timeout_ms: bad, the inputs read 0 and the code is "communication lost" (7)
    // (bad comes with the zeros, the code with the next health refresh).
    ASSERT_TRUE(eventually([&] { return b.holding(0) == 0x0102 && b.holding(1) == 7; })) << takt.log();
    EXPECT_EQ(b.holding(3), 0);                                      // what an empty tank reads, but flagged bad
    EXPECT_GT(b.holding(2), 10) << "stale cycles: " << b.holding(2); // 300 ms of 5 ms cycles, less skipped ones
    const std::uint16_t stale = b.holding(2);
    ASSERT_TRUE(eventually([&] { return b.holding(2) > stale; })) << takt.log();

    // The peer back: ok again, the level flows and the stale count drops to a few cycles.
    a.start();
    ASSERT_TRUE(eventually([&] { return b.holding(0) == 0x0001 && b.holding(3) == 42; })) << takt.log();
    EXPECT_EQ(b.holding(1), 0);
    EXPECT_LT(b.holding(2), 200);
    EXPECT_EQ(takt.terminate(), 0) << takt.log();
}

// The bad flag arrives in the same cycle as the zeros it describes, from the driver's own
// hand-over, not whenever the health is next refreshed (four times a second in `takt run`; never
// here): a program that sees its level drop to 0 sees in that very cycle that it is not from
// the field, and while the level is still the peer's it is never called bad.
TEST(DriverStatus, TheBadFlagArrivesInTheCycleOfTheZeros) {
    const std::uint16_t port = freeTcpPort();
    PeerServer peer{port};
    peer.setRegister(0, 1234);
    peer.start();
    const IoConfigResult parsed = parseIoConfig(
        fmt::format(
            "[[io.drivers]]\nname = \"modbus-tcp\"\nstatus = \"%IB100\"\n[io.drivers.params]\n"
            "address = \"127.0.0.1:{}\"\ntimeout_ms = 50\npoll_ms = 2\nreconnect_ms = 20\nreconnect_max_ms = 20\n"
            "comm_loss_timeout_ms = 100\n"
            "inputs = [ {{ area = \"holding_registers\", start = 0, count = 1, address = \"%IW0\" }} ]\n",
            port),
        "io.toml", false);
    ASSERT_TRUE(parsed.config) << (parsed.diagnostics.empty() ? "" : parsed.diagnostics[0].message);
    DriverSet set;
    std::string error;
    ASSERT_TRUE(set.configure(*parsed.config, 0, error)) << error;
    ASSERT_TRUE(set.start(error)) << error;
    std::vector<std::uint8_t> in(set.inputBytes(), 0), out(1, 0);
    engine::ProcessImageView view;
    view.inputs = in;
    view.outputs = out;
    const auto level = [&in] { return in[0] | in[1] << 8; };
    const auto bad = [&in] { return (in[100] & 2u) != 0; };
    ASSERT_TRUE(eventually([&] { return level() == 1234; }, [&] { set.readInputs(view); }));
    (void)set.refreshHealth(); // ok from here on, as far as the packed health knows
    set.readInputs(view);
    EXPECT_FALSE(bad());
    EXPECT_EQ(in[100] & 1u, 1u); // ok

    peer.stop();
    bool sawZero = false;
    for (int k = 0; k < 2000 && !sawZero; ++k) {
        set.readInputs(view);
        if (level() == 1234) {
            ASSERT_FALSE(bad()) << "the peer's value, called bad";
        } else {
            sawZero = true;
            EXPECT_EQ(level(), 0);
            EXPECT_TRUE(bad()) << "the zeros of a comm loss, not called bad in their cycle";
            EXPECT_EQ(in[100] & 1u, 0u) << "bad inputs, called ok";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(sawZero) << "the inputs never went bad";
    set.stop();
}

// A status key that cannot work is refused with file, line and key, and nothing runs.
TEST(DriverStatus, ABadStatusKeyIsAnErrorNamingFileLineAndKey) {
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "src");
    dir.write("runtime.toml", "[bundle]\nversion = 1\n\n[resource]\nname = \"p\"\ncycle_interval_ms = 5\n");
    dir.write("src/main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := x + 1;\nEND_PROGRAM\n");
    const struct {
        const char* status;
        const char* message;
    } cases[] = {
        {"%QB0", "io.toml:3:1: error: io.status: %QB0 is an output"},
        {"%IX0.0", "io.toml:3:1: error: io.status: %IX0.0 is not a byte address"},
        {"%IB2", "io.toml:3:1: error: io.status: %IB2 does not start on a multiple of 4 bytes"},
        {"%IB", "io.toml:3:1: error: io.status: "},
    };
    for (const auto& c : cases) {
        dir.write("io.toml", fmt::format("[io]\ndriver = \"loopback\"\nstatus = \"{}\"\n", c.status));
        const takt::test::RunResult r = takt::test::runTakt("validate", dir.path());
        EXPECT_EQ(r.exitCode, 10) << c.status << "\n" << r.out << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << c.status << "\n" << r.err;
    }
    // The block clashes with the driver's own inputs: validate and run both name the status key.
    dir.write("io.toml", "[[io.drivers]]\nname = \"loopback\"\nstatus = \"%IB0\"\n");
    const takt::test::RunResult validate = takt::test::runTakt("validate", dir.path());
    EXPECT_EQ(validate.exitCode, 10) << validate.out << validate.err;
    EXPECT_NE(validate.err.find("io.toml:3:1: error: io.drivers[0].status: writes %IB0..%IB7 which io.drivers[0] "
                                "(loopback) also writes"),
              std::string::npos)
        << validate.err;
    const takt::test::RunResult run =
        takt::test::runTaktMerged("run --project " + takt::test::shellQuote(dir.path().string()) + " --for 1s");
    EXPECT_NE(run.exitCode, 0) << run.out;
    EXPECT_NE(run.out.find("io.toml:3:1: status block of driver 'loopback' (io.drivers[0].status)"), std::string::npos)
        << run.out;
}

} // namespace
} // namespace takt::io::test
