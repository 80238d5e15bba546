#pragma once
// A minimal client of a running runtime's control endpoint (PROTOCOLS.md): connect (unix:// or
// tcp://), optional auth.login, one request, its reply. Used by runtime.reload and
// runtime.compile_reload to send bytecode.reload.
#include <cstdint>
#include <span>
#include <string>

namespace takt::agent::detail {

struct ControlReply {
    bool reached = false; // connected and got a reply
    bool ok = false;      // the reply has a result
    std::string json;     // the result object, or the error object
    std::string message;  // why not reached, or the error message
};

// Sends bytecode.reload {bytes: base64} and waits for its reply (timeout in ms per step).
[[nodiscard]] ControlReply sendReload(const std::string& endpoint, const std::string& token,
                                      std::span<const std::uint8_t> program, int timeoutMs = 10000);

[[nodiscard]] std::string base64(std::span<const std::uint8_t> bytes);

} // namespace takt::agent::detail
