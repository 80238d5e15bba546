#pragma once
// `takt test`: builds the project and runs every TEST_PROGRAM (CONFIG.md). Each test runs on a
// freshly cold-started image: once, or, when its body calls TEST_FINISHED(), cycle after cycle on
// a virtual clock until it gets there. A runtime fault fails it with the fault's position.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "takt/compiler/project.h"
#include "takt/engine/vm_runner.h"

namespace takt::agent {

struct TestOptions {
    std::filesystem::path project; // empty: current directory
    std::string filter;            // substring of the test name (case-insensitive); empty: all
    // What the sources are read through (the Agent API's workspace); null: the disk.
    std::shared_ptr<const compiler::FileAccess> access;
    bool listOnly = false;
    double timeoutS = 0;                                          // whole run; 0 = none
    engine::Execution execution = engine::Execution::Interpreter; // --execution
    // Tests that call TEST_FINISHED(): the virtual time between two cycles (--cycle-time) and
    // the cycles a test may take before it is an error (--max-cycles).
    std::int64_t cycleTimeNs = 10'000'000;
    std::uint64_t maxCycles = 100'000;
};

struct TestCase {
    std::string name;
    std::string kind;   // "TEST_PROGRAM" / "TEST_FUNCTION_BLOCK"
    std::string status; // "passed" / "failed" / "error" / "listed"
    std::string file;
    std::uint32_t line = 0;
    std::string message;
    double durationMs = 0;
};

struct TestReport {
    std::string project;
    std::vector<TestCase> tests;
    std::uint32_t passed = 0, failed = 0, errors = 0;
    double durationMs = 0;
    bool buildFailed = false; // the project did not compile; buildMessage says why
    bool timedOut = false;
    std::string buildMessage;
};

[[nodiscard]] TestReport runTests(const TestOptions& options);

// CONFIG.md JSON; a human summary; JUnit XML; TAP 13.
[[nodiscard]] std::string renderTestJson(const TestReport& report);
[[nodiscard]] std::string renderTestHuman(const TestReport& report);
[[nodiscard]] std::string renderTestJunit(const TestReport& report);
[[nodiscard]] std::string renderTestTap(const TestReport& report);

} // namespace takt::agent
