// `takt import plcopen FILE.xml DIR`: a takt project from a PLCopen XML export (OpenPLC Editor,
// Beremiz, CODESYS). The XML itself goes into src/ unchanged — takt compiles it there like ST
// (compiler/include/takt/compiler/plcopen.h), so the project and the editor's file stay one —
// runtime.toml names the resource and the base cycle from its tasks, io.toml the simulated driver
// and the located variables. Nothing is written unless the XML reads without a problem and DIR
// does not hold anything yet.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

#include "commands.h"
#include "takt/compiler/plcopen.h"
#include "takt/compiler/project.h"

namespace takt::cli {

namespace {

namespace fs = std::filesystem;

struct ImportOptions {
    std::string file;
    std::string dir;
};

// TOML basic string contents (names here are identifiers; file names may hold anything).
std::string tomlQuoted(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
    return out + "\"";
}

std::string runtimeToml(const compiler::PlcopenTranslation& t, const std::string& xmlName) {
    std::string out = fmt::format("# Imported from {} by `takt import plcopen`.\n", xmlName);
    std::uint32_t fastest = 0;
    std::string name = "takt";
    if (!t.resources.empty()) {
        const compiler::PlcopenResource& r = t.resources.front();
        name = r.name;
        out += r.implicit ? fmt::format("# The XML's configuration {} was made by `takt export plcopen` for a project "
                                        "without one: takt\n# runs every PROGRAM each base cycle. Its resource {} "
                                        "and task:\n",
                                        r.configuration, r.name)
                          : fmt::format("# takt takes the tasks from the CONFIGURATION in src/{} (configuration {}, "
                                        "resource {}):\n",
                                        xmlName, r.configuration, r.name);
        for (const compiler::PlcopenTask& task : r.tasks) {
            out += fmt::format("#   {:<16} {:<12} priority {}\n", task.name,
                               task.single.empty() ? task.interval : "SINGLE " + task.single,
                               task.priority.empty() ? "-" : task.priority);
            if (task.intervalMs > 0 && (fastest == 0 || task.intervalMs < fastest)) {
                fastest = task.intervalMs;
            }
        }
        for (std::size_t i = 1; i < t.resources.size(); ++i) {
            out += fmt::format("# The XML has a further resource, {} of configuration {}; [resource] names the "
                               "first.\n",
                               t.resources[i].name, t.resources[i].configuration);
        }
    }
    out += "[bundle]\nversion = 1\n\n[resource]\n";
    out += fmt::format("name = {}\n", tomlQuoted(name));
    out += fmt::format("cycle_interval_ms = {}{}\n", fastest == 0 ? 10 : fastest,
                       fastest == 0 ? "" : "            # the fastest task's interval");
    return out;
}

std::string ioToml(const compiler::PlcopenTranslation& t, const std::string& xmlName) {
    std::string out =
        fmt::format("# The I/O of {} (`takt import plcopen`): the simulated driver without a plant, so the project\n"
                    "# runs at once — inputs stay 0 unless a simulation.toml drives them, outputs go nowhere.\n"
                    "# Choose the real driver here (docs/io-drivers.md). {}\n",
                    xmlName, t.located.empty() ? "The file declares no located variables." : "The located variables:");
    for (const compiler::PlcopenLocated& l : t.located) {
        out += fmt::format("#   {:<10} {} : {}\n", l.address, l.path, l.type);
    }
    out += "[io]\ndriver = \"simulated\"\n\n[io.params]\n";
    for (const compiler::PlcopenLocated& l : t.located) {
        if (!l.address.starts_with("%Q") || l.address.find('*') != std::string::npos) {
            continue;
        }
        out += fmt::format("\n[[io.safe_state]]\naddress = \"{}\"    # {}\nvalue = \"{}\"\n", l.address, l.path,
                           l.type == "BOOL" ? "FALSE" : "0");
    }
    return out;
}

bool writeFile(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    return static_cast<bool>(out);
}

int runImport(const ImportOptions& o) {
    std::error_code ec;
    const fs::path dir = fs::absolute(o.dir, ec).lexically_normal();
    if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec))) {
        std::fprintf(stderr, "takt import: %s exists and is not an empty directory; nothing was written\n",
                     dir.c_str());
        return kExitInvalidProject;
    }
    std::string xml;
    std::string error;
    if (!compiler::diskAccess().read(o.file, xml, error)) {
        std::fprintf(stderr, "takt import: cannot read %s: %s\n", o.file.c_str(), error.c_str());
        return kExitInvalidProject;
    }
    compiler::PlcopenTranslation t = compiler::translatePlcopen(xml);
    std::size_t errors = 0;
    for (const compiler::PlcopenProblem& p : t.problems) {
        const compiler::DiagInfo& info = compiler::diagInfo(p.code);
        errors += info.severity == compiler::Severity::Error ? 1 : 0;
        std::fprintf(stderr, "%s:%u:%u: %s[%s]: %s\n", o.file.c_str(), p.line, p.column,
                     std::string(compiler::severityName(info.severity)).c_str(), std::string(info.code).c_str(),
                     p.message.c_str());
    }
    if (errors > 0) {
        std::fprintf(stderr, "takt import: %zu error(s) in %s; nothing was written\n", errors, o.file.c_str());
        return kExitInvalidProject;
    }
    std::string xmlName = fs::path(o.file).filename().string();
    if (!compiler::isPlcopenPath(xmlName)) {
        xmlName += ".xml"; // takt reads PLCopen XML in the sources by this extension
    }
    // Everything goes into a fresh folder beside DIR, renamed to DIR at the end: an error
    // half-way leaves no half a project.
    const fs::path parent = dir.parent_path();
    fs::create_directories(parent, ec);
    const fs::path staging = parent / fmt::format(".{}.import-{}", dir.filename().string(), getpid());
    fs::remove_all(staging, ec);
    fs::create_directories(staging / "src", ec);
    const bool written = !ec && writeFile(staging / "runtime.toml", runtimeToml(t, xmlName)) &&
                         writeFile(staging / "io.toml", ioToml(t, xmlName)) &&
                         writeFile(staging / "src" / xmlName, xml) &&
                         writeFile(staging / ".gitignore", "/.takt/\n/program.stbc\n");
    if (written) {
        fs::rename(staging, dir, ec);
    }
    if (!written || ec) {
        std::fprintf(stderr, "takt import: cannot write %s%s%s; nothing was written\n", dir.c_str(), ec ? ": " : "",
                     ec ? ec.message().c_str() : "");
        std::error_code ignored;
        fs::remove_all(staging, ignored);
        return kExitInternal;
    }
    std::size_t tasks = 0;
    for (const compiler::PlcopenResource& r : t.resources) {
        tasks += r.tasks.size();
    }
    std::printf("created %s from %s: %zu task(s), %zu located variable(s) on the simulated driver\n", dir.c_str(),
                o.file.c_str(), tasks, t.located.size());
    std::printf("next:\n  cd %s\n  takt build   # compiles src/%s\n  takt run\n", dir.c_str(), xmlName.c_str());
    return kExitOk;
}

} // namespace

void registerImport(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<ImportOptions>();
    CLI::App* cmd = app.add_subcommand("import", "Create a project from another tool's export");
    cmd->require_subcommand(1);
    CLI::App* plcopen =
        cmd->add_subcommand("plcopen", "A project from a PLCopen XML file (OpenPLC Editor, Beremiz, CODESYS)");
    plcopen->add_option("file", options->file, "The PLCopen XML file (TC6 2.0 or 2.01)")->required();
    plcopen->add_option("dir", options->dir, "Directory of the new project (created; must not hold anything)")
        ->required();
    plcopen->callback([options, &exitCode] { exitCode = runImport(*options); });
}

} // namespace takt::cli
