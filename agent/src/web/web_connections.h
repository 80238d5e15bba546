#pragma once
// The web server's connections and what they may hold: a cap on open connections in all and per
// client address (below the descriptor budget, docs/web.md), which connection gives way to a
// newcomer at the cap, and a budget for the memory large request bodies take. Thread-safe: the
// server's threads admit, update and remove connections concurrently.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace takt::agent::web {

// Open web connections at once, and from one client address. The service's LimitNOFILE of 1,024
// leaves the rest to the control endpoint, drivers, RETAIN slots and the audit log.
constexpr std::size_t kMaxConnections = 256;
constexpr std::size_t kMaxPerAddress = 64;
// Bytes of request bodies above kSmallBody held at once, over all connections (a reload's
// base64 program.stbc is at most 8 MiB): two reloads at once, a third waits (503).
constexpr std::size_t kBodyBudget = std::size_t{16} << 20;

struct ConnectionLimits {
    std::size_t total = kMaxConnections;
    std::size_t perAddress = kMaxPerAddress;
};

class ConnectionTable {
public:
    // Waiting: no byte of a request yet (kept alive, or just accepted). Reading: a request is
    // coming in. Busy: a whole request is being answered; never evicted, so a client that sent its
    // request is answered.
    enum class State : std::uint8_t { Waiting, Reading, Busy };

    using Limits = ConnectionLimits;
    explicit ConnectionTable(Limits limits = {}) : limits_(limits) {}

    struct Admission {
        std::optional<std::uint64_t> id;            // nullopt: refused, every connection is busy
        std::vector<std::function<void()>> evicted; // to call (outside the table) to close them
    };
    // A newcomer from `address`, closed by `close` if it is evicted later. At a cap it takes the
    // place of the connection waiting longest for a request (an idle keep-alive first), else of
    // the one longest reading a request (a slow or stalled sender); if all are busy it is refused.
    Admission admit(const std::string& address, std::function<void()> close);
    void set(std::uint64_t id, State state);
    void remove(std::uint64_t id);
    [[nodiscard]] std::size_t size() const;

private:
    struct Entry {
        std::string address;
        State state = State::Waiting;
        std::chrono::steady_clock::time_point since;
        std::function<void()> close;
    };
    // The entry to give way to a newcomer, among all or one address's.
    std::map<std::uint64_t, Entry>::iterator victim(const std::string* address);

    Limits limits_;
    mutable std::mutex mutex_;
    std::map<std::uint64_t, Entry> entries_;
    std::map<std::string, std::size_t> perAddress_;
    std::uint64_t next_ = 1;
};

// Places for requests waiting on the control service, over all connections. A place is held by
// a Slot and given back when the Slot goes, whatever ends the wait: the answer, the timeout, or
// a handler that threw and took its connection with it (a count taken and given back by hand
// leaked there, and after as many leaks as places every call was refused).
class CallSlots {
public:
    class Slot {
    public:
        Slot(Slot&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)) {}
        Slot& operator=(Slot&& other) noexcept {
            if (this != &other) {
                release();
                owner_ = std::exchange(other.owner_, nullptr);
            }
            return *this;
        }
        Slot(const Slot&) = delete;
        Slot& operator=(const Slot&) = delete;
        ~Slot() { release(); }

    private:
        friend class CallSlots;
        explicit Slot(CallSlots* owner) : owner_(owner) {}
        void release() {
            if (owner_ != nullptr) {
                owner_->used_.fetch_sub(1, std::memory_order_relaxed);
                owner_ = nullptr;
            }
        }
        CallSlots* owner_;
    };

    explicit CallSlots(int places) : places_(places) {}
    CallSlots(const CallSlots&) = delete;
    CallSlots& operator=(const CallSlots&) = delete;
    // A place, or nullopt when all are held. The CallSlots must outlive its Slots.
    [[nodiscard]] std::optional<Slot> take() {
        if (used_.fetch_add(1, std::memory_order_relaxed) >= places_) {
            used_.fetch_sub(1, std::memory_order_relaxed);
            return std::nullopt;
        }
        return Slot(this);
    }
    [[nodiscard]] int inUse() const { return used_.load(std::memory_order_relaxed); }

private:
    int places_;
    std::atomic<int> used_{0};
};

// Bytes reserved by large bodies being read; a reservation that does not fit is refused.
class BodyBudget {
public:
    explicit BodyBudget(std::size_t total = kBodyBudget) : total_(total) {}
    bool reserve(std::size_t bytes);
    void release(std::size_t bytes);

private:
    std::mutex mutex_;
    std::size_t total_;
    std::size_t used_ = 0;
};

} // namespace takt::agent::web
