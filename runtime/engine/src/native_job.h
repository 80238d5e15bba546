#pragma once
// One native-tier compile of one program (takt/native/native.h), run either on a thread of its
// own, so the program starts on the interpreter and switches when the code is ready
// ([runtime] native_start = "background"), or on the caller's thread ("wait").
//
// The job owns what the compiled code refers to: the module (shared with the program), copies
// of the standard FBs' layouts the code may point at, and the code itself. Every runner of the
// program (the base cycle's and each task thread's) holds the job, so the code lives as long as
// any of them may run it, whichever is freed last.
//
// The compile thread is made with every signal blocked (a SIGTERM meant for `takt run`'s main
// thread must never end up here), with SCHED_OTHER set explicitly rather than inherited (its
// creator may be a real-time thread) and 10 nicer than the process, so it takes CPU time only
// the cycle and takt's other threads do not need.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <pthread.h>

#include "takt/bytecode/module.h"
#include "takt/native/native.h"

namespace takt::engine {

// Code for some of a program's POUs, published while its compile goes on (a background compile
// links in waves: native::PartListener), or the whole program's once it is done.
struct NativePart {
    const native::CompiledModule* code = nullptr;
    std::unique_ptr<std::uint8_t[]> has; // per POU: 1 where `code` has an entry (vm::CompiledCalls)
    std::uint32_t pous = 0;              // the POUs it has
    std::uint32_t of = 0;                // the POUs with a body, all to be compiled
};

class NativeJob {
public:
    // The newest code (any thread; an acquire load, nothing locked): the whole program's once
    // done() with code, else the last part published, null before the first. It lives as long as
    // the job.
    [[nodiscard]] const NativePart* newest() const noexcept;

    // Called on the compile thread when a background compile ends without being cancelled.
    using Listener = std::function<void(const NativeJob&)>;

    // Starts the compile of `module` on a thread of its own. Should the thread not start (no
    // memory for its stack), the job is done at once with no code and its status says why.
    [[nodiscard]] static std::shared_ptr<NativeJob> start(std::shared_ptr<const bytecode::Module> module,
                                                          std::span<const native::DirectFb> directFbs, Listener onDone);
    // Compiles `module` now, on this thread: done() when it returns.
    [[nodiscard]] static std::shared_ptr<NativeJob> run(std::shared_ptr<const bytecode::Module> module,
                                                        std::span<const native::DirectFb> directFbs);

    // Cancels the compile and waits for its thread: the part of the compile under way when the
    // flag is seen (at most the machine-code generation, which LLVM cannot stop) still runs.
    ~NativeJob();
    NativeJob(const NativeJob&) = delete;
    NativeJob& operator=(const NativeJob&) = delete;

    // Asks the compile to stop early (any thread, also the scan thread: one atomic store). A
    // compile that ended before keeps its code.
    void cancel() noexcept { cancel_.store(true, std::memory_order_relaxed); }
    // True once cancel() was called (the code may still have been made before it).
    [[nodiscard]] bool cancelRequested() const noexcept { return cancel_.load(std::memory_order_relaxed); }

    // True once the compile ended (any thread; an acquire load, nothing locked): what follows
    // may be read from then on and never changes.
    [[nodiscard]] bool done() const noexcept { return done_.load(std::memory_order_acquire); }

    // After done(): the code, null when the program stays on the interpreter.
    [[nodiscard]] const native::CompiledModule* code() const noexcept { return result_.code.get(); }
    // After done(): runtime.status's text for a program the tier did not compile ("interpreter
    // (native: why)"), empty when there is code; the compile's wall-clock milliseconds.
    [[nodiscard]] const std::string& fallbackStatus() const noexcept { return fallback_; }
    [[nodiscard]] double compileMs() const noexcept { return result_.compileMs; }
    // After done(): the POUs compiled and those taken from the code cache (native::CompileResult).
    [[nodiscard]] std::uint32_t pousCompiled() const noexcept { return result_.pousCompiled; }
    [[nodiscard]] std::uint32_t pousReused() const noexcept { return result_.pousReused; }
    [[nodiscard]] bool cancelled() const noexcept { return result_.cancelled; }

    // Tests only: called on the compile thread before every background compile with the job's
    // cancel flag, so a test can hold a compile there and watch the program run on the
    // interpreter meanwhile. Empty (the default): nothing is called.
    using BeforeCompile = std::function<void(const std::atomic<bool>& cancel)>;
    static void setBeforeCompileForTests(BeforeCompile hook);
    // Tests only: called on the compile thread after each part is published (newest()), so a
    // test can hold the compile there and watch the program run partly native meanwhile.
    using AfterPart = BeforeCompile;
    static void setAfterPartForTests(AfterPart hook);

private:
    NativeJob(std::shared_ptr<const bytecode::Module> module, std::span<const native::DirectFb> directFbs);
    void compile() noexcept;
    static void* threadMain(void* job); // the compile thread's body
    void fail(const char* why) noexcept;
    void publish(std::shared_ptr<const native::CompiledModule> code) noexcept; // the compile thread
    bool describe(NativePart& part, const native::CompiledModule& code) const noexcept;

    // Parts in the order published; parts_ counts those readable (release/acquire). Made before
    // the compile starts, so publishing allocates nothing a reader could see half made.
    static constexpr std::size_t kMostParts = 16;
    std::unique_ptr<NativePart[]> partList_ = std::make_unique<NativePart[]>(kMostParts);
    std::unique_ptr<std::shared_ptr<const native::CompiledModule>[]> partCode_ =
        std::make_unique<std::shared_ptr<const native::CompiledModule>[]>(kMostParts);
    std::atomic<std::size_t> parts_{0};
    NativePart whole_; // after done(), with code

    std::shared_ptr<const bytecode::Module> module_;
    std::vector<native::DirectFb> directFbs_;
    // The standard FBs' layouts the DirectFbs point at, copied out of the Vm that made them: a
    // compile may outlive that Vm, and code built without the FBs' bitcode keeps the pointer.
    std::vector<std::unique_ptr<std::uint64_t[]>> layouts_;
    std::atomic<bool> cancel_{false};
    std::atomic<bool> done_{false};
    native::CompileResult result_;
    std::string fallback_;
    Listener onDone_;
    pthread_t thread_{};
    bool started_ = false;    // thread_ runs and is to be joined
    bool background_ = false; // compiled on thread_ (set before it starts): parts are published
};

} // namespace takt::engine
