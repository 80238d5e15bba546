#pragma once
// Shared pieces of the driver tests: a process image, driver construction from TOML text and
// waiting for an effect with a deadline; child processes, ports and scratch directories come
// from tests/support.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "support/net.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "takt/io/driver.h"

namespace takt::io::test {

struct Image {
    std::vector<std::uint8_t> inputs, outputs, memory;
    explicit Image(std::size_t bytes = 256) : inputs(bytes, 0), outputs(bytes, 0), memory(bytes, 0) {}
    ImageView view() { return {inputs, outputs, memory, 0, 0}; }
    std::uint16_t word(const std::vector<std::uint8_t>& area, std::size_t byte) const {
        std::uint16_t v = 0;
        std::memcpy(&v, area.data() + byte, 2);
        return v;
    }
    static void setWord(std::vector<std::uint8_t>& area, std::size_t byte, std::uint16_t v) {
        std::memcpy(area.data() + byte, &v, 2);
    }
    static bool bit(const std::vector<std::uint8_t>& area, std::size_t pos) {
        return ((area[pos / 8] >> (pos % 8)) & 1) != 0;
    }
    static void setBit(std::vector<std::uint8_t>& area, std::size_t pos, bool v) {
        if (v) {
            area[pos / 8] = static_cast<std::uint8_t>(area[pos / 8] | (1U << (pos % 8)));
        } else {
            area[pos / 8] = static_cast<std::uint8_t>(area[pos / 8] & ~(1U << (pos % 8)));
        }
    }
};

inline DriverSpec spec(std::string_view name, std::string_view paramsToml) {
    DriverSpec s;
    s.name = std::string(name);
    s.params = toml::parse(paramsToml);
    s.source = {"io.toml", "io.params"};
    return s;
}

// A driver created through the registry and initialised; fails the test on error.
inline std::unique_ptr<Driver> makeDriver(std::string_view name, std::string_view paramsToml) {
    auto d = createDriver(name);
    EXPECT_NE(d, nullptr) << name;
    std::string error;
    EXPECT_TRUE(d->init(spec(name, paramsToml), error)) << error;
    return d;
}

// The error init() gives for `paramsToml` ("" when it accepts them).
inline std::string initError(std::string_view name, std::string_view paramsToml) {
    auto d = createDriver(name);
    std::string error;
    if (d->init(spec(name, paramsToml), error)) {
        return "";
    }
    return error;
}

// Calls `step` until `done` holds or `limit` passes; the limit is a hang guard, not a timing
// assertion.
inline bool eventually(const std::function<bool()>& done, const std::function<void()>& step = {},
                       std::chrono::milliseconds limit = std::chrono::seconds(15)) {
    return takt::test::waitUntil(done, limit, std::chrono::milliseconds(5), step);
}

// One scan cycle against a driver: inputs in, outputs out.
inline void cycle(Driver& d, Image& img) {
    d.readInputs(img.view());
    d.writeOutputs(img.view());
}

using takt::test::freeTcpPort;
using takt::test::Process;
using takt::test::TempDir;
using takt::test::waitForPort;

} // namespace takt::io::test
