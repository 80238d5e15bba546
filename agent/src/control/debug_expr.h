#pragma once
// The debugger's ST expressions compiled for the running program (docs/debugging.md): parsed by
// the compiler's parser, their names resolved in the scope of one POU (the members of its
// instance: locals, inputs, outputs; then program instances and globals) against the module's
// type and variable tables, typed as IEC types combine, and emitted as a vm::DebugExpr, which
// the control thread (evaluate) or a scan thread (a condition) runs on the image. Calls,
// assignments and anything else that could change state are refused, so evaluating never writes.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "takt/bytecode/module.h"
#include "takt/vm/debug_expr.h"

namespace takt::agent {

// A part of the image an expression reads: absolute, or relative to the halted frame's instance
// or to the frame itself.
struct ExprRead {
    enum class Base : std::uint8_t { Absolute, This, Frame };
    Base base = Base::Absolute;
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
};

struct CompiledExpr {
    vm::DebugExpr code;
    // A variable (`x`, `acc.total`, `a[i]`): the code leaves its address, `type` is its type (any
    // type, a STRUCT or an FB instance too) and `path` its variable path when it has one without
    // a computed index ("" otherwise). A computed value: type kNone, the value of code.kind.
    bool place = false;
    std::uint32_t type = bytecode::kNone;
    std::string path;
    // The path starts at a variable of the frame (`x`, `s.a` in a FUNCTION): it names something
    // only in that frame (debug.variables and debug.setVariable take it with the thread and frame).
    bool framePath = false;
    std::vector<ExprRead> reads;
    // A value asked for (`value`): the declared type of the variable it was loaded from (an
    // enumeration shows its value's name), kNone for a computed one.
    std::uint32_t valueType = bytecode::kNone;
};

// What is wrong with an expression: a compiler code ("E0104"), the 1-based column in the text.
struct ExprError {
    std::string code;
    std::uint32_t column = 1;
    std::string message;
    [[nodiscard]] std::string text() const; // "E0104 at column 3: …"
};

// What the VAR_IN_OUT slot at `offset` from `base` (of type `refType`, a REF_TO) refers to, as an
// image offset: read from a halted thread's image (vm::Debugger::peek); false when it refers to no
// variable now (not bound yet, or bound by a call that has returned).
using SlotReader =
    std::function<bool(ExprRead::Base base, std::uint32_t offset, std::uint32_t refType, std::uint32_t& referent)>;

// `pou`: the POU whose scope names resolve in (kNone: globals only): its frame's variables
// (PouEntry::frame), its instance's members, then program instances and globals; `instancePath`:
// its instance path when known (a halted frame's), to give variables their paths. `value`: an
// elementary value is needed (a condition, a logpoint's part): a variable is loaded, a STRUCT or
// array refused. A VAR_IN_OUT (of the frame, or an FB's member) is what it refers to; `slots`, for
// a halted frame, reads where each one refers to, so that `reads` holds it (an in-out it cannot
// read, or reached through a computed index, is refused); none for a condition, which runs on the
// image and reads the slot itself.
[[nodiscard]] bool compileDebugExpr(const bytecode::Module& m, std::uint32_t pou, const std::string& instancePath,
                                    std::string_view text, CompiledExpr& out, ExprError& error, bool value = false,
                                    const SlotReader& slots = {});

// Whether member `field` of `owner` (an FB's or PROGRAM's instance type) is a VAR_IN_OUT: a slot
// holding where the caller's variable is, not a REF_TO of its own. The type table does not say;
// the variable table does, at every instance of `owner` (false when it has none).
[[nodiscard]] bool inOutMember(const bytecode::Module& m, std::uint32_t owner, const bytecode::FieldDesc& field);

// The variable of `pou`'s frame that `name` names (ST names are case-insensitive; a compiler's own
// '$' name is never a user's), or null: the one lookup an expression, a path and a listing share.
[[nodiscard]] const bytecode::FrameVar* frameVarNamed(const bytecode::PouEntry& pou, std::string_view name);

// A logpoint's message split into its text (one piece more than the expressions) and its
// {expressions} with the 1-based column of each '{'; false with `why` when a '{' is not closed or
// there are more than vm::kMaxLogParts of them.
[[nodiscard]] bool splitLogMessage(std::string_view text, std::vector<std::string>& texts,
                                   std::vector<std::pair<std::string, std::uint32_t>>& parts, std::string& why);

} // namespace takt::agent
