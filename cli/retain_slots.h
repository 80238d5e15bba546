#pragma once
// The retain sink of the live runtime: RETAIN variables in A/B slot files (takt/engine/retain.h)
// under runtime.retain.path, relative to the state directory.
#include <filesystem>
#include <memory>

#include <spdlog/spdlog.h>

#include "takt/engine/config.h"
#include "takt/engine/scan_loop.h"

namespace takt::cli {

// nullptr when runtime.retain is off, or (logged) when its directory cannot be created.
[[nodiscard]] std::unique_ptr<engine::RetainSink> makeRetainSink(const engine::RuntimeConfig& config,
                                                                 const std::filesystem::path& state,
                                                                 const bytecode::Module& module,
                                                                 const std::shared_ptr<spdlog::logger>& log);

} // namespace takt::cli
