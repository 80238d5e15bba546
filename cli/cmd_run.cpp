// `takt run [--project DIR] [--board NAME] [--for 10s] [--restart warm|cold]`
// (CONFIG.md): the runtime. Loads runtime.toml and io.toml, compiles src/ (or
// loads program.stbc), starts the drivers and the scan loop, and shows a live
// status line on a terminal (a log gets state changes, faults and health changes). SIGTERM / SIGINT end
// the run at a cycle boundary: safe state, last retain save, exit 0 (16 when a fault
// halted the program, 17 when the last retain save failed). Started by
// systemd (NOTIFY_SOCKET), it reports READY=1 and pings WATCHDOG=1 while the
// scan makes progress.
#include <algorithm>
#include <array>
#include <csignal>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "commands.h"
#include "live_runtime.h"
#include "metrics.h"
#include "retain_slots.h"
#include "run_log.h"
#include "run_support.h"
#include "systemd_notify.h"
#include "takt/agent/agent_server.h"
#include "takt/agent/applied_program.h"
#include "takt/agent/control.h"
#include "takt/agent/control_config.h"
#include "takt/agent/control_runtime.h"
#include "takt/agent/opcua_config.h"
#include "takt/agent/opcua_placement.h"
#include "takt/agent/sparkplug_config.h"
#include "takt/common/hex.h"
#include "takt/engine/config.h"
#include "takt/engine/overrun_digest.h"
#include "takt/engine/scan_loop.h"
#include "takt/io/board.h"
#include "takt/io/driver_set.h"
#include "takt/io/io_config.h"
#include "web_assets.h"

namespace takt::cli {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
    std::string project;
    std::string board;
    std::string stateDir;
    std::string duration;
    std::string restart = "warm";
    engine::Execution execution = engine::Execution::Interpreter;
    bool executionGiven = false; // --execution overrides [runtime] execution
    // `takt dap` launch (hidden options): the control endpoint it chose replaces runtime.toml's,
    // debugging is on, and its token file is one more engineer token when runtime.toml has tokens
    // (without tokens a Unix peer is admin already). The project's files stay as they are.
    std::string debugEndpoint;
    std::string debugTokenFile;
};

constexpr std::int64_t kStatusPeriodNs = 250'000'000; // 4 Hz
constexpr std::int64_t kLogPeriodNs = 1'000'000'000;  // debug log and systemd STATUS=: once a second

std::string healthText(const std::vector<io::DriverHealthReport>& health) {
    if (health.empty()) {
        return "no drivers";
    }
    std::string out;
    for (const auto& h : health) {
        out += fmt::format("{}{}={}", out.empty() ? "" : ",", h.name, io::healthName(h.status.health));
        if (!h.status.reason.empty()) {
            out += fmt::format("({})", h.status.reason);
        }
    }
    return out;
}

// The health names alone ("modbus-tcp=degraded"): a change is logged, a changing reason is not.
std::string healthNames(const std::vector<io::DriverHealthReport>& health) {
    std::string out;
    for (const auto& h : health) {
        out += fmt::format("{}{}={}", out.empty() ? "" : ",", h.name, io::healthName(h.status.health));
    }
    return out;
}

// The status of the run in one line: the terminal's line, systemd's STATUS= and the stop line.
std::string statusText(const engine::ScanLoop& loop, const std::vector<io::DriverHealthReport>& health) {
    const engine::ScanSnapshot s = loop.snapshot();
    const engine::HistogramSummary exec = loop.execTime().summary();
    const engine::HistogramSummary late = loop.lateness().summary();
    std::string out = fmt::format("{} cycles={} exec p50={} p99={} lateness p99={} overruns={} faults={} io {}",
                                  engine::scanStateName(s.state), s.cycles, formatNs(exec.p50), formatNs(exec.p99),
                                  formatNs(late.p99), s.overruns, s.faults, healthText(health));
    // Tasks on threads of their own: cycles, lateness p99 and overruns of each.
    for (std::size_t t = 0; const engine::TaskThread* task = loop.taskThread(t); ++t) {
        const engine::LatencyHistogram* taskLate = loop.taskLateness(t);
        out += fmt::format(" | {} cycles={} lateness p99={} overruns={}", task->name, task->cycles.load(),
                           formatNs(taskLate != nullptr ? taskLate->summary().p99 : 0), task->overruns.load());
    }
    return out;
}

