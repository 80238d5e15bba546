#pragma once
// A running `takt agent serve` child with pipes on stdin and stdout, for tests and benchmarks
// that speak to the real binary line by line.
#include <chrono>
#include <string>
#include <string_view>

#include "support/process.h"

namespace takt::test {

class AgentProcess {
public:
    AgentProcess(const std::string& binary, const std::string& workspace)
        : process_({binary, "agent", "serve", "--workspace", workspace}, {.capture = Capture::Stdout, .input = true}) {}
    ~AgentProcess() { finish(); }
    AgentProcess(const AgentProcess&) = delete;
    AgentProcess& operator=(const AgentProcess&) = delete;

    [[nodiscard]] bool running() const { return process_.started() && process_.pid() > 0; }

    bool send(std::string_view bytes) { return process_.send(bytes); }

    // The next output line (without the newline); false on EOF or timeout.
    bool readLine(std::string& line, int timeoutMs = 30000) { return process_.readLine(line, timeoutMs); }

    // One request line, one response line.
    std::string call(std::string_view request) {
        std::string line;
        if (!send(std::string(request) + "\n") || !readLine(line)) {
            return {};
        }
        return line;
    }

    // Closes stdin and waits for the exit (an hour: only a hang guard); the exit code.
    int finish() {
        process_.closeStdin();
        return process_.waitOrKill(std::chrono::hours(1));
    }

private:
    Process process_;
};

} // namespace takt::test
