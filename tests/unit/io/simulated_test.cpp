// The `simulated` driver and its plants, driven through the Driver API with a synthetic clock:
// the physics the sensors report follow the configured flows, speeds and positions, and a
// latched safe state is what the plant acts on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "takt/io/driver.h"
#include "takt/io/simulated.h"

namespace takt::io {
namespace {

constexpr std::int64_t kMs = 1'000'000;

DriverSpec specOf(std::string_view toml) {
    DriverSpec spec;
    spec.name = "simulated";
    spec.params = toml::parse(toml);
    spec.source = ParamSource{"io.toml", "io.params"};
    return spec;
}

std::string initError(std::string_view toml) {
    auto d = createDriver("simulated");
    std::string error;
    EXPECT_FALSE(d->init(specOf(toml), error));
    return error;
}

// One driver, a process image and a clock that the test moves.
class Rig {
public:
    explicit Rig(std::string_view toml) : driver(createDriver("simulated")) {
        std::string error;
        ok = driver->init(specOf(toml), error);
        EXPECT_TRUE(ok) << error;
        EXPECT_TRUE(driver->start(error)) << error;
    }

    [[nodiscard]] ImageView view() { return ImageView{inputs, outputs, memory, nowNs, 10 * kMs}; }

    // One cycle of `dtNs`: read inputs, let the "program" set the outputs, write outputs.
    void cycle(std::int64_t dtNs = 10 * kMs) {
        nowNs += dtNs;
        driver->readInputs(view());
        driver->writeOutputs(view());
    }
    void run(double seconds, std::int64_t dtNs = 10 * kMs) {
        const auto n = static_cast<std::int64_t>(std::llround(seconds * 1e9 / static_cast<double>(dtNs)));
        for (std::int64_t i = 0; i < n; ++i) {
            cycle(dtNs);
        }
    }

    void setQ(unsigned bit, bool on) {
        outputs[0] = static_cast<std::uint8_t>(on ? outputs[0] | (1U << bit) : outputs[0] & ~(1U << bit));
    }
    [[nodiscard]] bool ix(unsigned bit) const { return ((inputs[0] >> bit) & 1U) != 0; }
    [[nodiscard]] std::int16_t iw1() const {
        std::int16_t v = 0;
        std::memcpy(&v, inputs.data() + 2, sizeof v);
        return v;
    }
    [[nodiscard]] double quantity(std::string_view name) const {
        const std::optional<double> q = simulatedQuantity(*driver, name);
        EXPECT_TRUE(q.has_value()) << name;
        return q.value_or(-1.0);
    }

    std::unique_ptr<Driver> driver;
    bool ok = false;
    std::vector<std::uint8_t> inputs = std::vector<std::uint8_t>(8, 0);
    std::vector<std::uint8_t> outputs = std::vector<std::uint8_t>(8, 0);
    std::vector<std::uint8_t> memory = std::vector<std::uint8_t>(8, 0);
    std::int64_t nowNs = 1'000 * kMs; // an arbitrary monotonic start
};

constexpr std::string_view kTank = R"(
plant = "tank"
tank_capacity_l = 100.0
tank_initial_l = 20.0
pump_inflow_l_s = 2.0
drain_flow_l_s = 0.5
level_full_scale = 27648
low_probe_l = 10.0
high_switch_l = 90.0
)";

TEST(SimulatedDriver, IsRegistered) {
    auto d = createDriver("simulated");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->name(), "simulated");
    const auto names = driverNames();
    EXPECT_NE(std::find(names.begin(), names.end(), "simulated"), names.end());
}

