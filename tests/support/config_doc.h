#pragma once
// docs/configuration.md as data, for the tests that hold the page to the configuration parsers
// (tests/unit/engine/configuration_doc_test.cpp for runtime.toml, tests/unit/io/ for io.toml).
//
// The page's conventions, which these functions read:
// - a key table follows a heading that is a TOML table header in backticks (### `[runtime.log]`,
//   ### `[[io.safe_state]]`); each row starts with the key in backticks (| `level` | …);
// - the truST table's rows start with a table header in backticks and list keys in backticks
//   (| `[runtime.ads]` | `enabled`, `config_path` | …);
// - an example is a ```toml block whose first line names its file (# runtime.toml); a ```text
//   block right after it holds the diagnostics the parser gives for it, one per line (none when
//   there is no such block).
// The parser's side comes from the parser itself: a table given an unknown key answers with the
// keys it asked for ("unknown key (known here: …)").
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/paths.h"

namespace takt::test {

struct DocTable {
    std::string path;   // "runtime.control.tokens"
    bool array = false; // written [[path]]
    std::vector<std::string> keys;
};

struct DocExample {
    std::string heading; // the nearest heading above it
    std::string text;    // the block, its first line included
    std::vector<std::string> expected;
    std::size_t line = 0; // of the block's first line in the page
};

inline std::string readDocPage(const std::string& name) {
    std::ifstream in(std::string(TAKT_SOURCE_DIR) + "/docs/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The lines of the "## <title>" part of the page, up to the next "## " heading.
inline std::vector<std::string> docSection(const std::string& page, const std::string& title) {
    std::vector<std::string> lines;
    std::istringstream in(page);
    bool inside = false;
    bool fenced = false;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("```")) {
            fenced = !fenced;
        }
        if (!fenced && line.starts_with("## ")) {
            inside = line == "## " + title;
            continue;
        }
        if (inside) {
            lines.push_back(line);
        }
    }
    return lines;
}

inline std::vector<std::string> backticked(const std::string& text) {
    static const std::regex kCode("`([^`]+)`");
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kCode); it != std::sregex_iterator(); ++it) {
        out.push_back((*it)[1].str());
    }
    return out;
}

// "[a.b]" or "[[a.b]]" as a DocTable without keys; nullopt for anything else.
inline std::optional<DocTable> tableHeader(const std::string& text) {
    static const std::regex kHeader(R"(^(\[\[?)([a-z_]+(\.[a-z_]+)*)\]\]?$)");
    std::smatch m;
    if (!std::regex_match(text, m, kHeader)) {
        return std::nullopt;
    }
    return DocTable{m[2].str(), m[1].str() == "[[", {}};
}

// The key tables and the truST rows of a section, merged by table path (a table may have both).
inline std::vector<DocTable> docTables(const std::vector<std::string>& section) {
    static const std::regex kHeading(R"(^#{3,4} `([^`]+)`\s*$)");
    static const std::regex kKeyRow(R"(^\| `([a-z_]+)` \|)");
    static const std::regex kTableRow(R"(^\| `(\[[^`]+)` \|([^|]*)\|)");
    std::vector<DocTable> tables;
    const auto entry = [&tables](const DocTable& t) -> DocTable& {
        for (DocTable& have : tables) {
            if (have.path == t.path) {
                return have;
            }
        }
        tables.push_back(t);
        return tables.back();
    };
    std::optional<std::size_t> current;
    bool fenced = false;
    for (const std::string& line : section) {
        if (line.starts_with("```")) {
            fenced = !fenced;
        }
        std::smatch m;
        if (fenced) {
            continue;
        }
        if (line.starts_with("#")) {
            current.reset();
            if (std::regex_match(line, m, kHeading)) {
                if (const std::optional<DocTable> t = tableHeader(m[1].str())) {
                    DocTable& e = entry(*t);
                    current = static_cast<std::size_t>(&e - tables.data());
                }
            }
        } else if (std::regex_search(line, m, kTableRow)) {
            const std::optional<DocTable> t = tableHeader(m[1].str());
            EXPECT_TRUE(t.has_value()) << "not a table header: " << line;
            if (t) {
                DocTable& e = entry(*t);
                for (const std::string& k : backticked(m[2].str())) {
                    e.keys.push_back(k);
                }
            }
        } else if (current && std::regex_search(line, m, kKeyRow)) {
            tables[*current].keys.push_back(m[1].str());
        }
    }
    return tables;
}

