// The one line framer of the harness, the agent API, the control endpoint and its client.
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "rpc/rpc_framer.h"

namespace takt::agent::rpc {
namespace {

// Everything the framer reports for `chunks` fed in order, then end of input: lines as
// themselves, an over-long line as "<too long>".
std::vector<std::string> frame(const std::vector<std::string>& chunks, std::size_t cap = kMaxLineBytes,
                               std::size_t* peak = nullptr) {
    LineFramer framer(cap);
    std::vector<std::string> out;
    const auto take = [&](LineFramer::Status s) {
        if (s == LineFramer::Status::Line) {
            out.emplace_back(framer.line());
        } else if (s == LineFramer::Status::TooLong) {
            out.emplace_back("<too long>");
        }
        if (peak != nullptr) {
            *peak = std::max(*peak, framer.buffered());
        }
    };
    for (const std::string& chunk : chunks) {
        std::string_view in = chunk;
        while (!in.empty()) {
            take(framer.next(in));
        }
    }
    take(framer.finish());
    return out;
}

using Lines = std::vector<std::string>;

TEST(RpcFramer, SplitsJoinsAndStripsCrlf) {
    EXPECT_EQ(frame({"a\nb\r\nc"}), (Lines{"a", "b", "c"}));
    EXPECT_EQ(frame({"ab", "c\r", "\nd", "e\n"}), (Lines{"abc", "de"}));
    // One byte at a time gives the same lines.
    std::vector<std::string> bytes;
    for (const char c : std::string("x1\r\n\ny2\n")) {
        bytes.emplace_back(1, c);
    }
    EXPECT_EQ(frame(bytes), (Lines{"x1", "", "y2"}));
}

TEST(RpcFramer, BlankLinesAreLinesButTheEndOfInputIsNot) {
    EXPECT_EQ(frame({"\n\r\n"}), (Lines{"", ""}));
    EXPECT_EQ(frame({"a\n"}), (Lines{"a"}));
    EXPECT_EQ(frame({""}), Lines{});
    // Only the CR right before the newline goes; other CRs are the line's own.
    EXPECT_EQ(frame({"a\rb\r\r\n"}), (Lines{"a\rb\r"}));
}

TEST(RpcFramer, ExactlyTheCapFitsWithOrWithoutCr) {
    const std::string full(kMaxLineBytes, 'x');
    EXPECT_EQ(frame({full + "\n"}), (Lines{full}));
    EXPECT_EQ(frame({full + "\r\n"}), (Lines{full}));
    EXPECT_EQ(frame({full.substr(0, 1000), full.substr(1000) + "\r", "\n"}), (Lines{full}));
    EXPECT_EQ(frame({full}), (Lines{full})); // unterminated at end of input
}

TEST(RpcFramer, OneByteOverIsRefusedOnceAndTheNextLineIsServed) {
    const std::string over(kMaxLineBytes + 1, 'x');
    EXPECT_EQ(frame({over + "\nnext\n"}), (Lines{"<too long>", "next"}));
    EXPECT_EQ(frame({over + "\r\nnext\n"}), (Lines{"<too long>", "next"}));
    EXPECT_EQ(frame({over}), (Lines{"<too long>"}));
}

TEST(RpcFramer, AHugeLineIsReportedWhenItCrossesTheCapAndNeverBuffered) {
    LineFramer framer(16);
    std::string_view in = "0123456789";
    EXPECT_EQ(framer.next(in), LineFramer::Status::NeedMore);
    in = "0123456789";
    EXPECT_EQ(framer.next(in), LineFramer::Status::TooLong); // before any newline arrived
    for (int i = 0; i < 1000; ++i) {
        in = "0123456789";
        EXPECT_EQ(framer.next(in), LineFramer::Status::NeedMore);
        EXPECT_EQ(framer.buffered(), 0u);
    }
    in = "tail\nok\n"; // the tail of the long line is dropped, the next line comes out
    EXPECT_EQ(framer.next(in), LineFramer::Status::Line);
    EXPECT_EQ(framer.line(), "ok");
    EXPECT_EQ(framer.finish(), LineFramer::Status::NeedMore);

    std::size_t peak = 0;
    const std::string huge(5 * kMaxLineBytes, 'y');
    EXPECT_EQ(
        frame({huge.substr(0, 3 * kMaxLineBytes), huge.substr(3 * kMaxLineBytes) + "\nz\n"}, kMaxLineBytes, &peak),
        (Lines{"<too long>", "z"}));
    EXPECT_LE(peak, kMaxLineBytes + 1);
}

TEST(RpcFramer, AnOverLongLineAtTheEndOfInputIsReportedOnce) {
    const std::string over(20, 'x');
    EXPECT_EQ(frame({over}, 16), (Lines{"<too long>"}));
    EXPECT_EQ(frame({over.substr(0, 17)}, 16), (Lines{"<too long>"}));
    EXPECT_EQ(frame({over.substr(0, 16) + "\r"}, 16), (Lines{over.substr(0, 16)}));
}

// An engineer's control session takes lines up to kMaxEngineerLineBytes: a reload's few
// megabytes must not stay held once handled, nor a refused line's.
TEST(RpcFramer, ALargeLinesBufferIsGivenBack) {
    LineFramer framer(kMaxEngineerLineBytes);
    const std::string large(3 * kMaxLineBytes, 'x');
    std::string_view in = large;
    EXPECT_EQ(framer.next(in), LineFramer::Status::NeedMore);
    in = "\n";
    ASSERT_EQ(framer.next(in), LineFramer::Status::Line);
    EXPECT_EQ(framer.line().size(), large.size());
    framer.release();
    EXPECT_LE(framer.held(), kMaxLineBytes);

    // A line that crosses the cap only by its last byte, seen at its newline (complete()).
    LineFramer capped(kMaxLineBytes);
    const std::string over(kMaxLineBytes + 1, 'y');
    in = over;
    EXPECT_EQ(capped.next(in), LineFramer::Status::NeedMore);
    in = "\n";
    EXPECT_EQ(capped.next(in), LineFramer::Status::TooLong);
    EXPECT_LT(capped.held(), 1024u);
    // A short line's buffer is kept for the next line (no allocation per line).
    in = "short\n";
    ASSERT_EQ(capped.next(in), LineFramer::Status::Line);
    capped.release();
    EXPECT_GE(capped.held(), 5u);
}

} // namespace
} // namespace takt::agent::rpc
