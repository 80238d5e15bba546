#include "takt/compiler/source.h"

#include <gtest/gtest.h>

namespace takt::compiler {
namespace {

TEST(SourceFileTest, LineAndColumnAreOneBased) {
    SourceFile f(0, "a.st", "ab\ncd\r\n\nef");
    EXPECT_EQ(f.lineCol(0).line, 1u);
    EXPECT_EQ(f.lineCol(0).column, 1u);
    EXPECT_EQ(f.lineCol(1).column, 2u);
    EXPECT_EQ(f.lineCol(3).line, 2u);
    EXPECT_EQ(f.lineCol(3).column, 1u);
    EXPECT_EQ(f.lineCol(7).line, 3u);
    EXPECT_EQ(f.lineCol(8).line, 4u);
    EXPECT_EQ(f.lineCol(9).column, 2u);
    EXPECT_EQ(f.lineCount(), 4u);
}

TEST(SourceFileTest, OffsetPastEndClampsToLastPosition) {
    SourceFile f(0, "a.st", "ab\ncd");
    LineCol lc = f.lineCol(1000);
    EXPECT_EQ(lc.line, 2u);
    EXPECT_EQ(lc.column, 3u);
}

TEST(SourceFileTest, LineTextStripsLineEnding) {
    SourceFile f(0, "a.st", "first\r\nsecond\n");
    EXPECT_EQ(f.lineText(1), "first");
    EXPECT_EQ(f.lineText(2), "second");
    EXPECT_EQ(f.lineText(3), "");
    EXPECT_EQ(f.lineText(0), "");
    EXPECT_EQ(f.lineText(99), "");
}

TEST(SourceManagerTest, LoadReportsMissingFile) {
    SourceManager sm;
    std::string error;
    EXPECT_EQ(sm.load("/nonexistent/takt/file.st", error), kNoFile);
    EXPECT_FALSE(error.empty());
    EXPECT_EQ(sm.size(), 0u);
}

TEST(SourceManagerTest, SpanTextAndPositions) {
    SourceManager sm;
    FileId id = sm.add("m.st", "PROGRAM P\nEND_PROGRAM\n");
    Span s{id, 8, 9};
    EXPECT_EQ(sm.text(s), "P");
    EXPECT_EQ(sm.lineCol(s).column, 9u);
    EXPECT_EQ(sm.endLineCol(Span{id, 10, 21}).line, 2u);
}

} // namespace
} // namespace takt::compiler
