#include "web/web_connections.h"

#include <utility>

namespace takt::agent::web {

std::map<std::uint64_t, ConnectionTable::Entry>::iterator ConnectionTable::victim(const std::string* address) {
    auto best = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        const Entry& e = it->second;
        if (e.state == State::Busy || (address != nullptr && e.address != *address)) {
            continue;
        }
        if (best == entries_.end()) {
            best = it;
            continue;
        }
        const Entry& b = best->second;
        // Waiting before Reading, then the oldest in its state.
        if (e.state != b.state ? e.state == State::Waiting : e.since < b.since) {
            best = it;
        }
    }
    return best;
}

ConnectionTable::Admission ConnectionTable::admit(const std::string& address, std::function<void()> close) {
    Admission out;
    const std::lock_guard lock(mutex_);
    const auto evict = [&](std::map<std::uint64_t, Entry>::iterator it) {
        out.evicted.push_back(std::move(it->second.close));
        if (--perAddress_[it->second.address] == 0) {
            perAddress_.erase(it->second.address);
        }
        entries_.erase(it);
    };
    const auto count = perAddress_.find(address);
    if (count != perAddress_.end() && count->second >= limits_.perAddress) {
        const auto it = victim(&address);
        if (it == entries_.end()) {
            return out;
        }
        evict(it);
    }
    if (entries_.size() >= limits_.total) {
        const auto it = victim(nullptr);
        if (it == entries_.end()) {
            return out;
        }
        evict(it);
    }
    const std::uint64_t id = next_++;
    entries_.emplace(id, Entry{address, State::Waiting, std::chrono::steady_clock::now(), std::move(close)});
    ++perAddress_[address];
    out.id = id;
    return out;
}

void ConnectionTable::set(std::uint64_t id, State state) {
    const std::lock_guard lock(mutex_);
    const auto it = entries_.find(id);
    if (it != entries_.end() && it->second.state != state) {
        it->second.state = state;
        it->second.since = std::chrono::steady_clock::now();
    }
}

void ConnectionTable::remove(std::uint64_t id) {
    const std::lock_guard lock(mutex_);
    const auto it = entries_.find(id);
    if (it == entries_.end()) {
        return;
    }
    if (--perAddress_[it->second.address] == 0) {
        perAddress_.erase(it->second.address);
    }
    entries_.erase(it);
}

std::size_t ConnectionTable::size() const {
    const std::lock_guard lock(mutex_);
    return entries_.size();
}

bool BodyBudget::reserve(std::size_t bytes) {
    const std::lock_guard lock(mutex_);
    if (bytes > total_ - used_) {
        return false;
    }
    used_ += bytes;
    return true;
}

void BodyBudget::release(std::size_t bytes) {
    const std::lock_guard lock(mutex_);
    used_ -= bytes < used_ ? bytes : used_;
}

} // namespace takt::agent::web
