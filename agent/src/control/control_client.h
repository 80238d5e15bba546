#pragma once
// bytecode.reload through the control client (takt/agent/control_client.h), for runtime.reload
// and runtime.compile_reload of the agent API and for `takt reload`.
#include <cstdint>
#include <span>
#include <string>

#include "takt/agent/control_client.h"

namespace takt::agent::detail {

// Sends bytecode.reload {bytes: base64} and waits for its reply (timeout in ms per step).
[[nodiscard]] ControlReply sendReload(const std::string& endpoint, const std::string& token,
                                      std::span<const std::uint8_t> program, int timeoutMs = 10000,
                                      bool dryRun = false);

[[nodiscard]] std::string base64(std::span<const std::uint8_t> bytes);

} // namespace takt::agent::detail
