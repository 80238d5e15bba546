// The NDJSON loop and the default compile pipeline of the harness.

#include <fmt/format.h>

#include "rpc_framer.h"
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
    rpc::LineFramer framer;
    const auto answer = [&](rpc::LineFramer::Status status) {
        if (status == rpc::LineFramer::Status::TooLong) {
            HarnessResult r;
            r.ok = false;
            r.kind = ErrorKind::InvalidRequest;
            r.message = kOversizeLineMessage;
            r.payload.SetNull();
            out << render(r) << '\n' << std::flush;
        } else if (status == rpc::LineFramer::Status::Line) {
            // Every line is answered, a blank one with invalid_request (handleLine).
            out << handleLine(framer.line()) << '\n' << std::flush;
        }
    };
    // Bytes are taken up to each newline (not a whole buffer), so an interactive client gets its
    // answer before it sends the next line.
    std::streambuf& source = *in.rdbuf();
    char chunk[1 << 16];
    std::size_t n = 0;
    for (int c = source.sbumpc(); c != std::char_traits<char>::eof(); c = source.sbumpc()) {
        chunk[n++] = static_cast<char>(c);
        if (c != '\n' && n < sizeof chunk) {
            continue;
        }
        std::string_view bytes(chunk, n);
        while (!bytes.empty()) {
            answer(framer.next(bytes));
        }
        n = 0;
    }
    std::string_view rest(chunk, n);
    while (!rest.empty()) {
        answer(framer.next(rest));
    }
    answer(framer.finish());
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
