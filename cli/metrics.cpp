#include "metrics.h"

#include <array>
#include <cstdint>

#include <fmt/format.h>

namespace takt::cli {
namespace {

// Histogram bucket bounds in seconds: the range a scan's execution time and start lateness live
// in, from 10 µs (a small program on a PC) to 1 s (a badly overrunning one).
constexpr std::array<double, 16> kBounds = {10e-6, 20e-6, 50e-6, 100e-6, 200e-6, 500e-6, 1e-3,   2e-3,
                                            5e-3,  10e-3, 20e-3, 50e-3,  100e-3, 200e-3, 500e-3, 1.0};

void counter(std::string& out, const char* name, const char* help, std::uint64_t value) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} counter\n{0} {2}\n", name, help, value);
}

// The loop's fine-grained histogram folded into the fixed bounds: a record counts under `le` when
// its bucket's upper edge is at most the bound, so the counts never claim more than was measured.
// One series of a histogram; `labels` ("task=\"Fast\",") go before `le`.
void histogramSeries(std::string& out, const char* name, const std::string& labels, const engine::LatencyHistogram& h) {
    const std::vector<engine::HistogramBucket> buckets = h.buckets();
    const engine::HistogramSummary summary = h.summary();
    std::uint64_t total = 0;
    for (const engine::HistogramBucket& b : buckets) {
        total += b.count;
    }
    for (const double bound : kBounds) {
        const auto limit = static_cast<std::int64_t>(bound * 1e9);
        std::uint64_t below = 0;
        for (const engine::HistogramBucket& b : buckets) {
            if (b.high <= limit) {
                below += b.count;
            }
        }
        out += fmt::format("{}_bucket{{{}le=\"{}\"}} {}\n", name, labels, bound, below);
    }
    out += fmt::format("{}_bucket{{{}le=\"+Inf\"}} {}\n", name, labels, total);
    const std::string plain = labels.empty() ? std::string() : "{" + labels.substr(0, labels.size() - 1) + "}";
    out += fmt::format("{}_sum{} {:.9f}\n", name, plain,
                       static_cast<double>(summary.mean) * static_cast<double>(total) / 1e9);
    out += fmt::format("{}_count{} {}\n", name, plain, total);
}

void histogram(std::string& out, const char* name, const char* help, const engine::LatencyHistogram& h) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} histogram\n", name, help);
    histogramSeries(out, name, "", h);
}

// A label value with \, " and newline escaped, as the format asks.
std::string label(const std::string& text) {
    std::string out;
    for (const char c : text) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

// Tasks on scan threads of their own: cycles, overruns, skipped releases and the two histograms,
// labelled with the task's name.
void taskMetrics(std::string& out, const engine::ScanLoop& loop) {
    if (loop.taskThread(0) == nullptr) {
        return;
    }
    const auto each = [&](const char* name, const char* help, const char* type, auto&& series) {
        out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n", name, help, type);
        for (std::size_t t = 0; const engine::TaskThread* task = loop.taskThread(t); ++t) {
            series(t, *task, fmt::format("task=\"{}\",", label(task->name)));
        }
    };
    const auto counterOf = [&](const char* name, auto value) {
        return [&out, name, value](std::size_t, const engine::TaskThread& task, const std::string& labels) {
            out += fmt::format("{}{{{}}} {}\n", name, labels.substr(0, labels.size() - 1), value(task));
        };
    };
    each("takt_task_cycles_total", "Cycles a task ran on its own thread.", "counter",
         counterOf("takt_task_cycles_total", [](const engine::TaskThread& t) { return t.cycles.load(); }));
    each("takt_task_overruns_total", "Cycles of a task that ended after its next release.", "counter",
         counterOf("takt_task_overruns_total", [](const engine::TaskThread& t) { return t.overruns.load(); }));
    each("takt_task_missed_releases_total", "Releases of a task skipped after overruns or a long park.", "counter",
         counterOf("takt_task_missed_releases_total", [](const engine::TaskThread& t) { return t.missed.load(); }));
    each("takt_task_exec_seconds", "Execution time of a task's cycle (its I/O copy and programs).", "histogram",
         [&](std::size_t t, const engine::TaskThread&, const std::string& labels) {
             if (const engine::LatencyHistogram* h = loop.taskExecTime(t)) {
                 histogramSeries(out, "takt_task_exec_seconds", labels, *h);
             }
         });
    each("takt_task_lateness_seconds", "Start of a task's cycle after its release.", "histogram",
         [&](std::size_t t, const engine::TaskThread&, const std::string& labels) {
             if (const engine::LatencyHistogram* h = loop.taskLateness(t)) {
                 histogramSeries(out, "takt_task_lateness_seconds", labels, *h);
             }
         });
}

} // namespace

