#pragma once
// Variable access by path (LANGUAGE.md "names") and the typed JSON value codec shared by the
// harness, the agent API and the control endpoint (PROTOCOLS.md "Typed values").
//
// Paths: case-insensitive; a bare name is a global first, then a variable of the first program
// instance; `P1.x`, `fb.q`, `arr[2]`, `s.field`, `m[1, 2]` descend through the TypeDesc fields
// and array bounds into one (offset, type) in the data image.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "takt/bytecode/module.h"

namespace takt::engine {

struct VarRef {
    std::uint32_t offset = 0; // in the data image
    std::uint32_t type = bytecode::kNone;
    bool constant = false; // CONSTANT variables refuse writes
};

// Resolves `path`; on failure returns false with a message naming the offending segment.
[[nodiscard]] bool resolvePath(const bytecode::Module& module, std::string_view path, VarRef& out, std::string& error);
// As resolvePath, with names of a scope of its own before those: `local(name, ref)` resolves the
// first segment when it names one of them (a halted frame's variables), else it resolves as in
// resolvePath. After each member, `member(owner, field, ref, error)` may replace the member's
// place (a VAR_IN_OUT's slot by what it refers to) or refuse it with `error`.
using MemberHook =
    std::function<bool(std::uint32_t owner, const bytecode::FieldDesc& field, VarRef& ref, std::string& error)>;
[[nodiscard]] bool resolvePathIn(const bytecode::Module& module, std::string_view path,
                                 const std::function<bool(std::string_view, VarRef&)>& local, const MemberHook& member,
                                 VarRef& out, std::string& error);

// A member the compiler adds for its own bookkeeping: a name holding a '$' (an SFC action's
// flags, an R_EDGE input's memory), or an SFC_STEP's member other than X and T (the chart's
// step bookkeeping, compiler/src/sfc.h). It stays in the image and moves on online change like
// any member; what shows variables to users (var.list, var.read's STRUCT fields, the debugger's
// variables) leaves it out.
[[nodiscard]] bool bookkeepingMember(const bytecode::TypeDesc& owner, std::string_view field);
// A variable-table path through such a member (a segment holding a '$').
[[nodiscard]] bool bookkeepingPath(std::string_view path);

// The IEC name of an elementary kind ("INT", "TOD"); "" for composite kinds.
[[nodiscard]] std::string_view elementaryName(bytecode::ValueKind kind);

using JsonAllocator = rapidjson::MemoryPoolAllocator<rapidjson::CrtAllocator>;

// Writes the typed JSON of the value at `data` (which has type `type`) into `out`. A REAL/LREAL
// NaN or infinity has the string "NaN", "Infinity" or "-Infinity" as its value (JSON has no
// number for them); decoding accepts the same strings.
void encodeValue(const bytecode::Module& module, std::uint32_t type, const std::uint8_t* data, rapidjson::Value& out,
                 JsonAllocator& alloc);
// The same for an elementary kind without a TypeDesc (direct addresses: BOOL, BYTE, …).
void encodeElementary(bytecode::ValueKind kind, const std::uint8_t* data, rapidjson::Value& out, JsonAllocator& alloc);

// Parses a typed JSON value into the storage of `type` at `data`. Range-checked: a value that
// does not fit, has the wrong shape or the wrong kind of type is an error and `data` may be
// partly written only for composites (callers decode into scratch first when that matters).
[[nodiscard]] bool decodeValue(const bytecode::Module& module, std::uint32_t type, const rapidjson::Value& in,
                               std::uint8_t* data, std::string& error);
[[nodiscard]] bool decodeElementary(bytecode::ValueKind kind, std::uint32_t size, std::uint32_t stringLength,
                                    const rapidjson::Value& in, std::uint8_t* data, std::string& error);

} // namespace takt::engine
