// docs/diagnostics.md is the user-facing list of codes: it must mention every code the
// compiler can report and no code that does not exist.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/paths.h"
#include "takt/compiler/diagnostics.h"

namespace takt::compiler {
namespace {

std::string readDoc() {
    std::ifstream in(std::string(TAKT_SOURCE_DIR) + "/docs/diagnostics.md");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::set<std::string> codesInDoc(const std::string& doc) {
    std::set<std::string> codes;
    static const std::regex kCode(R"(\b[EW]\d{4}\b)");
    for (auto it = std::sregex_iterator(doc.begin(), doc.end(), kCode); it != std::sregex_iterator(); ++it) {
        codes.insert(it->str());
    }
    return codes;
}

TEST(DiagnosticsDoc, MentionsEveryCode) {
    std::string doc = readDoc();
    ASSERT_FALSE(doc.empty()) << "docs/diagnostics.md is missing";
    std::set<std::string> documented = codesInDoc(doc);
    for (std::size_t i = 0; i < static_cast<std::size_t>(DiagCode::Count_); ++i) {
        std::string code(diagInfo(static_cast<DiagCode>(i)).code);
        EXPECT_TRUE(documented.count(code)) << code << " is not documented in docs/diagnostics.md";
    }
}

TEST(DiagnosticsDoc, MentionsNoUnknownCode) {
    for (const std::string& code : codesInDoc(readDoc())) {
        DiagCode id{};
        EXPECT_TRUE(diagCodeFromString(code, id))
            << "docs/diagnostics.md mentions " << code << ", which diagnostic_codes.def does not define";
    }
}

TEST(DiagnosticsDoc, ExplanationMatchesCodeList) {
    // The table row of each code carries the same explanation `takt explain` prints.
    std::string doc = readDoc();
    for (std::size_t i = 0; i < static_cast<std::size_t>(DiagCode::Count_); ++i) {
        const DiagInfo& info = diagInfo(static_cast<DiagCode>(i));
        std::string row = "| " + std::string(info.code) + " | " + std::string(severityName(info.severity)) + " | ";
        std::size_t at = doc.find(row);
        ASSERT_NE(at, std::string::npos) << "no table row for " << info.code;
        std::size_t end = doc.find('\n', at);
        std::string line = doc.substr(at, end - at);
        std::string explanation(info.explanation);
        for (std::size_t p = 0; (p = explanation.find('|', p)) != std::string::npos; p += 2) {
            explanation.replace(p, 1, "\\|"); // Markdown tables escape the pipe
        }
        EXPECT_NE(line.find(explanation), std::string::npos) << info.code << ": " << line;
    }
}

} // namespace
} // namespace takt::compiler
