#pragma once
// The limits every JSON-RPC surface of takt shares (harness, agent API, control
// endpoint; PROTOCOLS.md), and the messages that report a line breaking them. One place, so the
// surfaces cannot drift apart.
#include <cstddef>
#include <string_view>

namespace takt::agent {

inline constexpr std::size_t kMaxLineBytes = 1u << 20; // one request line, without its newline
// One request line of a control session holding the engineer role or above: `bytecode.reload`
// carries the new program.stbc base64-encoded in one line, which for a large program is far more
// than kMaxLineBytes (a generated 50,000-line project: 3.4 MB, 4.5 MB encoded). A session before
// login, or as viewer or operator, keeps kMaxLineBytes: a client that has proven nothing cannot
// make takt buffer more.
inline constexpr std::size_t kMaxEngineerLineBytes = 32u << 20;
// The Content-Length framing of the language server (`takt lsp`): a message body carries a whole
// source file in didOpen/didChange, so it may be larger than a request line; its header block
// is a few short lines.
inline constexpr std::size_t kMaxBodyBytes = 16u << 20;
inline constexpr std::size_t kMaxHeaderBytes = 8u << 10;
inline constexpr int kMaxJsonDepth = 64;
// The answer to a line holding nothing but blanks (space, tab, CR): an invalid request, never
// silence, so a client never waits on a line that was dropped.
inline constexpr std::string_view kBlankLineMessage = "empty line: send one JSON request per line";
inline constexpr std::string_view kOversizeLineMessage =
    "request line exceeds 1048576 bytes (1 MiB); it is skipped up to its newline";
inline constexpr std::string_view kOversizeEngineerLineMessage =
    "request line exceeds 33554432 bytes (32 MiB); it is skipped up to its newline";

} // namespace takt::agent