// The process image, for the stop line and the debug log: what the field saw last.
std::string imageText(const engine::ScanLoop& loop) {
    const engine::ScanSnapshot s = loop.snapshot();
    return fmt::format("%I={} %Q={}", common::hexBytes(std::span(s.inputs.data(), s.inputBytes)),
                       common::hexBytes(std::span(s.outputs.data(), s.outputBytes)));
}

std::string faultText(const engine::FaultRecord& f) {
    std::string where;
    if (!f.report.path.empty()) {
        where = fmt::format(" at {}:{}:{}", f.report.path, f.report.line, f.report.column);
    }
    if (!f.report.pou.empty()) {
        where += fmt::format(" in {}", f.report.pou);
    }
    const char* outcome =
        f.action == engine::FaultAction::Restart ? "program cold-restarted" : "program halted, outputs in safe state";
    return fmt::format("{} fault in cycle {}: {}{}; action {}: {}", f.kind, f.cycle, f.report.message, where,
                       engine::faultActionName(f.action), outcome);
}

// The drivers' health as the control endpoint reports it: refreshed by the main loop four times a
// second, read by the control thread.
class HealthCache {
public:
    void update(const std::vector<io::DriverHealthReport>& health) {
        std::vector<agent::DriverHealthView> views;
        for (const io::DriverHealthReport& h : health) {
            views.push_back({h.name, std::string(io::healthName(h.status.health)), h.status.reason});
        }
        const std::lock_guard lock(mutex_);
        views_ = std::move(views);
    }
    std::vector<agent::DriverHealthView> get() const {
        const std::lock_guard lock(mutex_);
        return views_;
    }

private:
    mutable std::mutex mutex_;
    std::vector<agent::DriverHealthView> views_;
};

// The rest of ControlOptions for the server: the audit log under the state directory's .takt/
// and the Unix socket's directory created. The tokens were read and checked by loadConfigs.
void completeControlOptions(const engine::RuntimeConfig& config, const fs::path& state, agent::ControlOptions& out) {
    out.version = std::string(agent::taktVersion());
    std::error_code ec;
    fs::create_directories(state / ".takt", ec);
    out.auditLog = (state / ".takt" / "audit.log").string();
    if (config.control.endpoint.starts_with("unix://")) {
        fs::create_directories(fs::path(config.control.endpoint.substr(7)).parent_path(), ec);
    }
}

// A configuration diagnostic on stderr, at its priority under the journal.
void printDiagnostic(const engine::ConfigDiagnostic& d) {
    const bool error = d.severity == engine::ConfigDiagnostic::Severity::Error;
    std::fprintf(stderr, "%s%s\n", journalPrefix(error ? kPriorityError : kPriorityWarning).c_str(),
                 engine::formatDiagnostic(d).c_str());
}