std::string prometheusText(const engine::ScanLoop& loop, const std::vector<agent::DriverHealthView>& health,
                           const agent::OpcuaHealth* opcua) {
    const engine::ScanSnapshot s = loop.snapshot();
    std::string out;
    counter(out, "takt_cycles_total", "Scan cycles run.", s.cycles);
    counter(out, "takt_overruns_total", "Cycles that ended after the next release.", s.overruns);
    counter(out, "takt_missed_releases_total", "Releases skipped after overruns.", s.missedReleases);
    counter(out, "takt_faults_total", "Runtime faults (division by zero, bounds, ...) and watchdog trips.", s.faults);
    counter(out, "takt_watchdog_trips_total", "Watchdog timeouts.", s.watchdogTrips);
    counter(out, "takt_restarts_total", "Program restarts after a fault.", s.restarts);
    counter(out, "takt_reloads_total", "Online changes applied.", s.reloads);
    counter(out, "takt_retain_saves_total", "RETAIN images written.", loop.retainSaves());
    counter(out, "takt_retain_failures_total", "RETAIN saves that failed.", loop.retainFailures());
    out += "# HELP takt_state The scan loop's state (1 for the current one).\n# TYPE takt_state gauge\n";
    for (const engine::ScanState state : {engine::ScanState::Running, engine::ScanState::Paused,
                                          engine::ScanState::Stopped, engine::ScanState::Halted}) {
        out += fmt::format("takt_state{{state=\"{}\"}} {}\n", engine::scanStateName(state), state == s.state ? 1 : 0);
    }
    histogram(out, "takt_scan_exec_seconds", "Execution time of a scan (inputs, programs, outputs).", loop.execTime());
    histogram(out, "takt_scan_lateness_seconds", "Start of a scan after its release.", loop.lateness());
    taskMetrics(out, loop);
    out += "# HELP takt_driver_health A driver's health (1 for the current one).\n# TYPE takt_driver_health gauge\n";
    for (const agent::DriverHealthView& d : health) {
        for (const char* h : {"ok", "degraded", "faulted"}) {
            out += fmt::format("takt_driver_health{{driver=\"{}\",health=\"{}\"}} {}\n", label(d.name), h,
                               d.health == h ? 1 : 0);
        }
    }
    if (opcua != nullptr) {
        out += "# HELP takt_opcua_up The OPC UA server listens and answers its liveness ping (1), or not (0).\n"
               "# TYPE takt_opcua_up gauge\n";
        out += fmt::format("takt_opcua_up {}\n", opcua->state == "running" ? 1 : 0);
        counter(out, "takt_opcua_restarts_total", "Starts of the OPC UA server process after the first.",
                opcua->restarts);
        out += fmt::format("# HELP takt_opcua_sessions OPC UA sessions open.\n# TYPE takt_opcua_sessions gauge\n"
                           "takt_opcua_sessions {}\n",
                           opcua->sessions);
        out += fmt::format("# HELP takt_opcua_subscriptions OPC UA subscriptions.\n# TYPE takt_opcua_subscriptions "
                           "gauge\ntakt_opcua_subscriptions {}\n",
                           opcua->subscriptions);
        out += fmt::format("# HELP takt_opcua_monitored_items OPC UA monitored items of all sessions.\n"
                           "# TYPE takt_opcua_monitored_items gauge\ntakt_opcua_monitored_items {}\n",
                           opcua->monitoredItems);
    }
    return out;
}

} // namespace takt::cli
