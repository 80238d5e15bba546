#pragma once
// The in-memory form of a compiled program: what the compiler's back end produces, what
// program.stbc serialises (container.h) and what the VM and engine load. Everything the
// runtime needs to run, inspect, persist and hot-swap a program is in these tables; the VM
// never needs the compiler.
//
// Data image (one contiguous byte block per loaded program; all addresses are offsets in it):
//
//   0            constSize           constSize+globalSize              imageSize
//   +------------+-------------------+---------------------------------+
//   | constants  | globals, PROGRAM  | call stack: FUNCTION frames,    |
//   | (read-only)| instances with    | temporaries (re-initialised on  |
//   |            | nested FB inst.   | every call)                     |
//   +------------+-------------------+---------------------------------+
//
// REF_TO values, VAR_IN_OUT references and `this` pointers are image offsets, so a snapshot,
// a retain image or an online change never contains a host pointer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace takt::bytecode {

inline constexpr std::uint32_t kNone = 0xFFFFFFFFu;
// Maximum nesting of calls in one run (FB, FUNCTION, METHOD) on either execution tier; deeper
// gives StackOverflow.
inline constexpr std::uint32_t kMaxCallDepth = 256;

// Storage kinds of the data image (IEC elementary types plus the composite ones). The one list
// of these names: the compiler's TypeKind starts with the same entries (sema/types.h), so a kind
// converts by value and adding one here adds it there.
#define TAKT_VALUE_KINDS(X)                                                                                            \
    X(Bool)                                                                                                            \
    X(SInt)                                                                                                            \
    X(Int)                                                                                                             \
    X(DInt)                                                                                                            \
    X(LInt)                                                                                                            \
    X(USInt)                                                                                                           \
    X(UInt)                                                                                                            \
    X(UDInt)                                                                                                           \
    X(ULInt)                                                                                                           \
    X(Byte)                                                                                                            \
    X(Word)                                                                                                            \
    X(DWord)                                                                                                           \
    X(LWord)                                                                                                           \
    X(Real)                                                                                                            \
    X(LReal)                                                                                                           \
    X(Time)                                                                                                            \
    X(LTime)                                                                                                           \
    X(Date)                                                                                                            \
    X(LDate)                                                                                                           \
    X(Tod)                                                                                                             \
    X(LTod)                                                                                                            \
    X(Dt)                                                                                                              \
    X(Ldt)                                                                                                             \
    X(Char)                                                                                                            \
    X(WChar)                                                                                                           \
    X(String)                                                                                                          \
    X(WString)                                                                                                         \
    X(Enum)                                                                                                            \
    X(Subrange)                                                                                                        \
    X(Array)                                                                                                           \
    X(Struct)                                                                                                          \
    X(Ref)                                                                                                             \
    X(FunctionBlock)                                                                                                   \
    X(Program)                                                                                                         \
    X(Interface)

enum class ValueKind : std::uint8_t {
#define TAKT_X(name) name,
    TAKT_VALUE_KINDS(TAKT_X)
#undef TAKT_X
};

// One `+1` per kind, summed below (not an expression on its own, hence no parentheses).
#define TAKT_X(name) +1 // NOLINT(bugprone-macro-parentheses)
inline constexpr std::size_t kValueKindCount = 0 TAKT_VALUE_KINDS(TAKT_X);
#undef TAKT_X

struct FieldDesc {
    std::string name;     // as declared
    std::uint32_t type;   // index into Module::types
    std::uint32_t offset; // from the start of the struct / instance
    bool retain = false;  // RETAIN member of an FB instance
};

struct EnumValueDesc {
    std::string name;
    std::int64_t value;
};

struct TypeDesc {
    ValueKind kind = ValueKind::Int;
    std::string name;      // IEC display name: "INT", "Mode", "ARRAY [0..9] OF INT", "TON"
    std::string signature; // canonical structural text; equal signatures = transferable on online change
    std::uint32_t size = 0;
    std::uint32_t align = 1;
    std::uint32_t element = kNone;         // Array element, Ref target, Enum/Subrange base
    std::vector<std::int64_t> bounds;      // Array: lo0, hi0, lo1, hi1, …; Subrange: lo, hi
    std::uint32_t stringLength = 0;        // String/WString: n of STRING[n]
    std::vector<FieldDesc> fields;         // Struct fields, FB/Program instance members (all sections)
    std::vector<EnumValueDesc> enumValues; // Enum
    std::uint32_t pou = kNone;             // FunctionBlock/Program/Interface: index into Module::pous
};

enum class VarKind : std::uint8_t { Global, ProgramVar, Input, Output, InOut, Temp, External, Constant };

// One entry per variable at every nesting level of globals and instances (not per array
// element): "counter" (a global), "Main.level", "Main.fill.ET" (member of an FB instance).
// Online change matches entries by path and type signature; retain uses the RETAIN flags.
struct VarEntry {
    std::string path;
    std::uint32_t type;
    std::uint32_t offset;
    std::uint32_t size;
    VarKind kind = VarKind::ProgramVar;
    bool retain = false;
    bool constant = false;
};

