// The trace's ring (trace_recorder.h): what a capture keeps before and after its trigger, the
// triggers on a BOOL's edge and on a number crossing a level, an online change that keeps or
// ends it, and the slot's hand-over between the sampling thread and the control thread.
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "takt/engine/trace_recorder.h"

namespace takt::engine {
namespace {

const auto* const kModule = reinterpret_cast<const bytecode::Module*>(0x1000);
const auto* const kOther = reinterpret_cast<const bytecode::Module*>(0x2000);

// An image of two channels: a DINT at 0 and a BOOL at 4.
struct Image {
    std::vector<std::uint8_t> data = std::vector<std::uint8_t>(8, 0);
    void set(std::int32_t n, bool b) {
        std::memcpy(data.data(), &n, 4);
        data[4] = b ? 1 : 0;
    }
    std::span<std::uint8_t> operator()(ImageArea) { return {data.data(), data.size()}; }
};

TraceLayout layout(const bytecode::Module* m = kModule) {
    TraceLayout l;
    l.module = m;
    l.count = 2;
    l.ranges[0] = ImageRange{ImageArea::Data, false, 0, 0, 4};
    l.ranges[1] = ImageRange{ImageArea::Data, false, 0, 4, 1};
    return l;
}

std::int32_t dintAt(const TraceRecorder& r, std::size_t i) {
    std::int32_t n = 0;
    std::memcpy(&n, r.at(i).values + r.offset(0), 4);
    return n;
}

// Samples n = from..to (DINT n, BOOL n odd) with cycle n.
void run(TraceRecorder& r, Image& img, std::int32_t from, std::int32_t to, const bytecode::Module* m = kModule) {
    for (std::int32_t n = from; n <= to; ++n) {
        img.set(n, (n & 1) != 0);
        r.sample(m, static_cast<std::uint64_t>(n), n * 1000, img);
    }
}

TEST(TraceRecorder, WithoutATriggerTheFirstPostSamplesAreKept) {
    TraceRecorder r(layout(), TraceTrigger{}, 0, 5);
    Image img;
    run(r, img, 1, 3);
    EXPECT_EQ(r.state(), TraceState::Triggered);
    run(r, img, 4, 9);
    EXPECT_EQ(r.state(), TraceState::Done);
    ASSERT_EQ(r.kept(), 5u);
    EXPECT_EQ(r.triggerAt(), 0u);
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(dintAt(r, i), static_cast<std::int32_t>(i + 1));
        EXPECT_EQ(r.at(i).cycle, i + 1);
        EXPECT_EQ(r.at(i).values[r.offset(1)], (i + 1) & 1u);
    }
    EXPECT_EQ(r.taken(), 5u); // nothing is taken once done
}

TEST(TraceRecorder, ANumberCrossingTheLevelKeepsPreSamplesBeforeAndPostFromIt) {
    TraceTrigger t;
    t.edge = TraceTrigger::Edge::Rising;
    t.channel = 0;
    t.number = TraceNumber::Signed;
    t.level = 100;
    TraceRecorder r(layout(), t, 10, 20);
    Image img;
    run(r, img, 1, 99);
    EXPECT_EQ(r.state(), TraceState::Armed);
    run(r, img, 100, 118);
    EXPECT_EQ(r.state(), TraceState::Triggered);
    run(r, img, 119, 500);
    ASSERT_EQ(r.state(), TraceState::Done);
    ASSERT_EQ(r.kept(), 30u);
    ASSERT_EQ(r.triggerAt(), 10u);
    for (std::size_t i = 0; i < 30; ++i) {
        EXPECT_EQ(dintAt(r, i), static_cast<std::int32_t>(90 + i)) << i;
    }
}

TEST(TraceRecorder, ATriggerBeforeThePreSamplesFilledKeepsWhatCameBefore) {
    TraceTrigger t;
    t.edge = TraceTrigger::Edge::Rising;
    t.number = TraceNumber::Signed;
    t.level = 3;
    TraceRecorder r(layout(), t, 10, 4);
    Image img;
    run(r, img, 1, 10);
    ASSERT_EQ(r.state(), TraceState::Done);
    ASSERT_EQ(r.kept(), 6u); // 1, 2 before; 3..6 from the trigger
    EXPECT_EQ(r.triggerAt(), 2u);
    EXPECT_EQ(dintAt(r, 0), 1);
    EXPECT_EQ(dintAt(r, 5), 6);
}

TEST(TraceRecorder, ABoolFallingEdgeTriggersOnTheFirstFalseAfterATrue) {
    TraceTrigger t;
    t.edge = TraceTrigger::Edge::Falling;
    t.channel = 1;
    t.number = TraceNumber::Bool;
    TraceRecorder r(layout(), t, 1, 2);
    Image img;
    img.set(0, false);
    r.sample(kModule, 1, 0, img); // FALSE first: no edge without a TRUE before it
    EXPECT_EQ(r.state(), TraceState::Armed);
    run(r, img, 7, 8); // 7 odd (TRUE), 8 even (FALSE): the edge
    EXPECT_EQ(r.state(), TraceState::Triggered);
    run(r, img, 9, 9);
    ASSERT_EQ(r.state(), TraceState::Done);
    ASSERT_EQ(r.kept(), 3u);
    EXPECT_EQ(dintAt(r, r.triggerAt()), 8);
}

TEST(TraceRecorder, SignedNarrowAndFloatValuesAreComparedAsNumbers) {
    TraceLayout l;
    l.module = kModule;
    l.count = 2;
    l.ranges[0] = ImageRange{ImageArea::Data, false, 0, 0, 2}; // INT
    l.ranges[1] = ImageRange{ImageArea::Data, false, 0, 4, 4}; // REAL
    TraceTrigger below;
    below.edge = TraceTrigger::Edge::Falling;
    below.number = TraceNumber::Signed;
    below.level = -5;
    TraceTrigger real;
    real.edge = TraceTrigger::Edge::Both;
    real.channel = 1;
    real.number = TraceNumber::Float;
    real.level = 2.5;
    TraceRecorder a(l, below, 0, 1);
    TraceRecorder b(l, real, 0, 1);
    std::vector<std::uint8_t> data(8, 0);
    auto image = [&](ImageArea) { return std::span<std::uint8_t>(data.data(), data.size()); };
    for (const std::int16_t v : {std::int16_t{3}, std::int16_t{-4}, std::int16_t{-5}, std::int16_t{-6}}) {
        std::memcpy(data.data(), &v, 2);
        const float f = static_cast<float>(-v) / 2.0f; // 3 -> -1.5, -4 -> 2, -5 -> 2.5, -6 -> 3
        std::memcpy(data.data() + 4, &f, 4);
        a.sample(kModule, 0, 0, image);
        b.sample(kModule, 0, 0, image);
        if (v == -5) {
            EXPECT_EQ(a.state(), TraceState::Armed) << "-5 is not below -5";
            EXPECT_EQ(b.state(), TraceState::Done) << "2.5 reaches 2.5";
        }
    }
    EXPECT_EQ(a.state(), TraceState::Done);
}

TEST(TraceRecorder, NothingIsSampledUnderAnotherProgram) {
    TraceRecorder r(layout(), TraceTrigger{}, 0, 3);
    Image img;
    run(r, img, 1, 5, kOther);
    EXPECT_EQ(r.taken(), 0u);
}

TEST(TraceRecorder, AnOnlineChangeThatKeepsTheVariablesKeepsTheCaptureGoing) {
    TraceRecorder r(layout(), TraceTrigger{}, 0, 6);
    Image img;
    run(r, img, 1, 3);
    // The new program puts the DINT at 4 and the BOOL at 0.
    TraceLayout moved = layout(kOther);
    moved.ranges[0].offset = 4;
    moved.ranges[1].offset = 0;
    r.follow(moved);
    for (std::int32_t n = 4; n <= 6; ++n) {
        std::memcpy(img.data.data() + 4, &n, 4);
        img.data[0] = 1;
        r.sample(kOther, static_cast<std::uint64_t>(n), 0, img);
    }
    ASSERT_EQ(r.state(), TraceState::Done);
    EXPECT_EQ(r.end(), TraceEnd::Complete);
    for (std::size_t i = 0; i < 6; ++i) {
        EXPECT_EQ(dintAt(r, i), static_cast<std::int32_t>(i + 1));
    }
}

TEST(TraceRecorder, AnOnlineChangeThatLosesAVariableEndsItWithWhatItHad) {
    TraceTrigger t;
    t.edge = TraceTrigger::Edge::Rising;
    t.number = TraceNumber::Signed;
    t.level = 1000;
    TraceRecorder r(layout(), t, 4, 4);
    Image img;
    run(r, img, 1, 20);
    r.follow(TraceLayout{});
    EXPECT_EQ(r.state(), TraceState::Done);
    EXPECT_EQ(r.end(), TraceEnd::ProgramChanged);
    ASSERT_EQ(r.kept(), 8u); // the ring's latest, never triggered
    EXPECT_EQ(r.triggerAt(), r.kept());
    EXPECT_EQ(dintAt(r, 0), 13);
    EXPECT_EQ(dintAt(r, 7), 20);
}

TEST(TraceRecorder, TheSizeLimitsAreChecked) {
    std::vector<ImageRange> ranges(32, ImageRange{ImageArea::Data, false, 0, 0, 8});
    EXPECT_TRUE(TraceRecorder::fits(ranges, 100'000));
    EXPECT_FALSE(TraceRecorder::fits(ranges, 1'000'000)); // 272 MB
    EXPECT_FALSE(TraceRecorder::fits(std::span(ranges).first(1), TraceRecorder::kMaxSamples + 1));
}

// The control thread detaches while the sampling thread samples: detach returns only when the
// sampler no longer touches the recorder, which is then freed (ASan sees a use after free if not).
TEST(TraceSlot, DetachWaitsForTheSamplerToLetGo) {
    TraceSlot slot;
    std::atomic<bool> stop{false};
    std::vector<std::uint8_t> data(8, 0);
    std::thread sampler([&] {
        for (std::uint64_t c = 0; !stop.load(); ++c) {
            slot.with(3, [&](TraceRecorder& r) {
                r.sample(kModule, c, 0, [&](ImageArea) { return std::span<std::uint8_t>(data.data(), 8); });
            });
        }
    });
    for (int round = 0; round < 2000; ++round) {
        auto r = std::make_unique<TraceRecorder>(layout(), TraceTrigger{}, 0, 1000);
        slot.attach(r.get(), 3);
        std::this_thread::yield();
        slot.detach();
        r.reset();
    }
    // A recorder of another task is never sampled.
    auto other = std::make_unique<TraceRecorder>(layout(), TraceTrigger{}, 0, 10);
    slot.attach(other.get(), 4);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    slot.detach();
    stop = true;
    sampler.join();
    EXPECT_EQ(other->taken(), 0u);
}

} // namespace
} // namespace takt::engine
