// The traces' side of the scan loop (trace_recorder.h): sampled by the thread that ran the
// traced task, at the end of its cycle; moved onto a new program by an online change.
#include "takt/engine/scan_loop.h"

namespace takt::engine {

void ScanLoop::sampleTraces(std::uint32_t task, std::uint64_t cycle, std::int64_t timeNs) noexcept {
    const bytecode::Module* running = &engine_.program().module();
    for (TraceSlot& slot : traces_) {
        slot.with(task, [&](TraceRecorder& r) {
            r.sample(running, cycle, timeNs, [this](ImageArea a) { return imageOf(a); });
        });
    }
}

void ScanLoop::sampleBaseTraces(std::int64_t timeNs) noexcept {
    const bytecode::Module& m = engine_.program().module();
    for (TraceSlot& slot : traces_) {
        slot.with(TraceSlot::kAnyTask, [&](TraceRecorder& r) {
            const std::uint32_t t = slot.task.load(std::memory_order_relaxed);
            const bool ran =
                t == TraceSlot::kBaseCycle ? m.tasks.empty() : t < m.tasks.size() && engine_.taskRanLastCycle(t);
            if (ran) {
                r.sample(&m, current_.cycles, timeNs, [this](ImageArea a) { return imageOf(a); });
            }
        });
    }
}

void ScanLoop::followTraces(const TraceLayout* layouts) noexcept {
    for (std::size_t i = 0; i < traces_.size(); ++i) {
        const TraceLayout next = layouts != nullptr ? layouts[i] : TraceLayout{};
        traces_[i].with(TraceSlot::kAnyTask, [&](TraceRecorder& r) {
            r.follow(next);
            if (next.module != nullptr) {
                // The task's index in the new program (a change without task threads may add,
                // remove or reorder tasks); every task is parked, so no sampler reads it now.
                traces_[i].task.store(next.task);
            }
        });
    }
}

} // namespace takt::engine
