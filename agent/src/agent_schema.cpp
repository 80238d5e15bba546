// The method table: names, summaries, JSON Schemas of params and results, handlers; and the
// params check every request goes through before its handler.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "agent_methods.h"

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
#define TAKT_PROGRESS                                                                                                  \
    R"({"type":"object","required":["cycle","time_nanos","watch"],"properties":{"cycle":{"type":"integer"},)"          \
    R"("time_nanos":{"type":"integer"},"watch":{"type":"object","additionalProperties":)" TAKT_TYPED "}}}"
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

const std::vector<MethodSpec> kMethods = {
    {"agent.describe", "Transport, workspace root, version, methods and notifications", TAKT_NO_PARAMS,
     R"({"type":"object","required":["transport","workspace_root","version","methods","notifications"],)"
     R"("properties":{"transport":{"const":"stdio"},"workspace_root":{"type":"string"},"version":{"type":"string"},)"
     R"("methods":{"type":"array","items":{"type":"string"}},"notifications":{"type":"array","items":{"type":"string"}}}})",
     agentDescribe},
    {"agent.ping", "Liveness check", TAKT_NO_PARAMS,
     R"({"type":"object","required":["ok","version","uptime_s"],"properties":{"ok":{"const":true},)"
     R"("version":{"type":"string"},"uptime_s":{"type":"number"}}})",
     agentPing},
    {"agent.schema", "JSON Schema of one method's params and result",
     R"({"type":"object","required":["method"],"properties":{"method":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","required":["method","params","result"],"properties":{"method":{"type":"string"},)"
     R"("params":{"type":"object"},"result":{"type":"object"}}})",
     agentSchema},
    {"workspace.read", "Read a file inside the workspace root",
     R"({"type":"object","required":["path"],"properties":{"path":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","required":["path","text","bytes"],"properties":{"path":{"type":"string"},)"
     R"("text":{"type":"string"},"bytes":{"type":"integer"}}})",
     workspaceRead},
    {"workspace.write", "Write a file inside the workspace root (atomically)",
     R"({"type":"object","required":["path","text"],"properties":{"path":{"type":"string"},"text":{"type":"string"},)"
     R"("create_parents":{"type":"boolean"}},"additionalProperties":false})",
     R"({"type":"object","required":["path","bytes","created"],"properties":{"path":{"type":"string"},)"
     R"("bytes":{"type":"integer"},"created":{"type":"boolean"}}})",
     workspaceWrite},
    {"workspace.project_info", "Project root, sources, config files and runtime/IO orientation",
     R"({"type":"object","properties":{)" TAKT_PROJECT "," TAKT_SOURCES_ROOT R"(},"additionalProperties":false})",
     R"({"type":"object","required":["project","projectRoot","sourcesRoot","sourceCount","sources",)"
     R"("dependencyRoots","resolvedDependencies","files"],"properties":{"project":{"type":"string"},)"
     R"("projectRoot":{"type":"string"},"sourcesRoot":{"type":"string"},"sourceCount":{"type":"integer"},)"
     R"("sources":{"type":"array","items":{"type":"string"}},"dependencyRoots":{"type":"array"},)"
     R"("resolvedDependencies":{"type":"array"},"files":{"type":"object"},"lsp":{"type":"object"},)"
     R"("runtime":{"type":"object"},"io":{"type":"object"}}})",
     workspaceProjectInfo},
    {"lsp.diagnostics", "Diagnostics for one ST file (optionally in-memory content) or the whole project",
     R"({"type":"object","properties":{)" TAKT_PROJECT "," TAKT_SOURCES_ROOT
     R"(,"path":{"type":"string"},"content":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","required":["target","errors","warnings","issues"],"properties":{"target":{"type":"string"},)"
     R"("errors":{"type":"integer"},"warnings":{"type":"integer"},)" TAKT_ISSUES "}}",
     lspDiagnostics},
    {"lsp.format", "Formatting preview of one ST file; never writes",
     R"({"type":"object","required":["path"],"properties":{)" TAKT_PROJECT
     R"(,"path":{"type":"string"},"content":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","required":["path","file","formatted","changed"],"properties":{"path":{"type":"string"},)"
     R"("file":{"type":"string"},"formatted":{"type":"string"},"changed":{"type":"boolean"}}})",
     lspFormat},
    {"runtime.build", "takt build --ci: compile to program.stbc",
     R"({"type":"object","properties":{)" TAKT_PROJECT "," TAKT_SOURCES_ROOT R"(},"additionalProperties":false})",
     R"({"type":"object","required":["version","command","status","project","program","source_count","sources",)"
     R"("diagnostics"],"properties":{"command":{"const":"build"}}})",
     runtimeBuild},
    {"runtime.compile_reload", "Diagnose, build and reload a running runtime in one step", TAKT_RELOAD_PARAMS,
     R"({"type":"object","required":["target","dirty","errors","warnings","issues","runtimeStatus","runtimeMessage"],)"
     R"("properties":{"target":{"type":"string"},"dirty":{"const":false},"errors":{"type":"integer"},)"
     R"("warnings":{"type":"integer"},)" TAKT_ISSUES R"(,"runtimeStatus":{"enum":["reloaded","blocked",)"
     R"("build_failed","no_endpoint","unreachable","reload_failed"]},"runtimeMessage":{"type":"string"},)"
     R"("build":{"type":"object"},"reload":{"type":"object"}}})",
     runtimeCompileReload},
    {"runtime.validate", "takt validate --ci: runtime.toml, io.toml and program.stbc checks",
     R"({"type":"object","properties":{)" TAKT_PROJECT R"(},"additionalProperties":false})",
     R"({"type":"object","required":["version","command","status","project"],)"
     R"("properties":{"command":{"const":"validate"}}})",
     runtimeValidate},
    {"runtime.test", "takt test --output json",
     R"({"type":"object","properties":{)" TAKT_PROJECT R"(,"filter":{"type":"string"},"list":{"type":"boolean"},)"
     R"("timeout_seconds":{"type":"number","minimum":0}},"additionalProperties":false})",
     R"({"type":"object","required":["version","project","summary","tests"],"properties":{"summary":{"type":"object",)"
     R"("required":["total","passed","failed","errors","duration_ms"]},"tests":{"type":"array"}}})",
     runtimeTest},
    {"runtime.reload", "Rebuild program.stbc and send bytecode.reload to a running runtime", TAKT_RELOAD_PARAMS,
     R"({"type":"object","required":["build","reload"],"properties":{"build":{"type":"object"},)"
     R"("reload":{"type":"object"}}})",
     runtimeReload},
    {"harness.load", "Load inline, project or file sources into the deterministic harness",
     R"({"type":"object","properties":{)" TAKT_SOURCES_PARAMS R"(},"additionalProperties":false})", TAKT_LOADED,
     harnessLoad},
    {"harness.reload", "Online change of the harness program (mode warm: warm-restart semantics)",
     R"({"type":"object","properties":{)" TAKT_SOURCES_PARAMS
     R"(,"mode":{"enum":["online","warm"]}},"additionalProperties":false})",
     TAKT_LOADED, harnessReload},
    {"harness.cycle", "Advance cycles, each after advancing virtual time by dt_ms",
     R"({"type":"object","properties":{"count":{"type":"integer","minimum":0},"dt_ms":{"type":"number","minimum":0},)" TAKT_WATCH
     R"(},"additionalProperties":false})",
     TAKT_PROGRESS, harnessCycle},
    {"harness.set_input", "Set an input, global or program variable",
     R"({"type":"object","required":["name","value"],"properties":{"name":{"type":"string"},"value":)" TAKT_TYPED
     R"(},"additionalProperties":false})",
     R"({"type":"object"})", harnessSetInput},
    {"harness.get_output", "Read an output, global or program variable",
     R"({"type":"object","required":["name"],"properties":{"name":{"type":"string"}},"additionalProperties":false})",
     R"({"type":"object","required":["name","value"],"properties":{"name":{"type":"string"},"value":)" TAKT_TYPED "}}",
     harnessGetOutput},
    {"harness.advance_time", "Advance virtual time without executing a cycle",
     R"({"type":"object","required":["duration_ms"],"properties":{"duration_ms":{"type":"number","minimum":0}},)"
     R"("additionalProperties":false})",
     R"({"type":"object"})", harnessAdvanceTime},
    {"harness.run_until", "Cycle until a named variable equals a value (-32004 when max_cycles runs out)",
     R"({"type":"object","required":["name","equals"],"properties":{"name":{"type":"string"},"equals":)" TAKT_TYPED
     R"(,"dt_ms":{"type":"number","minimum":0},"max_cycles":{"type":"integer","minimum":0},)" TAKT_WATCH
     R"(},"additionalProperties":false})",
     R"({"type":"object","required":["cycle","time_nanos","cycles_run","watch"]})", harnessRunUntil},
};

