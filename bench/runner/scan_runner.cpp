// Runs N scans of one benchmark program, on the VM's interpreter (`st`), on the native execution
// tier (`tier`) or as its native twin (`native`), and prints its check value. Meant for
// instruction counts: under `valgrind --tool=callgrind`, the difference between two scan counts
// divided by the difference in scans is instructions per scan without the compile and start-up
// cost (scripts/bench.sh does that). On stderr: the CPU and wall-clock time per scan of the scan
// loop (on a shared machine wall-clock time also measures the other processes; scripts/
// bench-cycles.py compares wall-clock times of runs interleaved with the harness's) and, for
// `tier`, the compile time and the tier the program ran on.
// `compile <program.stbc> <times>` measures the native tier's compile of a whole project (what
// `takt run` and each online change pay, off the scan thread): the program.stbc `takt build`
// wrote, verified, then attached to a fresh native VmRunner `times` times.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "../native/st_program.h"
#include "../native/twins.h"
#include "takt/bytecode/verifier.h"

namespace {

// CPU time of this process, in ns.
std::int64_t cpuNs() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Wall-clock time, in ns.
std::int64_t wallNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The engine's compile path (VmRunner::prepare on attach) on `path`, `times` times: prints the
// tier's status and the median and fastest compile time.
int compileProject(const std::string& path, long times) {
    const takt::bytecode::VerifiedProgram verified = takt::bytecode::loadVerifiedFile(path);
    if (!verified.ok()) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), verified.error.c_str());
        return 1;
    }
    std::vector<double> ms;
    std::vector<double> tierMs; // the tier's own figure: translation, -O2 and code generation
    std::string status;
    for (long n = 0; n < times; ++n) {
        takt::engine::LoadedProgram program(verified.module, verified.hashHex());
        takt::engine::VmRunner runner(0, takt::engine::Execution::Native);
        const auto started = std::chrono::steady_clock::now();
        runner.attach(program);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
        status = runner.executionStatus();
        tierMs.push_back(runner.nativeCompileMs());
    }
    if (ms.empty()) {
        return 2;
    }
    std::sort(ms.begin(), ms.end());
    std::sort(tierMs.begin(), tierMs.end());
    std::printf("execution: %s\ncode words: %zu\ncompile ms: median %.1f, fastest %.1f\n"
                "attach ms: median %.1f, fastest %.1f (%ld runs)\n",
                status.c_str(), verified.module->code.size(), tierMs[tierMs.size() / 2], tierMs.front(),
                ms[ms.size() / 2], ms.front(), times);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr,
                     "usage: %s st|tier|native <program.st> <scans>\n"
                     "       %s compile <program.stbc> <times>\n",
                     argv[0], argv[0]);
        return 2;
    }
    const std::string_view mode = argv[1];
    const std::string path = argv[2];
    const long scans = std::strtol(argv[3], nullptr, 10);
    if (mode == "compile") {
        return compileProject(path, scans);
    }
    double check = 0.0;
    std::int64_t started = cpuNs();
    std::int64_t wallStarted = wallNs();
    if (mode == "st" || mode == "tier") {
        takt::bench::StProgram st;
        std::string error;
        const auto execution = mode == "tier" ? takt::engine::Execution::Native : takt::engine::Execution::Interpreter;
        if (!st.load(path, error, execution)) {
            std::fprintf(stderr, "%s\n", error.c_str());
            return 1;
        }
        if (mode == "tier") {
            std::fprintf(stderr, "execution: %s, compiled in %.2f ms\n", st.executionStatus().c_str(),
                         st.nativeCompileMs());
        }
        started = cpuNs();
        wallStarted = wallNs();
        for (long n = 0; n < scans; ++n) {
            if (!st.scan()) {
                std::fprintf(stderr, "scan %ld: %s\n", n, st.faultMessage().c_str());
                return 1;
            }
        }
        if (!st.readLreal("check", check)) {
            std::fprintf(stderr, "%s: no LREAL check\n", path.c_str());
            return 1;
        }
    } else if (mode == "native") {
        std::string program = path.substr(path.find_last_of('/') + 1);
        program = program.substr(0, program.find('.'));
        const bool known = takt::bench::withTwin(program, [&]<typename Twin>() {
            Twin twin;
            started = cpuNs();
            wallStarted = wallNs();
            for (long n = 0; n < scans; ++n) {
                takt::bench::scanTwin(twin, n * takt::bench::StProgram::kScanNs);
                // As takt_bench's DoNotOptimize + ClobberMemory: each scan starts from the state
                // in memory, as a program instance's scan does, instead of the compiler carrying
                // it in registers from one scan into the next.
                asm volatile("" : : "r"(&twin) : "memory");
            }
            check = twin.check;
        });
        if (!known) {
            std::fprintf(stderr, "no native twin for %s\n", program.c_str());
            return 1;
        }
    } else {
        std::fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    const auto ns = static_cast<double>(cpuNs() - started);
    const auto wall = static_cast<double>(wallNs() - wallStarted);
    const double per = scans > 0 ? 1.0 / static_cast<double>(scans) : 0.0;
    std::fprintf(stderr, "%.1f ns/scan CPU, %.1f ns/scan wall\n", ns * per, wall * per);
    std::printf("%.17g\n", check);
    return 0;
}
