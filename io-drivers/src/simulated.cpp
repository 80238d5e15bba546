// The `simulated` driver: a plant model (plants/) in place of field I/O, so a project runs
// like a machine on any host. Params: `plant = "<name>"`, `cycle_ms` (the longest integration
// step, default 10) and the plant's own params; every unknown or bad key is an error naming it.
// Without `plant` (truST's `params = {}`) there is no model: the project's simulation.toml, when
// it has one, drives the inputs (simulation_runner.h); otherwise inputs stay 0.
//
// The plant advances at each readInputs() by the time elapsed since the previous cycle
// (ImageView::cycleStartNs, so a virtual clock gives virtual time), in equal sub-steps of at
// most cycle_ms: equal time steps give identical runs. It sees the outputs latched by the last
// writeOutputs(), or the safe outputs once applySafeState() latched them.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "driver_support.h"
#include "plants/plant.h"
#include "registry.h"
#include "simulation_runner.h"
#include "takt/io/simulated.h"
#include "takt/io/simulation.h"

namespace takt::io {
namespace {

// A scan that stalled longer than this (a debugger, a suspended host) loses the excess: the
// plant must not spend a cycle integrating minutes.
constexpr std::int64_t kMaxCatchUpNs = 10'000'000'000;

class Simulated final : public Driver {
public:
    std::string_view name() const noexcept override { return "simulated"; }

    bool init(const DriverSpec& spec, std::string& error) override {
        const std::string& prefix = spec.source.keyPrefix;
        const toml::node* plantNode = spec.params.get("plant");
        if (plantNode == nullptr) {
            return initScripted(spec, error);
        }
        const std::optional<std::string> plantName = plantNode->value<std::string>();
        if (!plantNode->is_string() || !plantName) {
            error = fmt::format("{}.plant: expected a string (known plants: {})", prefix, plants::plantNames());
            return false;
        }
        plant_ = plants::makePlant(*plantName);
        if (!plant_) {
            error = fmt::format("{}.plant: unknown plant '{}' (known: {})", prefix, *plantName, plants::plantNames());
            return false;
        }
        plants::PlantParams params(spec.params, prefix);
        double cycleMs = 10.0;
        params.accept("plant");
        if (!params.positive("cycle_ms", cycleMs, cycleMs, error) || !plant_->configure(params, error) ||
            !params.rejectUnknown(*plantName, error)) {
            plant_.reset();
            return false;
        }
        maxStepNs_ = std::max<std::int64_t>(1, std::llround(cycleMs * 1e6));
        wire_.resize(plant_->outputBytes());
        seen_.assign(plant_->outputBytes(), 0);
        sensed_.assign(plant_->inputBytes(), 0);
        plant_->sense(sensed_);
        return true;
    }

    std::vector<ByteRange> ownedRanges() const override {
        if (scripted_) {
            return script_.ranges();
        }
        if (!plant_) {
            return {};
        }
        return {{Area::Input, 0, plant_->inputBytes(), Access::Write},
                {Area::Output, 0, plant_->outputBytes(), Access::Read}};
    }

    bool start(std::string& /*error*/) override { return true; }

    void readInputs(ImageView image) noexcept override {
        if (scripted_) {
            script_.beforeCycle(image.cycleStartNs, image.inputs);
            return;
        }
        if (!plant_) {
            return; // init() failed or was never called: no plant, no inputs
        }
        wire_.read(seen_);
        const std::int64_t now = image.cycleStartNs;
        if (!synced_ || now < lastNs_) {
            lastNs_ = now; // first cycle, or the clock was set back: no time has passed
            synced_ = true;
        }
        const std::int64_t elapsed = std::min(now - lastNs_, kMaxCatchUpNs);
        lastNs_ = now;
        if (elapsed > 0) {
            const std::int64_t steps = (elapsed + maxStepNs_ - 1) / maxStepNs_;
            const double dtS = static_cast<double>(elapsed) / static_cast<double>(steps) / 1e9;
            for (std::int64_t i = 0; i < steps; ++i) {
                plant_->advance(dtS, seen_);
            }
        }
        plant_->sense(sensed_);
        std::memcpy(image.inputs.data(), sensed_.data(), std::min(sensed_.size(), image.inputs.size()));
    }

    void writeOutputs(ImageView image) noexcept override {
        wire_.write(image.outputs);
        if (scripted_) {
            // The couplings see what the latch holds: the safe values while they are applied.
            wire_.read(seen_);
            script_.afterCycle(image.cycleStartNs, seen_);
        }
    }

    void setSafeImage(std::span<const std::uint8_t> safeOutputs) override { wire_.setSafe(safeOutputs); }
    void applySafeState(std::span<const std::uint8_t> /*safeOutputs*/) noexcept override { wire_.latchSafe(); }

    void releaseSafeState() noexcept override { wire_.release(); }

    HealthStatus health() const override { return scripted_ ? script_.health() : HealthStatus{}; }

    void stop() noexcept override {}

    [[nodiscard]] const plants::Plant* plant() const { return plant_.get(); }

private:
    // No plant: no params at all (truST writes `params = {}`), and the project's simulation.toml
    // when selectIoConfig attached an enabled one.
    bool initScripted(const DriverSpec& spec, std::string& error) {
        for (const auto& [key, value] : spec.params) {
            error = fmt::format("{}.{}: unknown key for the simulated driver without a plant (give plant = \"<name>\" "
                                "for a plant model; known plants: {})",
                                spec.source.keyPrefix, key.str(), plants::plantNames());
            return false;
        }
        scripted_ = true;
        if (spec.simulation && spec.simulation->enabled) {
            script_.configure(*spec.simulation);
        }
        wire_.resize(script_.outputBytes());
        seen_.assign(script_.outputBytes(), 0);
        return true;
    }

    bool scripted_ = false;
    detail::ScriptRunner script_;
    std::unique_ptr<plants::Plant> plant_;
    std::int64_t maxStepNs_ = 10'000'000;
    std::int64_t lastNs_ = 0;
    bool synced_ = false;
    // wire_: outputs as the plant will see them (scan thread and watchdog, lock-free:
    // scan_exchange.h). seen_, sensed_: scan thread only.
    detail::OutputLatch wire_;
    std::vector<std::uint8_t> seen_;
    std::vector<std::uint8_t> sensed_;
};

} // namespace

std::optional<double> simulatedQuantity(const Driver& driver, std::string_view name) {
    const auto* sim = dynamic_cast<const Simulated*>(&driver);
    if (sim == nullptr || sim->plant() == nullptr) {
        return std::nullopt;
    }
    return sim->plant()->quantity(name);
}

std::unique_ptr<Driver> detail::makeSimulated() {
    return std::make_unique<Simulated>();
}

} // namespace takt::io
