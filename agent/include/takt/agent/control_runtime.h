#pragma once
// The control endpoint's methods on the live runtime (PROTOCOLS.md "Control endpoint"): a
// ControlTarget over the scan loop. Everything here runs on the control server's thread; it
// reaches the scan thread only through ScanLoop::submit (commands applied at the next cycle
// boundary) and the loop's seqlocked snapshot, histograms and event ring, so no request can make
// the scan thread wait.
//
// A method that needs the scan thread (run control, var/io access, forces, bytecode.reload)
// prepares everything off the cycle — paths resolved, values decoded and range-checked, a new
// program decoded, verified, initialised and its transfer plan computed — submits one command
// and answers when the loop reports it done. What the scan thread hands back (the replaced
// program, force table, retain buffer) is freed here.
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "takt/agent/control.h"
#include "takt/agent/opcua_server.h"
#include "takt/agent/retired_objects.h"
#include "takt/agent/sparkplug_node.h"
#include "takt/agent/value_feed.h"
#include "takt/engine/overrun_digest.h"
#include "takt/engine/path_index.h"
#include "takt/engine/scan_loop.h"
#include "takt/engine/value_watch.h"
#include "takt/vm/debug.h"

namespace takt::agent {

struct DriverHealthView {
    std::string name;
    std::string health; // ok | degraded | faulted
    std::string reason;
};

struct RuntimeControlOptions {
    bool byteAddressing = false;          // [build] address_mode = "byte": how %QW3 maps to bytes
    std::int64_t commandTimeoutMs = 5000; // a command the loop has not applied by then is an error
    // The drivers' latest health (the runtime refreshes it off the cycle); may be empty.
    std::function<std::vector<DriverHealthView>()> driverHealth;
    // How program bodies run ("native", "interpreter (native: …)"); runtime.status reports it.
    std::function<std::string()> execution;
    // The native tier's compile of the running program (all 0 on the interpreter); an online
    // change's reply reports it for the new program.
    struct NativeCompileView {
        double ms = 0;
        std::uint32_t pousCompiled = 0; // machine code generated
        std::uint32_t pousReused = 0;   // machine code from the code cache
    };
    std::function<NativeCompileView()> nativeCompile;
    // [runtime.control] debug_enabled: the debug.* methods answer (docs/debugging.md); off, they
    // refuse.
    bool debugEnabled = false;
    // The run's log: one line per applied online change naming what it kept, converted and
    // re-initialised (transfer_report_json.h). May be empty.
    std::function<void(const std::string&)> changeLog;
    // Keeps the program an online change applied, and the one it replaced (null: none), for the
    // next start (applied_program.h); returns the error, empty when kept. Empty: nothing is kept
    // and a restart runs the project's program again.
    std::function<std::string(const bytecode::Module& applied, const bytecode::Module* replaced)> keepApplied;
    // What runtime.rollback restores before any online change of this run: the program the
    // kept one replaced (null: nothing to roll back to until an online change).
    std::shared_ptr<const bytecode::Module> rollbackProgram;
    std::string rollbackHash;
    // The OPC UA server process's health ([runtime.opcua]); empty: runtime.status has no "opcua".
    std::function<OpcuaHealth()> opcua;
    // The Sparkplug edge node's health ([runtime.sparkplug]); empty: runtime.status has no
    // "sparkplug".
    std::function<SparkplugHealth()> sparkplug;
};

// What a logpoint's record becomes (control_debug.cpp).
struct DebugLogFormat;

class RuntimeControl final : public ControlTarget, public ValueFeed {
public:
    RuntimeControl(engine::ScanLoop& loop, engine::Engine& engine, RuntimeControlOptions options);
    ~RuntimeControl() override;
    RuntimeControl(const RuntimeControl&) = delete;
    RuntimeControl& operator=(const RuntimeControl&) = delete;

    [[nodiscard]] std::span<const ControlMethod> methods() const override { return methodTable(); }
    void poll(std::vector<std::string>& events) override;
    [[nodiscard]] int completionFd() const override { return loop_.commandWakeFd(); }
    [[nodiscard]] std::chrono::steady_clock::time_point pollDeadline() const override;
    [[nodiscard]] ValueFeed* valueFeed() override { return this; }
    // The debugging session ends with its connection: breakpoints removed, halted tasks resumed.
    void sessionClosed(std::uint64_t session) override;
    // The runtime's methods (PROTOCOLS.md), the same for every instance: docs/control.md is
    // checked against it.
    [[nodiscard]] static std::span<const ControlMethod> methodTable();

