// libFuzzer target for the io.toml and board-file loaders. Whatever the bytes: no crash, no
// exception; a config exactly when no diagnostic is an error; every safe-state entry lies in
// %Q and its value fits its width; safeOutputImage() stays inside the image; every driver's
// init() reads its params (modbus-tcp/-rtu keys, maps, …) without crashing, opening nothing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "takt/io/board.h"
#include "takt/io/driver.h"
#include "takt/io/io_config.h"

namespace {

bool hasError(const std::vector<takt::engine::ConfigDiagnostic>& diagnostics) {
    for (const takt::engine::ConfigDiagnostic& d : diagnostics) {
        if (d.severity == takt::engine::ConfigDiagnostic::Severity::Error) {
            return true;
        }
    }
    return false;
}

void checkIo(const takt::io::IoConfig& io) {
    for (const takt::io::SafeValue& v : io.safeState) {
        if (v.range.area != takt::io::Area::Output || v.range.count == 0 || v.range.count > 8) {
            std::abort();
        }
        if (v.range.count < 8 && (v.value >> (8 * v.range.count)) != 0) {
            std::abort();
        }
        if (v.isBit && (v.bit > 7 || v.value > 1)) {
            std::abort();
        }
    }
    if (takt::io::safeOutputImage(io, 16).size() != 16) {
        std::abort();
    }
    for (const takt::io::DriverSpec& spec : io.drivers) {
        if (auto driver = takt::io::createDriver(spec.name)) {
            std::string error;
            if (!driver->init(spec, error) && error.empty()) {
                std::abort(); // a refusal always says why
            }
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (bool byteMode : {false, true}) {
        const takt::io::IoConfigResult r = takt::io::parseIoConfig(text, "io.toml", byteMode);
        if (hasError(r.diagnostics) == r.config.has_value()) {
            std::abort();
        }
        if (r.config) {
            checkIo(*r.config);
        }
    }
    const takt::io::BoardResult b = takt::io::parseBoard(text, "board.toml");
    if (hasError(b.diagnostics) == b.board.has_value()) {
        std::abort();
    }
    return 0;
}