const char* typeOf(const Value& v) {
    if (v.IsNull()) {
        return "null";
    }
    if (v.IsBool()) {
        return "boolean";
    }
    if (v.IsString()) {
        return "string";
    }
    if (v.IsArray()) {
        return "array";
    }
    if (v.IsObject()) {
        return "object";
    }
    return v.IsInt64() || v.IsUint64() ? "integer" : "number";
}

bool hasType(const Value& v, std::string_view type) {
    const std::string_view actual = typeOf(v);
    return actual == type || (type == "number" && actual == "integer");
}

std::string typeList(const Value& t) {
    if (t.IsString()) {
        return t.GetString();
    }
    std::string out;
    for (const Value& x : t.GetArray()) {
        out += out.empty() ? "" : " or ";
        out += x.GetString();
    }
    return out;
}

// Validates `v` against `schema`; `where` names the member for the error.
bool check(const Value& schema, const Value& v, const std::string& where, rpc::Error& error) {
    if (auto t = schema.FindMember("type"); t != schema.MemberEnd()) {
        bool ok = false;
        if (t->value.IsString()) {
            ok = hasType(v, t->value.GetString());
        } else {
            for (const Value& x : t->value.GetArray()) {
                ok = ok || hasType(v, x.GetString());
            }
        }
        if (!ok) {
            const std::string expected = typeList(t->value);
            const bool vowel = std::string_view("aeiou").find(expected.front()) != std::string_view::npos;
            error = rpc::invalidParam(where, fmt::format("invalid params: '{}' must be {} {}, not {}", where,
                                                         vowel ? "an" : "a", expected, typeOf(v)));
            return false;
        }
    }
    if (auto e = schema.FindMember("enum"); e != schema.MemberEnd()) {
        const auto& list = e->value.GetArray();
        if (std::find(list.begin(), list.end(), v) == list.end()) {
            std::string choices;
            for (const Value& x : list) {
                choices += fmt::format("{}\"{}\"", choices.empty() ? "" : ", ", x.GetString());
            }
            error = rpc::invalidParam(where, fmt::format("invalid params: '{}' must be one of {}", where, choices));
            return false;
        }
    }
    if (auto m = schema.FindMember("minimum"); m != schema.MemberEnd() && v.IsNumber()) {
        if (v.GetDouble() < m->value.GetDouble()) {
            error = rpc::invalidParam(
                where, fmt::format("invalid params: '{}' must be at least {}", where, m->value.GetInt64()));
            return false;
        }
    }
    if (v.IsArray()) {
        if (auto items = schema.FindMember("items"); items != schema.MemberEnd()) {
            for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
                if (!check(items->value, v[i], fmt::format("{}[{}]", where, i), error)) {
                    return false;
                }
            }
        }
    }
    if (!v.IsObject()) {
        return true;
    }
    auto props = schema.FindMember("properties");
    if (auto req = schema.FindMember("required"); req != schema.MemberEnd()) {
        for (const Value& name : req->value.GetArray()) {
            if (!v.HasMember(name.GetString())) {
                const std::string member = where.empty() ? name.GetString() : where + "." + name.GetString();
                error = rpc::invalidParam(member, fmt::format("invalid params: '{}' is required", member));
                return false;
            }
        }
    }
    if (props == schema.MemberEnd()) {
        return true;
    }
    auto extra = schema.FindMember("additionalProperties");
    const bool closed = extra != schema.MemberEnd() && extra->value.IsFalse();
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        const std::string name(it->name.GetString(), it->name.GetStringLength());
        const std::string member = where.empty() ? name : where + "." + name;
        auto p = props->value.FindMember(it->name);
        if (p == props->value.MemberEnd()) {
            if (closed) {
                std::string known;
                for (auto k = props->value.MemberBegin(); k != props->value.MemberEnd(); ++k) {
                    known += fmt::format("{}{}", known.empty() ? "" : ", ", k->name.GetString());
                }
                error = rpc::invalidParam(member, fmt::format("invalid params: unknown member '{}' (known: {})", member,
                                                              known.empty() ? "none" : known));
                return false;
            }
            continue;
        }
        if (!check(p->value, it->value, member, error)) {
            return false;
        }
    }
    return true;
}

// The parsed params schemas, built once.
const std::unordered_map<std::string_view, rapidjson::Document>& parsedSchemas() {
    static const std::unordered_map<std::string_view, rapidjson::Document> schemas = [] {
        std::unordered_map<std::string_view, rapidjson::Document> m;
        for (const MethodSpec& spec : kMethods) {
            rapidjson::Document d;
            d.Parse(spec.paramsSchema.data(), spec.paramsSchema.size());
            m.emplace(spec.name, std::move(d));
        }
        return m;
    }();
    return schemas;
}

} // namespace

const std::vector<MethodSpec>& methodTable() {
    return kMethods;
}

const MethodSpec* findMethod(std::string_view name) {
    for (const MethodSpec& m : kMethods) {
        if (m.name == name) {
            return &m;
        }
    }
    return nullptr;
}

bool checkParams(const MethodSpec& method, const Value& params, rpc::Error& error) {
    const auto& schemas = parsedSchemas();
    const auto it = schemas.find(method.name);
    if (it == schemas.end() || it->second.HasParseError()) {
        error = rpc::Error{rpc::kInternalError, fmt::format("no params schema for '{}'", method.name), {}};
        return false;
    }
    return check(it->second, params, "", error);
}

} // namespace takt::agent::detail