    // For the run's log line and tests: the hash of the program now running.
    [[nodiscard]] const std::string& programHash() const { return hash_; }
    // For tests: the debugging sessions' unlinked objects not yet freed (RetiredObjects).
    [[nodiscard]] std::size_t retiredObjects() const { return retired_.objects(); }

    struct Pending; // a submitted command waiting for the scan loop
    struct Forced;  // one forced variable or address
    struct Watched; // one subscribed variable (control_values.cpp)
    struct Trace;   // one trace (control_trace.cpp)

    // ValueFeed: the subscribed variables, published by the scan thread (control_values.cpp).
    [[nodiscard]] std::vector<std::string> match(std::string_view pattern, std::size_t limit) const override;
    [[nodiscard]] bool acquire(std::span<const std::string> names, std::string_view member,
                               std::vector<std::uint32_t>& slots, ControlAnswer& error) override;
    void release(std::span<const std::uint32_t> slots) override;
    [[nodiscard]] bool refresh() override;
    [[nodiscard]] std::uint64_t cycle() const override { return sampleCycle_; }
    [[nodiscard]] std::span<const std::uint8_t> bytes(std::uint32_t slot) const override;
    void render(std::uint32_t slot, std::span<const std::uint8_t> bytes, bool iec, std::string& out,
                std::optional<double>& number) const override;

private:
    void status(ControlReplyFn& reply);
    void stats(ControlReplyFn& reply);
    void histogram(ControlReplyFn& reply);
    void runControl(const std::string& method, const rapidjson::Value& params, ControlReplyFn& reply);
    void varRead(const rapidjson::Value& params, ControlReplyFn& reply);
    void varList(const rapidjson::Value& params, ControlReplyFn& reply);
    void varWrite(const rapidjson::Value& params, ControlReplyFn& reply);
    void varWriteMany(const rapidjson::Value& params, ControlReplyFn& reply);
    void ioRead(const rapidjson::Value& params, ControlReplyFn& reply);
    void readTargets(const rapidjson::Value& params, bool io, ControlReplyFn& reply);
    void ioWrite(const rapidjson::Value& params, ControlReplyFn& reply);
    void force(const std::string& method, const rapidjson::Value& params, ControlReplyFn& reply);
    void listForced(ControlReplyFn& reply);
    void reload(const rapidjson::Value& params, ControlReplyFn& reply);
    void rollback(const rapidjson::Value& params, ControlReplyFn& reply);
    ControlAnswer finishReload(Pending& done);
    // An online change (bytecode.reload, runtime.rollback), control_reload.cpp.
    struct ChangeRequest {
        bool dryRun = false;
        bool expected = false;    // expected_hash given
        std::string expectedHash; // the program that must be running
        std::string key;          // idempotency_key
    };
    [[nodiscard]] bool changeParams(const rapidjson::Value& params, ChangeRequest& out, ControlReplyFn& reply) const;
    [[nodiscard]] bool changeRefused(const ChangeRequest& request, ControlReplyFn& reply);
    void rejectChange(const ChangeRequest& request, const std::string& why, ControlReplyFn& reply);
    void applyChange(const ChangeRequest& request, std::shared_ptr<const bytecode::Module> module,
                     const std::string& hash, ControlReplyFn& reply);

