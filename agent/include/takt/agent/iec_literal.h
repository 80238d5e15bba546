#pragma once
// IEC 61131-3 literal text for values on the control endpoint and in the shell commands: the
// endpoint accepts "T#330ms", "16#00FF", "'text'", "Mode#Auto", "TRUE" or "-1.5" wherever it
// accepts a typed JSON value, and `takt watch` / `takt vars` show values the same way. Parsing
// goes through the compiler's literal rules (takt/compiler/literals.h) into the typed JSON of
// the target type, so the range checks stay those of engine::decodeValue.
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "takt/bytecode/module.h"
#include "takt/engine/values.h"

namespace takt::agent {

// `text` as a value of `type` (a TypeDesc index of `module`) -> its typed JSON in `out`. False
// with `error` saying what was expected for the type (no range check: decodeValue does that).
[[nodiscard]] bool parseIecLiteral(const bytecode::Module& module, std::uint32_t type, std::string_view text,
                                   rapidjson::Value& out, engine::JsonAllocator& alloc, std::string& error);
// The same for an elementary kind without a TypeDesc (a direct address: BOOL, BYTE, WORD, …).
[[nodiscard]] bool parseIecLiteral(bytecode::ValueKind kind, std::string_view text, rapidjson::Value& out,
                                   engine::JsonAllocator& alloc, std::string& error);

// A typed JSON value (engine::encodeValue) as IEC literal text: TRUE, 42, 16#00FF (bit strings,
// padded to their width), 1.5, T#1m30s, LTIME#5us, D#2024-01-15, TOD#12:30:00.5,
// DT#2024-01-15-12:30:00, 'text' and "wide" with $ escapes, Mode#Auto, [1, 2], (a := 1, b := 2).
[[nodiscard]] std::string formatIecLiteral(const rapidjson::Value& typed);

} // namespace takt::agent
