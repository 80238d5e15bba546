// Field I/O end to end through a running `takt run`: ST programs on temp projects exchange with
// real peers the tests start on loopback (a libmodbus server thread, a mosquitto broker), and
// the tests observe both the peer and takt's status lines ("io modbus-tcp=ok %I=… %Q=…").
#include <rapidjson/document.h>

#include "support/io_test_support.h"
#include "support/modbus_peer.h"
#include "support/mqtt_peer.h"
#include "support/takt_cli.h"

namespace takt::io::test {
namespace {

constexpr const char* kRuntimeToml = R"([bundle]
version = 1

[resource]
name = "cell"
cycle_interval_ms = 5

[runtime.watchdog]
enabled = true
timeout_ms = 500
action = "safe_halt"

[runtime.log]
level = "debug"                   # the status with the process image once a second
)";

void writeProject(const TempDir& dir, const std::string& ioToml, const std::string& source) {
    std::filesystem::create_directories(dir.path() / "src");
    dir.write("runtime.toml", kRuntimeToml);
    dir.write("io.toml", ioToml);
    dir.write("src/main.st", source);
}

std::string modbusIo(std::uint16_t port, const std::string& inputs, const std::string& outputs) {
    return fmt::format("[io]\ndriver = \"modbus-tcp\"\n\n[io.params]\naddress = \"127.0.0.1:{}\"\n"
                       "poll_ms = 5\ntimeout_ms = 500\non_error = \"warn\"\ncomm_loss_timeout_ms = 500\n"
                       "reconnect_ms = 50\nreconnect_max_ms = 200\ninputs = [{}]\noutputs = [{}]\n",
                       port, inputs, outputs);
}

std::vector<std::string> runArgs(const TempDir& dir) {
    // --for is the hang guard; the tests stop takt with SIGTERM once they have seen enough.
    return takt::test::taktArgv({"run", "--project", dir.path().string(), "--for", "60s"});
}

// Coils 0..7 of the peer as a byte (coil 0 = bit 0).
int coilByte(PeerServer& peer, int first) {
    int v = 0;
    for (int i = 0; i < 8; ++i) {
        v |= (peer.coil(first + i) != 0 ? 1 : 0) << i;
    }
    return v;
}

// The program reads two holding registers and a mode register, computes from them and writes
// the results to coils: what the test set in the peer comes back as coils computed by the scan.
TEST(RunModbus, ProgramReadsHoldingRegistersAndWritesCoils) {
    const std::uint16_t port = freeTcpPort();
    PeerServer peer(port);
    peer.setRegister(0, 100);
    peer.setRegister(1, 23);
    peer.start();
    TempDir dir;
    writeProject(dir,
                 modbusIo(port, "{ area = \"holding_registers\", start = 0, count = 2, address = \"%IW0\" }",
                          "{ area = \"coils\", start = 0, count = 16, address = \"%QX0.0\" }"),
                 "PROGRAM Main\nVAR\n    a AT %IW0 : INT;\n    b AT %IW1 : INT;\n"
                 "    sum AT %QB0 : BYTE;\n    greater AT %QX1.0 : BOOL;\n    equal AT %QX1.1 : BOOL;\n"
                 "    alive AT %QX1.7 : BOOL;\nEND_VAR\n"
                 "sum := INT_TO_BYTE(a + b);\ngreater := a > b;\nequal := a = b;\nalive := TRUE;\nEND_PROGRAM\n");
    Process takt(runArgs(dir), {.log = dir.path() / "run.log"});
    ASSERT_TRUE(takt.started());
    // 100 + 23 = 123 on coils 0..7, a > b on coil 8, a = b clear on coil 9.
    EXPECT_TRUE(takt.waitFor([&] { return coilByte(peer, 0) == 123 && coilByte(peer, 8) == 0x81; }))
        << "coils " << coilByte(peer, 0) << " " << coilByte(peer, 8) << "\n"
        << takt.log();
    // New register values while takt runs: 7 + 7 = 14, equal set, greater clear.
    peer.setRegister(0, 7);
    peer.setRegister(1, 7);
    EXPECT_TRUE(takt.waitFor([&] { return coilByte(peer, 0) == 14 && coilByte(peer, 8) == 0x82; }))
        << "coils " << coilByte(peer, 0) << " " << coilByte(peer, 8) << "\n"
        << takt.log();
    // The status line shows the registers as the image holds them (little-endian words).
    EXPECT_FALSE(takt.waitForLine({"modbus-tcp=ok", "%I=07000700", "%Q=0e82"}).empty()) << takt.log();
    // A stop drives the outputs to the safe state (zeros) at the peer.
    EXPECT_EQ(takt.terminate(), 0) << takt.log();
    EXPECT_TRUE(eventually([&] { return coilByte(peer, 0) == 0 && coilByte(peer, 8) == 0; }))
        << "coils " << coilByte(peer, 0) << " " << coilByte(peer, 8) << "\n"
        << takt.log();
    EXPECT_FALSE(takt.lineWith({"stopped (SIGTERM): outputs in safe state"}).empty()) << takt.log();
}

// Peer killed while takt runs: degraded with "inputs bad" in the status, inputs read as 0 by
// the program; peer restarted: the first coil write it gets is the safe state (zeros), then the
// program's outputs again, and health returns to ok.
TEST(RunModbus, PeerLossDegradesAppliesSafeStateAndRecovers) {
    const std::uint16_t port = freeTcpPort();
    PeerServer peer(port);
    peer.setRegister(0, 42);
    peer.start();
    TempDir dir;
    writeProject(dir,
                 modbusIo(port, "{ area = \"holding_registers\", start = 0, count = 1, address = \"%IW0\" }",
                          "{ area = \"coils\", start = 0, count = 8, address = \"%QX0.0\" }"),
                 "PROGRAM Main\nVAR\n    level AT %IW0 : INT;\n    run AT %QX0.0 : BOOL;\n"
                 "    high AT %QX0.1 : BOOL;\nEND_VAR\nrun := TRUE;\nhigh := level > 10;\nEND_PROGRAM\n");
    Process takt(runArgs(dir), {.log = dir.path() / "run.log"});
    ASSERT_TRUE(takt.started());
    ASSERT_TRUE(takt.waitFor([&] { return peer.coil(0) == 1 && peer.coil(1) == 1; })) << takt.log();
    ASSERT_FALSE(takt.waitForLine({"modbus-tcp=ok", "%I=2a00", "%Q=03"}).empty()) << takt.log();

    std::size_t mark = takt.log().size();
    peer.stop();
    // Inputs bad: the program sees level = 0, so `high` drops while `run` stays (%Q=01).
    const std::string lost = takt.waitForLine(
        {"running", "modbus-tcp=degraded(communication lost", "inputs bad", "safe state applied", "%I=0000", "%Q=01"},
        mark);
    EXPECT_FALSE(lost.empty()) << takt.log().substr(mark);

    // The peer comes back with its coils still set from before: what it receives first is the
    // safe state, then the program's outputs.
    peer.clearHistory();
    mark = takt.log().size();
    peer.start();
    EXPECT_TRUE(takt.waitFor([&] {
        const auto h = peer.coil0History();
        return h.size() >= 2 && h.back() == 1;
    })) << takt.log().substr(mark);
    const std::vector<std::uint8_t> history = peer.coil0History();
    ASSERT_FALSE(history.empty());
    EXPECT_EQ(history.front(), 0) << "the first write after reconnecting is the safe state";
    EXPECT_TRUE(takt.waitFor([&] { return peer.coil(0) == 1 && peer.coil(1) == 1; })) << takt.log().substr(mark);
    EXPECT_FALSE(takt.waitForLine({"running", "modbus-tcp=ok", "%I=2a00", "%Q=03"}, mark).empty())
        << takt.log().substr(mark);
    EXPECT_EQ(takt.terminate(), 0) << takt.log();
}

double jsonValue(const std::string& payload, const char* type) {
    rapidjson::Document doc;
    doc.Parse(payload.c_str());
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("type") || !doc.HasMember("value") ||
        std::string(doc["type"].GetString()) != type) {
        return -1e300;
    }
    const auto& v = doc["value"];
    if (v.IsBool()) {
        return v.GetBool() ? 1 : 0;
    }
    return v.IsNumber() ? v.GetDouble() : -1e300;
}

