#pragma once
// A bounded lock-free single-producer single-consumer ring (ARCHITECTURE.md "Threads"): the
// control thread pushes commands, the scan thread pops them at the cycle boundary. Neither side
// ever waits for the other: a full queue is the producer's problem (it answers "busy"), an empty
// one costs the consumer two atomic loads.
//
// The head (consumer) and tail (producer) indices live on separate cache lines so the two
// threads do not bounce one line between cores every cycle.
#include <array>
#include <atomic>
#include <cstddef>
#include <type_traits>

namespace takt::engine {

template <typename T, std::size_t N> class SpscQueue {
    static_assert(N >= 2 && (N & (N - 1)) == 0, "capacity must be a power of two");
    static_assert(std::is_trivially_copyable_v<T>, "slots are copied without constructors");

public:
    static constexpr std::size_t kCapacity = N;

    // Producer only. False when full (nothing is written then).
    bool push(const T& value) noexcept {
        const std::size_t tail = tail_.load(std::memory_order_relaxed);
        if (tail - head_.load(std::memory_order_acquire) == N) {
            return false;
        }
        slots_[tail & (N - 1)] = value;
        tail_.store(tail + 1, std::memory_order_release);
        return true;
    }

    // Consumer only: the oldest element, or nullptr when empty. It stays queued (and valid)
    // until pop(), so a command that cannot be applied yet can wait at the head.
    [[nodiscard]] const T* front() const noexcept {
        const std::size_t head = head_.load(std::memory_order_relaxed);
        if (head == tail_.load(std::memory_order_acquire)) {
            return nullptr;
        }
        return &slots_[head & (N - 1)];
    }

    // Consumer only: drops the element front() returned.
    void pop() noexcept { head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

    // Any thread; a momentary value, 0..N. The head is read first: it never passes the tail, so
    // a tail read after it is at least as large (reading the tail first, a pop in between made
    // the difference wrap round to a huge size). A third thread may see a stale head against a
    // newer tail, hence the clamp.
    [[nodiscard]] std::size_t size() const noexcept {
        const std::size_t head = head_.load(std::memory_order_acquire);
        const std::size_t used = tail_.load(std::memory_order_acquire) - head;
        return used < N ? used : N;
    }

private:
    alignas(64) std::atomic<std::size_t> head_{0};
    alignas(64) std::atomic<std::size_t> tail_{0};
    alignas(64) std::array<T, N> slots_{};
};

} // namespace takt::engine
