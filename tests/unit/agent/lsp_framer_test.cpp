// The Content-Length framer of `takt lsp` (rpc_framer.h): bodies out whatever the chunking, and
// every broken header or body reported without ending the stream.
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "rpc/rpc_framer.h"
#include "takt/agent/lsp_server.h"

namespace takt::agent::rpc {
namespace {

// What the framer reports for `input` fed in pieces of `chunk` bytes: bodies as themselves,
// errors as "<bad>" / "<large>".
std::vector<std::string> frame(std::string_view input, std::size_t chunk = 1 << 16, std::size_t maxBody = kMaxBodyBytes,
                               std::size_t maxHeader = kMaxHeaderBytes, std::size_t* peak = nullptr) {
    HeaderFramer framer(maxBody, maxHeader);
    std::vector<std::string> out;
    while (!input.empty()) {
        std::string_view piece = input.substr(0, chunk);
        input.remove_prefix(piece.size());
        while (!piece.empty()) {
            switch (framer.next(piece)) {
            case HeaderFramer::Status::Message: out.emplace_back(framer.body()); break;
            case HeaderFramer::Status::BadHeader: out.emplace_back("<bad>"); break;
            case HeaderFramer::Status::TooLarge: out.emplace_back("<large>"); break;
            case HeaderFramer::Status::NeedMore: break;
            }
            if (peak != nullptr) {
                *peak = std::max(*peak, framer.buffered());
            }
        }
    }
    return out;
}

using Bodies = std::vector<std::string>;

TEST(LspFramer, BodiesWhateverTheChunking) {
    const std::string stream = lspFrame(R"({"a":1})") + lspFrame("{\"b\":\n2}") +
                               "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}";
    for (std::size_t chunk : {1, 2, 3, 7, 64}) {
        EXPECT_EQ(frame(stream, chunk), (Bodies{R"({"a":1})", "{\"b\":\n2}", "{}"})) << chunk;
    }
}

TEST(LspFramer, HeaderNamesAnyCaseAndBareNewlines) {
    EXPECT_EQ(frame("content-length: 2\n\n{}CONTENT-LENGTH:2\r\n\r\n[]"), (Bodies{"{}", "[]"}));
}

TEST(LspFramer, MissingOrBadLengthIsReportedAndTheNextMessageServed) {
    EXPECT_EQ(frame("Content-Type: x\r\n\r\n{}" + lspFrame("{\"ok\":1}")), (Bodies{"<bad>", "{\"ok\":1}"}));
    EXPECT_EQ(frame("Content-Length: 12x\r\n\r\n{}" + lspFrame("{}")), (Bodies{"<bad>", "{}"}));
    EXPECT_EQ(frame("garbage without colon\r\n\r\n" + lspFrame("{}")), (Bodies{"<bad>", "{}"}));
    EXPECT_EQ(frame("Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}" + lspFrame("{}")), (Bodies{"<bad>", "{}"}));
}

TEST(LspFramer, BodyOverTheCapIsSkippedUnbuffered) {
    std::size_t peak = 0;
    const std::string big(1000, 'x');
    EXPECT_EQ(frame(lspFrame(big) + lspFrame("{}"), 16, 100, kMaxHeaderBytes, &peak), (Bodies{"<large>", "{}"}));
    EXPECT_LT(peak, 100u);
}

TEST(LspFramer, HeaderOverTheCapIsReported) {
    std::size_t peak = 0;
    const std::string longHeader = "X-Long: " + std::string(500, 'y') + "\r\n";
    EXPECT_EQ(frame(longHeader + "Content-Length: 2\r\n\r\n{}" + lspFrame("[]"), 8, 1000, 64, &peak),
              (Bodies{"<bad>", "{}", "[]"}));
    EXPECT_LE(peak, 64u);
}

TEST(LspFramer, BlankLinesBetweenMessagesAreIgnored) {
    EXPECT_EQ(frame("\r\n\r\n" + lspFrame("{}") + "\r\n" + lspFrame("[]")), (Bodies{"{}", "[]"}));
}

TEST(LspFramer, EmptyBodyIsAMessage) {
    EXPECT_EQ(frame("Content-Length: 0\r\n\r\n" + lspFrame("{}")), (Bodies{"", "{}"}));
}

} // namespace
} // namespace takt::agent::rpc
