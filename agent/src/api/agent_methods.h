#pragma once
// The method table of the agent API: one entry per method with its JSON Schemas (params and
// result) and its handler. The params schema is also what checks every request's params before
// the handler runs, so `agent.schema` and the server can never disagree.
#include <chrono>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/workspace.h"
#include "rpc/rpc_json.h"
#include "takt/agent/agent_server.h"
#include "takt/agent/harness.h"
#include "takt/agent/rpc_method.h"
#include "takt/compiler/project.h"

namespace takt::agent::detail {

struct Context {
    Workspace& workspace;
    Harness& harness;
    const AgentOptions& options;
    std::chrono::steady_clock::time_point started;
};

// A method's outcome: a result (JSON text) or an error.
using Outcome = MethodAnswer;
[[nodiscard]] inline Outcome success(std::string json) {
    return MethodAnswer::result(std::move(json));
}
[[nodiscard]] inline Outcome failed(rpc::Error e) {
    return MethodAnswer::error(e.code, std::move(e.message), std::move(e.data));
}
[[nodiscard]] inline Outcome failed(int code, std::string message) {
    return MethodAnswer::error(code, std::move(message));
}

using Handler = Outcome (*)(Context&, const rapidjson::Value& params);
using MethodSpec = agent::MethodSpec<Handler>;

[[nodiscard]] std::span<const MethodSpec> methodTable();
[[nodiscard]] const MethodSpec* findMethod(std::string_view name);
// Checks params against the method's schema (rpc::ParamsSchemas); the error names the member.
[[nodiscard]] bool checkParams(const MethodSpec& method, const rapidjson::Value& params, rpc::Error& error);

// Maps a workspace failure to its code (-32001 / -32602 / -32002).
[[nodiscard]] rpc::Error workspaceError(const Workspace::Result& r, std::string_view member);

// A selected project: its directory and the sources below its sources root, all verified to
// resolve inside the workspace.
struct ProjectSelection {
    std::filesystem::path dir;     // canonical absolute
    std::string rel;               // relative to the workspace root ("." for the root)
    std::string sourcesRoot;       // relative to the project: the param, else runtime.toml [build] ("src")
    bool sourcesRootGiven = false; // by the `sources_root` param
    std::filesystem::path sourcesAbs;
    std::vector<compiler::SourceText> sources; // display paths relative to the project
    compiler::BuildOptions build;
    std::vector<compiler::ConfigError> configErrors;
};
// Reads `project` / `sources_root` from params (both optional) and, with `readSources`, loads the
// sources below the sources root into out.sources.
[[nodiscard]] bool selectProject(Context& ctx, const rapidjson::Value& params, ProjectSelection& out, rpc::Error& error,
                                 bool readSources = true);
// The project as `takt check` loads it (compiler::Frontend: runtime.toml [build], trust-lsp.toml
// include paths, libraries and vendor profile), every file read through the workspace. `open`
// (absolute) with `text`: an unsaved buffer in place of that file, checked with the project even
// when its folders do not hold it.
[[nodiscard]] compiler::Project checkSelection(Context& ctx, const ProjectSelection& sel,
                                               const std::filesystem::path& open = {},
                                               const std::string* text = nullptr);
// What the front end reads a selection's files through: the workspace.
[[nodiscard]] std::shared_ptr<const compiler::FileAccess> workspaceFiles(Context& ctx);
// The diagnostics of a project as lsp.diagnostics issues (only those of `onlyPath` when set),
// counting errors and warnings.
[[nodiscard]] std::string issuesJson(const compiler::Project& project, const std::string& onlyPath, std::size_t& errors,
                                     std::size_t& warnings);
// Workspace-relative form of a path relative to the project.
[[nodiscard]] std::string joinRel(const std::string& base, const std::string& rel);

// String member of params, or `fallback` when absent (the schema has checked its type).
[[nodiscard]] std::string stringParam(const rapidjson::Value& params, const char* name, std::string fallback = {});
[[nodiscard]] bool boolParam(const rapidjson::Value& params, const char* name, bool fallback);
[[nodiscard]] const rapidjson::Value* member(const rapidjson::Value& params, const char* name);

// Handlers, by area.
Outcome agentDescribe(Context& ctx, const rapidjson::Value& params);
Outcome agentPing(Context& ctx, const rapidjson::Value& params);
Outcome agentSchema(Context& ctx, const rapidjson::Value& params);
Outcome workspaceRead(Context& ctx, const rapidjson::Value& params);
Outcome workspaceWrite(Context& ctx, const rapidjson::Value& params);
Outcome workspaceProjectInfo(Context& ctx, const rapidjson::Value& params);
Outcome lspDiagnostics(Context& ctx, const rapidjson::Value& params);
Outcome lspFormat(Context& ctx, const rapidjson::Value& params);
Outcome runtimeBuild(Context& ctx, const rapidjson::Value& params);
Outcome runtimeValidate(Context& ctx, const rapidjson::Value& params);
Outcome runtimeTest(Context& ctx, const rapidjson::Value& params);
Outcome runtimeReload(Context& ctx, const rapidjson::Value& params);
Outcome runtimeCompileReload(Context& ctx, const rapidjson::Value& params);
Outcome harnessLoad(Context& ctx, const rapidjson::Value& params);
Outcome harnessReload(Context& ctx, const rapidjson::Value& params);
Outcome harnessCycle(Context& ctx, const rapidjson::Value& params);
Outcome harnessSetInput(Context& ctx, const rapidjson::Value& params);
Outcome harnessGetOutput(Context& ctx, const rapidjson::Value& params);
Outcome harnessSetDirectInput(Context& ctx, const rapidjson::Value& params);
Outcome harnessSetDirectMemory(Context& ctx, const rapidjson::Value& params);
Outcome harnessGetDirectOutput(Context& ctx, const rapidjson::Value& params);
Outcome harnessSetWallClock(Context& ctx, const rapidjson::Value& params);
Outcome harnessAdvanceTime(Context& ctx, const rapidjson::Value& params);
Outcome harnessRunUntil(Context& ctx, const rapidjson::Value& params);

} // namespace takt::agent::detail
