#include "rpc_framer.h"

namespace takt::agent::rpc {

LineFramer::Status LineFramer::next(std::string_view& in) {
    if (complete_) {
        line_.clear();
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
        return Status::TooLong;
    }
    complete_ = true;
    return Status::Line;
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

} // namespace takt::agent::rpc
