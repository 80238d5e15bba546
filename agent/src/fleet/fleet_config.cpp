// fleet.toml -> FleetConfig (fleet_config.h), read with the TableReader every configuration file
// of takt uses, so a finding names file, line, column and key the same way.
#include "takt/agent/fleet_config.h"

#include <unistd.h>

#include <algorithm>
#include <exception>
#include <tuple>

#include <fmt/format.h>

#include "takt/agent/control.h"
#include "takt/agent/control_config.h"
#include "takt/engine/config_reader.h"

namespace takt::agent {

namespace {

using engine::ConfigDiagnostic;
using engine::TableReader;

constexpr std::size_t kMaxRuntimes = 10000;
constexpr std::size_t kMaxNameBytes = 64;

// An error at `key` of `r` with `code`.
void coded(TableReader& r, std::string_view key, const char* code, std::string message) {
    r.error(key, std::move(message));
    r.diagnostics().back().code = code;
}

bool validName(std::string_view name) {
    return !name.empty() && name.size() <= kMaxNameBytes && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
               c == '.';
    });
}

// Why `endpoint` is not one a control client can connect to, or empty. The runtime's own
// endpoint rules (loopback-only tcp://, tokens) are its own to enforce; a client only needs the
// address to be well-formed.
std::string endpointProblem(const std::string& endpoint) {
    const std::size_t sep = endpoint.find("://");
    const std::string scheme = sep == std::string::npos ? std::string() : endpoint.substr(0, sep);
    const std::string rest = sep == std::string::npos ? std::string() : endpoint.substr(sep + 3);
    if (scheme == "unix") {
        return rest.empty() || rest.front() != '/'
                   ? "unix:// needs an absolute socket path, e.g. unix:///run/takt/takt.sock"
                   : "";
    }
    if (scheme != "tcp" && scheme != "tls") {
        return fmt::format("\"{}\" is not an endpoint (expected unix:///path, tcp://host:port or tls://host:port)",
                           endpoint);
    }
    std::string host;
    std::uint16_t port = 0;
    if (!engine::splitHostPort(rest, host, port) || port == 0) {
        return fmt::format("\"{}\" needs host:port, e.g. {}://192.168.1.20:9001", endpoint, scheme);
    }
    return "";
}

void readRuntime(TableReader& r, FleetConfig& out) {
    FleetRuntime rt;
    const toml::source_region at = r.raw().source();
    rt.where = {at.begin.line, at.begin.column};
    if (auto name = r.string("name", true)) {
        rt.name = *name;
        if (!validName(rt.name)) {
            coded(r, "name", kFleetRuntime,
                  fmt::format("\"{}\" is not a box name (1 to {} letters, digits, '-', '_' or '.')", rt.name,
                              kMaxNameBytes));
        } else if (std::any_of(out.runtimes.begin(), out.runtimes.end(),
                               [&](const FleetRuntime& o) { return o.name == rt.name; })) {
            coded(r, "name", kFleetRuntime, fmt::format("\"{}\" names another [[runtime]] already", rt.name));
        }
    }
    if (auto endpoint = r.string("endpoint", true)) {
        rt.endpoint = *endpoint;
        if (const std::string why = endpointProblem(rt.endpoint); !why.empty()) {
            coded(r, "endpoint", kFleetRuntime, why);
        } else if (std::any_of(out.runtimes.begin(), out.runtimes.end(),
                               [&](const FleetRuntime& o) { return o.endpoint == rt.endpoint; })) {
            coded(
                r, "endpoint", kFleetRuntime,
                fmt::format("\"{}\" is the endpoint of another [[runtime]] already (one box, one entry)", rt.endpoint));
        }
    }
    if (auto token = r.string("token_file")) {
        rt.tokenFile = *token;
        rt.tokenWhere = r.position("token_file");
        if (rt.tokenFile.empty()) {
            coded(r, "token_file", kFleetRuntime, "must not be empty (leave the key out for no token)");
        }
    }
    for (const auto& [key, field] :
         {std::tuple{"ca", &rt.ca}, std::tuple{"cert", &rt.cert}, std::tuple{"key", &rt.key}}) {
        if (auto v = r.string(key)) {
            *field = *v;
            rt.tlsWhere = r.position(key);
            if (field->empty()) {
                coded(r, key, kFleetRuntime, "must not be empty (leave the key out)");
            } else if (!rt.endpoint.starts_with("tls://")) {
                coded(r, key, kFleetRuntime, fmt::format("only a tls:// endpoint takes {}", key));
            }
        }
    }
    if (rt.cert.empty() != rt.key.empty()) {
        coded(r, rt.cert.empty() ? "key" : "cert", kFleetRuntime, "cert and key go together");
    }
    if (auto t = r.integer("timeout_ms", 100, 600000)) {
        rt.timeoutMs = static_cast<int>(*t);
    }
    r.finish();
    out.runtimes.push_back(std::move(rt));
}

