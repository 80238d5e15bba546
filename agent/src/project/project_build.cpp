// The build pipeline and the JSON reports shared by `takt build --json`, `takt check --json` and
// the agent API.
#include "takt/agent/project_build.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "takt/bytecode/container.h"
#include "takt/compiler/compile_program.h"

namespace takt::agent {

namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void writeString(JsonWriter& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void writeHeader(JsonWriter& w, const char* command, bool ok, const compiler::Project& project) {
    w.Key("version");
    w.Int(1);
    w.Key("command");
    w.String(command);
    w.Key("status");
    w.String(ok ? "ok" : "error");
    w.Key("project");
    writeString(w, project.directory.string());
}

void writeSources(JsonWriter& w, const compiler::Project& project) {
    w.Key("source_count");
    w.Uint64(project.sourcePaths.size());
    w.Key("sources");
    w.StartArray();
    for (const std::string& path : project.sourcePaths) {
        writeString(w, path);
    }
    w.EndArray();
}

void writeDiagnostics(JsonWriter& w, const std::vector<compiler::Diagnostic>& diags, const compiler::Project& p) {
    w.Key("diagnostics");
    const std::string text = compiler::renderJson(diags, *p.sources);
    w.RawValue(text.data(), text.size(), rapidjson::kArrayType);
}

} // namespace

BuildOutcome buildProject(compiler::Project& project) {
    BuildOutcome out;
    compiler::CompiledProgram compiled = compiler::compileProgram(project);
    out.diagnostics = std::move(compiled.diagnostics);
    out.exitCode = compiler::exitCode(compiled.status);
    out.failure = std::move(compiled.failure);
    if (!compiled.ok()) {
        return out;
    }
    const std::filesystem::path path = project.directory / "program.stbc";
    const std::string error = bytecode::writeFileAtomically(path, compiled.bytes);
    if (!error.empty()) {
        out.failure = error;
        out.exitCode = kExitBuildFailure;
        return out;
    }
    out.hash = std::move(compiled.hash);
    out.bytes = compiled.bytes.size();
    out.program = path.string();
    return out;
}

std::string renderBuildJson(const compiler::Project& project, const BuildOutcome& outcome) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    writeHeader(w, "build", outcome.exitCode == kExitOk, project);
    w.Key("program");
    if (outcome.program) {
        writeString(w, *outcome.program);
    } else {
        w.Null();
    }
    writeSources(w, project);
    writeDiagnostics(w, outcome.diagnostics, project);
    if (outcome.program) {
        w.Key("program_hash");
        writeString(w, outcome.hash);
    }
    if (!outcome.failure.empty()) {
        w.Key("error");
        writeString(w, outcome.failure);
    }
    if (!project.valid()) {
        w.Key("project_errors");
        w.StartArray();
        for (const compiler::ConfigError& e : project.configErrors) {
            writeString(w, compiler::renderConfigError(e));
        }
        w.EndArray();
    }
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::string renderCheckJson(const compiler::Project& project) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    writeHeader(w, "check", project.ok(), project);
    writeSources(w, project);
    writeDiagnostics(w, project.diagnostics, project);
    if (!project.valid()) {
        // Configuration problems are not ST diagnostics: they have no code and no span.
        w.Key("project_errors");
        w.StartArray();
        for (const compiler::ConfigError& e : project.configErrors) {
            w.StartObject();
            w.Key("path");
            writeString(w, e.path);
            w.Key("line");
            w.Uint(e.line);
            w.Key("column");
            w.Uint(e.column);
            w.Key("key");
            writeString(w, e.key);
            w.Key("message");
            writeString(w, e.message);
            w.EndObject();
        }
        w.EndArray();
    }
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

} // namespace takt::agent
