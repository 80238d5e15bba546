// `takt deploy --fleet fleet.toml [--project DIR] [--dry-run] [--yes] [--json]`: one build of the
// project sent as an online change to many runtimes, in waves (docs/fleet.md).
//
// 1. fleet.toml is read and checked (agent/fleet_config.h): a bad file sends nothing.
// 2. The project is built once, as `takt reload` builds it.
// 3. Every box is asked first: runtime.status (reachable, running, no fault) and a preview
//    (bytecode.reload dry_run). One that fails stops the deploy before anything is applied. A
//    change that re-initialises or drops state on some box needs --yes (or a yes on a terminal).
// 4. Wave by wave, each box gets bytecode.reload over the program it was previewed on
//    (expected_hash) with an idempotency key, then runtime.status is watched until settle_s have
//    passed since its change: state running, no new fault, the deployed program. The first box
//    that fails stops the deploy; the boxes after it are not touched. With on_failure = "rollback"
//    the failed box gets runtime.rollback (and a warm restart when the fault halted it).
#include <chrono>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "commands.h"
#include "ctl_support.h"
#include "deploy_report.h"
#include "reload_build.h"
#include "reload_report.h"
#include "takt/agent/control_client.h"
#include "takt/agent/fleet_config.h"

namespace takt::cli {

namespace {

constexpr const char* kCommand = "takt deploy";
using Clock = std::chrono::steady_clock;
// How often a box's runtime.status is asked while it settles.
constexpr auto kSettlePoll = std::chrono::milliseconds(200);

struct DeployOptions {
    std::string fleet;
    std::string project;
    bool dryRun = false;
    bool yes = false;
    bool json = false;
};

// What runtime.status said, the parts a deploy looks at.
struct BoxStatus {
    bool ok = false;
    std::string problem; // why it is not well (when !ok)
    std::string state, hash;
    std::int64_t faults = 0, reloads = 0;
};

std::string str(const rapidjson::Value& v, const char* key) {
    return v.IsObject() && v.HasMember(key) && v[key].IsString() ? v[key].GetString() : "";
}

std::int64_t num(const rapidjson::Value& v, const char* key) {
    return v.IsObject() && v.HasMember(key) && v[key].IsInt64() ? v[key].GetInt64() : 0;
}

// Why a reply is no answer: unreachable, or the runtime's error.
std::string replyProblem(const char* method, const agent::ControlReply& r) {
    if (!r.reached) {
        return fmt::format("unreachable: {}", r.message);
    }
    return fmt::format("{}: {} (code {})", method, r.message, r.code);
}

BoxStatus readStatus(const agent::ControlClientOptions& client) {
    BoxStatus s;
    const agent::ControlReply r = agent::controlCall(client, "runtime.status", "");
    if (!r.reached || !r.ok) {
        s.problem = replyProblem("runtime.status", r);
        return s;
    }
    rapidjson::Document d;
    d.Parse(r.json.c_str());
    s.state = str(d, "state");
    s.hash = str(d, "program_hash");
    s.faults = num(d, "faults");
    s.reloads = num(d, "reloads");
    if (s.state != "running") {
        std::string fault;
        if (d.IsObject() && d.HasMember("fault") && d["fault"].IsObject()) {
            const rapidjson::Value& f = d["fault"];
            fault = fmt::format(": {}{}", str(f, "message"),
                                str(f, "path").empty()
                                    ? ""
                                    : fmt::format(" ({}:{}:{})", str(f, "path"), num(f, "line"), num(f, "column")));
        }
        s.problem = fmt::format("state {}{}", s.state, fault);
        return s;
    }
    s.ok = true;
    return s;
}

struct Box {
    const agent::FleetRuntime* runtime = nullptr;
    agent::ControlClientOptions client;
    BoxResult* result = nullptr;
    BoxStatus before;            // runtime.status before the change
    Clock::time_point appliedAt; // when its change was answered
};

void fail(Box& box, std::string reason, bool unreachable = false) {
    box.result->outcome = BoxOutcome::Failed;
    box.result->reason = std::move(reason);
    box.result->unreachable = unreachable;
}

// Status and preview of one box; false (the box failed) when it cannot take the change.
bool preview(Box& box, std::span<const std::uint8_t> program, const std::string& newHash) {
    box.before = readStatus(box.client);
    if (!box.before.ok) {
        fail(box,
             box.before.state.empty() ? box.before.problem
                                      : box.before.problem + " before the change; bring it back to running first",
             box.before.state.empty() && box.before.problem.starts_with("unreachable"));
        return false;
    }
    box.result->oldHash = box.before.hash;
    const agent::ControlReply r =
        agent::controlCall(box.client, "bytecode.reload", agent::bytecodeReloadParams(program, true));
    if (!r.reached || !r.ok) {
        fail(box, "preview: " + replyProblem("bytecode.reload", r), !r.reached);
        return false;
    }
    box.result->preview = r.json;
    rapidjson::Document d;
    d.Parse(r.json.c_str());
    box.result->losesState = reloadLosesState(d);
    box.result->oldHash = str(d, "old_hash");
    if (box.result->oldHash == newHash) {
        box.result->outcome = BoxOutcome::Unchanged;
    }
    return true;
}

// The change on one box over the previewed program. The key names the change (new and old
// program, and how many changes the box had applied when it was previewed): sent again — a
// re-run after the answer was lost — the runtime answers the first answer and applies nothing.
bool apply(Box& box, std::span<const std::uint8_t> program, const std::string& newHash) {
    const std::string key = fmt::format("takt-deploy:{}:{}:{}", newHash.substr(0, 32),
                                        box.result->oldHash.substr(0, 32), box.before.reloads);
    const agent::ControlReply r = agent::controlCall(
        box.client, "bytecode.reload", agent::bytecodeReloadParams(program, false, box.result->oldHash, key));
    box.appliedAt = Clock::now();
    // Refused: nothing was applied. Unanswered: it may have been (a rollback is then tried over
    // the new program only, expected_hash, so it changes nothing where the change did not land).
    box.result->changed = !r.reached || r.ok;
    if (!r.reached || !r.ok) {
        fail(box, "change: " + replyProblem("bytecode.reload", r), !r.reached);
        return false;
    }
    box.result->change = r.json;
    box.result->outcome = BoxOutcome::Applied;
    return true;
}

// One look at a box that settles: empty while it is well. A fault since the change counts also
// when the fault policy restarted the program and it runs again.
std::string settleProblem(const Box& box, const std::string& newHash) {
    const BoxStatus s = readStatus(box.client);
    if (s.faults > box.before.faults) {
        return fmt::format("{} fault(s) since the change{}", s.faults - box.before.faults,
                           s.ok ? " (the fault policy restarted the program)" : "; " + s.problem);
    }
    if (!s.ok) {
        return s.problem;
    }
    if (s.hash != newHash) {
        return fmt::format("runs program {}, not the deployed {}", s.hash.substr(0, 16), newHash.substr(0, 16));
    }
    return "";
}

// Watches the boxes of a wave until each has run settle_s since its change; false when one failed.
bool settle(std::vector<Box*>& boxes, const std::string& newHash, std::chrono::seconds settleFor) {
    std::vector<Box*> pending = boxes;
    bool allWell = true;
    for (;;) {
        std::vector<Box*> still;
        for (Box* box : pending) {
            const Clock::time_point now = Clock::now();
            if (const std::string why = settleProblem(*box, newHash); !why.empty()) {
                fail(*box, fmt::format("after the change: {}", why), why.starts_with("unreachable"));
                allWell = false;
            } else if (now < box->appliedAt + settleFor) {
                still.push_back(box);
            }
        }
        if (still.empty()) {
            return allWell;
        }
        pending = std::move(still);
        std::this_thread::sleep_for(kSettlePoll);
    }
}

// runtime.rollback on a box whose change failed, and a warm restart when the fault halted it.
void rollBack(Box& box, const std::string& newHash) {
    const std::string failed = box.result->reason;
    const agent::ControlReply r =
        agent::controlCall(box.client, "runtime.rollback", fmt::format("{{\"expected_hash\":\"{}\"}}", newHash));
    if (!r.reached || !r.ok) {
        box.result->reason = fmt::format("{}; rollback failed: {}", failed, replyProblem("runtime.rollback", r));
        return;
    }
    BoxStatus s = readStatus(box.client);
    std::string restarted;
    if (s.state == "faulted") {
        const agent::ControlReply restart = agent::controlCall(box.client, "runtime.restart", R"({"mode":"warm"})");
        if (!restart.reached || !restart.ok) {
            box.result->reason = fmt::format("{}; rolled back, but the restart failed: {}", failed,
                                             replyProblem("runtime.restart", restart));
            return;
        }
        restarted = ", warm restart";
        s = readStatus(box.client);
    }
    if (!s.ok || s.hash != box.result->oldHash) {
        box.result->reason = fmt::format("{}; rolled back{}, but {}", failed, restarted,
                                         s.ok ? "it runs " + s.hash.substr(0, 16) : s.problem);
        return;
    }
    box.result->outcome = BoxOutcome::RolledBack;
    box.result->reason =
        fmt::format("{}; rolled back to {}{}, running", failed, box.result->oldHash.substr(0, 16), restarted);
}

// Whether the boxes whose change loses state may be changed: --yes, or a yes on a terminal.
bool stateLossAccepted(const DeployOptions& options, const std::vector<Box>& boxes) {
    std::string losing;
    for (const Box& box : boxes) {
        if (box.result->losesState) {
            rapidjson::Document d;
            d.Parse(box.result->preview.c_str());
            losing += fmt::format("{}:\n{}", box.result->name, renderReloadReport(d));
        }
    }
    if (losing.empty() || options.yes) {
        return true;
    }
    std::fwrite(losing.data(), 1, losing.size(), stderr);
    if (isatty(STDIN_FILENO) != 1) {
        std::fprintf(stderr,
                     "%s: this change re-initialises or drops state on the boxes above; nothing was applied. "
                     "Pass --yes to apply it without asking.\n",
                     kCommand);
        return false;
    }
    return confirmOnTerminal("Deploy this online change? It re-initialises or drops the state listed above.");
}

int report(const DeployOptions& options, const DeployResult& result) {
    const std::string text = options.json ? renderDeployJson(result) + "\n" : renderDeployText(result);
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (result.ok()) {
        return kExitOk;
    }
    for (const BoxResult& b : result.boxes) {
        if (b.name == result.stoppedAt) {
            return b.unreachable ? kExitControlUnreachable : kExitControlError;
        }
    }
    return kExitControlError;
}

int runDeploy(const DeployOptions& options) {
    const agent::FleetConfigResult loaded = agent::loadFleetConfig(options.fleet);
    for (const engine::ConfigDiagnostic& d : loaded.diagnostics) {
        std::fprintf(stderr, "%s\n", engine::formatDiagnostic(d).c_str());
    }
    if (!loaded.config) {
        std::fprintf(stderr, "%s: %s has errors; nothing was built or sent\n", kCommand, options.fleet.c_str());
        return kExitInvalidProject;
    }
    const agent::FleetConfig& fleet = *loaded.config;
    BuiltProgram built;
    if (const int rc = buildForChange(kCommand, options.project, built); rc != kExitOk) {
        return rc;
    }
    const std::span<const std::uint8_t> program(reinterpret_cast<const std::uint8_t*>(built.bytes.data()),
                                                built.bytes.size());
    std::fprintf(stderr, "%s: built %s (%zu bytes, program hash %.16s); %zu boxes in %zu waves\n", kCommand,
                 built.path.c_str(), built.bytes.size(), built.hash.c_str(), fleet.runtimes.size(), fleet.waves.size());

    DeployResult result;
    result.fleetFile = options.fleet;
    result.newHash = built.hash;
    result.dryRun = options.dryRun;
    result.settleS = fleet.settleS;
    result.rollbackOnFailure = fleet.onFailure == agent::FleetOnFailure::Rollback;
    result.waves = fleet.waves.size();
    for (std::size_t w = 0; w < fleet.waves.size(); ++w) {
        for (std::size_t i : fleet.waves[w]) {
            const agent::FleetRuntime& rt = fleet.runtimes[i];
            result.boxes.push_back({.name = rt.name, .endpoint = rt.endpoint, .wave = w});
        }
    }
    // result.boxes is not resized from here on: the pointers stay valid.
    std::vector<Box> boxes;
    std::vector<std::vector<Box*>> waves(fleet.waves.size());
    for (std::size_t w = 0, n = 0; w < fleet.waves.size(); ++w) {
        for (std::size_t i : fleet.waves[w]) {
            const agent::FleetRuntime& rt = fleet.runtimes[i];
            Box box;
            box.runtime = &rt;
            box.client = {.endpoint = rt.endpoint,
                          .token = rt.token,
                          .caFile = rt.ca,
                          .certFile = rt.cert,
                          .keyFile = rt.key,
                          .timeoutMs = rt.timeoutMs};
            box.result = &result.boxes[n++];
            boxes.push_back(std::move(box));
        }
    }
    for (std::size_t w = 0, n = 0; w < fleet.waves.size(); ++w) {
        for (std::size_t k = 0; k < fleet.waves[w].size(); ++k) {
            waves[w].push_back(&boxes[n++]);
        }
    }

    // Every box is asked before any is changed.
    for (Box& box : boxes) {
        if (!preview(box, program, built.hash)) {
            result.stoppedAt = box.result->name;
            return report(options, result);
        }
        if (options.dryRun && box.result->outcome != BoxOutcome::Unchanged) {
            box.result->outcome = BoxOutcome::Previewed;
        }
    }
    if (options.dryRun) {
        return report(options, result);
    }
    if (!stateLossAccepted(options, boxes)) {
        return kExitControlError;
    }

    const auto settleFor = std::chrono::seconds(fleet.settleS);
    for (std::vector<Box*>& wave : waves) {
        // The wave's boxes are changed one after the other and settle together; a change that
        // fails leaves the rest of the wave untouched, and the ones changed before it still settle.
        std::vector<Box*> changed;
        for (Box* box : wave) {
            if (box->result->outcome == BoxOutcome::Unchanged) {
                box->appliedAt = Clock::now(); // a re-run: it still has to be running well
                changed.push_back(box);
                continue;
            }
            if (!apply(*box, program, built.hash)) {
                break;
            }
            std::fprintf(stderr, "%s: wave %zu: %s changed (program %.16s -> %.16s)\n", kCommand, box->result->wave,
                         box->result->name.c_str(), box->result->oldHash.c_str(), built.hash.c_str());
            changed.push_back(box);
        }
        if (!changed.empty()) {
            std::fprintf(stderr, "%s: wave %zu: watching %zu box(es) for %u s\n", kCommand,
                         changed.front()->result->wave, changed.size(), fleet.settleS);
        }
        settle(changed, built.hash, settleFor);
        for (Box* box : wave) {
            if (box->result->outcome != BoxOutcome::Failed) {
                continue;
            }
            std::fprintf(stderr, "%s: wave %zu: %s failed: %s\n", kCommand, box->result->wave,
                         box->result->name.c_str(), box->result->reason.c_str());
            if (result.stoppedAt.empty()) {
                result.stoppedAt = box->result->name;
            }
            if (result.rollbackOnFailure && box->result->changed) {
                rollBack(*box, built.hash);
            }
        }
        if (!result.stoppedAt.empty()) {
            break;
        }
    }
    return report(options, result);
}

} // namespace

void registerDeploy(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<DeployOptions>();
    CLI::App* cmd = app.add_subcommand(
        "deploy", "Build the project once and load it into many running runtimes as an online change, in waves");
    cmd->add_option("--fleet", options->fleet, "fleet.toml: the runtimes, the waves, settle_s and on_failure")
        ->required();
    cmd->add_option("--project", options->project, "The project to build (default: the current directory)");
    cmd->add_flag("--dry-run", options->dryRun, "Preview the change on every box; apply nothing");
    cmd->add_flag("-y,--yes", options->yes, "Apply without asking, even a change that re-initialises or drops state");
    cmd->add_flag("--json", options->json, "Print the per-box report as JSON");
    cmd->callback([options, &exitCode] { exitCode = runDeploy(*options); });
}

} // namespace takt::cli
