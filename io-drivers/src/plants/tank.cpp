// The `tank` plant: a tank with an inlet pump, a drain valve, a level transmitter, a high
// switch and a low probe.
//
// Wiring:
//   %IX0.0 high switch          %QX0.0 inlet pump (pump_inflow_l_s)
//   %IX0.1 low probe covered    %QX0.1 drain valve (drain_flow_l_s)
//   %IW1   level, 0..level_full_scale (bytes 2..3; word addressing)
#include "plant.h"

namespace takt::io::plants {
namespace {

class Tank final : public Plant {
public:
    bool configure(PlantParams& params, std::string& error) override {
        return tank_.configure(params, error) && params.nonNegative("drain_flow_l_s", drainLs_, drainLs_, error);
    }

    std::uint32_t inputBytes() const override { return 4; }
    std::uint32_t outputBytes() const override { return 1; }

    void advance(double dtS, std::span<const std::uint8_t> outputs) noexcept override {
        if (bitOf(outputs, 0, 0)) {
            tank_.pump(dtS);
        }
        if (bitOf(outputs, 0, 1)) {
            drainedL_ += tank_.draw(drainLs_ * dtS);
        }
    }

    void sense(std::span<std::uint8_t> inputs) const noexcept override {
        setBit(inputs, 0, 0, tank_.high());
        setBit(inputs, 0, 1, tank_.notLow());
        putWord(inputs, 2, tank_.levelRaw());
    }

    std::optional<double> quantity(std::string_view name) const override {
        if (name == "tank_l") {
            return tank_.volumeL;
        }
        if (name == "overflow_l") {
            return tank_.overflowL;
        }
        if (name == "drained_l") {
            return drainedL_;
        }
        return std::nullopt;
    }

private:
    TankModel tank_;
    double drainLs_ = 1.0;
    double drainedL_ = 0.0;
};

} // namespace

std::unique_ptr<Plant> makeTank() {
    return std::make_unique<Tank>();
}

} // namespace takt::io::plants
