// lsp.diagnostics and lsp.format: the front end and the formatter over workspace files or
// in-memory content. Diagnostics come from the compiler's one JSON renderer, with the absolute
// file added.
#include <fmt/format.h>

#include "api/agent_methods.h"
#include "takt/compiler/formatter.h"
#include "takt/compiler/plcopen.h"

namespace takt::agent::detail {

namespace {

using rapidjson::Value;
using rpc::JsonWriter;

constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;

std::string normalRel(const std::string& path) {
    return std::filesystem::path(path).lexically_normal().generic_string();
}

void addFile(Value& entry, const std::filesystem::path& dir, rapidjson::Document::AllocatorType& a) {
    auto p = entry.FindMember("path");
    Value file;
    if (p != entry.MemberEnd() && p->value.IsString()) {
        const std::string abs = (dir / p->value.GetString()).lexically_normal().string();
        file.SetString(abs.c_str(), static_cast<rapidjson::SizeType>(abs.size()), a);
    }
    entry.AddMember("file", file, a);
}

// The source `rel` (workspace-relative) as the editor has it: params.content when given (an
// unsaved buffer; `rel` is only checked), else the file. A failure names the `path` param.
bool sourceText(Context& ctx, const Value& params, const std::string& rel, std::string& text, rpc::Error& error) {
    if (const Value* content = member(params, "content"); content != nullptr) {
        if (const Workspace::Result r = Workspace::checkSyntax(rel); !r.ok()) {
            error = workspaceError(r, "path");
            return false;
        }
        text.assign(content->GetString(), content->GetStringLength());
    } else if (const Workspace::Result r = ctx.workspace.readFile(rel, kMaxFileBytes, text); !r.ok()) {
        error = workspaceError(r, "path");
        return false;
    }
    return true;
}

} // namespace

std::string issuesJson(const compiler::Project& project, const std::string& onlyPath, std::size_t& errors,
                       std::size_t& warnings) {
    errors = 0;
    warnings = 0;
    rapidjson::Document doc;
    const std::string all = compiler::renderJson(project.diagnostics, *project.sources);
    doc.Parse(all.data(), all.size());
    Value kept(rapidjson::kArrayType);
    auto& a = doc.GetAllocator();
    if (doc.IsArray()) {
        for (Value& d : doc.GetArray()) {
            auto p = d.FindMember("path");
            if (!onlyPath.empty() && (p == d.MemberEnd() || !p->value.IsString() || onlyPath != p->value.GetString())) {
                continue;
            }
            addFile(d, project.directory, a);
            if (auto r = d.FindMember("related"); r != d.MemberEnd() && r->value.IsArray()) {
                for (Value& rel : r->value.GetArray()) {
                    addFile(rel, project.directory, a);
                }
            }
            const std::string_view severity = d["severity"].GetString();
            errors += severity == "error" ? 1 : 0;
            warnings += severity == "warning" ? 1 : 0;
            kept.PushBack(d, a);
        }
    }
    return rpc::toJson(kept);
}

Outcome lspDiagnostics(Context& ctx, const Value& params) {
    if (member(params, "content") != nullptr && member(params, "path") == nullptr) {
        return failed(rpc::invalidParam("content", "invalid params: 'content' requires 'path'"));
    }
    ProjectSelection sel;
    if (rpc::Error e; !selectProject(ctx, params, sel, e, false)) {
        return failed(std::move(e));
    }
    std::string only;
    std::string text;
    std::filesystem::path open;
    if (member(params, "path") != nullptr) {
        const std::string pathParam = stringParam(params, "path");
        const std::string rel = joinRel(sel.rel, pathParam);
        if (rpc::Error e; !sourceText(ctx, params, rel, text, e)) {
            return failed(std::move(e));
        }
        only = normalRel(pathParam);
        open = (sel.dir / only).lexically_normal();
    }
    const compiler::Project project = checkSelection(ctx, sel, open, open.empty() ? nullptr : &text);
    if (!project.valid()) {
        std::string message = "invalid project:";
        for (const compiler::ConfigError& e : project.configErrors) {
            message += " " + compiler::renderConfigError(e);
        }
        return failed(rpc::kCommandFailed, message);
    }
    std::size_t errors = 0;
    std::size_t warnings = 0;
    const std::string issues = issuesJson(project, only, errors, warnings);
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("target");
    rpc::writeString(w, joinRel(sel.rel, only.empty() ? sel.sourcesRoot : only));
    w.Key("errors");
    w.Uint64(errors);
    w.Key("warnings");
    w.Uint64(warnings);
    w.Key("issues");
    w.RawValue(issues.data(), issues.size(), rapidjson::kArrayType);
    w.EndObject();
    return success({buf.GetString(), buf.GetSize()});
}

Outcome lspFormat(Context& ctx, const Value& params) {
    ProjectSelection sel;
    const std::string project = stringParam(params, "project", ".");
    if (const Workspace::Result r = ctx.workspace.resolve(project, true, sel.dir); !r.ok()) {
        return failed(workspaceError(r, "project"));
    }
    sel.rel = ctx.workspace.relative(sel.dir);
    const std::string path = stringParam(params, "path");
    const std::string rel = joinRel(sel.rel, path);
    std::string text;
    if (rpc::Error e; !sourceText(ctx, params, rel, text, e)) {
        return failed(std::move(e));
    }
    const std::string display = normalRel(path);
    if (compiler::isPlcopenPath(display)) {
        return failed(rpc::Error{
            rpc::kCommandFailed, fmt::format("'{}' is PLCopen XML: takt formats ST files only", display), {}});
    }
    compiler::SourceManager sm;
    const compiler::FileId id = sm.add(display, std::move(text));
    compiler::DiagnosticSink sink;
    const compiler::FormatResult result = compiler::formatSource(sm.file(id), sink);
    if (!result.ok) {
        sink.sort();
        const std::string diags = compiler::renderJson(sink.diagnostics(), sm);
        return failed(rpc::Error{rpc::kCommandFailed,
                                 fmt::format("'{}' has syntax errors and cannot be formatted", display),
                                 R"({"diagnostics":)" + diags + "}"});
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("path");
    rpc::writeString(w, display);
    w.Key("file");
    rpc::writeString(w, (sel.dir / display).lexically_normal().string());
    w.Key("formatted");
    rpc::writeString(w, result.text);
    w.Key("changed");
    w.Bool(result.changed);
    w.EndObject();
    return success({buf.GetString(), buf.GetSize()});
}

} // namespace takt::agent::detail
