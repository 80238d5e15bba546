// Front-end throughput on typical ST (ARCHITECTURE: >= 200,000 lines/s for the whole front end;
// the parser alone should stay well above 1M lines/s). Counters report lines per second.
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "takt/compiler/lexer.h"
#include "takt/compiler/parser.h"

namespace {

using namespace takt::compiler;

// A mix of declarations, expressions and control flow in the proportions of ordinary PLC code.
std::string typicalSource(int pous) {
    std::string out;
    for (int i = 0; i < pous; ++i) {
        out += fmt::format(R"(FUNCTION_BLOCK Axis{0}
VAR_INPUT
    enable : BOOL;
    target : REAL := 0.0;
    speed  : REAL := 1.5;
END_VAR
VAR_OUTPUT
    done  : BOOL;
    error : BOOL;
END_VAR
VAR
    pos     : REAL;
    state   : INT := 0;
    timer   : TON;
    samples : ARRAY [0..15] OF REAL := [16(0.0)];
    i       : INT;
END_VAR
(* state machine *)
CASE state OF
0:  IF enable AND NOT error THEN
        state := 1;
    END_IF;
1:  timer(IN := TRUE, PT := T#500ms);
    IF timer.Q THEN
        state := 2;
        timer(IN := FALSE);
    END_IF;
2:  IF ABS(target - pos) > 0.01 THEN
        pos := pos + LIMIT(-speed, target - pos, speed);
    ELSE
        done := TRUE;
        state := 3;
    END_IF;
ELSE
    state := 0;
END_CASE;
FOR i := 0 TO 14 DO
    samples[i] := samples[i + 1] * 0.5 + pos * 0.5;
END_FOR;
samples[15] := pos;
error := (state > 3) OR (pos < -1000.0) OR (pos > 1000.0);
END_FUNCTION_BLOCK

)",
                           i);
    }
    return out;
}

std::size_t countLines(const std::string& s) {
    std::size_t n = 0;
    for (char c : s) {
        n += c == '\n' ? 1 : 0;
    }
    return n;
}

void BM_LexAndParse(benchmark::State& state) {
    SourceManager sm;
    FileId id = sm.add("bench.st", typicalSource(200));
    const SourceFile& file = sm.file(id);
    std::size_t lines = countLines(std::string(file.text()));
    for (auto _ : state) {
        DiagnosticSink diags;
        ast::CompilationUnit unit = parseSource(file, diags);
        benchmark::DoNotOptimize(unit.decls.data());
    }
    state.counters["lines/s"] =
        benchmark::Counter(static_cast<double>(lines), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_LexAndParse)->Unit(benchmark::kMillisecond);

void BM_ParseOnly(benchmark::State& state) {
    SourceManager sm;
    FileId id = sm.add("bench.st", typicalSource(200));
    const SourceFile& file = sm.file(id);
    std::size_t lines = countLines(std::string(file.text()));
    DiagnosticSink lexDiags;
    LexResult tokens = lex(file, lexDiags);
    for (auto _ : state) {
        DiagnosticSink diags;
        ast::CompilationUnit unit = parse(file, tokens, diags);
        benchmark::DoNotOptimize(unit.decls.data());
    }
    state.counters["lines/s"] =
        benchmark::Counter(static_cast<double>(lines), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ParseOnly)->Unit(benchmark::kMillisecond);

} // namespace
