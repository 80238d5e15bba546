// simulation.toml: the loader's errors and warnings (file, line, key), and the `simulated` driver
// without a plant running a script on a clock the test moves: couplings with and without a
// threshold, delays, disturbances in time order, a fault, the safe state seen by the couplings.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "takt/io/driver.h"
#include "takt/io/simulation.h"

namespace takt::io {
namespace {

constexpr std::int64_t kMs = 1'000'000;

using Severity = engine::ConfigDiagnostic::Severity;

// "line:key severity" per diagnostic, for compact expectations.
std::vector<std::string> findings(const SimulationResult& r) {
    std::vector<std::string> out;
    for (const auto& d : r.diagnostics) {
        out.push_back(std::to_string(d.line) + ":" + d.key + (d.severity == Severity::Error ? " error" : " warning"));
    }
    return out;
}

TEST(SimulationToml, BadValuesAreErrorsAtTheirKey) {
    const SimulationResult r = parseSimulation(R"([[couplings]]
source = "%IX0.0"
target = "%IX0.1"

[[couplings]]
source = "%QW0"
target = "%QX0.0"

[[couplings]]
source = "%QW0"
target = "%IX0.2"
on_true = "TRUE"

[[couplings]]
source = "%QW0"
target = "%IB1"
threshold = 1.0
on_true = "300"

[[disturbances]]
at_ms = 10
kind = "spike"
target = "%IX0.0"
value = "TRUE"

[[disturbances]]
at_ms = -1
target = "%IX0.0"
value = "TRUE"

[[couplings]]
source = "%QX0.0"
target = "%IX0.0"
delay_ms = "soon"
)",
                                               "simulation.toml", false);
    EXPECT_FALSE(r.script.has_value());
    EXPECT_EQ(findings(r), (std::vector<std::string>{"2:couplings[0].source error", "7:couplings[1].target error",
                                                     "12:couplings[2].on_true error", "18:couplings[3].on_true error",
                                                     "22:disturbances[0].kind error", "27:disturbances[1].at_ms error",
                                                     "34:couplings[4].delay_ms error"}));
    EXPECT_NE(r.diagnostics[0].message.find("not an output (%Q)"), std::string::npos) << r.diagnostics[0].message;
    EXPECT_NE(r.diagnostics[2].message.find("needs threshold"), std::string::npos) << r.diagnostics[2].message;
    EXPECT_NE(r.diagnostics[3].message.find("does not fit"), std::string::npos) << r.diagnostics[3].message;
    EXPECT_EQ(r.diagnostics[0].file, "simulation.toml");
}

TEST(SimulationToml, UnknownAndUnsupportedKeysAreWarnings) {
    const SimulationResult r = parseSimulation(R"([simulation]
seed = 3
time_scale = 1
colour = "blue"

[[couplings]]
source = "%QX0.0"
target = "%IX0.0"
gain = 2.0

[physics]
enabled = true
)",
                                               "simulation.toml", false);
    ASSERT_TRUE(r.script.has_value());
    // time_scale = 1 is what takt does anyway: no warning.
    EXPECT_EQ(findings(r), (std::vector<std::string>{"2:simulation.seed warning", "4:simulation.colour warning",
                                                     "9:couplings[0].gain warning", "11:physics warning"}));
    EXPECT_TRUE(r.script->enabled); // a coupling switches it on without [simulation] enabled
    ASSERT_EQ(r.script->couplings.size(), 1U);
}

TEST(SimulationToml, EnabledFalseAndNoRulesMeanOff) {
    const SimulationResult off = parseSimulation("[simulation]\nenabled = false\n[[couplings]]\nsource = \"%QX0.0\"\n"
                                                 "target = \"%IX0.0\"\n",
                                                 "simulation.toml", false);
    ASSERT_TRUE(off.script.has_value());
    EXPECT_FALSE(off.script->enabled);
    const SimulationResult empty = parseSimulation("", "simulation.toml", false);
    ASSERT_TRUE(empty.script.has_value());
    EXPECT_FALSE(empty.script->enabled);
}

// The simulated driver without a plant, with `script`, on a clock the test moves.
class Rig {
public:
    explicit Rig(std::string_view script, bool byteAddressing = false) : driver(createDriver("simulated")) {
        SimulationResult r = parseSimulation(script, "simulation.toml", byteAddressing);
        EXPECT_TRUE(r.script.has_value()) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
        DriverSpec spec;
        spec.name = "simulated";
        spec.source = {"io.toml", "io.params"};
        if (r.script) {
            spec.simulation = std::make_shared<const SimulationScript>(std::move(*r.script));
        }
        std::string error;
        EXPECT_TRUE(driver->init(spec, error)) << error;
        EXPECT_TRUE(driver->start(error)) << error;
    }

