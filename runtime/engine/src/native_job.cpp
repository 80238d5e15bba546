#include "native_job.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <utility>

#include <sys/resource.h>
#include <unistd.h>

#include "takt/engine/vm_runner.h"
#include "takt/native/background_thread.h"

namespace takt::engine {
namespace {

// How much nicer than the process the compile thread runs (capped at the lowest priority, 19).
constexpr int kCompileNicer = 10;
constexpr int kNicest = 19;

// The process's niceness when the first job starts (the main thread's; a thread's own niceness
// is what getpriority reads for the calling thread's id on Linux).
int processNice() noexcept {
    errno = 0;
    const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(getpid()));
    return errno == 0 ? nice : 0;
}

// TAKT_NATIVE_THREADS=N: the compile's POUs on N threads rather than one per CPU takt's other
// threads may run on (native::compile), for measuring the compile side by side
// (docs/performance.md). Anything but a number from 1 to 64 is ignored.
unsigned threadsAsked() noexcept {
    const char* text = std::getenv("TAKT_NATIVE_THREADS");
    if (text == nullptr) {
        return 0;
    }
    char* end = nullptr;
    const long n = std::strtol(text, &end, 10);
    return end != text && *end == '\0' && n >= 1 && n <= 64 ? static_cast<unsigned>(n) : 0;
}

struct Hook {
    std::mutex mutex;
    NativeJob::BeforeCompile before;
    NativeJob::AfterPart afterPart;
};
Hook& hook() {
    static Hook h;
    return h;
}

void runHook(NativeJob::BeforeCompile Hook::*which, const std::atomic<bool>& cancel) noexcept {
    try {
        NativeJob::BeforeCompile run;
        {
            const std::lock_guard<std::mutex> lock(hook().mutex);
            run = hook().*which;
        }
        if (run) {
            run(cancel);
        }
    } catch (...) { // a test's hook: the compile goes on
    }
}

} // namespace

void NativeJob::setBeforeCompileForTests(BeforeCompile before) {
    const std::lock_guard<std::mutex> lock(hook().mutex);
    hook().before = std::move(before);
}

void NativeJob::setAfterPartForTests(AfterPart after) {
    const std::lock_guard<std::mutex> lock(hook().mutex);
    hook().afterPart = std::move(after);
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
    job->background_ = true;
    // The thread gets the job's address, not a reference: the job's destructor joins it.
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    const int error = native::startBackgroundThread(job->thread_, attr, &NativeJob::threadMain, job.get());
    pthread_attr_destroy(&attr);
    if (error != 0) {
        job->fail("the compile thread did not start");
    } else {
        job->started_ = true;
    }
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
    if (started_) {
        pthread_join(thread_, nullptr);
    }
}

void* NativeJob::threadMain(void* job) {
    auto& self = *static_cast<NativeJob*>(job);
    // The niceness is per thread on Linux: set here, for this thread's id.
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), std::min(kNicest, processNice() + kCompileNicer));
    pthread_setname_np(pthread_self(), "takt-compile");
    runHook(&Hook::before, self.cancel_);
    self.compile();
    // A program replaced while its code was being made is not reported as ready.
    if (self.onDone_ && !self.result_.cancelled && !self.cancelRequested()) {
        try {
            self.onDone_(self);
        } catch (...) { // a listener's failure (a log that cannot write) loses only its line
        }
    }
    return nullptr;
}

void NativeJob::fail(const char* why) noexcept {
    try {
        result_ = native::CompileResult{};
        result_.error = why;
        fallback_ = nativeFallbackStatus(*module_, result_);
    } catch (...) { // no memory for the text: the status says only that it is the interpreter
        fallback_.clear();
    }
    done_.store(true, std::memory_order_release);
}

const NativePart* NativeJob::newest() const noexcept {
    if (done() && result_.code != nullptr) {
        return &whole_;
    }
    const std::size_t n = parts_.load(std::memory_order_acquire);
    return n == 0 ? nullptr : &partList_[n - 1];
}

bool NativeJob::describe(NativePart& part, const native::CompiledModule& code) const noexcept {
    const std::size_t count = module_->pous.size();
    part.has.reset(new (std::nothrow) std::uint8_t[count]);
    if (part.has == nullptr) {
        return false;
    }
    part.code = &code;
    for (std::size_t p = 0; p < count; ++p) {
        const bytecode::PouEntry& pou = module_->pous[p];
        const bool body = pou.code != bytecode::kNone && pou.native == bytecode::kNone;
        part.has[p] = code.entry(static_cast<std::uint32_t>(p)) != nullptr ? 1 : 0;
        part.pous += part.has[p];
        part.of += body ? 1 : 0;
    }
    return true;
}

void NativeJob::publish(std::shared_ptr<const native::CompiledModule> code) noexcept {
    const std::size_t n = parts_.load(std::memory_order_relaxed);
    if (n == kMostParts || code == nullptr || !describe(partList_[n], *code)) {
        return; // the part is skipped: the next one, or the whole program, follows
    }
    partCode_[n] = std::move(code);
    parts_.store(n + 1, std::memory_order_release);
    runHook(&Hook::afterPart, cancel_);
}

void NativeJob::compile() noexcept {
    try {
        // A background compile hands over each part linked; one the caller waits for, none.
        const native::PartListener onPart = [this](std::shared_ptr<const native::CompiledModule> code) {
            publish(std::move(code));
        };
        result_ = native::compile(*module_, directFbs_, {}, &cancel_, threadsAsked(), background_ ? &onPart : nullptr);
        if (result_.code == nullptr) {
            fallback_ = nativeFallbackStatus(*module_, result_);
        } else if (!describe(whole_, *result_.code)) {
            fail("the compile ran out of memory");
            return;
        }
    } catch (...) { // native::compile does not throw; an allocation here may
        fail("the compile ran out of memory");
        return;
    }
    done_.store(true, std::memory_order_release);
}

} // namespace takt::engine
