#pragma once
// Factories of the built-in drivers; registry.cpp lists them. Each driver file defines its own.
#include <memory>

#include "takt/io/driver.h"

namespace takt::io::detail {

using DriverFactory = std::unique_ptr<Driver> (*)();

struct RegisteredDriver {
    std::string_view name;
    DriverFactory create;
};

// One line per driver in registry.cpp; a driver's source file defines its make* function.
std::unique_ptr<Driver> makeLoopback();
std::unique_ptr<Driver> makeSimulated();
std::unique_ptr<Driver> makeModbusTcp();
std::unique_ptr<Driver> makeModbusRtu();
std::unique_ptr<Driver> makeModbusServer();
std::unique_ptr<Driver> makeMqtt();
std::unique_ptr<Driver> makeGpio();

} // namespace takt::io::detail
