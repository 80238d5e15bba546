// The NDJSON loop and the default compile pipeline of the harness.
#include <limits>

#include <fmt/format.h>

#include "takt/agent/harness.h"
#include "takt/bytecode/container.h"
#include "takt/bytecode/verifier.h"
#include "takt/compiler/codegen.h"
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
        if (!project.ok()) {
            out.status = CompileOutcome::Status::CompileError;
            out.diagnosticsJson = compiler::renderJson(project.diagnostics, *project.sources);
            return out;
        }
        const compiler::CodegenOptions options = project.build.codegenOptions();
        auto module = std::make_shared<bytecode::Module>();
        compiler::DiagnosticSink sink;
        if (!compiler::generate(*project.model, project.units, *project.sources, options, *module, sink)) {
            out.status = CompileOutcome::Status::CompileError;
            out.diagnosticsJson = compiler::renderJson(sink.diagnostics(), *project.sources);
            return out;
        }
        // Through the container, so the harness runs exactly what program.stbc would hold and
        // reports the same program hash.
        bytecode::LoadResult loaded = bytecode::deserialize(bytecode::serialize(*module));
        if (!loaded.ok()) {
            out.status = CompileOutcome::Status::Failure;
            out.message = "program container rejected: " + loaded.error;
            return out;
        }
        const bytecode::VerifyResult verified = bytecode::verify(loaded.module);
        if (!verified.ok()) {
            out.status = CompileOutcome::Status::Failure;
            out.message = "bytecode verification failed: " + verified.message;
            return out;
        }
        out.hash = bytecode::hashHex(loaded.hash);
        out.module = std::make_shared<const bytecode::Module>(std::move(loaded.module));
        out.status = CompileOutcome::Status::Ok;
        return out;
    };
    // The watchdog stops endless loops (WHILE TRUE) instead of hanging the harness.
    deps.makeRunner = [] { return std::unique_ptr<engine::CodeRunner>(new engine::VmRunner(kHarnessBudget)); };
    return deps;
}

} // namespace takt::agent
