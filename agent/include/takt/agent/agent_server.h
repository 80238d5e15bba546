#pragma once
// `takt agent serve` (seed 000, PROTOCOLS.md): JSON-RPC 2.0 over stdio, one request per line,
// one response per line, confined to a workspace root. handleLine() is the whole dispatcher
// (the fuzz target drives it directly); serve() adds the framing on file descriptors.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace takt::agent {

struct AgentOptions {
    std::filesystem::path workspace; // empty: the current directory
    // Largest harness.cycle count / run_until max_cycles one request may ask for (0: no limit).
    std::uint64_t maxCyclesPerRequest = 0;
    // Resolve paths by the component walk even where openat2 works (tests of the fallback).
    bool forceComponentWalk = false;
};

// The takt version the server reports (agent.ready, agent.describe, agent.ping).
[[nodiscard]] std::string_view taktVersion();

class AgentServer {
public:
    explicit AgentServer(AgentOptions options);
    ~AgentServer();
    AgentServer(const AgentServer&) = delete;
    AgentServer& operator=(const AgentServer&) = delete;

    // False when the workspace root could not be opened; error() says why.
    [[nodiscard]] bool ok() const;
    [[nodiscard]] const std::string& error() const;

    // The agent.ready notification (without the newline).
    [[nodiscard]] std::string readyLine() const;
    // One request line in; the response line (without the newline), or nothing for a
    // notification. A blank line is -32600 with id null.
    [[nodiscard]] std::optional<std::string> handleLine(std::string_view line);
    // The response to a line longer than the 1 MiB cap.
    [[nodiscard]] std::string oversizeLine() const;
    // Writes agent.ready, then serves until end of input or a closed output. Returns 0, or 1
    // when writing failed.
    int serve(int inFd, int outFd);

private:
    struct State;
    std::unique_ptr<State> state_;
};

} // namespace takt::agent
