#include "takt/compiler/diagnostics.h"

#include <set>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace takt::compiler {
namespace {

class DiagnosticsTest : public ::testing::Test {
protected:
    SourceManager sm;
    FileId file = sm.add("src/main.st", "PROGRAM Main\n  x := y;\nEND_PROGRAM\n");
    Span at(std::uint32_t begin, std::uint32_t end) { return Span{file, begin, end}; }
};

TEST_F(DiagnosticsTest, EveryCodeIsUniqueAndWellFormed) {
    std::set<std::string_view> codes;
    for (std::size_t i = 0; i < static_cast<std::size_t>(DiagCode::Count_); ++i) {
        const DiagInfo& info = diagInfo(static_cast<DiagCode>(i));
        ASSERT_EQ(info.code.size(), 5u) << info.code;
        char expectedPrefix = info.severity == Severity::Warning ? 'W' : 'E';
        EXPECT_EQ(info.code[0], expectedPrefix) << info.code;
        EXPECT_FALSE(info.explanation.empty()) << info.code;
        EXPECT_TRUE(codes.insert(info.code).second) << "duplicate code " << info.code;
    }
}

TEST_F(DiagnosticsTest, CodeLookupRoundTrips) {
    DiagCode code{};
    ASSERT_TRUE(diagCodeFromString("E0104", code));
    EXPECT_EQ(code, DiagCode::UnknownIdentifier);
    EXPECT_FALSE(diagCodeFromString("E9999", code));
}

TEST_F(DiagnosticsTest, SecondDiagnosticAtSameLocationIsSuppressed) {
    DiagnosticSink sink;
    EXPECT_NE(sink.report(DiagCode::UnknownIdentifier, at(15, 16), "unknown identifier 'x'"), nullptr);
    EXPECT_EQ(sink.report(DiagCode::TypeMismatch, at(15, 16), "cascade"), nullptr);
    // A warning at the same place is a different class of finding and is kept.
    EXPECT_NE(sink.report(DiagCode::UnusedVariable, at(15, 16), "unused"), nullptr);
    EXPECT_NE(sink.report(DiagCode::UnknownIdentifier, at(20, 21), "unknown identifier 'y'"), nullptr);
    EXPECT_EQ(sink.errorCount(), 2u);
    EXPECT_EQ(sink.warningCount(), 1u);
}

TEST_F(DiagnosticsTest, ErrorCountIsCappedWithOneMarker) {
    DiagnosticSink sink(3);
    for (std::uint32_t i = 0; i < 10; ++i) {
        sink.report(DiagCode::UnexpectedToken, at(i, i + 1), "unexpected");
    }
    ASSERT_EQ(sink.diagnostics().size(), 4u);
    EXPECT_EQ(sink.diagnostics().back().code, DiagCode::TooManyErrors);
    EXPECT_TRUE(sink.hasErrors());
}

TEST_F(DiagnosticsTest, SortOrdersByPositionAndKeepsCapMarkerLast) {
    DiagnosticSink sink(2);
    sink.report(DiagCode::UnknownIdentifier, at(20, 21), "b");
    sink.report(DiagCode::UnknownIdentifier, at(15, 16), "a");
    sink.report(DiagCode::UnknownIdentifier, at(1, 2), "capped");
    sink.sort();
    ASSERT_EQ(sink.diagnostics().size(), 3u);
    EXPECT_EQ(sink.diagnostics()[0].message, "a");
    EXPECT_EQ(sink.diagnostics()[1].message, "b");
    EXPECT_EQ(sink.diagnostics()[2].code, DiagCode::TooManyErrors);
}

TEST_F(DiagnosticsTest, HumanRenderingNamesFileLineColumnAndCode) {
    DiagnosticSink sink;
    Diagnostic* d = sink.report(DiagCode::UnknownIdentifier, at(20, 21), "unknown identifier 'y'");
    ASSERT_NE(d, nullptr);
    d->related.push_back({at(0, 7), "in PROGRAM 'Main'"});
    EXPECT_EQ(renderHuman(sink.diagnostics(), sm), "src/main.st:2:8: error[E0104]: unknown identifier 'y'\n"
                                                   "src/main.st:1:1: note: in PROGRAM 'Main'\n");
}

TEST_F(DiagnosticsTest, JsonRenderingHasThePinnedShape) {
    DiagnosticSink sink;
    sink.report(DiagCode::UnknownIdentifier, at(20, 21), "unknown identifier 'y'");
    std::string json = renderJson(sink.diagnostics(), sm);
    rapidjson::Document doc;
    ASSERT_FALSE(doc.Parse(json.c_str()).HasParseError()) << json;
    ASSERT_TRUE(doc.IsArray());
    ASSERT_EQ(doc.Size(), 1u);
    const auto& d = doc[0];
    EXPECT_STREQ(d["path"].GetString(), "src/main.st");
    EXPECT_EQ(d["line"].GetUint(), 2u);
    EXPECT_EQ(d["column"].GetUint(), 8u);
    EXPECT_EQ(d["end_line"].GetUint(), 2u);
    EXPECT_EQ(d["end_column"].GetUint(), 9u);
    EXPECT_STREQ(d["severity"].GetString(), "error");
    EXPECT_STREQ(d["code"].GetString(), "E0104");
    EXPECT_STREQ(d["message"].GetString(), "unknown identifier 'y'");
    EXPECT_TRUE(d["related"].IsArray());
}

TEST_F(DiagnosticsTest, JsonEscapesMessages) {
    DiagnosticSink sink;
    sink.report(DiagCode::InvalidCharacter, at(0, 1), "bad \"quote\" and \\ backslash\n");
    rapidjson::Document doc;
    std::string json = renderJson(sink.diagnostics(), sm);
    ASSERT_FALSE(doc.Parse(json.c_str()).HasParseError()) << json;
    EXPECT_STREQ(doc[0]["message"].GetString(), "bad \"quote\" and \\ backslash\n");
}

TEST_F(DiagnosticsTest, CodeListHasOneLinePerCode) {
    std::string list = renderCodeList();
    std::size_t lines = 0;
    for (char c : list) {
        lines += c == '\n' ? 1 : 0;
    }
    EXPECT_EQ(lines, static_cast<std::size_t>(DiagCode::Count_));
    EXPECT_NE(list.find("E0104"), std::string::npos);
}

} // namespace
} // namespace takt::compiler
