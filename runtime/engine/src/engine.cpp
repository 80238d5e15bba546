#include "takt/engine/engine.h"

#include "takt/engine/scan_command.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>

namespace takt::engine {
namespace {

using bytecode::IoArea;
using bytecode::kNone;

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min();

} // namespace

Engine::Engine(std::unique_ptr<CodeRunner> runner, Clock& clock) : runner_(std::move(runner)), clock_(clock) {}

std::vector<std::uint8_t>& Engine::area(IoArea a) {
    return const_cast<std::vector<std::uint8_t>&>(std::as_const(*this).area(a));
}

const std::vector<std::uint8_t>& Engine::area(IoArea a) const {
    switch (a) {
    case IoArea::Input: return inputs_;
    case IoArea::Output: return outputs_;
    default: return memory_;
    }
}

void Engine::ensureArea(IoArea a, std::size_t bytes) {
    std::vector<std::uint8_t>& v = area(a);
    if (v.size() < bytes) {
        v.resize(bytes, 0);
    }
}

void Engine::addBinding(const DirectBinding& b) {
    ensureArea(b.area, static_cast<std::size_t>(b.byteOffset) + std::max<std::uint32_t>(b.size, 1));
    extraBindings_.push_back(b);
}

std::size_t Engine::areaBytesNeeded(const bytecode::Module& m, IoArea a) const {
    std::size_t bytes = 0;
    for (const bytecode::IoBinding& b : m.io) {
        if (b.area == a) {
            bytes = std::max(bytes, static_cast<std::size_t>(b.byteOffset) + std::max<std::uint32_t>(b.size, 1));
        }
    }
    return bytes;
}

void Engine::sizeProcessImage() {
    for (const IoArea a : {IoArea::Input, IoArea::Output, IoArea::Memory}) {
        ensureArea(a, areaBytesNeeded(program_->module(), a));
    }
}

void TaskSchedule::reset(const bytecode::Module& m) {
    const auto& tasks = m.tasks;
    order.resize(tasks.size());
    std::iota(order.begin(), order.end(), 0u);
    // Insertion sort: stable (ties keep declaration order) and, unlike std::stable_sort, it
    // needs no temporary buffer, so a restart at a cycle boundary allocates nothing.
    for (std::size_t i = 1; i < order.size(); ++i) {
        const std::uint32_t t = order[i];
        std::size_t j = i;
        for (; j > 0 && tasks[order[j - 1]].priority > tasks[t].priority; --j) {
            order[j] = order[j - 1];
        }
        order[j] = t;
    }
    lastRun.assign(tasks.size(), kNever);
    lastSingle.assign(tasks.size(), 0);
    due.assign(tasks.size(), false);
    start.assign(tasks.size(), 0);
    end.assign(tasks.size(), 0);
    runs.assign(tasks.size(), 0);
    ioOwned.assign(tasks.size() >= 2 ? m.io.size() : 0, 0);
    for (std::size_t t = 0; t < tasks.size() && !ioOwned.empty(); ++t) {
        for (const std::uint32_t i : tasks[t].io) {
            if (i < ioOwned.size()) {
                ioOwned[i] = 1;
            }
        }
    }
}

void Engine::resetTaskState() {
    tasks_.reset(program_->module());
    for (std::size_t t = 0; t < tasks_.exchange.count; ++t) {
        tasks_.exchange[t].reset();
    }
}

bool Engine::coldInit(LoadedProgram& p, FaultReport& report) const {
    p.resetToInitialImage();
    // An initial value may read the date (`started : DT := NOW_DT()`): the same clock as a cycle.
    runner_->setWallClock(clock_.wallNs());
    Fault fault;
    if (p.module().initCode != kNone && !runner_->runInit(p, fault)) {
        report = p.describe(fault);
        return false;
    }
    return true;
}

bool Engine::load(std::unique_ptr<LoadedProgram> program, FaultReport& report) {
    program_ = std::move(program);
    program_->prepareWarmRestart();
    cycles_ = 0;
    extraBindings_.clear();
    sizeProcessImage();
    resetTaskState();
    runner_->attach(*program_);
    if (!coldInit(*program_, report)) {
        program_.reset();
        return false;
    }
    return true;
}

bool Engine::ownedByTask(std::size_t binding) const {
    return threaded_ && binding < tasks_.ioOwned.size() && tasks_.ioOwned[binding] != 0;
}

void Engine::copyIn() {
    const bytecode::Module& m = program_->module();
    std::uint8_t* image = program_->image();
    for (std::size_t i = 0; i < m.io.size(); ++i) {
        const bytecode::IoBinding& b = m.io[i];
        if (b.area != IoArea::Output && !ownedByTask(i)) {
            areaToImage(b.byteOffset, b.bit, b.size, area(b.area).data(), image + b.imageOffset);
        }
    }
    for (const DirectBinding& b : extraBindings_) {
        if (b.area == IoArea::Input) {
            areaToImage(b.byteOffset, b.bit, b.size, inputs_.data(), image + b.imageOffset);
        }
    }
}

void Engine::copyOut() {
    const bytecode::Module& m = program_->module();
    const std::uint8_t* image = program_->image();
    for (std::size_t i = 0; i < m.io.size(); ++i) {
        const bytecode::IoBinding& b = m.io[i];
        if (b.area != IoArea::Input && !ownedByTask(i)) {
            imageToArea(b.byteOffset, b.bit, b.size, image + b.imageOffset, area(b.area).data());
        }
    }
    for (const DirectBinding& b : extraBindings_) {
        if (b.area != IoArea::Input) {
            imageToArea(b.byteOffset, b.bit, b.size, image + b.imageOffset, area(b.area).data());
        }
    }
}

bool Engine::runCycle(FaultReport& report) {
    const std::int64_t now = clock_.nowNs();
    runner_->cycleBoundary();
    runner_->setWallClock(clock_.wallNs());
    lastNow_ = now;
    ++cycles_;
    copyIn();
    applyDataForces();
    const bytecode::Module& m = program_->module();
    // Which tasks are due is decided once, at the start of the cycle.
    for (std::size_t t = 0; t < m.tasks.size(); ++t) {
        const bytecode::TaskEntry& task = m.tasks[t];
        bool due = false;
        if (task.singleOffset != kNone) {
            const std::uint8_t v = program_->image()[task.singleOffset] != 0 ? 1 : 0;
            due = v != 0 && tasks_.lastSingle[t] == 0;
            tasks_.lastSingle[t] = v;
        } else if (threaded_) {
            due = false; // a cyclic task runs on its own thread, released at its own interval
        } else if (task.intervalNs > 0) {
            if (tasks_.lastRun[t] == kNever) {
                due = true;
                tasks_.lastRun[t] = now;
            } else if (now - tasks_.lastRun[t] >= task.intervalNs) {
                due = true;
                // Keep the phase: the next release is a whole number of intervals later.
                tasks_.lastRun[t] += ((now - tasks_.lastRun[t]) / task.intervalNs) * task.intervalNs;
            }
        } else {
            due = true;
        }
        tasks_.due[t] = due;
    }
    Fault fault;
    const auto runOne = [&](const bytecode::ProgramInstance& inst) {
        if (runner_->runProgram(*program_, inst, now, fault)) {
            return true;
        }
        report = program_->describe(fault);
        if (report.pou.empty() && inst.pou < m.pous.size()) {
            report.pou = m.pous[inst.pou].name;
        }
        return false;
    };
    bool ok = true;
    for (std::uint32_t t : tasks_.order) {
        if (!tasks_.due[t] || threaded_) { // an event task on its own thread: the scan loop releases it
            continue;
        }
        ++tasks_.runs[t];
        if (timer_ != nullptr) {
            tasks_.start[t] = timer_();
        }
        for (const bytecode::ProgramInstance& inst : m.programs) {
            if (inst.task == t && !runOne(inst)) {
                ok = false;
                break;
            }
        }
        if (timer_ != nullptr) {
            tasks_.end[t] = timer_();
        }
        if (!ok) {
            break;
        }
    }
    if (ok) {
        for (const bytecode::ProgramInstance& inst : m.programs) {
            // Test instances are run by `takt test`, never by the scan cycle.
            if (inst.pou < m.pous.size() && bytecode::isTestPou(m.pous[inst.pou].kind)) {
                continue;
            }
            if ((inst.task == kNone || inst.task >= m.tasks.size()) && !runOne(inst)) {
                ok = false;
                break;
            }
        }
    }
    applyDataForces();
    copyOut();
    if (threaded_) {
        mergeTaskOutputs(); // before the output forces, which go over what any task wrote
    }
    if (const ForceTable* forces = this->forces(); forces != nullptr) {
        applyForces(*forces, ImageArea::Output, outputs_.data(), outputs_.size());
        applyForces(*forces, ImageArea::Memory, memory_.data(), memory_.size());
    }
    if (threaded_) {
        publishTaskInputs();
    }
    return ok;
}

bool Engine::enableTaskThreads() {
    const std::size_t n = program_->module().tasks.size();
    if (n < 2 || program_->stackCount() < n + 1) {
        return false;
    }
    std::vector<std::unique_ptr<CodeRunner>> runners;
    for (std::size_t t = 0; t < n; ++t) {
        std::unique_ptr<CodeRunner> r = runner_->forTask(static_cast<std::uint32_t>(t + 1));
        if (r == nullptr) {
            return false;
        }
        r->attach(*program_);
        runners.push_back(std::move(r));
    }
    taskRunners_ = std::move(runners);
    tasks_.exchange.size(program_->module(), inputs_.size(), outputs_.size(), memory_.size());
    threaded_ = true;
    publishTaskInputs(); // the first cycle of every task reads the inputs of now
    return true;
}

void Engine::disableTaskThreads() {
    if (threaded_) {
        mergeTaskOutputs(); // the tasks' last outputs
    }
    threaded_ = false;
    taskRunners_.clear();
}

bool Engine::runTask(std::size_t t, std::int64_t now, std::int64_t wallNs, FaultReport& report) {
    const bytecode::Module& m = program_->module();
    std::uint8_t* image = program_->image();
    const bytecode::TaskEntry& task = m.tasks[t];
    TaskExchange& exchange = tasks_.exchange[t];
    // The table is read once: the scan loop frees a replaced one only after this cycle ends.
    const ForceTable* forces = forces_.load(); // sequentially consistent: ScanLoop::forceGraceOver
    exchange.copyIn(m, task, image);
    if (forces != nullptr) {
        applyForces(*forces, ImageArea::Data, image, program_->imageSize());
    }
    CodeRunner& runner = *taskRunners_[t];
    runner.cycleBoundary();
    runner.setWallClock(wallNs);
    bool ok = true;
    for (const bytecode::ProgramInstance& inst : m.programs) {
        if (inst.task != t) {
            continue;
        }
        Fault fault;
        if (!runner.runProgram(*program_, inst, now, fault)) {
            report = program_->describe(fault);
            if (report.pou.empty() && inst.pou < m.pous.size()) {
                report.pou = m.pous[inst.pou].name;
            }
            ok = false;
            break;
        }
    }
    if (forces != nullptr) {
        applyForces(*forces, ImageArea::Data, image, program_->imageSize());
    }
    exchange.copyOut(m, task, image);
    return ok;
}

void Engine::applyInputForces() noexcept {
    const ForceTable* forces = this->forces();
    if (forces == nullptr) {
        return;
    }
    if (!inputsForced_) { // a second call before the restore must not save forced bytes as the field's
        saveForcedInputs(*forces, inputs_.data(), inputs_.size());
        inputsForced_ = true;
    }
    applyForces(*forces, ImageArea::Input, inputs_.data(), inputs_.size());
}

void Engine::restoreFieldInputs() noexcept {
    if (const ForceTable* forces = this->forces(); forces != nullptr && inputsForced_) {
        restoreForcedInputs(*forces, inputs_.data(), inputs_.size());
    }
    inputsForced_ = false;
}

void Engine::applyDataForces() noexcept {
    if (const ForceTable* forces = this->forces(); forces != nullptr) {
        applyForces(*forces, ImageArea::Data, program_->image(), program_->imageSize());
    }
}

void Engine::mergeTaskOutputs() noexcept {
    const bytecode::Module& m = program_->module();
    for (std::size_t t = 0; t < tasks_.exchange.count && t < m.tasks.size(); ++t) {
        (void)tasks_.exchange[t].merge(m, m.tasks[t], outputs_, memory_);
    }
}

void Engine::publishTaskInputs() noexcept {
    if (!threaded_) {
        return;
    }
    // No merge here: runCycle merges before the output forces, which a merge after them would undo.
    for (std::size_t t = 0; t < tasks_.exchange.count; ++t) {
        tasks_.exchange[t].publish(inputs_, memory_);
    }
}

bool Engine::restart(RestartMode mode, FaultReport& report) {
    if (mode == RestartMode::Cold) {
        resetTaskState();
        return coldInit(*program_, report);
    }
    std::uint8_t* saved = program_->restartScratch();
    std::memcpy(saved, program_->image(), program_->imageSize());
    resetTaskState();
    if (!coldInit(*program_, report)) {
        return false;
    }
    applyTransferPlan(program_->warmRestartPlan(), saved, program_->image());
    return true;
}

PreparedChange Engine::prepareChange(std::unique_ptr<LoadedProgram> next, bool warm, bool previewOnly) const {
    PreparedChange change;
    if (!coldInit(*next, change.fault)) {
        return change;
    }
    TransferPlan plan = computeTransferPlan(program_->module(), next->module(), warm);
    for (const TransferCopy& c : plan.copies) {
        if (!copyInside(c, program_->imageSize(), next->imageSize())) {
            change.fault.message = "transfer plan addresses data outside the program image";
            return change;
        }
    }
    for (const TransferConvert& c : plan.converts) {
        if (!convertInside(c, program_->imageSize(), next->imageSize())) {
            change.fault.message = "transfer plan addresses data outside the program image";
            return change;
        }
    }
    plan.report.oldHash = program_->hash();
    plan.report.newHash = next->hash();
    if (previewOnly) {
        change.plan = std::move(plan); // no program: not ok(), nothing to apply
        return change;
    }
    runner_->prepare(*next);
    for (std::size_t t = 0; t < taskRunners_.size(); ++t) {
        if (t + 1 < next->stackCount()) {
            taskRunners_[t]->prepare(*next);
        }
    }
    next->prepareWarmRestart();
    change.tasks.reset(next->module());
    std::array<std::size_t, 3> sizes{};
    for (const IoArea a : {IoArea::Input, IoArea::Output, IoArea::Memory}) {
        const std::size_t need = areaBytesNeeded(next->module(), a);
        sizes[static_cast<std::size_t>(a)] = std::max(need, area(a).size());
        if (need > area(a).size()) {
            change.areas[static_cast<std::size_t>(a)].assign(need, 0);
        }
    }
    if (threaded_) { // the new program's bindings, over the areas as they will be
        change.tasks.exchange.size(next->module(), sizes[0], sizes[1], sizes[2]);
    }
    change.retainBuffer.assign(next->imageSize(), 0);
    change.plan = std::move(plan);
    change.program = std::move(next);
    return change;
}

TransferReport Engine::applyChange(PreparedChange& change) {
    const auto t0 = std::chrono::steady_clock::now();
    applyTransferPlan(change.plan, program_->image(), change.program->image());
    if (threaded_) {
        mergeTaskOutputs(); // the parked tasks' last outputs, by the bindings they were made for
    }
    if (change.program->module().tasks.size() == program_->module().tasks.size()) {
        // Same tasks by index: keep their phase and SINGLE memory, take the new priority order
        // and the new program's bindings.
        std::swap(tasks_.order, change.tasks.order);
        std::swap(tasks_.ioOwned, change.tasks.ioOwned);
        std::swap(tasks_.exchange, change.tasks.exchange);
    } else {
        std::swap(tasks_, change.tasks);
    }
    for (const IoArea a : {IoArea::Input, IoArea::Output, IoArea::Memory}) {
        std::vector<std::uint8_t>& grown = change.areas[static_cast<std::size_t>(a)];
        std::vector<std::uint8_t>& current = area(a);
        if (grown.size() > current.size()) {
            if (!current.empty()) {
                std::memcpy(grown.data(), current.data(), current.size());
            }
            std::swap(current, grown);
        }
    }
    // The report's strings move out; the plan's vectors stay in `change`, freed by its owner.
    TransferReport r = std::move(change.plan.report);
    std::swap(program_, change.program);
    change.applied = true;
    runner_->attach(*program_);
    for (std::size_t t = 0; t < taskRunners_.size() && t + 1 < program_->stackCount(); ++t) {
        taskRunners_[t]->attach(*program_);
    }
    publishTaskInputs(); // before the parked tasks run again, on the new exchange
    r.pauseNs = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

} // namespace takt::engine