TEST(SimulatedDriver, ParamErrorsNameTheKey) {
    // Without a plant (truST's `params = {}`) the driver takes no params at all.
    EXPECT_EQ(initError("cycle_ms = 10"),
              "io.params.cycle_ms: unknown key for the simulated driver without a plant (give plant = \"<name>\" for a "
              "plant model; known plants: filling_line, tank, conveyor)");
    EXPECT_EQ(initError("plant = 3"),
              "io.params.plant: expected a string (known plants: filling_line, tank, conveyor)");
    EXPECT_EQ(initError(R"(plant = "boiler")"),
              "io.params.plant: unknown plant 'boiler' (known: filling_line, tank, conveyor)");
    EXPECT_EQ(initError("plant = \"filling_line\"\ntank_capacity_l = -1.0"),
              "io.params.tank_capacity_l: expected a positive number");
    EXPECT_EQ(initError("plant = \"filling_line\"\ntank_capacity_l = \"big\""),
              "io.params.tank_capacity_l: expected a positive number");
    EXPECT_EQ(initError("plant = \"tank\"\ncycle_ms = 0"), "io.params.cycle_ms: expected a positive number");
    EXPECT_EQ(initError("plant = \"tank\"\ntank_capacity_l = 10.0\ntank_initial_l = 11.0"),
              "io.params.tank_initial_l: exceeds tank_capacity_l (10)");
    EXPECT_EQ(initError("plant = \"conveyor\"\neyes_mm = []"),
              "io.params.eyes_mm: expected an array of 1..8 positive numbers");
    EXPECT_EQ(initError("plant = \"filling_line\"\nauto_start = 1"), "io.params.auto_start: expected true or false");
    EXPECT_EQ(initError("plant = \"filling_line\"\neye_filler_mm = 2000"),
              "io.params.eye_filler_mm: must lie before eye_exit_mm (1500)");
    EXPECT_EQ(initError("plant = \"conveyor\"\nbottle_spacing_mm = 50"),
              "io.params.bottle_spacing_mm: must exceed bottle_diameter_mm (60)");
    const std::string unknown = initError("plant = \"tank\"\ndrain_flow = 1.0");
    EXPECT_EQ(unknown.rfind("io.params.drain_flow: unknown parameter of the tank plant (known: ", 0), 0U) << unknown;
}

TEST(SimulatedDriver, DemoParamsAreAccepted) {
    Rig rig(R"(
plant = "filling_line"
cycle_ms = 10
tank_capacity_l = 200.0
tank_initial_l = 80.0
pump_inflow_l_s = 4.0
fill_flow_l_s = 0.25
level_full_scale = 27648
bottle_spacing_mm = 150
belt_speed_mm_s = 200
eye_filler_mm = 600
eye_exit_mm = 1500
)");
    ASSERT_TRUE(rig.ok);
    const auto ranges = rig.driver->ownedRanges();
    ASSERT_EQ(ranges.size(), 2U);
    EXPECT_EQ(ranges[0].area, Area::Input);
    EXPECT_EQ(ranges[0].count, 4U);
    EXPECT_EQ(ranges[1].area, Area::Output);
    EXPECT_EQ(ranges[1].count, 4U);
    EXPECT_EQ(rig.driver->health().health, Health::Ok);
}

TEST(TankPlant, LevelRisesAtThePumpFlowAndFallsAtTheDrainFlow) {
    Rig rig(kTank);
    rig.cycle();
    EXPECT_EQ(rig.iw1(), std::lround(20.0 / 100.0 * 27648));
    rig.setQ(0, true);
    rig.cycle(); // the pump command takes effect from this cycle on
    rig.run(10.0);
    EXPECT_NEAR(rig.quantity("tank_l"), 20.0 + 2.0 * 10.0, 1e-9);
    EXPECT_EQ(rig.iw1(), std::lround(40.0 / 100.0 * 27648));

    rig.setQ(0, false);
    rig.setQ(1, true);
    rig.cycle();
    rig.run(20.0);
    EXPECT_NEAR(rig.quantity("tank_l"), 40.0 - 0.5 * 20.0 + 2.0 * 0.01, 1e-9);
    EXPECT_NEAR(rig.quantity("drained_l"), 0.5 * 20.0, 1e-9);
}

