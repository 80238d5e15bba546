#pragma once
// The threads of work beside the scan (the native tier's compile, native_job.cpp, and its helper
// threads, compile_threads.cpp): made the one way that keeps them out of the scan's way.
#include <pthread.h>
#include <sched.h>
#include <signal.h>

namespace takt::native {

// pthread_create with `attr` (initialised by the caller, which may have given it a stack) made
// SCHED_OTHER at priority 0 whatever the creator's policy: inherited, a real-time creator's
// (an online change runs on the control thread, a test on a SCHED_FIFO one) would put the work
// above the scan threads' peers. Every signal is blocked from the thread's first instruction:
// the mask is inherited from the creating thread, so it is blocked around the creation.
// pthread_create's result.
[[nodiscard]] inline int startBackgroundThread(pthread_t& thread, pthread_attr_t& attr, void* (*main)(void*),
                                               void* arg) noexcept {
    pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
    const sched_param normal{};
    pthread_attr_setschedparam(&attr, &normal);
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    const int error = pthread_create(&thread, &attr, main, arg);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return error;
}

} // namespace takt::native
