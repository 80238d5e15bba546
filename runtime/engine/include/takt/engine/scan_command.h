#pragma once
// Commands the control thread hands to the scan thread (ARCHITECTURE.md "Threads"). A command is
// a small trivially copyable record that travels through the SpscQueue; everything it points to
// (ranges, bytes, a force table, a prepared online change, a result block) is owned by the
// submitter, built off the scan thread, and must stay alive until the scan loop reports the
// command done. The scan thread applies commands at the cycle boundary — after the inputs are
// read, before the program runs — and never allocates, locks or frees for them: what it replaces
// (a force table, the previous program) goes back to the submitter, in the PreparedChange the
// command carried, to be freed there.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "takt/engine/engine.h"
#include "takt/engine/transfer.h"

namespace takt::engine {

enum class ImageArea : std::uint8_t { Data, Input, Output, Memory };

class ValueWatch;   // value_watch.h
struct TraceLayout; // trace_recorder.h

// Bytes of the data image or of a process image area; `isBit` addresses one bit (%IX0.3), whose
// value travels as one byte 0/1.
struct ImageRange {
    ImageArea area = ImageArea::Data;
    bool isBit = false;
    std::uint8_t bit = 0;
    std::uint32_t offset = 0;
    std::uint32_t size = 0; // bytes; 1 for a bit

    [[nodiscard]] std::uint32_t valueBytes() const noexcept { return isBit ? 1u : size; }
};

// Forced values: written over the image every cycle — %I after the inputs are read, data-image
// variables after the inputs are copied in and again before the outputs are copied out, %Q/%M
// after the outputs are copied out — so neither the field nor the program can change them.
// A forced %I value hides the field's value from the program but does not replace it: the
// field's bytes are kept in `field` and put back before the drivers read the next inputs, so a
// driver that writes only what changed keeps its value and an unforce shows the field again.
// Immutable once handed to the scan thread (but for `field`, the scan thread's scratch); the
// control side builds a new one for every change.
struct ForceEntry {
    ImageRange range;
    std::uint32_t value = 0; // offset of the forced bytes in ForceTable::values (and `field`)
};

struct ForceTable {
    std::vector<ForceEntry> entries;
    std::vector<std::uint8_t> values;
    // Sized like `values` by the builder (sizeFieldScratch); a table without it overwrites %I.
    mutable std::vector<std::uint8_t> field;

    void sizeFieldScratch() { field.assign(values.size(), 0); }
};

// Writes the forced values of `area` into `base` (`size` bytes); entries outside are skipped.
void applyForces(const ForceTable& table, ImageArea area, std::uint8_t* base, std::size_t size) noexcept;
// The %I entries: saveForcedInputs keeps the bytes they cover in `table.field`; restoreForcedInputs
// writes them back (in reverse order, so overlapping entries end with the oldest bytes).
void saveForcedInputs(const ForceTable& table, const std::uint8_t* base, std::size_t size) noexcept;
void restoreForcedInputs(const ForceTable& table, std::uint8_t* base, std::size_t size) noexcept;
// Copies one range between an image and packed value bytes (a bit as one byte 0/1). Inline, with
// the usual widths as fixed-size copies: the scan thread calls it per subscribed or traced
// variable every cycle, where a call to memcpy of run-time length was most of the cost.
inline void readRange(const ImageRange& r, const std::uint8_t* base, std::uint8_t* out) noexcept {
    const std::uint8_t* p = base + r.offset;
    if (r.isBit) {
        *out = static_cast<std::uint8_t>((*p >> r.bit) & 1u);
        return;
    }
    switch (r.size) {
    case 1: *out = *p; break;
    case 2: std::memcpy(out, p, 2); break;
    case 4: std::memcpy(out, p, 4); break;
    case 8: std::memcpy(out, p, 8); break;
    default: std::memcpy(out, p, r.size); break;
    }
}
void writeRange(const ImageRange& r, const std::uint8_t* in, std::uint8_t* base) noexcept;

enum class ScanCommandKind : std::uint8_t {
    Pause,     // stop running the program; outputs hold their values
    Resume,    // run again after Pause (or a finished Step)
    Step,      // while paused: run `count` cycles, then pause again
    Stop,      // stop running the program and latch the safe state
    Start,     // after Stop: release the safe state and run again
    Restart,   // warm or cold restart of the program (also clears a fault halt)
    Read,      // copy `ranges` into `readBytes` (packed in order)
    Write,     // copy `writeBytes` (packed in order) into `ranges`
    SetForces, // replace the force table with `forces` (nullptr: none)
    Reload,    // apply `change` (Engine::prepareChange) and `forces`
    SetWatch,  // publish `watch` after every cycle from now on (nullptr: nothing)
};

// Halted: after a fault (the control endpoint calls it "faulted"); Stopped: by runtime.stop or
// before/after the loop runs; Paused: by runtime.pause (outputs hold, no safe state).
enum class ScanState : std::uint8_t { Stopped, Running, Halted, Paused };

// Filled by the scan thread before the command counts as done; read by the submitter after.
struct CommandResult {
    bool ok = false;
    const char* refusal = nullptr; // static text when !ok
    std::uint64_t cycle = 0;       // the cycle count when it was applied
    // The state the command left (a refused one: the state it found). The published snapshot
    // may still show the state of the cycle before, so an answer takes the state from here.
    ScanState state = ScanState::Stopped;
    TransferReport change; // Reload
};

struct ScanCommand {
    ScanCommandKind kind = ScanCommandKind::Pause;
    RestartMode mode = RestartMode::Warm; // Restart
    std::uint32_t count = 0;              // Step
    const ImageRange* ranges = nullptr;   // Read / Write
    std::uint32_t rangeCount = 0;
    const std::uint8_t* writeBytes = nullptr;
    std::uint8_t* readBytes = nullptr;
    // SetForces / Reload. The submitter owns the table: the one it replaces may be freed once
    // this command is done (commands apply in order).
    const ForceTable* forces = nullptr;
    // Reload: the prepared change, owned by the submitter. Applied, it holds what was replaced
    // (the old program, the previous retain hand-off buffer, …), to be freed by the submitter.
    PreparedChange* change = nullptr;
    // Reload: where each trace slot's variables are in the new program (kMaxTraces layouts,
    // trace_recorder.h; a layout without a module ends that slot's trace). nullptr: every trace
    // attached when the change applies ends.
    const TraceLayout* traces = nullptr;
    // SetWatch: owned by the submitter; the one it replaces may be freed once this is done.
    ValueWatch* watch = nullptr;
    CommandResult* result = nullptr;
};

} // namespace takt::engine
