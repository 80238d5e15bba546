#pragma once
// takt_vm: the debugger's expressions (evaluate, a breakpoint's condition, a logpoint's {…}) as
// a flat list of typed operations run against the image of a halted or halting task.
//
// The control side compiles an ST expression (parsed by the compiler's parser, its names resolved
// in the scope of a POU against the module's type and variable tables: agent debug_expr_compile)
// into a DebugExpr once; eval() then runs it with no allocation, no lock and no exception, so a
// scan thread can run a breakpoint's condition where it stands. Why not the interpreter's own code
// generation: program.stbc keeps no semantic model of its sources (the runtime may run it without
// them), and the code generator needs one; the module's tables are what the image is laid out by.
// The operations follow the code generator's IEC semantics for what a watch expression may hold
// (integers wrap at their type's width, REAL arithmetic in single precision, comparisons, AND/OR/
// XOR/NOT on BOOL and bit strings, MOD and / truncating toward zero, ** in floating point) and
// read nothing but the image: no call, no assignment, so evaluating never writes.
#include <array>
#include <cstdint>
#include <vector>

#include "takt/bytecode/module.h"

namespace takt::vm {

// One 64-bit value on the evaluation stack: an integer (sign-extended or zero-extended as its
// kind), a REAL/LREAL as double, a BOOL as 0/1, a TIME or date as nanoseconds, an image address.
union ExprSlot {
    std::int64_t i;
    std::uint64_t u;
    double d;
};

enum class ExprOp : std::uint8_t {
    Const,     // push `imm`
    AddrThis,  // push `this` + a (a member of the frame's instance)
    AddrFrame, // push the frame's start + a (a FUNCTION's or METHOD's variable, a VAR_TEMP)
    AddrAbs,   // push a (a global)
    Deref,     // pop address, push the image offset stored there (a VAR_IN_OUT's slot: a u32 in 8 bytes)
    AddrField, // address += a (a STRUCT field or an FB member)
    AddrIndex, // pop index, then address: address + (index - lo) * a, trap outside [lo, hi]
    Load,      // pop address, push the value of `kind` stored there (a: the bit of a BOOL, 0 otherwise)
    Convert,   // the top value from kind `from` to `kind`
    Neg,
    Not,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
};

struct ExprInstr {
    ExprOp op = ExprOp::Const;
    bytecode::ValueKind kind = bytecode::ValueKind::Bool; // the operation's (operand) kind
    bytecode::ValueKind from = bytecode::ValueKind::Bool; // Convert: the kind converted from
    std::uint32_t a = 0;
    std::int64_t lo = 0;
    std::int64_t hi = 0;
    ExprSlot imm{0};
};

inline constexpr std::uint32_t kMaxExprDepth = 32;

// What eval() found; anything but Ok leaves `out` unset.
enum class ExprStatus : std::uint8_t { Ok, DivisionByZero, IndexOutOfRange, OutsideImage, Invalid };
[[nodiscard]] const char* exprStatusText(ExprStatus s) noexcept;

struct DebugExpr {
    std::vector<ExprInstr> code;
    bytecode::ValueKind kind = bytecode::ValueKind::Bool; // the result's
    std::uint32_t depth = 0;                              // the stack it needs (≤ kMaxExprDepth)
};

// Where a halting or halted statement stands, for what reads its variables (an expression, flow
// control): the data image and the bases of the running POU's instance and frame.
struct ExprScope {
    const std::uint8_t* image = nullptr;
    std::uint32_t imageSize = 0;
    std::uint32_t thisOffset = 0;  // the instance the POU runs on
    std::uint32_t frameOffset = 0; // its frame: a FUNCTION's or METHOD's variables, VAR_TEMP
};

// Runs `e` against the image of `at`.
[[nodiscard]] ExprStatus eval(const DebugExpr& e, const ExprScope& at, ExprSlot& out) noexcept;

// REAL and LREAL, which eval() holds as a double (bytecode::elementaryWidth and isSignedKind
// give the others' size and category).
[[nodiscard]] bool isRealKind(bytecode::ValueKind k) noexcept;
// The value stored as `k` in `size` bytes (little-endian, as the image holds it).
void storeSlot(bytecode::ValueKind k, ExprSlot v, std::uint8_t* to) noexcept;

} // namespace takt::vm