// waves = [["a"], ["b", "c"]]: every runtime in exactly one wave.
void readExplicitWaves(TableReader& r, const toml::array& waves, FleetConfig& out) {
    const std::string path = r.keyPath("waves");
    std::vector<int> waveOf(out.runtimes.size(), -1);
    const auto at = [&](const toml::node& n, std::string key, std::string message) {
        r.diagnostics().push_back(engine::diagnosticAt(ConfigDiagnostic::Severity::Error, r.file(), n.source(),
                                                       std::move(key), std::move(message)));
        r.diagnostics().back().code = kFleetWaves;
    };
    if (waves.empty()) {
        coded(r, "waves", kFleetWaves, "must list at least one wave");
        return;
    }
    for (std::size_t w = 0; w < waves.size(); ++w) {
        const toml::node& wave = *waves.get(w);
        const toml::array* names = wave.as_array();
        const std::string wavePath = engine::indexedPath(path, w);
        if (names == nullptr || names->empty()) {
            at(wave, wavePath, "expected a non-empty array of [[runtime]] names");
            continue;
        }
        out.waves.emplace_back();
        for (std::size_t i = 0; i < names->size(); ++i) {
            const toml::node& n = *names->get(i);
            const auto* s = n.as_string();
            const std::string key = engine::indexedPath(wavePath, i);
            if (s == nullptr) {
                at(n, key, "expected a [[runtime]] name (a string)");
                continue;
            }
            const auto it = std::find_if(out.runtimes.begin(), out.runtimes.end(),
                                         [&](const FleetRuntime& rt) { return rt.name == s->get(); });
            if (it == out.runtimes.end()) {
                at(n, key, fmt::format("no [[runtime]] is named \"{}\"", s->get()));
                continue;
            }
            const auto index = static_cast<std::size_t>(it - out.runtimes.begin());
            if (waveOf[index] >= 0) {
                at(n, key, fmt::format("\"{}\" is in wave {} already", s->get(), waveOf[index]));
                continue;
            }
            waveOf[index] = static_cast<int>(w);
            out.waves.back().push_back(index);
        }
    }
    std::string missing;
    for (std::size_t i = 0; i < out.runtimes.size(); ++i) {
        if (waveOf[i] < 0) {
            missing += (missing.empty() ? "" : ", ") + out.runtimes[i].name;
        }
    }
    if (!missing.empty()) {
        coded(r, "waves", kFleetWaves, fmt::format("every [[runtime]] goes in one wave; not in any: {}", missing));
    }
}

// [deploy]: settle_s, on_failure, and the waves (canary + wave_size, or waves).
void readDeploy(TableReader& r, FleetConfig& out) {
    if (auto s = r.integer("settle_s", 0, 3600)) {
        out.settleS = static_cast<std::uint32_t>(*s);
    }
    if (auto f = r.choice<FleetOnFailure>("on_failure",
                                          {{"stop", FleetOnFailure::Stop}, {"rollback", FleetOnFailure::Rollback}})) {
        out.onFailure = *f;
    }
    const std::size_t n = out.runtimes.size();
    const std::optional<std::int64_t> canary = r.integer("canary", 1, static_cast<std::int64_t>(kMaxRuntimes));
    const std::optional<std::int64_t> size = r.integer("wave_size", 1, static_cast<std::int64_t>(kMaxRuntimes));
    if (const toml::array* waves = r.array("waves")) {
        if (canary || size) {
            coded(r, "waves", kFleetWaves, "give either waves or canary / wave_size, not both");
            return;
        }
        readExplicitWaves(r, *waves, out);
        return;
    }
    if (n == 0) {
        return;
    }
    const std::size_t first = canary ? static_cast<std::size_t>(*canary) : 1;
    if (first > n) {
        coded(r, "canary", kFleetWaves,
              fmt::format("{} canary boxes, but the fleet has {} [[runtime]] entries", first, n));
        return;
    }
    // Without wave_size, every box after the canary goes in one wave.
    const std::size_t step = size ? static_cast<std::size_t>(*size) : n;
    out.waves.emplace_back();
    for (std::size_t i = 0; i < n; ++i) {
        if (i == first || (i > first && (i - first) % step == 0)) {
            out.waves.emplace_back();
        }
        out.waves.back().push_back(i);
    }
}

