#pragma once
// The live runtime as one object: engine and VM runner, field drivers, scan loop, retain sink and
// control endpoint, started in one order and stopped in the reverse one. `takt run`,
// `takt bench jitter` and `takt bench io-latency` assemble the same parts through it, so their
// command files only parse options and print, and a benchmark measures the runtime users run.
#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "takt/agent/control.h"
#include "takt/agent/control_runtime.h"
#include "takt/agent/opcua_server.h"
#include "takt/agent/sparkplug_node.h"
#include "takt/agent/web.h"
#include "takt/engine/engine.h"
#include "takt/engine/retain.h"
#include "takt/engine/scan_loop.h"
#include "takt/engine/vm_runner.h"
#include "takt/io/driver_set.h"
#include "takt/io/io_config.h"

namespace takt::cli {

// The tier program bodies run on ([runtime] execution, --execution), when a native program
// starts ([runtime] native_start) and what is told when its background compile ends.
struct RuntimeTier {
    engine::Execution execution = engine::Execution::Interpreter;
    engine::NativeStart start = engine::NativeStart::Wait;
    engine::VmRunner::CompileListener onCompiled;
};

class LiveRuntime {
public:
    using Tier = RuntimeTier;
    // A fresh engine with the program loaded (initial values and init code run). nullptr with
    // `error` when the program faults while initialising.
    static std::unique_ptr<LiveRuntime> load(std::shared_ptr<const bytecode::Module> module, const std::string& hash,
                                             std::string& error, const RuntimeTier& tier = {});
    ~LiveRuntime(); // stop()
    LiveRuntime(const LiveRuntime&) = delete;
    LiveRuntime& operator=(const LiveRuntime&) = delete;

    [[nodiscard]] engine::Engine& engine() { return engine_; }
    [[nodiscard]] engine::CycleClock& clock() { return clock_; }
    // "native", "interpreter" or "interpreter (native: why not)" for the running program.
    [[nodiscard]] std::string executionStatus() const { return runner_->executionStatus(); }
    [[nodiscard]] double nativeCompileMs() const { return runner_->nativeCompileMs(); }
    [[nodiscard]] engine::VmRunner::NativePous nativePous() const { return runner_->nativePous(); }

    // RETAIN variables restored from `sink` and saved to it by the scan loop (every
    // save_interval_ms and once on stop); `warm` restores before the first cycle. Before startScan.
    // False with `message` when a warm start found nothing to restore (the run starts cold).
    bool attachRetain(std::unique_ptr<engine::RetainSink> sink, bool warm, std::string& message);

    // The field drivers from io.toml, configured for an output area of at least `minOutputBytes`
    // (the program's own when 0). Warnings are what configure accepted with one.
    bool configureDrivers(const io::IoConfig& io, std::size_t minOutputBytes, std::string& error);
    bool startDrivers(std::string& error);
    [[nodiscard]] io::DriverSet& drivers() { return drivers_; }
    [[nodiscard]] bool hasDrivers() const { return driversConfigured_; }

    // The scan loop on `io`: by default the drivers when configured, else no field I/O (a
    // benchmark of the loop and the program). Realtime settings that are refused degrade with a
    // warning (loop().warnings()).
    bool startScan(const engine::ScanOptions& options, std::string& error, engine::ProcessIo* io = nullptr);
    [[nodiscard]] engine::ScanLoop& loop() { return *loop_; }

    // The control endpoint on its own low-priority thread; it reaches the scan thread only through
    // the loop's command queue and snapshots. After startScan. An empty options.endpoint serves
    // no socket, only the web server's calls.
    // With `opcua`, the OPC UA server is made here, before the service serves a call: a call of
    // the service (runtime.status) reads opcua() on its own thread.
    struct OpcuaSetup {
        agent::OpcuaOptions options;
        agent::OpcuaProcess process;
    };
    bool serveControl(const agent::ControlOptions& options, agent::RuntimeControlOptions runtimeOptions,
                      std::string& error, std::optional<OpcuaSetup> opcua = std::nullopt);
    [[nodiscard]] agent::ControlServer* server() { return server_.get(); }

    // [runtime.web]: /metrics and /api/rpc (through the control service's methods and roles) on
    // threads of its own at low priority. After serveControl.
    bool serveWeb(agent::WebOptions options, std::string& error);
    [[nodiscard]] agent::WebServer* web() { return web_.get(); }
    // Starts the OPC UA server process ([runtime.opcua]) serveControl made, calling through the
    // control service.
    bool serveOpcua(std::string& error);
    [[nodiscard]] agent::OpcuaServer* opcua() { return opcua_.get(); }
    // Starts the Sparkplug B edge node ([runtime.sparkplug]) on the control service. After
    // serveControl.
    bool serveSparkplug(agent::SparkplugOptions options, agent::SparkplugSetup setup, std::string& error);
    // Any thread (runtime.status on the control service's): null until serveSparkplug made it.
    [[nodiscard]] agent::SparkplugNode* sparkplug() { return sparkplugView_.load(); }

    // The web server and the endpoint first (no command arrives after them), then the scan loop
    // (safe state latched, last retain save), then the drivers. Idempotent.
    void stop();

private:
    explicit LiveRuntime(const Tier& tier);

    // No field I/O: for benchmarks of the loop and the program alone.
    class NullIo final : public engine::ProcessIo {
    public:
        std::size_t inputBytes() const noexcept override { return 0; }
        std::size_t outputBytes() const noexcept override { return 0; }
        std::size_t memoryBytes() const noexcept override { return 0; }
        void readInputs(const engine::ProcessImageView& /*image*/) noexcept override {}
        void writeOutputs(const engine::ProcessImageView& /*image*/) noexcept override {}
        void applySafeState() noexcept override {}
        void releaseSafeState() noexcept override {}
        engine::IoHealthSummary healthSummary() const noexcept override { return {}; }
    };

    engine::CycleClock clock_;
    engine::VmRunner* runner_; // owned by engine_ (declared first: initialised before it)
    engine::Engine engine_;
    io::DriverSet drivers_;
    bool driversConfigured_ = false;
    bool driversStarted_ = false;
    NullIo nullIo_;
    std::unique_ptr<engine::RetainSink> retain_;
    std::optional<engine::ScanLoop> loop_;
    std::unique_ptr<agent::RuntimeControl> control_;
    // Before server_: destroyed after it, so no answer of a call the node made can outlive the node.
    std::unique_ptr<agent::SparkplugNode> sparkplug_;
    std::atomic<agent::SparkplugNode*> sparkplugView_{nullptr};
    std::unique_ptr<agent::ControlServer> server_;
    std::unique_ptr<agent::WebServer> web_;
    std::unique_ptr<agent::OpcuaServer> opcua_;
};

} // namespace takt::cli
