// Output formats of `takt test`: JSON (CONFIG.md shape), human, JUnit XML, TAP 13.
#include <cmath>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "takt/agent/test_runner.h"

namespace takt::agent {
namespace {

std::string xmlEscape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out += c;
        }
    }
    return out;
}

std::uint32_t total(const TestReport& r) {
    return static_cast<std::uint32_t>(r.tests.size());
}

} // namespace

std::string renderTestJson(const TestReport& r) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    const auto str = [&w](const std::string& s) { w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size())); };
    w.StartObject();
    w.Key("version");
    w.Int(1);
    w.Key("project");
    str(r.project);
    w.Key("summary");
    w.StartObject();
    w.Key("total");
    w.Uint(total(r));
    w.Key("passed");
    w.Uint(r.passed);
    w.Key("failed");
    w.Uint(r.failed);
    w.Key("errors");
    w.Uint(r.errors);
    w.Key("duration_ms");
    w.Int64(std::llround(r.durationMs));
    w.EndObject();
    w.Key("tests");
    w.StartArray();
    for (const TestCase& t : r.tests) {
        w.StartObject();
        w.Key("name");
        str(t.name);
        w.Key("kind");
        str(t.kind);
        w.Key("status");
        str(t.status);
        w.Key("file");
        str(t.file);
        w.Key("line");
        w.Uint(t.line);
        w.Key("message");
        str(t.message);
        w.Key("duration_ms");
        w.Int64(std::llround(t.durationMs));
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

std::string renderTestHuman(const TestReport& r) {
    std::string out;
    for (const TestCase& t : r.tests) {
        if (t.status == "listed") {
            out += fmt::format("{} ({}) {}:{}\n", t.name, t.kind, t.file, t.line);
            continue;
        }
        out += fmt::format("{:<7} {}{}{}\n",
                           t.status == "passed"   ? "PASS"
                           : t.status == "failed" ? "FAIL"
                                                  : "ERROR",
                           t.name, t.message.empty() ? "" : ": ", t.message);
    }
    out += fmt::format("{} tests: {} passed, {} failed, {} errors ({} ms)\n", total(r), r.passed, r.failed, r.errors,
                       std::llround(r.durationMs));
    return out;
}

std::string renderTestJunit(const TestReport& r) {
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += fmt::format("<testsuites tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n", total(r), r.failed,
                       r.errors, r.durationMs / 1000.0);
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                       xmlEscape(r.project), total(r), r.failed, r.errors, r.durationMs / 1000.0);
    for (const TestCase& t : r.tests) {
        out += fmt::format("    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" line=\"{}\" time=\"{:.3f}\"",
                           xmlEscape(t.name), t.kind, xmlEscape(t.file), t.line, t.durationMs / 1000.0);
        if (t.status == "failed") {
            out += fmt::format(">\n      <failure message=\"{}\"/>\n    </testcase>\n", xmlEscape(t.message));
        } else if (t.status == "error") {
            out += fmt::format(">\n      <error message=\"{}\"/>\n    </testcase>\n", xmlEscape(t.message));
        } else {
            out += "/>\n";
        }
    }
    out += "  </testsuite>\n</testsuites>\n";
    return out;
}

std::string renderTestTap(const TestReport& r) {
    std::string out = fmt::format("TAP version 13\n1..{}\n", total(r));
    std::size_t n = 0;
    for (const TestCase& t : r.tests) {
        ++n;
        const bool ok = t.status == "passed" || t.status == "listed";
        out += fmt::format("{} {} - {}{}\n", ok ? "ok" : "not ok", n, t.name,
                           t.status == "listed" ? " # SKIP listed" : "");
        if (!ok) {
            out +=
                fmt::format("  ---\n  message: \"{}\"\n  file: \"{}\"\n  line: {}\n  ...\n", t.message, t.file, t.line);
        }
    }
    return out;
}

} // namespace takt::agent
