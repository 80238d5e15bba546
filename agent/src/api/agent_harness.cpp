// harness.*: the agent API's face of the deterministic harness. Every command runs through
// Harness::handle / load / reload, the same code `takt harness` serves; only the source
// loading (inline, project, files — all from the workspace) and the error mapping live here.
#include <fmt/format.h>

#include "api/agent_methods.h"

namespace takt::agent::detail {

namespace {

using rapidjson::Value;

constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;

// Harness error kinds onto the codes of seed 000 / PROTOCOLS.md; data keeps the kind and the
// harness's own error data (run_until_timeout: name, max_cycles, expected).
Outcome toOutcome(const HarnessResult& r) {
    if (r.ok) {
        return success(rpc::toJson(r.payload));
    }
    int code = rpc::kCommandFailed;
    std::string message = r.message;
    switch (r.kind) {
    case ErrorKind::InvalidRequest:
    case ErrorKind::InvalidArgument: code = rpc::kInvalidParams; break;
    case ErrorKind::NotLoaded:
        code = rpc::kHarnessNotLoaded;
        message = "harness not loaded; call harness.load first";
        break;
    case ErrorKind::RunUntilTimeout: code = rpc::kRunUntilBudget; break;
    default: break;
    }
    rapidjson::Document data;
    data.SetObject();
    auto& a = data.GetAllocator();
    const std::string_view kind = errorKindName(r.kind);
    data.AddMember("kind", Value(kind.data(), static_cast<rapidjson::SizeType>(kind.size()), a), a);
    if (r.payload.IsObject()) {
        for (auto it = r.payload.MemberBegin(); it != r.payload.MemberEnd(); ++it) {
            data.AddMember(Value(it->name, a), Value(it->value, a), a);
        }
    }
    return failed(rpc::Error{code, std::move(message), rpc::toJson(data)});
}

// The sources of harness.load / harness.reload: exactly one of inline_sources, project, files.
// A project's sources come with its runtime.toml [build] options (overflow, address mode).
bool gatherSources(Context& ctx, const Value& params, std::vector<compiler::SourceText>& out,
                   std::optional<compiler::BuildOptions>& build, rpc::Error& error) {
    const Value* inlineSources = member(params, "inline_sources");
    const Value* files = member(params, "files");
    const bool project = member(params, "project") != nullptr || member(params, "sources_root") != nullptr;
    if ((inlineSources != nullptr) + (files != nullptr) + (project ? 1 : 0) != 1) {
        error = rpc::invalidParam("inline_sources",
                                  "invalid params: give exactly one of 'inline_sources', 'project' or 'files'");
        return false;
    }
    if (inlineSources != nullptr) {
        if (inlineSources->Empty()) {
            error = rpc::invalidParam("inline_sources", "invalid params: 'inline_sources' is empty");
            return false;
        }
        for (rapidjson::SizeType i = 0; i < inlineSources->Size(); ++i) {
            const Value& s = (*inlineSources)[i];
            out.push_back(
                {stringParam(s, "path", inlineSources->Size() == 1 ? "inline.st" : fmt::format("inline{}.st", i)),
                 stringParam(s, "text")});
        }
        return true;
    }
    if (files != nullptr) {
        if (files->Empty()) {
            error = rpc::invalidParam("files", "invalid params: 'files' is empty");
            return false;
        }
        for (rapidjson::SizeType i = 0; i < files->Size(); ++i) {
            const std::string path((*files)[i].GetString(), (*files)[i].GetStringLength());
            compiler::SourceText text{path, {}};
            if (const Workspace::Result r = ctx.workspace.readFile(path, kMaxFileBytes, text.text); !r.ok()) {
                error = workspaceError(r, fmt::format("files[{}]", i));
                return false;
            }
            out.push_back(std::move(text));
        }
        return true;
    }
    // A project is loaded as `takt check` loads it (trust-lsp.toml libraries, include paths and
    // vendor profile too), every file read through the workspace.
    ProjectSelection sel;
    if (!selectProject(ctx, params, sel, error, false)) {
        return false;
    }
    const compiler::Project checked = checkSelection(ctx, sel);
    if (!checked.valid()) {
        error = rpc::Error{
            rpc::kCommandFailed, "invalid project: " + compiler::renderConfigError(checked.configErrors[0]), {}};
        return false;
    }
    // What stops the loader (a trust-lsp.toml error, an unreadable file, no sources) is the answer.
    std::vector<compiler::Diagnostic> loading;
    for (const compiler::Diagnostic& d : checked.diagnostics) {
        using compiler::DiagCode;
        if (d.code == DiagCode::FileReadError || d.code == DiagCode::ManifestInvalid ||
            d.code == DiagCode::DependencyNotFound || d.code == DiagCode::DependencyUnsupported ||
            d.code == DiagCode::FolderOutside) {
            loading.push_back(d);
        }
    }
    if (!loading.empty() || checked.sourcePaths.empty()) {
        error = rpc::Error{
            rpc::kCommandFailed,
            loading.empty()
                ? fmt::format("no source files (*.st, *.pou, *.xml) under '{}'", joinRel(sel.rel, sel.sourcesRoot))
                : "the project cannot be loaded:\n" + compiler::renderHuman(loading, *checked.sources),
            {}};
        return false;
    }
    // The ST files are the SourceManager's last ones (the trust-lsp.toml files read come first).
    const std::size_t first = checked.sources->size() - checked.sourcePaths.size();
    for (std::size_t i = 0; i < checked.sourcePaths.size(); ++i) {
        const auto id = static_cast<compiler::FileId>(first + i);
        out.push_back({checked.sourcePaths[i], std::string(checked.sources->file(id).text())});
    }
    build = checked.build;
    return true;
}

bool overLimit(const Context& ctx, const Value& params, const char* name, rpc::Error& error) {
    const Value* v = member(params, name);
    const std::uint64_t limit = ctx.options.maxCyclesPerRequest;
    if (limit == 0 || v == nullptr || !v->IsUint64() || v->GetUint64() <= limit) {
        return false;
    }
    error = rpc::invalidParam(name, fmt::format("invalid params: '{}' exceeds this server's limit of {} cycles per "
                                                "request",
                                                name, limit));
    return true;
}

} // namespace

Outcome harnessLoad(Context& ctx, const Value& params) {
    std::vector<compiler::SourceText> sources;
    std::optional<compiler::BuildOptions> build;
    if (rpc::Error e; !gatherSources(ctx, params, sources, build, e)) {
        return failed(std::move(e));
    }
    LoadOptions options;
    if (build) {
        options.build = *build;
    }
    return toOutcome(ctx.harness.load(sources, options, params));
}

Outcome harnessReload(Context& ctx, const Value& params) {
    std::vector<compiler::SourceText> sources;
    if (!ctx.harness.loaded()) {
        return failed(rpc::kHarnessNotLoaded, "harness not loaded; call harness.load first");
    }
    std::optional<compiler::BuildOptions> build;
    if (rpc::Error e; !gatherSources(ctx, params, sources, build, e)) {
        return failed(std::move(e));
    }
    return toOutcome(ctx.harness.reload(sources, stringParam(params, "mode") == "warm", build, params));
}

Outcome harnessCycle(Context& ctx, const Value& params) {
    if (rpc::Error e; overLimit(ctx, params, "count", e)) {
        return failed(std::move(e));
    }
    return toOutcome(ctx.harness.handle("cycle", params));
}

Outcome harnessSetInput(Context& ctx, const Value& params) {
    return toOutcome(ctx.harness.handle("set_input", params));
}

Outcome harnessSetDirectInput(Context& ctx, const Value& params) {
    return toOutcome(ctx.harness.handle("set_direct_input", params));
}

Outcome harnessSetDirectMemory(Context& ctx, const Value& params) {
    return toOutcome(ctx.harness.handle("set_direct_memory", params));
}

Outcome harnessSetWallClock(Context& ctx, const Value& params) {
    return toOutcome(ctx.harness.handle("set_wall_clock", params));
}

Outcome harnessGetDirectOutput(Context& ctx, const Value& params) {
    return toOutcome(ctx.harness.handle("get_direct_output", params));
}

Outcome harnessGetOutput(Context& ctx, const Value& params) {
    return toOutcome(ctx.harness.handle("get_output", params));
}

Outcome harnessAdvanceTime(Context& ctx, const Value& params) {
    return toOutcome(ctx.harness.handle("advance_time", params));
}

Outcome harnessRunUntil(Context& ctx, const Value& params) {
    if (rpc::Error e; overLimit(ctx, params, "max_cycles", e)) {
        return failed(std::move(e));
    }
    if (ctx.options.maxCyclesPerRequest != 0 && member(params, "max_cycles") == nullptr) {
        // The harness default (1000) may itself exceed a small limit.
        rapidjson::Document copy;
        copy.CopyFrom(params, copy.GetAllocator());
        copy.AddMember("max_cycles", Value().SetUint64(std::min<std::uint64_t>(1000, ctx.options.maxCyclesPerRequest)),
                       copy.GetAllocator());
        return toOutcome(ctx.harness.handle("run_until", copy));
    }
    return toOutcome(ctx.harness.handle("run_until", params));
}

} // namespace takt::agent::detail
