#pragma once
// What the `simulated` driver's plant model is doing behind the process image, for the status
// line of `takt run` and for tests that check the physics.
#include <optional>
#include <string_view>

#include "takt/io/driver.h"

namespace takt::io {

// A physical quantity of the plant, by name. filling_line: time_s, tank_l, overflow_l,
// spilled_l, valve_open_s, bottles_out, filled_out, litres_out, bottle_at_filler_l,
// panel_count, alarm_lamp. tank: tank_l, overflow_l, drained_l. conveyor: bottles_out,
// bottles_on_belt. nullopt when `driver` is not an initialised `simulated` driver or its plant
// has no such quantity. The scan thread advances the plant: read it from that thread or while
// no cycle runs.
[[nodiscard]] std::optional<double> simulatedQuantity(const Driver& driver, std::string_view name);

} // namespace takt::io