enum class PouKind : std::uint8_t { Program, Function, FunctionBlock, Method, TestProgram, TestFunctionBlock, Native };

// TEST_PROGRAM and TEST_FUNCTION_BLOCK instances run under `takt test` only, never in a scan.
[[nodiscard]] constexpr bool isTestPou(PouKind k) noexcept {
    return k == PouKind::TestProgram || k == PouKind::TestFunctionBlock;
}

// A named variable in a POU's frame: a FUNCTION's or METHOD's result (named as the POU), inputs,
// outputs, VAR_IN_OUT and locals; an FB's or PROGRAM's VAR_TEMP. The frame is not in the variable
// table (it exists only while the POU runs), so this is how the debugger names, lists and writes
// what a halted frame holds. A VAR_IN_OUT's slot (8 bytes) holds the image offset of what was
// passed as a u32 in its low 4 bytes: its type is the REF_TO type of the declared one, as in the
// variable table.
struct FrameVar {
    std::string name;
    std::uint32_t type;           // index into Module::types
    std::uint32_t offset;         // from the start of the frame
    VarKind kind = VarKind::Temp; // Input, Output, InOut, Temp (VAR and VAR_TEMP)
    bool constant = false;        // VAR CONSTANT: the debugger does not write it
};

struct PouEntry {
    std::string name; // qualified: "Lib.Motor", "Motor.Start" for methods
    PouKind kind = PouKind::Program;
    std::uint32_t code = kNone; // entry offset in Module::code (kNone for natives)
    std::uint32_t codeEnd = kNone;
    std::uint32_t frameSize = 0;        // FUNCTION/METHOD frame incl. parameters, locals, temporaries
    std::uint32_t instanceType = kNone; // FB/PROGRAM: its instance layout; METHOD: its FB's (bounds `this`)
    std::uint32_t native = kNone;       // standard FB/function implemented in C++ (index in the VM's native table)
    std::vector<FrameVar> frame{};      // the named variables of its frame, by offset
};

struct TaskEntry {
    std::string name;
    std::int64_t intervalNs = 0;        // 0: event task (SINGLE) or every cycle
    std::uint32_t priority = 0;         // lower runs first
    std::uint32_t singleOffset = kNone; // BOOL in the image whose rising edge triggers the task
    // Indices into Module::io of the located variables this task's programs (and what they call)
    // read or write, ascending: a task copies only these at its own cycle start and end.
    std::vector<std::uint32_t> io;
};

struct ProgramInstance {
    std::string name;           // "Main" (implicit instance when there is no CONFIGURATION) or "P1"
    std::uint32_t pou;          // the PROGRAM
    std::uint32_t offset;       // instance data in the image
    std::uint32_t task = kNone; // kNone: runs every cycle after the tasks
};

enum class IoArea : std::uint8_t { Input, Output, Memory };

// A located variable: the engine copies between the process image and the data image.
struct IoBinding {
    IoArea area;
    std::uint32_t byteOffset;  // in the process image area (address mode already applied)
    std::uint8_t bit = 0;      // for BOOL (%IX b.n)
    std::uint32_t size;        // bytes; 0 for a single bit
    std::uint32_t imageOffset; // in the data image
    std::uint32_t type;
    std::string address; // "%IX0.1" as written (resolved for wildcards)
    std::string path;    // variable path
};

struct AccessEntry { // VAR_ACCESS
    std::string name;
    std::string path;
    std::uint32_t type;
    std::uint32_t offset;
    bool readOnly = true;
};

// code offset -> source position; sorted by codeOffset. An entry marks where a statement's code
// starts (where a line breakpoint or a step halts) or where an instruction that can fault starts
// (what a fault report names); both may share one code offset, the statement first.
struct DebugEntry {
    std::uint32_t codeOffset;
    std::uint32_t file; // index into Module::files
    std::uint32_t line;
    std::uint32_t column;
    bool statement = false;
};

struct Module {
    std::vector<std::uint32_t> code; // instruction stream (opcodes.def describes the encoding)
    std::uint32_t constSize = 0;
    std::uint32_t globalSize = 0;        // globals + program instances
    std::uint32_t stackSize = 0;         // call stack reserved after the globals
    std::vector<std::uint8_t> initImage; // constSize + globalSize bytes: cold-start values
    std::uint32_t initCode = kNone;      // optional code run once after copying initImage (cold start)
    std::vector<TypeDesc> types;
    std::vector<VarEntry> variables;
    std::vector<PouEntry> pous;
    std::vector<TaskEntry> tasks;
    std::vector<ProgramInstance> programs;
    std::vector<IoBinding> io;
    std::vector<AccessEntry> access;
    std::vector<std::string> files;
    std::vector<DebugEntry> debug;
    bool overflowTrap = false; // [build] overflow = "trap"
};

} // namespace takt::bytecode
