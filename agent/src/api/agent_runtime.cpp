// runtime.build / validate / test / reload / compile_reload: the CLI's payloads (shared
// renderers), plus bytecode.reload to a running runtime's control endpoint.
#include <cerrno>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "api/agent_methods.h"
#include "control/control_client.h"
#include "takt/agent/control.h"
#include "takt/agent/project_build.h"
#include "takt/agent/test_runner.h"
#include "takt/agent/validate.h"
#include "takt/engine/config.h"

namespace takt::agent {

namespace detail {

namespace {

using rapidjson::Value;
using rpc::JsonWriter;

constexpr std::size_t kMaxProgramBytes = std::size_t{256} << 20;

struct ControlTarget {
    std::string endpoint;
    std::string token;
};

// The endpoint and token: explicit params first, else [runtime.control] of runtime.toml as the
// runtime reads it — the truST auth_token, or the first engineer/admin token (inline or from its
// token_file, resolved against the project like `takt run` does). bytecode.reload needs the
// engineer role.
ControlTarget controlTarget(Context& ctx, const ProjectSelection& sel, const Value& params) {
    ControlTarget t{stringParam(params, "endpoint"), stringParam(params, "token")};
    if (!t.endpoint.empty() && !t.token.empty()) {
        return t;
    }
    std::string text;
    if (!ctx.workspace.readFile(joinRel(sel.rel, "runtime.toml"), std::size_t{1} << 20, text).ok()) {
        return t;
    }
    const engine::RuntimeConfigResult config = engine::parseRuntimeConfig(text, "runtime.toml");
    if (!config.config) {
        return t; // an invalid runtime.toml has no endpoint; the caller reports that
    }
    const engine::RuntimeConfig::Control& c = config.config->control;
    if (t.endpoint.empty()) {
        t.endpoint = c.endpoint;
    }
    if (t.token.empty()) {
        t.token = c.authToken;
    }
    for (const engine::ControlToken& token : c.tokens) {
        if (!t.token.empty() || (token.role != "engineer" && token.role != "admin")) {
            continue;
        }
        if (!token.tokenFile.empty()) {
            const std::filesystem::path file = std::filesystem::path(token.tokenFile).is_absolute()
                                                   ? std::filesystem::path(token.tokenFile)
                                                   : sel.dir / token.tokenFile;
            std::string error;
            (void)readTokenFile(file.string(), t.token, error);
        } else {
            t.token = token.token;
        }
    }
    return t;
}

struct BuildStep {
    compiler::Project project;
    BuildOutcome outcome;
    std::string json;
};

void build(Context& ctx, const ProjectSelection& sel, BuildStep& step) {
    step.project = checkSelection(ctx, sel);
    step.outcome = buildProject(step.project);
    step.json = renderBuildJson(step.project, step.outcome);
}

// Reads program.stbc back from disk (what the runtime will load) and sends it.
ControlReply reload(Context& ctx, const ProjectSelection& sel, const ControlTarget& target, bool dryRun = false) {
    std::string bytes;
    if (const Workspace::Result r = ctx.workspace.readFile(joinRel(sel.rel, "program.stbc"), kMaxProgramBytes, bytes);
        !r.ok()) {
        ControlReply failedRead;
        failedRead.message = r.message;
        return failedRead;
    }
    return sendReload(target.endpoint, target.token,
                      std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 10000, dryRun);
}

std::string noEndpointMessage() {
    return "no control endpoint: pass 'endpoint' or set [runtime.control] endpoint in runtime.toml";
}

} // namespace

Outcome runtimeBuild(Context& ctx, const Value& params) {
    ProjectSelection sel;
    if (rpc::Error e; !selectProject(ctx, params, sel, e, false)) {
        return failed(std::move(e));
    }
    BuildStep step;
    build(ctx, sel, step);
    return success(step.json);
}

Outcome runtimeValidate(Context& ctx, const Value& params) {
    ProjectSelection sel;
    if (rpc::Error e; !selectProject(ctx, params, sel, e, false)) {
        return failed(std::move(e));
    }
    // The same library call and document as `takt validate --json`.
    ValidateRequest request;
    request.project = sel.dir;
    request.access = workspaceFiles(ctx);
    return success(renderValidateJson(validateProject(request)));
}

Outcome runtimeTest(Context& ctx, const Value& params) {
    ProjectSelection sel;
    if (rpc::Error e; !selectProject(ctx, params, sel, e, false)) {
        return failed(std::move(e));
    }
    TestOptions options;
    options.project = sel.dir;
    options.access = workspaceFiles(ctx);
    options.filter = stringParam(params, "filter");
    options.listOnly = boolParam(params, "list", false);
    if (const Value* t = member(params, "timeout_seconds"); t != nullptr) {
        options.timeoutS = t->GetDouble();
    }
    // Tests that call TEST_FINISHED() (takt test --cycle-time, --max-cycles).
    if (const Value* c = member(params, "cycle_time_ms"); c != nullptr) {
        options.cycleTimeNs = std::llround(c->GetDouble() * 1e6);
    }
    if (const Value* m = member(params, "max_cycles"); m != nullptr) {
        options.maxCycles = m->GetUint64();
    }
    const TestReport report = runTests(options);
    if (report.buildFailed) {
        return failed(rpc::Error{rpc::kCommandFailed, "the project does not build:\n" + report.buildMessage,
                                 fmt::format(R"({{"exit_code":{}}})", kExitBuildFailure)});
    }
    return success(renderTestJson(report));
}

Outcome runtimeReload(Context& ctx, const Value& params) {
    ProjectSelection sel;
    if (rpc::Error e; !selectProject(ctx, params, sel, e, false)) {
        return failed(std::move(e));
    }
    BuildStep step;
    build(ctx, sel, step);
    if (step.outcome.exitCode != kExitOk) {
        return failed(rpc::Error{rpc::kCommandFailed, "build failed; nothing was sent to the runtime",
                                 R"({"build":)" + step.json + "}"});
    }
    const ControlTarget target = controlTarget(ctx, sel, params);
    if (target.endpoint.empty()) {
        return failed(rpc::Error{rpc::kCommandFailed, noEndpointMessage(), R"({"build":)" + step.json + "}"});
    }
    // dry_run: the runtime's preview of the change (docs/control.md), nothing applied.
    const ControlReply reply = reload(ctx, sel, target, boolParam(params, "dry_run", false));
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("build");
    w.RawValue(step.json.data(), step.json.size(), rapidjson::kObjectType);
    w.Key("endpoint");
    rpc::writeString(w, target.endpoint);
    if (!reply.ok) {
        w.Key("reload");
        if (reply.json.empty()) {
            w.Null();
        } else {
            w.RawValue(reply.json.data(), reply.json.size(), rapidjson::kObjectType);
        }
        w.EndObject();
        return failed(rpc::Error{rpc::kCommandFailed, "bytecode.reload failed: " + reply.message,
                                 std::string(buf.GetString(), buf.GetSize())});
    }
    w.Key("reload");
    w.RawValue(reply.json.data(), reply.json.size(), rapidjson::kObjectType);
    w.EndObject();
    return success({buf.GetString(), buf.GetSize()});
}

Outcome runtimeCompileReload(Context& ctx, const Value& params) {
    ProjectSelection sel;
    if (rpc::Error e; !selectProject(ctx, params, sel, e, false)) {
        return failed(std::move(e));
    }
    BuildStep step;
    step.project = checkSelection(ctx, sel);
    std::size_t errors = 0;
    std::size_t warnings = 0;
    const std::string issues = issuesJson(step.project, {}, errors, warnings);
    std::string status;
    std::string message;
    ControlReply reply;
    if (!step.project.valid() || errors > 0) {
        status = "blocked";
        message = step.project.valid() ? fmt::format("diagnostics have {} error(s); nothing was built", errors)
                                       : "the project configuration is invalid; nothing was built";
        if (!step.project.valid()) {
            step.outcome = buildProject(step.project);
            step.json = renderBuildJson(step.project, step.outcome);
        }
    } else {
        step.outcome = buildProject(step.project);
        step.json = renderBuildJson(step.project, step.outcome);
        const ControlTarget target = controlTarget(ctx, sel, params);
        if (step.outcome.exitCode != kExitOk) {
            status = "build_failed";
            message = step.outcome.failure.empty() ? "build failed" : step.outcome.failure;
        } else if (target.endpoint.empty()) {
            status = "no_endpoint";
            message = "program.stbc built; " + noEndpointMessage();
        } else {
            reply = reload(ctx, sel, target);
            status = reply.ok ? "reloaded" : reply.reached ? "reload_failed" : "unreachable";
            message = reply.ok ? fmt::format("program reloaded on {}", target.endpoint) : reply.message;
        }
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("target");
    rpc::writeString(w, joinRel(sel.rel, sel.sourcesRoot));
    w.Key("dirty");
    w.Bool(false);
    w.Key("errors");
    w.Uint64(errors);
    w.Key("warnings");
    w.Uint64(warnings);
    w.Key("issues");
    w.RawValue(issues.data(), issues.size(), rapidjson::kArrayType);
    w.Key("runtimeStatus");
    rpc::writeString(w, status);
    w.Key("runtimeMessage");
    rpc::writeString(w, message);
    if (!step.json.empty()) {
        w.Key("build");
        w.RawValue(step.json.data(), step.json.size(), rapidjson::kObjectType);
    }
    if (reply.reached && !reply.json.empty()) {
        w.Key("reload");
        w.RawValue(reply.json.data(), reply.json.size(), rapidjson::kObjectType);
    }
    w.EndObject();
    return success({buf.GetString(), buf.GetSize()});
}

} // namespace detail

} // namespace takt::agent
