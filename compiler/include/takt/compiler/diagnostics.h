#pragma once
// Coded diagnostics (LANGUAGE.md): stable code, severity, span, message naming the offending
// identifier, related locations. The compiler never stops at the first error: every phase
// reports into a DiagnosticSink, which suppresses duplicates at one location and caps the count.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "takt/compiler/source.h"

namespace takt::compiler {

enum class Severity : std::uint8_t { Error, Warning, Note };

enum class DiagCode : std::uint16_t {
#define TAKT_DIAG(id, code, sev, text) id,
#include "takt/compiler/diagnostic_codes.def"
#undef TAKT_DIAG
    Count_
};

struct DiagInfo {
    std::string_view code; // "E0104"
    Severity severity;
    std::string_view explanation;
};

[[nodiscard]] const DiagInfo& diagInfo(DiagCode code);
[[nodiscard]] std::string_view severityName(Severity s);
// Looks a code up by its text ("E0104"); returns false when unknown.
[[nodiscard]] bool diagCodeFromString(std::string_view text, DiagCode& out);

struct RelatedLocation {
    Span span;
    std::string message;
};

// Messages quote user text ('FillTimr', an expression) between single quotes. The sink bounds
// every quoted part to its first kQuotedTextLimit characters and "…" (cut between UTF-8
// characters), so a 50 MB identifier does not make a 50 MB message: one place for all codes.
inline constexpr std::size_t kQuotedTextLimit = 64;
// `message` with each quoted part longer than kQuotedTextLimit characters cut to that many and
// "…". A quote opens after a character that cannot be in a name and closes before one (so the
// apostrophe in "the FB's input" is neither).
[[nodiscard]] std::string boundQuotedText(std::string message);

struct Diagnostic {
    DiagCode code{};
    Severity severity = Severity::Error;
    Span span;
    std::string message;
    std::vector<RelatedLocation> related;

    // Adds a related location; its message is bounded like the diagnostic's.
    void relate(Span where, std::string note) { related.push_back({where, boundQuotedText(std::move(note))}); }
};

class DiagnosticSink {
public:
    static constexpr std::size_t kDefaultErrorLimit = 200;

    explicit DiagnosticSink(std::size_t errorLimit = kDefaultErrorLimit) : errorLimit_(errorLimit) {}

    // Records a diagnostic unless one of the same severity class was already reported at the
    // same location, or the error limit was hit. Returns nullptr when suppressed; otherwise a
    // pointer for adding related locations (valid until the next report).
    Diagnostic* report(DiagCode code, Span span, std::string message);
    // The same with the severity chosen by the caller instead of the code's default (the
    // W1xxx dialect leniencies are errors under [build] dialect = "iec").
    Diagnostic* report(DiagCode code, Severity severity, Span span, std::string message);

    [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const { return diags_; }
    [[nodiscard]] std::size_t errorCount() const { return errors_; }
    [[nodiscard]] std::size_t warningCount() const { return warnings_; }
    [[nodiscard]] bool hasErrors() const { return errors_ > 0; }
    // Sorts by file, position, then code, so output order does not depend on phase order.
    void sort();

private:
    std::vector<Diagnostic> diags_;
    // (file, begin, severity) keys already reported; a set, as a project with thousands of
    // warnings made a linear search quadratic
    std::unordered_set<std::uint64_t> seen_;
    std::size_t errorLimit_;
    std::size_t errors_ = 0;
    std::size_t warnings_ = 0;
    bool capped_ = false;
};

// `path:line:col: error[E0104]: message` plus `path:line:col: note: related` lines.
[[nodiscard]] std::string renderHuman(const std::vector<Diagnostic>& diags, const SourceManager& sm);
// {"path","line","column","end_line","end_column","severity","code","message","related":[…]}
// as one JSON array (the shape PROTOCOLS.md pins for compile_error data).
[[nodiscard]] std::string renderJson(const std::vector<Diagnostic>& diags, const SourceManager& sm);
// Every code with its explanation, one per line (`takt explain` / docs).
[[nodiscard]] std::string renderCodeList();

} // namespace takt::compiler