    // One cycle at `nowNs`: inputs in, the program's outputs, outputs out.
    void cycle(std::int64_t ms) {
        const ImageView v{inputs, outputs, memory, 5'000 * kMs + ms * kMs, 10 * kMs};
        driver->readInputs(v);
        driver->writeOutputs(v);
    }

    std::unique_ptr<Driver> driver;
    std::vector<std::uint8_t> inputs = std::vector<std::uint8_t>(8, 0);
    std::vector<std::uint8_t> outputs = std::vector<std::uint8_t>(8, 0);
    std::vector<std::uint8_t> memory = std::vector<std::uint8_t>(8, 0);
};

TEST(SimulatedScript, CouplingsFollowTheOutputsAfterTheirDelay) {
    Rig rig(R"([[couplings]]
source = "%QX0.0"
target = "%IX0.0"

[[couplings]]
source = "%QX0.0"
target = "%IX0.1"
delay_ms = 30

[[couplings]]
source = "%QW1"
target = "%IW1"

[[couplings]]
source = "%QW1"
target = "%IX0.2"
threshold = 500.0

[[couplings]]
source = "%QW1"
target = "%IB6"
threshold = 500.0
on_true = "16#AA"
on_false = "16#55"
)");
    const auto ranges = rig.driver->ownedRanges();
    ASSERT_FALSE(ranges.empty());
    EXPECT_EQ(ranges[0].area, Area::Input);
    EXPECT_EQ(ranges[0].first, 0U);
    rig.cycle(0);
    EXPECT_EQ(rig.inputs[6], 0x00); // nothing is written before the first outputs
    rig.cycle(10);
    EXPECT_EQ(rig.inputs[6], 0x55); // on_false for 0 < 500
    rig.outputs[0] = 0x01;
    rig.outputs[2] = 0xE8; // %QW1 = 1000
    rig.outputs[3] = 0x03;
    rig.cycle(20); // these outputs are read after this cycle
    EXPECT_EQ(rig.inputs[0], 0x00);
    rig.cycle(30);
    EXPECT_EQ(rig.inputs[0], 0x05); // %IX0.0 and %IX0.2 (1000 >= 500); %IX0.1 waits 30 ms
    EXPECT_EQ(rig.inputs[2], 0xE8);
    EXPECT_EQ(rig.inputs[3], 0x03);
    EXPECT_EQ(rig.inputs[6], 0xAA);
    rig.cycle(40);
    EXPECT_EQ(rig.inputs[0], 0x05);
    rig.cycle(50); // scheduled at 20 + 30
    EXPECT_EQ(rig.inputs[0], 0x07);
    rig.outputs[0] = 0x00;
    rig.cycle(60);
    rig.cycle(70);
    EXPECT_EQ(rig.inputs[0], 0x06);
    rig.cycle(90);
    EXPECT_EQ(rig.inputs[0], 0x04);
}

TEST(SimulatedScript, DisturbancesFireInTimeOrderAndAFaultShowsInHealth) {
    Rig rig(R"([[disturbances]]
at_ms = 100
kind = "fault"
message = "sensor dropout"

[[disturbances]]
at_ms = 50
target = "%IW0"
value = "INT#-2"

[[disturbances]]
at_ms = 20
target = "%IX2.3"
value = true
)");
    rig.cycle(0);
    EXPECT_EQ(rig.inputs[2], 0x00);
    rig.cycle(20);
    EXPECT_EQ(rig.inputs[2], 0x08);
    EXPECT_EQ(rig.inputs[0], 0x00);
    rig.cycle(60);
    EXPECT_EQ(rig.inputs[0], 0xFE);
    EXPECT_EQ(rig.inputs[1], 0xFF);
    EXPECT_EQ(rig.driver->health().health, Health::Ok);
    rig.cycle(100);
    const HealthStatus h = rig.driver->health();
    EXPECT_EQ(h.health, Health::Faulted);
    EXPECT_EQ(h.reason, "simulation.toml at 100 ms: sensor dropout");
}

TEST(SimulatedScript, CouplingsSeeTheSafeOutputsWhileLatched) {
    Rig rig("[[couplings]]\nsource = \"%QX0.0\"\ntarget = \"%IX0.0\"\n");
    rig.outputs[0] = 0x01;
    rig.cycle(0);
    rig.cycle(10);
    EXPECT_EQ(rig.inputs[0], 0x01);
    const std::vector<std::uint8_t> safe(8, 0);
    rig.driver->setSafeImage(safe); // the safe image latched is the one configured
    rig.driver->applySafeState(safe);
    rig.cycle(20);
    rig.cycle(30);
    EXPECT_EQ(rig.inputs[0], 0x00);
    rig.driver->releaseSafeState();
    rig.cycle(40);
    rig.cycle(50);
    EXPECT_EQ(rig.inputs[0], 0x01);
}

TEST(SimulatedScript, ByteAddressingMovesTheWords) {
    Rig rig("[[couplings]]\nsource = \"%QW1\"\ntarget = \"%IW3\"\n", true);
    rig.outputs[1] = 0x34;
    rig.outputs[2] = 0x12;
    rig.cycle(0);
    rig.cycle(10);
    EXPECT_EQ(rig.inputs[3], 0x34);
    EXPECT_EQ(rig.inputs[4], 0x12);
}

} // namespace
} // namespace takt::io
