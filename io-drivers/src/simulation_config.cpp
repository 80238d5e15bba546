// simulation.toml (truST's format, docs/io-drivers.md "simulation.toml"). Bad values are errors
// naming file, line and key; unknown keys and the truST keys takt does not implement are warnings,
// so a truST project's file loads unchanged.
#include <algorithm>
#include <exception>
#include <limits>

#include <fmt/format.h>

#include "io_config_internal.h"
#include "takt/bytecode/address.h"
#include "takt/common/toml_names.h"
#include "takt/engine/config_reader.h"
#include "takt/io/simulation.h"

namespace takt::io {

namespace {

using engine::ConfigDiagnostic;
using engine::diagnosticAt;
using engine::indexedPath;
using engine::TableReader;
using Severity = ConfigDiagnostic::Severity;

constexpr std::int64_t kMaxMs = 7 * 24 * 3'600'000LL; // a week: longer is a typo, not a scenario

// Keys a table may have; any other one is a warning (truST grows keys; a newer file still loads).
void warnUnknown(TableReader& r, std::initializer_list<std::string_view> known) {
    for (const auto& [key, value] : r.raw()) {
        const std::string_view k = key.str();
        if (std::find(known.begin(), known.end(), k) == known.end()) {
            r.warning(k, fmt::format("unknown key; ignored (known here: {})", fmt::join(known, ", ")));
            r.accept(k);
        }
    }
    r.finish();
}

// A %I or %Q address; nullopt after an error naming `key`.
std::optional<ScriptAddress> readAddress(TableReader& r, std::string_view key, bytecode::IoArea area,
                                         bool byteAddressing, bytecode::DirectAddress& parsed) {
    const std::optional<std::string> text = r.string(key, true);
    if (!text) {
        return std::nullopt;
    }
    std::string error;
    if (!bytecode::parseDirectAddress(*text, parsed, error)) {
        r.error(key, error);
        return std::nullopt;
    }
    if (parsed.area != area) {
        r.error(key, fmt::format("{} is not an {} address: a coupling reads outputs (%Q) and writes inputs (%I), a "
                                 "disturbance writes inputs",
                                 *text, area == bytecode::IoArea::Input ? "input (%I)" : "output (%Q)"));
        return std::nullopt;
    }
    const std::uint64_t first = parsed.byteOffset(byteAddressing);
    if (first + parsed.bytes() > std::numeric_limits<std::uint32_t>::max()) {
        r.error(key, fmt::format("{} lies beyond the 4 GiB process image", *text));
        return std::nullopt;
    }
    ScriptAddress a;
    a.text = *text;
    a.byte = static_cast<std::uint32_t>(first);
    a.bytes = parsed.bytes();
    a.bit = parsed.bit;
    a.isBit = parsed.isBit();
    return a;
}

// A value for `address` under `key` (absent: nullopt without an error).
bool readValue(TableReader& r, std::string_view key, const bytecode::DirectAddress& address, std::uint64_t& out) {
    const toml::node* node = r.node(key);
    if (node == nullptr) {
        return true;
    }
    std::string error;
    if (!detail::parseImageValue(*node, address, out, error)) {
        r.error(key, error);
        return false;
    }
    return true;
}

void readCoupling(TableReader& r, bool byteAddressing, std::vector<Coupling>& out) {
    bytecode::DirectAddress source;
    bytecode::DirectAddress target;
    const std::optional<ScriptAddress> from =
        readAddress(r, "source", bytecode::IoArea::Output, byteAddressing, source);
    const std::optional<ScriptAddress> to = readAddress(r, "target", bytecode::IoArea::Input, byteAddressing, target);
    Coupling c;
    c.threshold = r.number("threshold", -std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
    const std::int64_t delayMs = r.integer("delay_ms", 0, kMaxMs).value_or(0);
    c.delayNs = delayMs * 1'000'000;
    bool ok = from && to;
    if (to) {
        ok = readValue(r, "on_true", target, c.onTrue) && ok;
        ok = readValue(r, "on_false", target, c.onFalse) && ok;
    }
    if (!c.threshold) {
        for (std::string_view key : {"on_true", "on_false"}) {
            if (r.raw().contains(key)) {
                r.error(key, "needs threshold: without one the target follows the source's value");
                ok = false;
            }
        }
    }
    warnUnknown(r, {"source", "target", "threshold", "delay_ms", "on_true", "on_false"});
    if (ok) {
        c.source = *from;
        c.target = *to;
        out.push_back(std::move(c));
    }
}

void readDisturbance(TableReader& r, bool byteAddressing, std::vector<Disturbance>& out) {
    Disturbance d;
    const std::optional<std::int64_t> at = r.integer("at_ms", 0, kMaxMs, true);
    const std::string_view kind =
        r.choice<std::string_view>("kind", {{"set", "set"}, {"fault", "fault"}}).value_or("set");
    bool ok = at.has_value();
    d.atNs = at.value_or(0) * 1'000'000;
    d.fault = kind == "fault";
    if (d.fault) {
        d.message = r.string("message").value_or("simulated fault injection");
        for (std::string_view key : {"target", "value"}) {
            if (r.raw().contains(key)) {
                r.warning(key, "ignored: a fault disturbance sets no input");
                r.accept(key);
            }
        }
    } else {
        bytecode::DirectAddress target;
        const std::optional<ScriptAddress> to =
            readAddress(r, "target", bytecode::IoArea::Input, byteAddressing, target);
        if (to && r.node("value") == nullptr) {
            r.error("", "missing required key value (the value kind = \"set\" writes)");
        }
        ok = to && r.node("value") != nullptr && readValue(r, "value", target, d.value) && ok;
        if (to) {
            d.target = *to;
        }
        if (r.raw().contains("message")) {
            r.warning("message", "ignored: only a kind = \"fault\" disturbance has a message");
            r.accept("message");
        }
    }
    warnUnknown(r, {"at_ms", "kind", "target", "value", "message"});
    if (ok) {
        out.push_back(std::move(d));
    }
}

// Calls `read` for each table of the array `key`; a non-table element is an error.
template <typename Read> void eachTable(TableReader& root, std::string_view key, Read read) {
    const toml::array* list = root.array(key);
    if (list == nullptr) {
        return;
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
        const toml::node& n = *list->get(i);
        const std::string path = indexedPath(std::string(key), i);
        const auto* t = n.as_table();
        if (t == nullptr) {
            root.diagnostics().push_back(
                diagnosticAt(Severity::Error, root.file(), n.source(), path,
                             fmt::format("expected a table, found {}", common::tomlTypeName(n.type()))));
            continue;
        }
        TableReader entry(*t, path, root.file(), root.diagnostics());
        read(entry);
    }
}

SimulationResult parseDocument(std::string_view text, const std::string& file, bool byteAddressing) {
    SimulationResult result;
    std::optional<toml::table> doc = engine::parseTomlText(text, file, result.diagnostics);
    if (!doc) {
        return result;
    }
    SimulationScript script;
    script.file = file;
    TableReader root(*doc, "", file, result.diagnostics);
    std::optional<bool> enabled;
    if (const toml::table* t = root.table("simulation")) {
        TableReader sim(*t, "simulation", file, result.diagnostics);
        enabled = sim.boolean("enabled");
        if (sim.integer("seed", 0, std::numeric_limits<std::int64_t>::max())) {
            sim.warning("seed", "ignored: takt's couplings and disturbances use no random numbers");
        }
        if (auto scale = sim.integer("time_scale", 1, 1'000'000); scale && *scale != 1) {
            sim.warning("time_scale", "not supported yet: takt runs simulation.toml in real time (the harness's "
                                      "virtual clock runs faster); ignored");
        }
        warnUnknown(sim, {"enabled", "seed", "time_scale"});
    }
    eachTable(root, "couplings", [&](TableReader& r) { readCoupling(r, byteAddressing, script.couplings); });
    eachTable(root, "disturbances", [&](TableReader& r) { readDisturbance(r, byteAddressing, script.disturbances); });
    if (root.table("physics") != nullptr) {
        root.warning("physics", "not supported yet: takt has no physics simulation; [physics] and its joints are "
                                "ignored");
    }
    warnUnknown(root, {"simulation", "couplings", "disturbances", "physics"});
    std::stable_sort(script.disturbances.begin(), script.disturbances.end(),
                     [](const Disturbance& a, const Disturbance& b) { return a.atNs < b.atNs; });
    script.enabled = enabled.value_or(!script.couplings.empty() || !script.disturbances.empty());
    detail::sortDiagnostics(result.diagnostics);
    if (!detail::hasErrors(result.diagnostics)) {
        result.script = std::move(script);
    }
    return result;
}

} // namespace

SimulationResult parseSimulation(std::string_view text, const std::string& file, bool byteAddressing) {
    try {
        return parseDocument(text, file, byteAddressing);
    } catch (const std::exception& e) {
        // Only allocation failure can get here; report it instead of terminating.
        SimulationResult result;
        result.diagnostics.push_back(
            diagnosticAt(Severity::Error, file, {}, {}, fmt::format("internal error: {}", e.what())));
        return result;
    }
}

SimulationResult loadSimulation(const std::filesystem::path& file, bool byteAddressing) {
    return engine::loadConfigFile<SimulationResult>(
        file,
        [&](const std::string& text, const std::string& path) { return parseSimulation(text, path, byteAddressing); },
        [&](SimulationResult& r) {
            if (r.script) {
                r.script->file = file;
            }
        });
}

} // namespace takt::io