    // debug.* (control_debug.cpp).
    void debugSetBreakpoints(const rapidjson::Value& params, ControlReplyFn& reply);
    void debugRun(const std::string& method, const rapidjson::Value& params, ControlReplyFn& reply);
    void debugDetach(ControlReplyFn& reply);
    void debugThreads(ControlReplyFn& reply);
    void debugStackTrace(const rapidjson::Value& params, ControlReplyFn& reply);
    void debugVariables(const rapidjson::Value& params, ControlReplyFn& reply);
    void debugEvaluate(const rapidjson::Value& params, ControlReplyFn& reply);
    void debugSetVariable(const rapidjson::Value& params, ControlReplyFn& reply);
    void debugSetFunctionBreakpoints(const rapidjson::Value& params, ControlReplyFn& reply);
    void debugSetExceptionBreakpoints(const rapidjson::Value& params, ControlReplyFn& reply);
    // Flow control (control_flow.cpp): the POU the session watches, set again in the program an
    // online change brings while it has that POU (carryFlow), off when the session ends.
    void debugSetFlow(const rapidjson::Value& params, ControlReplyFn& reply);
    void debugFlowValues(ControlReplyFn& reply);
    [[nodiscard]] std::shared_ptr<vm::FlowRecorder> planFlow(const bytecode::Module& m, const std::string& pou,
                                                             const std::string& instance, std::string& why) const;
    void hangFlow(vm::StopMap& stops, std::shared_ptr<vm::FlowRecorder> recorder);
    void carryFlow(const bytecode::Module& m, vm::StopMap& next);
    void stopFlow();
    // What the session unlinked from the running stop map, freed once no run can read it
    // (RetiredObjects); each task thread's run count.
    void retire(std::vector<std::shared_ptr<const void>> objects);
    [[nodiscard]] std::vector<std::uint32_t> runCounts() const;
    // trace.* (control_trace.cpp).
    void traceStart(const rapidjson::Value& params, ControlReplyFn& reply);
    void traceList(ControlReplyFn& reply);
    void traceRead(const rapidjson::Value& params, ControlReplyFn& reply);
    void traceStop(const rapidjson::Value& params, ControlReplyFn& reply);
    void traceRemove(const rapidjson::Value& params, ControlReplyFn& reply);
    [[nodiscard]] Trace* findTrace(const rapidjson::Value& params, ControlReplyFn& reply);
    [[nodiscard]] std::string traceJson(const Trace& t) const;
    [[nodiscard]] std::string traceEnded(const Trace& t) const;
    void detachTrace(Trace& t);
    void detachTraces();
    // An online change: each trace's variables in the program it loads (module_ by then), and
    // after it, what became of the traces.
    void traceLayouts(std::span<engine::TraceLayout> out);
    void settleTraces(const Pending& done, bool applied);
    void emitTraceEvents(std::vector<std::string>& events);
    [[nodiscard]] bool debugRefused(ControlReplyFn& reply);
    [[nodiscard]] bool claimDebugger(ControlReplyFn& reply);
    [[nodiscard]] std::size_t debugThreadCount() const;
    [[nodiscard]] vm::Debugger* threadDebugger(std::size_t t) const;
    [[nodiscard]] std::string threadName(std::size_t t) const;
    void attachDebuggers();
    void releaseDebugger();
    [[nodiscard]] vm::Debugger* haltedThread(const rapidjson::Value& params, ControlReplyFn& reply);
    // params.thread's halted debugger and its frame params.frame (0: innermost), or an error answer.
    [[nodiscard]] const vm::HaltFrame* haltedFrame(const rapidjson::Value& params, ControlReplyFn& reply,
                                                   vm::Debugger*& debugger);
    // A line breakpoint as asked: its line, and its hit condition, condition and log message as
    // the client wrote them ("": none).
    struct Breakpoint {
        std::uint32_t line = 0;
        std::string hitCondition;
        std::string condition;
        std::string logMessage;
    };
    [[nodiscard]] std::string applyBreakpoints(const bytecode::Module& m, vm::StopMap& stops, const std::string& file,
                                               const std::vector<Breakpoint>& lines);
    // Why no breakpoint can halt now ("" when one can): no task cycles.
    [[nodiscard]] std::string haltsNot() const;
    // Whether the session makes the tasks interpret their programs (a breakpoint, an exception
    // filter, a halted task; a pending step or pause too, which vm_runner.cpp sees on the task's
    // thread), which a natively compiled program's runtime.status `execution` says.
    [[nodiscard]] bool debuggingNative() const;
    // Function breakpoints (control_breakpoints.cpp): a POU's name and the rule of its first
    // statement's breakpoint (its `line` unused), set in `stops` after the line breakpoints.
    [[nodiscard]] std::string applyFunctionBreakpoints(const bytecode::Module& m, vm::StopMap& stops);
    // Every breakpoint of the session set again in `stops`, the answers by file (and the function
    // breakpoints' in `functionAnswer`).
    std::map<std::string, std::string> rebuildBreakpoints(const bytecode::Module& m, vm::StopMap& stops,
                                                          std::string* functionAnswer = nullptr);
    [[nodiscard]] bool breakpointRule(const bytecode::Module& m, const Breakpoint& b, const vm::ResolvedLine& r,
                                      const vm::HitCondition& hit, vm::StopMap& stops, std::uint32_t& slot,
                                      std::string& why);
    void carryBreakpoints(const bytecode::Module& m, vm::StopMap& next);
    [[nodiscard]] std::string haltedJson() const;
    [[nodiscard]] bool anyHalted() const;
    void emitDebugEvents(std::vector<std::string>& events);
    void emitLogOutput(std::vector<std::string>& events); // control_logpoint.cpp

