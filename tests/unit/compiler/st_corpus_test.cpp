// The ST conformance corpus (lit-style, like RuSTy's): every file or folder directly under
// tests/st/valid/ must check clean, every one under tests/st/invalid/ must produce exactly the
// diagnostics its comments announce. A folder is one multi-file project (its `src/` when it
// has one, else every .st/.pou file in it).
//
//   // expect: E0104 @ 5:10            in a single file, or for the file holding the comment
//   // expect: E0104 @ other.st:5:10   another file of a folder project
//   (* expect: W0001 @ 12:5 *)         block comments work too
//
// Valid cases may announce warnings the same way (and no errors). The comparison is on the
// multiset of (code, file, line, column); notes are not compared. One test per case.
#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/paths.h"
#include "takt/compiler/project.h"

namespace takt::compiler {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpusRoot = fs::path(TAKT_SOURCE_DIR) / "tests" / "st";

struct CorpusCase {
    std::string name;   // test name: "invalid_unknown_name"
    std::string label;  // "invalid/unknown_name.st"
    fs::path path;      // a file or a folder
    bool valid = false; // under valid/
};

void PrintTo(const CorpusCase& c, std::ostream* os) {
    *os << c.label;
}

std::string testName(const std::string& label) {
    std::string out;
    for (char ch : label) {
        out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    }
    return out;
}

bool isSourceFile(const fs::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext == ".st" || ext == ".pou";
}

std::vector<CorpusCase> discoverCases() {
    std::vector<CorpusCase> cases;
    std::set<std::string> names;
    for (const char* kind : {"valid", "invalid"}) {
        fs::path dir = kCorpusRoot / kind;
        std::error_code ec;
        std::vector<fs::path> entries;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            std::string leaf = entry.path().filename().string();
            if (leaf.starts_with('.')) {
                continue;
            }
            if (entry.is_directory() || (entry.is_regular_file() && isSourceFile(entry.path()))) {
                entries.push_back(entry.path());
            }
        }
        std::sort(entries.begin(), entries.end());
        for (const fs::path& p : entries) {
            CorpusCase c;
            c.label = std::string(kind) + "/" + p.filename().string();
            c.name = testName(c.label);
            while (!names.insert(c.name).second) {
                c.name += "_";
            }
            c.path = p;
            c.valid = std::string(kind) == "valid";
            cases.push_back(std::move(c));
        }
    }
    return cases;
}

// (code, file, line, column): what the corpus pins for one diagnostic.
using Key = std::tuple<std::string, std::string, std::uint32_t, std::uint32_t>;

std::string keyText(const Key& k) {
    const auto& [code, file, line, column] = k;
    return fmt::format("{} @ {}:{}:{}", code, file, line, column);
}

struct Expectations {
    std::multiset<Key> keys;
    std::vector<std::string> problems; // malformed expectations: the case fails with these
};

// Resolves a file named in an expectation against the project's display paths: exact, or a
// unique path ending in "/name" (so `other.st` finds `src/other.st`).
std::string resolveFile(const std::string& name, const std::vector<std::string>& paths) {
    if (std::find(paths.begin(), paths.end(), name) != paths.end()) {
        return name;
    }
    std::string found;
    for (const std::string& p : paths) {
        if (p.size() > name.size() && p.ends_with("/" + name)) {
            if (!found.empty()) {
                return {};
            }
            found = p;
        }
    }
    return found;
}

