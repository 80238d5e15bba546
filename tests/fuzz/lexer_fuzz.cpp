// libFuzzer: arbitrary bytes through the lexer. Lexing never fails, so beyond "no crash" the
// target checks the invariants later phases rely on: tokens are in order, inside the file,
// and the stream ends with EndOfFile.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "takt/compiler/lexer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace takt::compiler;
    SourceManager sm;
    FileId id = sm.add("fuzz.st", std::string(reinterpret_cast<const char*>(data), size));
    // Comments nested (the default) and flat (dialect openplc).
    for (const Dialect dialect : {Dialect::Codesys, Dialect::Openplc}) {
        DiagnosticSink diags;
        LexResult result = lex(sm.file(id), diags, dialect);
        if (result.tokens.empty() || result.tokens.back().kind != TokenKind::EndOfFile) {
            std::abort();
        }
        std::uint32_t last = 0;
        for (const Token& t : result.tokens) {
            if (t.begin < last || t.end < t.begin || t.end > size) {
                std::abort();
            }
            last = t.end;
        }
        for (const Diagnostic& d : diags.diagnostics()) {
            if (d.span.valid() && (d.span.file != id || d.span.end > size)) {
                std::abort();
            }
        }
    }
    return 0;
}
