#pragma once
// The line framer of every line-based protocol surface (harness, agent API, control endpoint and
// its client): bytes in, complete lines out, with a cap on the length of one line. A line over
// the cap is reported once, as soon as it crosses the cap, and the rest of it up to its newline is
// dropped without being buffered, so a hostile peer cannot make the reader hold more than the
// cap; the next line is served normally.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "takt/agent/rpc_limits.h"

namespace takt::agent::rpc {

class LineFramer {
public:
    enum class Status : std::uint8_t {
        NeedMore, // the input is used up without completing a line
        Line,     // line() holds a complete line
        TooLong,  // the current line has just crossed the cap (reported once per line)
    };

    explicit LineFramer(std::size_t maxBytes = kMaxLineBytes) : max_(maxBytes) {}

    // A new cap, from the next line on (the control endpoint's grows with the session's role).
    void setMax(std::size_t maxBytes) noexcept { max_ = maxBytes; }

    // Consumes `in` up to and including its first newline, or all of it. A CR before the newline
    // is not part of the line and does not count against the cap.
    [[nodiscard]] Status next(std::string_view& in);
    // End of input: Line when an unterminated line is left over (never for the remainder of an
    // over-long line; an input that ends with its newline leaves nothing: it is not a blank line).
    [[nodiscard]] Status finish();

    // The complete line of the last Line status; valid until the next call or release().
    [[nodiscard]] std::string_view line() const { return line_; }
    // Gives back the buffer of a line longer than kMaxLineBytes (an engineer's reload) once it
    // has been handled, instead of holding it until the session's next line.
    void release();
    // Bytes of an incomplete line held now (tests: never more than the cap plus a CR).
    [[nodiscard]] std::size_t buffered() const { return complete_ ? 0 : line_.size(); }
    // Bytes of memory the line buffer keeps (tests: a large line's are given back).
    [[nodiscard]] std::size_t held() const { return line_.capacity(); }

private:
    [[nodiscard]] Status complete();

    std::string line_;
    std::size_t max_;
    bool skipping_ = false; // inside a line over the cap: dropping bytes up to its newline
    bool complete_ = false; // line_ was handed out and is cleared on the next call
};

} // namespace takt::agent::rpc

namespace takt::agent::rpc {

// The framer of the language server (LSP base protocol): header lines `Name: value` ending in
// CRLF (a bare LF is accepted), a blank line, then a body of exactly Content-Length bytes.
// A header block without a valid Content-Length is reported once (BadHeader) and the framer
// then looks for the next `Content-Length:` in the stream, so one garbled message does not end
// the session. A body over the cap is reported (TooLarge) and its bytes are dropped unbuffered.
class HeaderFramer {
public:
    enum class Status : std::uint8_t {
        NeedMore,  // the input is used up without completing a message
        Message,   // body() holds one complete body
        BadHeader, // error() says what was wrong with the header block
        TooLarge,  // the announced body exceeds the cap; it is being skipped
    };

    explicit HeaderFramer(std::size_t maxBody = kMaxBodyBytes, std::size_t maxHeader = kMaxHeaderBytes)
        : maxBody_(maxBody), maxHeader_(maxHeader) {}

    // Consumes `in` up to the end of the next event, or all of it.
    [[nodiscard]] Status next(std::string_view& in);

    [[nodiscard]] std::string_view body() const { return body_; }
    [[nodiscard]] const std::string& error() const { return error_; }
    // Bytes held now (tests: never more than the larger of the two caps).
    [[nodiscard]] std::size_t buffered() const { return header_.size() + line_.size() + body_.size(); }

private:
    enum class State : std::uint8_t { Header, Body, Skip, Resync };
    [[nodiscard]] Status endOfHeader();
    [[nodiscard]] Status bad(std::string message);

    State state_ = State::Header;
    std::string header_;      // the complete header lines so far, each ending in '\n'
    std::string line_;        // the header line being read
    std::size_t matched_ = 0; // Resync: bytes of "content-length:" matched so far
    std::string body_;
    std::string error_;
    std::size_t want_ = 0; // body bytes still to read (Body) or to drop (Skip)
    std::size_t maxBody_;
    std::size_t maxHeader_;
    bool delivered_ = false; // body_ was handed out and is cleared on the next call
};

} // namespace takt::agent::rpc
