// Runs N scans of one benchmark program, on the VM's interpreter (`st`), on the native execution
// tier (`tier`) or as its native twin (`native`), and prints its check value. Meant for
// instruction counts: under `valgrind --tool=callgrind`, the difference between two scan counts
// divided by the difference in scans is instructions per scan without the compile and start-up
// cost (scripts/bench.sh does that). On stderr: the wall-clock ns per scan of the scan loop and,
// for `tier`, the compile time and the tier the program ran on.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "../native/st_program.h"
#include "../native/twins.h"

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s st|tier|native <program.st> <scans>\n", argv[0]);
        return 2;
    }
    const std::string_view mode = argv[1];
    const std::string path = argv[2];
    const long scans = std::strtol(argv[3], nullptr, 10);
    double check = 0.0;
    auto started = std::chrono::steady_clock::now();
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
        started = std::chrono::steady_clock::now();
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
            started = std::chrono::steady_clock::now();
            for (long n = 0; n < scans; ++n) {
                takt::bench::scanTwin(twin, n * takt::bench::StProgram::kScanNs);
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
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr, "%.1f ns/scan\n", scans > 0 ? ns / static_cast<double>(scans) : 0.0);
    std::printf("%.17g\n", check);
    return 0;
}
