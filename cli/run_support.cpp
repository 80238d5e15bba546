#include "run_support.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include <fmt/format.h>

#include "takt/agent/applied_program.h"
#include "takt/bytecode/container.h"
#include "takt/bytecode/verifier.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/exit_codes.h"
#include "takt/compiler/project.h"

namespace takt::cli {

namespace fs = std::filesystem;

bool loadRunnableProgram(const fs::path& project, RunnableProgram& out, std::string& error, int& exitCode) {
    std::error_code ec;
    const fs::path dir = project.empty() ? fs::current_path(ec) : project;
    if (!fs::is_directory(dir, ec)) {
        error = fmt::format("{}: not a project directory", dir.string());
        exitCode = kExitInvalidProject;
        return false;
    }
    if (const std::optional<fs::path> sources = compiler::sourcesToCompile(dir)) {
        compiler::ProjectInput input;
        input.directory = dir;
        compiler::Project p = compiler::checkProject(input);
        compiler::CompiledProgram compiled = compiler::compileProgram(p);
        if (!compiled.ok()) {
            for (const compiler::ConfigError& e : p.configErrors) {
                error += compiler::renderConfigError(e) + "\n";
            }
            if (p.valid()) {
                error = compiler::renderHuman(compiled.diagnostics, *p.sources) + compiled.failure;
            }
            exitCode = compiler::exitCode(compiled.status);
            return false;
        }
        // The files as they are on disk (a PLCopen XML file, not the ST takt translates it to,
        // which a newer takt may write differently), and what else decides the program.
        for (const std::string& shown : p.sourcePaths) {
            out.inputs.emplace_back(shown, p.directory / shown);
        }
        out.buildOptions = fmt::format("overflow {} address_mode {} dialect {} vendor {}",
                                       static_cast<int>(p.build.overflow), static_cast<int>(p.build.addressMode),
                                       static_cast<int>(p.build.dialect), static_cast<int>(p.build.vendor));
        out.hash = std::move(compiled.hash);
        out.module = std::move(compiled.module);
        out.origin = fmt::format("{} ({} sources)", sources->string(), p.sourcePaths.size());
        return true;
    }
    const fs::path stbc = dir / "program.stbc";
    bytecode::VerifiedProgram loaded = bytecode::loadVerifiedFile(stbc);
    if (!loaded.ok()) {
        error = loaded.stage == bytecode::VerifiedProgram::Stage::Verify
                    ? fmt::format("{}: rejected by the verifier: {}", stbc.string(), loaded.error)
                    : fmt::format("{}: {} (and no sources to compile)", stbc.string(), loaded.error);
        exitCode = kExitInvalidProject;
        return false;
    }
    out.hash = loaded.hashHex();
    out.inputs.emplace_back("program.stbc", stbc);
    out.module = std::move(loaded.module);
    out.origin = stbc.string();
    return true;
}

std::string fingerprintOf(const RunnableProgram& program) {
    std::vector<std::vector<std::uint8_t>> bytes(program.inputs.size());
    std::vector<agent::SourceText> texts{{"[build]", program.buildOptions}};
    for (std::size_t i = 0; i < program.inputs.size(); ++i) {
        std::string error;
        if (!bytecode::readFileBytes(program.inputs[i].second, bytes[i], error)) {
            return {};
        }
        texts.push_back({program.inputs[i].first,
                         std::string_view(reinterpret_cast<const char*>(bytes[i].data()), bytes[i].size())});
    }
    return agent::projectFingerprint(texts);
}

std::optional<std::int64_t> parseDurationNs(const std::string& text) {
    std::size_t i = 0;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) != 0 || text[i] == '.')) {
        ++i;
    }
    if (i == 0) {
        return std::nullopt;
    }
    char* end = nullptr;
    const std::string number = text.substr(0, i);
    const double v = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !std::isfinite(v) || v < 0) {
        return std::nullopt;
    }
    const std::string unit = text.substr(i);
    double scale = 0;
    if (unit.empty() || unit == "s") {
        scale = 1e9;
    } else if (unit == "ms") {
        scale = 1e6;
    } else if (unit == "us") {
        scale = 1e3;
    } else if (unit == "m" || unit == "min") {
        scale = 60e9;
    } else if (unit == "h") {
        scale = 3600e9;
    } else {
        return std::nullopt;
    }
    const double ns = v * scale;
    if (ns > 9.2e18) {
        return std::nullopt;
    }
    return static_cast<std::int64_t>(ns);
}

std::string formatNs(std::int64_t ns) {
    const double v = static_cast<double>(ns);
    if (ns < 1000) {
        return fmt::format("{}ns", ns);
    }
    if (ns < 1'000'000) {
        return fmt::format("{:.1f}us", v / 1e3);
    }
    if (ns < 1'000'000'000) {
        return fmt::format("{:.2f}ms", v / 1e6);
    }
    return fmt::format("{:.2f}s", v / 1e9);
}

} // namespace takt::cli
