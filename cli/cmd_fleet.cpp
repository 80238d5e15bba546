// `takt fleet status --servers URL[,URL…] --group G [--timeout 5s] [--rebirth] [--json]`: the edge
// nodes of a Sparkplug B group as a host application sees them from the broker (docs/fleet.md):
// online or offline, bdSeq, the last birth, metric count, program hash. It listens to
// spBv1.0/<group>/# on every server for the timeout (Sparkplug retains nothing of edge nodes);
// --rebirth asks every edge node heard without a birth for one (Node Control/Rebirth).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "commands.h"
#include "run_support.h"
#include "shell_client.h"
#include "takt/agent/control.h"
#include "takt/agent/sparkplug_fleet.h"
#include "takt/engine/config_reader.h"

namespace takt::cli {

namespace {

constexpr const char* kCommand = "takt fleet status";

struct FleetStatusOptions {
    std::vector<std::string> servers;
    std::string group;
    std::string timeout = "5s";
    bool rebirth = false;
    bool json = false;
    std::string username, passwordFile;
    std::string ca, cert, key;
};

int refuse(const std::string& option, const std::string& message) {
    std::fprintf(stderr, "%s: %s: %s\n", kCommand, option.c_str(), message.c_str());
    return kExitInvalidProject;
}

// "2026-11-29T18:02:11.123Z"; empty for 0 (no birth heard).
std::string isoTime(std::uint64_t ms) {
    if (ms == 0) {
        return {};
    }
    const auto seconds = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    if (gmtime_r(&seconds, &tm) == nullptr) {
        return {};
    }
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                       tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

void writeString(rapidjson::Writer<rapidjson::StringBuffer>& w, const std::string& s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

std::string renderJson(const std::string& group, std::int64_t listenedMs, const agent::FleetView& view) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("group");
    writeString(w, group);
    w.Key("listened_ms");
    w.Int64(listenedMs);
    w.Key("nodes");
    w.StartArray();
    for (const auto& [id, n] : view.nodes()) {
        w.StartObject();
        w.Key("edge_node_id");
        writeString(w, id);
        w.Key("state");
        w.String(n.online ? "online" : "offline");
        w.Key("birth_seen");
        w.Bool(n.birthSeen);
        w.Key("bd_seq");
        n.bdSeq ? (void)w.Uint64(*n.bdSeq) : (void)w.Null();
        w.Key("last_birth");
        n.birthSeen ? writeString(w, isoTime(n.lastBirthMs)) : (void)w.Null();
        w.Key("last_birth_ms");
        n.birthSeen ? (void)w.Uint64(n.lastBirthMs) : (void)w.Null();
        w.Key("metrics");
        n.birthSeen ? (void)w.Uint64(n.metrics) : (void)w.Null();
        w.Key("program_hash");
        n.programHash.empty() ? (void)w.Null() : writeString(w, n.programHash);
        w.Key("server");
        writeString(w, n.server);
        w.Key("messages");
        w.Uint64(n.messages);
        w.Key("problem");
        n.problem.empty() ? (void)w.Null() : writeString(w, n.problem);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

std::string renderText(const std::string& group, std::int64_t listenedMs, const agent::FleetView& view) {
    std::size_t online = 0;
    std::size_t width = 9;
    for (const auto& [id, n] : view.nodes()) {
        online += n.online ? 1 : 0;
        width = std::max(width, id.size());
    }
    std::string out = fmt::format("Sparkplug group {}: {} edge node(s) heard in {:.1f} s, {} online, {} offline\n",
                                  group, view.nodes().size(), static_cast<double>(listenedMs) / 1000.0, online,
                                  view.nodes().size() - online);
    out += fmt::format("  {:<{}}  {:<7}  {:>5}  {:<24}  {:>7}  {}\n", "edge node", width, "state", "bdSeq",
                       "last birth (UTC)", "metrics", "program");
    bool unborn = false;
    for (const auto& [id, n] : view.nodes()) {
        unborn = unborn || !n.birthSeen;
        out += fmt::format(
            "  {:<{}}  {:<7}  {:>5}  {:<24}  {:>7}  {}{}\n", id, width, n.online ? "online" : "offline",
            n.bdSeq ? std::to_string(*n.bdSeq) : "-", n.birthSeen ? isoTime(n.lastBirthMs) : "(no birth heard)",
            n.birthSeen ? std::to_string(n.metrics) : "-", n.programHash.empty() ? "-" : n.programHash.substr(0, 16),
            n.problem.empty() ? "" : "  " + n.problem);
    }
    if (unborn) {
        out += "  (an edge node heard without its birth: --rebirth asks each one for an NBIRTH)\n";
    }
    return out;
}

int runFleetStatus(const FleetStatusOptions& o) {
    agent::FleetWatchOptions watch;
    for (const std::string& url : o.servers) {
        engine::RuntimeConfig::Sparkplug::Server server;
        if (!engine::parseSparkplugServer(url, server)) {
            return refuse("--servers",
                          fmt::format("\"{}\" is not a broker URL: tcp://host[:port] or ssl://host[:port]", url));
        }
        watch.servers.push_back(std::move(server));
    }
    if (watch.servers.empty()) {
        return refuse("--servers", "give at least one broker, e.g. tcp://127.0.0.1:1883");
    }
    if (o.group.empty() || o.group.find_first_of("+#/") != std::string::npos) {
        return refuse("--group", fmt::format("\"{}\" is not a Sparkplug group ID: one MQTT topic level, without '+', "
                                             "'#' or '/'",
                                             o.group));
    }
    const std::optional<std::int64_t> ns = parseDurationNs(o.timeout);
    if (!ns || *ns < 100'000'000 || *ns > 3'600'000'000'000) {
        return refuse("--timeout", fmt::format("\"{}\" is not a duration from 100ms to 1h (5s, 1500ms)", o.timeout));
    }
    watch.timeout = std::chrono::milliseconds(*ns / 1'000'000);
    watch.group = o.group;
    watch.rebirth = o.rebirth;
    watch.username = o.username;
    if (!o.passwordFile.empty()) {
        if (o.username.empty()) {
            return refuse("--password-file", "a password needs a username: give --username too");
        }
        std::string error;
        if (!agent::readTokenFile(o.passwordFile, watch.password, error, "password file")) {
            return refuse("--password-file", error);
        }
    }
    if (o.cert.empty() != o.key.empty()) {
        return refuse(o.cert.empty() ? "--cert" : "--key", "--cert and --key go together: give both, or neither");
    }
    for (const auto& s : watch.servers) {
        if (s.tls && o.ca.empty()) {
            return refuse("--ca",
                          fmt::format("\"{}\" needs --ca (the CA that signed the broker's certificate)", s.url));
        }
    }
    watch.tlsCa = o.ca;
    watch.tlsCert = o.cert;
    watch.tlsKey = o.key;
    watch.log = [](const std::string& line) { std::fprintf(stderr, "%s: %s\n", kCommand, line.c_str()); };

    // Ctrl-C (or SIGTERM) ends the listening early, and what was heard is reported: blocked
    // before the brokers' client threads start, so that they inherit the mask and only the
    // watch's wait takes the signal.
    takeStopSignals();
    bool interrupted = false;
    watch.stopRequested = [&interrupted](int waitMs) {
        interrupted = stopRequested(waitMs);
        return interrupted;
    };

    agent::FleetView view(o.group);
    std::string error;
    std::chrono::milliseconds listened{0};
    const bool watched = agent::watchFleet(watch, view, error, listened);
    if (interrupted) {
        std::fprintf(stderr, "%s: interrupted: listened %lld ms of %lld\n", kCommand,
                     static_cast<long long>(listened.count()), static_cast<long long>(watch.timeout.count()));
    }
    if (!watched) {
        std::fprintf(stderr, "%s: %s\n", kCommand, error.c_str());
        return kExitControlUnreachable;
    }
    // The window asked for, or the part of it listened to before the interruption.
    const std::int64_t windowMs = interrupted ? listened.count() : watch.timeout.count();
    const std::string report = o.json ? renderJson(o.group, windowMs, view) : renderText(o.group, windowMs, view);
    std::fputs(report.c_str(), stdout);
    if (view.nodes().empty()) {
        std::fprintf(stderr,
                     "%s: no edge node of group %s was heard within %lld ms (nodes that send nothing are not seen: "
                     "a longer --timeout, or values that change)\n",
                     kCommand, o.group.c_str(), static_cast<long long>(windowMs));
        return kExitTimeout;
    }
    return kExitOk;
}

} // namespace

void registerFleet(CLI::App& app, int& exitCode) {
    CLI::App* fleet = app.add_subcommand("fleet", "A fleet of runtimes seen from its Sparkplug broker");
    fleet->require_subcommand(1);
    auto o = std::make_shared<FleetStatusOptions>();
    CLI::App* cmd = fleet->add_subcommand(
        "status", "The edge nodes of a Sparkplug B group heard on the broker: online/offline, bdSeq, last birth, "
                  "metrics, program hash");
    cmd->add_option("--servers", o->servers,
                    "Brokers to listen to: tcp://host:port or ssl://host:port, comma-separated")
        ->required()
        ->delimiter(',');
    cmd->add_option("--group", o->group, "The Sparkplug group_id")->required();
    cmd->add_option("--timeout", o->timeout, "How long to listen (default 5s)");
    cmd->add_flag("--rebirth", o->rebirth, "Send Node Control/Rebirth to every edge node heard without its birth");
    cmd->add_flag("--json", o->json, "Print the edge nodes as JSON");
    cmd->add_option("--username", o->username, "MQTT username");
    cmd->add_option("--password-file", o->passwordFile, "MQTT password file (mode 0600)");
    cmd->add_option("--ca", o->ca, "CA file for ssl:// brokers");
    cmd->add_option("--cert", o->cert, "Client certificate for ssl:// brokers");
    cmd->add_option("--key", o->key, "Client key for ssl:// brokers");
    cmd->callback([o, &exitCode] { exitCode = runFleetStatus(*o); });
}

} // namespace takt::cli