// Typed values through a broker: INT and REAL published to takt's input topics, transformed by
// the program, published back on the output topics as typed JSON.
TEST(RunMqtt, TypedValuesRoundTripThroughAProgram) {
    if (!std::filesystem::exists(kBroker)) {
        GTEST_SKIP() << "mosquitto is not installed (scripts/setup.sh installs it)";
    }
    TempDir dir;
    Broker broker(dir);
    ASSERT_TRUE(broker.start());
    Peer peer(broker.port());
    writeProject(dir,
                 fmt::format("[io]\ndriver = \"mqtt\"\n\n[io.params]\nbroker = \"127.0.0.1:{}\"\n"
                             "client_id = \"takt-e2e\"\nqos = 1\nstatus_topic = \"line1/status\"\n"
                             "reconnect_ms = 100\nreconnect_max_ms = 1000\n"
                             "subscribe = [\n"
                             "  {{ topic = \"line1/in/setpoint\", address = \"%IW0\", type = \"INT\" }},\n"
                             "  {{ topic = \"line1/in/gain\", address = \"%ID1\", type = \"REAL\" }},\n]\n"
                             "publish = [\n"
                             "  {{ address = \"%QW0\", type = \"INT\", topic = \"line1/out/speed\" }},\n"
                             "  {{ address = \"%QD1\", type = \"REAL\", topic = \"line1/out/scaled\" }},\n"
                             "  {{ address = \"%QX8.0\", type = \"BOOL\", topic = \"line1/out/high\" }},\n]\n",
                             broker.port()),
                 "PROGRAM Main\nVAR\n    setpoint AT %IW0 : INT;\n    gain AT %ID1 : REAL;\n"
                 "    speed AT %QW0 : INT;\n    scaled AT %QD1 : REAL;\n    high AT %QX8.0 : BOOL;\nEND_VAR\n"
                 "speed := setpoint * 2 + 1;\nscaled := INT_TO_REAL(setpoint) * gain;\n"
                 "high := setpoint > 100;\nEND_PROGRAM\n");
    Process takt(runArgs(dir), {.log = dir.path() / "run.log"});
    ASSERT_TRUE(takt.started());
    // takt announces itself on the retained status topic once connected and subscribed.
    ASSERT_TRUE(takt.waitFor([&] { return peer.received("line1/status", "online"); })) << takt.log();
    // Publish until takt has it: a message sent before its subscription took effect is lost.
    EXPECT_TRUE(takt.waitFor([&] {
        peer.publish("line1/in/setpoint", R"({"type":"INT","value":40})");
        peer.publish("line1/in/gain", R"({"type":"REAL","value":2.5})");
        return jsonValue(peer.last("line1/out/speed"), "INT") == 81 &&
               jsonValue(peer.last("line1/out/scaled"), "REAL") == 100.0;
    })) << peer.last("line1/out/speed")
        << " " << peer.last("line1/out/scaled") << "\n"
        << takt.log();
    EXPECT_EQ(jsonValue(peer.last("line1/out/high"), "BOOL"), 0) << peer.last("line1/out/high");
    // A bare number is accepted too; a negative INT keeps its sign through the image.
    peer.publish("line1/in/setpoint", "-300");
    EXPECT_TRUE(takt.waitFor([&] {
        return jsonValue(peer.last("line1/out/speed"), "INT") == -599 &&
               jsonValue(peer.last("line1/out/scaled"), "REAL") == -750.0;
    })) << peer.last("line1/out/speed")
        << " " << peer.last("line1/out/scaled");
    peer.publish("line1/in/setpoint", R"({"type":"INT","value":1000})");
    EXPECT_TRUE(takt.waitFor([&] {
        return jsonValue(peer.last("line1/out/speed"), "INT") == 2001 &&
               jsonValue(peer.last("line1/out/high"), "BOOL") == 1;
    })) << peer.last("line1/out/speed")
        << " " << peer.last("line1/out/high");
    // A value that does not fit the INT is refused: degraded with the reason, the image keeps
    // the previous value (speed stays 2001).
    std::size_t mark = takt.log().size();
    peer.publish("line1/in/setpoint", R"({"type":"INT","value":70000})");
    EXPECT_FALSE(takt.waitForLine({"mqtt=degraded(", "line1/in/setpoint"}, mark).empty()) << takt.log().substr(mark);
    EXPECT_EQ(jsonValue(peer.last("line1/out/speed"), "INT"), 2001);
    EXPECT_EQ(takt.terminate(), 0) << takt.log();
    EXPECT_TRUE(eventually([&] { return peer.last("line1/status") == "offline"; })) << peer.last("line1/status");
    // The stop latched the safe state (zeros) and it was published before the disconnect.
    EXPECT_TRUE(eventually([&] {
        return jsonValue(peer.last("line1/out/speed"), "INT") == 0 &&
               jsonValue(peer.last("line1/out/scaled"), "REAL") == 0.0;
    })) << peer.last("line1/out/speed")
        << " " << peer.last("line1/out/scaled");
}

