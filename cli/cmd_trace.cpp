// `takt trace start|list|read|stop|remove`: the trace.* methods of a running runtime from the
// shell (docs/trace.md). `read` waits for the capture when asked (--wait) and writes the samples
// as CSV or JSON, on stdout or into a file, all pages of them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "run_support.h"
#include "shell_client.h"
#include "takt/bytecode/container.h"
#include "takt/engine/scan_loop.h"

namespace takt::cli {

namespace {

struct TraceOptions {
    ControlConnectOptions connect;
    // start
    std::vector<std::string> variables;
    std::string task;
    std::string trigger;
    std::string edge = "rising";
    bool edgeGiven = false;
    std::optional<double> level;
    std::optional<std::uint32_t> pre;
    std::optional<std::uint32_t> post;
    // list
    bool json = false;
    // read, stop, remove
    std::uint32_t id = 0;
    std::string format = "csv";
    std::string output;
    std::string wait;
};

int runStart(const TraceOptions& o) {
    if (o.trigger.empty() && (o.level || o.edgeGiven || o.pre)) {
        std::fprintf(stderr, "takt trace start: --edge, --level and --pre need --trigger VAR\n");
        return kExitInvalidProject;
    }
    if (o.level && !std::isfinite(*o.level)) {
        std::fprintf(stderr, "takt trace start: --level: expected a finite number\n");
        return kExitInvalidProject;
    }
    ShellClient shell("takt trace start");
    if (const int rc = shell.connect(o.connect, agent::Role::Engineer); rc != kExitOk) {
        return rc;
    }
    std::string vars;
    for (const std::string& v : o.variables) {
        vars += (vars.empty() ? "" : ",") + jsonQuoted(v);
    }
    std::string params = fmt::format("{{\"variables\":[{}]", vars);
    if (!o.task.empty()) {
        params += fmt::format(",\"task\":{}", jsonQuoted(o.task));
    }
    if (!o.trigger.empty()) {
        params += fmt::format(",\"trigger\":{{\"variable\":{},\"edge\":{}{}}}", jsonQuoted(o.trigger),
                              jsonQuoted(o.edge), o.level ? fmt::format(",\"level\":{}", *o.level) : "");
    }
    if (o.pre) {
        params += fmt::format(",\"pre\":{}", *o.pre);
    }
    if (o.post) {
        params += fmt::format(",\"post\":{}", *o.post);
    }
    params += "}";
    rapidjson::Document result;
    if (const int rc = shell.call("trace.start", params, result); rc != kExitOk) {
        return rc;
    }
    std::printf("%u\n", result["id"].GetUint());
    std::fprintf(stderr, "trace %u %s on %s\n", result["id"].GetUint(), result["state"].GetString(),
                 result["task"].GetStringLength() > 0 ? result["task"].GetString() : "the cycle");
    return kExitOk;
}

int runList(const TraceOptions& o) {
    ShellClient shell("takt trace list");
    if (const int rc = shell.connect(o.connect, agent::Role::Viewer); rc != kExitOk) {
        return rc;
    }
    rapidjson::Document result;
    if (const int rc = shell.call("trace.list", "{}", result); rc != kExitOk) {
        return rc;
    }
    if (o.json) {
        std::printf("%s\n", jsonText(result).c_str());
        return kExitOk;
    }
    std::printf("%-4s %-16s %-10s %-8s %s\n", "ID", "TASK", "STATE", "SAMPLES", "TRIGGER");
    for (const rapidjson::Value& t : result["traces"].GetArray()) {
        std::printf("%-4u %-16s %-10s %-8llu %s%s\n", t["id"].GetUint(), t["task"].GetString(),
                    t["running"].GetBool() || std::string_view(t["state"].GetString()) == "done"
                        ? t["state"].GetString()
                        : "stopped",
                    static_cast<unsigned long long>(t["samples_taken"].GetUint64()),
                    t["trigger"].IsString() ? t["trigger"].GetString() : "-",
                    t["ended"].IsString() ? fmt::format(" (ended: {})", t["ended"].GetString()).c_str() : "");
    }
    return kExitOk;
}

// Until trace `id` is done or stopped, `waitNs` at most; kExitOk when it is.
int waitDone(ShellClient& shell, std::uint32_t id, std::int64_t waitNs) {
    const std::int64_t until = engine::monotonicNs() + waitNs;
    for (;;) {
        rapidjson::Document list;
        if (const int rc = shell.call("trace.list", "{}", list); rc != kExitOk) {
            return rc;
        }
        bool known = false;
        for (const rapidjson::Value& t : list["traces"].GetArray()) {
            if (t["id"].GetUint() == id) {
                known = true;
                if (!t["running"].GetBool()) {
                    return kExitOk;
                }
            }
        }
        if (!known) {
            std::fprintf(stderr, "takt trace read: no trace %u: takt trace list lists them\n", id);
            return kExitControlError;
        }
        if (engine::monotonicNs() >= until || stopRequested(200)) {
            std::fprintf(stderr, "takt trace read: trace %u is not done yet: wait longer (--wait) or stop it\n", id);
            return kExitControlError;
        }
    }
}

int runRead(const TraceOptions& o) {
    ShellClient shell("takt trace read");
    if (const int rc = shell.connect(o.connect, agent::Role::Viewer); rc != kExitOk) {
        return rc;
    }
    if (!o.wait.empty()) {
        const std::optional<std::int64_t> waitNs = parseDurationNs(o.wait);
        if (!waitNs) {
            std::fprintf(stderr, "takt trace read: --wait '%s': expected a duration such as 30s\n", o.wait.c_str());
            return kExitInvalidProject;
        }
        takeStopSignals();
        if (const int rc = waitDone(shell, o.id, *waitNs); rc != kExitOk) {
            return rc;
        }
    }
    // Every page, in order; the CSV header once.
    std::string out;
    std::string json;
    std::uint64_t offset = 0;
    for (;;) {
        rapidjson::Document page;
        const std::string params = fmt::format("{{\"id\":{},\"format\":{},\"offset\":{},\"limit\":10000}}", o.id,
                                               jsonQuoted(o.format), offset);
        if (const int rc = shell.call("trace.read", params, page); rc != kExitOk) {
            return rc;
        }
        const std::uint64_t total = page["samples"].GetUint64();
        const std::uint64_t count = page["count"].GetUint64(); // rows in this page
        if (o.format == "csv") {
            std::string text = page["csv"].GetString();
            if (offset > 0) {
                text.erase(0, text.find('\n') + 1); // the header only once (no quoted field in it)
            }
            out += text;
        } else {
            if (offset == 0) {
                json = jsonText(page);
            } else {
                // Later pages' rows go into the first page's array.
                std::string rows = jsonText(page["rows"]);
                json.insert(json.rfind(']'),
                            (json[json.rfind(']') - 1] == '[' ? "" : ",") + rows.substr(1, rows.size() - 2));
            }
        }
        offset += count;
        if (count == 0 || offset >= total) {
            break;
        }
    }
    if (o.format != "csv") {
        out = json + "\n";
    }
    if (o.output.empty()) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        return kExitOk;
    }
    const std::string error = bytecode::writeFileAtomically(
        o.output, std::span(reinterpret_cast<const std::uint8_t*>(out.data()), out.size()));
    if (!error.empty()) {
        std::fprintf(stderr, "takt trace read: %s\n", error.c_str());
        return kExitControlError;
    }
    std::fprintf(stderr, "takt trace read: %llu samples written to %s\n", static_cast<unsigned long long>(offset),
                 o.output.c_str());
    return kExitOk;
}

int runSimple(const char* command, const char* method, const TraceOptions& o) {
    ShellClient shell(command);
    if (const int rc = shell.connect(o.connect, agent::Role::Engineer); rc != kExitOk) {
        return rc;
    }
    rapidjson::Document result;
    return shell.call(method, fmt::format("{{\"id\":{}}}", o.id), result);
}

} // namespace

