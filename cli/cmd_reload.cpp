// `takt reload [--project DIR] [--endpoint E --token-file F] [--dry-run] [--yes] [--json]`: builds
// the project like `takt build` (program.stbc written atomically), then sends it to a running
// runtime as bytecode.reload (an online change) and prints what the change kept, converted,
// re-initialised, dropped and added (docs/runtime-control.md "Online change").
// `takt rollback [--endpoint E --token-file F] [--dry-run] [--yes] [--json]` does the same with
// runtime.rollback: the program the runtime's last online change replaced.
//
// Unless --yes, the change is previewed first (dry_run); a change that would re-initialise or drop
// state is applied only after a person confirms it on a terminal, and refused without one. The
// change then names the previewed program (expected_hash), so a reload by someone else in between
// makes it fail rather than apply what nobody saw.
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <unistd.h>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "commands.h"
#include "ctl_support.h"
#include "reload_build.h"
#include "reload_report.h"
#include "takt/agent/control_client.h"

namespace takt::cli {

namespace {

struct ReloadOptions {
    ControlConnectOptions connect; // connect.project is also the project built
    bool dryRun = false;
    bool yes = false;
    bool json = false;
};

constexpr const char* kCommand = "takt reload";

// Prints a reply's report: the JSON result, or the text for a person.
int printReport(const ReloadOptions& options, const char* command, const char* method,
                const agent::ControlReply& reply) {
    if (const int rc = replyFailure(command, method, reply); rc != kExitOk) {
        return rc;
    }
    if (options.json) {
        std::fwrite(reply.json.data(), 1, reply.json.size(), stdout);
        std::fputc('\n', stdout);
        return kExitOk;
    }
    rapidjson::Document d;
    d.Parse(reply.json.c_str());
    const std::string text = renderReloadReport(d);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
}

// The change as a person applies it: with --dry-run only its preview; without --yes the preview
// first, a change that loses state confirmed on a terminal, and then the change over the previewed
// program only (expected_hash). `params` gives the method's params for a preview or the change.
int previewAndApply(const ReloadOptions& options, const agent::ControlClientOptions& client, const char* command,
                    const char* method, const std::function<std::string(bool, std::string_view)>& params) {
    if (options.dryRun) {
        return printReport(options, command, method, agent::controlCall(client, method, params(true, {})));
    }
    std::string expectedHash;
    if (!options.yes) {
        const agent::ControlReply preview = agent::controlCall(client, method, params(true, {}));
        if (const int rc = replyFailure(command, method, preview); rc != kExitOk) {
            return rc;
        }
        rapidjson::Document d;
        d.Parse(preview.json.c_str());
        if (reloadLosesState(d)) {
            const std::string report = renderReloadReport(d);
            std::fwrite(report.data(), 1, report.size(), stderr);
            if (isatty(STDIN_FILENO) != 1) {
                std::fprintf(stderr,
                             "%s: this change re-initialises or drops state (listed above); nothing was "
                             "applied. Pass --yes to apply it without asking.\n",
                             command);
                return kExitControlError;
            }
            if (!confirmOnTerminal("Apply this online change? It re-initialises or drops the state listed above.")) {
                std::fprintf(stderr, "%s: not applied\n", command);
                return kExitControlError;
            }
        }
        expectedHash =
            d.IsObject() && d.HasMember("old_hash") && d["old_hash"].IsString() ? d["old_hash"].GetString() : "";
    }
    return printReport(options, command, method, agent::controlCall(client, method, params(false, expectedHash)));
}

int runReload(const ReloadOptions& options) {
    agent::ControlClientOptions client;
    if (const int rc = clientOptions("takt reload", options.connect, client, agent::Role::Engineer); rc != kExitOk) {
        return rc;
    }
    BuiltProgram built;
    if (const int rc = buildForChange(kCommand, options.connect.project, built); rc != kExitOk) {
        return rc;
    }
    const std::string& bytes = built.bytes;
    std::fprintf(stderr, "%s: built %s (%zu bytes, program hash %.16s); sending to %s\n", kCommand, built.path.c_str(),
                 bytes.size(), built.hash.c_str(), client.endpoint.c_str());
    const std::span<const std::uint8_t> program(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    return previewAndApply(options, client, kCommand, "bytecode.reload",
                           [program](bool dryRun, std::string_view expected) {
                               return agent::bytecodeReloadParams(program, dryRun, expected);
                           });
}

int runRollback(const ReloadOptions& options) {
    agent::ControlClientOptions client;
    if (const int rc = clientOptions("takt rollback", options.connect, client, agent::Role::Engineer); rc != kExitOk) {
        return rc;
    }
    return previewAndApply(options, client, "takt rollback", "runtime.rollback",
                           [](bool dryRun, std::string_view expected) {
                               std::string params = fmt::format("{{\"dry_run\":{}", dryRun ? "true" : "false");
                               if (!expected.empty()) {
                                   params += fmt::format(",\"expected_hash\":\"{}\"", expected);
                               }
                               return params + "}";
                           });
}

// `takt reload` and `takt rollback` both send an online change and take the same options.
void addChangeCommand(CLI::App& app, const char* name, const char* description, int (*run)(const ReloadOptions&),
                      int& exitCode) {
    auto options = std::make_shared<ReloadOptions>();
    CLI::App* cmd = app.add_subcommand(name, description);
    addConnectOptions(*cmd, options->connect);
    cmd->add_flag("--dry-run", options->dryRun,
                  "Show what the change would keep, convert, re-initialise, drop and add; apply nothing");
    cmd->add_flag("-y,--yes", options->yes, "Apply without asking, even a change that re-initialises or drops state");
    cmd->add_flag("--json", options->json, "Print the runtime's report as JSON");
    cmd->callback([options, run, &exitCode] { exitCode = run(*options); });
}

} // namespace

void registerReload(CLI::App& app, int& exitCode) {
    addChangeCommand(app, "reload", "Build the project and load it into a running runtime (online change)", runReload,
                     exitCode);
}

void registerRollback(CLI::App& app, int& exitCode) {
    addChangeCommand(app, "rollback",
                     "Bring back the program a running runtime's last online change replaced (an online change)",
                     runRollback, exitCode);
}

} // namespace takt::cli
