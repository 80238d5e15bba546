// libFuzzer target for the formatter: any bytes must format without crashing, and whatever
// the formatter accepts must be a fixed point (formatting the output again changes nothing).
// Most random inputs do not parse, so the layout pass is also checked on its own for every
// input that merely lexes: it must keep tokens and comments and be idempotent there too.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "formatter_rules.h"
#include "takt/compiler/formatter.h"
#include "takt/compiler/lexer.h"

namespace {

using namespace takt::compiler;

[[noreturn]] void fail(const char* what, const std::string& a, const std::string& b) {
    std::fprintf(stderr, "%s\n--- first\n%s\n--- second\n%s\n", what, a.c_str(), b.c_str());
    std::abort();
}

// Layout output grows with nesting depth times line count; the parser bounds nesting for
// formatSource, but the bare layout pass sees any token stream, so it is checked on inputs of
// a size where that stays small.
constexpr std::size_t kMaxLayoutInput = 8192;

void checkLayout(const std::string& text) {
    if (text.size() > kMaxLayoutInput) {
        return;
    }
    SourceFile input(0, "fuzz.st", text);
    DiagnosticSink diags;
    LexResult lexed = lex(input, diags);
    if (diags.hasErrors()) {
        return;
    }
    std::string once = fmtrules::layoutTokens(text, lexed);
    SourceFile formatted(0, "fuzz.st", once);
    DiagnosticSink again;
    LexResult relexed = lex(formatted, again);
    if (again.hasErrors() || !fmtrules::sameContent(text, lexed, once, relexed)) {
        fail("layout changed tokens or comments", text, once);
    }
    std::string twice = fmtrules::layoutTokens(once, relexed);
    if (twice != once) {
        fail("layout not idempotent", once, twice);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    checkLayout(text);

    SourceFile input(0, "fuzz.st", text);
    DiagnosticSink diags;
    FormatResult first = formatSource(input, diags);
    if (!first.ok) {
        // Refusal must be explained: a file with no diagnostic would leave `takt fmt` silent.
        if (!diags.hasErrors() || !first.text.empty()) {
            std::abort();
        }
        return 0;
    }
    SourceFile formatted(0, "fuzz.st", first.text);
    DiagnosticSink again;
    FormatResult second = formatSource(formatted, again);
    if (!second.ok || second.changed || second.text != first.text) {
        fail("not idempotent", first.text, second.text);
    }
    return 0;
}
