// The `filling_line` plant: examples/demo's machine. A buffer tank fed by an inlet pump drains
// through a filling valve into the bottle under the nozzle; a belt brings empty bottles past
// the filler photo-eye to the exit photo-eye. A simulated operator closes the stop and E-stop
// circuits and presses start once, so the demo runs without a panel.
//
// Wiring (src/io_map.st of the demo, word addressing):
//   %IX0.0 start (pressed for 200 ms at start_delay_s when auto_start)   %QX0.0 inlet pump
//   %IX0.1 stop button, NC (TRUE)                                         %QX0.1 filling valve
//   %IX0.2 E-stop circuit closed (TRUE)                                   %QX0.2 conveyor motor
//   %IX0.3 alarm reset (FALSE)                                            %QX0.3 alarm lamp
//   %IX0.4 photo-eye under the nozzle                                     %QX0.4 run lamp
//   %IX0.5 photo-eye at the exit                                          %QX0.5 horn
//   %IX0.6 tank high switch                                               %QW1 bottle count (panel)
//   %IX0.7 tank low probe covered
//   %IW1   tank level, 0..level_full_scale
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "plant.h"

namespace takt::io::plants {
namespace {

constexpr double kStartPulseS = 0.2;

class FillingLine final : public Plant {
public:
    bool configure(PlantParams& params, std::string& error) override {
        if (!tank_.configure(params, error) || !params.positive("fill_flow_l_s", fillFlowLs_, fillFlowLs_, error) ||
            !belt_.configure(params, error) || !params.positive("eye_filler_mm", eyeFillerMm_, eyeFillerMm_, error) ||
            !params.positive("eye_exit_mm", eyeExitMm_, eyeExitMm_, error)) {
            return false;
        }
        double length = 0.0;
        if (!params.positive("belt_length_mm", eyeExitMm_ + belt_.spacingMm, length, error) ||
            !params.positive("bottle_volume_l", bottleVolumeL_, bottleVolumeL_, error) ||
            !params.boolean("auto_start", autoStart_, autoStart_, error) ||
            !params.nonNegative("start_delay_s", startDelayS_, startDelayS_, error)) {
            return false;
        }
        if (eyeFillerMm_ >= eyeExitMm_) {
            error = params.errorAt("eye_filler_mm", fmt::format("must lie before eye_exit_mm ({})", eyeExitMm_));
            return false;
        }
        if (length <= eyeExitMm_ + belt_.diameterMm / 2.0) {
            error = params.errorAt("belt_length_mm", "the belt must extend past eye_exit_mm by half a bottle");
            return false;
        }
        belt_.lengthMm = length;
        belt_.reserve();
        return true;
    }

    std::uint32_t inputBytes() const override { return 4; }
    std::uint32_t outputBytes() const override { return 4; }

    void advance(double dtS, std::span<const std::uint8_t> outputs) noexcept override {
        timeS_ += dtS;
        if (bitOf(outputs, 0, 0)) {
            tank_.pump(dtS);
        }
        if (bitOf(outputs, 0, 1)) {
            const double flowed = tank_.draw(fillFlowLs_ * dtS);
            valveOpenS_ += dtS;
            if (Bottle* b = belt_.bottleAt(eyeFillerMm_)) {
                const double into = std::min(flowed, bottleVolumeL_ - b->contentL);
                b->contentL += into;
                spilledL_ += flowed - into;
            } else {
                spilledL_ += flowed;
            }
        }
        if (bitOf(outputs, 0, 2)) {
            belt_.run(dtS);
        }
        std::uint16_t panel = 0;
        std::memcpy(&panel, outputs.data() + 2, sizeof panel);
        panelCount_ = panel;
        alarmLamp_ = bitOf(outputs, 0, 3);
    }

    void sense(std::span<std::uint8_t> inputs) const noexcept override {
        const bool startPressed = autoStart_ && timeS_ >= startDelayS_ && timeS_ < startDelayS_ + kStartPulseS;
        setBit(inputs, 0, 0, startPressed);
        setBit(inputs, 0, 1, true);
        setBit(inputs, 0, 2, true);
        setBit(inputs, 0, 3, false);
        setBit(inputs, 0, 4, belt_.eye(eyeFillerMm_));
        setBit(inputs, 0, 5, belt_.eye(eyeExitMm_));
        setBit(inputs, 0, 6, tank_.high());
        setBit(inputs, 0, 7, tank_.notLow());
        putWord(inputs, 2, tank_.levelRaw());
    }

    std::optional<double> quantity(std::string_view name) const override {
        if (name == "time_s") {
            return timeS_;
        }
        if (name == "tank_l") {
            return tank_.volumeL;
        }
        if (name == "overflow_l") {
            return tank_.overflowL;
        }
        if (name == "spilled_l") {
            return spilledL_;
        }
        if (name == "valve_open_s") {
            return valveOpenS_;
        }
        if (name == "bottles_out") {
            return static_cast<double>(belt_.bottlesOut);
        }
        if (name == "filled_out") {
            return static_cast<double>(belt_.filledOut);
        }
        if (name == "litres_out") {
            return belt_.litresOut;
        }
        if (name == "bottle_at_filler_l") {
            const Bottle* b = belt_.bottleAt(eyeFillerMm_);
            return b != nullptr ? b->contentL : 0.0;
        }
        if (name == "panel_count") {
            return panelCount_;
        }
        if (name == "alarm_lamp") {
            return alarmLamp_ ? 1.0 : 0.0;
        }
        return std::nullopt;
    }

private:
    TankModel tank_;
    BeltModel belt_;
    double fillFlowLs_ = 0.25;
    double eyeFillerMm_ = 600.0;
    double eyeExitMm_ = 1500.0;
    double bottleVolumeL_ = 1.0;
    bool autoStart_ = true;
    double startDelayS_ = 1.0;
    double timeS_ = 0.0;
    double spilledL_ = 0.0;
    double valveOpenS_ = 0.0;
    double panelCount_ = 0.0;
    bool alarmLamp_ = false;
};

} // namespace

std::unique_ptr<Plant> makeFillingLine() {
    return std::make_unique<FillingLine>();
}

} // namespace takt::io::plants