Expectations readExpectations(const Project& project) {
    static const std::regex kExpect(R"((?://|\(\*)\s*expect:\s*(\S+)\s*@\s*(?:([^\s:]+):)?(\d+):(\d+))");
    Expectations out;
    for (FileId id = 0; id < project.sources->size(); ++id) {
        const SourceFile& file = project.sources->file(id);
        for (std::uint32_t line = 1; line <= file.lineCount(); ++line) {
            std::string text(file.lineText(line));
            for (auto it = std::sregex_iterator(text.begin(), text.end(), kExpect); it != std::sregex_iterator();
                 ++it) {
                const std::smatch& m = *it;
                std::string where = fmt::format("{}:{}", file.path(), line);
                DiagCode code{};
                if (!diagCodeFromString(m[1].str(), code)) {
                    out.problems.push_back(fmt::format("{}: unknown diagnostic code '{}'", where, m[1].str()));
                    continue;
                }
                std::string target = file.path();
                if (m[2].matched) {
                    target = resolveFile(m[2].str(), project.sourcePaths);
                    if (target.empty()) {
                        out.problems.push_back(
                            fmt::format("{}: '{}' names no (or more than one) file of this case", where, m[2].str()));
                        continue;
                    }
                }
                out.keys.insert(Key{m[1].str(), target, static_cast<std::uint32_t>(std::stoul(m[3].str())),
                                    static_cast<std::uint32_t>(std::stoul(m[4].str()))});
            }
        }
    }
    return out;
}

Project checkCase(const CorpusCase& c) {
    if (!fs::is_directory(c.path)) {
        return checkProject(ProjectInput{c.path.parent_path(), {c.path}, false, {}, {}});
    }
    if (fs::is_directory(c.path / "src")) {
        return checkProject(ProjectInput{c.path, {}, false, {}, {}});
    }
    return checkProject(ProjectInput{c.path, discoverSources(c.path), false, {}, {}});
}

class StCorpus : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(StCorpus, Check) {
    const CorpusCase& c = GetParam();
    Project project = checkCase(c);
    ASSERT_TRUE(project.valid()) << c.label << ": "
                                 << (project.configErrors.empty() ? "" : renderConfigError(project.configErrors[0]));
    ASSERT_FALSE(project.sourcePaths.empty()) << c.label << " has no .st/.pou files";

    Expectations expected = readExpectations(project);
    for (const std::string& problem : expected.problems) {
        ADD_FAILURE() << problem;
    }
    std::multiset<Key> actual;
    std::map<Key, std::string> messages;
    for (const Diagnostic& d : project.diagnostics) {
        if (d.severity == Severity::Note) {
            continue;
        }
        Key key{std::string(diagInfo(d.code).code), "", 0, 0};
        if (d.span.valid()) {
            LineCol lc = project.sources->lineCol(d.span);
            key = Key{std::get<0>(key), project.sources->file(d.span.file).path(), lc.line, lc.column};
        }
        actual.insert(key);
        messages.emplace(key, d.message);
    }
    if (c.valid) {
        for (const Key& k : expected.keys) {
            if (std::get<0>(k).front() == 'E') {
                ADD_FAILURE() << c.label << " is under valid/ but expects an error: " << keyText(k);
            }
        }
    } else {
        EXPECT_FALSE(expected.keys.empty()) << c.label << " is under invalid/ but announces no `// expect:`";
    }

    std::vector<Key> missing;
    std::vector<Key> unexpected;
    std::set_difference(expected.keys.begin(), expected.keys.end(), actual.begin(), actual.end(),
                        std::back_inserter(missing));
    std::set_difference(actual.begin(), actual.end(), expected.keys.begin(), expected.keys.end(),
                        std::back_inserter(unexpected));
    if (!missing.empty() || !unexpected.empty()) {
        std::string diff;
        for (const Key& k : missing) {
            diff += fmt::format("  - {}   (expected, not reported)\n", keyText(k));
        }
        for (const Key& k : unexpected) {
            diff += fmt::format("  + {}   (reported, not expected): {}\n", keyText(k), messages[k]);
        }
        ADD_FAILURE() << c.label << ": diagnostics differ from the `expect:` comments\n"
                      << diff << "all reported:\n"
                      << renderHuman(project.diagnostics, *project.sources);
    }
}

std::string caseName(const ::testing::TestParamInfo<CorpusCase>& param) {
    return param.param.name;
}

INSTANTIATE_TEST_SUITE_P(St, StCorpus, ::testing::ValuesIn(discoverCases()), caseName);

} // namespace
} // namespace takt::compiler
