// workspace.read / write / project_info and the project selection every project-level method
// shares: everything read goes through the confined Workspace.
#include <fcntl.h>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "api/agent_methods.h"
#include "api/workspace_files.h"
#include "takt/compiler/frontend.h"

namespace takt::agent::detail {

namespace {

using rapidjson::Value;
using rpc::JsonWriter;

constexpr std::size_t kMaxReadBytes = std::size_t{16} << 20;
constexpr std::size_t kMaxSourceBytes = std::size_t{64} << 20;

std::string finish(const rapidjson::StringBuffer& buf) {
    return {buf.GetString(), buf.GetSize()};
}

// The toml++ node as a JSON value (strings, numbers, booleans, arrays, tables). Nesting is
// bounded by what toml++ accepts from a file in the user's own project.
void writeToml(JsonWriter& w, const toml::node& n) {
    if (const auto* t = n.as_table()) {
        w.StartObject();
        for (const auto& [k, v] : *t) {
            rpc::writeString(w, k.str());
            writeToml(w, v);
        }
        w.EndObject();
    } else if (const auto* a = n.as_array()) {
        w.StartArray();
        for (const auto& v : *a) {
            writeToml(w, v);
        }
        w.EndArray();
    } else if (const auto* s = n.as_string()) {
        rpc::writeString(w, s->get());
    } else if (const auto* i = n.as_integer()) {
        w.Int64(i->get());
    } else if (const auto* f = n.as_floating_point()) {
        w.Double(f->get());
    } else if (const auto* b = n.as_boolean()) {
        w.Bool(b->get());
    } else {
        std::string text;
        if (const auto* d = n.as_date()) {
            text = fmt::format("{:04}-{:02}-{:02}", d->get().year, d->get().month, d->get().day);
        }
        rpc::writeString(w, text);
    }
}

// Parses a TOML file of the project; false with `error` when it does not parse.
bool parseToml(const std::string& text, const std::string& display, toml::table& out, std::string& error) {
    try {
        out = toml::parse(std::string_view(text), std::string_view(display));
        return true;
    } catch (const toml::parse_error& e) {
        error = fmt::format("{}:{}:{}: {}", display, e.source().begin.line, e.source().begin.column, e.description());
        return false;
    }
}

void writeRuntimeSummary(JsonWriter& w, const toml::table& t) {
    w.StartObject();
    const auto str = [&](const char* key, const toml::node_view<const toml::node>& v) {
        w.Key(key);
        if (const auto s = v.value<std::string>()) {
            rpc::writeString(w, *s);
        } else {
            w.Null();
        }
    };
    str("resourceName", t["resource"]["name"]);
    w.Key("cycleIntervalMs");
    if (const auto c = t["resource"]["cycle_interval_ms"].value<std::int64_t>()) {
        w.Int64(*c);
    } else {
        w.Null();
    }
    str("controlEndpoint", t["runtime"]["control"]["endpoint"]);
    w.Key("controlAuth");
    w.Bool(t["runtime"]["control"]["auth_token"] || t["runtime"]["control"]["tokens"]);
    str("logLevel", t["runtime"]["log"]["level"]);
    str("retainMode", t["runtime"]["retain"]["mode"]);
    str("faultPolicy", t["runtime"]["fault"]["policy"]);
    for (const char* section : {"web", "discovery", "mesh", "watchdog", "realtime"}) {
        if (const toml::node* n = t["runtime"][section].node()) {
            w.Key(section);
            writeToml(w, *n);
        }
    }
    w.EndObject();
}

void writeIoSummary(JsonWriter& w, const toml::table& t) {
    w.StartObject();
    std::vector<std::string> drivers;
    if (const auto d = t["io"]["driver"].value<std::string>()) {
        drivers.push_back(*d);
    }
    if (const toml::array* list = t["io"]["drivers"].as_array()) {
        for (const toml::node& n : *list) {
            if (const auto name = n.as_table() ? (*n.as_table())["name"].value<std::string>() : std::nullopt) {
                drivers.push_back(*name);
            }
        }
    }
    w.Key("drivers");
    w.StartArray();
    for (const std::string& d : drivers) {
        rpc::writeString(w, d);
    }
    w.EndArray();
    w.Key("driverCount");
    w.Uint64(drivers.size());
    const toml::array* safe = t["io"]["safe_state"].as_array();
    w.Key("safeStateCount");
    w.Uint64(safe != nullptr ? safe->size() : 0);
    w.EndObject();
}

} // namespace

rpc::Error workspaceError(const Workspace::Result& r, std::string_view memberName) {
    switch (r.status) {
    case Workspace::Status::Escapes: {
        rpc::Error e = rpc::invalidParam(memberName, r.message);
        e.code = rpc::kPathEscapes;
        return e;
    }
    case Workspace::Status::Invalid: return rpc::invalidParam(memberName, "invalid params: " + r.message);
    default: return rpc::Error{rpc::kCommandFailed, r.message, {}};
    }
}

const Value* member(const Value& params, const char* name) {
    auto it = params.FindMember(name);
    return it == params.MemberEnd() ? nullptr : &it->value;
}

std::string stringParam(const Value& params, const char* name, std::string fallback) {
    const Value* v = member(params, name);
    return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : std::move(fallback);
}

bool boolParam(const Value& params, const char* name, bool fallback) {
    const Value* v = member(params, name);
    return v != nullptr && v->IsBool() ? v->GetBool() : fallback;
}

std::string joinRel(const std::string& base, const std::string& rel) {
    return base.empty() || base == "." ? rel : base + "/" + rel;
}

bool selectProject(Context& ctx, const Value& params, ProjectSelection& out, rpc::Error& error, bool readSources) {
    const std::string project = stringParam(params, "project", ".");
    Workspace::Result r = ctx.workspace.resolve(project, true, out.dir);
    if (!r.ok()) {
        error = workspaceError(r, "project");
        if (r.status == Workspace::Status::NotFound) {
            error.message = fmt::format("project '{}' is not a directory in the workspace", project);
        }
        return false;
    }
    out.rel = ctx.workspace.relative(out.dir);
    // runtime.toml [build] decides overflow, address mode and the sources root, as for `takt build`.
    const std::string tomlRel = joinRel(out.rel, "runtime.toml");
    std::string toml;
    r = ctx.workspace.readFile(tomlRel, kMaxReadBytes, toml);
    if (r.ok()) {
        out.configErrors = compiler::readBuildOptions(toml, "runtime.toml", out.build);
    } else if (r.status != Workspace::Status::NotFound) {
        error = workspaceError(r, "project");
        return false;
    }
    out.sourcesRootGiven = member(params, "sources_root") != nullptr;
    out.sourcesRoot = stringParam(params, "sources_root", out.build.sourcesRoot);
    // An absolute sources_root ("/etc", "/proc/self/root/...") is checked on its own: joined
    // under a project directory it would read as "proj//etc", a path inside.
    if (out.sourcesRoot.starts_with('/')) {
        r = Workspace::checkSyntax(out.sourcesRoot);
    } else {
        r = Workspace::checkSyntax(joinRel(out.rel, out.sourcesRoot));
    }
    if (!r.ok()) {
        error = workspaceError(r, "sources_root");
        return false;
    }
    const std::string rootRel = joinRel(out.rel, out.sourcesRoot);
    // Only a sources root that does not exist makes an empty project (an E-code diagnostic); one
    // that resolves outside the workspace (a symlinked src/) is -32001 like any other path.
    if (r = ctx.workspace.resolve(rootRel, true, out.sourcesAbs); r.status == Workspace::Status::NotFound) {
        out.sourcesAbs = out.dir / out.sourcesRoot;
        return true;
    }
    if (!r.ok()) {
        error = workspaceError(r, "sources_root");
        return false;
    }
    if (!readSources) {
        return true;
    }
    for (const std::filesystem::path& file : compiler::discoverSources(out.sourcesAbs)) {
        const std::string rel = ctx.workspace.relative(file.lexically_normal());
        compiler::SourceText text;
        r = ctx.workspace.readFile(rel, kMaxSourceBytes, text.text);
        if (!r.ok()) {
            error = workspaceError(r, "sources_root");
            return false;
        }
        text.path = file.lexically_normal().lexically_relative(out.dir).generic_string();
        out.sources.push_back(std::move(text));
    }
    return true;
}

std::shared_ptr<const compiler::FileAccess> workspaceFiles(Context& ctx) {
    return std::make_shared<WorkspaceFiles>(ctx.workspace);
}

compiler::Project checkSelection(Context& ctx, const ProjectSelection& sel, const std::filesystem::path& open,
                                 const std::string* text) {
    compiler::ProjectInput input;
    input.directory = sel.dir;
    input.sourcesRoot = sel.sourcesRootGiven ? sel.sourcesRoot : std::string();
    input.access = workspaceFiles(ctx);
    compiler::Frontend frontend(std::move(input), std::nullopt, false);
    if (text != nullptr) {
        frontend.setText(open, *text);
    }
    (void)frontend.check(text != nullptr ? open : std::filesystem::path());
    return std::move(frontend.takeCheck().project);
}

Outcome workspaceRead(Context& ctx, const Value& params) {
    const std::string path = stringParam(params, "path");
    std::string text;
    if (const Workspace::Result r = ctx.workspace.readFile(path, kMaxReadBytes, text); !r.ok()) {
        return failed(workspaceError(r, "path"));
    }
    if (!rpc::isUtf8(text)) {
        return failed(rpc::kCommandFailed, fmt::format("'{}' is not UTF-8 text", path));
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("path");
    rpc::writeString(w, path);
    w.Key("text");
    rpc::writeString(w, text);
    w.Key("bytes");
    w.Uint64(text.size());
    w.EndObject();
    return success(finish(buf));
}

Outcome workspaceWrite(Context& ctx, const Value& params) {
    const std::string path = stringParam(params, "path");
    const std::string text = stringParam(params, "text");
    bool created = false;
    const Workspace::Result r =
        ctx.workspace.writeFile(path, text, boolParam(params, "create_parents", false), created);
    if (!r.ok()) {
        return failed(workspaceError(r, "path"));
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("path");
    rpc::writeString(w, path);
    w.Key("bytes");
    w.Uint64(text.size());
    w.Key("created");
    w.Bool(created);
    w.EndObject();
    return success(finish(buf));
}

Outcome workspaceProjectInfo(Context& ctx, const Value& params) {
    ProjectSelection sel;
    if (rpc::Error e; !selectProject(ctx, params, sel, e)) {
        return failed(std::move(e));
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("project");
    rpc::writeString(w, sel.rel);
    w.Key("projectRoot");
    rpc::writeString(w, sel.dir.string());
    w.Key("workspaceRoot");
    rpc::writeString(w, ctx.workspace.root().string());
    w.Key("sourcesRoot");
    rpc::writeString(w, sel.sourcesRoot);
    w.Key("sourceCount");
    w.Uint64(sel.sources.size());
    w.Key("sources");
    w.StartArray();
    for (const compiler::SourceText& s : sel.sources) {
        rpc::writeString(w, s.path);
    }
    w.EndArray();
    // takt projects have no package dependencies yet; the keys are kept for truST clients.
    w.Key("dependencyRoots");
    w.StartArray();
    w.EndArray();
    w.Key("resolvedDependencies");
    w.StartArray();
    w.EndArray();
    w.Key("files");
    w.StartObject();
    for (const char* f : {"runtime.toml", "io.toml", "simulation.toml", "trust-lsp.toml", "program.stbc"}) {
        const std::string rel = joinRel(sel.rel, f);
        rpc::writeString(w, f);
        w.StartObject();
        w.Key("path");
        rpc::writeString(w, rel);
        w.Key("present");
        w.Bool(ctx.workspace.exists(rel));
        w.EndObject();
    }
    w.EndObject();
    // Config summaries: a file that does not parse is reported, never fails the request.
    const auto summary = [&](const char* file, const char* key, void (*write)(JsonWriter&, const toml::table&)) {
        const std::string rel = joinRel(sel.rel, file);
        std::string text;
        if (const Workspace::Result r = ctx.workspace.readFile(rel, kMaxReadBytes, text); !r.ok()) {
            if (r.status != Workspace::Status::NotFound) {
                w.Key(key);
                w.StartObject();
                w.Key("path");
                rpc::writeString(w, rel);
                w.Key("parseError");
                rpc::writeString(w, r.message);
                w.EndObject();
            }
            return;
        }
        toml::table table;
        std::string error;
        w.Key(key);
        if (!parseToml(text, file, table, error)) {
            w.StartObject();
            w.Key("path");
            rpc::writeString(w, rel);
            w.Key("parseError");
            rpc::writeString(w, error);
            w.EndObject();
            return;
        }
        write(w, table);
    };
    summary("runtime.toml", "runtime", writeRuntimeSummary);
    summary("io.toml", "io", writeIoSummary);
    summary("trust-lsp.toml", "lsp", [](JsonWriter& lw, const toml::table& t) {
        lw.StartObject();
        lw.Key("vendorProfile");
        const auto p = t["project"]["vendor_profile"].value<std::string>();
        const auto top = t["vendor_profile"].value<std::string>();
        if (p || top) {
            rpc::writeString(lw, p ? *p : *top);
        } else {
            lw.Null();
        }
        lw.EndObject();
    });
    w.EndObject();
    return success(finish(buf));
}

} // namespace takt::agent::detail