void registerTrace(CLI::App& app, int& exitCode) {
    CLI::App* trace = app.add_subcommand(
        "trace", "Traces of a running runtime: variables sampled every cycle of a task, with a trigger");
    trace->require_subcommand(1);
    auto o = std::make_shared<TraceOptions>();

    CLI::App* start = trace->add_subcommand("start", "Start a trace; prints its id");
    addConnectOptions(*start, o->connect);
    start->add_option("variables", o->variables, "Variable paths (at most 32): Main.level, fb.Q, arr[2]")->required();
    start->add_option("--task", o->task, "The task whose cycles are sampled (needed with more than one task)");
    start->add_option("--trigger", o->trigger, "The variable whose edge or level crossing triggers the capture");
    start
        ->add_option_function<std::string>(
            "--edge",
            [o](const std::string& e) {
                o->edge = e;
                o->edgeGiven = true;
            },
            "rising (default), falling or both")
        ->check(CLI::IsMember({"rising", "falling", "both"}));
    start->add_option("--level", o->level, "A number's level to cross (not for a BOOL)");
    start->add_option("--pre", o->pre, "Samples kept before the trigger (default 0)");
    start->add_option("--post", o->post, "Samples from the trigger on, or in all without one (default 1000)");
    start->callback([o, &exitCode] { exitCode = runStart(*o); });

    CLI::App* list = trace->add_subcommand("list", "List the traces with their state");
    addConnectOptions(*list, o->connect);
    list->add_flag("--json", o->json, "Print the JSON reply");
    list->callback([o, &exitCode] { exitCode = runList(*o); });

    CLI::App* read = trace->add_subcommand("read", "Write a done or stopped trace's samples as CSV or JSON");
    addConnectOptions(*read, o->connect);
    read->add_option("id", o->id, "The trace's id")->required();
    read->add_option("--format", o->format, "csv (default) or json")->check(CLI::IsMember({"csv", "json"}));
    read->add_option("--output,-o", o->output, "Write into this file instead of stdout");
    read->add_option("--wait", o->wait, "Wait up to this long for the trace to be done, such as 30s");
    read->callback([o, &exitCode] { exitCode = runRead(*o); });

    CLI::App* stop = trace->add_subcommand("stop", "Stop a trace; its samples stay readable");
    addConnectOptions(*stop, o->connect);
    stop->add_option("id", o->id, "The trace's id")->required();
    stop->callback([o, &exitCode] { exitCode = runSimple("takt trace stop", "trace.stop", *o); });

    CLI::App* remove = trace->add_subcommand("remove", "Stop a trace and drop its samples");
    addConnectOptions(*remove, o->connect);
    remove->add_option("id", o->id, "The trace's id")->required();
    remove->callback([o, &exitCode] { exitCode = runSimple("takt trace remove", "trace.remove", *o); });
}

} // namespace takt::cli
