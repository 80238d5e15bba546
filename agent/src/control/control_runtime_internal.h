#pragma once
// Shared by the control_runtime*.cpp files: what a submitted command carries while the scan
// loop applies it, and the small JSON helpers the methods use.
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rpc/rpc_json.h"
#include "takt/agent/control_runtime.h"
#include "takt/engine/values.h"

namespace takt::agent {

namespace ctl {

// Why a breakpoint is unverified when the stop map's vm::StopMap::kSlots slots are in use (a
// breakpoint with a hit condition, a condition or a log message takes one, and so does a plain one
// on the statement of such a breakpoint).
inline constexpr std::string_view kSlotsUsedUp =
    "more than 255 breakpoints with a hit condition, condition or log message, or beside one on its statement";
static_assert(vm::StopMap::kSlots == 255, "kSlotsUsedUp names the number of slots");

// "-32602 on <member>: <message>".
[[nodiscard]] ControlAnswer badParam(std::string_view member, const std::string& message);
// A required string member; null when missing or not a string.
[[nodiscard]] const rapidjson::Value* member(const rapidjson::Value& params, const char* name);
// An optional string member's text ("" when missing).
[[nodiscard]] std::string text(const rapidjson::Value& params, const char* name);
[[nodiscard]] std::string jsonText(const rapidjson::Value& v);
[[nodiscard]] std::string quoted(std::string_view s);
// The module's file a client names: the same text, or a path that ends with it at a '/' (a client
// sends the absolute path of its editor's file; program.stbc keeps the project's relative one).
// kNone when none or more than one file match (control_debug.cpp).
[[nodiscard]] std::uint32_t fileIndex(const bytecode::Module& m, std::string_view name);

// What var.* and io.* act on: a variable resolved by path, or a direct address.
struct Target {
    std::string name;
    engine::ImageRange range;
    std::uint32_t type = bytecode::kNone;                 // a variable's type; kNone for an address
    bytecode::ValueKind kind = bytecode::ValueKind::Bool; // an address's value kind
    bool readOnly = false;
};
// Resolves a variable path in the indexed program; a -32602 naming `member` when it does not resolve.
[[nodiscard]] bool resolveVar(const engine::PathIndex& paths, const std::string& name, Target& t, ControlAnswer& error,
                              std::string_view member);
// The target of a resolved variable, named `name`.
[[nodiscard]] Target targetOf(const bytecode::Module& m, const std::string& name, const engine::VarRef& ref);
// One write (var.write, debug.setVariable): the value of params.value decoded as var.write checks
// it (not a constant, the target's type and range), then a Write command in `p`; a constant is
// refused naming the param `member` (the target's).
[[nodiscard]] bool prepareWrite(const bytecode::Module& m, const Target& t, const rapidjson::Value& params,
                                RuntimeControl::Pending& p, ControlAnswer& error, std::string_view member = "name");
// The answer to a write: the target under `key` and the value written.
[[nodiscard]] ControlAnswer writeAnswer(const char* key, const Target& t, RuntimeControl::Pending& done);
// A value as var.read renders it: the typed JSON, or (iec) its IEC literal text as a JSON string.
void encodeTyped(const bytecode::Module& m, const Target& t, const std::uint8_t* data, rapidjson::Value& v,
                 engine::JsonAllocator& alloc);
// A typed value's text: the JSON itself, or (iec) its IEC literal text as a JSON string.
[[nodiscard]] std::string renderTyped(const rapidjson::Value& v, bool iec);
[[nodiscard]] std::string encodeFor(const bytecode::Module& m, const Target& t, const std::uint8_t* data,
                                    bool iec = false);

} // namespace ctl

struct RuntimeControl::Pending {
    engine::ScanCommand command;
    engine::CommandResult result;
    std::vector<engine::ImageRange> ranges;
    std::vector<std::uint8_t> bytes;                  // Read destination / Write source
    std::unique_ptr<const engine::ForceTable> forces; // SetForces / Reload: the table handed over
    engine::PreparedChange change;                    // Reload: the new program in, the old one back
    std::shared_ptr<engine::ValueWatch> watch;        // SetWatch: the watch it replaces, freed when done
    std::uint64_t ticket = 0;
    std::uint64_t stepUntil = 0; // Step: the cycle count at which the program pauses again
    std::int64_t deadlineNs = 0;
    bool replied = false;
    ControlReplyFn reply;
    // Builds the answer once the loop has applied the command (result.ok) — the refusal is
    // answered generically.
    std::function<ControlAnswer(Pending&)> finish;
    // Reload: the program that will be current, and what the reply needs.
    std::shared_ptr<const bytecode::Module> module;
    std::string hash;
    std::string idempotencyKey;
    std::vector<std::string> forcesLost;
    vm::StopMap* stopsBefore = nullptr; // Reload: the running program's, current again if refused
    // Reload: the running program, current again if the change is refused, else the one
    // runtime.rollback brings back.
    std::shared_ptr<const bytecode::Module> moduleBefore;
    std::string hashBefore;
    // Reload: each trace slot's variables in the new program (RuntimeControl::traceLayouts).
    std::array<engine::TraceLayout, engine::kMaxTraces> traces{};
};

struct RuntimeControl::Forced {
    std::string name;     // the path or canonical address as listed by var.forced
    bool address = false; // io.force (fixed process-image range) or var.force (a path)
    engine::ImageRange range;
    std::uint32_t type = bytecode::kNone; // var.force: type id in the module it was resolved in
    std::string signature;                // var.force: type signature, must match after a reload
    std::vector<std::uint8_t> value;
};

// One subscribed variable: a slot shared by every subscription of its path (control_values.cpp).
struct RuntimeControl::Watched {
    ctl::Target target;
    std::string signature;   // its type's, which an online change must keep for the slot to stay
    std::uint32_t users = 0; // subscriptions holding the slot; 0: free
    bool gone = false;       // an online change removed the variable (or changed its type)
};

// One trace (control_trace.cpp).
struct RuntimeControl::Trace {
    std::uint32_t id = 0;
    std::string task; // the TASK's name ("" for a program without TASKs)
    std::vector<ctl::Target> targets;
    std::vector<std::string> signatures;
    std::string trigger; // as trace.list shows it: "P.start rising", "" without one
    std::unique_ptr<engine::TraceRecorder> recorder;
    std::shared_ptr<const bytecode::Module> program; // the program `targets` are resolved in
    // Prepared for the online change in flight: the targets in its program.
    std::vector<ctl::Target> nextTargets;
    std::string nextLoss;   // why the change in flight ends it ("" when it carries it)
    bool attached = false;  // trace.stop detaches; the samples stay until trace.remove
    bool announced = false; // trace_done sent
    std::string ended;      // why an online change ended it
};

// var.list's filter: a case-insensitive glob when `pattern` has * or ?, else a substring.
[[nodiscard]] bool varPatternMatches(std::string_view pattern, std::string_view path);
// Case-insensitive glob over the whole of `text`: `*` any run, `?` one character.
[[nodiscard]] bool globMatch(std::string_view pattern, std::string_view text);
// A surface's `expose` ([runtime.opcua], [runtime.sparkplug]): true when `path`, or the STRUCT or
// array it is a part of, matches one of `globs`; every path when there are none.
[[nodiscard]] bool exposedBy(const std::vector<std::string>& globs, std::string_view path);
// The variables var.list lists for `filter`, in its order: no temporaries, nothing of a
// TEST_PROGRAM instance.
[[nodiscard]] std::vector<const bytecode::VarEntry*> listedVariables(const bytecode::Module& m,
                                                                     std::string_view filter);

} // namespace takt::agent
