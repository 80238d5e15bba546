// The checks behind `takt validate` (validate.h). Nothing here starts a driver or opens a
// device: drivers only parse their params in init() and report the bytes they would own.
#include "takt/agent/validate.h"

#include <algorithm>
#include <exception>
#include <system_error>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "takt/agent/control_config.h"
#include "takt/agent/opcua_config.h"
#include "takt/agent/sparkplug_config.h"
#include "takt/bytecode/container.h"
#include "takt/bytecode/verifier.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/project.h"
#include "takt/io/board.h"
#include "takt/io/driver.h"
#include "takt/io/driver_set.h"
#include "takt/io/io_config.h"

namespace takt::agent {

namespace {

namespace fs = std::filesystem;
using engine::ConfigDiagnostic;
using Severity = ConfigDiagnostic::Severity;

ConfigDiagnostic diag(Severity severity, std::string file, std::uint32_t line, std::uint32_t column, std::string key,
                      std::string message) {
    ConfigDiagnostic d;
    d.severity = severity;
    d.file = std::move(file);
    d.line = line;
    d.column = column;
    d.key = std::move(key);
    d.message = std::move(message);
    return d;
}

void append(std::vector<ConfigDiagnostic>& to, std::vector<ConfigDiagnostic>&& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

struct Owned {
    io::ByteRange range;
    std::string owner; // "io.drivers[0] (loopback)"
};

bool covered(const std::vector<Owned>& owned, const io::ByteRange& r) {
    return std::any_of(owned.begin(), owned.end(), [&](const Owned& o) {
        return o.range.area == r.area && o.range.first <= r.first &&
               std::uint64_t{r.first} + std::max<std::uint32_t>(r.count, 1) <=
                   std::uint64_t{o.range.first} + o.range.count;
    });
}

// init() on each registered driver, then the owned ranges: no two drivers may own a byte, and
// every safe-state entry should land in some driver's outputs. Returns the owned ranges when
// every driver could be checked.
std::optional<std::vector<Owned>> checkDrivers(const io::IoConfig& config, ValidateReport& report) {
    std::vector<Owned> owned;
    bool complete = true;
    for (const io::DriverSpec& spec : config.drivers) {
        const std::string file = spec.source.file.empty() ? config.file.string() : spec.source.file;
        const std::string prefix = spec.source.keyPrefix;
        // "io.params" belongs to "io.driver"; "io.drivers[1].params" to "io.drivers[1]".
        const std::string entry = prefix == "io.params"         ? std::string("io.driver")
                                  : prefix.ends_with(".params") ? prefix.substr(0, prefix.size() - 7)
                                                                : prefix;
        std::unique_ptr<io::Driver> driver = io::createDriver(spec.name);
        if (!driver) {
            complete = false;
            report.uncheckedDrivers.push_back(spec.name);
            report.diagnostics.push_back(diag(Severity::Warning, file, spec.line, spec.column, entry,
                                              fmt::format("driver \"{}\" is not built into this takt yet; its "
                                                          "params were not checked",
                                                          spec.name)));
            continue;
        }
        std::string error;
        if (!driver->init(spec, error)) {
            complete = false;
            // Drivers name the key first ("io.params.plant: unknown plant"); keep it as the key.
            std::string key = prefix;
            std::string message = error;
            if (const auto colon = error.find(": "); error.starts_with(prefix) && colon != std::string::npos) {
                key = error.substr(0, colon);
                message = error.substr(colon + 2);
            }
            // At the bad key's line and column, not at `driver =`.
            const io::SourcePoint at = io::paramKeyLocation(spec, key);
            report.diagnostics.push_back(diag(Severity::Error, file, at.line, at.column, key, message));
            driver->stop();
            continue;
        }
        const std::string who = fmt::format("{} ({})", entry, spec.name);
        // The driver's status block is one more writer of its own (it clashes with the driver's
        // ranges too), as DriverSet::configure has it; its errors point at the status key.
        struct Writer {
            io::ByteRange range;
            std::string owner, key;
            std::uint32_t line, column;
        };
        std::vector<Writer> writers;
        for (const io::ByteRange& r : driver->ownedRanges()) {
            writers.push_back({r, who, entry, spec.line, spec.column});
        }
        if (spec.status.count != 0) {
            writers.push_back({spec.status, fmt::format("{}.status ({})", entry, spec.name), entry + ".status",
                               spec.statusLine, spec.statusColumn});
        }
        for (const Writer& w : writers) {
            for (const Owned& o : owned) {
                // One driver may list several lines in one byte (gpio); only other drivers clash.
                if (const io::ByteRange common = io::writeClash(o.range, w.range);
                    o.owner != w.owner && common.count != 0) {
                    if (io::sharedWholeImage(o.range, w.range)) {
                        report.diagnostics.push_back(diag(Severity::Warning, file, w.line, w.column, w.key,
                                                          io::wholeImageOverlapWarning(o.owner, w.owner, common)));
                        continue;
                    }
                    report.diagnostics.push_back(
                        diag(Severity::Error, file, w.line, w.column, w.key,
                             fmt::format("writes {} which {} also writes; each byte of the process image has one "
                                         "writer (drivers that only read outputs may share them)",
                                         io::describeRange(common), o.owner)));
                }
            }
            owned.push_back({w.range, w.owner});
        }
        driver->stop();
    }
    if (!complete) {
        return std::nullopt;
    }
    for (const io::SafeValue& v : config.safeState) {
        if (!covered(owned, v.range)) {
            report.diagnostics.push_back(
                diag(Severity::Warning, config.file.string(), 0, 0, "io.safe_state",
                     fmt::format("no driver owns {}; its safe value drives nothing", v.address)));
        }
    }
    return owned;
}

// Every located variable of `module` is owned by a configured driver; `where` names the file the
// warnings point at.
void checkWiring(const bytecode::Module& module, const std::string& where, const std::vector<Owned>& owned,
                 ValidateReport& report) {
    for (const bytecode::IoBinding& b : module.io) {
        if (b.area == bytecode::IoArea::Memory) {
            continue; // %M is the runtime's own memory, no driver needed
        }
        const io::ByteRange r{b.area == bytecode::IoArea::Input ? io::Area::Input : io::Area::Output, b.byteOffset,
                              std::max<std::uint32_t>(b.size, 1)};
        if (!covered(owned, r)) {
            report.diagnostics.push_back(diag(Severity::Warning, where, 0, 0, b.path,
                                              fmt::format("{} is not wired: no configured driver owns it", b.address)));
        }
    }
}

// program.stbc as `takt run` would load it. With sources beside it, `takt build` and `takt run`
// rebuild it, so a stale or unreadable file is a warning and the wiring was checked on the
// sources' program instead.
void checkProgram(const fs::path& path, bool rebuiltFromSources, const std::optional<engine::RuntimeConfig>& runtime,
                  const std::optional<std::vector<Owned>>& owned, ValidateReport& report) {
    const bytecode::VerifiedProgram loaded = bytecode::loadVerifiedFile(path);
    if (!loaded.ok()) {
        std::string why = loaded.stage == bytecode::VerifiedProgram::Stage::Verify
                              ? "fails verification: " + loaded.error
                              : loaded.error;
        if (rebuiltFromSources) {
            why += "; `takt build` and `takt run` write it again from the sources";
        }
        report.diagnostics.push_back(
            diag(rebuiltFromSources ? Severity::Warning : Severity::Error, path.string(), 0, 0, {}, why));
        return;
    }
    report.program = path;
    report.programHash = loaded.hashHex();
    if (rebuiltFromSources) {
        return;
    }
    if (runtime && runtime->overflowTrap != loaded.module->overflowTrap) {
        report.diagnostics.push_back(
            diag(Severity::Warning, path.string(), 0, 0, "build.overflow",
                 fmt::format("program.stbc was built with overflow = \"{}\" but runtime.toml "
                             "says \"{}\"; run `takt build`",
                             loaded.module->overflowTrap ? "trap" : "wrap", runtime->overflowTrap ? "trap" : "wrap")));
    }
    if (owned) {
        checkWiring(*loaded.module, path.string(), *owned, report);
    }
}

// The sources compiled as `takt build` would (program.stbc may be older than them): their errors,
// and the trust-lsp.toml warnings (the ST warnings are `takt check`'s to list; only counted).
// Null when the project has no sources or they do not compile.
std::shared_ptr<const bytecode::Module>
checkSources(const fs::path& dir, const std::shared_ptr<const compiler::FileAccess>& access, ValidateReport& report) {
    compiler::ProjectInput input;
    input.directory = dir;
    input.access = access;
    compiler::Project project = compiler::checkProject(input);
    for (const compiler::ConfigError& e : project.configErrors) {
        report.diagnostics.push_back(diag(Severity::Error, e.path, e.line, e.column, e.key, e.message));
    }
    if (!project.valid()) {
        return nullptr;
    }
    const compiler::CompiledProgram compiled = compiler::compileProgram(project);
    report.sourcesCompiled = compiled.ok();
    for (const compiler::Diagnostic& d : compiled.diagnostics) {
        const bool manifest = d.span.valid() && project.sources->file(d.span.file).path().ends_with("trust-lsp.toml");
        if (d.severity != compiler::Severity::Error && !manifest) {
            report.sourceWarnings += d.severity == compiler::Severity::Warning ? 1 : 0;
            continue;
        }
        ConfigDiagnostic c = diag(d.severity == compiler::Severity::Error ? Severity::Error : Severity::Warning, {}, 0,
                                  0, {}, d.message);
        if (d.span.valid()) {
            const compiler::LineCol at = project.sources->lineCol(d.span);
            c.file = project.sources->file(d.span.file).path();
            c.line = at.line;
            c.column = at.column;
        }
        c.code = std::string(compiler::diagInfo(d.code).code);
        report.diagnostics.push_back(std::move(c));
    }
    if (!compiled.ok() && compiled.diagnostics.empty()) {
        report.diagnostics.push_back(diag(Severity::Error, dir.string(), 0, 0, {}, compiled.failure));
    }
    return compiled.module;
}

void validate(const ValidateRequest& request, ValidateReport& report) {
    std::error_code ec;
    const fs::path dir = request.project.empty() ? fs::path(".") : request.project;
    const bool boardOnly = request.project.empty() && !request.board.empty() && !fs::exists(dir / "runtime.toml", ec);
    if (boardOnly) {
        io::BoardResult b = io::loadBoard(request.board);
        append(report.diagnostics, std::move(b.diagnostics));
        report.board = request.board;
        if (b.board) {
            report.board = b.board->name;
            report.ioSource = "board " + b.board->name;
            for (const io::DriverSpec& s : b.board->io.drivers) {
                report.ioDrivers.push_back(s.name);
            }
            (void)checkDrivers(b.board->io, report);
        }
        return;
    }
    fs::path absolute = fs::absolute(dir, ec).lexically_normal();
    if (!absolute.has_filename() && absolute.has_parent_path() && absolute != absolute.root_path()) {
        absolute = absolute.parent_path(); // "/a/b/" -> "/a/b"
    }
    report.project = absolute;
    if (!fs::is_directory(dir, ec)) {
        report.diagnostics.push_back(diag(Severity::Error, dir.string(), 0, 0, {}, "not a project directory"));
        return;
    }
    const fs::path runtimeFile = dir / "runtime.toml";
    std::optional<engine::RuntimeConfig> runtime;
    {
        engine::RuntimeConfigResult r = engine::loadRuntimeConfig(runtimeFile);
        append(report.diagnostics, std::move(r.diagnostics));
        runtime = std::move(r.config);
        if (runtime) {
            report.resource = runtime->resourceName;
            if (!runtime->control.endpoint.empty() || runtime->web.enabled) {
                report.controlEndpoint = runtime->control.endpoint;
                // The tokens `takt run` reads and refuses, by the very same check.
                ControlOptions control;
                (void)controlOptionsFromConfig(*runtime, control, report.diagnostics);
            }
            // Node.js and the OPC UA users' password files, by the check `takt run` makes.
            OpcuaOptions opcua;
            (void)opcuaOptionsFromConfig(*runtime, opcua, report.diagnostics);
            // The Sparkplug node's password and TLS files, by the check `takt run` makes.
            SparkplugOptions sparkplug;
            (void)sparkplugOptionsFromConfig(*runtime, sparkplug, report.diagnostics);
        }
    }
    const bool byteAddressing = runtime && runtime->byteAddressing;
    io::IoSelection sel = io::selectIoConfig(dir, request.board, byteAddressing);
    report.ioSource = sel.origin;
    append(report.diagnostics, std::move(sel.io.diagnostics));
    if (sel.board) {
        report.board = sel.board->name;
    } else if (!request.board.empty()) {
        // The project has its own io.toml; the board file is still checked as asked.
        io::BoardResult b = io::loadBoard(request.board, byteAddressing);
        append(report.diagnostics, std::move(b.diagnostics));
        report.board = b.board ? b.board->name : request.board;
        if (b.board) {
            (void)checkDrivers(b.board->io, report);
        }
    }
    std::optional<std::vector<Owned>> owned;
    if (sel.io.config) {
        for (const io::DriverSpec& s : sel.io.config->drivers) {
            report.ioDrivers.push_back(s.name);
        }
        owned = checkDrivers(*sel.io.config, report);
    }
    // A project with sources runs what they compile to; one without runs its program.stbc alone.
    const std::optional<fs::path> sources = compiler::sourcesToCompile(dir);
    const bool hasSources = sources.has_value();
    std::shared_ptr<const bytecode::Module> fromSources;
    if (hasSources) {
        fromSources = checkSources(dir, request.access, report);
        if (fromSources && owned) {
            checkWiring(*fromSources, sources->string(), *owned, report);
        }
    }
    const fs::path program = dir / "program.stbc";
    if (fs::exists(program, ec)) {
        checkProgram(program, hasSources, runtime, owned, report);
    }
}

void writeString(rapidjson::Writer<rapidjson::StringBuffer>& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void writeOptional(rapidjson::Writer<rapidjson::StringBuffer>& w, const std::optional<std::string>& s) {
    if (s) {
        writeString(w, *s);
    } else {
        w.Null();
    }
}

} // namespace

bool ValidateReport::sourceErrorsOnly() const {
    return !ok() && std::all_of(diagnostics.begin(), diagnostics.end(), [](const ConfigDiagnostic& d) {
        return d.severity != Severity::Error || !d.code.empty();
    });
}

bool ValidateReport::ok() const {
    return std::none_of(diagnostics.begin(), diagnostics.end(),
                        [](const ConfigDiagnostic& d) { return d.severity == Severity::Error; });
}

ValidateReport validateProject(const ValidateRequest& request) {
    ValidateReport report;
    try {
        validate(request, report);
    } catch (const std::exception& e) {
        // Filesystem or allocation failures: an answer naming them beats a crash.
        report.diagnostics.push_back(diag(Severity::Error, {}, 0, 0, {}, fmt::format("internal error: {}", e.what())));
    }
    return report;
}

std::string renderValidateJson(const ValidateReport& report) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("version");
    w.Int(1);
    w.Key("command");
    w.String("validate");
    w.Key("status");
    w.String(report.ok() ? "ok" : "error");
    w.Key("project");
    writeOptional(w, report.project ? std::optional<std::string>(report.project->string()) : std::nullopt);
    w.Key("resource");
    writeOptional(w, report.resource);
    w.Key("control_endpoint");
    writeOptional(w, report.controlEndpoint);
    w.Key("io_driver");
    writeOptional(w, report.ioDrivers.empty() ? std::nullopt : std::optional<std::string>(report.ioDrivers.front()));
    w.Key("io_drivers");
    w.StartArray();
    for (const std::string& d : report.ioDrivers) {
        writeString(w, d);
    }
    w.EndArray();
    w.Key("io_source");
    writeOptional(w, report.ioSource.empty() ? std::nullopt : std::optional<std::string>(report.ioSource));
    w.Key("board");
    writeOptional(w, report.board);
    w.Key("program");
    writeOptional(w, report.program ? std::optional<std::string>(report.program->string()) : std::nullopt);
    if (report.program) {
        w.Key("program_hash");
        writeString(w, report.programHash);
    }
    w.Key("diagnostics");
    w.StartArray();
    for (const ConfigDiagnostic& d : report.diagnostics) {
        w.StartObject();
        w.Key("severity");
        w.String(d.severity == Severity::Error ? "error" : "warning");
        w.Key("file");
        writeString(w, d.file);
        w.Key("line");
        w.Uint(d.line);
        w.Key("column");
        w.Uint(d.column);
        w.Key("key");
        writeString(w, d.key);
        w.Key("message");
        writeString(w, d.message);
        if (!d.code.empty()) {
            w.Key("code");
            writeString(w, d.code);
        }
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize());
}

} // namespace takt::agent
