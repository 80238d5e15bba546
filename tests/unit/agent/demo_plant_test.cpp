// examples/demo compiled and run on the engine against the `simulated` filling_line plant with
// its own io.toml: over a few simulated minutes the line starts, keeps its tank between the
// set points and fills bottles with the recipe's amount, without an alarm.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "support/paths.h"
#include "takt/compiler/compile_program.h"
#include "takt/engine/engine.h"
#include "takt/engine/values.h"
#include "takt/engine/vm_runner.h"
#include "takt/io/driver.h"
#include "takt/io/simulated.h"

namespace takt {
namespace {

constexpr std::int64_t kCycleNs = 10'000'000;

class DemoLine {
public:
    DemoLine() {
        const std::filesystem::path dir = std::filesystem::path(TAKT_SOURCE_DIR) / "examples" / "demo";
        compiler::Project project = compiler::checkProject(compiler::ProjectInput{dir, {}, false, {}, {}});
        const compiler::CompiledProgram compiled = compiler::compileProgram(project);
        if (!compiled.ok()) {
            ADD_FAILURE() << "the demo does not compile: " << compiled.failure;
            return;
        }
        const std::shared_ptr<const bytecode::Module> module = compiled.module;
        engine_ = std::make_unique<engine::Engine>(std::make_unique<engine::VmRunner>(), clock_);
        engine::FaultReport report;
        if (!engine_->load(std::make_unique<engine::LoadedProgram>(module, ""), report)) {
            ADD_FAILURE() << report.message;
            return;
        }

        const toml::table io = toml::parse_file((dir / "io.toml").string());
        io::DriverSpec spec;
        spec.name = io["io"]["driver"].value_or(std::string());
        spec.params = *io["io"]["params"].as_table();
        spec.source = io::ParamSource{"io.toml", "io.params"};
        driver_ = io::createDriver(spec.name);
        std::string error;
        if (!driver_ || !driver_->init(spec, error) || !driver_->start(error)) {
            ADD_FAILURE() << "driver: " << error;
            return;
        }
        for (const io::ByteRange& r : driver_->ownedRanges()) {
            engine_->ensureArea(r.area == io::Area::Input ? bytecode::IoArea::Input : bytecode::IoArea::Output,
                                r.first + r.count);
        }
        ready = true;
    }

    bool cycle() {
        clock_.advance(kCycleNs);
        const io::ImageView view{engine_->area(bytecode::IoArea::Input), engine_->area(bytecode::IoArea::Output),
                                 engine_->area(bytecode::IoArea::Memory), clock_.now(), kCycleNs};
        driver_->readInputs(view);
        engine::FaultReport report;
        const bool ok = engine_->runCycle(report);
        EXPECT_TRUE(ok) << report.message;
        driver_->writeOutputs(view);
        return ok;
    }

    template <typename T> T get(std::string_view path) {
        engine::VarRef ref;
        std::string error;
        EXPECT_TRUE(engine::resolvePath(engine_->program().module(), path, ref, error)) << error;
        T v{};
        std::memcpy(&v, engine_->program().image() + ref.offset, sizeof v);
        return v;
    }

    double plant(std::string_view name) {
        const std::optional<double> q = io::simulatedQuantity(*driver_, name);
        EXPECT_TRUE(q.has_value()) << name;
        return q.value_or(-1.0);
    }

    bool ready = false;

private:
    engine::VirtualClock clock_;
    std::unique_ptr<engine::Engine> engine_;
    std::unique_ptr<io::Driver> driver_;
};

// E_FillStep values (types.st).
constexpr std::int32_t kStepRelease = 4;
constexpr std::int32_t kStepFault = 5;

TEST(DemoOnSimulatedPlant, FillsBottlesForThreeMinutes) {
    DemoLine line;
    ASSERT_TRUE(line.ready);
    int releases = 0;
    std::int32_t lastStep = 0;
    double minTank = 1e9;
    double maxTank = 0.0;
    for (int i = 0; i < 18'000; ++i) { // 180 s of 10 ms cycles
        ASSERT_TRUE(line.cycle()) << "cycle " << i;
        const auto step = line.get<std::int32_t>("Line.Step");
        ASSERT_NE(step, kStepFault) << "the line faulted at cycle " << i;
        releases += step == kStepRelease && lastStep != kStepRelease ? 1 : 0;
        lastStep = step;
        minTank = std::min(minTank, line.plant("tank_l"));
        maxTank = std::max(maxTank, line.plant("tank_l"));
    }
    EXPECT_TRUE(line.get<bool>("gLineRunning"));
    EXPECT_FALSE(line.get<bool>("gAlarmActive"));

    // One bottle takes the 150 mm spacing at 200 mm/s, 2.5 s filling and 0.4 s settling.
    EXPECT_GE(releases, 40);
    EXPECT_LE(releases, 50);
    // Filled bottles leave the belt with the recipe's amount: 2.5 s at 0.25 l/s each.
    const double filled = line.plant("filled_out");
    EXPECT_GE(filled, releases - 8); // those still between the filler and the end of the belt
    EXPECT_LE(filled, releases);
    EXPECT_NEAR(line.plant("litres_out") / filled, 0.625, 0.625 * 0.02);
    EXPECT_EQ(line.plant("spilled_l"), 0.0);
    // The tank controller kept the level between its set points (40 % .. 85 % of 200 l), give
    // or take a cycle of pumping, and the pump refilled what the bottles took.
    EXPECT_GE(minTank, 0.40 * 200.0 - 1.0);
    EXPECT_LE(maxTank, 0.85 * 200.0 + 1.0);
    // The panel shows the crate counter.
    EXPECT_EQ(line.plant("panel_count"), releases % 24);
}

TEST(DemoOnSimulatedPlant, EqualRunsAreIdentical) {
    DemoLine a;
    DemoLine b;
    ASSERT_TRUE(a.ready && b.ready);
    for (int i = 0; i < 3'000; ++i) {
        ASSERT_TRUE(a.cycle());
        ASSERT_TRUE(b.cycle());
    }
    EXPECT_EQ(a.plant("tank_l"), b.plant("tank_l"));
    EXPECT_EQ(a.plant("litres_out"), b.plant("litres_out"));
    EXPECT_EQ(a.get<std::int32_t>("Line.Step"), b.get<std::int32_t>("Line.Step"));
}

} // namespace
} // namespace takt
