#pragma once
// One benchmark program compiled from ST to bytecode and run scan by scan on the engine's VM
// runner with a virtual clock (1 ms per scan, the programs' task interval), as the engine runs a
// program instance. Shared by the side-by-side benchmark and the twin correctness test.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "takt/compiler/compile_program.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/project.h"
#include "takt/engine/program.h"
#include "takt/engine/values.h"
#include "takt/engine/vm_runner.h"

namespace takt::bench {

class StProgram {
public:
    static constexpr std::int64_t kScanNs = 1'000'000;

    // Compiles `path` (one .st file with a CONFIGURATION naming one program instance) and runs
    // it on `execution`'s tier; on failure returns false with the diagnostics in `error`.
    bool load(const std::string& path, std::string& error,
              engine::Execution execution = engine::Execution::Interpreter) {
        return load(std::vector<std::string>{path}, error, execution);
    }

    // The same for a project's sources; `instance` names the program instance a scan runs (the
    // first one when empty).
    bool load(const std::vector<std::string>& paths, std::string& error, engine::Execution execution,
              std::string_view instance = {}) {
        std::vector<compiler::SourceText> sources;
        for (const std::string& path : paths) {
            std::ifstream in(path, std::ios::binary);
            if (!in) {
                error = "cannot read " + path;
                return false;
            }
            std::stringstream text;
            text << in.rdbuf();
            sources.push_back({path, text.str()});
        }
        // The one compile path: the benchmark runs what program.stbc would hold.
        compiler::Project project = compiler::checkSources(sources);
        const compiler::CompiledProgram compiled = compiler::compileProgram(project);
        if (!compiled.ok()) {
            error = compiled.failure.empty() ? compiler::renderHuman(compiled.diagnostics, *project.sources)
                                             : "bytecode verification failed: " + compiled.failure;
            return false;
        }
        const std::shared_ptr<const bytecode::Module> module = compiled.module;
        instance_ = nullptr;
        for (const bytecode::ProgramInstance& p : module->programs) {
            if (module->pous[p.pou].kind == bytecode::PouKind::Program && (instance.empty() || p.name == instance)) {
                instance_ = &p;
                break;
            }
        }
        if (instance_ == nullptr) {
            error = paths.front() + ": no program instance " + std::string(instance);
            return false;
        }
        program_ = std::make_unique<engine::LoadedProgram>(module, compiled.hash);
        runner_ = std::make_unique<engine::VmRunner>(0, execution);
        runner_->attach(*program_);
        now_ = 0;
        engine::Fault fault;
        if (module->initCode != bytecode::kNone && !runner_->runInit(*program_, fault)) {
            error = paths.front() + ": init failed: " + fault.message;
            return false;
        }
        return true;
    }

    // One scan at the next virtual timestamp (0, 1 ms, 2 ms, ...).
    bool scan() noexcept {
        const bool ok = runner_->runProgram(*program_, *instance_, now_, fault_);
        now_ += kScanNs;
        return ok;
    }

    [[nodiscard]] const std::string& faultMessage() const { return fault_.message; }
    [[nodiscard]] std::string executionStatus() const { return runner_->executionStatus(); }
    [[nodiscard]] double nativeCompileMs() const { return runner_->nativeCompileMs(); }
    [[nodiscard]] const engine::LoadedProgram& program() const { return *program_; }
    [[nodiscard]] engine::LoadedProgram& program() { return *program_; }

    // The LREAL at `path` (engine path syntax); false if it does not resolve to an LREAL.
    bool readLreal(std::string_view path, double& out) const {
        engine::VarRef ref;
        std::string error;
        const bytecode::Module& m = program_->module();
        if (!engine::resolvePath(m, path, ref, error) || ref.type >= m.types.size() ||
            m.types[ref.type].kind != bytecode::ValueKind::LReal) {
            return false;
        }
        std::memcpy(&out, program_->image() + ref.offset, sizeof out);
        return true;
    }

private:
    std::unique_ptr<engine::LoadedProgram> program_;
    std::unique_ptr<engine::VmRunner> runner_;
    const bytecode::ProgramInstance* instance_ = nullptr;
    engine::Fault fault_;
    std::int64_t now_ = 0;
};

} // namespace takt::bench
