// Front-end throughput on a generated 50,000-line project (TARGETS.md: >= 200,000 lines/s for
// the whole check). The project is a realistic mix spread over 50 files: TYPEs (enumerations,
// structs), FUNCTIONs, FUNCTION_BLOCKs with VAR sections and a CASE state machine, PROGRAMs
// with IF/CASE/FOR, FB calls, standard timers and counters. Each benchmark reports lines/s.
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "takt/agent/project_build.h"
#include "takt/compiler/lexer.h"
#include "takt/compiler/parser.h"
#include "takt/compiler/project.h"

namespace {

using namespace takt::compiler;

constexpr std::size_t kFiles = 50;
constexpr std::size_t kTotalLines = 50000;

// One self-contained group of declarations (~125 lines); `id` keeps every name unique.
std::string unitText(const std::string& id) {
    return fmt::format(R"ST((* Generated unit {0}: one line section with its motor and recipe data *)
TYPE
    E_State_{0} : (Idle_{0}, Starting_{0}, Running_{0}, Stopping_{0}, Faulted_{0});
    ST_Data_{0} : STRUCT
        setpoint : REAL := 50.0;
        actual   : REAL;
        count    : DINT;
        enabled  : BOOL := TRUE;
        name     : STRING[16] := 'unit';
    END_STRUCT;
END_TYPE

FUNCTION F_Scale_{0} : REAL
VAR_INPUT
    raw : INT;
    lo  : REAL;
    hi  : REAL;
END_VAR
VAR
    tmp : REAL;
END_VAR
tmp := INT_TO_REAL(raw) / 27648.0;
IF tmp < 0.0 THEN
    tmp := 0.0;
ELSIF tmp > 1.0 THEN
    tmp := 1.0;
END_IF;
F_Scale_{0} := lo + tmp * (hi - lo);
END_FUNCTION

FUNCTION_BLOCK FB_Motor_{0}
VAR_INPUT
    start   : BOOL;
    stop    : BOOL;
    speedSp : REAL;
END_VAR
VAR_OUTPUT
    running : BOOL;
    speed   : REAL;
    fault   : BOOL;
END_VAR
VAR
    state   : E_State_{0} := Idle_{0};
    rampT   : TON;
    edge    : R_TRIG;
END_VAR
edge(CLK := start);
CASE state OF
    Idle_{0}:
        IF edge.Q AND NOT stop THEN
            state := Starting_{0};
        END_IF;
    Starting_{0}:
        rampT(IN := TRUE, PT := T#2s);
        speed := speedSp * 0.5;
        IF rampT.Q THEN
            state := Running_{0};
        END_IF;
    Running_{0}:
        speed := speedSp;
        IF stop THEN
            state := Stopping_{0};
        END_IF;
    Stopping_{0}:
        speed := 0.0;
        rampT(IN := FALSE, PT := T#2s);
        state := Idle_{0};
    Faulted_{0}:
        fault := TRUE;
        speed := 0.0;
END_CASE;
running := state = Running_{0};
END_FUNCTION_BLOCK

PROGRAM P_Line_{0}
VAR
    motor   : FB_Motor_{0};
    data    : ST_Data_{0};
    buf     : ARRAY[1..10] OF INT;
    i       : INT;
    sum     : DINT;
    counter : CTU;
    delay   : TON;
    raw     : INT := 1000;
END_VAR
motor(start := data.enabled, stop := NOT data.enabled, speedSp := data.setpoint);
data.actual := F_Scale_{0}(raw := raw, lo := 0.0, hi := 100.0);
sum := 0;
FOR i := 1 TO 10 DO
    buf[i] := i * 2 + raw MOD 7;
    sum := sum + INT_TO_DINT(buf[i]);
END_FOR;
IF sum > 100 AND motor.running THEN
    data.count := data.count + 1;
ELSIF sum < 10 THEN
    data.count := 0;
ELSE
    raw := raw + 1;
END_IF;
counter(CU := motor.running, R := motor.fault, PV := 100);
delay(IN := counter.Q, PT := T#500ms);
IF delay.Q THEN
    raw := 0;
END_IF;
END_PROGRAM

)ST",
                       id);
}

std::size_t countLines(const std::string& s) {
    std::size_t n = 0;
    for (char c : s) {
        n += c == '\n' ? 1 : 0;
    }
    return n;
}

struct GeneratedProject {
    std::vector<SourceText> files;
    std::size_t lines = 0;
};

const GeneratedProject& project() {
    static const GeneratedProject generated = [] {
        GeneratedProject p;
        std::size_t perFile = kTotalLines / kFiles;
        for (std::size_t f = 0; f < kFiles; ++f) {
            std::string text;
            for (std::size_t u = 0; countLines(text) < perFile; ++u) {
                text += unitText(fmt::format("{}_{}", f, u));
            }
            p.lines += countLines(text);
            p.files.push_back({fmt::format("src/section_{:02}.st", f), std::move(text)});
        }
        return p;
    }();
    return generated;
}

// The generated project must be clean, or the benchmark measures error recovery instead.
bool verifyClean(benchmark::State& state) {
    static const std::string firstError = [] {
        Project checked = checkSources(project().files);
        return checked.errorCount == 0 ? std::string() : renderHuman({checked.diagnostics.front()}, *checked.sources);
    }();
    if (!firstError.empty()) {
        state.SkipWithError(("generated project does not check clean: " + firstError).c_str());
        return false;
    }
    return true;
}

void setLineCounters(benchmark::State& state, std::size_t linesPerIteration) {
    state.counters["lines"] = static_cast<double>(linesPerIteration);
    state.counters["lines/s"] = benchmark::Counter(
        static_cast<double>(linesPerIteration) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_FrontendLex(benchmark::State& state) {
    const GeneratedProject& p = project();
    SourceManager sm;
    std::vector<FileId> ids;
    for (const SourceText& s : p.files) {
        ids.push_back(sm.add(s.path, s.text));
    }
    for (auto _ : state) {
        DiagnosticSink diags;
        for (FileId id : ids) {
            LexResult tokens = lex(sm.file(id), diags);
            benchmark::DoNotOptimize(tokens.tokens.data());
        }
    }
    setLineCounters(state, p.lines);
}

void BM_FrontendLexParse(benchmark::State& state) {
    const GeneratedProject& p = project();
    SourceManager sm;
    std::vector<FileId> ids;
    for (const SourceText& s : p.files) {
        ids.push_back(sm.add(s.path, s.text));
    }
    for (auto _ : state) {
        DiagnosticSink diags;
        for (FileId id : ids) {
            LexResult tokens = lex(sm.file(id), diags);
            ast::CompilationUnit unit = parse(sm.file(id), tokens, diags);
            benchmark::DoNotOptimize(unit.decls.data());
        }
    }
    setLineCounters(state, p.lines);
}

// What `takt check` does for a project: lex, parse and analyse every file together.
void BM_FrontendCheck(benchmark::State& state) {
    if (!verifyClean(state)) {
        return;
    }
    const GeneratedProject& p = project();
    for (auto _ : state) {
        state.PauseTiming(); // the copy stands in for reading the files, which is not measured
        std::vector<SourceText> files = p.files;
        state.ResumeTiming();
        Project checked = checkSources(std::move(files));
        benchmark::DoNotOptimize(checked.errorCount);
    }
    setLineCounters(state, p.lines);
}

// What `takt build` does (TARGETS.md "compile speed"): read the project's src/ from disk, check
// it, generate code, verify it and write program.stbc atomically. A CONFIGURATION with one task
// runs every generated program, so the back end lowers all of them.
void BM_Build(benchmark::State& state) {
    if (!verifyClean(state)) {
        return;
    }
    namespace fs = std::filesystem;
    const GeneratedProject& p = project();
    const fs::path dir = fs::temp_directory_path() / "takt_bench_build";
    fs::remove_all(dir);
    fs::create_directories(dir / "src");
    std::string config = "CONFIGURATION Plant\nRESOURCE Cpu ON PLC\nTASK Main (INTERVAL := T#10ms, PRIORITY := 1);\n";
    std::size_t lines = p.lines + 4;
    for (const SourceText& s : p.files) {
        std::ofstream(dir / s.path) << s.text;
        for (std::size_t at = s.text.find("PROGRAM P_Line_"); at != std::string::npos;
             at = s.text.find("PROGRAM P_Line_", at + 1)) {
            const std::size_t end = s.text.find('\n', at);
            const std::string type = s.text.substr(at + 8, end - at - 8);
            config += fmt::format("PROGRAM I_{} WITH Main : {};\n", type.substr(7), type);
            ++lines;
        }
    }
    config += "END_RESOURCE\nEND_CONFIGURATION\n";
    std::ofstream(dir / "src" / "zz_configuration.st") << config;
    for (auto _ : state) {
        ProjectInput input;
        input.directory = dir;
        Project checked = checkProject(input);
        takt::agent::BuildOutcome outcome = takt::agent::buildProject(checked);
        if (!outcome.program) {
            state.SkipWithError(
                ("build failed: " + outcome.failure +
                 (checked.diagnostics.empty() ? std::string()
                                              : renderHuman({checked.diagnostics.front()}, *checked.sources)))
                    .c_str());
            break;
        }
        benchmark::DoNotOptimize(outcome.bytes);
    }
    setLineCounters(state, lines);
    fs::remove_all(dir);
}

BENCHMARK(BM_FrontendLex)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FrontendLexParse)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FrontendCheck)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Build)->Unit(benchmark::kMillisecond);

} // namespace
