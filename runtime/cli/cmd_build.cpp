// `takt build [--project DIR] [--ci]`: the front end, the back end and the verifier, then
// program.stbc written atomically into the project directory (a running `takt run` or a reload
// never sees a half-written file). --ci prints one JSON document on stdout (CONFIG.md).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "commands.h"
#include "takt/bytecode/container.h"
#include "takt/bytecode/verifier.h"
#include "takt/compiler/codegen.h"
#include "takt/compiler/project.h"

namespace takt::cli {

namespace {

struct BuildOptions {
    std::string project;
    bool ci = false;
};

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void writeString(JsonWriter& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

struct BuildOutcome {
    int exitCode = kExitOk;
    std::vector<compiler::Diagnostic> diagnostics;
    std::optional<std::string> program; // path written
    std::string failure;                // a build failure that is not an ST diagnostic
    std::size_t bytes = 0;
    std::string hash;
};

BuildOutcome build(compiler::Project& project) {
    BuildOutcome out;
    out.diagnostics = project.diagnostics;
    if (!project.valid()) {
        out.exitCode = kExitInvalidProject;
        return out;
    }
    if (project.errorCount > 0) {
        out.exitCode = kExitBuildFailure;
        return out;
    }
    compiler::CodegenOptions options;
    options.overflowTrap = project.build.overflow == compiler::OverflowMode::Trap;
    options.addressMode = project.build.addressMode;
    bytecode::Module module;
    compiler::DiagnosticSink sink;
    bool generated = compiler::generate(*project.model, project.units, *project.sources, options, module, sink);
    sink.sort();
    out.diagnostics.insert(out.diagnostics.end(), sink.diagnostics().begin(), sink.diagnostics().end());
    if (!generated || sink.hasErrors()) {
        out.exitCode = kExitBuildFailure;
        return out;
    }
    // The runtime refuses what the verifier rejects, so such a file is never written.
    bytecode::VerifyResult verified = bytecode::verify(module);
    if (!verified.ok()) {
        out.failure = "internal error: the generated program fails verification: " + verified.message;
        out.exitCode = kExitInternal;
        return out;
    }
    std::vector<std::uint8_t> bytes = bytecode::serialize(module);
    std::filesystem::path path = project.directory / "program.stbc";
    std::string error = bytecode::writeFileAtomically(path, bytes);
    if (!error.empty()) {
        out.failure = error;
        out.exitCode = kExitBuildFailure;
        return out;
    }
    bytecode::LoadResult check = bytecode::deserialize(bytes);
    out.hash = check.ok() ? bytecode::hashHex(check.hash) : std::string();
    out.bytes = bytes.size();
    out.program = path.string();
    return out;
}

std::string renderJson(const compiler::Project& project, const BuildOutcome& outcome) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("version");
    w.Int(1);
    w.Key("command");
    w.String("build");
    w.Key("status");
    w.String(outcome.exitCode == kExitOk ? "ok" : "error");
    w.Key("project");
    writeString(w, project.directory.string());
    w.Key("program");
    if (outcome.program) {
        writeString(w, *outcome.program);
    } else {
        w.Null();
    }
    w.Key("source_count");
    w.Uint64(project.sourcePaths.size());
    w.Key("sources");
    w.StartArray();
    for (const std::string& path : project.sourcePaths) {
        writeString(w, path);
    }
    w.EndArray();
    w.Key("diagnostics");
    std::string diags = compiler::renderJson(outcome.diagnostics, *project.sources);
    w.RawValue(diags.data(), diags.size(), rapidjson::kArrayType);
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
    return std::string(buf.GetString(), buf.GetSize());
}

int runBuild(const BuildOptions& options) {
    compiler::ProjectInput input;
    input.directory = options.project;
    compiler::Project project = compiler::checkProject(input);
    BuildOutcome outcome = build(project);
    if (options.ci) {
        std::string doc = renderJson(project, outcome) + "\n";
        std::fwrite(doc.data(), 1, doc.size(), stdout);
        return outcome.exitCode;
    }
    for (const compiler::ConfigError& e : project.configErrors) {
        std::fprintf(stderr, "%s\n", compiler::renderConfigError(e).c_str());
    }
    std::string text = project.valid() ? compiler::renderHuman(outcome.diagnostics, *project.sources) : std::string();
    std::fwrite(text.data(), 1, text.size(), stderr);
    if (!outcome.failure.empty()) {
        std::fprintf(stderr, "takt build: %s\n", outcome.failure.c_str());
    }
    if (!project.valid()) {
        std::fprintf(stderr, "takt build: invalid project '%s'\n", project.directory.c_str());
    } else if (outcome.program) {
        std::fprintf(stderr, "takt build: wrote %s (%zu bytes, %zu sources, program hash %.16s)\n",
                     outcome.program->c_str(), outcome.bytes, project.sourcePaths.size(), outcome.hash.c_str());
    } else {
        std::fprintf(stderr, "takt build: failed, program.stbc not written\n");
    }
    return outcome.exitCode;
}

} // namespace

void registerBuild(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<BuildOptions>();
    CLI::App* cmd = app.add_subcommand("build", "Compile the project's src/ to program.stbc");
    cmd->add_option("--project", options->project, "Project directory (default: the current directory)");
    cmd->add_flag("--ci", options->ci, "Print one JSON document on stdout");
    cmd->callback([options, &exitCode] { exitCode = runBuild(*options); });
}

} // namespace takt::cli
