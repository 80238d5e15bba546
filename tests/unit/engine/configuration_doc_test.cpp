// docs/configuration.md is the reference of runtime.toml: its examples give exactly the
// diagnostics it shows, its key tables list exactly the keys the parser reads (the parser's own
// "known here" lists), its truST table lists exactly the sections and keys the parser accepts and
// ignores, and its complete example names every key.
#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/config_doc.h"
#include "takt/engine/config.h"

namespace takt::engine {
namespace {

using test::DocExample;
using test::DocTable;

std::vector<std::string> section() {
    return test::docSection(test::readDocPage("configuration.md"), "runtime.toml");
}

std::vector<std::string> rendered(const RuntimeConfigResult& r) {
    std::vector<std::string> out;
    for (const ConfigDiagnostic& d : r.diagnostics) {
        out.push_back(formatDiagnostic(d));
    }
    return out;
}

TEST(ConfigurationDoc, RuntimeExamplesGiveTheDiagnosticsThePageShows) {
    const std::vector<DocExample> examples = test::docExamples(section(), "# runtime.toml");
    ASSERT_GE(examples.size(), 3U); // refused keys, the complete file, a truST file
    std::size_t withWarnings = 0;
    std::size_t withErrors = 0;
    for (const DocExample& e : examples) {
        const RuntimeConfigResult r = parseRuntimeConfig(e.text, "runtime.toml");
        EXPECT_EQ(rendered(r), e.expected) << "the example at line " << e.line << " of the runtime.toml section";
        const bool refused = std::any_of(e.expected.begin(), e.expected.end(),
                                         [](const std::string& d) { return d.find(": error: ") != std::string::npos; });
        EXPECT_EQ(r.config.has_value(), !refused) << "the example at line " << e.line;
        withWarnings += !refused && !e.expected.empty() ? 1 : 0;
        withErrors += refused ? 1 : 0;
    }
    EXPECT_GE(withWarnings, 1U) << "the page shows what a truST file's warnings look like";
    EXPECT_GE(withErrors, 1U) << "the page shows what an error looks like";
}

// The parser's list of the keys of table `t`: the "known here" of the error a probe key gets.
std::optional<std::vector<std::string>> parserKeys(const DocTable& t) {
    const RuntimeConfigResult r = parseRuntimeConfig(test::probeDocument(t), "runtime.toml");
    for (const ConfigDiagnostic& d : r.diagnostics) {
        if (d.key == test::probeKeyPath(t)) {
            return test::knownHere(d.message);
        }
    }
    return std::nullopt;
}

TEST(ConfigurationDoc, KeyTablesListExactlyTheKeysTheParserReads) {
    const std::vector<DocTable> tables = test::docTables(section());
    ASSERT_GE(tables.size(), 10U);
    std::set<std::string> trust;
    for (const TrustSection& s : trustSections()) {
        trust.insert(std::string(s.path));
    }
    test::expectTablesMatchParser(tables, parserKeys, trust, "runtime.toml");
}

TEST(ConfigurationDoc, TrustTableListsEverySectionTheParserIgnores) {
    const std::vector<DocTable> tables = test::docTables(section());
    for (const TrustSection& s : trustSections()) {
        const auto row =
            std::find_if(tables.begin(), tables.end(), [&](const DocTable& t) { return t.path == s.path; });
        ASSERT_NE(row, tables.end()) << "[" << s.path << "] is not in the truST table of docs/configuration.md";
        const std::set<std::string> documented(row->keys.begin(), row->keys.end());
        const std::set<std::string> parsed(s.keys.begin(), s.keys.end());
        EXPECT_EQ(documented, parsed) << "the keys of [" << s.path << "]";
        // Accepted as the page says: an empty section is no error, and one that enables what takt
        // does not have is one warning at the section.
        const RuntimeConfigResult empty = parseRuntimeConfig("[" + std::string(s.path) + "]\n", "runtime.toml");
        EXPECT_TRUE(empty.config.has_value()) << s.path;
        if (parsed.contains("enabled")) {
            const RuntimeConfigResult on =
                parseRuntimeConfig("[" + std::string(s.path) + "]\nenabled = true\n", "runtime.toml");
            ASSERT_EQ(on.diagnostics.size(), 1U) << s.path;
            EXPECT_EQ(on.diagnostics[0].severity, ConfigDiagnostic::Severity::Warning) << s.path;
            EXPECT_EQ(on.diagnostics[0].key, s.path);
        }
    }
}

// Every key of the tables is in the complete example, set or as a commented line (keys that need
// files or privileges); the truST keys are not (they only give warnings).
TEST(ConfigurationDoc, CompleteExampleNamesEveryKey) {
    const std::vector<std::string> lines = section();
    const std::vector<DocExample> examples = test::docExamples(lines, "# runtime.toml");
    const auto complete = std::find_if(examples.begin(), examples.end(), [](const DocExample& e) {
        return e.heading.find("A complete runtime.toml") != std::string::npos;
    });
    ASSERT_NE(complete, examples.end());
    std::set<std::string> named;
    static const std::regex kHeader(R"(^\[\[?([a-z_.]+)\]\]?)");
    static const std::regex kKey(R"(^#?\s*([a-z_]+)\s*=)");
    std::istringstream in(complete->text);
    std::string table;
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, kHeader)) {
            table = m[1].str();
            named.insert(table);
        } else if (std::regex_search(line, m, kKey)) {
            named.insert(table + "." + m[1].str());
        }
    }
    // The key tables are the sections with a heading of their own; the truST table's rows are not.
    std::set<std::string> headed;
    for (const std::string& line : lines) {
        static const std::regex kHeading(R"(^#{3,4} `\[\[?([a-z_.]+)\]\]?`)");
        std::smatch m;
        if (std::regex_search(line, m, kHeading)) {
            headed.insert(m[1].str());
        }
    }
    std::set<std::string> trustKeys;
    for (const std::string& line : lines) {
        static const std::regex kTrustRow(R"(^\| `\[\[?([a-z_.]+)\]\]?` \|([^|]*)\|)");
        std::smatch m;
        if (std::regex_search(line, m, kTrustRow)) {
            for (const std::string& k : test::backticked(m[2].str())) {
                trustKeys.insert(m[1].str() + "." + k);
            }
        }
    }
    std::size_t checked = 0;
    for (const DocTable& t : test::docTables(lines)) {
        if (!headed.contains(t.path)) {
            continue;
        }
        for (const std::string& k : t.keys) {
            const std::string path = t.path + "." + k;
            if (trustKeys.contains(path)) {
                continue;
            }
            ++checked;
            EXPECT_TRUE(named.contains(path)) << path << " is not in the complete runtime.toml example";
        }
    }
    EXPECT_GE(checked, 30U);
}

} // namespace
} // namespace takt::engine