TEST(TankPlant, SwitchesTripAtTheirVolumes) {
    Rig rig(kTank);
    rig.cycle();
    EXPECT_TRUE(rig.ix(1)); // 20 l covers the low probe at 10 l
    EXPECT_FALSE(rig.ix(0));
    rig.setQ(1, true);
    rig.cycle();
    rig.run(19.0); // 20 - 0.5 * 19.01 l: still covered
    EXPECT_TRUE(rig.ix(1));
    rig.run(2.0); // 20 - 0.5 * 21.01 < 10 l
    EXPECT_FALSE(rig.ix(1));
    rig.setQ(1, false);
    rig.setQ(0, true);
    rig.cycle();
    rig.run(46.0); // ~ 9.5 + 92 l: capped at the capacity, the rest overflows
    EXPECT_TRUE(rig.ix(0));
    EXPECT_NEAR(rig.quantity("tank_l"), 100.0, 1e-9);
    EXPECT_GT(rig.quantity("overflow_l"), 0.0);
    EXPECT_EQ(rig.iw1(), 27648);
}

TEST(TankPlant, SafeStateStopsThePumpUntilReleased) {
    Rig rig(kTank);
    rig.setQ(0, true);
    rig.cycle();
    rig.run(1.0);
    const double before = rig.quantity("tank_l");
    EXPECT_GT(before, 20.0);

    const std::vector<std::uint8_t> safe(8, 0); // pump off
    rig.driver->setSafeImage(safe);             // the safe image latched is the one configured
    rig.driver->applySafeState(safe);
    rig.run(5.0); // the program keeps commanding the pump
    EXPECT_DOUBLE_EQ(rig.quantity("tank_l"), before);

    rig.driver->releaseSafeState();
    rig.cycle();
    rig.run(1.0);
    EXPECT_NEAR(rig.quantity("tank_l"), before + 2.0, 1e-9);
}

TEST(TankPlant, AdvancesByTheElapsedCycleTime) {
    Rig fine(kTank);
    Rig coarse(kTank);
    for (Rig* r : {&fine, &coarse}) {
        r->setQ(0, true);
        r->cycle();
    }
    fine.run(3.0, 1 * kMs);
    coarse.cycle(3'000 * kMs); // one late cycle: the plant catches up in sub-steps
    EXPECT_NEAR(fine.quantity("tank_l"), 20.0 + 6.0, 1e-9);
    EXPECT_NEAR(coarse.quantity("tank_l"), 20.0 + 6.0, 1e-9);
    EXPECT_EQ(fine.iw1(), coarse.iw1());
}

constexpr std::string_view kBelt = R"(
plant = "conveyor"
belt_speed_mm_s = 200
bottle_spacing_mm = 150
bottle_diameter_mm = 60
eyes_mm = [500, 1200]
)";

TEST(ConveyorPlant, BottleReachesTheEyeAfterDistanceOverSpeed) {
    Rig rig(kBelt);
    rig.cycle();
    rig.run(5.0);
    EXPECT_FALSE(rig.ix(0)) << "a stopped belt moves nothing";
    rig.setQ(0, true);
    rig.cycle(); // motor on from here
    // The first bottle stands at 0 mm; its edge reaches the eye at 500 - 30 mm.
    const double expectedS = (500.0 - 30.0) / 200.0;
    double elapsedS = 0.0;
    while (!rig.ix(0) && elapsedS < 10.0) {
        rig.cycle(kMs);
        elapsedS += 0.001;
    }
    EXPECT_NEAR(elapsedS, expectedS, 0.0015);
    // It clears the eye a diameter later, the second eye sees it after (1200 - 500) / 200 s.
    rig.run(60.0 / 200.0 + 0.002, kMs);
    EXPECT_FALSE(rig.ix(0));
    EXPECT_FALSE(rig.ix(1));
    rig.run(1200.0 / 200.0 - expectedS - 0.305 + 0.004, kMs);
    EXPECT_TRUE(rig.ix(1));
}

TEST(ConveyorPlant, BottlesArriveAtTheConfiguredSpacing) {
    Rig rig(kBelt);
    rig.setQ(0, true);
    rig.cycle();
    int rising = 0;
    bool last = rig.ix(0);
    rig.run(0.0);
    for (int i = 0; i < 30'000; ++i) { // 30 s in 1 ms steps
        rig.cycle(kMs);
        rising += rig.ix(0) && !last ? 1 : 0;
        last = rig.ix(0);
    }
    // 30 s * 200 mm/s = 6000 mm of belt; the first bottle needs 470 mm, then one per 150 mm.
    EXPECT_EQ(rising, 1 + static_cast<int>((6000.0 - 470.0) / 150.0));
    // Bottles fall off past the last eye + one spacing (1350 mm).
    EXPECT_EQ(rig.quantity("bottles_out"), 1 + std::floor((6000.0 - 1350.0) / 150.0));
    EXPECT_EQ(static_cast<double>(rig.iw1()), rig.quantity("bottles_out"));
}

