#include "compile_threads.h"

#include <algorithm>

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include "takt/native/background_thread.h"
#include "takt/native/cpu_quota.h"

namespace takt::native {

namespace {

// The stack glibc would give a thread (RLIMIT_STACK's usual 8 MiB): LLVM's passes recurse on
// the code they optimise.
constexpr std::size_t kStackBytes = std::size_t{8} << 20;

} // namespace

unsigned compileThreads(unsigned asked, std::size_t pous) noexcept {
    unsigned threads = asked;
    if (threads == 0) {
        cpu_set_t cpus;
        CPU_ZERO(&cpus);
        threads = ::sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? static_cast<unsigned>(CPU_COUNT(&cpus)) : 1U;
        try {
            if (const std::optional<unsigned> quota = cgroupCpus()) {
                threads = std::min(threads, *quota);
            }
        } catch (...) { // NOLINT(bugprone-empty-catch): no memory to read the files: the CPUs stand
        }
    }
    const auto most = static_cast<unsigned>(std::min<std::size_t>(kMaxCompileThreads, std::max<std::size_t>(pous, 1)));
    return std::clamp(threads, 1U, most);
}

bool CompileHelper::start(const std::function<void()>& work) noexcept {
    if (running_) {
        return false;
    }
    void* stack = ::mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) {
        return false;
    }
    // A guard page at the bottom: an overflow faults rather than writing below the stack.
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    (void)::mprotect(stack, page, PROT_NONE);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, kStackBytes);
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): pthread's argument is void*; main reads it as const
    auto* arg = const_cast<std::function<void()>*>(&work);
    const int error = startBackgroundThread(thread_, attr, &CompileHelper::main, arg);
    pthread_attr_destroy(&attr);
    if (error != 0) {
        ::munmap(stack, kStackBytes);
        return false;
    }
    stack_ = stack;
    running_ = true;
    return true;
}

void CompileHelper::join() noexcept {
    if (!running_) {
        return;
    }
    pthread_join(thread_, nullptr);
    ::munmap(stack_, kStackBytes);
    stack_ = nullptr;
    running_ = false;
}

void* CompileHelper::main(void* work) noexcept {
    pthread_setname_np(pthread_self(), "takt-compile");
    (*static_cast<const std::function<void()>*>(work))();
    return nullptr;
}

} // namespace takt::native
