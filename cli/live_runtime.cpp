#include "live_runtime.h"

#include <algorithm>

#include <fmt/format.h>

#include "takt/engine/vm_runner.h"

namespace takt::cli {

LiveRuntime::LiveRuntime(const Tier& tier)
    : runner_(new engine::VmRunner(0, tier.execution, tier.start)),
      engine_(std::unique_ptr<engine::CodeRunner>(runner_), clock_) {
    runner_->setCompileListener(tier.onCompiled);
}

LiveRuntime::~LiveRuntime() {
    stop();
}

std::unique_ptr<LiveRuntime> LiveRuntime::load(std::shared_ptr<const bytecode::Module> module, const std::string& hash,
                                               std::string& error, const Tier& tier) {
    std::unique_ptr<LiveRuntime> live(new LiveRuntime(tier));
    engine::FaultReport fault;
    if (!live->engine_.load(std::make_unique<engine::LoadedProgram>(std::move(module), hash), fault)) {
        error = fmt::format("the program faulted while initialising: {} ({}:{}:{})", fault.message, fault.path,
                            fault.line, fault.column);
        return nullptr;
    }
    return live;
}

bool LiveRuntime::attachRetain(std::unique_ptr<engine::RetainSink> sink, bool warm, std::string& message) {
    retain_ = std::move(sink);
    return retain_ == nullptr || !warm || retain_->restore(engine_.program(), message);
}

bool LiveRuntime::configureDrivers(const io::IoConfig& io, std::size_t minOutputBytes, std::string& error) {
    const std::size_t outputs = std::max(minOutputBytes, engine_.area(bytecode::IoArea::Output).size());
    driversConfigured_ = drivers_.configure(io, outputs, error);
    return driversConfigured_;
}

bool LiveRuntime::startDrivers(std::string& error) {
    driversStarted_ = drivers_.start(error);
    return driversStarted_;
}

bool LiveRuntime::startScan(const engine::ScanOptions& options, std::string& error, engine::ProcessIo* io) {
    engine::ProcessIo& field = io != nullptr        ? *io
                               : driversConfigured_ ? static_cast<engine::ProcessIo&>(drivers_)
                                                    : nullIo_;
    loop_.emplace(engine_, clock_, field, options);
    loop_->setRetainSink(retain_.get());
    return loop_->start(error);
}

bool LiveRuntime::serveControl(const agent::ControlOptions& options, agent::RuntimeControlOptions runtimeOptions,
                               std::string& error, std::optional<OpcuaSetup> opcua) {
    control_ = std::make_unique<agent::RuntimeControl>(*loop_, engine_, std::move(runtimeOptions));
    server_ = std::make_unique<agent::ControlServer>(options, *control_);
    if (opcua) {
        opcua_ = std::make_unique<agent::OpcuaServer>(std::move(opcua->options), std::move(opcua->process), *server_);
    }
    return server_->start(error);
}

bool LiveRuntime::serveWeb(agent::WebOptions options, std::string& error) {
    web_ = std::make_unique<agent::WebServer>(std::move(options), *server_);
    return web_->start(error);
}

bool LiveRuntime::serveSparkplug(agent::SparkplugOptions options, agent::SparkplugSetup setup, std::string& error) {
    sparkplug_ = std::make_unique<agent::SparkplugNode>(std::move(options), std::move(setup), *server_);
    sparkplugView_.store(sparkplug_.get());
    return sparkplug_->start(error);
}

bool LiveRuntime::serveOpcua(std::string& error) {
    return opcua_ != nullptr && opcua_->start(error);
}

void LiveRuntime::stop() {
    // The edge node first: its NDEATH still goes out while the runtime runs, and no NCMD write
    // comes after it.
    if (sparkplug_ != nullptr) {
        sparkplug_->stop();
    }
    if (opcua_ != nullptr) {
        opcua_->stop();
    }
    if (web_ != nullptr) {
        web_->stop();
    }
    if (server_ != nullptr) {
        server_->stop();
    }
    if (loop_) {
        loop_->stop();
    }
    // A background compile still under way is of no use now (its thread is joined when the
    // runner is freed, at most after the code generation LLVM cannot stop).
    runner_->cancelCompile();
    if (driversStarted_) {
        drivers_.stop();
        driversStarted_ = false;
    }
}

} // namespace takt::cli
