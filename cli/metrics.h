#pragma once
// `/metrics` of [runtime.web]: the live runtime's figures in the Prometheus text exposition format
// (version 0.0.4). Read from the scan loop's snapshot and histograms, which any thread may read,
// and from the drivers' health as the main loop last refreshed it.
#include <string>
#include <vector>

#include "takt/agent/control_runtime.h"
#include "takt/engine/scan_loop.h"

namespace takt::cli {

// `opcua`: the OPC UA server's health (runtime.status' opcua entry), null when it is not enabled.
[[nodiscard]] std::string prometheusText(const engine::ScanLoop& loop,
                                         const std::vector<agent::DriverHealthView>& health,
                                         const agent::OpcuaHealth* opcua = nullptr);

} // namespace takt::cli
