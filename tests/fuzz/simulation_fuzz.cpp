// libFuzzer target for simulation.toml: the loader and the script it gives, run by the simulated
// driver without a plant. Whatever the bytes: no crash, no exception; a script exactly when no
// diagnostic is an error; couplings read %Q and write %I; a few cycles over a small image (the
// script's addresses may lie far beyond it) stay inside every buffer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "takt/io/driver.h"
#include "takt/io/simulation.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (bool byteMode : {false, true}) {
        takt::io::SimulationResult r = takt::io::parseSimulation(text, "simulation.toml", byteMode);
        bool error = false;
        for (const takt::engine::ConfigDiagnostic& d : r.diagnostics) {
            error = error || d.severity == takt::engine::ConfigDiagnostic::Severity::Error;
        }
        if (error == r.script.has_value()) {
            std::abort();
        }
        if (!r.script) {
            continue;
        }
        r.script->enabled = true;
        takt::io::DriverSpec spec;
        spec.name = "simulated";
        spec.simulation = std::make_shared<const takt::io::SimulationScript>(std::move(*r.script));
        auto driver = takt::io::createDriver("simulated");
        std::string why;
        if (!driver->init(spec, why)) {
            std::abort();
        }
        std::vector<std::uint8_t> in(4, 0), out(4, 0xA5), mem(4, 0);
        for (std::int64_t ms = 0; ms < 400; ms += 50) {
            const takt::io::ImageView v{in, out, mem, ms * 1'000'000, 50'000'000};
            driver->readInputs(v);
            out[0] = static_cast<std::uint8_t>(out[0] + 1);
            driver->writeOutputs(v);
        }
        (void)driver->health();
    }
    return 0;
}
