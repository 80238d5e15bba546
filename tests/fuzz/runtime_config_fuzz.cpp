// libFuzzer target for the runtime.toml loader. Whatever the bytes: no crash, no exception,
// and the result is consistent: a config exactly when no diagnostic is an error, and every
// diagnostic renders.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "takt/engine/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const takt::engine::RuntimeConfigResult r = takt::engine::parseRuntimeConfig(text, "runtime.toml");
    bool error = false;
    for (const takt::engine::ConfigDiagnostic& d : r.diagnostics) {
        error = error || d.severity == takt::engine::ConfigDiagnostic::Severity::Error;
        if (takt::engine::formatDiagnostic(d).empty()) {
            std::abort();
        }
    }
    if (error == r.config.has_value()) {
        std::abort();
    }
    return 0;
}
