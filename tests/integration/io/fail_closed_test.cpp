// on_error = "fault" fails closed: when that driver's peer goes away, `takt run` faults under
// its [runtime.fault] policy and every peer — not only the one that failed — gets io.toml's safe
// state. With on_error = "warn" (the default) the same loss leaves the program running and only
// the lost peer's own comm-loss path applies.
#include <fmt/format.h>

#include "support/io_test_support.h"
#include "support/modbus_peer.h"
#include "support/takt_cli.h"

namespace takt::io::test {
namespace {

// Two modbus-tcp drivers, each writing one holding register: %QW0 to peer A, %QW1 to peer B.
void writeProject(const TempDir& dir, std::uint16_t portA, std::uint16_t portB, const char* onErrorA) {
    std::filesystem::create_directories(dir.path() / "src");
    dir.write("runtime.toml", "[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\ncycle_interval_ms = 5\n\n"
                              "[runtime.fault]\npolicy = \"safe_halt\"\n");
    dir.write("io.toml",
              fmt::format("[io]\ndrivers = [\n"
                          "  {{ name = \"modbus-tcp\", params = {{ address = \"127.0.0.1:{}\", timeout_ms = 200, "
                          "reconnect_ms = 50, reconnect_max_ms = 50, {}outputs = [ {{ area = \"holding_registers\", "
                          "start = 0, count = 1, address = \"%QW0\" }} ] }} }},\n"
                          "  {{ name = \"modbus-tcp\", params = {{ address = \"127.0.0.1:{}\", timeout_ms = 200, "
                          "outputs = [ {{ area = \"holding_registers\", start = 0, count = 1, address = \"%QW1\" }} ] "
                          "}} }},\n]\n\n"
                          "[[io.safe_state]]\naddress = \"%QW0\"\nvalue = \"16#0BAD\"\n\n"
                          "[[io.safe_state]]\naddress = \"%QW1\"\nvalue = \"16#0005\"\n",
                          portA, onErrorA == nullptr ? "" : fmt::format("on_error = \"{}\", ", onErrorA), portB));
    dir.write("src/main.st", "PROGRAM Main\nVAR\n    a AT %QW0 : WORD;\n    b AT %QW1 : WORD;\nEND_VAR\n"
                             "a := 1234;\nb := 4321;\nEND_PROGRAM\n");
}

// Peers A and B listening, the project written with `onErrorA` for A's driver, `takt run` started
// and both peers fed by the program.
struct TwoPeerRun {
    explicit TwoPeerRun(const char* onErrorA) {
        a.start();
        b.start();
        writeProject(dir, portA, portB, onErrorA);
        takt =
            std::make_unique<Process>(takt::test::taktArgv({"run", "--project", dir.path().string(), "--for", "60s"}),
                                      takt::test::ProcessOptions{.log = dir.path() / "run.log"});
    }
    [[nodiscard]] bool fed() {
        return eventually([&] { return a.holding(0) == 1234 && b.holding(0) == 4321; });
    }

    std::uint16_t portA = freeTcpPort();
    std::uint16_t portB = freeTcpPort();
    PeerServer a{portA};
    PeerServer b{portB};
    TempDir dir;
    std::unique_ptr<Process> takt;
};

TEST(FailClosed, LosingADriverWithOnErrorFaultPutsEveryPeerInTheSafeState) {
    TwoPeerRun run("fault");
    Process& takt = *run.takt;
    ASSERT_TRUE(run.fed()) << takt.log();
    run.a.stop(); // peer A is gone: its driver fails closed
    ASSERT_TRUE(eventually([&] { return run.b.holding(0) == 5; })) << takt.log();
    EXPECT_FALSE(takt.waitForLine({"I/O fault: modbus-tcp (on_error = \"fault\")"}).empty()) << takt.log();
    EXPECT_FALSE(takt.waitForLine({"program halted after the fault"}).empty()) << takt.log();
    // Peer A back: the runtime stays halted (a fault is cleared by a restart, not by the field),
    // and its driver writes the safe value to it, not the program's.
    run.a.start();
    ASSERT_TRUE(eventually([&] { return run.a.holding(0) == 0x0BAD; })) << takt.log();
    EXPECT_EQ(run.b.holding(0), 5);
    EXPECT_EQ(takt.terminate(), 16) << takt.log(); // ended halted by a fault
}

TEST(FailClosed, OnErrorWarnKeepsTheProgramRunningAndTheOtherPeerFed) {
    TwoPeerRun run(nullptr); // the default: warn
    Process& takt = *run.takt;
    ASSERT_TRUE(run.fed()) << takt.log();
    run.a.stop();
    EXPECT_FALSE(takt.waitForLine({"driver health:", "modbus-tcp=degraded"}).empty()) << takt.log();
    // Peer A back: after its comm loss its driver writes the safe value first, then the program's.
    run.b.setRegister(0, 0);
    run.a.start();
    ASSERT_TRUE(eventually([&] { return run.a.holding(0) == 1234; })) << takt.log();
    ASSERT_TRUE(eventually([&] { return run.b.holding(0) == 4321; })) << takt.log(); // still fed by the program
    EXPECT_EQ(takt.log().find("I/O fault"), std::string::npos) << takt.log();
    EXPECT_EQ(takt.terminate(), 0) << takt.log();
}

} // namespace
} // namespace takt::io::test
