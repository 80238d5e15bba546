// The lock-free exchange of the process image between the base cycle and the task threads
// (task_exchange.h).
#include "takt/engine/task_exchange.h"

#include <algorithm>
#include <cstring>

namespace takt::engine {
namespace {

using bytecode::IoArea;
using bytecode::IoBinding;

constexpr std::size_t kHeader = sizeof(std::uint64_t);

// Whether binding `b` lies inside an area of `bytes` bytes.
bool inside(const IoBinding& b, std::size_t bytes) noexcept {
    return std::size_t{b.byteOffset} + std::max<std::uint32_t>(b.size, 1) <= bytes;
}

void toImage(const IoBinding& b, const std::uint8_t* area, std::uint8_t* image) noexcept {
    areaToImage(b.byteOffset, b.bit, b.size, area, image);
}

void fromImage(const IoBinding& b, const std::uint8_t* image, std::uint8_t* area) noexcept {
    imageToArea(b.byteOffset, b.bit, b.size, image, area);
}

// Binding `b` from one copy of an area into another (the base merging a task's value): a bit
// alone, so tasks may share the other bits of its byte.
void between(const IoBinding& b, const std::uint8_t* from, std::uint8_t* to) noexcept {
    if (b.size == 0) {
        std::uint8_t bit = 0;
        toImage(b, from, &bit);
        fromImage(b, &bit, to);
    } else {
        std::memcpy(to + b.byteOffset, from + b.byteOffset, b.size);
    }
}

// Whether the data image holds a value for `b` other than the one in `area`.
bool differs(const IoBinding& b, const std::uint8_t* area, const std::uint8_t* image) noexcept {
    if (b.size == 0) {
        return ((area[b.byteOffset] >> b.bit) & 1u) != (*image != 0 ? 1u : 0u);
    }
    return std::memcmp(area + b.byteOffset, image, b.size) != 0;
}

std::uint64_t readHeader(const std::uint8_t* slot) noexcept {
    std::uint64_t v = 0;
    std::memcpy(&v, slot, sizeof(v));
    return v;
}

void writeHeader(std::uint8_t* slot, std::uint64_t v) noexcept {
    std::memcpy(slot, &v, sizeof(v));
}

} // namespace

void areaToImage(std::uint32_t byteOffset, std::uint8_t bit, std::uint32_t size, const std::uint8_t* area,
                 std::uint8_t* image) noexcept {
    if (size == 0) {
        *image = static_cast<std::uint8_t>((area[byteOffset] >> bit) & 1u);
    } else {
        std::memcpy(image, area + byteOffset, size);
    }
}

void imageToArea(std::uint32_t byteOffset, std::uint8_t bit, std::uint32_t size, const std::uint8_t* image,
                 std::uint8_t* area) noexcept {
    if (size == 0) {
        const auto mask = static_cast<std::uint8_t>(1u << bit);
        area[byteOffset] =
            static_cast<std::uint8_t>(*image != 0 ? (area[byteOffset] | mask) : (area[byteOffset] & ~mask));
    } else {
        std::memcpy(area + byteOffset, image, size);
    }
}

void TripleBuffer::resize(std::size_t bytes) {
    size_ = bytes;
    bytes_.assign(3 * bytes, 0);
    middle_.store(1, std::memory_order_relaxed);
    back_ = 0;
    front_ = 2;
}

void TripleBuffer::publish() noexcept {
    // Release: the slot's bytes are visible to the reader that takes it.
    back_ = static_cast<std::uint8_t>(
        middle_.exchange(static_cast<std::uint8_t>(back_ | kFresh), std::memory_order_acq_rel) & ~kFresh);
}

bool TripleBuffer::refresh() noexcept {
    if ((middle_.load(std::memory_order_relaxed) & kFresh) == 0) {
        return false;
    }
    front_ = static_cast<std::uint8_t>(middle_.exchange(front_, std::memory_order_acq_rel) & ~kFresh);
    return true;
}

void TaskExchange::size(const bytecode::TaskEntry& task, std::size_t inputBytes, std::size_t outputBytes,
                        std::size_t memoryBytes) {
    inputBytes_ = inputBytes;
    outputBytes_ = outputBytes;
    memoryBytes_ = memoryBytes;
    in_.resize(kHeader + inputBytes + memoryBytes);
    out_.resize(kHeader + outputBytes + memoryBytes + task.io.size());
    pending_.assign(task.io.size(), 0);
    generation_ = 0;
    merged_ = 0;
}

void TaskExchange::reset() noexcept {
    std::fill(pending_.begin(), pending_.end(), 0);
}

void TaskExchange::copyIn(const bytecode::Module& m, const bytecode::TaskEntry& task, std::uint8_t* image) noexcept {
    in_.refresh();
    const std::uint8_t* slot = in_.front();
    const std::uint64_t merged = readHeader(slot);
    const std::uint8_t* inputs = slot + kHeader;
    const std::uint8_t* memory = inputs + inputBytes_;
    for (std::size_t k = 0; k < task.io.size() && k < pending_.size(); ++k) {
        const IoBinding& b = m.io[task.io[k]];
        if (b.area == IoArea::Input && inside(b, inputBytes_)) {
            toImage(b, inputs, image + b.imageOffset);
        } else if (b.area == IoArea::Memory && inside(b, memoryBytes_)) {
            if (pending_[k] != 0 && pending_[k] > merged) {
                continue; // the program's own value, not merged yet: these inputs predate it
            }
            pending_[k] = 0;
            toImage(b, memory, image + b.imageOffset);
        }
    }
}

void TaskExchange::copyOut(const bytecode::Module& m, const bytecode::TaskEntry& task,
                           const std::uint8_t* image) noexcept {
    const std::uint64_t generation = ++generation_;
    std::uint8_t* slot = out_.back();
    writeHeader(slot, generation);
    std::uint8_t* outputs = slot + kHeader;
    std::uint8_t* memory = outputs + outputBytes_;
    std::uint8_t* take = memory + memoryBytes_;
    // What the program found in %M at this cycle's start (the inputs copyIn read).
    const std::uint8_t* memoryIn = in_.front() + kHeader + inputBytes_;
    for (std::size_t k = 0; k < task.io.size() && k < pending_.size(); ++k) {
        const IoBinding& b = m.io[task.io[k]];
        take[k] = 0;
        if (b.area == IoArea::Output && inside(b, outputBytes_)) {
            fromImage(b, image + b.imageOffset, outputs);
            take[k] = 1;
        } else if (b.area == IoArea::Memory && inside(b, memoryBytes_)) {
            if (differs(b, memoryIn, image + b.imageOffset)) {
                pending_[k] = generation;
            }
            if (pending_[k] != 0) {
                fromImage(b, image + b.imageOffset, memory);
                take[k] = 1;
            }
        }
    }
    out_.publish();
}

bool TaskExchange::merge(const bytecode::Module& m, const bytecode::TaskEntry& task, std::vector<std::uint8_t>& outputs,
                         std::vector<std::uint8_t>& memory) noexcept {
    if (!out_.refresh()) {
        return false;
    }
    const std::uint8_t* slot = out_.front();
    const std::uint8_t* taskOutputs = slot + kHeader;
    const std::uint8_t* taskMemory = taskOutputs + outputBytes_;
    const std::uint8_t* take = taskMemory + memoryBytes_;
    const std::size_t bindings = out_.size() - kHeader - outputBytes_ - memoryBytes_;
    for (std::size_t k = 0; k < task.io.size() && k < bindings; ++k) {
        const IoBinding& b = m.io[task.io[k]];
        if (take[k] == 0) {
            continue;
        }
        if (b.area == IoArea::Output && inside(b, std::min(outputBytes_, outputs.size()))) {
            between(b, taskOutputs, outputs.data());
        } else if (b.area == IoArea::Memory && inside(b, std::min(memoryBytes_, memory.size()))) {
            between(b, taskMemory, memory.data());
        }
    }
    merged_ = readHeader(slot);
    return true;
}

void TaskExchange::publish(const std::vector<std::uint8_t>& inputs, const std::vector<std::uint8_t>& memory) noexcept {
    std::uint8_t* slot = in_.back();
    writeHeader(slot, merged_);
    if (const std::size_t n = std::min(inputBytes_, inputs.size()); n != 0) {
        std::memcpy(slot + kHeader, inputs.data(), n);
    }
    if (const std::size_t n = std::min(memoryBytes_, memory.size()); n != 0) {
        std::memcpy(slot + kHeader + inputBytes_, memory.data(), n);
    }
    in_.publish();
}

void TaskExchanges::size(const bytecode::Module& m, std::size_t inputBytes, std::size_t outputBytes,
                         std::size_t memoryBytes) {
    count = m.tasks.size();
    tasks = std::make_unique<TaskExchange[]>(count);
    for (std::size_t t = 0; t < count; ++t) {
        tasks[t].size(m.tasks[t], inputBytes, outputBytes, memoryBytes);
    }
}

} // namespace takt::engine
