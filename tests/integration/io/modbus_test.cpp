// modbus-tcp client and modbus-server drivers against real peers on loopback: a libmodbus
// server thread owned by the test, the modbus-server driver itself, pymodbus when installed,
// and a raw socket that answers garbage.
#include <arpa/inet.h>
#include <modbus.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/io_test_support.h"
#include "support/modbus_peer.h"
#include "takt/io/driver_set.h"
#include "takt/io/io_config.h"

namespace takt::io::test {
namespace {

TEST(ModbusTcpParams, ErrorsNameTheKey) {
    EXPECT_EQ(initError("modbus-tcp", ""), "io.params.address: missing (required)");
    EXPECT_EQ(initError("modbus-tcp", "address = '127.0.0.1:502'\nspeed = 3"),
              "io.params.speed: unknown parameter of the modbus-tcp driver (known: address, unit_id, timeout_ms, "
              "poll_ms, on_error, input_start, output_start, input_count, output_count, inputs, outputs, "
              "comm_loss_timeout_ms, reconnect_ms, reconnect_max_ms)");
    EXPECT_EQ(initError("modbus-tcp", "address = '127.0.0.1:0'"),
              "io.params.address: '127.0.0.1:0': port must be 1..65535");
    EXPECT_EQ(initError("modbus-tcp", "address = 'h'\nunit_id = 300"), "io.params.unit_id: expected an integer 0..255");
    EXPECT_EQ(initError("modbus-tcp", "address = 'h'\non_error = 'panic'"),
              "io.params.on_error: unknown policy 'panic' (expected fault, warn or ignore)");
    EXPECT_EQ(initError("modbus-tcp", "address = 'h'\ninputs = [{area = 'coils', start = 0, count = 8, address = "
                                      "'%IX0.0'}, {area = 'registers', start = 0, count = 1, address = '%IW0'}]"),
              "io.params.inputs[1].area: 'registers' is not allowed here (expected one of \"coils\", "
              "\"discrete_inputs\", \"input_registers\", \"holding_registers\")");
    EXPECT_EQ(initError("modbus-tcp", "address = 'h'\noutputs = [{area = 'input_registers', start = 0, count = 1, "
                                      "address = '%QW0'}]"),
              "io.params.outputs[0].area: 'input_registers' is not allowed here (expected one of \"coils\", "
              "\"holding_registers\")");
    EXPECT_EQ(
        initError("modbus-tcp", "address = 'h'\ninputs = [{area = 'coils', start = 0, count = 8, address = '%IW0'}]"),
        "io.params.inputs[0].address: coils map to bits: expected a %X address, got '%IW0'");
    EXPECT_EQ(initError("modbus-tcp", "address = 'h'\ninputs = [{area = 'input_registers', start = 65530, count = 10, "
                                      "address = '%IW0'}]"),
              "io.params.inputs[0].count: start 65530 + count 10 runs past Modbus address 65535");
    EXPECT_EQ(initError("modbus-tcp", "address = 'h'\ninputs = [{area = 'input_registers', start = 0, count = 2, "
                                      "address = '%QW0'}]"),
              "io.params.inputs[0].address: '%QW0' is not in %I or %M");
    EXPECT_EQ(initError("modbus-tcp", "address = 'h'\ninputs = [{area = 'input_registers', start = 0, count = 2, "
                                      "address = '%IW0'}, {area = 'coils', start = 0, count = 1, address = '%IX2.0'}]"),
              "io.params.inputs[1]: overlaps inputs[0] in the process image");
    EXPECT_EQ(
        initError("modbus-tcp", "address = 'h'\ninput_start = 4\ninputs = []"),
        "io.params.input_start: belongs to the truST form; with explicit inputs/outputs maps give `start` per map");
    EXPECT_EQ(initError("modbus-tcp", "address = '127.0.0.1:5020'\nunit_id = 1\ntimeout_ms = 500\non_error = 'warn'\n"
                                      "input_start = 0\noutput_start = 10"),
              "");
}

TEST(ModbusTcpParams, TrustFormOwnsWordsFromZero) {
    auto d = makeDriver("modbus-tcp", "address = '127.0.0.1'\ninput_count = 4\noutput_count = 2");
    const auto r = d->ownedRanges();
    ASSERT_EQ(r.size(), 2U);
    EXPECT_EQ(r[0].area, Area::Input);
    EXPECT_EQ(r[0].count, 8U);
    EXPECT_EQ(r[1].area, Area::Output);
    EXPECT_EQ(r[1].count, 4U);
}

// Registers into %IW and %QX out to coils, through the driver API at cycle rate, with maps
// larger than one request (300 registers, 2500 coils) so the split is exercised.
TEST(ModbusTcp, ReadsRegistersAndWritesCoilsAcrossProtocolLimits) {
    const std::uint16_t port = freeTcpPort();
    PeerServer peer(port);
    for (int i = 0; i < 300; ++i) {
        peer.setRegister(i, static_cast<std::uint16_t>(0x1200 + i));
    }
    peer.start();
    auto d =
        makeDriver("modbus-tcp",
                   fmt::format("address = '127.0.0.1:{}'\npoll_ms = 2\n"
                               "inputs = [{{area = 'holding_registers', start = 0, count = 300, address = '%IW0'}}]\n"
                               "outputs = [{{area = 'coils', start = 0, count = 2500, address = '%QX0.0'}}]",
                               port));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    Image img(1024);
    for (int i = 0; i < 2500; ++i) {
        Image::setBit(img.outputs, static_cast<std::size_t>(i), i % 3 == 0);
    }
    EXPECT_TRUE(eventually([&] { return img.word(img.inputs, 2 * 299) == 0x1200 + 299 && peer.coil(2499) == 1; },
                           [&] { cycle(*d, img); }));
    for (int i = 0; i < 300; ++i) {
        ASSERT_EQ(img.word(img.inputs, 2 * static_cast<std::size_t>(i)), 0x1200 + i) << i; // values, not swapped
    }
    EXPECT_EQ(img.inputs[0], 0x00); // little-endian image: low byte first
    EXPECT_EQ(img.inputs[1], 0x12);
    for (int i = 0; i < 2500; ++i) {
        ASSERT_EQ(peer.coil(i), i % 3 == 0 ? 1 : 0) << i;
    }
    EXPECT_EQ(d->health().health, Health::Ok);
    d->stop();
}

// Peer killed -> degraded, inputs bad, safe state; restarted -> safe values first, then the
// program's outputs again and fresh inputs.
TEST(ModbusTcp, CommunicationLossAndRecovery) {
    const std::uint16_t port = freeTcpPort();
    PeerServer peer(port);
    peer.setRegister(0, 7);
    peer.start();
    auto d = makeDriver(
        "modbus-tcp", fmt::format("address = '127.0.0.1:{}'\npoll_ms = 5\ntimeout_ms = 100\n"
                                  "on_error = 'warn'\ncomm_loss_timeout_ms = 200\nreconnect_ms = 20\n"
                                  "reconnect_max_ms = 100\n"
                                  "inputs = [{{area = 'holding_registers', start = 0, count = 1, address = '%IW0'}}]\n"
                                  "outputs = [{{area = 'coils', start = 0, count = 1, address = '%QX0.0'}}]",
                                  port));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    Image img;
    Image::setBit(img.outputs, 0, true);
    ASSERT_TRUE(eventually([&] { return img.word(img.inputs, 0) == 7 && peer.coil(0) == 1; }, [&] { cycle(*d, img); }));
    EXPECT_EQ(d->health().health, Health::Ok);

    peer.stop();
    ASSERT_TRUE(eventually([&] { return d->health().reason.find("communication lost") != std::string::npos; },
                           [&] { cycle(*d, img); }));
    EXPECT_EQ(d->health().health, Health::Degraded);
    EXPECT_NE(d->health().reason.find("inputs bad"), std::string::npos) << d->health().reason;
    cycle(*d, img);                        // the inputs are zeroed before the health says so
    EXPECT_EQ(img.word(img.inputs, 0), 0); // bad inputs read as zero

    peer.setCoil(0, 1); // so that a safe write of 0 is visible in the history
    peer.clearHistory();
    peer.setRegister(0, 9);
    peer.start();
    ASSERT_TRUE(eventually(
        [&] { return img.word(img.inputs, 0) == 9 && peer.coil(0) == 1 && d->health().health == Health::Ok; },
        [&] { cycle(*d, img); }));
    const auto history = peer.coil0History();
    ASSERT_GE(history.size(), 2U);
    EXPECT_EQ(history.front(), 0); // the safe state reached the peer first
    EXPECT_EQ(history.back(), 1);  // then the program's output again
    d->stop();
    peer.stop();
}

// io.toml's [[io.safe_state]] is what a comm loss sends, not zeros: the alarm lamp of
// boards/x86-ipc-modbus.toml must come ON when the peer returns, before the program's OFF.
TEST(ModbusTcp, CommunicationLossSendsTheConfiguredSafeStateFirst) {
    const std::uint16_t port = freeTcpPort();
    PeerServer peer(port);
    peer.start();
    const auto parsed =
        parseIoConfig(fmt::format("[io]\ndriver = 'modbus-tcp'\n[io.params]\naddress = '127.0.0.1:{}'\npoll_ms = 5\n"
                                  "timeout_ms = 100\non_error = 'warn'\ncomm_loss_timeout_ms = 200\nreconnect_ms = 20\n"
                                  "reconnect_max_ms = 100\n"
                                  "outputs = [{{area = 'coils', start = 0, count = 1, address = '%QX0.0'}}]\n"
                                  "[[io.safe_state]]\naddress = '%QX0.0'\nvalue = 'TRUE'\n",
                                  port),
                      "io.toml", false);
    ASSERT_TRUE(parsed.config.has_value()) << (parsed.diagnostics.empty() ? "" : parsed.diagnostics[0].message);
    DriverSet set;
    std::string error;
    ASSERT_TRUE(set.configure(*parsed.config, 1, error)) << error;
    ASSERT_TRUE(set.start(error)) << error;
    std::vector<std::uint8_t> in(set.inputBytes()), out(set.outputBytes(), 0), mem(set.memoryBytes());
    const engine::ProcessImageView view{in, out, mem, 0, 1'000'000};
    const auto scan = [&] {
        set.readInputs(view);
        set.writeOutputs(view); // the program keeps %QX0.0 FALSE throughout
    };
    peer.setCoil(0, 1);
    ASSERT_TRUE(eventually([&] { return peer.coil(0) == 0; }, scan)); // the program's FALSE arrived

    peer.stop();
    ASSERT_TRUE(eventually(
        [&] { return set.driver(0).health().reason.find("communication lost") != std::string::npos; }, scan));
    peer.clearHistory();
    peer.start();
    ASSERT_TRUE(eventually(
        [&] {
            const auto h = peer.coil0History();
            return h.size() >= 2 && h.back() == 0 && set.driver(0).health().health == Health::Ok;
        },
        scan));
    const auto history = peer.coil0History();
    EXPECT_EQ(history.front(), 1); // the configured safe value reached the peer first, not 0
    EXPECT_EQ(history.back(), 0);  // then the program's output again
    set.stop();
    peer.stop();
}

TEST(ModbusTcp, FaultPolicyReportsFaulted) {
    const std::uint16_t port = freeTcpPort(); // nobody listens
    auto d = makeDriver("modbus-tcp", fmt::format("address = '127.0.0.1:{}'\non_error = 'fault'\nreconnect_ms = 10\n"
                                                  "comm_loss_timeout_ms = 100000",
                                                  port));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error; // an unreachable peer is not a start error
    EXPECT_TRUE(eventually([&] { return d->health().health == Health::Faulted; }));
    EXPECT_NE(d->health().reason.find("connect"), std::string::npos) << d->health().reason;
    d->stop();
}

TEST(ModbusTcp, ApplySafeStateWritesSafeValuesAndIgnoresTheProgram) {
    const std::uint16_t port = freeTcpPort();
    PeerServer peer(port);
    peer.start();
    auto d =
        makeDriver("modbus-tcp", fmt::format("address = '127.0.0.1:{}'\npoll_ms = 5\n"
                                             "outputs = [{{area = 'coils', start = 0, count = 2, address = '%QX0.0'}}]",
                                             port));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    Image img;
    Image::setBit(img.outputs, 0, true);
    ASSERT_TRUE(eventually([&] { return peer.coil(0) == 1 && peer.coil(1) == 0; }, [&] { cycle(*d, img); }));
    std::vector<std::uint8_t> safe(4, 0);
    safe[0] = 0b10;        // %QX0.0 FALSE, %QX0.1 TRUE
    d->setSafeImage(safe); // the safe image latched is the one configured
    d->applySafeState(safe);
    ASSERT_TRUE(eventually([&] { return peer.coil(0) == 0 && peer.coil(1) == 1; }, [&] { cycle(*d, img); }));
    d->releaseSafeState();
    EXPECT_TRUE(eventually([&] { return peer.coil(0) == 1 && peer.coil(1) == 0; }, [&] { cycle(*d, img); }));
    d->stop();
}

// A server that answers every request with bytes from a list of bad replies, one per
// connection: the client must survive all of them and report the errors.
// What `takt run` does on SIGTERM: applySafeState and stop at once. The stop must not win the
// race against the write: the peer ends with the safe values, not the program's last outputs.
TEST(ModbusTcp, StopRightAfterApplySafeStateLeavesThePeerSafe) {
    const std::uint16_t port = freeTcpPort();
    PeerServer peer(port);
    peer.start();
    for (int round = 0; round < 5; ++round) {
        auto d = makeDriver("modbus-tcp",
                            fmt::format("address = '127.0.0.1:{}'\npoll_ms = 5\n"
                                        "outputs = [{{area = 'coils', start = 0, count = 2, address = '%QX0.0'}}]",
                                        port));
        std::string error;
        ASSERT_TRUE(d->start(error)) << error;
        Image img;
        Image::setBit(img.outputs, 0, true);
        ASSERT_TRUE(eventually([&] { return peer.coil(0) == 1 && peer.coil(1) == 0; }, [&] { cycle(*d, img); }));
        std::vector<std::uint8_t> safe(4, 0);
        safe[0] = 0b10;        // %QX0.0 FALSE, %QX0.1 TRUE
        d->setSafeImage(safe); // the safe image latched is the one configured
        d->applySafeState(safe);
        d->stop();
        // stop() joined the driver thread: whatever it wrote has been answered.
        EXPECT_EQ(peer.coil(0), 0) << "round " << round;
        EXPECT_EQ(peer.coil(1), 1) << "round " << round;
    }
}

TEST(ModbusTcp, MalformedAndShortResponsesNeverCrash) {
    const int listenFd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listenFd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(listenFd, 8), 0);
    socklen_t len = sizeof a;
    ::getsockname(listenFd, reinterpret_cast<sockaddr*>(&a), &len);
    const std::uint16_t port = ntohs(a.sin_port);
    const std::vector<std::vector<std::uint8_t>> replies = {
        {},                                                                 // close at once
        {0x00},                                                             // one byte
        {0x00, 0x01, 0x00, 0x00},                                           // half a header
        {0x00, 0x01, 0x00, 0x00, 0x00, 0xFF, 0x01, 0x03},                   // length 255, then close
        {0x12, 0x34, 0x00, 0x00, 0x00, 0x05, 0x01, 0x03, 0x02, 0x00, 0x07}, // wrong transaction id
        {0x00, 0x01, 0x00, 0x00, 0x00, 0x03, 0x01, 0x83, 0x02},             // exception: illegal address
        {0x00, 0x01, 0x00, 0x00, 0x00, 0x05, 0x01, 0x03, 0x08, 0x00, 0x07}, // byte count lies
        {0x00, 0x01, 0x00, 0x07, 0x00, 0x05, 0x01, 0x03, 0x02, 0x00, 0x07}, // protocol id 7
        {0x00, 0x01, 0x00, 0x00, 0x00, 0x05, 0x01, 0x04, 0x02, 0x00, 0x07}, // other function
        {0xDE, 0xAD, 0xBE, 0xEF, 0xDE, 0xAD, 0xBE, 0xEF, 0xDE, 0xAD, 0xBE, 0xEF, 0xDE, 0xAD},
    };
    std::atomic<std::size_t> served = 0;
    std::atomic<bool> stopping = false;
    std::thread server([&] {
        while (!stopping) {
            pollfd p{listenFd, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) {
                continue;
            }
            const int c = ::accept(listenFd, nullptr, nullptr);
            std::uint8_t buf[260];
            pollfd q{c, POLLIN, 0};
            if (::poll(&q, 1, 1000) > 0 && ::recv(c, buf, sizeof buf, 0) > 0) {
                const auto& r = replies[served % replies.size()];
                if (!r.empty()) {
                    (void)::send(c, r.data(), r.size(), MSG_NOSIGNAL);
                }
                ++served;
            }
            ::close(c);
        }
    });
    auto d = makeDriver("modbus-tcp",
                        fmt::format("address = '127.0.0.1:{}'\npoll_ms = 1\ntimeout_ms = 50\n"
                                    "on_error = 'warn'\nreconnect_ms = 1\nreconnect_max_ms = 2\n"
                                    "inputs = [{{area = 'holding_registers', start = 0, count = 1, address = '%IW0'}}]",
                                    port));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    Image img;
    EXPECT_TRUE(eventually([&] { return served >= 3 * replies.size(); }, [&] { cycle(*d, img); }));
    EXPECT_NE(d->health().health, Health::Ok);
    EXPECT_EQ(img.word(img.inputs, 0), 0); // nothing from a bad reply reached the image
    d->stop();
    stopping = true;
    server.join();
    ::close(listenFd);
}

// --- modbus-server ------------------------------------------------------------------------

TEST(ModbusServerParams, ErrorsNameTheKey) {
    EXPECT_EQ(initError("modbus-server", "listen = 'nowhere'"), "io.params.listen: 'nowhere': expected host:port");
    EXPECT_EQ(initError("modbus-server", "max_connections = 0"),
              "io.params.max_connections: expected an integer 1..1024");
    EXPECT_EQ(initError("modbus-server", "map = [{table = 'holding_registers', start = 0, count = 4, address = '%MW0'},"
                                         " {table = 'holding_registers', start = 2, count = 4, address = '%MW10'}]"),
              "io.params.map: two entries both map holding_registers 2..3");
    EXPECT_EQ(initError("modbus-server", "map = [{area = 'coils', start = 0, count = 1, address = '%QX0.0'}]"),
              "io.params.map[0].area: unknown parameter of a Modbus map entry (known: table, start, count, "
              "address)");
}

TEST(ModbusServerParams, DefaultMapIsOpenPlcStyleAndOverridesReplaceATable) {
    auto d = makeDriver("modbus-server", "");
    const auto r = d->ownedRanges(); // the writable tables: coils + holding registers
    ASSERT_EQ(r.size(), 2U);
    EXPECT_EQ(r[0].area, Area::Output);
    EXPECT_EQ(r[0].count, 2048U); // %QX0.0..%QX1023.7 and %QW0..%QW1023 share these bytes
    EXPECT_EQ(r[1].area, Area::Memory);
    EXPECT_EQ(r[1].count, 2048U);
    auto o =
        makeDriver("modbus-server", "map = [{table = 'holding_registers', start = 100, count = 2, address = '%MW4'}]");
    const auto r2 = o->ownedRanges();
    ASSERT_EQ(r2.size(), 2U);
    EXPECT_EQ(r2[0].area, Area::Output); // coils keep their default
    EXPECT_EQ(r2[0].count, 1024U);
    EXPECT_EQ(r2[1].area, Area::Memory);
    EXPECT_EQ(r2[1].first, 8U);
    EXPECT_EQ(r2[1].count, 4U);
}

// Our own client against our own server, both through the driver API: the default map.
TEST(ModbusServer, ServesTheImageToTheClientDriver) {
    const std::uint16_t port = freeTcpPort();
    auto server = makeDriver("modbus-server", fmt::format("listen = '127.0.0.1:{}'", port));
    std::string error;
    ASSERT_TRUE(server->start(error)) << error;
    Image serverImg;
    Image::setWord(serverImg.outputs, 0, 0xBEEF); // %QW0 -> holding register 0
    Image::setWord(serverImg.memory, 2, 4242);    // %MW1 -> holding register 1025
    Image::setWord(serverImg.inputs, 4, 17);      // %IW2 -> input register 2
    Image::setBit(serverImg.inputs, 3, true);     // %IX0.3 -> discrete input 3

    auto client = makeDriver("modbus-tcp",
                             fmt::format("address = '127.0.0.1:{}'\npoll_ms = 2\ninputs = ["
                                         "{{area = 'holding_registers', start = 0, count = 1, address = '%IW0'}},"
                                         "{{area = 'holding_registers', start = 1025, count = 1, address = '%IW1'}},"
                                         "{{area = 'input_registers', start = 2, count = 1, address = '%IW2'}},"
                                         "{{area = 'discrete_inputs', start = 0, count = 8, address = '%IX8.0'}}]\n"
                                         "outputs = [{{area = 'coils', start = 16, count = 4, address = '%QX0.0'}},"
                                         "{{area = 'holding_registers', start = 1030, count = 1, address = '%QW1'}}]",
                                         port));
    ASSERT_TRUE(client->start(error)) << error;
    Image clientImg;
    clientImg.outputs[0] = 0b0101;               // coils 16..19
    Image::setWord(clientImg.outputs, 2, 31000); // %QW1 -> holding 1030 -> server %MW6
    ASSERT_TRUE(eventually(
        [&] {
            return clientImg.word(clientImg.inputs, 0) == 0xBEEF && clientImg.word(clientImg.inputs, 2) == 4242 &&
                   clientImg.word(clientImg.inputs, 4) == 17 && clientImg.inputs[8] == 0b1000 &&
                   serverImg.outputs[2] == 0b0101 && serverImg.word(serverImg.memory, 12) == 31000;
        },
        [&] {
            cycle(*server, serverImg);
            cycle(*client, clientImg);
        }));
    EXPECT_EQ(server->health().health, Health::Ok);
    client->stop();
    server->stop();
}

// A master's write lands at the next cycle boundary, not in between; several masters at once.
TEST(ModbusServer, WritesApplyAtTheCycleBoundaryForConcurrentMasters) {
    const std::uint16_t port = freeTcpPort();
    auto server = makeDriver(
        "modbus-server", fmt::format("listen = '127.0.0.1:{}'\nmax_connections = 4\n"
                                     "map = [{{table = 'holding_registers', start = 0, count = 8, address = '%MW0'}}]",
                                     port));
    std::string error;
    ASSERT_TRUE(server->start(error)) << error;
    Image img;
    server->writeOutputs(img.view());
    std::vector<modbus_t*> masters;
    for (int m = 0; m < 4; ++m) {
        modbus_t* ctx = modbus_new_tcp("127.0.0.1", port);
        ASSERT_EQ(modbus_connect(ctx), 0) << modbus_strerror(errno);
        masters.push_back(ctx);
    }
    std::vector<std::thread> threads;
    for (int m = 0; m < 4; ++m) {
        threads.emplace_back([&, m] {
            for (int k = 0; k < 50; ++k) {
                EXPECT_EQ(modbus_write_register(masters[m], m, static_cast<std::uint16_t>(100 * m + k)), 1);
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    // Not in the image yet: nothing has crossed a cycle boundary.
    for (int m = 0; m < 4; ++m) {
        EXPECT_EQ(img.word(img.memory, 2 * static_cast<std::size_t>(m)), 0);
        std::uint16_t v = 0;
        ASSERT_EQ(modbus_read_registers(masters[m], m, 1, &v), 1); // but masters read their write back
        EXPECT_EQ(v, 100 * m + 49);
    }
    server->readInputs(img.view());
    for (int m = 0; m < 4; ++m) {
        EXPECT_EQ(img.word(img.memory, 2 * static_cast<std::size_t>(m)), 100 * m + 49);
    }
    // A fifth master is over max_connections: refused.
    modbus_t* fifth = modbus_new_tcp("127.0.0.1", port);
    std::uint16_t v = 0;
    const bool served = modbus_connect(fifth) == 0 && modbus_read_registers(fifth, 0, 1, &v) == 1;
    EXPECT_FALSE(served);
    modbus_free(fifth);
    for (modbus_t* ctx : masters) {
        modbus_close(ctx);
        modbus_free(ctx);
    }
    server->stop();
}

TEST(ModbusServer, ListenFailureIsAStartError) {
    const std::uint16_t port = freeTcpPort();
    PeerServer peer(port);
    peer.start();
    auto server = makeDriver("modbus-server", fmt::format("listen = '127.0.0.1:{}'", port));
    std::string error;
    EXPECT_FALSE(server->start(error));
    EXPECT_NE(error.find("cannot listen"), std::string::npos) << error;
    peer.stop();
}

// pymodbus (Debian's python3-pymodbus) as an independent peer, when installed.
TEST(ModbusTcp, ReadsFromPymodbus) {
    if (std::system("/usr/bin/python3 -c 'import pymodbus.server' 2>/dev/null") != 0) {
        GTEST_SKIP() << "python3-pymodbus is not installed (scripts/setup.sh installs it)";
    }
    TempDir dir;
    const std::uint16_t port = freeTcpPort();
    const auto script = dir.write("server.py", fmt::format(R"(
from pymodbus.server import StartTcpServer
from pymodbus.datastore import ModbusSequentialDataBlock, ModbusSlaveContext, ModbusServerContext
block = ModbusSequentialDataBlock(0, [1000 + i for i in range(200)])
slave = ModbusSlaveContext(hr=block, zero_mode=True)
StartTcpServer(context=ModbusServerContext(slaves=slave, single=True), address=("127.0.0.1", {}))
)",
                                                           port));
    Process py({"/usr/bin/python3", script.string()});
    ASSERT_TRUE(waitForPort(port, std::chrono::seconds(15)));
    auto d = makeDriver(
        "modbus-tcp", fmt::format("address = '127.0.0.1:{}'\npoll_ms = 5\n"
                                  "inputs = [{{area = 'holding_registers', start = 0, count = 150, address = '%IW0'}}]",
                                  port));
    std::string error;
    ASSERT_TRUE(d->start(error)) << error;
    Image img(512);
    ASSERT_TRUE(eventually([&] { return img.word(img.inputs, 2 * 149) != 0; }, [&] { cycle(*d, img); }));
    for (int i = 0; i < 150; ++i) {
        EXPECT_EQ(img.word(img.inputs, 2 * static_cast<std::size_t>(i)), 1000 + i) << i;
    }
    d->stop();
}

} // namespace
} // namespace takt::io::test
