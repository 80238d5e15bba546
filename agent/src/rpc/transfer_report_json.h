#pragma once
// The report of an online change as the control endpoint, the Agent API and the harness answer it
// (docs/control.md "bytecode.reload"), and the one line the run's log gets for an applied change.
#include <string>

#include "takt/engine/transfer.h"

namespace takt::agent {

// The report's members as JSON text without the braces: the counts, `loses_state`, `variables`
// (one object per path) and the older summary keys `initialised`, `retyped`, `retyped_paths`.
[[nodiscard]] std::string transferReportMembers(const engine::TransferReport& report);

// "online change: 14 kept, 1 converted, 0 re-initialised, 0 dropped, 1 added; re-initialised: a, b"
// with at most `maxPaths` paths named.
[[nodiscard]] std::string transferReportLogLine(const engine::TransferReport& report, std::size_t maxPaths = 8);

} // namespace takt::agent
