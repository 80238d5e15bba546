// libFuzzer target for the formatter: any bytes must format without crashing, and whatever
// the formatter accepts must be a fixed point (formatting the output again changes nothing).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "takt/compiler/formatter.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace takt::compiler;
    SourceFile input(0, "fuzz.st", std::string(reinterpret_cast<const char*>(data), size));
    DiagnosticSink diags;
    FormatResult first = formatSource(input, diags);
    if (!first.ok) {
        // Refusal must be explained: a file with no diagnostic would leave `takt fmt` silent.
        if (!diags.hasErrors()) {
            std::abort();
        }
        return 0;
    }
    SourceFile formatted(0, "fuzz.st", first.text);
    DiagnosticSink again;
    FormatResult second = formatSource(formatted, again);
    if (!second.ok || second.changed || second.text != first.text) {
        std::fprintf(stderr, "not idempotent:\n--- first\n%s\n--- second\n%s\n", first.text.c_str(),
                     second.text.c_str());
        std::abort();
    }
    return 0;
}