// runtime.toml, the control tokens and the OPC UA users (the same checks as `takt validate`) and the I/O, before
// anything starts: false after printing every refused key.
bool loadConfigs(const fs::path& dir, const RunOptions& options, engine::RuntimeConfig& runtime,
                 agent::ControlOptions& control, agent::OpcuaOptions& opcua, agent::SparkplugOptions& sparkplug,
                 io::IoConfig& io, spdlog::logger& log) {
    engine::RuntimeConfigResult rc = engine::loadRuntimeConfig(dir / "runtime.toml");
    if (!options.debugEndpoint.empty() && !options.debugEndpoint.starts_with("unix://")) {
        // Debugging is on at this endpoint whatever runtime.toml says: only a Unix socket (in
        // takt dap's private folder) keeps it to this user.
        std::fprintf(stderr, "takt run: --debug-endpoint '%s': expected unix://PATH (a Unix socket)\n",
                     options.debugEndpoint.c_str());
        return false;
    }
    if (rc.config && !options.debugEndpoint.empty()) {
        rc.config->control.endpoint = options.debugEndpoint;
        rc.config->control.debugEnabled = true;
    }
    if (rc.config && (!rc.config->control.endpoint.empty() || rc.config->web.enabled)) {
        (void)agent::controlOptionsFromConfig(*rc.config, control, rc.diagnostics);
    }
    if (rc.config) {
        (void)agent::opcuaOptionsFromConfig(*rc.config, opcua, rc.diagnostics);
        (void)agent::sparkplugOptionsFromConfig(*rc.config, sparkplug, rc.diagnostics);
    }
    bool ok = rc.config.has_value();
    for (const engine::ConfigDiagnostic& d : rc.diagnostics) {
        printDiagnostic(d);
        ok = ok && d.severity != engine::ConfigDiagnostic::Severity::Error;
    }
    if (ok && !options.debugTokenFile.empty() && !control.tokens.empty()) {
        agent::ControlToken token{agent::Role::Engineer, {}};
        std::string error;
        if (!agent::readTokenFile(options.debugTokenFile, token.secret, error)) {
            std::fprintf(stderr, "takt run: --debug-token-file: %s\n", error.c_str());
            return false;
        }
        control.tokens.push_back(std::move(token));
    }
    if (!ok) {
        return false;
    }
    runtime = *rc.config;
    io::IoSelection selection = io::selectIoConfig(dir, options.board, runtime.byteAddressing);
    for (const engine::ConfigDiagnostic& d : selection.io.diagnostics) {
        printDiagnostic(d);
    }
    if (!selection.io.config) {
        return false;
    }
    if (selection.board && options.board.empty()) {
        // Nobody chose this I/O: a project without io.toml must not look as if it drove its own
        // machine while it runs on a board's wiring (the default board simulates a filling line).
        log.warn("no io.toml in {}: the I/O is board {}'s ({}), not this project's; write an io.toml (takt init "
                 "shows one) or choose a board with --board NAME (takt boards lists them)",
                 dir.string(), selection.board->name, selection.board->description);
    } else {
        log.info("I/O from {}", selection.origin);
    }
    if (selection.board && io::applyBoardRealtime(*selection.board, runtime)) {
        const engine::RuntimeConfig::Realtime& rt = runtime.realtime;
        log.info("realtime from board {} (runtime.toml has no [runtime.realtime]): scheduler {}{}, cpu_affinity [{}], "
                 "lock_memory {}",
                 selection.board->name, rt.fifo ? "fifo" : "other",
                 rt.fifo ? fmt::format(" priority {}", rt.priority) : "", fmt::join(rt.cpuAffinity, ","),
                 rt.lockMemory);
    }
    io = std::move(*selection.io.config);
    return true;
}