    // Submits `pending->command` (its result block and buffers already set); the reply comes
    // from poll() once the loop has applied it. False (and an error reply) when it cannot be
    // submitted.
    bool submit(std::unique_ptr<Pending> pending, ControlReplyFn& reply);
    void complete(Pending& p);
    void answerSteps();
    // A force table for the current forces against `module` (data-image entries re-resolved
    // by path); paths that no longer resolve are listed in `lost`.
    [[nodiscard]] std::unique_ptr<engine::ForceTable> buildForces(const bytecode::Module& module,
                                                                  std::vector<std::string>* lost) const;
    // The index of module_'s variable paths, built on the first resolve after a change of program
    // (on this thread, never the scan thread): var.* and subscriptions resolve through it.
    [[nodiscard]] const engine::PathIndex& paths() const;
    void emit(std::vector<std::string>& events, const std::string& type, const std::string& fields);
    void translateScanEvents(std::vector<std::string>& events);
    void emitOverrunSummary(std::vector<std::string>& events, std::int64_t nowNs);

    engine::ScanLoop& loop_;
    engine::Engine& engine_;
    RuntimeControlOptions options_;
    std::int64_t startedNs_ = 0;
    std::shared_ptr<const bytecode::Module> module_; // the program the next command applies to
    std::string hash_;
    mutable std::shared_ptr<const engine::PathIndex> paths_; // of module_ (paths())
    // The program the last applied online change replaced: what runtime.rollback brings back.
    std::shared_ptr<const bytecode::Module> previous_;
    std::string previousHash_;
    std::deque<std::unique_ptr<Pending>> pending_;
    std::deque<std::unique_ptr<Pending>> stepping_; // steps applied, answered once their cycles ran
    std::vector<Forced> forced_;
    std::unique_ptr<const engine::ForceTable> forces_; // the table the scan thread uses
    bool reloadInFlight_ = false;
    std::map<std::string, ControlAnswer> idempotent_; // idempotency_key -> first answer
    std::deque<std::string> idempotentOrder_;
    // Event translation state.
    std::uint64_t eventsSeen_ = 0;
    engine::OverrunDigest overruns_; // repeated cycle_overrun events summed up per interval
    std::uint64_t retainSavesSeen_ = 0, retainFailuresSeen_ = 0;
    std::string healthSeen_;
    bool healthPolled_ = false;
    std::int64_t nextHealthNs_ = 0;
    bool startedSent_ = false;
    std::vector<std::string> localEvents_; // produced by calls (reload_rejected), sent by poll
    // Value subscriptions: one slot per subscribed path (shared), the watch the scan thread
    // publishes them into (the last one submitted), and the last publication read.
    void rebuildWatch();
    std::vector<Watched> watched_;
    std::shared_ptr<engine::ValueWatch> watch_;
    std::vector<std::int32_t> watchIndex_;               // slot -> range of watch_, -1: not in it
    std::shared_ptr<const bytecode::Module> resolvedIn_; // the program the slots were resolved in
    bool watchDirty_ = false;
    std::vector<std::uint8_t> sample_;
    std::uint64_t sampleCycle_ = 0;
    // Debugging: the session that owns the debugger (0: none), its breakpoints by file as asked
    // (set again in the new program at an online change), the stop map of the program the next
    // command applies to, and each task's halt count last reported.
    std::uint64_t debugOwner_ = 0;
    std::map<std::string, std::vector<Breakpoint>> breakpoints_;
    std::vector<std::pair<std::string, Breakpoint>> functionBreakpoints_;
    std::uint32_t exceptionTraps_ = 0; // the exception breakpoints' trap mask (vm::kExceptionFilters)
    vm::StopMap* stops_ = nullptr;
    std::vector<std::uint32_t> haltsSeen_;
    // Logpoints: the text around each one's values by id, and each task's dropped records seen.
    std::map<std::uint32_t, std::shared_ptr<const DebugLogFormat>> logFormats_;
    std::uint32_t nextLogId_ = 1;
    std::vector<std::uint64_t> logsDroppedSeen_;
    // Conditions, logpoints and flow recorders unlinked from the running stop map, not yet freed.
    RetiredObjects retired_;
    // Flow control: the POU and instance path as the session named them ("": none) and why an
    // online change ended it; the recorder is the stop map's (stops_->flow()), so a refused change
    // leaves the running program's in place.
    std::string flowPou_, flowInstance_, flowEnded_;
    // Traces by slot of the scan loop (ScanLoop::traceSlot), and the id the next one gets.
    std::array<std::unique_ptr<Trace>, engine::kMaxTraces> traces_;
    std::uint32_t nextTraceId_ = 1;
};

} // namespace takt::agent
