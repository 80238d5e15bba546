// The agent API's method table: names, summaries, JSON Schemas of params and results, handlers.
#include "api/agent_methods.h"
#include "rpc/method_table.h"

namespace takt::agent::detail {

namespace {

using rapidjson::Value;

// Shared schema fragments.
#define TAKT_NO_PARAMS R"({"type":"object","properties":{},"additionalProperties":false})"
#define TAKT_PROJECT R"("project":{"type":"string","description":"project directory relative to the workspace root"})"
#define TAKT_SOURCES_ROOT                                                                                              \
    R"("sources_root":{"type":"string","description":"source directory relative to the project, default src"})"
#define TAKT_TYPED R"({"type":"object","required":["type"],"description":"typed value, see PROTOCOLS.md"})"
#define TAKT_WATCH R"("watch":{"type":"array","items":{"type":"string"}})"
#define TAKT_OVERFLOW R"("overflow":{"enum":["trap","wrap"]})"
#define TAKT_TASKS                                                                                                     \
    R"("tasks":{"type":"array","description":"times each task ran in this call","items":{"type":"object",)"            \
    R"("required":["name","cycles"],"properties":{"name":{"type":"string"},"cycles":{"type":"integer"}}}})"
#define TAKT_PROGRESS                                                                                                  \
    R"({"type":"object","required":["cycle","time_nanos","watch","tasks"],"properties":{"cycle":{"type":"integer"},)"  \
    R"("time_nanos":{"type":"integer"},"watch":{"type":"object","additionalProperties":)" TAKT_TYPED "}," TAKT_TASKS   \
    "}}"
#define TAKT_SOURCES_PARAMS                                                                                            \
    R"("inline_sources":{"type":"array","items":{"type":"object","required":["text"],"properties":{)"                  \
    R"("text":{"type":"string"},"path":{"type":"string"}},"additionalProperties":false}},)" TAKT_PROJECT               \
    "," TAKT_SOURCES_ROOT R"(,"files":{"type":"array","items":{"type":"string"}})"
#define TAKT_LOADED                                                                                                    \
    R"({"type":"object","required":["cycle","time_nanos","programs"],"properties":{"cycle":{"type":"integer"},)"       \
    R"("time_nanos":{"type":"integer"},"programs":{"type":"array","items":{"type":"string"}}}})"
#define TAKT_ISSUES                                                                                                    \
    R"("issues":{"type":"array","items":{"type":"object","required":["path","file","line","column","severity",)"       \
    R"("message"],"properties":{"path":{"type":["string","null"]},"file":{"type":["string","null"]},)"                 \
    R"("line":{"type":"integer"},"column":{"type":"integer"},"end_line":{"type":"integer"},)"                          \
    R"("end_column":{"type":"integer"},"severity":{"type":"string"},"code":{"type":"string"},)"                        \
    R"("message":{"type":"string"},"related":{"type":"array"}}}})"
#define TAKT_RELOAD_PARAMS                                                                                             \
    R"({"type":"object","properties":{)" TAKT_PROJECT "," TAKT_SOURCES_ROOT                                            \
    R"(,"endpoint":{"type":"string"},"token":{"type":"string"}},"additionalProperties":false})"

const MethodSpec kMethods[] = {
    {"agent.describe", "Transport, workspace root, version, methods and notifications", TAKT_NO_PARAMS,
     R"({"type":"object","required":["transport","workspace_root","version","methods","notifications"],)"
     R"("properties":{"transport":{"const":"stdio"},"workspace_root":{"type":"string"},"version":{"type":"string"},)"
     R"("methods":{"type":"array","items":{"type":"string"}},"notifications":{"type":"array","items":{"type":"string"}}}})",
     std::nullopt, agentDescribe},
    {"agent.ping", "Liveness check", TAKT_NO_PARAMS,
     R"({"type":"object","required":["ok","version","uptime_s"],"properties":{"ok":{"const":true},)"
     R"("version":{"type":"string"},"uptime_s":{"type":"number"}}})",
     std::nullopt, agentPing},
    {"agent.schema", "JSON Schema of one method's params and result",
     R"({"type":"object","required":["method"],"properties":{"method":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","required":["method","params","result"],"properties":{"method":{"type":"string"},)"
     R"("params":{"type":"object"},"result":{"type":"object"}}})",
     std::nullopt, agentSchema},
    {"workspace.read", "Read a file inside the workspace root",
     R"({"type":"object","required":["path"],"properties":{"path":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","required":["path","text","bytes"],"properties":{"path":{"type":"string"},)"
     R"("text":{"type":"string"},"bytes":{"type":"integer"}}})",
     std::nullopt, workspaceRead},
    {"workspace.write", "Write a file inside the workspace root (atomically)",
     R"({"type":"object","required":["path","text"],"properties":{"path":{"type":"string"},"text":{"type":"string"},)"
     R"("create_parents":{"type":"boolean"}},"additionalProperties":false})",
     R"({"type":"object","required":["path","bytes","created"],"properties":{"path":{"type":"string"},)"
     R"("bytes":{"type":"integer"},"created":{"type":"boolean"}}})",
     std::nullopt, workspaceWrite},
    {"workspace.project_info", "Project root, sources, config files and runtime/IO orientation",
     R"({"type":"object","properties":{)" TAKT_PROJECT "," TAKT_SOURCES_ROOT R"(},"additionalProperties":false})",
     R"({"type":"object","required":["project","projectRoot","sourcesRoot","sourceCount","sources",)"
     R"("dependencyRoots","resolvedDependencies","files"],"properties":{"project":{"type":"string"},)"
     R"("projectRoot":{"type":"string"},"sourcesRoot":{"type":"string"},"sourceCount":{"type":"integer"},)"
     R"("sources":{"type":"array","items":{"type":"string"}},"dependencyRoots":{"type":"array"},)"
     R"("resolvedDependencies":{"type":"array"},"files":{"type":"object"},"lsp":{"type":"object"},)"
     R"("runtime":{"type":"object"},"io":{"type":"object"}}})",
     std::nullopt, workspaceProjectInfo},
    {"lsp.diagnostics", "Diagnostics for one ST file (optionally in-memory content) or the whole project",
     R"({"type":"object","properties":{)" TAKT_PROJECT "," TAKT_SOURCES_ROOT
     R"(,"path":{"type":"string"},"content":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","required":["target","errors","warnings","issues"],"properties":{"target":{"type":"string"},)"
     R"("errors":{"type":"integer"},"warnings":{"type":"integer"},)" TAKT_ISSUES "}}",
     std::nullopt, lspDiagnostics},
    {"lsp.format", "Formatting preview of one ST file; never writes",
     R"({"type":"object","required":["path"],"properties":{)" TAKT_PROJECT
     R"(,"path":{"type":"string"},"content":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","required":["path","file","formatted","changed"],"properties":{"path":{"type":"string"},)"
     R"("file":{"type":"string"},"formatted":{"type":"string"},"changed":{"type":"boolean"}}})",
     std::nullopt, lspFormat},
    {"runtime.build", "takt build --json: compile to program.stbc",
     R"({"type":"object","properties":{)" TAKT_PROJECT "," TAKT_SOURCES_ROOT R"(},"additionalProperties":false})",
     R"({"type":"object","required":["version","command","status","project","program","source_count","sources",)"
     R"("diagnostics"],"properties":{"command":{"const":"build"}}})",
     std::nullopt, runtimeBuild},
    {"runtime.compile_reload", "Diagnose, build and reload a running runtime in one step", TAKT_RELOAD_PARAMS,
     R"({"type":"object","required":["target","dirty","errors","warnings","issues","runtimeStatus","runtimeMessage"],)"
     R"("properties":{"target":{"type":"string"},"dirty":{"const":false},"errors":{"type":"integer"},)"
     R"("warnings":{"type":"integer"},)" TAKT_ISSUES R"(,"runtimeStatus":{"enum":["reloaded","blocked",)"
     R"("build_failed","no_endpoint","unreachable","reload_failed"]},"runtimeMessage":{"type":"string"},)"
     R"("build":{"type":"object"},"reload":{"type":"object"}}})",
     std::nullopt, runtimeCompileReload},
    {"runtime.validate", "takt validate --json: runtime.toml, io.toml and program.stbc checks",
     R"({"type":"object","properties":{)" TAKT_PROJECT R"(},"additionalProperties":false})",
     R"({"type":"object","required":["version","command","status","project"],)"
     R"("properties":{"command":{"const":"validate"}}})",
     std::nullopt, runtimeValidate},
    {"runtime.test", "takt test --output json",
     R"({"type":"object","properties":{)" TAKT_PROJECT R"(,"filter":{"type":"string"},"list":{"type":"boolean"},)"
     R"("timeout_seconds":{"type":"number","minimum":0},"cycle_time_ms":{"type":"number","minimum":0.001,)"
     R"("maximum":86400000},"max_cycles":{"type":"integer","minimum":1,"maximum":1000000000}},)"
     R"("additionalProperties":false})",
     R"({"type":"object","required":["version","project","summary","tests"],"properties":{"summary":{"type":"object",)"
     R"("required":["total","passed","failed","errors","duration_ms"]},"tests":{"type":"array"}}})",
     std::nullopt, runtimeTest},
    {"runtime.reload", "Rebuild program.stbc and send bytecode.reload to a running runtime (dry_run: preview only)",
     R"({"type":"object","properties":{)" TAKT_PROJECT "," TAKT_SOURCES_ROOT
     R"(,"endpoint":{"type":"string"},"token":{"type":"string"},"dry_run":{"type":"boolean"}},)"
     R"("additionalProperties":false})",
     R"({"type":"object","required":["build","reload"],"properties":{"build":{"type":"object"},)"
     R"("reload":{"type":"object"}}})",
     std::nullopt, runtimeReload},
    {"harness.load", "Load inline, project or file sources into the deterministic harness",
     R"({"type":"object","properties":{)" TAKT_SOURCES_PARAMS "," TAKT_OVERFLOW
     R"(,"initial_cycle":{"type":"boolean"}},"additionalProperties":false})",
     TAKT_LOADED, std::nullopt, harnessLoad},
    {"harness.reload", "Online change of the harness program (mode warm: warm-restart semantics)",
     R"({"type":"object","properties":{)" TAKT_SOURCES_PARAMS R"(,"mode":{"enum":["online","warm"]},)" TAKT_OVERFLOW
     R"(},"additionalProperties":false})",
     TAKT_LOADED, std::nullopt, harnessReload},
    {"harness.cycle", "Advance cycles, each after advancing virtual time by dt_ms",
     R"({"type":"object","properties":{"count":{"type":"integer","minimum":0},"dt_ms":{"type":"number","minimum":0},)" TAKT_WATCH
     R"(},"additionalProperties":false})",
     TAKT_PROGRESS, std::nullopt, harnessCycle},
    {"harness.set_input", "Set an input, global or program variable",
     R"({"type":"object","required":["name","value"],"properties":{"name":{"type":"string"},"value":)" TAKT_TYPED
     R"(},"additionalProperties":false})",
     R"({"type":"object"})", std::nullopt, harnessSetInput},
    {"harness.set_direct_input", "Write an input address (%I) that the next cycle reads",
     R"({"type":"object","required":["address","value"],"properties":{"address":{"type":"string"},"value":)" TAKT_TYPED
     R"(},"additionalProperties":false})",
     R"({"type":"object"})", std::nullopt, harnessSetDirectInput},
    {"harness.set_direct_memory", "Write a memory address (%M) that the next cycle reads",
     R"({"type":"object","required":["address","value"],"properties":{"address":{"type":"string"},"value":)" TAKT_TYPED
     R"(},"additionalProperties":false})",
     R"({"type":"object"})", std::nullopt, harnessSetDirectMemory},
    {"harness.get_direct_output", "Read a process-image address (%Q, %M or %I)",
     R"({"type":"object","required":["address"],"properties":{"address":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","required":["address","value"],"properties":{"address":{"type":"string"},"value":)" TAKT_TYPED
     "}}",
     std::nullopt, harnessGetDirectOutput},
    {"harness.set_wall_clock", "Set the virtual date and time (NOW_DT(), RTC); it runs on with virtual time",
     R"({"type":"object","required":["value"],"properties":{"value":)" TAKT_TYPED R"(},"additionalProperties":false})",
     R"({"type":"object"})", std::nullopt, harnessSetWallClock},
    {"harness.get_output", "Read an output, global or program variable",
     R"({"type":"object","required":["name"],"properties":{"name":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","required":["name","value"],"properties":{"name":{"type":"string"},"value":)" TAKT_TYPED "}}",
     std::nullopt, harnessGetOutput},
    {"harness.advance_time", "Advance virtual time without executing a cycle",
     R"({"type":"object","required":["duration_ms"],"properties":{"duration_ms":{"type":"number","minimum":0}},)"
     R"("additionalProperties":false})",
     R"({"type":"object"})", std::nullopt, harnessAdvanceTime},
    {"harness.run_until", "Cycle until a named variable equals a value (-32004 when max_cycles runs out)",
     R"({"type":"object","required":["name","equals"],"properties":{"name":{"type":"string"},"equals":)" TAKT_TYPED
     R"(,"dt_ms":{"type":"number","minimum":0},"max_cycles":{"type":"integer","minimum":0},)" TAKT_WATCH
     R"(},"additionalProperties":false})",
     R"({"type":"object","required":["cycle","time_nanos","cycles_run","watch","tasks"],"properties":{)"
     R"("cycle":{"type":"integer"},"time_nanos":{"type":"integer"},"cycles_run":{"type":"integer"},)"
     R"("watch":{"type":"object","additionalProperties":)" TAKT_TYPED "}," TAKT_TASKS "}}",
     std::nullopt, harnessRunUntil},
};

} // namespace

std::span<const MethodSpec> methodTable() {
    return kMethods;
}

const MethodSpec* findMethod(std::string_view name) {
    return rpc::findMethod(methodTable(), name);
}

bool checkParams(const MethodSpec& method, const Value& params, rpc::Error& error) {
    static const rpc::ParamsSchemas schemas = [] {
        rpc::ParamsSchemas s;
        for (const MethodSpec& m : kMethods) {
            s.add(rpc::factsOf(m));
        }
        return s;
    }();
    return schemas.check(method.name, params, error);
}

} // namespace takt::agent::detail
