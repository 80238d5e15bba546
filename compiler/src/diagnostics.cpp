#include "takt/compiler/diagnostics.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace takt::compiler {

namespace {

constexpr std::array<DiagInfo, static_cast<std::size_t>(DiagCode::Count_)> kInfos = {{
#define TAKT_DIAG(id, code, sev, text) {code, Severity::sev, text},
#include "takt/compiler/diagnostic_codes.def"
#undef TAKT_DIAG
}};

std::uint64_t locationKey(const Span& span, Severity severity) {
    return (static_cast<std::uint64_t>(span.file) << 34) ^ (static_cast<std::uint64_t>(span.begin) << 2) ^
           static_cast<std::uint64_t>(severity);
}

bool nameChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           (static_cast<unsigned char>(c) & 0x80U) != 0;
}

// The byte length of the first `limit` UTF-8 characters of `text` (all of it when shorter).
std::size_t prefixOfCharacters(std::string_view text, std::size_t limit) {
    std::size_t chars = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0U) != 0x80U && chars++ == limit) {
            return i;
        }
    }
    return text.size();
}

} // namespace

std::string boundQuotedText(std::string message) {
    std::string out;
    std::size_t copied = 0; // message[0, copied) is in `out`
    std::size_t i = 0;
    while (i < message.size()) {
        const std::size_t open = message.find('\'', i);
        if (open == std::string::npos) {
            break;
        }
        i = open + 1;
        if (open > 0 && nameChar(message[open - 1])) {
            continue; // an apostrophe ("FB's"), not an opening quote
        }
        std::size_t close = open + 1;
        while ((close = message.find('\'', close)) != std::string::npos && close + 1 < message.size() &&
               nameChar(message[close + 1])) {
            ++close;
        }
        if (close == std::string::npos) {
            break;
        }
        const std::string_view quoted(message.data() + open + 1, close - open - 1);
        const std::size_t keep = prefixOfCharacters(quoted, kQuotedTextLimit);
        if (keep < quoted.size()) {
            out.append(message, copied, open + 1 + keep - copied);
            out += "…";
            copied = close;
        }
        i = close + 1;
    }
    if (copied == 0) {
        return message;
    }
    out.append(message, copied, std::string::npos);
    return out;
}

const DiagInfo& diagInfo(DiagCode code) {
    return kInfos[static_cast<std::size_t>(code)];
}

std::string_view severityName(Severity s) {
    switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
    }
    return "error";
}

bool diagCodeFromString(std::string_view text, DiagCode& out) {
    for (std::size_t i = 0; i < kInfos.size(); ++i) {
        if (kInfos[i].code == text) {
            out = static_cast<DiagCode>(i);
            return true;
        }
    }
    return false;
}

Diagnostic* DiagnosticSink::report(DiagCode code, Span span, std::string message) {
    return report(code, diagInfo(code).severity, span, std::move(message));
}

Diagnostic* DiagnosticSink::report(DiagCode code, Severity severity, Span span, std::string message) {
    if (capped_) {
        return nullptr;
    }
    std::uint64_t key = locationKey(span, severity);
    if (seen_.contains(key)) {
        return nullptr;
    }
    if (severity == Severity::Error && errors_ >= errorLimit_) {
        capped_ = true;
        ++errors_;
        diags_.push_back(Diagnostic{DiagCode::TooManyErrors,
                                    Severity::Error,
                                    span,
                                    fmt::format("too many errors ({}); stopping here", errorLimit_),
                                    {}});
        return nullptr;
    }
    seen_.insert(key);
    if (severity == Severity::Error) {
        ++errors_;
    } else if (severity == Severity::Warning) {
        ++warnings_;
    }
    diags_.push_back(Diagnostic{code, severity, span, boundQuotedText(std::move(message)), {}});
    return &diags_.back();
}

void DiagnosticSink::sort() {
    std::stable_sort(diags_.begin(), diags_.end(), [](const Diagnostic& a, const Diagnostic& b) {
        // The cap marker stays last: it describes everything before it.
        bool aCap = a.code == DiagCode::TooManyErrors;
        bool bCap = b.code == DiagCode::TooManyErrors;
        if (aCap != bCap) {
            return bCap;
        }
        if (a.span.file != b.span.file) {
            return a.span.file < b.span.file;
        }
        if (a.span.begin != b.span.begin) {
            return a.span.begin < b.span.begin;
        }
        return a.code < b.code;
    });
}

std::string renderHuman(const std::vector<Diagnostic>& diags, const SourceManager& sm) {
    std::string out;
    for (const Diagnostic& d : diags) {
        if (d.span.valid()) {
            LineCol lc = sm.lineCol(d.span);
            out += fmt::format("{}:{}:{}: ", sm.file(d.span.file).path(), lc.line, lc.column);
        }
        out += fmt::format("{}[{}]: {}\n", severityName(d.severity), diagInfo(d.code).code, d.message);
        for (const RelatedLocation& r : d.related) {
            if (r.span.valid()) {
                LineCol lc = sm.lineCol(r.span);
                out += fmt::format("{}:{}:{}: ", sm.file(r.span.file).path(), lc.line, lc.column);
            }
            out += fmt::format("note: {}\n", r.message);
        }
    }
    return out;
}

namespace {

template <typename Writer> void writeLocation(Writer& w, const Span& span, const SourceManager& sm) {
    if (!span.valid()) {
        w.Key("path");
        w.Null();
        return;
    }
    LineCol b = sm.lineCol(span);
    LineCol e = sm.endLineCol(span);
    w.Key("path");
    w.String(sm.file(span.file).path().c_str());
    w.Key("line");
    w.Uint(b.line);
    w.Key("column");
    w.Uint(b.column);
    w.Key("end_line");
    w.Uint(e.line);
    w.Key("end_column");
    w.Uint(e.column);
}

} // namespace

std::string renderJson(const std::vector<Diagnostic>& diags, const SourceManager& sm) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartArray();
    for (const Diagnostic& d : diags) {
        w.StartObject();
        writeLocation(w, d.span, sm);
        w.Key("severity");
        w.String(severityName(d.severity).data());
        w.Key("code");
        w.String(diagInfo(d.code).code.data(), static_cast<rapidjson::SizeType>(diagInfo(d.code).code.size()));
        w.Key("message");
        w.String(d.message.c_str(), static_cast<rapidjson::SizeType>(d.message.size()));
        w.Key("related");
        w.StartArray();
        for (const RelatedLocation& r : d.related) {
            w.StartObject();
            writeLocation(w, r.span, sm);
            w.Key("message");
            w.String(r.message.c_str(), static_cast<rapidjson::SizeType>(r.message.size()));
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
    }
    w.EndArray();
    return buf.GetString();
}

std::string renderCodeList() {
    std::string out;
    for (const DiagInfo& info : kInfos) {
        out += fmt::format("{}  {:<7}  {}\n", info.code, severityName(info.severity), info.explanation);
    }
    return out;
}

} // namespace takt::compiler
