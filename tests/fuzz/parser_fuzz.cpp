// libFuzzer: arbitrary bytes through lexer + parser. The parser must return a unit for any
// input, never overflow the stack (kMaxNesting), and only report diagnostics inside the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "takt/compiler/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace takt::compiler;
    SourceManager sm;
    FileId id = sm.add("fuzz.st", std::string(reinterpret_cast<const char*>(data), size));
    // Both ways of reading comments: nested (the default) and flat (dialect openplc).
    for (const Dialect dialect : {Dialect::Codesys, Dialect::Openplc}) {
        DiagnosticSink diags;
        ast::CompilationUnit unit = parseSource(sm.file(id), diags, dialect);
        if (unit.file != id) {
            std::abort();
        }
        for (const Diagnostic& d : diags.diagnostics()) {
            if (d.span.valid() && (d.span.file != id || d.span.begin > d.span.end || d.span.end > size)) {
                std::abort();
            }
        }
    }
    return 0;
}
