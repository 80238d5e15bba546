// `takt status`, `takt write VAR VALUE`, `takt force VAR VALUE`, `takt unforce VAR|--all`,
// `takt stop`, `takt start`, `takt restart [--cold]` and `takt events`: a running runtime from the shell, through its
// control endpoint. VALUE is IEC literal text (T#330ms, 16#00FF, 'text', Mode#Auto, TRUE, -1.5), parsed by the runtime
// for the variable's type; a VAR starting with % is a direct address (io.write / io.force).
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "run_support.h"
#include "shell_client.h"
#include "takt/agent/iec_literal.h"

namespace takt::cli {

namespace {

struct StatusOptions {
    ControlConnectOptions connect;
    bool json = false;
};

std::string usText(const rapidjson::Value& h, const char* key) {
    return formatNs(static_cast<std::int64_t>(h[key].GetDouble() * 1000.0));
}

int runStatus(const StatusOptions& o) {
    ShellClient shell("takt status");
    if (const int rc = shell.connect(o.connect, agent::Role::Viewer); rc != kExitOk) {
        return rc;
    }
    rapidjson::Document s;
    rapidjson::Document st;
    if (const int rc = shell.call("runtime.status", "", s); rc != kExitOk) {
        return rc;
    }
    if (const int rc = shell.call("runtime.stats", "", st); rc != kExitOk) {
        return rc;
    }
    if (o.json) {
        rapidjson::Document both(rapidjson::kObjectType);
        both.AddMember("status", rapidjson::Value(s, both.GetAllocator()), both.GetAllocator());
        both.AddMember("stats", rapidjson::Value(st, both.GetAllocator()), both.GetAllocator());
        std::printf("%s\n", jsonText(both).c_str());
        return kExitOk;
    }
    std::printf("endpoint   %s\n", shell.endpoint().c_str());
    std::printf("state      %s, up %s\n", s["state"].GetString(),
                formatNs(s["uptime_ms"].GetInt64() * 1'000'000).c_str());
    if (s["fault"].IsObject()) {
        const rapidjson::Value& f = s["fault"];
        std::printf("fault      %s in cycle %lld: %s (%s:%d:%d)\n", f["kind"].GetString(),
                    static_cast<long long>(f["cycle"].GetInt64()), f["message"].GetString(), f["path"].GetString(),
                    f["line"].GetInt(), f["column"].GetInt());
    }
    std::printf("program    %.16s\n", s["program_hash"].GetString());
    std::printf("cycles     %llu at %.3f ms, overruns %llu, faults %llu, reloads %llu\n",
                static_cast<unsigned long long>(s["cycles"].GetUint64()), st["period_ms"].GetDouble(),
                static_cast<unsigned long long>(st["overruns"].GetUint64()),
                static_cast<unsigned long long>(s["faults"].GetUint64()),
                static_cast<unsigned long long>(s["reloads"].GetUint64()));
    std::printf("exec       p50 %s  p99 %s  max %s\n", usText(st["exec"], "p50_us").c_str(),
                usText(st["exec"], "p99_us").c_str(), usText(st["exec"], "max_us").c_str());
    std::printf("lateness   p50 %s  p99 %s  max %s\n", usText(st["lateness"], "p50_us").c_str(),
                usText(st["lateness"], "p99_us").c_str(), usText(st["lateness"], "max_us").c_str());
    for (const rapidjson::Value& t : st["tasks"].GetArray()) {
        std::printf("task       %s every %.3f ms: %llu cycles, exec p99 %s, lateness p99 %s, overruns %llu\n",
                    t["name"].GetString(), t["interval_ms"].GetDouble(),
                    static_cast<unsigned long long>(t["cycles"].GetUint64()), usText(t["exec"], "p99_us").c_str(),
                    usText(t["lateness"], "p99_us").c_str(),
                    static_cast<unsigned long long>(t["overruns"].GetUint64()));
    }
    std::string drivers;
    for (const rapidjson::Value& d : s["drivers"].GetArray()) {
        drivers += fmt::format("{}{} {}", drivers.empty() ? "" : ", ", d["name"].GetString(), d["health"].GetString());
        if (d["reason"].GetStringLength() > 0) {
            drivers += fmt::format(" ({})", d["reason"].GetString());
        }
    }
    std::printf("drivers    %s\n", drivers.empty() ? "none" : drivers.c_str());
    std::printf("forced     %llu\n", static_cast<unsigned long long>(s["forced"].GetUint64()));
    return kExitOk;
}

struct SetOptions {
    ControlConnectOptions connect;
    std::string name;
    std::string value;
    bool all = false;
};

bool isAddress(const std::string& name) {
    return !name.empty() && name[0] == '%';
}

std::string targetParams(const std::string& name) {
    return fmt::format("{{\"{}\":{}", isAddress(name) ? "address" : "name", jsonQuoted(name));
}

// write / force: VALUE travels as literal text; the runtime parses it for the variable's type.
int runSet(const char* command, const char* verb, const SetOptions& o) {
    ShellClient shell(command);
    if (const int rc = shell.connect(o.connect, agent::Role::Engineer); rc != kExitOk) {
        return rc;
    }
    const std::string method = fmt::format("{}.{}", isAddress(o.name) ? "io" : "var", verb);
    rapidjson::Document r;
    if (const int rc = shell.call(method, targetParams(o.name) + ",\"value\":" + jsonQuoted(o.value) + "}", r);
        rc != kExitOk) {
        return rc;
    }
    // A write answers with the value it wrote, as the runtime decoded it; a force is read back
    // (it holds, so the read shows it).
    const bool write = verb[0] == 'w';
    rapidjson::Document back;
    const std::string read = isAddress(o.name) ? "io.read" : "var.read";
    const std::string key = isAddress(o.name) ? "addresses" : "names";
    const bool readBack = shell.call(read, fmt::format("{{\"{}\":[{}]}}", key, jsonQuoted(o.name)), back) == kExitOk;
    const std::string now = readBack ? agent::formatIecLiteral(back["values"].MemberBegin()->value) : std::string();
    const std::string shown = write ? agent::formatIecLiteral(r["value"]) : now;
    std::printf("%s %s %s (cycle %llu)\n", o.name.c_str(), write ? ":=" : "forced to", shown.c_str(),
                static_cast<unsigned long long>(r["cycle"].GetUint64()));
    // A write lands once: a variable the inputs or the program assign every cycle holds it for
    // that cycle only, which is worth a line rather than a silent surprise.
    if (write && readBack && now != shown) {
        std::printf("%s reads %s at cycle %llu: the inputs or the program changed it since (takt force holds "
                    "a value)\n",
                    o.name.c_str(), now.c_str(), static_cast<unsigned long long>(back["cycle"].GetUint64()));
    }
    return kExitOk;
}

int runUnforce(const SetOptions& o) {
    if (o.all == !o.name.empty()) {
        std::fprintf(stderr, "takt unforce: give a variable or address, or --all\n");
        return kExitInvalidProject;
    }
    ShellClient shell("takt unforce");
    if (const int rc = shell.connect(o.connect, agent::Role::Engineer); rc != kExitOk) {
        return rc;
    }
    std::vector<std::string> names;
    if (o.all) {
        rapidjson::Document f;
        if (const int rc = shell.call("var.forced", "", f); rc != kExitOk) {
            return rc;
        }
        for (const rapidjson::Value& e : f["forced"].GetArray()) {
            names.emplace_back(e["name"].GetString());
        }
    } else {
        names.push_back(o.name);
    }
    for (const std::string& n : names) {
        rapidjson::Document r;
        const std::string method = isAddress(n) ? "io.unforce" : "var.unforce";
        if (const int rc = shell.call(method, targetParams(n) + "}", r); rc != kExitOk) {
            return rc;
        }
        std::printf("%s released\n", n.c_str());
    }
    if (names.empty()) {
        std::printf("nothing is forced\n");
    }
    return kExitOk;
}

struct RunControlOptions {
    ControlConnectOptions connect;
    bool cold = false;
};

// stop / start / restart: one runtime.* call; the answer is the state the command left, which
// the runtime records as it applies it at the cycle boundary.
int runRunControl(const char* command, const char* method, const RunControlOptions& o) {
    ShellClient shell(command);
    if (const int rc = shell.connect(o.connect, agent::Role::Operator); rc != kExitOk) {
        return rc;
    }
    rapidjson::Document r;
    const std::string params = std::string_view(method) == "runtime.restart"
                                   ? fmt::format("{{\"mode\":\"{}\"}}", o.cold ? "cold" : "warm")
                                   : std::string();
    if (const int rc = shell.call(method, params, r); rc != kExitOk) {
        return rc;
    }
    const std::string_view state = r["state"].GetString();
    std::printf("%s at cycle %llu%s\n", r["state"].GetString(), static_cast<unsigned long long>(r["cycle"].GetUint64()),
                state == "stopped" ? " (outputs in the safe state)" : "");
    return kExitOk;
}

struct EventsOptions {
    ControlConnectOptions connect;
    std::vector<std::string> types;
    bool json = false;
};

// "2026-11-26 19:48:08.123 fault cycle=12 kind=runtime message='…'" from an event's params.
std::string eventLine(const rapidjson::Value& e) {
    const std::int64_t ms = e.HasMember("ts") && e["ts"].IsInt64() ? e["ts"].GetInt64() : 0;
    const std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    std::string line = fmt::format("{}.{:03}Z {}", when, ms % 1000, e.HasMember("type") ? e["type"].GetString() : "?");
    for (auto it = e.MemberBegin(); it != e.MemberEnd(); ++it) {
        const std::string_view key = it->name.GetString();
        if (key == "type" || key == "ts") {
            continue;
        }
        const rapidjson::Value& v = it->value;
        std::string text;
        if (v.IsString()) {
            text = fmt::format("'{}'", v.GetString());
        } else if (v.IsInt64()) {
            text = std::to_string(v.GetInt64());
        } else if (v.IsNumber()) {
            text = fmt::format("{}", v.GetDouble());
        } else if (v.IsBool()) {
            text = v.GetBool() ? "true" : "false";
        } else {
            text = jsonText(v);
        }
        line += fmt::format(" {}={}", key, text);
    }
    return line;
}

int runEvents(const EventsOptions& o) {
    takeStopSignals();
    ShellClient shell("takt events");
    if (const int rc = shell.connect(o.connect, agent::Role::Viewer); rc != kExitOk) {
        return rc;
    }
    std::string params;
    if (!o.types.empty()) {
        for (const std::string& t : o.types) {
            params += (params.empty() ? "" : ",") + jsonQuoted(t);
        }
        params = "{\"types\":[" + params + "]}";
    }
    rapidjson::Document r;
    if (const int rc = shell.call("events.subscribe", params, r); rc != kExitOk) {
        return rc;
    }
    std::fprintf(stderr, "takt events: streaming from %s until Ctrl-C\n", shell.endpoint().c_str());
    std::string line;
    while (!stopRequested()) {
        if (!shell.client().readLine(line, 200)) {
            if (shell.client().closed()) {
                std::fprintf(stderr, "takt events: the runtime closed the connection\n");
                return kExitControlUnreachable;
            }
            continue;
        }
        rapidjson::Document n;
        n.Parse(line.c_str(), line.size());
        if (n.HasParseError() || !n.IsObject() || !n.HasMember("params") || !n["params"].IsObject()) {
            continue;
        }
        if (o.json) {
            std::printf("%s\n", jsonText(n["params"]).c_str());
        } else {
            std::printf("%s\n", eventLine(n["params"]).c_str());
        }
        std::fflush(stdout);
    }
    return kExitOk;
}

} // namespace

void registerShell(CLI::App& app, int& exitCode) {
    auto status = std::make_shared<StatusOptions>();
    CLI::App* s = app.add_subcommand("status", "Summary of a running runtime: state, cycles, timing, drivers");
    addConnectOptions(*s, status->connect);
    s->add_flag("--json", status->json, "Print runtime.status and runtime.stats as one JSON document");
    s->callback([status, &exitCode] { exitCode = runStatus(*status); });

    const auto addSet = [&](const char* name, const char* help, const char* verb) {
        auto o = std::make_shared<SetOptions>();
        CLI::App* c = app.add_subcommand(name, help);
        addConnectOptions(*c, o->connect);
        c->add_option("variable", o->name, "Variable path (Main.speed) or direct address (%QX0.1)")->required();
        c->add_option("value", o->value, "IEC literal: T#330ms, 16#00FF, 'text', Mode#Auto, TRUE, -1.5")->required();
        c->callback(
            [o, name, verb, &exitCode] { exitCode = runSet(name[0] == 'w' ? "takt write" : "takt force", verb, *o); });
    };
    addSet("write", "Write a variable of a running runtime once, at the next cycle boundary", "write");
    addSet("force", "Force a variable of a running runtime to a value every cycle until unforced", "force");

    auto unforce = std::make_shared<SetOptions>();
    CLI::App* u = app.add_subcommand("unforce", "Release a forced variable or address, or --all");
    addConnectOptions(*u, unforce->connect);
    u->add_option("variable", unforce->name, "Variable path or direct address");
    u->add_flag("--all", unforce->all, "Release every forced variable and address");
    u->callback([unforce, &exitCode] { exitCode = runUnforce(*unforce); });

    const auto addRunControl = [&](const char* name, const char* help, const char* command, const char* method) {
        auto o = std::make_shared<RunControlOptions>();
        CLI::App* c = app.add_subcommand(name, help);
        addConnectOptions(*c, o->connect);
        if (std::string_view(name) == "restart") {
            c->add_flag("--cold", o->cold, "Cold restart: RETAIN variables get their initial values too");
        }
        c->callback([o, command, method, &exitCode] { exitCode = runRunControl(command, method, *o); });
    };
    addRunControl("stop", "Stop a running runtime's program and latch the safe state (the process stays up)",
                  "takt stop", "runtime.stop");
    addRunControl("start", "Run a stopped program again, releasing the safe state", "takt start", "runtime.start");
    addRunControl("restart", "Restart a running runtime's program: warm (RETAIN kept) or --cold", "takt restart",
                  "runtime.restart");

    auto events = std::make_shared<EventsOptions>();
    CLI::App* e = app.add_subcommand("events", "Stream a running runtime's events until Ctrl-C");
    addConnectOptions(*e, events->connect);
    e->add_option("--type", events->types, "Only events of this type (repeatable): fault, cycle_overrun, …");
    e->add_flag("--json", events->json, "One JSON object per event on stdout");
    e->callback([events, &exitCode] { exitCode = runEvents(*events); });
}

} // namespace takt::cli
