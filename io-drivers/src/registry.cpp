#include "registry.h"

#include <array>

namespace takt::io {
namespace {

// The built-in drivers, in the order `takt validate` and docs list them.
constexpr std::array kDrivers{
    detail::RegisteredDriver{"loopback", &detail::makeLoopback},
    detail::RegisteredDriver{"simulated", &detail::makeSimulated},
    detail::RegisteredDriver{"modbus-tcp", &detail::makeModbusTcp},
    detail::RegisteredDriver{"modbus-rtu", &detail::makeModbusRtu},
    detail::RegisteredDriver{"modbus-server", &detail::makeModbusServer},
    detail::RegisteredDriver{"mqtt", &detail::makeMqtt},
    detail::RegisteredDriver{"gpio", &detail::makeGpio},
};

} // namespace

std::string_view healthName(Health h) noexcept {
    switch (h) {
    case Health::Ok: return "ok";
    case Health::Degraded: return "degraded";
    case Health::Faulted: return "faulted";
    }
    return "faulted";
}

std::unique_ptr<Driver> createDriver(std::string_view name) {
    for (const auto& d : kDrivers) {
        if (d.name == name) {
            return d.create();
        }
    }
    return nullptr;
}

std::vector<std::string_view> driverNames() {
    std::vector<std::string_view> names;
    for (const auto& d : kDrivers) {
        names.push_back(d.name);
    }
    return names;
}

} // namespace takt::io