FleetConfigResult parseDocument(std::string_view text, const std::string& file) {
    FleetConfigResult result;
    std::optional<toml::table> doc = engine::parseTomlText(text, file, result.diagnostics);
    if (!doc) {
        for (ConfigDiagnostic& d : result.diagnostics) {
            d.code = kFleetSyntax;
        }
        return result;
    }
    FleetConfig config;
    config.file = file;
    TableReader root(*doc, "", file, result.diagnostics);
    const bool listed = root.forEachTable("runtime", [&](TableReader& entry) {
        if (config.runtimes.size() == kMaxRuntimes) {
            coded(entry, "", kFleetRuntime, fmt::format("a fleet has at most {} [[runtime]] entries", kMaxRuntimes));
            return;
        }
        readRuntime(entry, config);
    });
    if (!listed) {
        if (root.raw().get("runtime") == nullptr) {
            coded(root, "runtime", kFleetRuntime, "a fleet needs at least one [[runtime]] (name, endpoint)");
        }
    } else if (config.runtimes.empty()) {
        coded(root, "runtime", kFleetRuntime, "a fleet needs at least one [[runtime]] (name, endpoint)");
    }
    if (const toml::table* deploy = root.table("deploy")) {
        TableReader r(*deploy, "deploy", file, result.diagnostics);
        readDeploy(r, config);
        r.finish();
    } else if (root.raw().get("deploy") == nullptr) {
        // No [deploy]: one canary, then the rest, the defaults of readDeploy.
        toml::table empty;
        TableReader r(empty, "deploy", file, result.diagnostics);
        readDeploy(r, config);
    }
    root.finish();
    bool error = false;
    for (ConfigDiagnostic& d : result.diagnostics) {
        if (d.code.empty()) {
            d.code = kFleetKey;
        }
        error = error || d.severity == ConfigDiagnostic::Severity::Error;
    }
    if (!error) {
        result.config = std::move(config);
    }
    return result;
}

// The token files read, the TLS files found; an error per file that is not usable.
void checkFiles(FleetConfig& config, std::vector<ConfigDiagnostic>& out) {
    const std::filesystem::path base = config.file.parent_path();
    const auto refuse = [&](engine::ConfigPosition where, std::string key, std::string message) {
        ConfigDiagnostic d;
        d.file = config.file.string();
        d.line = where.line;
        d.column = where.column;
        d.key = std::move(key);
        d.message = std::move(message);
        d.code = kFleetFile;
        out.push_back(std::move(d));
    };
    for (std::size_t i = 0; i < config.runtimes.size(); ++i) {
        FleetRuntime& rt = config.runtimes[i];
        const std::string entry = engine::indexedPath("runtime", i);
        if (!rt.tokenFile.empty()) {
            rt.tokenFile = relativeTo(base, rt.tokenFile);
            std::string error;
            if (!readTokenFile(rt.tokenFile, rt.token, error)) {
                refuse(rt.tokenWhere, entry + ".token_file", std::move(error));
            }
        }
        for (const auto& [key, path] :
             {std::tuple{"ca", &rt.ca}, std::tuple{"cert", &rt.cert}, std::tuple{"key", &rt.key}}) {
            *path = relativeTo(base, *path);
            std::error_code ec;
            if (!path->empty() &&
                (!std::filesystem::is_regular_file(*path, ec) || ::access(path->c_str(), R_OK) != 0)) {
                refuse(rt.tlsWhere, fmt::format("{}.{}", entry, key),
                       fmt::format("'{}' is not a readable file", *path));
            }
        }
    }
}

} // namespace

FleetConfigResult parseFleetConfig(std::string_view text, const std::string& file) {
    try {
        return parseDocument(text, file);
    } catch (const std::exception& e) {
        // Only allocation failure can get here; report it instead of terminating.
        FleetConfigResult result;
        result.diagnostics.push_back(engine::diagnosticAt(ConfigDiagnostic::Severity::Error, file, {}, {},
                                                          fmt::format("internal error: {}", e.what())));
        result.diagnostics.back().code = kFleetSyntax;
        return result;
    }
}

FleetConfigResult loadFleetConfig(const std::filesystem::path& file) {
    FleetConfigResult result;
    std::string text;
    if (!engine::readConfigFile(file, text, result.diagnostics)) {
        result.diagnostics.back().code = kFleetSyntax;
        return result;
    }
    result = parseFleetConfig(text, file.string());
    if (result.config) {
        checkFiles(*result.config, result.diagnostics);
        if (std::any_of(result.diagnostics.begin(), result.diagnostics.end(),
                        [](const ConfigDiagnostic& d) { return d.severity == ConfigDiagnostic::Severity::Error; })) {
            result.config.reset();
        }
    }
    return result;
}

} // namespace takt::agent
