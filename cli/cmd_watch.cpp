// `takt vars [PATTERN] [--json]` and `takt watch VAR… [--count N] [--interval 500ms] [--json]`:
// the symbol browse and a watch list of a running runtime, values shown as IEC literals.
// On a terminal `watch` redraws one table in place; otherwise it prints one line per sample
// ("cycle=N VAR=VALUE …"), which scripts and logs can read.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "commands.h"
#include "run_support.h"
#include "shell_client.h"
#include "takt/agent/iec_literal.h"

namespace takt::cli {

namespace {

struct VarsOptions {
    ControlConnectOptions connect;
    std::string pattern;
    bool json = false;
};

int runVars(const VarsOptions& o) {
    ShellClient shell("takt vars");
    if (const int rc = shell.connect(o.connect, agent::Role::Viewer); rc != kExitOk) {
        return rc;
    }
    // Pages of the largest size var.list allows until every match is in.
    std::vector<std::string> rows;
    std::string json;
    std::uint64_t offset = 0;
    for (;;) {
        rapidjson::Document page;
        const std::string params =
            fmt::format("{{\"pattern\":{},\"offset\":{},\"limit\":1000}}", jsonQuoted(o.pattern), offset);
        if (const int rc = shell.call("var.list", params, page); rc != kExitOk) {
            return rc;
        }
        const rapidjson::Value& vars = page["variables"];
        for (const rapidjson::Value& v : vars.GetArray()) {
            json += (json.empty() ? "" : ",") + jsonText(v);
            rows.push_back(fmt::format("{:<40} {:<24} {:<10} {:<6} {}", v["path"].GetString(), v["type"].GetString(),
                                       v["address"].IsString() ? v["address"].GetString() : "",
                                       v["retain"].GetBool() ? "retain" : "", v["forced"].GetBool() ? "forced" : ""));
        }
        offset += vars.Size();
        if (vars.Empty() || offset >= page["total"].GetUint64()) {
            break;
        }
    }
    if (o.json) {
        std::printf("{\"variables\":[%s]}\n", json.c_str());
        return kExitOk;
    }
    std::printf("%-40s %-24s %-10s %-6s %s\n", "PATH", "TYPE", "ADDRESS", "RETAIN", "FORCED");
    for (const std::string& r : rows) {
        std::printf("%s\n", r.c_str());
    }
    std::fprintf(stderr, "%zu variable(s)\n", rows.size());
    return kExitOk;
}

struct WatchOptions {
    ControlConnectOptions connect;
    std::vector<std::string> names;
    int count = 0; // 0: until Ctrl-C
    std::string interval = "500ms";
    bool json = false;
};

int runWatch(const WatchOptions& o) {
    const std::optional<std::int64_t> intervalNs = parseDurationNs(o.interval);
    if (!intervalNs || *intervalNs < 10'000'000) {
        std::fprintf(stderr, "takt watch: --interval '%s': expected a duration of at least 10ms such as 500ms\n",
                     o.interval.c_str());
        return kExitInvalidProject;
    }
    takeStopSignals();
    ShellClient shell("takt watch");
    if (const int rc = shell.connect(o.connect, agent::Role::Viewer); rc != kExitOk) {
        return rc;
    }
    std::string names;
    for (const std::string& n : o.names) {
        names += (names.empty() ? "" : ",") + jsonQuoted(n);
    }
    const std::string params = "{\"names\":[" + names + "]}";
    const bool table = !o.json && isatty(STDOUT_FILENO) == 1;
    std::size_t width = 8;
    for (const std::string& n : o.names) {
        width = std::max(width, n.size());
    }
    for (int sample = 0; o.count == 0 || sample < o.count; ++sample) {
        if (sample > 0 && stopRequested(static_cast<int>(*intervalNs / 1'000'000))) {
            break;
        }
        rapidjson::Document d;
        if (const int rc = shell.call("var.read", params, d); rc != kExitOk) {
            return rc;
        }
        const rapidjson::Value& values = d["values"];
        const std::uint64_t cycle = d["cycle"].GetUint64();
        if (o.json) {
            // One JSON object per line: the cycle and each value as typed JSON and as its literal.
            std::string line;
            for (const std::string& n : o.names) {
                const rapidjson::Value& v = values[n.c_str()];
                line += fmt::format("{}{}:{{\"literal\":{},\"value\":{}}}", line.empty() ? "" : ",", jsonQuoted(n),
                                    jsonQuoted(agent::formatIecLiteral(v)), jsonText(v));
            }
            std::printf("{\"cycle\":%llu,\"values\":{%s}}\n", static_cast<unsigned long long>(cycle), line.c_str());
        } else if (table) {
            if (sample > 0) {
                std::printf("\033[%zuA", o.names.size() + 1); // back to the header line
            }
            std::printf("\r\033[K%-*s  %s  (cycle %llu)\n", static_cast<int>(width), "VARIABLE", "VALUE",
                        static_cast<unsigned long long>(cycle));
            for (const std::string& n : o.names) {
                std::printf("\r\033[K%-*s  %s\n", static_cast<int>(width), n.c_str(),
                            agent::formatIecLiteral(values[n.c_str()]).c_str());
            }
        } else {
            std::string line = fmt::format("cycle={}", cycle);
            for (const std::string& n : o.names) {
                line += fmt::format(" {}={}", n, agent::formatIecLiteral(values[n.c_str()]));
            }
            std::printf("%s\n", line.c_str());
        }
        std::fflush(stdout);
    }
    return kExitOk;
}

} // namespace

void registerWatch(CLI::App& app, int& exitCode) {
    auto vars = std::make_shared<VarsOptions>();
    CLI::App* v = app.add_subcommand("vars", "List a running runtime's variables: path, type, address, retain, forced");
    addConnectOptions(*v, vars->connect);
    v->add_option("pattern", vars->pattern, "Only paths containing this text, or matching a glob with * and ?");
    v->add_flag("--json", vars->json, "Print one JSON document on stdout");
    v->callback([vars, &exitCode] { exitCode = runVars(*vars); });

    auto watch = std::make_shared<WatchOptions>();
    CLI::App* w = app.add_subcommand("watch", "Watch variables of a running runtime, values as IEC literals");
    addConnectOptions(*w, watch->connect);
    w->add_option("variables", watch->names, "Variable paths: Main.level, fb.Q, arr[2]")->required();
    w->add_option("--count", watch->count, "Stop after this many samples (default: until Ctrl-C)")
        ->check(CLI::NonNegativeNumber);
    w->add_option("--interval", watch->interval, "Time between samples (default 500ms)");
    w->add_flag("--json", watch->json, "One JSON object per sample on stdout");
    w->callback([watch, &exitCode] { exitCode = runWatch(*watch); });
}

} // namespace takt::cli
