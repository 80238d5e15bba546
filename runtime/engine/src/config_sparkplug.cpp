// [runtime.sparkplug] of runtime.toml (docs/configuration.md): a Sparkplug B 3.0 edge node's
// brokers, identity, what it exposes and how it logs in. Only the keys are read here; the password
// file is read where the node is set up (agent/src/sparkplug/sparkplug_config.cpp), by
// `takt validate` and `takt run` alike.
#include <algorithm>

#include <fmt/format.h>

#include "takt/common/toml_names.h"
#include "takt/engine/config_reader.h"

namespace takt::engine {

namespace {

using Severity = ConfigDiagnostic::Severity;

// A Sparkplug ID (group, edge node, host application) is one MQTT topic level: not empty, no
// wildcard and no separator (Sparkplug 3.0, 6.2 / 7.2: "+", "#" and "/" are not allowed).
std::optional<std::string> sparkplugId(TableReader& r, std::string_view key, bool required) {
    std::optional<std::string> id = r.string(key, required);
    if (!id) {
        return std::nullopt;
    }
    if (id->empty()) {
        r.error(key, "must not be empty");
        return std::nullopt;
    }
    if (id->find_first_of("+#/") != std::string::npos) {
        r.error(key,
                fmt::format("\"{}\" is not a Sparkplug ID: it is one MQTT topic level, without '+', '#' or '/'", *id));
        return std::nullopt;
    }
    if (std::any_of(id->begin(), id->end(), [](char ch) { return ch == '\0'; })) {
        r.error(key, "must not hold a NUL character");
        return std::nullopt;
    }
    return id;
}

void readServers(TableReader& r, RuntimeConfig::Sparkplug& o) {
    const toml::array* servers = r.array("servers", true);
    if (servers == nullptr) {
        return;
    }
    if (servers->empty()) {
        r.error("servers", "give at least one broker, e.g. [\"tcp://127.0.0.1:1883\"]");
        return;
    }
    for (std::size_t i = 0; i < servers->size(); ++i) {
        const toml::node& n = *servers->get(i);
        const auto* s = n.as_string();
        RuntimeConfig::Sparkplug::Server server;
        if (s == nullptr || !parseSparkplugServer(s->get(), server)) {
            r.diagnostics().push_back(diagnosticAt(
                Severity::Error, r.file(), n.source(), indexedPath(r.keyPath("servers"), i),
                s == nullptr
                    ? fmt::format("expected a broker URL, found {}", common::tomlTypeName(n.type()))
                    : fmt::format("\"{}\" is not a broker URL: tcp://host[:port] or ssl://host[:port]", s->get())));
            continue;
        }
        const bool twice = std::any_of(o.servers.begin(), o.servers.end(), [&](const auto& other) {
            return other.host == server.host && other.port == server.port;
        });
        if (twice) {
            r.diagnostics().push_back(diagnosticAt(Severity::Error, r.file(), n.source(),
                                                   indexedPath(r.keyPath("servers"), i),
                                                   fmt::format("\"{}\" is given twice", server.url)));
            continue;
        }
        o.servers.push_back(std::move(server));
    }
}

void readExpose(TableReader& r, RuntimeConfig::Sparkplug& o) {
    r.globList("expose", o.expose);
}

// The largest deadband taken: past it a number could never move far enough to be sent.
constexpr double kMaxDeadband = 1e15;

void readDeadbands(TableReader& r, RuntimeConfig::Sparkplug& o) {
    if (auto d = r.number("deadband", 0, kMaxDeadband)) {
        o.deadband = *d;
    }
    r.forEachTable("deadbands", [&](TableReader& e) {
        std::optional<std::string> glob = e.string("expose", true);
        const std::optional<double> absolute = e.number("absolute", 0, kMaxDeadband, true);
        if (glob && glob->empty()) {
            e.error("expose", "expected a glob over variable paths, e.g. \"Main.temp*\"");
            glob.reset();
        }
        e.finish();
        if (glob && absolute) {
            o.deadbands.push_back({std::move(*glob), *absolute});
        }
    });
}

void readTls(TableReader& r, RuntimeConfig::Sparkplug& o) {
    const toml::table* t = r.table("tls");
    if (t == nullptr) {
        return;
    }
    TableReader tr(*t, r.keyPath("tls"), r.file(), r.diagnostics());
    for (const auto& [key, out] : {std::pair{"ca", &o.tlsCa}, {"cert", &o.tlsCert}, {"key", &o.tlsKey}}) {
        *out = tr.string(key, std::string_view(key) == "ca").value_or("");
        if (out->empty() && t->get(key) != nullptr) {
            tr.error(key, "must not be empty");
        }
    }
    o.tlsWhere = tr.position("ca");
    tr.finish();
    if (o.tlsCert.empty() != o.tlsKey.empty()) {
        tr.error(o.tlsCert.empty() ? "cert" : "key", "cert and key go together: give both, or neither");
    }
}

} // namespace

bool parseSparkplugServer(std::string_view url, RuntimeConfig::Sparkplug::Server& out) {
    std::string_view rest;
    if (url.starts_with("tcp://")) {
        out.tls = false;
        rest = url.substr(6);
    } else if (url.starts_with("ssl://")) {
        out.tls = true;
        rest = url.substr(6);
    } else {
        return false;
    }
    if (rest.empty() || rest.find_first_of("/ ?#@") != std::string_view::npos) {
        return false;
    }
    const bool bracketed = rest.front() == '[';
    const std::size_t close = bracketed ? rest.find(']') : std::string_view::npos;
    const bool hasPort = bracketed ? (close != std::string_view::npos && close + 1 < rest.size())
                                   : rest.find(':') != std::string_view::npos;
    if (bracketed && close == std::string_view::npos) {
        return false;
    }
    if (hasPort) {
        if (!splitHostPort(rest, out.host, out.port) || out.host.empty() || out.port == 0) {
            return false;
        }
    } else {
        out.host = std::string(rest);
        out.port = out.tls ? 8883 : 1883;
    }
    if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']') {
        out.host = out.host.substr(1, out.host.size() - 2);
    }
    out.url = std::string(url);
    return !out.host.empty();
}

