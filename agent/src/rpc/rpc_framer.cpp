#include "rpc/rpc_framer.h"

#include <algorithm>
#include <optional>

#include "takt/common/text.h"

namespace takt::agent::rpc {

LineFramer::Status LineFramer::next(std::string_view& in) {
    if (complete_) {
        release();
        complete_ = false;
    }
    while (!in.empty()) {
        const std::size_t nl = in.find('\n');
        const std::string_view part = in.substr(0, nl);
        in.remove_prefix(nl == std::string_view::npos ? in.size() : nl + 1);
        if (!skipping_) {
            // One byte of slack for the CR of a CRLF line; whether it is one is known at the newline.
            if (line_.size() + part.size() > max_ + 1) {
                skipping_ = true;
                line_.clear();
                line_.shrink_to_fit(); // a hostile line does not leave its megabyte behind
                if (nl != std::string_view::npos) {
                    skipping_ = false;
                }
                return Status::TooLong;
            }
            line_.append(part);
        }
        if (nl == std::string_view::npos) {
            return Status::NeedMore;
        }
        if (skipping_) {
            skipping_ = false;
            continue;
        }
        return complete();
    }
    return Status::NeedMore;
}

// The line in line_ is complete: without its CR, it must fit the cap.
LineFramer::Status LineFramer::complete() {
    if (!line_.empty() && line_.back() == '\r') {
        line_.pop_back();
    }
    if (line_.size() > max_) {
        line_.clear();
        line_.shrink_to_fit(); // the cap and its CR's byte of slack are not held after the refusal
        return Status::TooLong;
    }
    complete_ = true;
    return Status::Line;
}

void LineFramer::release() {
    line_.clear();
    if (line_.capacity() > kMaxLineBytes) {
        line_.shrink_to_fit();
    }
}

LineFramer::Status LineFramer::finish() {
    if (complete_) {
        line_.clear();
        complete_ = false;
    }
    const bool skipped = skipping_;
    skipping_ = false;
    if (skipped || line_.empty()) {
        line_.clear();
        return Status::NeedMore;
    }
    return complete();
}

namespace {

constexpr std::string_view kLengthHeader = "content-length:";

bool equalsLower(std::string_view text, std::string_view lower) {
    if (text.size() != lower.size()) {
        return false;
    }
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i] >= 'A' && text[i] <= 'Z' ? static_cast<char>(text[i] - 'A' + 'a') : text[i];
        if (c != lower[i]) {
            return false;
        }
    }
    return true;
}

} // namespace

HeaderFramer::Status HeaderFramer::bad(std::string message) {
    error_ = std::move(message);
    header_.clear();
    line_.clear();
    matched_ = 0;
    state_ = State::Resync;
    return Status::BadHeader;
}

// header_ holds a complete block (its blank line dropped): one Content-Length is required,
// other headers (Content-Type) are accepted as the protocol allows.
HeaderFramer::Status HeaderFramer::endOfHeader() {
    std::string_view block = header_;
    std::optional<std::size_t> length;
    while (!block.empty()) {
        const std::size_t nl = block.find('\n');
        const std::string_view line = common::trim(block.substr(0, nl), " \t\r");
        block.remove_prefix(nl == std::string_view::npos ? block.size() : nl + 1);
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) {
            return bad("malformed header line (expected 'Name: value')");
        }
        if (!equalsLower(common::trim(line.substr(0, colon + 1), " \t\r"), kLengthHeader)) {
            continue;
        }
        const std::string_view value = common::trim(line.substr(colon + 1), " \t\r");
        std::size_t n = 0;
        if (value.empty() || value.size() > 12 || value.find_first_not_of("0123456789") != std::string_view::npos) {
            return bad("Content-Length must be a decimal byte count");
        }
        for (const char c : value) {
            n = n * 10 + static_cast<std::size_t>(c - '0');
        }
        if (length && *length != n) {
            return bad("conflicting Content-Length headers");
        }
        length = n;
    }
    header_.clear();
    if (!length) {
        return bad("header block without Content-Length");
    }
    want_ = *length;
    if (want_ > maxBody_) {
        error_ = "message body of " + std::to_string(want_) + " bytes exceeds the limit of " +
                 std::to_string(maxBody_) + " bytes; it is skipped";
        state_ = State::Skip;
        return Status::TooLarge;
    }
    state_ = State::Body;
    body_.reserve(want_);
    return Status::NeedMore;
}

HeaderFramer::Status HeaderFramer::next(std::string_view& in) {
    if (delivered_) {
        body_.clear();
        delivered_ = false;
    }
    while (!in.empty()) {
        switch (state_) {
        case State::Header: {
            const std::size_t nl = in.find('\n');
            const std::string_view part = in.substr(0, nl);
            in.remove_prefix(nl == std::string_view::npos ? in.size() : nl + 1);
            if (header_.size() + line_.size() + part.size() > maxHeader_) {
                return bad("header block exceeds " + std::to_string(maxHeader_) + " bytes");
            }
            line_.append(part);
            if (nl == std::string_view::npos) {
                break;
            }
            if (!line_.empty() && line_.back() == '\r') {
                line_.pop_back();
            }
            if (!line_.empty()) {
                header_.append(line_).push_back('\n');
                line_.clear();
                break;
            }
            if (header_.empty()) {
                break; // blank lines between messages
            }
            if (const Status s = endOfHeader(); s != Status::NeedMore) {
                return s;
            }
            if (want_ == 0) {
                state_ = State::Header;
                delivered_ = true;
                return Status::Message;
            }
            break;
        }
        case State::Body:
        case State::Skip: {
            const std::size_t take = std::min(want_, in.size());
            if (state_ == State::Body) {
                body_.append(in.substr(0, take));
            }
            in.remove_prefix(take);
            want_ -= take;
            if (want_ == 0) {
                const bool message = state_ == State::Body;
                state_ = State::Header;
                if (message) {
                    delivered_ = true;
                    return Status::Message;
                }
            }
            break;
        }
        case State::Resync: {
            // "content-length:" has no proper prefix that is also a suffix, so a mismatch restarts
            // the match at this byte.
            const char c =
                in.front() >= 'A' && in.front() <= 'Z' ? static_cast<char>(in.front() - 'A' + 'a') : in.front();
            in.remove_prefix(1);
            matched_ = c == kLengthHeader[matched_] ? matched_ + 1 : (c == kLengthHeader[0] ? 1 : 0);
            if (matched_ == kLengthHeader.size()) {
                matched_ = 0;
                line_ = "Content-Length:";
                state_ = State::Header;
            }
            break;
        }
        }
    }
    return Status::NeedMore;
}

} // namespace takt::agent::rpc
