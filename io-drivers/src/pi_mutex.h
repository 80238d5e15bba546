#pragma once
// The lock a driver's own thread and the scan thread share for their buffer copies: a POSIX
// mutex with priority inheritance. The scan thread (SCHED_FIFO under [runtime.realtime]) may
// find it held by the driver's thread (SCHED_OTHER); a task thread of a priority between the two
// could then keep the driver's thread off the CPU and hold up the base cycle for a whole task
// body. With priority inheritance the holder runs at the waiter's priority until it lets go, so
// the base cycle waits for one buffer copy at most (docs/runtime-control.md, "No lock a lower
// priority can hold"). It meets BasicLockable and Lockable, so std::lock_guard, std::unique_lock
// and std::condition_variable_any take it.
#include <pthread.h>

namespace takt::io {

class PiMutex {
public:
    PiMutex() noexcept {
        pthread_mutexattr_t attr;
        pthread_mutexattr_init(&attr);
        pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
        pthread_mutex_init(&mutex_, &attr);
        pthread_mutexattr_destroy(&attr);
    }
    ~PiMutex() { pthread_mutex_destroy(&mutex_); }
    PiMutex(const PiMutex&) = delete;
    PiMutex& operator=(const PiMutex&) = delete;

    void lock() noexcept { pthread_mutex_lock(&mutex_); }
    bool try_lock() noexcept { return pthread_mutex_trylock(&mutex_) == 0; } // NOLINT(readability-identifier-naming)
    void unlock() noexcept { pthread_mutex_unlock(&mutex_); }

private:
    pthread_mutex_t mutex_{};
};

} // namespace takt::io
