#pragma once
// A single-writer seqlock for small trivially copyable values: the scan thread publishes, any
// thread reads a consistent copy without ever making the writer wait. The payload is stored
// as relaxed atomic words so concurrent reads are well-defined; a reader retries while the
// writer is inside a store.
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace takt::engine {

template <typename T> class Seqlock {
    static_assert(std::is_trivially_copyable_v<T>, "a seqlock copies bytes");

public:
    Seqlock() { store(T{}); }

    // One writer at a time.
    void store(const T& value) noexcept {
        std::array<std::uint64_t, kWords> buf{};
        std::memcpy(buf.data(), &value, sizeof(T));
        const std::uint64_t s = seq_.load(std::memory_order_relaxed);
        seq_.store(s + 1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        for (std::size_t i = 0; i < kWords; ++i) {
            words_[i].store(buf[i], std::memory_order_relaxed);
        }
        seq_.store(s + 2, std::memory_order_release);
    }

    [[nodiscard]] T load() const noexcept {
        std::array<std::uint64_t, kWords> buf{};
        for (;;) {
            const std::uint64_t s1 = seq_.load(std::memory_order_acquire);
            if ((s1 & 1u) != 0) {
                continue;
            }
            for (std::size_t i = 0; i < kWords; ++i) {
                buf[i] = words_[i].load(std::memory_order_relaxed);
            }
            std::atomic_thread_fence(std::memory_order_acquire);
            if (seq_.load(std::memory_order_relaxed) == s1) {
                break;
            }
        }
        T value{};
        std::memcpy(static_cast<void*>(&value), buf.data(), sizeof(T));
        return value;
    }

private:
    static constexpr std::size_t kWords = (sizeof(T) + 7) / 8;
    std::atomic<std::uint64_t> seq_{0};
    std::array<std::atomic<std::uint64_t>, kWords> words_{};
};

} // namespace takt::engine
