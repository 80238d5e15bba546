// libFuzzer: arbitrary bytes through the PLCopen XML reader (compiler/src/plcopen) and the parser
// over what it translates. The reader must never crash or run away on hostile XML (depth, size,
// entities), every problem must lie inside the translated text, and the translation must not
// have more lines than the XML (a diagnostic names an XML line that exists).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "takt/compiler/parser.h"
#include "takt/compiler/plcopen.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace takt::compiler;
    const std::string xml(reinterpret_cast<const char*>(data), size);
    PlcopenTranslation t = translatePlcopen(xml);
    // Line ends as XML counts them: LF, CRLF, a lone CR.
    const auto lines = [](const std::string& s) {
        std::ptrdiff_t n = 0;
        for (std::size_t i = 0; i < s.size(); ++i) {
            n += s[i] == '\n' || (s[i] == '\r' && (i + 1 == s.size() || s[i + 1] != '\n')) ? 1 : 0;
        }
        return n;
    };
    // Character references (&#10;) in an ST body add lines of their own; only plain XML is pinned.
    if (xml.find("&#") == std::string::npos && lines(t.text) > lines(xml)) {
        std::abort();
    }
    for (const PlcopenProblem& p : t.problems) {
        if (p.offset > t.text.size() || p.line == 0 || p.line > lines(xml) + 1) {
            std::abort();
        }
    }
    SourceManager sm;
    const FileId id = sm.add("fuzz.xml", std::move(t.text));
    DiagnosticSink diags;
    const ast::CompilationUnit unit = parseSource(sm.file(id), diags);
    if (unit.file != id) {
        std::abort();
    }
    return 0;
}
