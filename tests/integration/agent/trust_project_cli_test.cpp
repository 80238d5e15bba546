// truST project folders run on takt as they are: project folders shaped like truST's examples
// (runtime.toml with an inline example auth_token and truST-only sections, io.toml in the
// single-driver `simulated` + `params = {}` form and the `drivers = [...]` form with truST's mqtt
// and gpio keys, simulation.toml couplings and disturbances, sources split into a CONFIGURATION
// file whose VAR_CONFIG locates plain variables, non-OOP and OOP programs). Each one builds,
// validates and runs for 1 s with exit 0 and only the warnings listed here; for simulation.toml
// the run's last status line shows the inputs the couplings and disturbances produced.
#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/modbus_peer.h"
#include "support/mqtt_peer.h"
#include "support/net.h"
#include "support/process.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "support/validate_report.h"

namespace takt::agent {
namespace {

using takt::test::hasDiagnostic;
using takt::test::Process;
using takt::test::readText;
using takt::test::runTakt;
using takt::test::taktArgv;
using takt::test::TempDir;
using takt::test::validateReport;

// A runtime.toml as truST's examples write it; `control` is the [runtime.control] body.
std::string runtimeToml(const std::string& name, const std::string& control, const std::string& extra = "") {
    return "[bundle]\nversion = 1\n\n[resource]\nname = \"" + name +
           "\"\ncycle_interval_ms = 10\n\n[runtime.control]\n" + control + "\n" + extra +
           "[runtime.log]\nlevel = \"info\"\n\n[runtime.retain]\nmode = \"none\"\nsave_interval_ms = 1000\n\n"
           "[runtime.watchdog]\nenabled = false\ntimeout_ms = 1000\naction = \"halt\"\n\n"
           "[runtime.fault]\npolicy = \"halt\"\n";
}

// A CONFIGURATION in its own file, as truST projects keep it; `config` is the VAR_CONFIG body.
std::string configurationSt(const std::string& program, const std::string& config) {
    return "CONFIGURATION PlantConfiguration\nRESOURCE Cpu0 ON PLC\n    TASK MainTask (INTERVAL := T#10ms, "
           "PRIORITY := 1);\n    PROGRAM Plant WITH MainTask : " +
           program + ";\nEND_RESOURCE\nVAR_CONFIG\n" + config + "END_VAR\nEND_CONFIGURATION\n";
}

struct Step {
    int exitCode = -1;
    std::string output;
};

// `takt run --for 1s` with its output in dir/run.log; killed (exit -1) past 30 s.
Step runFor1s(const TempDir& dir) {
    const std::filesystem::path log = dir.path() / "run.log";
    Process takt(taktArgv({"run", "--project", dir.path().string(), "--for", "1s"}), {.log = log});
    Step s;
    if (takt.started()) {
        s.exitCode = takt.waitOrKill(std::chrono::seconds(30));
    }
    s.output = readText(log);
    return s;
}

// The status line printed after the run stopped.
std::string lastStatus(const std::string& out) {
    const std::size_t at = out.rfind("stopped (--for elapsed)");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
}

// Build, validate: both exit 0; the validate report's warnings (key: message) in file order.
std::vector<std::string> buildAndValidate(const TempDir& dir, std::string& buildOutput) {
    const takt::test::RunResult built = runTakt("build", dir.path());
    EXPECT_EQ(built.exitCode, 0) << built.out << built.err;
    buildOutput = built.out + built.err;
    const takt::test::RunResult v = runTakt("validate --ci", dir.path());
    EXPECT_EQ(v.exitCode, 0) << v.out << v.err;
    const rapidjson::Document doc = validateReport(v);
    std::vector<std::string> warnings;
    if (doc.IsObject() && doc.HasMember("diagnostics")) {
        for (const auto& d : doc["diagnostics"].GetArray()) {
            EXPECT_STREQ(d["severity"].GetString(), "warning") << v.out;
            warnings.push_back(std::filesystem::path(d["file"].GetString()).filename().string() + ":" +
                               std::to_string(d["line"].GetUint()) + ": " + d["key"].GetString());
        }
    }
    std::sort(warnings.begin(), warnings.end()); // runtime.toml's, then io.toml's, then simulation.toml's
    return warnings;
}

// Non-OOP, simulated I/O without a plant, wired by simulation.toml: the outputs come back as
// inputs through the couplings (a copy, two thresholds, a delay), a disturbance sets an input
// word and another faults the driver.
TEST(TrustProject, SimulatedWithSimulationTomlCouplesOutputsToInputs) {
    TempDir dir;
    dir.write("runtime.toml",
              runtimeToml("MixerClassic",
                          "endpoint = \"tcp://127.0.0.1:0\"\nauth_token = \"mixer-oscat-example-token\"\n",
                          "[runtime.opcua]\nenabled = false\nlisten = \"127.0.0.1:4840\"\n"
                          "namespace_uri = \"urn:example:mixer\"\nsecurity_policy = \"none\"\n\n"));
    dir.write("io.toml", "[io]\ndriver = \"simulated\"\nparams = {}\n\n[[io.safe_state]]\naddress = \"%QX0.0\"\n"
                         "value = \"FALSE\"\n");
    dir.write("simulation.toml", R"([simulation]
enabled = true
seed = 7
time_scale = 4

[[couplings]]
source = "%QX0.0"
target = "%IX0.0"
delay_ms = 50

[[couplings]]
source = "%QW1"
target = "%IW1"

[[couplings]]
source = "%QW1"
target = "%IX0.1"
threshold = 1000.0
on_true = "TRUE"
on_false = "FALSE"

[[couplings]]
source = "%QW1"
target = "%IX0.2"
threshold = 2000.0

[[couplings]]
source = "%QW2"
target = "%IW3"

[[disturbances]]
at_ms = 100
kind = "set"
target = "%IW2"
value = "77"

[[disturbances]]
at_ms = 300
kind = "fault"
message = "simulated sensor dropout"
)");
    dir.write("src/Main.st", R"(PROGRAM Mixer
VAR
    run_cmd : BOOL;
    speed_set : INT;
    run_fb : BOOL;
    speed_fb : INT;
    high : BOOL;
    over : BOOL;
    ambient : INT;
    echo : INT;
    echo_fb : INT;
END_VAR
    run_cmd := TRUE;
    speed_set := 1234;
    IF run_fb AND high AND NOT over THEN
        echo := speed_fb + ambient;
    END_IF;
END_PROGRAM
)");
    dir.write("src/Configuration.st",
              configurationSt("Mixer",
                              "    Cpu0.Plant.run_cmd AT %QX0.0 : BOOL;\n    Cpu0.Plant.speed_set AT %QW1 : INT;\n"
                              "    Cpu0.Plant.run_fb AT %IX0.0 : BOOL;\n    Cpu0.Plant.speed_fb AT %IW1 : INT;\n"
                              "    Cpu0.Plant.high AT %IX0.1 : BOOL;\n    Cpu0.Plant.over AT %IX0.2 : BOOL;\n"
                              "    Cpu0.Plant.ambient AT %IW2 : INT;\n    Cpu0.Plant.echo AT %QW2 : INT;\n"
                              "    Cpu0.Plant.echo_fb AT %IW3 : INT;\n"));
    std::string built;
    const std::vector<std::string> warnings = buildAndValidate(dir, built);
    EXPECT_EQ(warnings, (std::vector<std::string>{"runtime.toml:10: runtime.control.auth_token",
                                                  "simulation.toml:3: simulation.seed",
                                                  "simulation.toml:4: simulation.time_scale"}));
    // One W1013 for the file's nine VAR_CONFIG entries, at the first.
    EXPECT_NE(built.find("Configuration.st:7:5: warning[W1013]: VAR_CONFIG in this file gives addresses to 9 "
                         "variables"),
              std::string::npos)
        << built;
    EXPECT_EQ(built.find("W1013", built.find("W1013") + 1), std::string::npos) << built;
    EXPECT_EQ(built.find("error"), std::string::npos) << built;

    const Step run = runFor1s(dir);
    EXPECT_EQ(run.exitCode, 0) << run.output;
    const std::string last = lastStatus(run.output);
    ASSERT_FALSE(last.empty()) << run.output;
    // %IX0.0 run_fb and %IX0.1 high set, %IX0.2 over clear; %IW1 = 1234 (d204); %IW2 = 77 (4d00);
    // %IW3 = echo = 1234 + 77 = 1311 (1f05): the program saw the coupled inputs and its output came
    // back. (After the stop %Q shows the safe image, so the inputs carry the evidence.)
    EXPECT_NE(last.find("%I=0300d2044d001f05 "), std::string::npos) << last;
    EXPECT_NE(last.find("simulated=faulted(simulation.toml at 300 ms: simulated sensor dropout)"), std::string::npos)
        << last;
}

// OOP (an interface, a function block with methods) with truST's multi-driver io.toml: modbus-tcp
// and mqtt with keep_alive_s, allow_insecure_remote and on_error. No peer answers: the drivers
// are degraded, the run still ends with exit 0.
TEST(TrustProject, OopWithModbusAndMqttDrivers) {
    TempDir dir;
    dir.write("runtime.toml", runtimeToml("ConveyorOop",
                                          "endpoint = \"unix://" + (dir.path() / "ctl.sock").string() +
                                              "\"\nauth_token = \"conveyor-oop-example-token\"\nmode = \"production\"\n"
                                              "debug_enabled = false\n",
                                          "[runtime]\nexecution_backend = \"vm\"\n\n"));
    dir.write("io.toml", R"([io]
drivers = [
  { name = "modbus-tcp", params = { address = "127.0.0.1:1", unit_id = 7, input_start = 0, output_start = 0, timeout_ms = 200, on_error = "warn" } },
  { name = "mqtt", params = { broker = "127.0.0.1:1", topic_out = "conveyor/alarm", reconnect_ms = 500, keep_alive_s = 5, allow_insecure_remote = false, on_error = "warn" } }
]

[[io.safe_state]]
address = "%QX0.0"
value = "FALSE"
)");
    dir.write("src/Main.st", R"(INTERFACE IBelt
    METHOD Advance : INT
    VAR_INPUT
        steps : INT;
    END_VAR
    END_METHOD
END_INTERFACE

FUNCTION_BLOCK Belt IMPLEMENTS IBelt
VAR
    position : INT;
END_VAR
    METHOD Advance : INT
    VAR_INPUT
        steps : INT;
    END_VAR
        position := position + steps;
        Advance := position;
    END_METHOD
END_FUNCTION_BLOCK

PROGRAM Line
VAR
    belt : Belt;
    belt_ref : IBelt;
    position : INT;
    jam : BOOL;
END_VAR
    belt_ref := belt;
    position := belt_ref.Advance(steps := 1);
    jam := position > 30000;
END_PROGRAM
)");
    dir.write("src/Configuration.st", configurationSt("Line", "    Cpu0.Plant.jam AT %QX0.0 : BOOL;\n"));
    std::string built;
    const std::vector<std::string> warnings = buildAndValidate(dir, built);
    EXPECT_EQ(warnings, (std::vector<std::string>{"runtime.toml:10: runtime.control.auth_token",
                                                  "runtime.toml:15: runtime.execution_backend"}));
    EXPECT_NE(built.find("warning[W1013]"), std::string::npos) << built;

    const Step run = runFor1s(dir);
    EXPECT_EQ(run.exitCode, 0) << run.output;
    EXPECT_FALSE(lastStatus(run.output).empty()) << run.output;
}

// truST's OSCAT io.toml: modbus-tcp in the input_start form against a Modbus server and mqtt's
// whole-image topic_in / topic_out against a mosquitto broker, both writing from %IB0. Accepted
// with one warning naming both drivers and the shared bytes. modbus-tcp writes %IW0 every cycle;
// the retained 3-byte topic_in message is written once, so %IB2 (which only mqtt writes) keeps
// its byte while modbus-tcp, read first, has %IB0..%IB1 back the next cycle.
TEST(TrustProject, OscatModbusInputStartBesideMqttTopicIn) {
    if (!std::filesystem::exists(io::test::kBroker)) {
        GTEST_SKIP() << "mosquitto is not installed (scripts/setup.sh installs it)";
    }
    TempDir brokerDir;
    io::test::Broker broker(brokerDir);
    ASSERT_TRUE(broker.start());
    io::test::Peer peer(broker.port());
    peer.publish("line1/cmd", std::string("\x2A\x2B\x2C", 3), true);
    const std::uint16_t modbusPort = takt::test::freeTcpPort();
    io::test::PeerServer server(modbusPort);
    server.setInputRegister(0, 0x1234);
    server.start();

    TempDir dir;
    dir.write("runtime.toml",
              runtimeToml("TankFarm", "endpoint = \"unix://" + (dir.path() / "ctl.sock").string() + "\"\n"));
    dir.write("io.toml", fmt::format(R"([io]
drivers = [
  {{ name = "modbus-tcp", params = {{ address = "127.0.0.1:{}", input_start = 0, input_count = 1, output_start = 0, output_count = 1, timeout_ms = 200, on_error = "warn" }} }},
  {{ name = "mqtt", params = {{ broker = "127.0.0.1:{}", topic_in = "line1/cmd", topic_out = "line1/alarm", reconnect_ms = 500, keep_alive_s = 5, allow_insecure_remote = false }} }}
]

[[io.safe_state]]
address = "%QX0.0"
value = "FALSE"
)",
                                     modbusPort, broker.port()));
    dir.write("src/Main.st", "PROGRAM Transfer\nVAR\n    level : INT;\n    cmd : BYTE;\n    alarm : BOOL;\nEND_VAR\n"
                             "    alarm := level > 100 OR cmd <> 0;\nEND_PROGRAM\n");
    dir.write("src/Configuration.st",
              configurationSt("Transfer", "    Cpu0.Plant.level AT %IW0 : INT;\n    Cpu0.Plant.cmd AT %IB2 : BYTE;\n"
                                          "    Cpu0.Plant.alarm AT %QX0.0 : BOOL;\n"));
    std::string built;
    EXPECT_EQ(buildAndValidate(dir, built), std::vector<std::string>{"io.toml:4: io.drivers[1]"});
    const takt::test::RunResult v = runTakt("validate --ci", dir.path());
    EXPECT_TRUE(hasDiagnostic(validateReport(v), "warning", "io.drivers[1]",
                              "io.drivers[0] (modbus-tcp) and io.drivers[1] (mqtt) both write %IB0..%IB1"))
        << v.out;

