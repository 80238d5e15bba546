// `takt export plcopen DIR FILE.xml`: a takt project's ST as PLCopen XML (TC6 2.01) for the OpenPLC
// Editor and CODESYS (compiler/include/takt/compiler/plcopen_export.h). The project is checked first
// and exported only without errors; the XML is written to a file beside FILE and renamed over it at
// the end, so a failure never leaves half a file (nor changes an older FILE).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "cmd_export.h"
#include "commands.h"
#include "takt/agent/agent_server.h"
#include "takt/bytecode/container.h"
#include "takt/compiler/plcopen.h"
#include "takt/compiler/plcopen_export.h"
#include "takt/compiler/project.h"
#include "takt/engine/config.h"

namespace takt::cli {

namespace {

namespace fs = std::filesystem;

struct ExportOptions {
    std::string dir;
    std::string file;
};

// xsd:dateTime of now, in UTC.
std::string utcNow() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return std::string(text, n);
}

int runExport(const ExportOptions& o) {
    std::error_code ec;
    const fs::path dir = fs::absolute(o.dir, ec).lexically_normal();
    if (!fs::is_directory(dir, ec)) {
        std::fprintf(stderr, "takt export: %s is not a project directory; nothing was written\n", dir.c_str());
        return kExitInvalidProject;
    }
    const fs::path file = fs::absolute(o.file, ec).lexically_normal();
    if (file.filename().empty() || fs::is_directory(file, ec)) {
        std::fprintf(stderr, "takt export: %s is a directory, not the XML file to write; nothing was written\n",
                     file.c_str());
        return kExitInvalidProject;
    }
    compiler::Project project = compiler::checkProject(compiler::ProjectInput{dir, {}, false, {}, {}});
    if (!project.valid()) {
        for (const compiler::ConfigError& e : project.configErrors) {
            std::fprintf(stderr, "%s\n", compiler::renderConfigError(e).c_str());
        }
        std::fprintf(stderr, "takt export: invalid project '%s'; nothing was written\n", dir.c_str());
        return kExitInvalidProject;
    }
    // An XML among the sources would be compiled beside the ST it came from: every POU twice.
    const fs::path sources = (dir / project.build.sourcesRoot).lexically_normal();
    const auto [end, _] = std::mismatch(sources.begin(), sources.end(), file.begin(), file.end());
    if (end == sources.end() && compiler::isPlcopenPath(file)) {
        std::fprintf(stderr,
                     "takt export: %s lies in the sources folder %s, where takt would compile it beside the ST it "
                     "comes from; write it elsewhere. Nothing was written\n",
                     file.c_str(), sources.c_str());
        return kExitInvalidProject;
    }
    if (project.errorCount > 0) {
        const std::string text = compiler::renderHuman(project.diagnostics, *project.sources);
        std::fwrite(text.data(), 1, text.size(), stderr);
        std::fprintf(stderr, "takt export: %zu error(s) in the project; nothing was written\n", project.errorCount);
        return kExitBuildFailure;
    }
    compiler::PlcopenExportOptions options;
    // The resource's name and base cycle, for the configuration written when the project has none.
    engine::RuntimeConfig runtime;
    if (fs::exists(dir / "runtime.toml", ec)) {
        const engine::RuntimeConfigResult rc = engine::loadRuntimeConfig(dir / "runtime.toml");
        if (!rc.config) {
            for (const engine::ConfigDiagnostic& d : rc.diagnostics) {
                std::fprintf(stderr, "%s\n", engine::formatDiagnostic(d).c_str());
            }
            std::fprintf(stderr, "takt export: invalid project '%s'; nothing was written\n", dir.c_str());
            return kExitInvalidProject;
        }
        runtime = *rc.config;
    }
    options.resourceName = runtime.resourceName;
    options.cycleIntervalMs = runtime.cycleIntervalMs;
    options.projectName = dir.filename().string();
    options.creationDateTime = utcNow();
    options.productVersion = agent::taktVersion();
    const compiler::PlcopenExport exported = compiler::exportPlcopen(project, options);
    if (!exported.problems.empty()) {
        const std::string text = compiler::renderHuman(exported.problems, *project.sources);
        std::fwrite(text.data(), 1, text.size(), stderr);
        std::fprintf(stderr, "takt export: %zu part(s) of the project have no PLCopen XML form; nothing was written\n",
                     exported.problems.size());
        return kExitBuildFailure;
    }
    // A temporary file beside FILE, renamed over it once complete (the way program.stbc is written).
    const std::string error = bytecode::writeFileAtomically(
        file, std::span(reinterpret_cast<const std::uint8_t*>(exported.xml.data()), exported.xml.size()));
    if (!error.empty()) {
        std::fprintf(stderr, "takt export: %s; nothing was written\n", error.c_str());
        return kExitInternal;
    }
    std::printf("exported %s to %s: %zu POU(s), %zu data type(s), %zu task(s)\n", dir.c_str(), file.c_str(),
                exported.pous, exported.dataTypes, exported.tasks);
    return kExitOk;
}

} // namespace

void registerExport(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<ExportOptions>();
    CLI::App* cmd = app.add_subcommand("export", "Write a project in another tool's format");
    cmd->require_subcommand(1);
    CLI::App* plcopen =
        cmd->add_subcommand("plcopen", "The project's ST as PLCopen XML (TC6 2.01) for the OpenPLC Editor and CODESYS");
    plcopen->add_option("dir", options->dir, "The project directory")->required();
    plcopen->add_option("file", options->file, "The XML file to write (replaced when it exists)")->required();
    plcopen->callback([options, &exitCode] { exitCode = runExport(*options); });
}

} // namespace takt::cli
