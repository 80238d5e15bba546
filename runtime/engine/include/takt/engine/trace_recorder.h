#pragma once
// A trace (docs/trace.md): up to 32 variables sampled at the end of every cycle of one task into
// a ring allocated when the trace is made, so the task's thread neither allocates nor locks for
// it. A trigger (a BOOL's edge, a number crossing a level) splits the capture into `pre` samples
// before it and `post` samples from it on; without a trigger the capture starts at once and is
// `post` samples long.
//
// States: Armed (waiting for the trigger; the ring keeps the latest samples), Triggered (counting
// the samples after it), Done (complete: the task no longer writes the ring). The control thread
// makes a recorder off the cycle and attaches it to a TraceSlot of the scan loop; the task's thread
// samples it at the end of each cycle of its task. The control thread reads the samples once the
// recorder is Done (an acquire load of the state) or once it has detached it (TraceSlot::detach
// returns when the sampler has let go).
//
// An online change keeps a trace running when its variables survive it: the control thread hands
// the scan loop their ranges in the new program with the change (ScanCommand::traces), and the
// scan thread moves the recorder onto them while every task is parked for the change. A trace
// whose variables did not survive ends (TraceEnd::ProgramChanged) with what it had.
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "takt/engine/scan_command.h"

namespace takt::bytecode {
struct Module;
}

namespace takt::engine {

enum class TraceState : std::uint8_t { Armed, Triggered, Done };
// Why a Done trace ended: it has all its samples, or an online change removed or retyped one of
// its variables.
enum class TraceEnd : std::uint8_t { Complete, ProgramChanged };

// How the trigger reads its variable: as a BOOL (one byte, or a bit), a signed or unsigned
// integer or a float of the range's size.
enum class TraceNumber : std::uint8_t { Bool, Signed, Unsigned, Float };

struct TraceTrigger {
    enum class Edge : std::uint8_t { None, Rising, Falling, Both };
    Edge edge = Edge::None;    // None: the capture starts at the first sample
    std::uint32_t channel = 0; // the traced variable it watches
    TraceNumber number = TraceNumber::Bool;
    // A number triggers when it crosses the level: rising from below it to at least it, falling
    // from at least it to below it. A BOOL's level is 0.5.
    double level = 0.5;
};

inline constexpr std::size_t kMaxTraceChannels = 32;

// Where a trace's variables are in one program, and which of its tasks the trace samples (its
// index there, or TraceSlot::kBaseCycle).
inline constexpr std::uint32_t kTraceBaseCycle = 0xffff'ffffu; // a program without TASKs

struct TraceLayout {
    const bytecode::Module* module = nullptr; // nullptr: the variables are not all in the program
    std::uint32_t task = kTraceBaseCycle;
    std::uint32_t count = 0;
    std::array<ImageRange, kMaxTraceChannels> ranges{};
};

class TraceRecorder {
public:
    static constexpr std::uint32_t kMaxSamples = 1'000'000;
    static constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

    // `layout.count` channels (1..kMaxTraceChannels) and pre + post samples (post >= 1, no pre
    // without a trigger) within kMaxSamples and kMaxBytes: the caller checks (fits()).
    TraceRecorder(const TraceLayout& layout, const TraceTrigger& trigger, std::uint32_t pre, std::uint32_t post);
    TraceRecorder(const TraceRecorder&) = delete;
    TraceRecorder& operator=(const TraceRecorder&) = delete;

    // Whether a recorder of these dimensions stays within kMaxSamples and kMaxBytes.
    [[nodiscard]] static bool fits(std::span<const ImageRange> ranges, std::uint64_t samples) noexcept;

    // The sampling thread, at the end of a cycle of the traced task: the values of that cycle.
    // Nothing while the running program is not the one the layout was made for.
    template <class ImageOf>
    void sample(const bytecode::Module* running, std::uint64_t cycle, std::int64_t timeNs, ImageOf&& imageOf) noexcept {
        if (state_.load(std::memory_order_relaxed) == TraceState::Done || running != layout_.module) {
            return;
        }
        // The areas once per sample, not once per variable.
        const std::array<std::span<std::uint8_t>, 4> areas{imageOf(ImageArea::Data), imageOf(ImageArea::Input),
                                                           imageOf(ImageArea::Output), imageOf(ImageArea::Memory)};
        std::uint8_t* row = rows_.get() + static_cast<std::size_t>(written_ % capacity_) * stride_;
        for (std::uint32_t i = 0; i < layout_.count; ++i) {
            const ImageRange& r = layout_.ranges[i];
            const std::span<std::uint8_t> image = areas[static_cast<std::size_t>(r.area)];
            if (static_cast<std::size_t>(r.offset) + (r.isBit ? 1u : r.size) > image.size()) {
                return; // cannot happen for a layout of the running program; never read outside it
            }
            readRange(r, image.data(), row + at_[i]);
        }
        stamps_[written_ % capacity_] = Stamp{cycle, timeNs};
        record(row);
    }