// The ```toml blocks of a section whose first line is `marker`, with the ```text block after each.
inline std::vector<DocExample> docExamples(const std::vector<std::string>& section, const std::string& marker) {
    std::vector<DocExample> out;
    std::string heading;
    for (std::size_t i = 0; i < section.size(); ++i) {
        if (section[i].starts_with("#")) {
            heading = section[i];
            continue;
        }
        if (section[i] != "```toml" || i + 1 >= section.size() || section[i + 1] != marker) {
            continue;
        }
        DocExample e;
        e.heading = heading;
        e.line = i + 1;
        for (++i; i < section.size() && section[i] != "```"; ++i) {
            e.text += section[i] + "\n";
        }
        // The output block follows at once or after one line of prose ("gives two warnings:").
        std::size_t next = i + 1;
        const auto skipBlank = [&] {
            while (next < section.size() && section[next].empty()) {
                ++next;
            }
        };
        skipBlank();
        if (next < section.size() && !section[next].starts_with("```") && !section[next].starts_with("#")) {
            ++next;
            skipBlank();
        }
        if (next < section.size() && section[next] == "```text") {
            for (++next; next < section.size() && section[next] != "```"; ++next) {
                e.expected.push_back(section[next]);
            }
        }
        out.push_back(std::move(e));
    }
    return out;
}

// A document that gives table `t` (and nothing else) the unknown key `zz_probe`.
inline std::string probeDocument(const DocTable& t) {
    if (t.path.empty()) {
        return "zz_probe = 0\n";
    }
    return (t.array ? "[[" + t.path + "]]\n" : "[" + t.path + "]\n") + "zz_probe = 0\n";
}

// The key path the parser reports the probe key under.
inline std::string probeKeyPath(const DocTable& t) {
    if (t.path.empty()) {
        return "zz_probe";
    }
    return t.path + (t.array ? "[0]" : "") + ".zz_probe";
}

// The keys listed in an "unknown key (known here: a, b, c)" message.
inline std::optional<std::vector<std::string>> knownHere(const std::string& message) {
    static const std::regex kKnown(R"(known here: ([^)]*)\))");
    std::smatch m;
    if (!std::regex_search(message, m, kKnown)) {
        return std::nullopt;
    }
    std::vector<std::string> keys;
    std::istringstream in(m[1].str());
    for (std::string k; std::getline(in, k, ',');) {
        keys.push_back(k.substr(k.find_first_not_of(' ')));
    }
    return keys;
}

// Holds the page's tables to the parser both ways, from the top level down: every key a table's
// reader asks for is a row of that table or a documented table of its own, and every row is a
// key the reader asks for. `known(t)` is the parser's list for table t (nullopt: it gave none);
// tables in `opaque` are left to the caller (their parser gives no list).
inline void
expectTablesMatchParser(const std::vector<DocTable>& documented,
                        const std::function<std::optional<std::vector<std::string>>(const DocTable&)>& known,
                        const std::set<std::string>& opaque, const std::string& file) {
    std::map<std::string, const DocTable*> byPath;
    for (const DocTable& t : documented) {
        byPath[t.path] = &t;
    }
    std::vector<DocTable> toCheck{DocTable{}};
    toCheck.insert(toCheck.end(), documented.begin(), documented.end());
    for (const DocTable& t : toCheck) {
        if (opaque.contains(t.path)) {
            continue;
        }
        const std::optional<std::vector<std::string>> keys = known(t);
        if (!keys) {
            ADD_FAILURE() << file << ": the parser gives no key list for [" << t.path
                          << "]: the page documents a table the parser does not read";
            continue;
        }
        for (const std::string& k : *keys) {
            const std::string path = t.path.empty() ? k : t.path + "." + k;
            const bool row = std::find(t.keys.begin(), t.keys.end(), k) != t.keys.end();
            EXPECT_TRUE(row || byPath.contains(path))
                << file << ": the parser reads " << path << ", which docs/configuration.md does not list";
        }
        for (const std::string& k : t.keys) {
            EXPECT_NE(std::find(keys->begin(), keys->end(), k), keys->end())
                << file << ": docs/configuration.md lists " << t.path << "." << k
                << ", which the parser does not accept";
        }
    }
}

} // namespace takt::test
