// The `conveyor` plant: a belt loaded with bottles at a fixed spacing and up to eight
// photo-eyes along it.
//
// Wiring:
//   %IX0.n photo-eye n of eyes_mm (n = 0..7)      %QX0.0 belt motor
//   %IW1   bottles that left the belt (UINT, wraps; bytes 2..3, word addressing)
#include <algorithm>

#include <fmt/format.h>

#include "plant.h"

namespace takt::io::plants {
namespace {

constexpr std::size_t kMaxEyes = 8;

class Conveyor final : public Plant {
public:
    bool configure(PlantParams& params, std::string& error) override {
        if (!belt_.configure(params, error) ||
            !params.positiveList("eyes_mm", {500.0, 1000.0}, kMaxEyes, eyes_, error)) {
            return false;
        }
        double last = 0.0;
        for (const double e : eyes_) {
            last = std::max(last, e);
        }
        double length = 0.0;
        if (!params.positive("belt_length_mm", last + belt_.spacingMm, length, error)) {
            return false;
        }
        if (length <= last + belt_.diameterMm / 2.0) {
            error = params.errorAt(
                "belt_length_mm", fmt::format("the belt must extend past the last eye ({} mm) by half a bottle", last));
            return false;
        }
        belt_.lengthMm = length;
        belt_.reserve();
        return true;
    }

    std::uint32_t inputBytes() const override { return 4; }
    std::uint32_t outputBytes() const override { return 1; }

    void advance(double dtS, std::span<const std::uint8_t> outputs) noexcept override {
        if (bitOf(outputs, 0, 0)) {
            belt_.run(dtS);
        }
    }

    void sense(std::span<std::uint8_t> inputs) const noexcept override {
        for (std::size_t i = 0; i < kMaxEyes; ++i) {
            setBit(inputs, 0, static_cast<unsigned>(i), i < eyes_.size() && belt_.eye(eyes_[i]));
        }
        putWord(inputs, 2, static_cast<std::uint16_t>(belt_.bottlesOut & 0xFFFFU));
    }

    std::optional<double> quantity(std::string_view name) const override {
        if (name == "bottles_out") {
            return static_cast<double>(belt_.bottlesOut);
        }
        if (name == "bottles_on_belt") {
            return static_cast<double>(belt_.bottles.size());
        }
        return std::nullopt;
    }

private:
    BeltModel belt_;
    std::vector<double> eyes_;
};

} // namespace

std::unique_ptr<Plant> makeConveyor() {
    return std::make_unique<Conveyor>();
}

} // namespace takt::io::plants
