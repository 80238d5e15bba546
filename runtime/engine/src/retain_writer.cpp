// The retain writer thread and the scan thread's hand-off to it (retain.h).
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "takt/engine/retain.h"

namespace takt::engine {

RetainWriter::RetainWriter(RetainStore& store, RetainLayout layout, std::int64_t saveIntervalMs)
    : store_(store), layout_(std::move(layout)), intervalMs_(std::max<std::int64_t>(1, saveIntervalMs)) {
    for (auto& b : buffers_) {
        b.assign(layout_.payloadSize(), 0);
    }
    lastSaved_.assign(layout_.payloadSize(), 0);
}

RetainWriter::~RetainWriter() {
    stop();
}

void RetainWriter::start() {
    const std::lock_guard lock(mutex_);
    if (thread_.joinable()) {
        return;
    }
    stopping_ = false;
    thread_ = std::thread([this] { run(); });
}

void RetainWriter::submit(const std::uint8_t* image) noexcept {
    layout_.capture(image, buffers_[scanBuffer_]);
    // Publish the filled buffer and take whichever the exchange returns (the previous
    // unconsumed snapshot or the one the writer released): never the writer's own.
    const std::uint32_t previous = middle_.exchange(scanBuffer_ | kFresh, std::memory_order_acq_rel);
    scanBuffer_ = previous & 3U;
}

bool RetainWriter::saveLatest(std::string& error) {
    const std::lock_guard saveLock(saveMutex_);
    if ((middle_.load(std::memory_order_acquire) & kFresh) != 0) {
        const std::uint32_t taken = middle_.exchange(writerBuffer_, std::memory_order_acq_rel);
        writerBuffer_ = taken & 3U;
        haveSnapshot_ = true;
    }
    if (!haveSnapshot_ || (haveSaved_ && buffers_[writerBuffer_] == lastSaved_)) {
        return true; // nothing new
    }
    const bool ok = store_.save(layout_, buffers_[writerBuffer_], error);
    const std::lock_guard lock(mutex_);
    if (ok) {
        lastSaved_ = buffers_[writerBuffer_]; // same size: no allocation
        haveSaved_ = true;
        ++stats_.saves;
        stats_.lastSequence = store_.lastSequence();
        stats_.lastError.clear();
    } else {
        ++stats_.failures;
        stats_.lastError = error;
    }
    return ok;
}

void RetainWriter::run() {
    // Whatever class the creating thread had (SCHED_FIFO in a real-time `takt run`), saves
    // must never compete with the scan: normal class, lowered priority.
    sched_param param{};
    param.sched_priority = 0;
    (void)pthread_setschedparam(pthread_self(), SCHED_OTHER, &param);
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);

    std::unique_lock lock(mutex_);
    while (true) {
        wake_.wait_for(lock, std::chrono::milliseconds(intervalMs_),
                       [&] { return stopping_ || flushRequests_ != flushesDone_; });
        const bool stopNow = stopping_;
        const std::uint64_t requested = flushRequests_;
        lock.unlock();
        std::string error;
        const bool ok = saveLatest(error);
        lock.lock();
        if (requested != flushesDone_) {
            flushesDone_ = requested;
            lastFlushOk_ = ok;
            lastFlushError_ = error;
            done_.notify_all();
        }
        if (stopNow && flushRequests_ == flushesDone_) {
            break;
        }
    }
}

bool RetainWriter::flush(std::string& error) {
    std::unique_lock lock(mutex_);
    if (!thread_.joinable()) {
        lock.unlock();
        return saveLatest(error);
    }
    const std::uint64_t ticket = ++flushRequests_;
    wake_.notify_all();
    done_.wait(lock, [&] { return flushesDone_ >= ticket; });
    error = lastFlushError_;
    return lastFlushOk_;
}

void RetainWriter::stop() {
    std::thread t;
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
        t = std::move(thread_);
    }
    wake_.notify_all();
    if (t.joinable()) {
        t.join(); // the loop saves once more before it exits
    }
}

RetainWriter::Stats RetainWriter::stats() const {
    const std::lock_guard lock(mutex_);
    return stats_;
}

} // namespace takt::engine
