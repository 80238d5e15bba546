#pragma once
// How the base cycle and a task on a scan thread of its own exchange the process image
// (scan_loop.h "Task threads") without a lock and without either side waiting for the other.
//
// The base cycle owns the process image: it runs the drivers, applies the forces and merges
// what the tasks wrote. Each task has two triple buffers with it:
//   - inputs (base -> task): after every base cycle, the whole %I and %M areas and the last
//     output generation of the task that the base has merged. The task takes the newest at its
//     cycle start, so it reads one consistent set of inputs, never a half-written one, however
//     its cycle and the base cycle overlap.
//   - outputs (task -> base): at its cycle end the task writes its own %Q and %M bindings
//     (TaskEntry::io) and, per binding, whether the base must take it. The base merges the
//     newest binding by binding, so two tasks may share a byte of %QX or %MX bits.
// A triple buffer never makes either side wait: the writer fills a slot nobody reads, then
// swaps it with the middle one in one atomic exchange; the reader swaps its slot with the
// middle one only when the writer published a newer one.
//
// %M is read and written by both the drivers (a Modbus master writing a holding register) and
// the program, so a task hands over only the %M bindings its programs changed, and keeps a
// changed value for itself until the base reports it merged (the generation in the inputs):
// a driver's write to a %M address the program only reads is never overwritten by the task's
// stale copy, and a value the program wrote is never lost to inputs published before the
// base took it. %Q belongs to the program alone (drivers only read outputs): every cycle's
// values go over.
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "takt/bytecode/module.h"

namespace takt::engine {

// A located value between a process-image area (`area` is its first byte) and the data image: a
// bit as one byte 0/1 (writing it leaves the byte's other bits), anything else byte for byte.
// The engine's own copies and the task exchange both use these.
void areaToImage(std::uint32_t byteOffset, std::uint8_t bit, std::uint32_t size, const std::uint8_t* area,
                 std::uint8_t* image) noexcept;
void imageToArea(std::uint32_t byteOffset, std::uint8_t bit, std::uint32_t size, const std::uint8_t* image,
                 std::uint8_t* area) noexcept;

// One writer thread, one reader thread; sized off the cycle.
class TripleBuffer {
public:
    void resize(std::size_t bytes);
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    // Writer: the slot to fill, then publish() it.
    [[nodiscard]] std::uint8_t* back() noexcept { return bytes_.data() + back_ * size_; }
    void publish() noexcept;
    // Reader: take the newest published slot (false when there is none newer than front()).
    bool refresh() noexcept;
    [[nodiscard]] const std::uint8_t* front() const noexcept { return bytes_.data() + front_ * size_; }

private:
    static constexpr std::uint8_t kFresh = 4; // in middle_: the slot was published and not taken yet
    std::vector<std::uint8_t> bytes_;         // three slots of size_ bytes
    std::size_t size_ = 0;
    std::atomic<std::uint8_t> middle_{1};
    std::uint8_t back_ = 0;  // writer's
    std::uint8_t front_ = 2; // reader's
};

// The exchange of one task. Slot layouts (offsets in bytes):
//   inputs:  [0, 8) merged generation | %I | %M
//   outputs: [0, 8) generation | %Q | %M | one byte per TaskEntry::io entry: 1 = take it
class TaskExchange {
public:
    // Off the cycle: sized for the areas and the task's bindings.
    void size(const bytecode::TaskEntry& task, std::size_t inputBytes, std::size_t outputBytes,
              std::size_t memoryBytes);
    // Forget what was pending (a restart: all tasks parked, nothing in flight). Allocates nothing.
    void reset() noexcept;

    // Task thread, cycle start: copies the task's %I and %M bindings from the newest inputs into
    // the data image `image`.
    void copyIn(const bytecode::Module& m, const bytecode::TaskEntry& task, std::uint8_t* image) noexcept;
    // Task thread, cycle end: hands over the task's %Q bindings and the %M bindings it changed.
    void copyOut(const bytecode::Module& m, const bytecode::TaskEntry& task, const std::uint8_t* image) noexcept;

    // Base cycle: merges the newest outputs of the task into the areas (true when there were new ones).
    bool merge(const bytecode::Module& m, const bytecode::TaskEntry& task, std::vector<std::uint8_t>& outputs,
               std::vector<std::uint8_t>& memory) noexcept;
    // Base cycle: publishes the areas as the task's next inputs.
    void publish(const std::vector<std::uint8_t>& inputs, const std::vector<std::uint8_t>& memory) noexcept;

private:
    TripleBuffer in_, out_;
    std::size_t inputBytes_ = 0, outputBytes_ = 0, memoryBytes_ = 0;
    // Task thread: the output generation last handed over, and per binding the generation in
    // which the program changed it and the base has not merged yet (0: none).
    std::uint64_t generation_ = 0;
    std::vector<std::uint64_t> pending_;
    // Base cycle: the newest output generation merged.
    std::uint64_t merged_ = 0;
};

// One exchange per task, allocated together off the cycle.
struct TaskExchanges {
    std::unique_ptr<TaskExchange[]> tasks;
    std::size_t count = 0;

    void size(const bytecode::Module& m, std::size_t inputBytes, std::size_t outputBytes, std::size_t memoryBytes);
    [[nodiscard]] TaskExchange& operator[](std::size_t t) noexcept { return tasks[t]; }
};

} // namespace takt::engine