void readSparkplug(TableReader& r, RuntimeConfig::Sparkplug& o) {
    if (auto on = r.boolean("enabled")) {
        o.enabled = *on;
    }
    o.where = r.position("enabled");
    readServers(r, o);
    o.groupId = sparkplugId(r, "group_id", true).value_or("");
    o.edgeNodeId = sparkplugId(r, "edge_node_id", true).value_or("");
    readExpose(r, o);
    readDeadbands(r, o);
    o.primaryHostId = sparkplugId(r, "primary_host_id", false).value_or("");
    if (auto name = r.string("username")) {
        if (name->empty()) {
            r.error("username", "must not be empty (remove the key to log in without a name)");
        }
        o.username = *name;
    }
    if (auto file = r.string("password_file")) {
        if (file->empty()) {
            r.error("password_file", "must not be empty");
        }
        o.passwordFile = *file;
    }
    o.passwordWhere = r.position("password_file");
    readTls(r, o);
    if (auto role = r.choice<std::string_view>(
            "command_role",
            {{"viewer", "viewer"}, {"operator", "operator"}, {"engineer", "engineer"}, {"admin", "admin"}})) {
        o.commandRole = *role;
    }
    r.finish();

    if (!o.passwordFile.empty() && o.username.empty()) {
        r.error("password_file", "a password needs a username: give username too");
    }
    const auto ssl = std::find_if(o.servers.begin(), o.servers.end(), [](const auto& s) { return s.tls; });
    if (ssl != o.servers.end() && o.tlsCa.empty()) {
        r.error("servers", fmt::format("\"{}\" needs tls = {{ ca = \"…\" }} (the CA that signed the broker's "
                                       "certificate)",
                                       ssl->url));
    }
}

} // namespace takt::engine
