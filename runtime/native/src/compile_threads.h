#pragma once
// The threads a program's compile runs its POU modules on side by side (program_compiler.cpp):
// how many, and the helper threads beside the calling one.
#include <cstddef>
#include <functional>

#include <pthread.h>

namespace takt::native {

// At most this many threads compile a program's POUs: each holds an LLVM context and a target
// machine, and the link after them runs on one thread whatever their number.
inline constexpr unsigned kMaxCompileThreads = 8;

// The threads a compile of `pous` POU modules uses: `asked`, or (0) one per CPU the calling
// thread may run on (takt's other CPUs when the scan has its own, docs/configuration.md
// cpu_affinity) and its cgroup's CPU quota allows (cpu_quota.h); at least one, at most one per
// POU and kMaxCompileThreads.
[[nodiscard]] unsigned compileThreads(unsigned asked, std::size_t pous) noexcept;

// A thread running `work` beside the compile's own: SCHED_OTHER whatever its creator's policy (an
// online change may compile on a real-time thread), its creator's niceness (the background
// compile's: 10 nicer than takt, native_job.cpp), every signal blocked, named takt-compile, on a
// stack of its own unmapped at the join (glibc keeps its threads' stacks for reuse, and under
// [runtime] lock_memory they would stay locked in RAM).
class CompileHelper {
public:
    CompileHelper() = default;
    ~CompileHelper() { join(); }
    CompileHelper(const CompileHelper&) = delete;
    CompileHelper& operator=(const CompileHelper&) = delete;

    // False when no thread could be had (no memory, the process's thread limit): the caller's
    // threads do its share. `work` must not throw and must outlive the thread.
    bool start(const std::function<void()>& work) noexcept;
    void join() noexcept;

private:
    static void* main(void* work) noexcept;

    pthread_t thread_{};
    void* stack_ = nullptr;
    bool running_ = false;
};

} // namespace takt::native
