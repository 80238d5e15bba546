// takt_gccjit_compare: libgccjit against the native tier's LLVM ORC on the same bytecode, for the
// library choice in docs/performance.md ("Native tier" → "Library"). A measurement tool, not a
// tier: it is built only with -DTAKT_BENCH_GCCJIT=ON and needs Debian's libgccjit-12-dev
// (`apt-get install libgccjit-12-dev`), e.g.
//   cmake -S . -B build -G Ninja -DTAKT_BENCH_GCCJIT=ON && ninja -C build takt_gccjit_compare
//   build/bench/gccjit/takt_gccjit_compare bench/programs/int_arith.st bench/programs/real_math.st
//   build/bench/gccjit/takt_gccjit_compare --generate 20     (one POU of 20 copies of both bodies)
//   build/bench/gccjit/takt_gccjit_compare --generate-programs 20   (the same as 20 PROGRAMs)
//   build/bench/gccjit/takt_gccjit_compare --compile gccjit|llvm <program.st>   (one compile, for strace)
// `--march CPU` first gives libgccjit GCC's -march=CPU (it has no -march=native), to compare
// with LLVM, which always compiles for the host CPU (`llc --version` names it).
//
// Per program: the compile time of each library (wall clock, median of 9, alternating), then ns
// per scan (thread CPU time, median of 9 runs of 300 scans after 50 warm-up scans, the
// interpreter and both libraries' code each on its own image, alternating in one process), and
// the `check` value of each, which must be the interpreter's to the bit (exit status 1 otherwise).
#include "gccjit_translator.h"

#include "takt/bytecode/opcodes.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/project.h"
#include "takt/engine/program.h"
#include "takt/engine/values.h"
#include "takt/engine/vm_runner.h"
#include "takt/native/native.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace takt;
namespace gccjit = takt::bench::gccjit;
using Clock = std::chrono::steady_clock;

// One program instance on its own image, initialised by the interpreter.
struct Image {
    std::shared_ptr<const bytecode::Module> module;
    std::unique_ptr<engine::LoadedProgram> program;
    const bytecode::ProgramInstance* instance = nullptr;
};

bool load(const std::string& name, const std::string& text, Image& out, std::string& error) {
    compiler::Project project = compiler::checkSources({{name, text}});
    const compiler::CompiledProgram compiled = compiler::compileProgram(project);
    if (!compiled.ok()) {
        error =
            compiled.failure.empty() ? compiler::renderHuman(compiled.diagnostics, *project.sources) : compiled.failure;
        return false;
    }
    out.module = compiled.module;
    for (const bytecode::ProgramInstance& p : out.module->programs) {
        if (out.module->pous[p.pou].kind == bytecode::PouKind::Program) {
            out.instance = &p; // the first, whose variables "check" names
            break;
        }
    }
    out.program = std::make_unique<engine::LoadedProgram>(out.module, compiled.hash);
    engine::VmRunner init;
    engine::Fault fault;
    if (out.instance == nullptr || (out.module->initCode != bytecode::kNone && !init.runInit(*out.program, fault))) {
        error = name + ": no program instance, or init failed";
        return false;
    }
    return true;
}

