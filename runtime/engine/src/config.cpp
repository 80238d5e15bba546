// runtime.toml (CONFIG.md "runtime.toml"): the takt keys are read and checked; the keys truST
// defines that takt does not implement yet are accepted with a "not supported yet" warning so a
// truST project folder starts unchanged; anything else is an unknown key and an error.
#include <algorithm>
#include <exception>
#include <tuple>

#include <fmt/format.h>

#include "takt/common/toml_names.h"
#include "takt/engine/config.h"
#include "takt/engine/config_reader.h"

namespace takt::engine {

namespace {

using Severity = ConfigDiagnostic::Severity;

// The truST sections takt accepts but ignores, with every key truST defines in them (its
// runtime.toml schema), so a typo inside them is still an error.
const TrustSection kTrustSections[] = {
    {"runtime.tls",
     "TLS settings for a web UI or mesh (the control endpoint has [runtime.control.tls])",
     {"mode", "cert_path", "key_path", "ca_path", "require_remote"}},
    {"runtime.deploy", "signed deployment", {"require_signed", "keyring_path"}},
    {"runtime.discovery", "mDNS discovery", {"enabled", "service_name", "advertise", "interfaces", "host_group"}},
    {"runtime.mesh",
     "runtime mesh",
     {"enabled", "role", "listen", "connect", "tls", "auth_token", "publish", "subscribe.*", "zenohd_version",
      "plugin_versions.*"}},
    {"runtime.cloud",
     "cloud links",
     {"profile", "wan.allow_write[].action", "wan.allow_write[].target", "links.transports[].source",
      "links.transports[].target", "links.transports[].transport"}},
    {"runtime.observability",
     "historian (its Prometheus metrics are [runtime.web]'s /metrics)",
     {"enabled", "sample_interval_ms", "mode", "include", "history_path", "max_entries", "prometheus_enabled",
      "prometheus_path", "alerts[].name", "alerts[].variable", "alerts[].above", "alerts[].below",
      "alerts[].debounce_samples", "alerts[].hook"}},
    {"runtime.ads", "ADS (TwinCAT) server", {"enabled", "config_path", "worker_tick_interval_ms"}},
};

// Checks the keys of an ignored truST table against its schema patterns. `prefix` is the
// pattern path of `table` relative to the section ("" or "wan.allow_write[]").
void checkTrustKeys(const toml::table& table, const std::string& path, const std::string& prefix,
                    const TrustSection& section, const std::string& file, std::vector<ConfigDiagnostic>& out) {
    for (const auto& [key, value] : table) {
        const std::string pattern = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
        const std::string keyPath = path + "." + std::string(key.str());
        bool leaf = false;
        bool inner = false;
        for (std::string_view k : section.keys) {
            if (k == pattern || k == pattern + ".*") {
                leaf = true;
            } else if (k.starts_with(pattern + ".") || k.starts_with(pattern + "[].")) {
                inner = true;
            }
        }
        if (leaf) {
            continue;
        }
        if (!inner) {
            out.push_back(diagnosticAt(Severity::Error, file, key.source(), keyPath,
                                       fmt::format("unknown key in [{}]", section.path)));
            continue;
        }
        if (const auto* t = value.as_table()) {
            checkTrustKeys(*t, keyPath, pattern, section, file, out);
        } else if (const auto* a = value.as_array()) {
            for (std::size_t i = 0; i < a->size(); ++i) {
                if (const auto* et = a->get(i)->as_table()) {
                    checkTrustKeys(*et, indexedPath(keyPath, i), pattern + "[]", section, file, out);
                }
            }
        }
    }
}

// A truST section is worth a warning only when it asks for something: `enabled = false` (or
// TLS `mode = "disabled"`, deploy without `require_signed`) is what takt does anyway.
bool asksForSomething(const toml::table& t, std::string_view path) {
    if (auto e = t["enabled"].value<bool>(); e && !*e) {
        return false;
    }
    if (path == "runtime.tls") {
        return t["mode"].value_or(std::string_view("disabled")) != "disabled";
    }
    if (path == "runtime.deploy") {
        return t["require_signed"].value_or(false);
    }
    if (path == "runtime.mesh" || path == "runtime.observability" || path == "runtime.ads") {
        return t["enabled"].value_or(false); // off unless enabled in truST
    }
    return true;
}

void readTrustSection(TableReader& parent, std::string_view key, const TrustSection& section) {
    const toml::table* t = parent.table(key);
    if (t == nullptr) {
        return;
    }
    checkTrustKeys(*t, std::string(section.path), "", section, parent.file(), parent.diagnostics());
    if (asksForSomething(*t, section.path)) {
        parent.warning(key, fmt::format("not supported yet: takt has no {}; the section is ignored", section.what));
    }
}

void readResource(TableReader& r, RuntimeConfig& c) {
    if (auto name = r.string("name")) {
        if (name->empty()) {
            r.error("name", "must not be empty");
        } else {
            c.resourceName = *name;
        }
    }
    if (auto ms = r.integer("cycle_interval_ms", 1, 3'600'000)) {
        c.cycleIntervalMs = static_cast<std::uint32_t>(*ms);
    }
    // truST's task overrides; takt takes tasks from the program's CONFIGURATION.
    if (r.forEachTable("tasks", [](TableReader& task) {
            for (std::string_view k : {"name", "interval_ms", "priority", "programs", "single"}) {
                task.accept(k);
            }
            task.finish();
        })) {
        r.warning("tasks", "not supported yet: takt takes its tasks from the program's CONFIGURATION; "
                           "[[resource.tasks]] is ignored");
    }
    r.finish();
}

void readBuild(TableReader& r, RuntimeConfig& c) {
    if (auto trap = r.choice<bool>("overflow", {{"wrap", false}, {"trap", true}})) {
        c.overflowTrap = *trap;
    }
    if (auto byte = r.choice<bool>("address_mode", {{"word", false}, {"byte", true}})) {
        c.byteAddressing = *byte;
    }
    // The compiler reads the dialect and the sources folder (compiler/src/project.cpp) and reports
    // a bad sources_root at its key; the runtime only checks what it can on its own.
    (void)r.choice<int>("dialect", {{"codesys", 0}, {"iec", 1}, {"openplc", 2}});
    (void)r.string("sources_root");
    r.finish();
}

void readControlTokens(TableReader& r, RuntimeConfig::Control& c) {
    r.forEachTable("tokens", [&](TableReader& tr) {
        ControlToken token;
        if (auto role = tr.choice<std::string_view>(
                "role", {{"viewer", "viewer"}, {"operator", "operator"}, {"engineer", "engineer"}, {"admin", "admin"}},
                true)) {
            token.role = *role;
        }
        token.token = tr.string("token").value_or("");
        token.tokenFile = tr.string("token_file").value_or("");
        if (token.token.empty() == token.tokenFile.empty()) {
            tr.error("", "give exactly one of token or token_file (non-empty)");
        }
        token.where = tr.position(token.token.empty() ? "token_file" : "token");
        tr.finish();
        c.tokens.push_back(std::move(token));
    });
}

void readControl(TableReader& r, RuntimeConfig::Control& c) {
    if (auto endpoint = r.string("endpoint")) {
        c.endpoint = *endpoint;
    }
    if (auto token = r.string("auth_token")) {
        if (token->empty()) {
            r.error("auth_token", "must not be empty (remove the key for no token)");
        }
        c.authToken = *token;
        c.authTokenWhere = r.position("auth_token");
    }
    readControlTokens(r, c);
    if (auto mib = r.integer("audit_max_mib", 1, 4096)) {
        c.auditMaxMib = static_cast<std::uint32_t>(*mib);
    }
    if (auto keep = r.integer("audit_keep", 0, 100)) {
        c.auditKeep = static_cast<std::uint32_t>(*keep);
    }
    if (auto ms = r.integer("handshake_timeout_ms", 100, 600'000)) {
        c.handshakeTimeoutMs = static_cast<std::uint32_t>(*ms);
    }
    if (const toml::table* tls = r.table("tls")) {
        TableReader tr(*tls, r.keyPath("tls"), r.file(), r.diagnostics());
        c.tlsCert = tr.string("cert").value_or("");
        c.tlsKey = tr.string("key").value_or("");
        c.tlsClientCa = tr.string("client_ca").value_or("");
        tr.finish();
    }
    // truST's debug switches: debug_enabled lets the debug.* methods halt tasks; takt has no
    // separate debug mode besides, so only mode = "debug" is worth a word.
    if (auto mode = r.choice<std::string_view>("mode", {{"production", "production"}, {"debug", "debug"}})) {
        if (*mode == "debug") {
            r.warning("mode", "takt has no debug control mode: debug_enabled = true allows debugging; running as "
                              "\"production\"");
        }
    }
    if (auto debug = r.boolean("debug_enabled")) {
        c.debugEnabled = *debug;
    }
    r.finish();

    if (c.endpoint.empty()) {
        if (r.raw().get("endpoint") != nullptr) {
            r.error("endpoint", "must not be empty (remove [runtime.control] for no control endpoint)");
        }
        return;
    }
    const std::size_t sep = c.endpoint.find("://");
    const std::string scheme = sep == std::string::npos ? std::string() : c.endpoint.substr(0, sep);
    const std::string rest = sep == std::string::npos ? std::string() : c.endpoint.substr(sep + 3);
    if (scheme == "unix") {
        if (rest.empty()) {
            r.error("endpoint", "unix:// needs a socket path, e.g. unix:///run/takt/takt.sock");
        }
        return;
    }
    if (scheme != "tcp" && scheme != "tls") {
        r.error("endpoint", fmt::format("\"{}\" is not an endpoint (expected unix:///path, tcp://host:port or "
                                        "tls://host:port)",
                                        c.endpoint));
        return;
    }
    std::string host;
    std::uint16_t port = 0;
    if (!splitHostPort(rest, host, port)) {
        r.error("endpoint", fmt::format("\"{}\" needs host:port, e.g. {}://127.0.0.1:9001", c.endpoint, scheme));
        return;
    }
    // A network endpoint without a token would let anyone who can reach it write outputs.
    if (c.authToken.empty() && c.tokens.empty()) {
        r.error("endpoint", fmt::format("a {} endpoint needs runtime.control.auth_token or "
                                        "[[runtime.control.tokens]]",
                                        scheme));
    }
    if (scheme == "tls" && (c.tlsCert.empty() || c.tlsKey.empty())) {
        r.error("endpoint", "a tls endpoint needs [runtime.control.tls] cert and key");
    }
    if (scheme == "tcp" && !isLoopbackHost(host)) {
        // Seed 000's security rule: tokens and writes in clear text over a network are refused.
        r.error("endpoint", fmt::format("\"{}\": tcp:// is for loopback only (127.0.0.1, ::1, localhost); use "
                                        "tls://{} with [runtime.control.tls] for other addresses",
                                        c.endpoint, rest));
    }
}

// [runtime.web]: truST's enabled / listen / auth / tls, and tls_cert / tls_key. Loopback serves
// without TLS; any other address needs TLS and tokens, as the control endpoint does.
void readWeb(TableReader& r, const RuntimeConfig::Control& control, RuntimeConfig::Web& w) {
    w.enabled = r.boolean("enabled").value_or(true);
    if (auto listen = r.string("listen")) {
        w.listen = *listen;
    }
    if (auto auth = r.choice<bool>("auth", {{"local", false}, {"token", true}})) {
        w.tokenAuth = *auth;
    }
    if (auto tls = r.boolean("tls")) {
        w.tls = *tls;
    }
    if (auto cert = r.string("tls_cert")) {
        w.tlsCert = *cert;
    }
    if (auto key = r.string("tls_key")) {
        w.tlsKey = *key;
    }
    r.finish();
    if (!w.enabled) {
        return;
    }
    if (!splitHostPort(w.listen, w.host, w.port)) {
        r.error("listen", fmt::format("\"{}\" needs host:port, e.g. 127.0.0.1:8080", w.listen));
        return;
    }
    if (w.host.size() > 2 && w.host.front() == '[' && w.host.back() == ']') {
        w.host = w.host.substr(1, w.host.size() - 2); // [::1]:8080
    }
    const bool tokens = !control.authToken.empty() || !control.tokens.empty();
    if (w.tls && (w.tlsCert.empty() || w.tlsKey.empty())) {
        r.error("tls", "tls = true needs tls_cert and tls_key (PEM files)");
    }
    if (w.tokenAuth && !tokens) {
        r.error("auth", "auth = \"token\" needs the control endpoint's tokens ([[runtime.control.tokens]] or "
                        "runtime.control.auth_token)");
    }
    if (!isLoopbackHost(w.host) && (!w.tls || !w.tokenAuth)) {
        // As for the control endpoint: writes and tokens in clear text over a network are refused.
        r.error("listen", fmt::format("\"{}\" is not a loopback address: serving it needs tls = true (tls_cert, "
                                      "tls_key) and auth = \"token\"",
                                      w.listen));
    }
}

void readRuntime(TableReader& r, RuntimeConfig& c) {
    if (auto native = r.choice<bool>("execution", {{"native", true}, {"interpreter", false}})) {
        c.nativeExecution = *native;
    }
    if (auto wait = r.choice<bool>("native_start", {{"background", false}, {"wait", true}})) {
        c.nativeStartWait = *wait;
    }
    if (const toml::table* t = r.table("control")) {
        TableReader tr(*t, r.keyPath("control"), r.file(), r.diagnostics());
        readControl(tr, c.control);
    }
    if (const toml::table* t = r.table("web")) {
        TableReader tr(*t, r.keyPath("web"), r.file(), r.diagnostics());
        readWeb(tr, c.control, c.web);
    }
    if (const toml::table* t = r.table("log")) {
        TableReader tr(*t, r.keyPath("log"), r.file(), r.diagnostics());
        if (auto level = tr.choice<std::string_view>("level", {{"trace", "trace"},
                                                               {"debug", "debug"},
                                                               {"info", "info"},
                                                               {"warn", "warn"},
                                                               {"warning", "warn"},
                                                               {"error", "error"},
                                                               {"off", "off"}})) {
            c.log.level = *level;
        }
        tr.finish();
    }
    if (const toml::table* t = r.table("retain")) {
        TableReader tr(*t, r.keyPath("retain"), r.file(), r.diagnostics());
        if (auto on = tr.choice<bool>("mode", {{"file", true}, {"none", false}})) {
            c.retain.enabled = *on;
        }
        if (auto path = tr.string("path")) {
            if (path->empty()) {
                tr.error("path", "must not be empty");
            } else {
                c.retain.path = *path;
            }
        }
        if (auto ms = tr.integer("save_interval_ms", 1, 86'400'000)) {
            c.retain.saveIntervalMs = static_cast<std::uint32_t>(*ms);
        }
        tr.finish();
    }
    const std::initializer_list<std::pair<std::string_view, FaultAction>> actions = {
        {"halt", FaultAction::Halt}, {"safe_halt", FaultAction::SafeHalt}, {"restart", FaultAction::Restart}};
    if (const toml::table* t = r.table("watchdog")) {
        TableReader tr(*t, r.keyPath("watchdog"), r.file(), r.diagnostics());
        if (auto on = tr.boolean("enabled")) {
            c.watchdog.enabled = *on;
        }
        if (auto ms = tr.integer("timeout_ms", 1, 3'600'000)) {
            c.watchdog.timeoutMs = static_cast<std::uint32_t>(*ms);
        }
        if (auto a = tr.choice<FaultAction>("action", actions)) {
            c.watchdog.action = *a;
        }
        tr.finish();
    }
    if (const toml::table* t = r.table("fault")) {
        TableReader tr(*t, r.keyPath("fault"), r.file(), r.diagnostics());
        if (auto a = tr.choice<FaultAction>("policy", actions)) {
            c.fault.policy = *a;
        }
        tr.finish();
    }
    if (const toml::table* t = r.table("realtime")) {
        c.realtimeGiven = true;
        TableReader tr(*t, r.keyPath("realtime"), r.file(), r.diagnostics());
        readRealtime(tr, c.realtime);
    }
    if (const toml::table* t = r.table("debug")) {
        TableReader tr(*t, r.keyPath("debug"), r.file(), r.diagnostics());
        enum class Outputs : std::uint8_t { Hold, Safe };
        if (auto o = tr.choice<Outputs>("outputs", {{"hold", Outputs::Hold}, {"safe", Outputs::Safe}})) {
            c.debug.safeOutputsWhileHalted = *o == Outputs::Safe;
        }
        tr.finish();
    }
    if (const toml::table* t = r.table("opcua")) {
        TableReader tr(*t, r.keyPath("opcua"), r.file(), r.diagnostics());
        readOpcua(tr, c.opcua);
    }
    if (const toml::table* t = r.table("sparkplug")) {
        TableReader tr(*t, r.keyPath("sparkplug"), r.file(), r.diagnostics());
        readSparkplug(tr, c.sparkplug);
    }
    for (const TrustSection& s : kTrustSections) {
        readTrustSection(r, s.path.substr(std::string_view("runtime.").size()), s);
    }
    if (r.string("execution_backend")) {
        r.warning("execution_backend",
                  "not supported yet: takt chooses how programs run with [runtime] execution (\"interpreter\" or "
                  "\"native\"); ignored");
    }
    r.finish();
}

RuntimeConfigResult parseDocument(std::string_view text, const std::string& file) {
    RuntimeConfigResult result;
    std::optional<toml::table> doc = parseTomlText(text, file, result.diagnostics);
    if (!doc) {
        return result;
    }
    RuntimeConfig c;
    c.file = file;
    TableReader root(*doc, "", file, result.diagnostics);
    if (const toml::table* t = root.table("bundle")) {
        TableReader tr(*t, "bundle", file, result.diagnostics);
        if (auto v = tr.integer("version", 1, 1)) {
            c.bundleVersion = *v;
        }
        tr.finish();
    }
    if (const toml::table* t = root.table("resource")) {
        TableReader tr(*t, "resource", file, result.diagnostics);
        readResource(tr, c);
    }
    if (const toml::table* t = root.table("build")) {
        TableReader tr(*t, "build", file, result.diagnostics);
        readBuild(tr, c);
    }
    if (const toml::table* t = root.table("runtime")) {
        TableReader tr(*t, "runtime", file, result.diagnostics);
        readRuntime(tr, c);
    }
    root.finish();
    // Diagnostics in file order, like every other takt diagnostic.
    std::stable_sort(result.diagnostics.begin(), result.diagnostics.end(),
                     [](const ConfigDiagnostic& a, const ConfigDiagnostic& b) {
                         return std::tie(a.line, a.column) < std::tie(b.line, b.column);
                     });
    const bool failed = std::any_of(result.diagnostics.begin(), result.diagnostics.end(),
                                    [](const ConfigDiagnostic& d) { return d.severity == Severity::Error; });
    if (!failed) {
        result.config = std::move(c);
    }
    return result;
}

} // namespace

std::span<const TrustSection> trustSections() noexcept {
    return kTrustSections;
}

std::string formatDiagnostic(const ConfigDiagnostic& d) {
    std::string where = d.file.empty() ? std::string("<config>") : d.file;
    if (d.line != 0) {
        where += fmt::format(":{}:{}", d.line, d.column);
    }
    std::string severity = d.severity == Severity::Error ? "error" : "warning";
    if (!d.code.empty()) {
        severity += fmt::format("[{}]", d.code);
    }
    if (d.key.empty()) {
        return fmt::format("{}: {}: {}", where, severity, d.message);
    }
    return fmt::format("{}: {}: {}: {}", where, severity, d.key, d.message);
}

RuntimeConfigResult parseRuntimeConfig(std::string_view text, const std::string& file) {
    try {
        return parseDocument(text, file);
    } catch (const std::exception& e) {
        // Only allocation failure can get here; report it instead of terminating.
        RuntimeConfigResult result;
        result.diagnostics.push_back(
            diagnosticAt(Severity::Error, file, {}, {}, fmt::format("internal error: {}", e.what())));
        return result;
    }
}

RuntimeConfigResult loadRuntimeConfig(const std::filesystem::path& file) {
    RuntimeConfigResult result;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec) && !ec) {
        // One message for `takt validate`, `takt run` and the agent alike.
        result.diagnostics.push_back(
            diagnosticAt(Severity::Error, file.string(), {}, {},
                         "missing runtime.toml (required to run: it names the task, its period and the I/O; see "
                         "docs/getting-started.md, or copy the commented one `takt init NEWDIR` writes)"));
        return result;
    }
    return loadConfigFile<RuntimeConfigResult>(
        file, [](const std::string& text, const std::string& path) { return parseRuntimeConfig(text, path); },
        [&](RuntimeConfigResult& r) {
            if (r.config) {
                r.config->file = file;
            }
        });
}

} // namespace takt::engine
