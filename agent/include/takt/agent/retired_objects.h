#pragma once
// What a debugging session unlinks from a program's StopMap (compiled conditions and logpoints,
// flow recorders) as it edits breakpoints, toggles flow control or ends: a task thread in a run
// that began before the unlink may still read it, so it is freed once every thread's run count
// (vm::Debugger::runCount) has moved on from the count read after the unlink, or was even then.
// Without it every edit of every session stayed in memory until the next online change. The
// control thread's.
#include <cstdint>
#include <memory>
#include <vector>

namespace takt::agent {

class RetiredObjects {
public:
    // `counts`: each thread's run count, read after the objects were unlinked.
    void retire(std::vector<std::shared_ptr<const void>> objects, std::vector<std::uint32_t> counts);
    // Frees what no run can read any more, by each thread's count `now`. A different number of
    // threads than at retire(): an online change swapped the program in between, while every
    // thread stood at its cycle boundary, so no run from before goes on.
    void reclaim(const std::vector<std::uint32_t>& now);
    [[nodiscard]] bool empty() const noexcept { return batches_.empty(); }
    [[nodiscard]] std::size_t objects() const noexcept;

private:
    struct Batch {
        std::vector<std::shared_ptr<const void>> objects;
        std::vector<std::uint32_t> counts;
    };
    std::vector<Batch> batches_;
};

} // namespace takt::agent