    // The scan thread, while every task is parked for an online change: the same variables in
    // the new program, or (module nullptr) the end of the trace.
    void follow(const TraceLayout& next) noexcept;

    [[nodiscard]] TraceState state() const noexcept { return state_.load(std::memory_order_acquire); }
    [[nodiscard]] TraceEnd end() const noexcept { return end_.load(std::memory_order_acquire); }
    // Samples taken so far (any thread; a progress figure).
    [[nodiscard]] std::uint64_t taken() const noexcept { return taken_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::uint32_t pre() const noexcept { return pre_; }
    [[nodiscard]] std::uint32_t post() const noexcept { return post_; }
    [[nodiscard]] std::uint32_t channels() const noexcept { return layout_.count; }

    // Once Done or detached: the samples kept, oldest first, and which of them is the trigger's.
    struct Sample {
        std::uint64_t cycle = 0;
        std::int64_t timeNs = 0; // CLOCK_MONOTONIC at the end of the cycle
        const std::uint8_t* values = nullptr;
    };
    [[nodiscard]] std::size_t kept() const noexcept;
    [[nodiscard]] Sample at(std::size_t i) const noexcept;
    [[nodiscard]] std::size_t triggerAt() const noexcept; // kept() when the trigger never came
    // Channel `c`'s bytes in a sample's values, and their length.
    [[nodiscard]] std::uint32_t offset(std::size_t c) const noexcept { return at_[c]; }
    [[nodiscard]] std::uint32_t width(std::size_t c) const noexcept { return layout_.ranges[c].valueBytes(); }

private:
    void record(const std::uint8_t* row) noexcept;
    [[nodiscard]] double number(const std::uint8_t* row) const noexcept;
    [[nodiscard]] std::size_t first() const noexcept; // ring index of the oldest kept sample

    struct Stamp {
        std::uint64_t cycle;
        std::int64_t timeNs;
    };
    TraceLayout layout_;
    TraceTrigger trigger_;
    std::uint32_t pre_ = 0, post_ = 0, capacity_ = 0, stride_ = 0;
    std::array<std::uint32_t, kMaxTraceChannels> at_{};
    std::unique_ptr<std::uint8_t[]> rows_;
    std::unique_ptr<Stamp[]> stamps_;
    // Sampling thread.
    std::uint64_t written_ = 0;
    std::uint64_t triggerSample_ = 0; // written_ of the trigger's sample once Triggered
    bool triggered_ = false;
    bool havePrevious_ = false;
    double previous_ = 0;
    std::atomic<std::uint64_t> taken_{0};
    std::atomic<TraceState> state_{TraceState::Armed};
    std::atomic<TraceEnd> end_{TraceEnd::Complete};
};

// Where the scan loop keeps an attached recorder: one slot per trace, sampled by the thread of
// the slot's task. attach() and detach() are the control thread's; detach() returns once no
// thread touches the recorder any more, so the caller may read or free it.
struct TraceSlot {
    static constexpr std::uint32_t kBaseCycle = kTraceBaseCycle;
    static constexpr std::uint32_t kAnyTask = 0xffff'fffeu; // with(): whatever the task

    void attach(TraceRecorder* recorder, std::uint32_t traceTask) noexcept;
    void detach() noexcept;

    // A sampling thread: `use(recorder)` when the slot holds one of task `sampler`, while the
    // control thread cannot free it. With no recorder it costs one relaxed load.
    template <class Use> void with(std::uint32_t sampler, Use&& use) noexcept {
        if (recorder.load(std::memory_order_relaxed) == nullptr) {
            return;
        }
        users.fetch_add(1); // sequentially consistent with detach()'s store and load
        if (TraceRecorder* r = recorder.load(); r != nullptr && (sampler == kAnyTask || task.load() == sampler)) {
            use(*r);
        }
        users.fetch_sub(1, std::memory_order_release);
    }

    std::atomic<TraceRecorder*> recorder{nullptr};
    std::atomic<std::uint32_t> task{kBaseCycle};
    std::atomic<std::uint32_t> users{0}; // threads between the two loads of with() and its end
};

inline constexpr std::size_t kMaxTraces = 4;

} // namespace takt::engine
