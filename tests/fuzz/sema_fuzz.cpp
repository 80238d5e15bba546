// libFuzzer: the whole `takt check` pipeline (lex, parse, analyse) on one in-memory file plus
// a fixed second file, so cross-file lookups (types, globals, FBs, functions declared
// elsewhere) run on every input. Rendering the diagnostics exercises every span.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "takt/compiler/project.h"

namespace {

constexpr const char* kLibrary = R"ST(
TYPE
    Mode : (Idle, Run, Stop);
    Point : STRUCT x : INT; y : INT := 2; END_STRUCT;
    Level : INT (0..100);
    Buffer : ARRAY[1..8] OF REAL;
END_TYPE

VAR_GLOBAL
    gMode : Mode := Idle;
    gCount : DINT;
    gStart AT %IX0.0 : BOOL;
    gMotor AT %QX0.0 : BOOL;
    gLevel AT %IW1 : INT;
END_VAR

VAR_GLOBAL CONSTANT
    LIMIT_HIGH : INT := 90;
END_VAR

FUNCTION Clamp : INT
VAR_INPUT v, lo, hi : INT; END_VAR
Clamp := MIN(MAX(v, lo), hi);
END_FUNCTION

FUNCTION_BLOCK Motor
VAR_INPUT start : BOOL; stop : BOOL; END_VAR
VAR_OUTPUT running : BOOL; END_VAR
VAR t : TON; edge : R_TRIG; END_VAR
edge(CLK := start);
running := (running OR edge.Q) AND NOT stop;
t(IN := running, PT := T#5s);
END_FUNCTION_BLOCK
)ST";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace takt::compiler;
    std::vector<SourceText> sources;
    sources.push_back({"library.st", kLibrary});
    sources.push_back({"fuzz.st", std::string(reinterpret_cast<const char*>(data), size)});
    Project project = checkSources(std::move(sources));
    if (project.model == nullptr) {
        std::abort(); // analyze() promises a model even for broken input
    }
    (void)renderHuman(project.diagnostics, *project.sources);
    (void)renderJson(project.diagnostics, *project.sources);
    (void)dumpSymbols(*project.model);
    return 0;
}
