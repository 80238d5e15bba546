// The NDJSON loop and the default compile pipeline of the harness.
#include <limits>

#include <fmt/format.h>

#include "takt/agent/harness.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/diagnostics.h"
#include "takt/engine/vm_runner.h"

namespace takt::agent {

namespace {
constexpr std::uint64_t kHarnessBudget = 100'000'000;
}

void Harness::serve(std::istream& in, std::ostream& out) {
    std::string line;
    std::vector<char> buf(kMaxLineBytes + 2);
    while (true) {
        in.getline(buf.data(), static_cast<std::streamsize>(buf.size()));
        const std::streamsize got = in.gcount();
        if (in.eof() && got == 0) {
            break;
        }
        if (in.fail() && !in.eof()) {
            // Longer than the cap: refuse it and resynchronise at the next newline.
            in.clear();
            in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
            HarnessResult r;
            r.ok = false;
            r.kind = ErrorKind::InvalidRequest;
            r.message = "request line exceeds 1 MiB";
            r.payload.SetNull();
            out << render(r) << '\n' << std::flush;
            continue;
        }
        // gcount includes the newline when one was consumed.
        std::size_t n = static_cast<std::size_t>(got) - (in.eof() ? 0 : 1);
        if (n > 0 && buf[n - 1] == '\r') {
            --n;
        }
        // Every line is answered, a blank one with invalid_request (handleLine).
        out << handleLine(std::string_view(buf.data(), n)) << '\n' << std::flush;
        if (in.eof()) {
            break;
        }
    }
}

HarnessDeps defaultHarnessDeps() {
    HarnessDeps deps;
    deps.compile = [](const std::vector<compiler::SourceText>& sources) {
        CompileOutcome out;
        compiler::Project project = compiler::checkSources(sources);
        out.addressMode = project.build.addressMode;
        compiler::CompiledProgram compiled = compiler::compileProgram(project);
        if (compiled.status == compiler::CompileStatus::SourceErrors) {
            out.status = CompileOutcome::Status::CompileError;
            out.diagnosticsJson = compiler::renderJson(compiled.diagnostics, *project.sources);
            return out;
        }
        if (!compiled.ok()) {
            out.status = CompileOutcome::Status::Failure;
            out.message = compiled.failure;
            return out;
        }
        out.hash = std::move(compiled.hash);
        out.module = std::move(compiled.module);
        out.status = CompileOutcome::Status::Ok;
        return out;
    };
    // The watchdog stops endless loops (WHILE TRUE) instead of hanging the harness.
    deps.makeRunner = [] { return std::unique_ptr<engine::CodeRunner>(new engine::VmRunner(kHarnessBudget)); };
    return deps;
}

} // namespace takt::agent
