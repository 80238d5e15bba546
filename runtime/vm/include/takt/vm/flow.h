#pragma once
// takt_vm: flow control, what CODESYS engineers open beside breakpoints: for one POU, the values of
// the variables each statement read and wrote the last time the task that runs it ran it, so the
// editor can show them inline while the program keeps running.
//
// planFlow reads the POU's code once, off the scan thread: each statement's instructions name the
// data they read (s operands) and write (d operands), so which variables a statement touches comes
// from the code that runs, not from a second reading of the source. An address in the instance or
// in the globals is named after the variable (or member, or element of an array at a constant
// index) it falls in; the compiler's temporaries and data reached through a reference or a
// computed index have no name and are left out.
//
// A FlowRecorder is filled by the one task thread that first runs the POU (a second thread that
// runs it too is ignored), without lock or allocation: at each statement start it copies what the
// statement reads, and when the statement is done (the next statement start of the same call, or
// the call's return) what it wrote. Reads that come after a call in the statement's code (an FB's
// outputs) are copied when it is done as well, unless the statement writes them too. When a run
// of the task that executed the POU ends, its record is published through a triple buffer; the
// control thread takes the latest.
//
//   vm::FlowPlan plan;  std::string why;
//   if (!vm::planFlow(module, pou, plan, why)) ...
//   auto flow = std::make_shared<vm::FlowRecorder>(std::move(plan), vm::kAnyInstance);
//   stops.setFlow(flow.get());            // the thread's Debugger records while attached
//   ... vm::FlowRecorder::View v; if (flow->latest(v)) ...
#include "takt/bytecode/module.h"
#include "takt/vm/debug_expr.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace takt::vm {

// A datum a statement reads or writes. `tag` is the operand's base (kTagAbsolute, kTagThis or
// kTagFrame);
// `slot` where its bytes are kept in a record.
struct FlowAccess {
    std::string name; // "level", "acc.Q", "GVL.speed", "buf[3]"
    std::uint32_t type = bytecode::kNone;
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
    std::uint32_t slot = 0;
    std::uint8_t tag = 0;
    bool written = false;
    bool late = false; // a read after a call: copied when the statement is done
};

// One statement start of the POU (a line may hold several, a FOR's header code is in two places).
struct FlowStatement {
    std::uint32_t pc = 0;
    std::uint32_t file = bytecode::kNone;
    std::uint32_t line = 0;
    std::uint32_t firstAccess = 0;
    std::uint32_t accessCount = 0;
};

struct FlowPlan {
    std::uint32_t pou = bytecode::kNone;
    std::uint32_t codeBegin = 0;
    std::uint32_t codeEnd = 0;
    std::vector<FlowStatement> statements;
    std::vector<FlowAccess> accesses;
    std::uint32_t valueBytes = 0;
};

// The largest value flow control copies (a STRING[254] and its terminator); a larger one (a whole
// STRUCT or ARRAY copied at once) is left out.
inline constexpr std::uint32_t kMaxFlowValue = 256;
inline constexpr std::uint32_t kAnyInstance = bytecode::kNone;

// The plan of POU `pou`; false with `why` for a POU without code of its own (a native, an
// interface method) or without statements.
[[nodiscard]] bool planFlow(const bytecode::Module& module, std::uint32_t pou, FlowPlan& out, std::string& why);

class FlowRecorder {
public:
    // `instance`: record only calls on the instance at that image offset (kAnyInstance: every call).
    FlowRecorder(FlowPlan plan, std::uint32_t instance);
    FlowRecorder(const FlowRecorder&) = delete;
    FlowRecorder& operator=(const FlowRecorder&) = delete;

    [[nodiscard]] const FlowPlan& plan() const noexcept { return plan_; }

    // ---- the running thread (Debugger), `thread` naming it ----
    void runStarted(const void* thread) noexcept;
    // At a statement start of the POU (`pc`), at call depth `depth`, standing at `at`: its reads
    // (after any halt there).
    void statement(const void* thread, std::uint32_t pc, std::uint32_t depth, const ExprScope& at) noexcept;
    // The statement open at call depth `depth` is done: its writes and late reads. At the next
    // statement start of that call (before any halt there, so a value set while halted is not
    // shown as written) and at its return (before the caller's instance is back).
    void statementDone(const void* thread, std::uint32_t depth, const ExprScope& at) noexcept;
    void runEnded(const void* thread) noexcept;

    // ---- the reader (one thread) ----
    // The last published record: per statement how often it ran in that run and in which order it
    // last did (larger: later), and the value slots. False while none is published.
    struct View {
        std::uint64_t run = 0; // runs published so far, this one included
        std::span<const std::uint32_t> counts;
        std::span<const std::uint32_t> order;
        std::span<const std::uint8_t> values;
    };
    [[nodiscard]] bool latest(View& out) noexcept;
    // The thread that records (the Debugger that first ran the POU since the recorder was set; null
    // while none has).
    [[nodiscard]] const void* owner() const noexcept { return owner_.load(std::memory_order_acquire); }

private:
    struct Record {
        std::uint64_t run = 0;
        std::vector<std::uint32_t> counts;
        std::vector<std::uint32_t> order;
        std::vector<std::uint8_t> values;
    };
    static constexpr std::uint32_t kFresh = 4; // in middle_: a record the reader has not taken

    [[nodiscard]] bool owns(const void* thread) noexcept;
    void copy(std::uint32_t statement, bool done, const ExprScope& at) noexcept;

    FlowPlan plan_;
    std::uint32_t instance_;
    std::vector<std::uint32_t> statementAt_; // per code word of the POU: its statement index or kNone
    std::array<Record, 3> records_;
    std::atomic<const void*> owner_{nullptr};
    // The writer's: the record it fills, whether it has begun (counts cleared), the order counter,
    // the runs published, the statement of the POU each call depth is in (kNone: none).
    std::uint32_t back_ = 0;
    bool begun_ = false;
    std::uint32_t stamp_ = 0;
    std::uint64_t runs_ = 0;
    std::array<std::uint32_t, bytecode::kMaxCallDepth + 1> open_{};
    std::atomic<std::uint32_t> middle_{1};
    std::uint32_t front_ = 2; // the reader's
};

} // namespace takt::vm
