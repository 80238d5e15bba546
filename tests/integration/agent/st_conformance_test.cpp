// The ST conformance suite (tests/st/conformance/, format in its README.md): every script is
// replayed through the real `takt harness` binary, one test per script. A mismatch names the
// script, its line and the field that differs; a documented `known_bug` entry is reported as a
// skip while it still fails and as a failure once it passes (so the marker gets removed).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/paths.h"
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/wait.h>

namespace takt::agent {
namespace {

namespace fs = std::filesystem;
using rapidjson::Document;
using rapidjson::Value;

// How a response is judged.
enum class MatchKind : std::uint8_t {
    Subset, // every member of `expected` is in the response (objects recursively)
    Watch   // "ok":true and each data.watch entry matches the shorthand in `expected`
};

struct PlannedRequest {
    std::string request; // one NDJSON line for the harness
    int line = 0;        // 1-based script line it came from
    MatchKind kind = MatchKind::Subset;
    std::string expected; // JSON: a subset of the response, or {name: shorthand} for Watch
    std::string knownBug; // non-empty: a documented mismatch (README.md "known_bug")
    int group = 0;        // the requests of one entry (a table and its rows) share a group
};

struct Script {
    std::vector<PlannedRequest> requests;
    std::vector<std::string> errors; // format errors, "file:line: why"
};

struct Outcome {
    std::vector<std::string> failures;
    std::vector<std::string> knownBugs;
};

std::string readFile(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string toJson(const Value& v) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    v.Accept(w);
    return {b.GetString(), b.GetSize()};
}

std::string clip(const std::string& s, std::size_t n = 600) {
    return s.size() <= n ? s : s.substr(0, n) + "…";
}

// "T#1h2m3s4ms", "TIME#-5s", "LT#1.5s", "LTIME#250us" in nanoseconds.
bool parseDuration(const std::string& text, std::int64_t& nanos) {
    std::string s;
    for (char c : text) {
        if (c != '_') {
            s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    std::size_t i = 0;
    for (const char* prefix : {"ltime#", "time#", "lt#", "t#"}) {
        const std::string p(prefix);
        if (s.rfind(p, 0) == 0) {
            i = p.size();
            break;
        }
    }
    if (i == 0) {
        return false;
    }
    bool negative = false;
    if (i < s.size() && s[i] == '-') {
        negative = true;
        ++i;
    }
    static const std::pair<const char*, std::int64_t> kUnits[] = {
        {"ms", 1'000'000},        {"us", 1'000},         {"ns", 1},           {"d", 86'400'000'000'000},
        {"h", 3'600'000'000'000}, {"m", 60'000'000'000}, {"s", 1'000'000'000}};
    std::int64_t total = 0;
    bool any = false;
    while (i < s.size()) {
        std::int64_t whole = 0;
        std::int64_t frac = 0;
        std::int64_t fracScale = 1;
        const std::size_t start = i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
            whole = whole * 10 + (s[i++] - '0');
        }
        if (i < s.size() && s[i] == '.') {
            ++i;
            while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0 && fracScale < 1'000'000'000) {
                frac = frac * 10 + (s[i++] - '0');
                fracScale *= 10;
            }
        }
        if (i == start) {
            return false;
        }
        std::int64_t unit = 0;
        for (const auto& [name, ns] : kUnits) {
            const std::string u(name);
            // "m" must not swallow the "m" of "ms".
            if (s.compare(i, u.size(), u) == 0) {
                unit = ns;
                i += u.size();
                break;
            }
        }
        if (unit == 0) {
            return false;
        }
        // The fraction through long double: frac * unit may not fit 64 bits (T#1.5d).
        total += whole * unit + static_cast<std::int64_t>(
                                    std::llround(static_cast<long double>(frac) * static_cast<long double>(unit) /
                                                 static_cast<long double>(fracScale)));
        any = true;
    }
    if (!any) {
        return false;
    }
    nanos = negative ? -total : total;
    return true;
}

// A shorthand used in `check` and table rows, as the typed value it stands for when writing.
bool typedFromShorthand(const Value& in, Value& out, Document::AllocatorType& a) {
    out.SetObject();
    if (in.IsObject()) {
        out.CopyFrom(in, a);
        return true;
    }
    std::int64_t ns = 0;
    if (in.IsString() && parseDuration(in.GetString(), ns)) {
        out.AddMember("nanos", Value().SetInt64(ns), a);
        return true;
    }
    if (in.IsBool() || in.IsNumber() || in.IsString()) {
        out.AddMember("value", Value(in, a), a);
        return true;
    }
    return false;
}

bool equalScalars(const Value& e, const Value& a) {
    if (e.IsNumber() && a.IsNumber()) {
        if (e.IsDouble() || a.IsDouble()) {
            return e.GetDouble() == a.GetDouble(); // NOLINT(clang-diagnostic-float-equal): exact by design
        }
        if (e.IsInt64() && a.IsInt64()) {
            return e.GetInt64() == a.GetInt64();
        }
        if (e.IsUint64() && a.IsUint64()) {
            return e.GetUint64() == a.GetUint64();
        }
        return false;
    }
    return e == a;
}

// Every member of `expected` is in `actual` with an equal value; `why` names the first field that is not.
bool subset(const Value& expected, const Value& actual, const std::string& path, std::string& why) {
    if (expected.IsObject()) {
        if (!actual.IsObject()) {
            why = path + ": expected an object, got " + clip(toJson(actual), 200);
            return false;
        }
        for (auto it = expected.MemberBegin(); it != expected.MemberEnd(); ++it) {
            const std::string sub = path.empty() ? it->name.GetString() : path + "." + it->name.GetString();
            auto found = actual.FindMember(it->name);
            if (found == actual.MemberEnd()) {
                why = sub + ": missing (expected " + clip(toJson(it->value), 200) + ")";
                return false;
            }
            if (!subset(it->value, found->value, sub, why)) {
                return false;
            }
        }
        return true;
    }
    if (expected.IsArray()) {
        if (!actual.IsArray() || actual.Size() != expected.Size()) {
            why = path + ": expected " + clip(toJson(expected), 200) + ", got " + clip(toJson(actual), 200);
            return false;
        }
        for (rapidjson::SizeType i = 0; i < expected.Size(); ++i) {
            if (!subset(expected[i], actual[i], path + "[" + std::to_string(i) + "]", why)) {
                return false;
            }
        }
        return true;
    }
    if (!equalScalars(expected, actual)) {
        why = path + ": expected " + toJson(expected) + ", got " + clip(toJson(actual), 200);
        return false;
    }
    return true;
}

// A watched typed value against a shorthand: an object is a subset; a time literal string is
// compared with the "nanos" of a time value; any other scalar with "value".
bool matchShorthand(const Value& expected, const Value& actual, const std::string& path, std::string& why) {
    if (expected.IsObject()) {
        return subset(expected, actual, path, why);
    }
    if (!actual.IsObject()) {
        why = path + ": expected a typed value, got " + clip(toJson(actual), 200);
        return false;
    }
    std::int64_t ns = 0;
    if (auto it = actual.FindMember("nanos");
        it != actual.MemberEnd() && expected.IsString() && parseDuration(expected.GetString(), ns)) {
        if (!it->value.IsInt64() || it->value.GetInt64() != ns) {
            why = path + ".nanos: expected " + std::to_string(ns) + " (" + expected.GetString() + "), got " +
                  toJson(it->value);
            return false;
        }
        return true;
    }
    auto it = actual.FindMember("value");
    const char* member = "value";
    if (it == actual.MemberEnd()) {
        it = actual.FindMember("nanos");
        member = "nanos";
    }
    if (it == actual.MemberEnd()) {
        why = path + ": no value in " + clip(toJson(actual), 200);
        return false;
    }
    if (!equalScalars(expected, it->value)) {
        why = path + "." + member + ": expected " + toJson(expected) + ", got " + toJson(it->value) + " (" +
              clip(toJson(actual), 200) + ")";
        return false;
    }
    return true;
}

class ScriptParser {
public:
    ScriptParser(const fs::path& path, Script& out) : path_(path), out_(out) {}

    void parse(const std::string& text) {
        std::istringstream in(text);
        std::string raw;
        while (std::getline(in, raw)) {
            ++line_;
            const std::size_t first = raw.find_first_not_of(" \t\r");
            if (first == std::string::npos || raw[first] == '#') {
                continue;
            }
            Document d;
            d.Parse(raw.c_str() + first);
            if (d.HasParseError()) {
                error("not one JSON value on this line");
                continue;
            }
            entry(d);
        }
        closeExpect();
    }

private:
    void error(const std::string& why) { out_.errors.push_back(where() + why); }
    [[nodiscard]] std::string where() const { return path_.filename().string() + ":" + std::to_string(line_) + ": "; }

    static std::string knownBugOf(const Value& v) {
        auto it = v.FindMember("known_bug");
        return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
    }

    // Ends the window in which an `expect` line applies to the last request (which otherwise
    // keeps the expectation it was planned with: {"ok":true}).
    void closeExpect() { openRequest_ = false; }

    void push(std::string request, MatchKind kind, std::string expected, const std::string& knownBug, int group = 0) {
        PlannedRequest r;
        r.request = std::move(request);
        r.line = line_;
        r.kind = kind;
        r.expected = std::move(expected);
        r.knownBug = knownBug;
        r.group = group != 0 ? group : group_;
        out_.requests.push_back(std::move(r));
    }

    void entry(Document& d) {
        if (d.IsArray()) {
            closeExpect();
            row(d);
            return;
        }
        if (!d.IsObject()) {
            error("expected an object or a table row");
            return;
        }
        if (d.HasMember("expect")) {
            if (!openRequest_) {
                error("'expect' must follow a request line");
                return;
            }
            PlannedRequest& r = out_.requests.back();
            r.expected = toJson(d["expect"]);
            r.knownBug = knownBugOf(d);
            r.line = line_;
            openRequest_ = false;
            return;
        }
        closeExpect();
        ++group_;
        if (d.HasMember("cmd")) {
            request(d);
        } else if (d.HasMember("check")) {
            check(d);
        } else if (d.HasMember("table")) {
            startTable(d);
        } else {
            error("unknown entry (expected cmd, expect, check, table or a row)");
        }
    }

    bool inlineSource(Value& obj, const char* fileKey, const char* key, Document::AllocatorType& a) {
        const Value& view = obj;
        const auto it = view.FindMember(fileKey);
        if (it == view.MemberEnd()) {
            return true;
        }
        const auto load = [&](const Value& name, Value& text) {
            if (!name.IsString()) {
                error(std::string(fileKey) + " must name files");
                return false;
            }
            const fs::path file = path_.parent_path() / name.GetString();
            if (!fs::is_regular_file(file)) {
                error("no source file " + file.string());
                return false;
            }
            const std::string body = readFile(file);
            text.SetString(body.c_str(), static_cast<rapidjson::SizeType>(body.size()), a);
            return true;
        };
        Value result;
        if (it->value.IsArray()) {
            result.SetArray();
            for (const Value& n : it->value.GetArray()) {
                Value text;
                if (!load(n, text)) {
                    return false;
                }
                result.PushBack(text, a);
            }
        } else if (!load(it->value, result)) {
            return false;
        }
        obj.RemoveMember(fileKey);
        obj.AddMember(Value(key, a), result, a);
        return true;
    }

    void request(Document& d) {
        if (!inlineSource(d, "source_file", "source", d.GetAllocator()) ||
            !inlineSource(d, "source_files", "sources", d.GetAllocator())) {
            return;
        }
        std::string knownBug = knownBugOf(d);
        d.RemoveMember("known_bug");
        push(toJson(d), MatchKind::Subset, R"({"ok":true})", knownBug);
        openRequest_ = true;
    }

    void check(const Document& d) {
        const Value& c = d["check"];
        if (!c.IsObject() || c.MemberCount() == 0) {
            error("'check' must be a non-empty object {name: value}");
            return;
        }
        Document req(rapidjson::kObjectType);
        auto& a = req.GetAllocator();
        req.AddMember("cmd", "snapshot", a);
        Value watch(rapidjson::kArrayType);
        for (auto it = c.MemberBegin(); it != c.MemberEnd(); ++it) {
            watch.PushBack(Value(it->name, a), a);
        }
        req.AddMember("watch", watch, a);
        push(toJson(req), MatchKind::Watch, toJson(c), knownBugOf(d));
    }

    struct Table {
        std::vector<std::string> set;
        std::vector<std::string> watch;
        std::string knownBug;
        int group = 0;
        double dtMs = 0;
        bool dtColumn = false;
    };

    void startTable(const Document& d) {
        const Value& t = d["table"];
        Table table;
        table.knownBug = knownBugOf(d);
        table.group = group_;
        const auto names = [&](const char* key, std::vector<std::string>& out) {
            auto it = t.FindMember(key);
            if (it == t.MemberEnd()) {
                return true;
            }
            if (!it->value.IsArray()) {
                return false;
            }
            for (const Value& n : it->value.GetArray()) {
                if (!n.IsString()) {
                    return false;
                }
                out.emplace_back(n.GetString());
            }
            return true;
        };
        if (!t.IsObject() || !names("set", table.set) || !names("watch", table.watch)) {
            error("'table' needs string arrays 'set' and/or 'watch'");
            return;
        }
        if (auto it = t.FindMember("dt_ms"); it != t.MemberEnd()) {
            if (!it->value.IsNumber() || it->value.GetDouble() < 0) {
                error("'dt_ms' must be a non-negative number");
                return;
            }
            table.dtMs = it->value.GetDouble();
        }
        table.dtColumn = std::find(table.set.begin(), table.set.end(), "dt_ms") != table.set.end();
        table_ = table;
    }

    void row(const Document& d) {
        if (!table_) {
            error("a row must follow a 'table' entry");
            return;
        }
        const Table& t = *table_;
        if (d.Size() != t.set.size() + t.watch.size()) {
            error("row has " + std::to_string(d.Size()) + " values, the table has " +
                  std::to_string(t.set.size() + t.watch.size()) + " columns");
            return;
        }
        double dt = t.dtMs;
        for (std::size_t i = 0; i < t.set.size(); ++i) {
            const Value& v = d[static_cast<rapidjson::SizeType>(i)];
            if (v.IsNull()) {
                continue; // leave as is
            }
            if (t.set[i] == "dt_ms") {
                if (!v.IsNumber() || v.GetDouble() < 0) {
                    error("dt_ms column needs a non-negative number");
                    return;
                }
                dt = v.GetDouble();
                continue;
            }
            Document req(rapidjson::kObjectType);
            auto& a = req.GetAllocator();
            Value typed;
            if (!typedFromShorthand(v, typed, a)) {
                error("column '" + t.set[i] + "': not a value");
                return;
            }
            req.AddMember("cmd", "set_input", a);
            req.AddMember("name", Value(t.set[i].c_str(), a), a);
            req.AddMember("value", typed, a);
            push(toJson(req), MatchKind::Subset, R"({"ok":true})", "");
        }
        Document req(rapidjson::kObjectType);
        auto& a = req.GetAllocator();
        req.AddMember("cmd", "cycle", a);
        if (dt == static_cast<double>(static_cast<std::int64_t>(dt))) {
            req.AddMember("dt_ms", Value().SetInt64(static_cast<std::int64_t>(dt)), a);
        } else {
            req.AddMember("dt_ms", dt, a);
        }
        Value watch(rapidjson::kArrayType);
        Document expected(rapidjson::kObjectType);
        for (std::size_t i = 0; i < t.watch.size(); ++i) {
            watch.PushBack(Value(t.watch[i].c_str(), a), a);
            const Value& v = d[static_cast<rapidjson::SizeType>(t.set.size() + i)];
            if (!v.IsNull()) {
                expected.AddMember(Value(t.watch[i].c_str(), expected.GetAllocator()),
                                   Value(v, expected.GetAllocator()), expected.GetAllocator());
            }
        }
        req.AddMember("watch", watch, a);
        push(toJson(req), MatchKind::Watch, toJson(expected), t.knownBug, t.group);
    }

    fs::path path_;
    Script& out_;
    int line_ = 0;
    int group_ = 0;
    bool openRequest_ = false;
    std::optional<Table> table_;
};

Script parseScript(const std::string& text, const fs::path& path) {
    Script s;
    ScriptParser(path, s).parse(text);
    return s;
}

// Matches one response; empty when it matches, else why not.
std::string judge(const PlannedRequest& r, const std::string& response) {
    Document act;
    act.Parse(response.c_str());
    if (act.HasParseError()) {
        return "response is not JSON: " + clip(response);
    }
    Document exp;
    exp.Parse(r.expected.c_str());
    std::string why;
    if (r.kind == MatchKind::Subset) {
        return subset(exp, act, "", why) ? "" : why;
    }
    if (!act.IsObject() || !act.HasMember("ok") || !act["ok"].IsBool() || !act["ok"].GetBool()) {
        return "ok: expected true, got " + clip(response, 400);
    }
    const Value& watch = act["data"]["watch"];
    const Value& wanted = exp;
    for (auto it = wanted.MemberBegin(); it != wanted.MemberEnd(); ++it) {
        const std::string name = it->name.GetString();
        auto found = watch.FindMember(it->name);
        if (found == watch.MemberEnd()) {
            return name + ": not in the response";
        }
        if (!matchShorthand(it->value, found->value, name, why)) {
            return why;
        }
    }
    return "";
}

Outcome matchResponses(const Script& script, const std::vector<std::string>& responses, const std::string& display,
                       const std::string& harnessNote) {
    Outcome out;
    std::set<int> bugGroupsFailing;
    std::map<int, const PlannedRequest*> bugGroups;
    for (std::size_t i = 0; i < script.requests.size(); ++i) {
        const PlannedRequest& r = script.requests[i];
        const std::string where = display + ":" + std::to_string(r.line) + ": ";
        if (!r.knownBug.empty()) {
            bugGroups.emplace(r.group, &r);
        }
        if (i >= responses.size()) {
            out.failures.push_back(where + "no response (" + harnessNote + ")\n  request: " + clip(r.request));
            return out;
        }
        const std::string why = judge(r, responses[i]);
        if (why.empty()) {
            continue;
        }
        if (!r.knownBug.empty()) {
            if (bugGroupsFailing.insert(r.group).second) {
                out.knownBugs.push_back(where + "known bug (" + r.knownBug + "): " + why);
            }
            continue;
        }
        out.failures.push_back(where + why + "\n  request:  " + clip(r.request) +
                               "\n  response: " + clip(responses[i]));
    }
    for (const auto& [group, r] : bugGroups) {
        if (bugGroupsFailing.count(group) == 0) {
            out.failures.push_back(display + ":" + std::to_string(r->line) + ": marked known_bug (" + r->knownBug +
                                   ") but it passes now: remove the marker");
        }
    }
    return out;
}

// `options`: extra arguments of `takt harness` (the native tier: --execution native).
std::vector<std::string> runHarness(const Script& script, const fs::path& dir, std::string& note,
                                    const std::string& options = "") {
    fs::create_directories(dir);
    const fs::path in = dir / "requests.ndjson";
    const fs::path out = dir / "responses.ndjson";
    const fs::path err = dir / "stderr.txt";
    {
        std::ofstream f(in, std::ios::binary);
        for (const PlannedRequest& r : script.requests) {
            f << r.request << '\n';
        }
    }
    const std::string cmd = std::string(TAKT_BINARY) + " harness" + options + " < '" + in.string() + "' > '" +
                            out.string() + "' 2> '" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    note = "takt harness exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
           (WIFSIGNALED(status) ? ", signal " + std::to_string(WTERMSIG(status)) : "") +
           ", stderr: " + clip(readFile(err), 400);
    std::vector<std::string> lines;
    std::ifstream f(out);
    for (std::string l; std::getline(f, l);) {
        lines.push_back(l);
    }
    return lines;
}

fs::path suiteRoot() {
    return fs::path(TAKT_SOURCE_DIR) / "tests/st/conformance";
}

std::vector<std::string> scriptFiles() {
    std::vector<std::string> out;
    if (!fs::is_directory(suiteRoot())) {
        return out;
    }
    for (const auto& e : fs::recursive_directory_iterator(suiteRoot())) {
        if (e.is_regular_file() && e.path().extension() == ".script") {
            out.push_back(fs::relative(e.path(), suiteRoot()).string());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string testName(const std::string& rel) {
    std::string name = fs::path(rel).replace_extension().string();
    for (char& c : name) {
        if (std::isalnum(static_cast<unsigned char>(c)) == 0) {
            c = '_';
        }
    }
    return name;
}

// One script through `takt harness` + `options`, judged against its expectations.
void runScript(const std::string& rel, const std::string& options) {
    const fs::path path = suiteRoot() / rel;
    const Script script = parseScript(readFile(path), path);
    for (const std::string& e : script.errors) {
        ADD_FAILURE() << rel << ": script error: " << e;
    }
    ASSERT_TRUE(script.errors.empty());
    ASSERT_FALSE(script.requests.empty()) << rel << " holds no requests";
    std::string note;
    const std::vector<std::string> responses = runHarness(
        script, fs::path(::testing::TempDir()) / ("st_conformance_" + testName(rel) + (options.empty() ? "" : "_n")),
        note, options);
    const Outcome outcome = matchResponses(script, responses, "tests/st/conformance/" + rel, note);
    for (const std::string& f : outcome.failures) {
        ADD_FAILURE() << f;
    }
    if (outcome.failures.empty() && !outcome.knownBugs.empty()) {
        std::string list;
        for (const std::string& k : outcome.knownBugs) {
            list += "\n  " + k;
        }
        GTEST_SKIP() << outcome.knownBugs.size() << " known bug(s):" << list;
    }
}

class StConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(StConformance, Script) {
    runScript(GetParam(), "");
}

// Every script again with program bodies on the native tier (those it cannot compile run on
// the interpreter, as takt run does): the same expectations hold, so both tiers give the same
// results. ctest -L native runs these alone.
class NativeTierConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(NativeTierConformance, Script) {
    runScript(GetParam(), " --execution native");
}

std::string paramName(const ::testing::TestParamInfo<std::string>& p) {
    return testName(p.param);
}

INSTANTIATE_TEST_SUITE_P(Suite, StConformance, ::testing::ValuesIn(scriptFiles()), paramName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StConformance);
INSTANTIATE_TEST_SUITE_P(Suite, NativeTierConformance, ::testing::ValuesIn(scriptFiles()), paramName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NativeTierConformance);

// The runner itself: a wrong expectation is reported with its line and field, a row expands to
// set_input + cycle, and a known_bug that passes is a failure.
TEST(StConformanceRunner, ReportsLineAndField) {
    const std::string text = "# comment\n"
                             "{\"cmd\":\"snapshot\"}\n"
                             "{\"expect\":{\"ok\":true,\"data\":{\"cycle\":3}}}\n"
                             "{\"table\":{\"set\":[\"in\"],\"watch\":[\"q\",\"et\"],\"dt_ms\":10}}\n"
                             "[true, true, \"T#10ms\"]\n";
    const Script s = parseScript(text, "x.script");
    ASSERT_TRUE(s.errors.empty()) << s.errors.front();
    ASSERT_EQ(s.requests.size(), 3u);
    EXPECT_EQ(s.requests[2].kind, MatchKind::Watch);
    EXPECT_EQ(s.requests[0].line, 3);
    EXPECT_EQ(s.requests[1].request, R"({"cmd":"set_input","name":"in","value":{"value":true}})");
    EXPECT_EQ(s.requests[2].request, R"({"cmd":"cycle","dt_ms":10,"watch":["q","et"]})");
    const std::vector<std::string> responses = {
        R"({"ok":true,"data":{"cycle":2,"time_nanos":0,"watch":{}}})", R"({"ok":true,"data":{}})",
        R"({"ok":true,"data":{"cycle":3,"time_nanos":10000000,"watch":{"q":{"type":"BOOL","value":true},)"
        R"("et":{"type":"TIME","nanos":9000000}}}})"};
    const Outcome o = matchResponses(s, responses, "x.script", "");
    ASSERT_EQ(o.failures.size(), 2u);
    EXPECT_NE(o.failures[0].find("x.script:3: data.cycle: expected 3, got 2"), std::string::npos) << o.failures[0];
    EXPECT_NE(o.failures[1].find("x.script:5: et.nanos: expected 10000000"), std::string::npos) << o.failures[1];
}

// Rows continue a table across requests in between; each row's cycle keeps its own expectation.
TEST(StConformanceRunner, RowsAfterAnInterleavedRequest) {
    const std::string text = "{\"table\":{\"watch\":[\"q\"]}}\n"
                             "[1]\n"
                             "{\"cmd\":\"set_input\",\"name\":\"x\",\"value\":{\"value\":2}}\n"
                             "[2]\n";
    const Script s = parseScript(text, "r.script");
    ASSERT_TRUE(s.errors.empty()) << s.errors.front();
    ASSERT_EQ(s.requests.size(), 3u);
    EXPECT_EQ(s.requests[1].expected, R"({"ok":true})");
    EXPECT_EQ(s.requests[2].kind, MatchKind::Watch);
    EXPECT_EQ(s.requests[2].expected, R"({"q":2})");
    EXPECT_EQ(s.requests[2].line, 4);
}

TEST(StConformanceRunner, KnownBugMarkers) {
    const std::string text = "{\"check\":{\"a\":1},\"known_bug\":\"a is wrong\"}\n"
                             "{\"check\":{\"b\":2},\"known_bug\":\"b was wrong\"}\n";
    const Script s = parseScript(text, "k.script");
    ASSERT_EQ(s.requests.size(), 2u);
    const std::vector<std::string> responses = {R"({"ok":true,"data":{"watch":{"a":{"type":"INT","value":0}}}})",
                                                R"({"ok":true,"data":{"watch":{"b":{"type":"INT","value":2}}}})"};
    const Outcome o = matchResponses(s, responses, "k.script", "");
    ASSERT_EQ(o.knownBugs.size(), 1u);
    EXPECT_NE(o.knownBugs[0].find("k.script:1: known bug (a is wrong)"), std::string::npos);
    ASSERT_EQ(o.failures.size(), 1u);
    EXPECT_NE(o.failures[0].find("k.script:2: marked known_bug"), std::string::npos);
}

TEST(StConformanceRunner, DurationsAndFormatErrors) {
    std::int64_t ns = 0;
    ASSERT_TRUE(parseDuration("T#1h2m3s4ms", ns));
    EXPECT_EQ(ns, 3'723'004'000'000);
    ASSERT_TRUE(parseDuration("TIME#-1.5s", ns));
    EXPECT_EQ(ns, -1'500'000'000);
    ASSERT_TRUE(parseDuration("LTIME#1_000us", ns));
    EXPECT_EQ(ns, 1'000'000);
    EXPECT_FALSE(parseDuration("T#5x", ns));
    EXPECT_FALSE(parseDuration("hello", ns));
    const Script s =
        parseScript("[1]\n{\"expect\":{}}\n{\"table\":{\"watch\":[\"q\"]}}\n[1, 2]\nnot json\n", "e.script");
    ASSERT_EQ(s.errors.size(), 4u);
    EXPECT_NE(s.errors[0].find("e.script:1: a row must follow"), std::string::npos);
    EXPECT_NE(s.errors[1].find("e.script:2: 'expect' must follow"), std::string::npos);
    EXPECT_NE(s.errors[2].find("e.script:4: row has 2 values"), std::string::npos);
    EXPECT_NE(s.errors[3].find("e.script:5: not one JSON value"), std::string::npos);
}

TEST(StConformanceRunner, SuiteIsPresent) {
    EXPECT_GE(scriptFiles().size(), 10u);
}

} // namespace
} // namespace takt::agent
