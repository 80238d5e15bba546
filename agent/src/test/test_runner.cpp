// `takt test`: compile the project, then run each TEST_PROGRAM instance on a cold image: once,
// or, when its body calls TEST_FINISHED(), cycle after cycle with virtual time advancing between
// the cycles, until the call ends the test.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <limits>

#include "takt/agent/test_runner.h"
#include "takt/bytecode/opcodes.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/project.h"
#include "takt/engine/engine.h"
#include "takt/engine/vm_runner.h"
#include "test/test_assertion.h"

namespace takt::agent {
namespace {

// Virtual time a test may reach: the wall clock (kVirtualWallEpochNs plus virtual time) stays an
// int64 count of nanoseconds.
constexpr std::int64_t kVirtualTimeEnd = std::numeric_limits<std::int64_t>::max() - engine::kVirtualWallEpochNs;

constexpr std::uint64_t kTestBudget = 100'000'000; // watchdog ticks per test run

std::string lower(std::string s) {
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

// Source position of a POU: the first debug entry inside its code.
void position(const bytecode::Module& m, const bytecode::PouEntry& pou, std::string& file, std::uint32_t& line) {
    for (const bytecode::DebugEntry& d : m.debug) {
        if (d.codeOffset >= pou.code && d.codeOffset < pou.codeEnd) {
            file = d.file < m.files.size() ? m.files[d.file] : std::string();
            line = d.line;
            return;
        }
    }
}

// Whether the test's own code calls TEST_FINISHED() (an ASSERT_FAIL of kind Finished): sema
// allows it only in the body of the test POU, so the POU's code range is where it is.
bool callsTestFinished(const bytecode::Module& m, const bytecode::PouEntry& pou) {
    for (std::uint32_t pc = pou.code; pc < pou.codeEnd && pc < m.code.size();) {
        const std::uint32_t word = m.code[pc];
        if (word >= bytecode::kOpcodeCount) {
            return false; // the verifier passed this code; not expected
        }
        const auto op = static_cast<bytecode::Opcode>(word);
        const std::uint32_t length = bytecode::instructionLength(op);
        if (op == bytecode::Opcode::ASSERT_FAIL && pc + 5 < m.code.size() &&
            (m.code[pc + 5] & ~bytecode::kAssertWideMessage) ==
                static_cast<std::uint32_t>(bytecode::AssertKind::Finished)) {
            return true;
        }
        pc += length;
    }
    return false;
}

bool isFinished(const engine::Fault& fault) {
    return fault.assertion.failed && (fault.assertion.kind & ~bytecode::kAssertWideMessage) ==
                                         static_cast<std::uint32_t>(bytecode::AssertKind::Finished);
}

std::string timeText(std::int64_t ns) {
    return ns % 1'000'000 == 0 ? "T#" + std::to_string(ns / 1'000'000) + "ms" : "T#" + std::to_string(ns) + "ns";
}

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

TestReport runTests(const TestOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    TestReport report;
    compiler::ProjectInput input;
    input.directory = options.project;
    input.access = options.access;
    compiler::Project project = compiler::checkProject(input);
    report.project = project.directory.string();
    compiler::CompiledProgram compiled = compiler::compileProgram(project);
    if (!compiled.ok()) {
        report.buildFailed = true;
        for (const compiler::ConfigError& e : project.configErrors) {
            report.buildMessage += compiler::renderConfigError(e) + "\n";
        }
        if (project.valid()) {
            report.buildMessage = compiler::renderHuman(compiled.diagnostics, *project.sources) + compiled.failure;
        }
        return report;
    }
    const std::shared_ptr<const bytecode::Module> shared = compiled.module;
    const std::string filter = lower(options.filter);
    const auto selected = [&](const std::string& name) {
        return filter.empty() || lower(name).find(filter) != std::string::npos;
    };
    for (const bytecode::ProgramInstance& inst : shared->programs) {
        const bytecode::PouEntry& pou = shared->pous[inst.pou];
        if (!bytecode::isTestPou(pou.kind) || !selected(pou.name)) {
            continue;
        }
        // A TEST_FUNCTION_BLOCK runs like a TEST_PROGRAM: its body once on a fresh instance.
        TestCase tc;
        tc.name = pou.name;
        tc.kind = pou.kind == bytecode::PouKind::TestProgram ? "TEST_PROGRAM" : "TEST_FUNCTION_BLOCK";
        position(*shared, pou, tc.file, tc.line);
        if (options.listOnly) {
            tc.status = "listed";
            report.tests.push_back(std::move(tc));
            continue;
        }
        if (options.timeoutS > 0 && msSince(start) > options.timeoutS * 1000.0) {
            report.timedOut = true;
            tc.status = "error";
            tc.message = "not run: the --timeout budget was used up";
            ++report.errors;
            report.tests.push_back(std::move(tc));
            continue;
        }
        const auto t0 = std::chrono::steady_clock::now();
        engine::LoadedProgram program(shared, "");
        engine::VmRunner runner(kTestBudget, options.execution);
        runner.attach(program);
        engine::Fault fault;
        bool ok = shared->initCode == bytecode::kNone || runner.runInit(program, fault);
        // One cycle at virtual time 0; a test that calls TEST_FINISHED() runs on, the clock
        // advancing by the cycle time before each further cycle, until the call ends the run.
        const bool multiCycle = callsTestFinished(*shared, pou);
        std::string unfinished;
        std::int64_t now = 0;
        for (std::uint64_t cycle = 1; ok; ++cycle, now += options.cycleTimeNs) {
            // The wall clock is virtual too: NOW_DT() and RTC give the same dates on every run.
            runner.setWallClock(engine::kVirtualWallEpochNs + now);
            ok = runner.runProgram(program, inst, now, fault);
            if (!multiCycle || (!ok && isFinished(fault))) {
                ok = ok || isFinished(fault);
                break;
            }
            // The clock ends before it would overflow (with the wall clock's epoch added), however
            // long the cycle time and how many cycles --max-cycles allows.
            if (ok && now > kVirtualTimeEnd - options.cycleTimeNs) {
                unfinished = "TEST_FINISHED() not reached before the end of the virtual clock, in " +
                             std::to_string(cycle) + " cycles (virtual time " + timeText(now) + ")";
                break;
            }
            if (ok && cycle >= options.maxCycles) {
                unfinished = "TEST_FINISHED() not reached in " + std::to_string(cycle) + " cycles (virtual time " +
                             timeText(now) + ")";
                break;
            }
            if (ok && options.timeoutS > 0 && cycle % 1024 == 0 && msSince(start) > options.timeoutS * 1000.0) {
                report.timedOut = true;
                unfinished = "stopped after " + std::to_string(cycle) + " cycles: the --timeout budget was used up";
                break;
            }
        }
        tc.durationMs = msSince(t0);
        if (!unfinished.empty()) {
            tc.status = "error";
            tc.message = unfinished;
            ++report.errors;
        } else if (ok) {
            tc.status = "passed";
            ++report.passed;
        } else {
            // A failed assertion fails the test; any other fault (division by zero, bounds,
            // budget) is an error of the test itself.
            const engine::FaultReport f = program.describe(fault);
            const bool assertion = fault.assertion.failed;
            tc.status = assertion ? "failed" : "error";
            tc.message = assertion ? describeAssertion(program, fault.assertion) : f.message;
            if (!f.path.empty()) {
                tc.file = f.path;
                tc.line = f.line;
                tc.message += " (" + f.path + ":" + std::to_string(f.line) + ":" + std::to_string(f.column) + ")";
            }
            ++(assertion ? report.failed : report.errors);
        }
        report.tests.push_back(std::move(tc));
    }
    report.durationMs = msSince(start);
    return report;
}

} // namespace takt::agent
