// Params reading and the tank and belt models the plants are built from.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "plant.h"

namespace takt::io::plants {

PlantParams::PlantParams(const toml::table& table, std::string keyPrefix)
    : table_(table), prefix_(std::move(keyPrefix)) {}

std::string PlantParams::errorAt(std::string_view key, std::string_view message) const {
    return fmt::format("{}.{}: {}", prefix_, key, message);
}

bool PlantParams::has(std::string_view key) const {
    return table_.contains(key);
}

bool PlantParams::number(std::string_view key, double fallback, bool allowZero, double& out, std::string& error) {
    known_.emplace_back(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) {
        out = fallback;
        return true;
    }
    const std::optional<double> v = node->is_number() ? node->value<double>() : std::nullopt;
    if (!v || !std::isfinite(*v) || *v < 0.0 || (!allowZero && *v == 0.0)) {
        error = errorAt(key, allowZero ? "expected a non-negative number" : "expected a positive number");
        return false;
    }
    out = *v;
    return true;
}

bool PlantParams::positive(std::string_view key, double fallback, double& out, std::string& error) {
    return number(key, fallback, false, out, error);
}

bool PlantParams::nonNegative(std::string_view key, double fallback, double& out, std::string& error) {
    return number(key, fallback, true, out, error);
}

bool PlantParams::boolean(std::string_view key, bool fallback, bool& out, std::string& error) {
    known_.emplace_back(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) {
        out = fallback;
        return true;
    }
    if (!node->is_boolean()) {
        error = errorAt(key, "expected true or false");
        return false;
    }
    out = node->value_or(fallback);
    return true;
}

bool PlantParams::positiveList(std::string_view key, const std::vector<double>& fallback, std::size_t maxCount,
                               std::vector<double>& out, std::string& error) {
    known_.emplace_back(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) {
        out = fallback;
        return true;
    }
    const toml::array* arr = node->as_array();
    const std::string message = fmt::format("expected an array of 1..{} positive numbers", maxCount);
    if (arr == nullptr || arr->empty() || arr->size() > maxCount) {
        error = errorAt(key, message);
        return false;
    }
    out.clear();
    for (const toml::node& item : *arr) {
        const std::optional<double> v = item.is_number() ? item.value<double>() : std::nullopt;
        if (!v || !std::isfinite(*v) || *v <= 0.0) {
            error = errorAt(key, message);
            return false;
        }
        out.push_back(*v);
    }
    return true;
}

bool PlantParams::rejectUnknown(std::string_view plantName, std::string& error) const {
    for (const auto& [key, node] : table_) {
        if (std::find(known_.begin(), known_.end(), key.str()) != known_.end()) {
            continue;
        }
        std::string list;
        for (const std::string& k : known_) {
            list += list.empty() ? k : ", " + k;
        }
        error = errorAt(key.str(), fmt::format("unknown parameter of the {} plant (known: {})", plantName, list));
        return false;
    }
    return true;
}

std::unique_ptr<Plant> makePlant(std::string_view name) {
    if (name == "filling_line") {
        return makeFillingLine();
    }
    if (name == "tank") {
        return makeTank();
    }
    if (name == "conveyor") {
        return makeConveyor();
    }
    return nullptr;
}

std::string_view plantNames() {
    return "filling_line, tank, conveyor";
}

void putWord(std::span<std::uint8_t> bytes, std::uint32_t byte, std::uint16_t value) noexcept {
    if (static_cast<std::size_t>(byte) + sizeof value <= bytes.size()) {
        std::memcpy(bytes.data() + byte, &value, sizeof value);
    }
}

bool TankModel::configure(PlantParams& params, std::string& error) {
    double initial = 0.0;
    bool lowSet = params.has("low_probe_l");
    bool highSet = params.has("high_switch_l");
    if (!params.positive("tank_capacity_l", capacityL, capacityL, error) ||
        !params.nonNegative("tank_initial_l", capacityL * 0.4, initial, error) ||
        !params.nonNegative("pump_inflow_l_s", pumpInflowLs, pumpInflowLs, error) ||
        !params.positive("level_full_scale", levelFullScale, levelFullScale, error) ||
        !params.nonNegative("low_probe_l", capacityL * 0.1, lowProbeL, error) ||
        !params.positive("high_switch_l", capacityL * 0.95, highSwitchL, error)) {
        return false;
    }
    if (initial > capacityL) {
        error = params.errorAt("tank_initial_l", fmt::format("exceeds tank_capacity_l ({})", capacityL));
        return false;
    }
    if (levelFullScale > 32767.0) {
        error = params.errorAt("level_full_scale", "expected at most 32767 (the level is an INT)");
        return false;
    }
    if (lowSet && lowProbeL > capacityL) {
        error = params.errorAt("low_probe_l", fmt::format("exceeds tank_capacity_l ({})", capacityL));
        return false;
    }
    if (highSet && (highSwitchL > capacityL || highSwitchL <= lowProbeL)) {
        error = params.errorAt("high_switch_l", "expected a volume above low_probe_l and at most tank_capacity_l");
        return false;
    }
    volumeL = initial;
    return true;
}

void TankModel::pump(double dtS) noexcept {
    volumeL += pumpInflowLs * dtS;
    if (volumeL > capacityL) {
        overflowL += volumeL - capacityL;
        volumeL = capacityL;
    }
}

double TankModel::draw(double litres) noexcept {
    const double taken = std::min(litres, volumeL);
    volumeL -= taken;
    return taken;
}

std::uint16_t TankModel::levelRaw() const noexcept {
    const double raw = std::round(volumeL / capacityL * levelFullScale);
    return static_cast<std::uint16_t>(std::clamp(raw, 0.0, 32767.0));
}

bool BeltModel::configure(PlantParams& params, std::string& error) {
    if (!params.positive("belt_speed_mm_s", speedMmS, speedMmS, error) ||
        !params.positive("bottle_spacing_mm", spacingMm, spacingMm, error) ||
        !params.positive("bottle_diameter_mm", diameterMm, diameterMm, error)) {
        return false;
    }
    if (spacingMm <= diameterMm) {
        // Touching bottles would keep every eye blocked: no edge to count.
        error = params.errorAt("bottle_spacing_mm", fmt::format("must exceed bottle_diameter_mm ({})", diameterMm));
        return false;
    }
    return true;
}

void BeltModel::reserve() {
    bottles.clear();
    bottles.reserve(static_cast<std::size_t>(lengthMm / spacingMm) + 4);
    bottles.push_back(Bottle{});
    travelSinceFeedMm = 0.0;
}

void BeltModel::run(double dtS) noexcept {
    const double d = speedMmS * dtS;
    for (Bottle& b : bottles) {
        b.positionMm += d;
    }
    travelSinceFeedMm += d;
    while (travelSinceFeedMm >= spacingMm && bottles.size() < bottles.capacity()) {
        travelSinceFeedMm -= spacingMm;
        bottles.push_back(Bottle{travelSinceFeedMm, 0.0});
    }
    std::size_t gone = 0;
    while (gone < bottles.size() && bottles[gone].positionMm > lengthMm) {
        ++bottlesOut;
        filledOut += bottles[gone].contentL > 0.0 ? 1 : 0;
        litresOut += bottles[gone].contentL;
        ++gone;
    }
    // Within the reserved capacity: moves elements, never allocates.
    bottles.erase(bottles.begin(), bottles.begin() + static_cast<std::ptrdiff_t>(gone));
}

bool BeltModel::eye(double atMm) const noexcept {
    return std::any_of(bottles.begin(), bottles.end(),
                       [&](const Bottle& b) { return std::abs(b.positionMm - atMm) <= diameterMm / 2.0; });
}

const Bottle* BeltModel::bottleAt(double atMm) const noexcept {
    for (const Bottle& b : bottles) {
        if (std::abs(b.positionMm - atMm) <= diameterMm / 2.0) {
            return &b;
        }
    }
    return nullptr;
}

Bottle* BeltModel::bottleAt(double atMm) noexcept {
    return const_cast<Bottle*>(std::as_const(*this).bottleAt(atMm));
}

} // namespace takt::io::plants
