// The NDJSON loop and the default compile pipeline of the harness.

#include <fmt/format.h>

#include "rpc/rpc_framer.h"
#include "takt/agent/harness.h"
#include "takt/compiler/compile_program.h"
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

HarnessDeps defaultHarnessDeps(engine::Execution execution) {
    HarnessDeps deps;
    deps.compile = [](const std::vector<compiler::SourceText>& sources, const compiler::BuildOptions& build) {
        CompileOutcome out;
        compiler::Project project = compiler::checkSources(sources, build);
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
    deps.makeRunner = [execution] {
        return std::unique_ptr<engine::CodeRunner>(new engine::VmRunner(kHarnessBudget, execution));
    };
    return deps;
}

} // namespace takt::agent