double lrealAt(const Image& img, const char* path) {
    engine::VarRef ref;
    std::string error;
    double v = std::numeric_limits<double>::quiet_NaN();
    if (engine::resolvePath(*img.module, path, ref, error)) {
        std::memcpy(&v, img.program->image() + ref.offset, sizeof v);
    }
    return v;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double msSince(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// CPU time of this thread: on a machine shared with other builds, wall-clock time of a scan loop
// includes the time slices other processes got, which swung the medians by 2-3x between runs.
double threadNs() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

const std::atomic<bool> kNeverAbort{false};
// The bench programs call nothing, so no host function is ever reached; the context only needs
// a host that is not null.
const native::Host kNoHost{};

// One scan of compiled code, called as the engine's VmRunner calls the native tier.
bool runEntry(native::Entry entry, Image& img) {
    const bytecode::Module& m = *img.module;
    // The image has the one call stack (no tasks here): it ends where the image ends. The
    // programs call no standard FB (compiled without DirectFbs), so no FB context.
    native::RunContext ctx{std::numeric_limits<std::uint64_t>::max(),
                           &kNeverAbort,
                           bytecode::kNone,
                           &kNoHost,
                           img.program->imageSize(),
                           nullptr};
    const auto stackBase = static_cast<std::uint32_t>(m.constSize + m.globalSize);
    return entry(img.program->image(), img.instance->offset, stackBase, &ctx, 0) == 0;
}

std::string why(std::uint32_t pc, std::uint32_t op, const std::string& error) {
    if (pc == bytecode::kNone) {
        return error;
    }
    return "unsupported " + std::string(bytecode::kOpcodeInfo[op].name) + " at code offset " + std::to_string(pc);
}

struct Reps {
    int compiles = 9;
    int runs = 9;
    int scans = 300;
    int warmup = 50;
    std::string cpu; // libgccjit's -march (LLVM always compiles for the host)
};

// The side-by-side measurement of one program; false on a failure or a check disagreement.
bool compare(const std::string& name, const std::string& text, const Reps& reps) {
    std::array<Image, 3> img; // interpreter, LLVM, libgccjit
    std::string error;
    for (Image& i : img) {
        if (!load(name, text, i, error)) {
            std::fprintf(stderr, "%s\n", error.c_str());
            return false;
        }
    }
    std::vector<double> llvmMs;
    std::vector<double> gccMs;
    native::CompileResult llvm;
    gccjit::Result gcc;
    for (int n = 0; n < reps.compiles; ++n) {
        // Alternating which library goes first, so neither always meets a warm cache.
        for (int k = 0; k < 2; ++k) {
            const auto t = Clock::now();
            if ((n + k) % 2 == 0) {
                llvm = native::compile(*img[1].module);
                llvmMs.push_back(msSince(t));
            } else {
                gcc = gccjit::compile(*img[2].module, reps.cpu);
                gccMs.push_back(msSince(t));
            }
        }
    }
    if (llvm.code == nullptr || gcc.code == nullptr) {
        std::fprintf(stderr, "%s: LLVM: %s; libgccjit: %s\n", name.c_str(),
                     llvm.code ? "ok" : why(llvm.unsupportedPc, llvm.unsupportedOp, llvm.error).c_str(),
                     gcc.code ? "ok" : why(gcc.unsupportedPc, gcc.unsupportedOp, gcc.error).c_str());
        return false;
    }
    const std::uint32_t pou = img[0].instance->pou;
    engine::VmRunner interpreter;
    interpreter.attach(*img[0].program);
    engine::Fault fault;
    std::int64_t now = 0;
    std::array<std::function<bool()>, 3> scan = {
        [&] { return interpreter.runProgram(*img[0].program, *img[0].instance, now += 1'000'000, fault); },
        [&, entry = llvm.code->entry(pou)] { return runEntry(entry, img[1]); },
        [&, entry = gcc.code->entry(pou)] { return runEntry(entry, img[2]); }};
    std::array<std::vector<double>, 3> ns;
    for (int t = 0; t < 3; ++t) {
        for (int n = 0; n < reps.warmup; ++n) {
            if (!scan[t]()) {
                std::fprintf(stderr, "%s: tier %d faulted\n", name.c_str(), t);
                return false;
            }
        }
    }
    for (int r = 0; r < reps.runs; ++r) {
        for (int k = 0; k < 3; ++k) {
            const int t = (r % 2 == 0) ? k : 2 - k;
            const double started = threadNs();
            for (int n = 0; n < reps.scans; ++n) {
                if (!scan[t]()) {
                    std::fprintf(stderr, "%s: tier %d faulted\n", name.c_str(), t);
                    return false;
                }
            }
            ns[t].push_back((threadNs() - started) / reps.scans);
        }
    }
    const std::array<double, 3> check = {lrealAt(img[0], "check"), lrealAt(img[1], "check"), lrealAt(img[2], "check")};
    const bool agree = std::memcmp(&check[0], &check[1], sizeof(double)) == 0 &&
                       std::memcmp(&check[0], &check[2], sizeof(double)) == 0;
    std::printf("%-14s %6zu words | compile ms LLVM %8.2f  gccjit %8.2f (%.2fx) | ns/scan interp %9.0f  LLVM %9.0f  "
                "gccjit %9.0f (%.2fx) | check %.17g %s\n",
                name.c_str(), img[0].module->code.size(), median(llvmMs), median(gccMs), median(gccMs) / median(llvmMs),
                median(ns[0]), median(ns[1]), median(ns[2]), median(ns[2]) / median(ns[1]), check[0],
                agree ? "(all three agree)" : "MISMATCH");
    if (!agree) {
        std::printf("  interpreter %.17g  LLVM %.17g  gccjit %.17g\n", check[0], check[1], check[2]);
    }
    return agree;
}

// `copies` copies of int_arith's and real_math's bodies, each on its own variables, for the
// compile time of a large program: all in one PROGRAM (one function), or one PROGRAM each.
std::string generated(int copies, bool programEach) {
    std::string pous;
    std::string vars;
    std::string body;
    std::string sum = "0.0";
    std::string instances;
    for (int k = 0; k < copies; ++k) {
        const std::string s = std::to_string(k);
        vars += "i" + s + ", x" + s + ", acc" + s + ", hits" + s + ", cycle" + s + " : DINT;\n";
        vars += "j" + s + ", cnt" + s + " : INT; base" + s + ", r" + s + ", s" + s + ", accr" + s + " : REAL; lr" + s +
                ", lacc" + s + " : LREAL;\n";
        body += "cycle" + s + " := cycle" + s + " + 1; IF cycle" + s + " >= 1000000 THEN cycle" + s +
                " := 0; END_IF;\nx" + s + " := cycle" + s + " MOD 65521;\nFOR i" + s + " := 1 TO 1000 DO\n  x" + s +
                " := (x" + s + " * 31 + i" + s + ") MOD 65521;\n  acc" + s + " := (acc" + s + " + x" + s + " * 3 + i" +
                s + ") MOD 1000003;\n  IF x" + s + " > 32760 THEN hits" + s + " := hits" + s + " + 1;\n  ELSIF (x" + s +
                " MOD 3) = 0 THEN hits" + s + " := hits" + s + " + 2; END_IF;\nEND_FOR;\nhits" + s + " := hits" + s +
                " MOD 1000000;\n";
        body += "cnt" + s + " := cnt" + s + " + 1; IF cnt" + s + " >= 1000 THEN cnt" + s + " := 0; END_IF;\nbase" + s +
                " := INT_TO_REAL(cnt" + s + ") * 0.001;\nFOR j" + s + " := 1 TO 1000 DO\n  r" + s + " := base" + s +
                " + INT_TO_REAL(j" + s + ") * 0.0005;\n  s" + s + " := SQRT(r" + s + " * r" + s + " + 1.0);\n  lr" + s +
                " := SIN(REAL_TO_LREAL(s" + s + ") * 2.5) * 0.5 + REAL_TO_LREAL(r" + s + ") / 3.0;\n  lacc" + s +
                " := lacc" + s + " * 0.999 + lr" + s + ";\n  accr" + s + " := accr" + s + " * 0.99 + s" + s +
                " * 0.01;\nEND_FOR;\n";
        sum += " + DINT_TO_LREAL(acc" + s + " + hits" + s + ") + lacc" + s + " + REAL_TO_LREAL(accr" + s + ")";
        if (programEach || k + 1 == copies) {
            const std::string name = programEach ? "p" + s : "big";
            pous += "PROGRAM " + name + "\nVAR\n" + vars + "check : LREAL;\nEND_VAR\n" + body + "check := " + sum +
                    ";\nEND_PROGRAM\n";
            instances += "PROGRAM inst" + s + " WITH task0 : " + name + ";\n";
            vars.clear();
            body.clear();
            sum = "0.0";
        }
    }
    return pous + "CONFIGURATION config RESOURCE res0 ON PLC TASK task0(INTERVAL := T#1ms, PRIORITY := 0);\n" +
           instances + "END_RESOURCE END_CONFIGURATION\n";
}

bool readFile(const std::string& path, std::string& text) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    text = s.str();
    return static_cast<bool>(in);
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    Reps reps;
    if (args.size() >= 2 && args[0] == "--march") {
        reps.cpu = args[1];
        args.erase(args.begin(), args.begin() + 2);
    }
    if (args.empty()) {
        std::fprintf(stderr,
                     "usage: %s [--march CPU] <program.st>... | --generate N | --generate-programs N | --compile "
                     "gccjit|llvm <program.st>\n",
                     argv[0]);
        return 2;
    }
    if ((args[0] == "--generate" || args[0] == "--generate-programs") && args.size() == 2) {
        const int copies = std::stoi(args[1]);
        const bool programEach = args[0] == "--generate-programs";
        const std::string text = generated(copies, programEach);
        const auto lines = std::count(text.begin(), text.end(), '\n');
        std::printf("generated: %d copies in %s, %td lines of ST\n", copies,
                    programEach ? "as many programs" : "one program", lines);
        reps = Reps{3, 3, 5, 2, reps.cpu};
        return compare((programEach ? "programs" : "generated") + args[1], text, reps) ? 0 : 1;
    }
    if (args[0] == "--compile" && args.size() == 3) {
        Image img;
        std::string text;
        std::string error;
        if (!readFile(args[2], text) || !load(args[2], text, img, error)) {
            std::fprintf(stderr, "cannot load %s %s\n", args[2].c_str(), error.c_str());
            return 1;
        }
        const bool ok = args[1] == "llvm" ? native::compile(*img.module).code != nullptr
                                          : gccjit::compile(*img.module, {}).code != nullptr;
        return ok ? 0 : 1;
    }
    bool ok = true;
    for (const std::string& path : args) {
        std::string text;
        if (!readFile(path, text)) {
            std::fprintf(stderr, "cannot read %s\n", path.c_str());
            return 1;
        }
        ok = compare(path.substr(path.find_last_of('/') + 1), text, reps) && ok;
    }
    return ok ? 0 : 1;
}
