#pragma once
// A process I/O double for scan-loop tests: behaves like the loopback driver (outputs of a cycle
// are the next cycle's inputs) and counts what the scan loop asked of it.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "module_builder.h"
#include "support/wait.h"
#include "takt/engine/process_io.h"
#include "takt/engine/scan_loop.h"

namespace takt::testing {

class FakeIo final : public engine::ProcessIo {
public:
    static constexpr std::size_t kBytes = 8;
    static constexpr std::uint8_t kSafe = 0x5A;

    std::size_t inputBytes() const noexcept override { return kBytes; }
    std::size_t outputBytes() const noexcept override { return kBytes; }
    std::size_t memoryBytes() const noexcept override { return 0; }

    void readInputs(const engine::ProcessImageView& image) noexcept override {
        const std::lock_guard lock(mutex_);
        std::memcpy(image.inputs.data(), wire_.data(), std::min(image.inputs.size(), kBytes));
        reads.fetch_add(1);
    }
    void writeOutputs(const engine::ProcessImageView& image) noexcept override {
        const std::lock_guard lock(mutex_);
        if (!safe_) {
            std::memcpy(wire_.data(), image.outputs.data(), std::min(image.outputs.size(), kBytes));
            fieldWrites.fetch_add(1);
        }
        writes.fetch_add(1);
    }
    void applySafeState() noexcept override {
        const std::lock_guard lock(mutex_);
        safe_ = true;
        wire_.fill(kSafe);
        safeCalls.fetch_add(1);
    }
    void releaseSafeState() noexcept override {
        const std::lock_guard lock(mutex_);
        safe_ = false;
        releases.fetch_add(1);
    }
    engine::IoHealthSummary healthSummary() const noexcept override {
        engine::IoHealthSummary s;
        if (failedClosed.load() || faulted.load()) {
            s.worst = 2;
            s.faulted = 1;
            s.failedClosed = failedClosed.load() ? 1 : 0;
        }
        return s;
    }
    std::string failedClosedReason() const override { return "fake: peer gone"; }
    // What applySafeState() puts on the wire: kSafe in every byte.
    std::span<const std::uint8_t> safeOutputs() const noexcept override { return safeImage_; }

    std::uint8_t wire(std::size_t i) const {
        const std::lock_guard lock(mutex_);
        return wire_[i];
    }

    std::atomic<int> reads{0}, writes{0}, safeCalls{0}, releases{0};
    std::atomic<int> fieldWrites{0};       // writes that reached the wire (not in the safe state)
    std::atomic<bool> failedClosed{false}; // a driver with on_error = "fault" is faulted
    std::atomic<bool> faulted{false};      // a driver is faulted but does not fail closed

private:
    mutable std::mutex mutex_;
    std::array<std::uint8_t, kBytes> wire_{};
    static constexpr std::array<std::uint8_t, kBytes> safeImage_ = [] {
        std::array<std::uint8_t, kBytes> a{};
        a.fill(kSafe);
        return a;
    }();
    bool safe_ = false;
};

// A ScriptedRunner that also honours the abort flag the scan loop hands it.
class AbortableRunner final : public engine::CodeRunner {
public:
    using Body = std::function<bool(std::uint8_t* image, const std::atomic<bool>* abort, engine::Fault&)>;
    Body body;
    std::function<void()> onInit;

    void setAbortFlag(const std::atomic<bool>* flag) override { abort = flag; }
    bool runInit(engine::LoadedProgram& /*p*/, engine::Fault& /*f*/) override {
        if (onInit) {
            onInit();
        }
        return true;
    }
    bool runProgram(engine::LoadedProgram& p, const bytecode::ProgramInstance& /*inst*/, std::int64_t /*now*/,
                    engine::Fault& f) override {
        return !body || body(p.image(), abort, f);
    }
    const std::atomic<bool>* abort = nullptr;
};

// A program with BYTE `in` at %IB0 and BYTE `out` at %QB0, one instance on no task.
struct ByteProgram {
    ModuleBuilder b;
    std::uint32_t tByte = b.elementary(ValueKind::Byte, "BYTE", 1);
    std::uint32_t in = b.global("in", tByte);
    std::uint32_t out = b.global("out", tByte);
    std::uint32_t prog = b.composite(ValueKind::Program, "Prog", {{"x", tByte}});

    // With `taskIntervalNs` > 0 the instance runs on a cyclic task "T" of that interval.
    explicit ByteProgram(std::int64_t taskIntervalNs = 0) {
        const std::uint32_t task = taskIntervalNs > 0 ? b.task("T", taskIntervalNs, 0) : bytecode::kNone;
        b.program("P", prog, task);
        b.m.io.push_back(bytecode::IoBinding{bytecode::IoArea::Input, 0, 0, 1, in, tByte, "%IB0", "in"});
        b.m.io.push_back(bytecode::IoBinding{bytecode::IoArea::Output, 0, 0, 1, out, tByte, "%QB0", "out"});
    }
};

// A ByteProgram whose cycle writes out := in + `step`, loaded into an Engine on a FakeIo, and a
// ScanLoop with `options` over them (not started). `loaded` says whether the load succeeded;
// without it there is no loop.
struct ByteLoopRig {
    ByteLoopRig(std::uint8_t step, const engine::ScanOptions& options, std::int64_t taskIntervalNs = 0)
        : prog(taskIntervalNs) {
        auto runner = std::make_unique<AbortableRunner>();
        const std::uint32_t in = prog.in;
        const std::uint32_t out = prog.out;
        runner->body = [in, out, step](std::uint8_t* image, const std::atomic<bool>*, engine::Fault&) {
            image[out] = static_cast<std::uint8_t>(image[in] + step);
            return true;
        };
        engine = std::make_unique<engine::Engine>(std::move(runner), clock);
        engine::FaultReport fault;
        loaded = engine->load(std::make_unique<engine::LoadedProgram>(prog.b.build(), ""), fault);
        if (loaded) {
            loop = std::make_unique<engine::ScanLoop>(*engine, clock, io, options);
        }
    }

    ByteProgram prog;
    engine::CycleClock clock;
    std::unique_ptr<engine::Engine> engine;
    FakeIo io;
    std::unique_ptr<engine::ScanLoop> loop;
    bool loaded = false;
};

// Polls `pred` every millisecond for up to `seconds`; true once it holds.
inline bool waitFor(const std::function<bool()>& pred, double seconds = 10.0) {
    return test::waitUntil(pred,
                           std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds)),
                           std::chrono::milliseconds(1));
}

// Submits `c` with its result going to `r` and waits until the scan thread counted it done.
inline bool submitAndWait(engine::ScanLoop& loop, engine::ScanCommand c, engine::CommandResult& r) {
    c.result = &r;
    if (!loop.submit(c)) {
        return false;
    }
    const std::uint64_t ticket = loop.commandsSubmitted();
    return waitFor([&] { return loop.commandsDone() >= ticket; });
}

} // namespace takt::testing