// Broker killed while takt runs: degraded with "inputs bad", the program sees 0; broker back:
// health ok again and values flow both ways.
TEST(RunMqtt, BrokerLossDegradesWithInputsBadAndRecovers) {
    if (!std::filesystem::exists(kBroker)) {
        GTEST_SKIP() << "mosquitto is not installed (scripts/setup.sh installs it)";
    }
    TempDir dir;
    Broker broker(dir);
    ASSERT_TRUE(broker.start());
    writeProject(dir,
                 fmt::format("[io]\ndriver = \"mqtt\"\n\n[io.params]\nbroker = \"127.0.0.1:{}\"\n"
                             "client_id = \"takt-e2e\"\nqos = 1\nstatus_topic = \"line1/status\"\n"
                             "reconnect_ms = 100\nreconnect_max_ms = 1000\non_error = \"warn\"\n"
                             "comm_loss_timeout_ms = 300\n"
                             "subscribe = [{{ topic = \"line1/in/setpoint\", address = \"%IW0\", type = \"INT\" }}]\n"
                             "publish = [{{ address = \"%QW0\", type = \"INT\", topic = \"line1/out/speed\" }}]\n",
                             broker.port()),
                 "PROGRAM Main\nVAR\n    setpoint AT %IW0 : INT;\n    speed AT %QW0 : INT;\nEND_VAR\n"
                 "speed := setpoint * 2 + 1;\nEND_PROGRAM\n");
    Process takt(runArgs(dir), {.log = dir.path() / "run.log"});
    ASSERT_TRUE(takt.started());
    {
        Peer peer(broker.port());
        // Retained: reaches takt whenever its subscription takes effect.
        peer.publish("line1/in/setpoint", R"({"type":"INT","value":40})", true);
        ASSERT_FALSE(takt.waitForLine({"running", "mqtt=ok", "%I=2800", "%Q=5100"}).empty()) << takt.log();
    }
    std::size_t mark = takt.log().size();
    broker.kill();
    // Inputs bad: setpoint reads 0, so speed = 1.
    EXPECT_FALSE(
        takt.waitForLine({"running", "mqtt=degraded(broker unreachable", "inputs bad", "%I=0000", "%Q=0100"}, mark)
            .empty())
        << takt.log().substr(mark);

    mark = takt.log().size();
    ASSERT_TRUE(broker.start()); // no persistence: the retained setpoint is gone with the old broker
    Peer peer(broker.port());
    EXPECT_FALSE(takt.waitForLine({"running", "mqtt=ok"}, mark).empty()) << takt.log().substr(mark);
    EXPECT_TRUE(takt.waitFor([&] {
        peer.publish("line1/in/setpoint", R"({"type":"INT","value":7})", true);
        return jsonValue(peer.last("line1/out/speed"), "INT") == 15;
    })) << peer.last("line1/out/speed")
        << "\n"
        << takt.log().substr(mark);
    EXPECT_EQ(takt.terminate(), 0) << takt.log();
}

} // namespace
} // namespace takt::io::test
