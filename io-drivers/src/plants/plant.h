#pragma once
// Plant models of the `simulated` driver. A plant owns %I bytes 0..inputBytes() and %Q bytes
// 0..outputBytes(); the driver hands it the latched outputs and the elapsed time, the plant
// integrates its physics and writes its sensors. Models are plain double arithmetic with no
// randomness, so equal time steps give bit-identical runs.
//
// Nothing here allocates after configure(): advance() and sense() run on the scan thread.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

namespace takt::io::plants {

// Reads one plant's params table. Every getter marks its key as known; unknownKey() then names
// the first key no getter asked for. Errors name the key: "io.params.belt_speed_mm_s: expected a
// positive number".
class PlantParams {
public:
    PlantParams(const toml::table& table, std::string keyPrefix);

    bool positive(std::string_view key, double fallback, double& out, std::string& error);
    bool nonNegative(std::string_view key, double fallback, double& out, std::string& error);
    bool boolean(std::string_view key, bool fallback, bool& out, std::string& error);
    // A non-empty array of positive numbers of at most maxCount entries.
    bool positiveList(std::string_view key, const std::vector<double>& fallback, std::size_t maxCount,
                      std::vector<double>& out, std::string& error);
    [[nodiscard]] bool has(std::string_view key) const;
    // Marks a key read elsewhere as known.
    void accept(std::string_view key) { known_.emplace_back(key); }

    // "io.params.<key>: <message>".
    [[nodiscard]] std::string errorAt(std::string_view key, std::string_view message) const;
    // False with `error` when the table holds a key no getter asked for.
    bool rejectUnknown(std::string_view plantName, std::string& error) const;

private:
    bool number(std::string_view key, double fallback, bool allowZero, double& out, std::string& error);

    const toml::table& table_;
    std::string prefix_;
    std::vector<std::string> known_;
};

class Plant {
public:
    virtual ~Plant() = default;
    // Reads the plant's own params (the driver has already read `plant` and `cycle_ms`).
    virtual bool configure(PlantParams& params, std::string& error) = 0;
    [[nodiscard]] virtual std::uint32_t inputBytes() const = 0;
    [[nodiscard]] virtual std::uint32_t outputBytes() const = 0;
    // Integrates `dtS` seconds with the actuators in `outputs` (outputBytes() bytes).
    virtual void advance(double dtS, std::span<const std::uint8_t> outputs) noexcept = 0;
    // Writes the sensors into `inputs` (inputBytes() bytes).
    virtual void sense(std::span<std::uint8_t> inputs) const noexcept = 0;
    // A physical quantity by name ("tank_l", "bottles_out", ...) for status displays and
    // tests; nullopt for a name the plant does not have.
    [[nodiscard]] virtual std::optional<double> quantity(std::string_view name) const = 0;
};

// "filling_line", "tank", "conveyor"; nullptr for an unknown name.
[[nodiscard]] std::unique_ptr<Plant> makePlant(std::string_view name);
[[nodiscard]] std::string_view plantNames(); // "filling_line, tank, conveyor"
// One per plant file.
[[nodiscard]] std::unique_ptr<Plant> makeFillingLine();
[[nodiscard]] std::unique_ptr<Plant> makeTank();
[[nodiscard]] std::unique_ptr<Plant> makeConveyor();

// Shared helpers for the fixed wiring of the plants.
[[nodiscard]] inline bool bitOf(std::span<const std::uint8_t> bytes, std::uint32_t byte, unsigned bit) noexcept {
    return byte < bytes.size() && ((bytes[byte] >> bit) & 1U) != 0;
}
inline void setBit(std::span<std::uint8_t> bytes, std::uint32_t byte, unsigned bit, bool on) noexcept {
    if (byte < bytes.size()) {
        bytes[byte] = static_cast<std::uint8_t>(on ? (bytes[byte] | (1U << bit)) : (bytes[byte] & ~(1U << bit)));
    }
}
// A 16-bit word in host byte order, the order the engine copies INT/UINT variables in.
void putWord(std::span<std::uint8_t> bytes, std::uint32_t byte, std::uint16_t value) noexcept;

// A buffer tank: volume in litres, an inlet pump, a level transmitter, a high switch and a low
// probe. Shared by the `tank` and `filling_line` plants.
struct TankModel {
    double capacityL = 200.0;
    double volumeL = 80.0;
    double pumpInflowLs = 4.0;
    double levelFullScale = 27648.0; // raw value at 100 %
    double lowProbeL = 20.0;         // the probe is covered at or above this volume
    double highSwitchL = 190.0;      // the overfill switch trips at or above this volume
    double overflowL = 0.0;          // pumped while full (lost over the weir)

    // Reads tank_capacity_l, tank_initial_l, pump_inflow_l_s, level_full_scale, low_probe_l,
    // high_switch_l.
    bool configure(PlantParams& params, std::string& error);
    void pump(double dtS) noexcept;
    // Takes up to `litres` out of the tank; returns what was actually there.
    double draw(double litres) noexcept;
    [[nodiscard]] std::uint16_t levelRaw() const noexcept;
    [[nodiscard]] bool high() const noexcept { return volumeL >= highSwitchL; }
    [[nodiscard]] bool notLow() const noexcept { return volumeL >= lowProbeL; }
};

struct Bottle {
    double positionMm = 0.0; // centre, from the infeed end of the belt
    double contentL = 0.0;
};

// A belt that an infeed keeps loaded with bottles at a fixed spacing: whenever the belt has
// moved one spacing, a new bottle stands at position 0. Bottles fall off past lengthMm.
struct BeltModel {
    double speedMmS = 200.0;
    double spacingMm = 150.0;
    double diameterMm = 60.0;
    double lengthMm = 1650.0;
    double travelSinceFeedMm = 0.0;
    std::vector<Bottle> bottles; // oldest (furthest) first; capacity reserved in configure()
    std::uint64_t bottlesOut = 0;
    std::uint64_t filledOut = 0; // bottles that left with some content
    double litresOut = 0.0;

    // Reads belt_speed_mm_s, bottle_spacing_mm, bottle_diameter_mm; lengthMm is set by the
    // plant (it depends on where its eyes are) before reserve().
    bool configure(PlantParams& params, std::string& error);
    void reserve();
    void run(double dtS) noexcept;
    // A photo-eye at `atMm` is blocked while a bottle body covers it.
    [[nodiscard]] bool eye(double atMm) const noexcept;
    [[nodiscard]] Bottle* bottleAt(double atMm) noexcept;
    [[nodiscard]] const Bottle* bottleAt(double atMm) const noexcept;
};

} // namespace takt::io::plants
