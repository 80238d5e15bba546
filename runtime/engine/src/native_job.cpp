#include "native_job.h"

#include <cstring>
#include <exception>
#include <mutex>
#include <utility>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "takt/engine/vm_runner.h"

namespace takt::engine {
namespace {

// The compile thread's niceness: below every thread of takt's own, above nothing.
constexpr int kCompileNice = 10;

// Called first on the compile thread: see native_job.h for why each.
void becomeBackgroundThread() noexcept {
    pthread_setname_np(pthread_self(), "takt-compile");
    const sched_param normal{};
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);
    // Linux applies a niceness to the thread whose id it is given (not to the whole process).
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kCompileNice);
}

// Starts `body` on a new thread that has every signal blocked from its first instruction: the
// mask is inherited from the creating thread, so it is blocked around the creation.
std::thread startWithSignalsBlocked(std::function<void()> body) {
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    std::thread thread;
    try {
        thread = std::thread(std::move(body));
    } catch (...) {
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        throw;
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return thread;
}

struct Hook {
    std::mutex mutex;
    NativeJob::BeforeCompile before;
};
Hook& hook() {
    static Hook h;
    return h;
}

void runHook(const std::atomic<bool>& cancel) {
    NativeJob::BeforeCompile before;
    {
        const std::lock_guard<std::mutex> lock(hook().mutex);
        before = hook().before;
    }
    if (before) {
        before(cancel);
    }
}

} // namespace

void NativeJob::setBeforeCompileForTests(BeforeCompile before) {
    const std::lock_guard<std::mutex> lock(hook().mutex);
    hook().before = std::move(before);
}

NativeJob::NativeJob(std::shared_ptr<const bytecode::Module> module, std::span<const native::DirectFb> directFbs)
    : module_(std::move(module)), directFbs_(directFbs.begin(), directFbs.end()) {
    for (native::DirectFb& fb : directFbs_) {
        if (fb.layout == nullptr || fb.layoutBytes == 0) {
            continue;
        }
        auto copy =
            std::make_unique<std::uint64_t[]>((fb.layoutBytes + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
        std::memcpy(copy.get(), fb.layout, fb.layoutBytes);
        fb.layout = copy.get();
        layouts_.push_back(std::move(copy));
    }
}

std::shared_ptr<NativeJob> NativeJob::start(std::shared_ptr<const bytecode::Module> module,
                                            std::span<const native::DirectFb> directFbs, Listener onDone) {
    std::shared_ptr<NativeJob> job(new NativeJob(std::move(module), directFbs));
    job->onDone_ = std::move(onDone);
    // The thread gets the job's address, not a reference count: the job's destructor joins it.
    NativeJob* self = job.get();
    job->thread_ = startWithSignalsBlocked([self] {
        becomeBackgroundThread();
        runHook(self->cancel_);
        self->compile();
        // A program replaced while its code was being made is not reported as ready.
        if (self->onDone_ && !self->result_.cancelled && !self->cancel_.load(std::memory_order_relaxed)) {
            try {
                self->onDone_(*self);
            } catch (...) { // a listener's failure (a log that cannot write) loses only its line
            }
        }
    });
    return job;
}

std::shared_ptr<NativeJob> NativeJob::run(std::shared_ptr<const bytecode::Module> module,
                                          std::span<const native::DirectFb> directFbs) {
    std::shared_ptr<NativeJob> job(new NativeJob(std::move(module), directFbs));
    job->compile();
    return job;
}

NativeJob::~NativeJob() {
    cancel();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void NativeJob::compile() noexcept {
    try {
        result_ = native::compile(*module_, directFbs_, {}, &cancel_);
        if (result_.code == nullptr) {
            fallback_ = nativeFallbackStatus(*module_, result_);
        }
    } catch (const std::exception& e) { // native::compile does not throw; an allocation may
        result_ = native::CompileResult{};
        result_.error = e.what();
        fallback_ = "interpreter (native: " + result_.error + ")";
    } catch (...) {
        result_ = native::CompileResult{};
        result_.error = "the compile failed";
        fallback_ = "interpreter (native: " + result_.error + ")";
    }
    done_.store(true, std::memory_order_release);
}

} // namespace takt::engine
