#include "takt/engine/trace_recorder.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace takt::engine {

namespace {

std::uint32_t rowBytes(std::span<const ImageRange> ranges) noexcept {
    std::uint32_t n = 0;
    for (const ImageRange& r : ranges) {
        n += r.valueBytes();
    }
    return n;
}

} // namespace

bool TraceRecorder::fits(std::span<const ImageRange> ranges, std::uint64_t samples) noexcept {
    return samples <= kMaxSamples && samples * (rowBytes(ranges) + sizeof(Stamp)) <= kMaxBytes;
}

TraceRecorder::TraceRecorder(const TraceLayout& layout, const TraceTrigger& trigger, std::uint32_t pre,
                             std::uint32_t post)
    : layout_(layout), trigger_(trigger), pre_(pre), post_(post), capacity_(pre + post) {
    for (std::uint32_t i = 0; i < layout_.count; ++i) {
        at_[i] = stride_;
        stride_ += layout_.ranges[i].valueBytes();
    }
    rows_ = std::make_unique<std::uint8_t[]>(static_cast<std::size_t>(capacity_) * std::max<std::uint32_t>(stride_, 1));
    stamps_ = std::make_unique<Stamp[]>(capacity_);
}

double TraceRecorder::number(const std::uint8_t* row) const noexcept {
    const std::uint8_t* p = row + at_[trigger_.channel];
    const std::uint32_t n = width(trigger_.channel);
    switch (trigger_.number) {
    case TraceNumber::Bool: return *p != 0 ? 1.0 : 0.0;
    case TraceNumber::Float:
        if (n == 4) {
            float f = 0;
            std::memcpy(&f, p, 4);
            return f;
        } else {
            double d = 0;
            std::memcpy(&d, p, 8);
            return d;
        }
    case TraceNumber::Signed:
    case TraceNumber::Unsigned: break;
    }
    std::uint64_t u = 0;
    std::memcpy(&u, p, std::min<std::uint32_t>(n, 8)); // little-endian: the low bytes
    if (trigger_.number == TraceNumber::Unsigned || n >= 8) {
        return trigger_.number == TraceNumber::Unsigned ? static_cast<double>(u)
                                                        : static_cast<double>(static_cast<std::int64_t>(u));
    }
    const unsigned shift = 64 - 8 * n; // sign-extend the value's top bit
    return static_cast<double>(static_cast<std::int64_t>(u << shift) >> shift);
}

void TraceRecorder::record(const std::uint8_t* row) noexcept {
    const std::uint64_t n = written_++;
    taken_.store(written_, std::memory_order_relaxed);
    if (state_.load(std::memory_order_relaxed) == TraceState::Armed) {
        bool fire = trigger_.edge == TraceTrigger::Edge::None;
        if (!fire) {
            const double v = number(row);
            if (havePrevious_) {
                const bool up = previous_ < trigger_.level && v >= trigger_.level;
                const bool down = previous_ >= trigger_.level && v < trigger_.level;
                fire = (up && trigger_.edge != TraceTrigger::Edge::Falling) ||
                       (down && trigger_.edge != TraceTrigger::Edge::Rising);
            }
            previous_ = v;
            havePrevious_ = true;
        }
        if (!fire) {
            return;
        }
        triggerSample_ = n;
        triggered_ = true;
        state_.store(TraceState::Triggered, std::memory_order_release);
    }
    if (written_ - triggerSample_ >= post_) {
        state_.store(TraceState::Done, std::memory_order_release); // the rows are complete
    }
}

void TraceRecorder::follow(const TraceLayout& next) noexcept {
    if (state_.load(std::memory_order_relaxed) == TraceState::Done) {
        return;
    }
    bool same = next.module != nullptr && next.count == layout_.count;
    for (std::uint32_t i = 0; same && i < next.count; ++i) {
        same = next.ranges[i].valueBytes() == layout_.ranges[i].valueBytes();
    }
    if (!same) {
        end_.store(TraceEnd::ProgramChanged, std::memory_order_relaxed);
        state_.store(TraceState::Done, std::memory_order_release);
        return;
    }
    layout_ = next;
}

// Read by the control thread only once the sampler no longer writes (Done, or detached).
std::size_t TraceRecorder::first() const noexcept {
    if (triggered_) {
        return static_cast<std::size_t>(triggerSample_ - std::min<std::uint64_t>(pre_, triggerSample_));
    }
    return static_cast<std::size_t>(written_ - std::min<std::uint64_t>(written_, capacity_));
}

std::size_t TraceRecorder::kept() const noexcept {
    return static_cast<std::size_t>(written_) - first(); // after a trigger never more than pre + post
}

TraceRecorder::Sample TraceRecorder::at(std::size_t i) const noexcept {
    const std::size_t slot = (first() + i) % capacity_;
    return Sample{stamps_[slot].cycle, stamps_[slot].timeNs, rows_.get() + slot * stride_};
}

std::size_t TraceRecorder::triggerAt() const noexcept {
    return triggered_ ? static_cast<std::size_t>(triggerSample_) - first() : kept();
}

void TraceSlot::attach(TraceRecorder* r, std::uint32_t traceTask) noexcept {
    task.store(traceTask);
    recorder.store(r);
}

void TraceSlot::detach() noexcept {
    recorder.store(nullptr);
    // A sampler that loaded the recorder before the store holds `users` until it is done: one
    // sample's copy, microseconds.
    while (users.load() != 0) {
        std::this_thread::yield();
    }
}

} // namespace takt::engine
