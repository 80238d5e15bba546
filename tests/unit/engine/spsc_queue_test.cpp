// The control hand-off ring: bounded, FIFO, lossless between one producer and one consumer
// thread, and a queued element stays put until the consumer pops it.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <gtest/gtest.h>

#include "takt/engine/spsc_queue.h"

namespace takt::engine {
namespace {

struct Item {
    std::uint64_t seq = 0;
    std::uint64_t check = 0; // a function of seq: a torn or stale slot shows as a mismatch
};

constexpr std::uint64_t checkOf(std::uint64_t seq) {
    return seq * 0x9E3779B97F4A7C15ull ^ 0xA5A5A5A5A5A5A5A5ull;
}

TEST(SpscQueue, EmptyFullAndCapacity) {
    SpscQueue<Item, 8> q;
    EXPECT_EQ(decltype(q)::kCapacity, 8u);
    EXPECT_EQ(q.front(), nullptr);
    EXPECT_EQ(q.size(), 0u);
    for (std::uint64_t i = 0; i < 8; ++i) {
        EXPECT_TRUE(q.push(Item{i, checkOf(i)})) << i;
        EXPECT_EQ(q.size(), i + 1);
    }
    // Full: the push is refused and nothing is overwritten.
    EXPECT_FALSE(q.push(Item{99, checkOf(99)}));
    EXPECT_EQ(q.size(), 8u);
    ASSERT_NE(q.front(), nullptr);
    EXPECT_EQ(q.front()->seq, 0u);
    q.pop();
    EXPECT_EQ(q.size(), 7u);
    EXPECT_TRUE(q.push(Item{8, checkOf(8)})); // one slot again, reused at the ring's start
    EXPECT_FALSE(q.push(Item{100, checkOf(100)}));
    for (std::uint64_t i = 1; i <= 8; ++i) {
        const Item* f = q.front();
        ASSERT_NE(f, nullptr);
        EXPECT_EQ(f->seq, i);
        q.pop();
    }
    EXPECT_EQ(q.front(), nullptr);
    EXPECT_EQ(q.size(), 0u);
}

TEST(SpscQueue, FrontStaysValidUntilPopWhileTheProducerFillsTheRest) {
    SpscQueue<Item, 4> q;
    ASSERT_TRUE(q.push(Item{1, checkOf(1)}));
    const Item* head = q.front();
    ASSERT_NE(head, nullptr);
    // The producer fills every other slot and then keeps trying: the held head is not reused.
    std::thread producer([&q] {
        std::uint64_t next = 2;
        for (int attempts = 0; attempts < 10'000; ++attempts) {
            if (q.push(Item{next, checkOf(next)})) {
                ++next;
            }
        }
    });
    producer.join();
    EXPECT_EQ(q.size(), 4u);
    EXPECT_EQ(q.front(), head);
    EXPECT_EQ(head->seq, 1u);
    EXPECT_EQ(head->check, checkOf(1));
    q.pop();
    ASSERT_NE(q.front(), nullptr);
    EXPECT_EQ(q.front()->seq, 2u);
}

TEST(SpscQueue, AMillionItemsArriveInOrderWithoutLossBetweenTwoThreads) {
    constexpr std::uint64_t kItems = 1'000'000;
    SpscQueue<Item, 64> q;
    std::atomic<bool> sizeOutOfRange{false};
    std::thread producer([&] {
        for (std::uint64_t i = 0; i < kItems;) {
            if (q.push(Item{i, checkOf(i)})) {
                ++i;
            } else {
                std::this_thread::yield();
            }
            // size() from the producer side: a momentary value, but never beyond the capacity.
            if (q.size() > 64) {
                sizeOutOfRange = true;
            }
        }
    });
    std::uint64_t expected = 0;
    std::uint64_t mismatches = 0;
    while (expected < kItems) {
        const Item* f = q.front();
        if (f == nullptr) {
            std::this_thread::yield();
            continue;
        }
        if (f->seq != expected || f->check != checkOf(expected)) {
            ++mismatches;
        }
        q.pop();
        ++expected;
        if (q.size() > 64) {
            sizeOutOfRange = true;
        }
    }
    producer.join();
    EXPECT_EQ(mismatches, 0u);
    EXPECT_EQ(expected, kItems);
    EXPECT_EQ(q.front(), nullptr);
    EXPECT_FALSE(sizeOutOfRange.load());
}

TEST(SpscQueue, SizeSeenFromAThirdThreadNeverExceedsTheCapacity) {
    // size() is documented for any thread; a monitor (queueDepth) reads it while both ends move.
    // Half a second of traffic: a wrapped difference showed within a few thousand items.
    SpscQueue<Item, 8> q;
    std::atomic<bool> done{false};
    std::atomic<bool> producing{true};
    std::atomic<std::uint64_t> worst{0};
    std::atomic<std::uint64_t> samples{0};
    std::thread monitor([&] {
        while (!done.load()) {
            const std::size_t s = q.size();
            if (s > worst.load()) {
                worst = s;
            }
            samples.fetch_add(1);
        }
    });
    std::thread producer([&] {
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
        for (std::uint64_t i = 0; std::chrono::steady_clock::now() < until;) {
            if (q.push(Item{i, checkOf(i)})) {
                ++i;
            }
        }
        producing = false;
    });
    while (producing.load() || q.front() != nullptr) {
        if (q.front() != nullptr) {
            q.pop();
        }
    }
    producer.join();
    done = true;
    monitor.join();
    EXPECT_GT(samples.load(), 0u);
    EXPECT_LE(worst.load(), 8u);
}

} // namespace
} // namespace takt::engine