    const Step run = runFor1s(dir);
    EXPECT_EQ(run.exitCode, 0) << run.output;
    std::vector<std::string> warnings;
    std::istringstream lines(run.output);
    for (std::string line; std::getline(lines, line);) {
        // A cycle overrun depends on the machine's load, not on the project.
        if (line.find("warn") != std::string::npos && line.find("cycle_overrun") == std::string::npos) {
            warnings.push_back(line);
        }
    }
    ASSERT_EQ(warnings.size(), 1U) << run.output;
    const std::string io = (dir.path() / "io.toml").string();
    EXPECT_NE(warnings[0].find(io + ":3:3: driver 'modbus-tcp' (io.drivers[0].params) and " + io +
                               ":4:3: driver 'mqtt' (io.drivers[1].params) both write %IB0..%IB1"),
              std::string::npos)
        << warnings[0];
    const std::string last = lastStatus(run.output);
    EXPECT_NE(last.find("%I=34122c"), std::string::npos) << last;
    // The log names the drivers' health at start and at each change: both were ok by the end of
    // the run (the stop line shows mqtt after it disconnected).
    const std::size_t health = run.output.rfind("driver health: ");
    ASSERT_NE(health, std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("modbus-tcp=ok,mqtt=ok", health), health + 15) << run.output;
    server.stop();
}

// truST's gpio params (backend, sysfs_base, `pin` for the line) validate with a warning for each
// key takt ignores; without a GPIO chip on the test host only build and validate are run.
TEST(TrustProject, GpioWithSysfsKeysValidates) {
    TempDir dir;
    dir.write("runtime.toml",
              runtimeToml("PumpGpio", "endpoint = \"unix://" + (dir.path() / "ctl.sock").string() + "\"\n"));
    dir.write("io.toml", R"([io]
driver = "gpio"

[io.params]
backend = "sysfs"
sysfs_base = "/sys/class/gpio"
inputs = [ { address = "%IX0.0", pin = 17, invert = true, debounce_ms = 10 } ]
outputs = [ { address = "%QX0.0", line = 27, initial = false } ]
)");
    dir.write("src/Main.st", "PROGRAM Pump\nVAR\n    button : BOOL;\n    lamp : BOOL;\nEND_VAR\n    lamp := button;\n"
                             "END_PROGRAM\n");
    dir.write("src/Configuration.st", configurationSt("Pump", "    Cpu0.Plant.button AT %IX0.0 : BOOL;\n"
                                                              "    Cpu0.Plant.lamp AT %QX0.0 : BOOL;\n"));
    std::string built;
    const std::vector<std::string> warnings = buildAndValidate(dir, built);
    EXPECT_EQ(warnings, (std::vector<std::string>{"io.toml:5: io.params.backend", "io.toml:6: io.params.sysfs_base"}));
}

// truST's mqtt [[io.params.mappings]] (tag/topic/direction by variable name) is one warning at
// the key, not an unknown-parameter error: the project validates and builds.
TEST(TrustProject, MqttMappingsWarnOnce) {
    TempDir dir;
    dir.write("runtime.toml",
              runtimeToml("Lights", "endpoint = \"unix://" + (dir.path() / "ctl.sock").string() + "\"\n"));
    dir.write("io.toml", "[io]\ndriver = \"mqtt\"\n\n[io.params]\nbroker = \"127.0.0.1:1883\"\n\n"
                         "[[io.params.mappings]]\ntag = \"Main.Green\"\ntopic = \"t/green\"\ndirection = \"write\"\n\n"
                         "[[io.params.mappings]]\ntag = \"Main.Red\"\ntopic = \"t/red\"\ndirection = \"write\"\n");
    dir.write("src/Main.st", "PROGRAM Lights\nVAR\n    Green : BOOL;\n    Red : BOOL;\nEND_VAR\n    Red := NOT Green;\n"
                             "END_PROGRAM\n");
    std::string built;
    EXPECT_EQ(buildAndValidate(dir, built), (std::vector<std::string>{"io.toml:7: io.params.mappings"}));
}

// The same folder with `[io.params]` empty and no simulation.toml: no model, the inputs stay 0,
// and validate says that no driver reads or writes the located variables.
TEST(TrustProject, SimulatedWithoutPlantOrSimulationToml) {
    TempDir dir;
    dir.write("runtime.toml",
              runtimeToml("Idle", "endpoint = \"unix://" + (dir.path() / "ctl.sock").string() + "\"\n"));
    dir.write("io.toml", "[io]\ndriver = \"simulated\"\n\n[io.params]\n");
    dir.write("src/Main.st",
              "PROGRAM Idle\nVAR\n    x : BOOL;\n    y : BOOL;\nEND_VAR\n    y := NOT x;\nEND_PROGRAM\n");
    dir.write("src/Configuration.st", configurationSt("Idle", "    Cpu0.Plant.x AT %IX0.0 : BOOL;\n"
                                                              "    Cpu0.Plant.y AT %QX0.0 : BOOL;\n"));
    std::string built;
    EXPECT_EQ(buildAndValidate(dir, built), (std::vector<std::string>{"src:0: Plant.x", "src:0: Plant.y"}));
    const Step run = runFor1s(dir);
    EXPECT_EQ(run.exitCode, 0) << run.output;
    const std::string last = lastStatus(run.output);
    EXPECT_NE(last.find("simulated=ok"), std::string::npos) << last;
    EXPECT_NE(last.find("%I=00 "), std::string::npos) << last;
}

// With simulation.toml and no io.toml, truST drives the I/O from simulation.toml alone: takt
// runs a `simulated` driver without a plant (not the host-sim board's filling line), says so at
// start-up, and the couplings and disturbances reach the inputs.
TEST(TrustProject, SimulationTomlWithoutIoToml) {
    TempDir dir;
    dir.write("runtime.toml",
              runtimeToml("Echo", "endpoint = \"unix://" + (dir.path() / "ctl.sock").string() + "\"\n"));
    dir.write("simulation.toml",
              "[[couplings]]\nsource = \"%QX0.0\"\ntarget = \"%IX0.1\"\n\n"
              "[[disturbances]]\nat_ms = 0\nkind = \"set\"\ntarget = \"%IX0.0\"\nvalue = \"TRUE\"\n");
    dir.write("src/Main.st", "PROGRAM Echo\nVAR\n    x AT %IX0.0 : BOOL;\n    seen AT %IX0.1 : BOOL;\n"
                             "    y AT %QX0.0 : BOOL;\nEND_VAR\n    y := x;\nEND_PROGRAM\n");
    std::string built;
    EXPECT_EQ(buildAndValidate(dir, built), std::vector<std::string>{});
    const takt::test::RunResult v = runTakt("validate", dir.path());
    EXPECT_NE(v.out.find("I/O from simulation.toml (simulated)"), std::string::npos) << v.out << v.err;
    const Step run = runFor1s(dir);
    EXPECT_EQ(run.exitCode, 0) << run.output;
    EXPECT_NE(run.output.find("info I/O from simulation.toml"), std::string::npos) << run.output;
    const std::string last = lastStatus(run.output);
    EXPECT_NE(last.find("simulated=ok"), std::string::npos) << last;
    EXPECT_NE(last.find("%I=03"), std::string::npos) << last; // x set by the disturbance, seen by the coupling
}

// A simulation.toml no driver uses is a warning; a bad value in it refuses validate and run
// (exit 10) with the file, line and key.
TEST(TrustProject, SimulationTomlUnusedOrInvalid) {
    TempDir dir;
    dir.write("runtime.toml",
              runtimeToml("Loop", "endpoint = \"unix://" + (dir.path() / "ctl.sock").string() + "\"\n"));
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n[io.params]\nbytes = 2\n");
    dir.write("simulation.toml", "[[couplings]]\nsource = \"%QX0.0\"\ntarget = \"%IX0.0\"\n");
    dir.write("src/Main.st", "PROGRAM Loop\nVAR\n    x AT %IX0.0 : BOOL;\n    y AT %QX0.0 : BOOL;\nEND_VAR\n"
                             "    y := NOT x;\nEND_PROGRAM\n");
    std::string built;
    EXPECT_EQ(buildAndValidate(dir, built), std::vector<std::string>{"simulation.toml:0: "});

    dir.write("simulation.toml", "[[couplings]]\nsource = \"%QX0.0\"\ntarget = \"%QX0.1\"\n");
    const takt::test::RunResult v = runTakt("validate --ci", dir.path());
    EXPECT_EQ(v.exitCode, 10) << v.out << v.err;
    EXPECT_TRUE(hasDiagnostic(validateReport(v), "error", "couplings[0].target", "not an input (%I)")) << v.out;
    const Step run = runFor1s(dir);
    EXPECT_EQ(run.exitCode, 10) << run.output;
    EXPECT_NE(run.output.find("simulation.toml:3:1: error: couplings[0].target: "), std::string::npos) << run.output;
}

} // namespace
} // namespace takt::agent
