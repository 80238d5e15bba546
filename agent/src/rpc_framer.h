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

    // Consumes `in` up to and including its first newline, or all of it. A CR before the newline
    // is not part of the line and does not count against the cap.
    [[nodiscard]] Status next(std::string_view& in);
    // End of input: Line when an unterminated line is left over (never for the remainder of an
    // over-long line; an input that ends with its newline leaves nothing: it is not a blank line).
    [[nodiscard]] Status finish();

    // The complete line of the last Line status; valid until the next call.
    [[nodiscard]] std::string_view line() const { return line_; }
    // Bytes of an incomplete line held now (tests: never more than the cap plus a CR).
    [[nodiscard]] std::size_t buffered() const { return complete_ ? 0 : line_.size(); }

private:
    [[nodiscard]] Status complete();

    std::string line_;
    std::size_t max_;
    bool skipping_ = false; // inside a line over the cap: dropping bytes up to its newline
    bool complete_ = false; // line_ was handed out and is cleared on the next call
};

} // namespace takt::agent::rpc