TEST(ConveyorPlant, EqualTimeStepsGiveIdenticalRuns) {
    Rig a(kBelt);
    Rig b(kBelt);
    for (int i = 0; i < 5000; ++i) {
        const bool motor = (i / 700) % 2 == 0;
        a.setQ(0, motor);
        b.setQ(0, motor);
        a.cycle(7 * kMs);
        b.cycle(7 * kMs);
        ASSERT_EQ(a.inputs, b.inputs) << "cycle " << i;
    }
}

constexpr std::string_view kLine = R"(
plant = "filling_line"
tank_capacity_l = 200.0
tank_initial_l = 80.0
pump_inflow_l_s = 4.0
fill_flow_l_s = 0.25
level_full_scale = 27648
bottle_spacing_mm = 150
belt_speed_mm_s = 200
eye_filler_mm = 600
eye_exit_mm = 1500
)";

TEST(FillingLinePlant, OperatorClosesTheCircuitsAndPressesStartOnce) {
    Rig rig(kLine);
    rig.cycle();
    EXPECT_TRUE(rig.ix(1)) << "stop button NC";
    EXPECT_TRUE(rig.ix(2)) << "E-stop circuit closed";
    EXPECT_FALSE(rig.ix(3));
    int startCycles = 0;
    for (int i = 0; i < 500; ++i) {
        rig.cycle();
        startCycles += rig.ix(0) ? 1 : 0;
    }
    EXPECT_EQ(startCycles, 20); // 200 ms of 10 ms cycles
}

TEST(FillingLinePlant, ValveFillsTheBottleUnderTheNozzleFromTheTank) {
    Rig rig(kLine);
    rig.setQ(2, true); // belt on until a bottle is under the nozzle
    rig.cycle();
    double t = 0.0;
    while (!rig.ix(4) && t < 10.0) {
        rig.cycle();
        t += 0.01;
    }
    EXPECT_NEAR(t, (600.0 - 30.0) / 200.0, 0.011);
    rig.setQ(2, false);
    rig.setQ(1, true);
    rig.cycle();
    rig.run(2.5);
    rig.setQ(1, false);
    rig.cycle();
    EXPECT_NEAR(rig.quantity("bottle_at_filler_l"), 0.25 * 2.51, 1e-9);
    EXPECT_NEAR(rig.quantity("tank_l"), 80.0 - 0.25 * 2.51, 1e-9);
    EXPECT_EQ(rig.quantity("spilled_l"), 0.0);
    EXPECT_LT(rig.iw1(), std::lround(80.0 / 200.0 * 27648));

    // Away from the nozzle the valve spills.
    rig.setQ(2, true);
    rig.run(0.5);
    rig.setQ(2, false);
    rig.setQ(1, true);
    rig.cycle();
    rig.run(1.0);
    EXPECT_NEAR(rig.quantity("spilled_l"), 0.25 * 1.0, 0.25 * 0.011);
}

TEST(FillingLinePlant, PumpAndSafeState) {
    Rig rig(kLine);
    rig.setQ(0, true);
    rig.cycle();
    rig.run(10.0);
    EXPECT_NEAR(rig.quantity("tank_l"), 80.0 + 40.0, 1e-9);
    std::vector<std::uint8_t> safe(8, 0);
    safe[0] = 1U << 3;              // alarm lamp on, everything else off
    rig.driver->setSafeImage(safe); // the safe image latched is the one configured
    rig.driver->applySafeState(safe);
    rig.run(10.0);
    EXPECT_NEAR(rig.quantity("tank_l"), 80.0 + 40.0, 1e-9);
    EXPECT_EQ(rig.quantity("alarm_lamp"), 1.0);
}

} // namespace
} // namespace takt::io