// Logs the events recorded since the last call (the ring keeps the newest kEventCapacity). A
// fault is logged with its details when it is the latest one (older details were replaced).
// Overruns say whether the cycle started late or ran long; after the first of a burst they are
// counted and logged as one summary line per interval (`overruns`).
void logEvents(const engine::ScanLoop& loop, std::uint64_t& seen, engine::OverrunDigest& overruns,
               spdlog::logger& log) {
    const std::uint64_t total = loop.eventCount();
    if (engine::OverrunSummary summary; total == seen && overruns.due(engine::monotonicNs(), summary)) {
        log.warn("cycle_overrun: {}", engine::overrunSummaryText(summary));
    }
    if (total == seen) {
        return;
    }
    const std::vector<engine::ScanEvent> events = loop.events();
    const std::optional<engine::FaultRecord> latest = loop.lastFault();
    const std::uint64_t fresh = total - seen;
    if (fresh > events.size()) {
        log.warn("{} scan events not shown (more than {} since the last status)", fresh - events.size(), events.size());
    }
    const std::size_t first = fresh >= events.size() ? 0 : events.size() - static_cast<std::size_t>(fresh);
    for (std::size_t i = first; i < events.size(); ++i) {
        const engine::ScanEvent& e = events[i];
        switch (e.kind) {
        case engine::ScanEventKind::CycleOverrun:
            if (engine::OverrunSummary summary; overruns.due(e.timeNs, summary)) {
                log.warn("cycle_overrun: {}", engine::overrunSummaryText(summary));
            }
            if (overruns.add(e)) {
                log.warn("cycle_overrun: {} (repeats are summed up every {}s)", engine::overrunText(e),
                         engine::OverrunDigest::kDefaultIntervalNs / 1'000'000'000);
            }
            break;
        case engine::ScanEventKind::RuntimeFault:
        case engine::ScanEventKind::WatchdogTimeout:
        case engine::ScanEventKind::IoFault:
            if (latest && latest->cycle == e.cycle) {
                log.error("{}", faultText(*latest));
            } else {
                log.error("{} fault in cycle {}", engine::faultKindName(e.kind), e.cycle);
            }
            break;
        case engine::ScanEventKind::Restart: log.info("program restarted at cycle {}", e.cycle); break;
        case engine::ScanEventKind::Halt:
            log.warn("program halted after the fault in cycle {}; outputs stay in safe state", e.cycle);
            break;
        case engine::ScanEventKind::Paused: log.info("paused at cycle {}; outputs hold", e.cycle); break;
        case engine::ScanEventKind::Resumed: log.info("resumed at cycle {}", e.cycle); break;
        case engine::ScanEventKind::Stopped: log.info("stopped at cycle {}; outputs in safe state", e.cycle); break;
        case engine::ScanEventKind::Started: log.info("started at cycle {}", e.cycle); break;
        case engine::ScanEventKind::ReloadApplied:
            log.info("online change applied at cycle {}; swap took {}", e.cycle, formatNs(e.valueNs));
            break;
        }
    }
    seen = total;
    if (engine::OverrunSummary summary; overruns.due(engine::monotonicNs(), summary)) {
        log.warn("cycle_overrun: {}", engine::overrunSummaryText(summary));
    }
}

// The exit code of a run that started: a supervisor (systemd, a test script) must see a program
// that ended halted by a fault, or RETAIN values that could not be saved, without reading the log.
// Whether stdin reached EOF or hung up (nothing waits: poll with a zero timeout); what it sends is
// read and dropped.
bool inputEnded() {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) {
        return false;
    }
    if ((p.revents & POLLIN) != 0) {
        std::array<char, 256> buf{};
        return ::read(STDIN_FILENO, buf.data(), buf.size()) == 0;
    }
    return (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

int runOutcome(const engine::ScanLoop& loop, spdlog::logger& log) {
    const bool halted = loop.endedHaltedByFault();
    const std::optional<engine::FaultRecord> fault = loop.lastFault();
    const bool retainLost = loop.finalRetainSave() == engine::RetainSaveResult::Failed;
    if (retainLost) {
        log.error("runtime.retain: the final save failed; RETAIN values since the last successful save are lost "
                  "(exit code {})",
                  kExitRetainSaveFailed);
    }
    if (halted && fault) {
        log.error("exit code {}: the program was halted by a {} fault in cycle {}: {}", kExitRunFault, fault->kind,
                  fault->cycle, fault->report.message);
        return kExitRunFault;
    }
    return retainLost ? kExitRetainSaveFailed : kExitOk;
}

// The program an online change applied before this start replaces the project's, while the
// project is the one it was applied over; `rollback` gets what it replaced. What cannot run is
// said as an error and the project's program runs: the box starts and stays reachable.
void takeAppliedProgram(const agent::AppliedProgramStore& applied, RunnableProgram& program,
                        agent::KeptProgram& rollback, spdlog::logger& log) {
    agent::AppliedLoad kept = applied.load();
    switch (kept.outcome) {
    case agent::AppliedOutcome::None: return;
    case agent::AppliedOutcome::ProjectChanged: log.warn("{}", kept.message); return;
    case agent::AppliedOutcome::Unreadable: log.error("{}", kept.message); return;
    case agent::AppliedOutcome::Kept: break;
    }
    if (!kept.message.empty()) {
        log.warn("{}", kept.message);
    }
    if (kept.programs.running.hash != program.hash) {
        log.info("program {:.16} was applied by an online change at {}: it runs instead of the project's {:.16}",
                 kept.programs.running.hash, kept.programs.appliedAt, program.hash);
    }
    program.origin = fmt::format("{} (online change of {})", applied.directory().string(), kept.programs.appliedAt);
    program.module = std::move(kept.programs.running.module);
    program.hash = std::move(kept.programs.running.hash);
    rollback = std::move(kept.programs.replaced);
}

int runMain(const RunOptions& options) {
    auto log = makeRunLogger("info");
    std::error_code ec;
    const fs::path dir = fs::absolute(options.project.empty() ? fs::current_path(ec) : fs::path(options.project), ec);
    // Runtime state (relative retain path, .takt/audit.log) goes under the project unless a
    // packaged service keeps its project read-only in /etc and its state in /var/lib.
    const fs::path state = options.stateDir.empty() ? dir : fs::absolute(options.stateDir, ec);
    std::optional<std::int64_t> forNs;
    if (!options.duration.empty()) {
        forNs = parseDurationNs(options.duration);
        if (!forNs) {
            std::fprintf(stderr,
                         "takt run: --for '%s': expected a duration such as 10s, "
                         "500ms or 2m\n",
                         options.duration.c_str());
            return kExitInvalidProject;
        }
    }
    engine::RuntimeConfig runtime;
    agent::ControlOptions copts;
    agent::OpcuaOptions opcua;
    io::IoConfig ioConfig;
    agent::SparkplugOptions sparkplug;
    if (!loadConfigs(dir, options, runtime, copts, opcua, sparkplug, ioConfig, *log)) {
        return kExitInvalidProject;
    }
    log->set_level(spdlog::level::from_str(runtime.log.level));
    RunnableProgram program;
    std::string error;
    int exitCode = kExitOk;
    if (!loadRunnableProgram(dir, program, error, exitCode)) {
        std::fputs(error.c_str(), stderr);
        if (!error.empty() && error.back() != '\n') {
            std::fputc('\n', stderr);
        }
        return exitCode;
    }
    // An online change applied before a restart runs again (applied_program.h).
    RunnableProgram inputs; // what the program is built from, without the program itself
    inputs.inputs = program.inputs;
    inputs.buildOptions = program.buildOptions;
    const agent::AppliedProgramStore applied(
        state, [inputs = std::move(inputs)] { return fingerprintOf(inputs); }, program.hash);
    agent::KeptProgram rollback;
    takeAppliedProgram(applied, program, rollback, *log);
    // The CPUs the scan and task threads are pinned to (task_affinity only where the tasks get
    // threads of their own: two or more); every other thread, started from here on with this
    // thread's mask, and the OPC UA server keep off them.
    std::vector<int> scanCpus = runtime.realtime.cpuAffinity;
    if (program.module->tasks.size() >= 2) {
        for (const auto& [task, cpus] : runtime.realtime.taskAffinity) {
            scanCpus.insert(scanCpus.end(), cpus.begin(), cpus.end());
        }
    }
    if (const std::string placed = agent::moveOffScanCpus(scanCpus); !placed.empty()) {
        log->info("realtime: {}", placed);
    }
    const engine::Execution execution =
        options.executionGiven ? options.execution
                               : (runtime.nativeExecution ? engine::Execution::Native : engine::Execution::Interpreter);
    LiveRuntime::Tier tier;
    tier.execution = execution;
    tier.start = runtime.nativeStartWait ? engine::NativeStart::Wait : engine::NativeStart::Background;
    // Told on the compile thread when the program started here has its code (an online change's
    // program is compiled before its swap instead): the switch happens at the next cycle boundary.
    tier.onCompiled = [log](const std::string& status, double compileMs) {
        if (status == "native") {
            log->info("execution: native (compiled in {:.1f} ms in the background; from the next cycle on)", compileMs);
        } else {
            log->warn("execution: {}", status);
        }
    };
    const bool background = execution == engine::Execution::Native && tier.start == engine::NativeStart::Background;
    if (background) { // before the compile starts, so its own line comes after this one
        log->info("execution: the interpreter until the native code is compiled in the background "
                  "([runtime] native_start)");
    }
    const std::unique_ptr<LiveRuntime> live = LiveRuntime::load(program.module, program.hash, error, tier);
    if (live == nullptr) {
        std::fprintf(stderr, "%stakt run: %s\n", journalPrefix(kPriorityError).c_str(), error.c_str());
        return kExitInternal;
    }
    if (execution == engine::Execution::Native && !background) {
        const std::string status = live->executionStatus();
        if (status == "native") {
            log->info("execution: native (compiled in {:.1f} ms)", live->nativeCompileMs());
        } else {
            log->warn("execution: {}", status);
        }
    }
    std::string message;
    if (!live->attachRetain(makeRetainSink(runtime, state, live->engine().program().module(), log),
                            options.restart == "warm", message)) {
        log->warn("warm start: {}; starting cold", message);
    }
    const auto fail = [&](const char* what, int code) {
        live->stop();
        std::fprintf(stderr, "%stakt run: %s%s\n", journalPrefix(kPriorityError).c_str(), what, error.c_str());
        return code;
    };
    if (!live->configureDrivers(ioConfig, 0, error)) {
        return fail("", kExitInvalidProject);
    }
    for (const std::string& w : live->drivers().warnings()) {
        log->warn("{}", w);
    }

    // Signals are taken by this thread only (sigtimedwait); every thread started
    // below inherits the mask, so a SIGTERM never interrupts the scan thread.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    if (!live->startDrivers(error)) {
        return fail("", kExitInvalidProject);
    }
    engine::ScanOptions scan = engine::ScanOptions::fromConfig(runtime);
    // Launched by `takt dap`: the program waits before its first cycle until the client has set
    // its breakpoints (configurationDone resumes it), so code of the first cycles can be halted.
    scan.startPaused = !options.debugEndpoint.empty();
    if (!live->startScan(scan, error)) {
        return fail("", kExitInternal);
    }
    if (scan.startPaused) {
        log->info("paused before the first cycle until the debugger's configuration is done");
    }
    engine::ScanLoop& loop = live->loop();
    io::DriverSet& drivers = live->drivers();
    for (const std::string& w : loop.warnings()) {
        log->warn("realtime: {}", w);
    }
    HealthCache healthCache;
    healthCache.update(drivers.refreshHealth());
    // The control service serves the endpoint and the web server's calls; without an endpoint it
    // listens on nothing.
    // The OPC UA server is made with the control service it calls through (LiveRuntime::
    // serveControl) and started after the web server.
    std::optional<LiveRuntime::OpcuaSetup> opcuaSetup;
    const std::string opcuaHost = opcua.host;
    const auto opcuaPort = opcua.port;
    if (opcua.enabled) {
        agent::OpcuaProcess process;
        process.node = opcua.node;
        process.script = agent::findOpcuaScript(error);
        if (process.script.empty()) {
            return fail("runtime.opcua: ", kExitInvalidProject);
        }
        log->info("opcua: {} on {}", process.script, process.node);
        process.pkiDir = opcua.pkiDir.empty() ? (state / ".takt" / "opcua" / "pki").string() : opcua.pkiDir;
        process.resource = runtime.resourceName;
        process.version = std::string(agent::taktVersion());
        process.cycleIntervalMs = runtime.cycleIntervalMs;
        process.scanCpus = scanCpus;
        opcuaSetup = LiveRuntime::OpcuaSetup{opcua, std::move(process)};
    }
    if (!runtime.control.endpoint.empty() || runtime.web.enabled || opcua.enabled || sparkplug.enabled) {
        agent::RuntimeControlOptions ropts;
        ropts.byteAddressing = runtime.byteAddressing;
        ropts.debugEnabled = runtime.control.debugEnabled;
        ropts.driverHealth = [&healthCache] { return healthCache.get(); };
        ropts.execution = [&live] { return live->executionStatus(); };
        ropts.nativeCompile = [&live] {
            const engine::VmRunner::NativePous pous = live->nativePous();
            return agent::RuntimeControlOptions::NativeCompileView{live->nativeCompileMs(), pous.compiled, pous.reused};
        };
        ropts.changeLog = [log](const std::string& line) { log->info("{}", line); }; // stderr_sink_mt
        ropts.keepApplied = [&applied, log](const bytecode::Module& now, const bytecode::Module* replaced) {
            std::string error = applied.save(now, replaced);
            if (!error.empty()) {
                log->warn("the online change is not kept for the next start (a restart runs the program from "
                          "before it): {}",
                          error);
            }
            return error;
        };
        ropts.rollbackProgram = rollback.module;
        ropts.rollbackHash = rollback.hash;
        if (opcua.enabled) {
            ropts.opcua = [&live] { return live->opcua() != nullptr ? live->opcua()->health() : agent::OpcuaHealth{}; };
        }
        if (sparkplug.enabled) {
            ropts.sparkplug = [&live] {
                return live->sparkplug() != nullptr ? live->sparkplug()->health() : agent::SparkplugHealth{};
            };
        }
        completeControlOptions(runtime, state, copts);
        if (!live->serveControl(copts, std::move(ropts), error, std::move(opcuaSetup))) {
            return fail("runtime.control: ", kExitInvalidProject);
        }
        if (!runtime.control.endpoint.empty()) {
            log->info("control endpoint {}", live->server()->boundEndpoint());
        }
    }
    if (runtime.web.enabled) {
        agent::WebOptions web;
        web.host = runtime.web.host;
        web.port = runtime.web.port;
        web.tokenAuth = runtime.web.tokenAuth;
        if (runtime.web.tls) {
            // Relative to runtime.toml's folder, as every other file it names: a service starts
            // takt run elsewhere than in its project.
            const fs::path base = runtime.file.parent_path();
            web.tlsCert = (base / runtime.web.tlsCert).string();
            web.tlsKey = (base / runtime.web.tlsKey).string();
        }
        web.assets = webAssets();
        const bool page = !web.assets.empty();
        web.metrics = [&live, &healthCache] {
            // The OPC UA server's figures as runtime.status has them (one source).
            const std::optional<agent::OpcuaHealth> opcuaHealth =
                live->opcua() != nullptr ? std::optional(live->opcua()->health()) : std::nullopt;
            return prometheusText(live->loop(), healthCache.get(), opcuaHealth ? &*opcuaHealth : nullptr);
        };
        if (!live->serveWeb(std::move(web), error)) {
            return fail("", kExitInvalidProject);
        }
        log->info("web {} (the page at /, /metrics, /api/rpc{})", live->web()->url(),
                  page ? "" : "; built without the page");
    }
    if (opcua.enabled) {
        if (!live->serveOpcua(error)) {
            return fail("runtime.opcua: ", kExitInternal);
        }
        log->info("OPC UA server starting on {}:{} (a Node.js process beside the runtime)", opcuaHost, opcuaPort);
    }
    if (sparkplug.enabled) {
        agent::SparkplugSetup setup;
        setup.stateDir = state.string();
        setup.cycleIntervalMs = runtime.cycleIntervalMs;
        setup.log = [log](bool warning, const std::string& line) {
            if (warning) {
                log->warn("{}", line);
            } else {
                log->info("{}", line);
            }
        };
        const std::string first = sparkplug.servers.front().url;
        if (!live->serveSparkplug(std::move(sparkplug), std::move(setup), error)) {
            return fail("runtime.sparkplug: ", kExitInternal);
        }
        log->info("Sparkplug B edge node {}/{} connecting to {}", runtime.sparkplug.groupId,
                  runtime.sparkplug.edgeNodeId, first);
    }
    log->info("running {} (program {:.16}) from {}: cycle {} ms, watchdog {}, "
              "fault policy {}, {} driver(s)",
              runtime.resourceName, program.hash, program.origin, runtime.cycleIntervalMs,
              runtime.watchdog.enabled ? fmt::format("{} ms -> {}", runtime.watchdog.timeoutMs,
                                                     engine::faultActionName(runtime.watchdog.action))
                                       : std::string("off"),
              engine::faultActionName(runtime.fault.policy), drivers.driverCount());

    SystemdNotifier systemd;
    systemd.ready(fmt::format("takt running {}", runtime.resourceName));

    // A terminal gets one line redrawn in place; a log (journal, file) gets state changes, faults
    // and driver health changes as they happen, the full status once a second only at debug
    // level, and one line on stop.
    const bool tty = isatty(STDOUT_FILENO) == 1;
    const std::int64_t started = engine::monotonicNs();
    std::int64_t nextLog = started + kLogPeriodNs;
    std::uint64_t eventsSeen = 0;
    engine::OverrunDigest overruns;
    std::uint64_t lastCycles = 0;
    const std::vector<io::DriverHealthReport> startHealth = drivers.refreshHealth();
    std::string healthSeen = healthNames(startHealth);
    log->info("driver health: {}", healthText(startHealth));
    std::string stopReason = "--for elapsed";
    // Launched by takt dap: its stdin is a pipe only the adapter writes to, so EOF there means the
    // adapter is gone, however it ended (a SIGKILL included), and the runtime stops as on SIGTERM.
    const bool stopOnInputEnd = !options.debugEndpoint.empty();
    for (;;) {
        const timespec wait{0, kStatusPeriodNs};
        const int sig = sigtimedwait(&signals, nullptr, &wait);
        if (sig == SIGINT || sig == SIGTERM) {
            stopReason = sig == SIGINT ? "SIGINT" : "SIGTERM";
            break;
        }
        if (stopOnInputEnd && inputEnded()) {
            stopReason = "its debug adapter ended";
            break;
        }
        const std::vector<io::DriverHealthReport> health = drivers.refreshHealth();
        healthCache.update(health);
        const engine::ScanSnapshot s = loop.snapshot();
        // Liveness for systemd: the scan made progress, or it is halted on purpose
        // (faults are reported, not hidden behind a restart loop of the whole
        // service).
        if (s.cycles != lastCycles || s.state == engine::ScanState::Halted) {
            systemd.watchdogPing();
        }
        lastCycles = s.cycles;
        if (tty) {
            std::fputs("\r\033[K", stdout); // the log lines below must not be glued to the status line
            std::fflush(stdout);
        }
        logEvents(loop, eventsSeen, overruns, *log);
        if (std::string names = healthNames(health); names != healthSeen) {
            const bool allOk = std::all_of(health.begin(), health.end(), [](const io::DriverHealthReport& h) {
                return h.status.health == io::Health::Ok;
            });
            log->log(allOk ? spdlog::level::info : spdlog::level::warn, "driver health: {}", healthText(health));
            healthSeen = std::move(names);
        }
        const std::int64_t now = engine::monotonicNs();
        if (tty) {
            std::fprintf(stdout, "\r\033[K%s", statusText(loop, health).c_str());
            std::fflush(stdout);
        }
        if (now >= nextLog) {
            nextLog = now + kLogPeriodNs;
            systemd.status(statusText(loop, health));
            if (!tty) {
                log->debug("{} {}", statusText(loop, health), imageText(loop));
            }
        }
        if (forNs && now - started >= *forNs) {
            break;
        }
    }
    systemd.stopping();
    live->stop(); // endpoint, then scan (safe state latched, last retain save), then drivers
    const std::vector<io::DriverHealthReport> health = drivers.refreshHealth();
    if (tty) {
        std::fputs("\r\033[K", stdout); // the stop line replaces the status line
        std::fflush(stdout);
    }
    logEvents(loop, eventsSeen, overruns, *log);
    if (engine::OverrunSummary summary; overruns.flush(summary)) {
        log->warn("cycle_overrun: {}", engine::overrunSummaryText(summary)); // the last interval's, on the way out
    }
    log->info("stopped ({}): outputs in safe state; {} {}", stopReason, statusText(loop, health), imageText(loop));
    return runOutcome(loop, *log);
}

} // namespace

void registerRun(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<RunOptions>();
    CLI::App* cmd = app.add_subcommand("run", "Run the project on the real-time scan loop");
    cmd->add_option("--project", options->project, "Project directory (default: the current directory)");
    cmd->add_option("--board", options->board, "Board whose io is used when the project has no io.toml");
    cmd->add_option("--state-dir", options->stateDir,
                    "Directory for runtime state: a relative runtime.retain.path and .takt/audit.log (default: the "
                    "project directory)");
    cmd->add_option("--for", options->duration, "Stop after this long (10s, 500ms, 2m); default: until SIGTERM");
    cmd->add_option("--restart", options->restart, "warm (restore RETAIN variables) or cold")
        ->check(CLI::IsMember({"warm", "cold"}));
    CLI::Option* execution = addExecutionOption(*cmd, options->execution);
    cmd->add_option("--debug-endpoint", options->debugEndpoint)->group(""); // takt dap's launch
    cmd->add_option("--debug-token-file", options->debugTokenFile)->group("");
    cmd->callback([options, execution, &exitCode] {
        options->executionGiven = execution->count() > 0;
        exitCode = runMain(*options);
    });
}

} // namespace takt::cli
