#pragma once
// CODESYS pointers, references and unions: the parts that declarations, constant evaluation and
// body checking share (body_pointers.cpp). docs/language-notes.md "Pointers, references and
// unions" is the user's view.
#include <cstdint>
#include <string_view>

#include "sema/context.h"

namespace takt::compiler::sema {

// The result type of SIZEOF as CODESYS gives it: the smallest unsigned integer type that holds
// the size (USINT below 256 bytes, UINT below 64 KiB, else UDINT).
[[nodiscard]] const Type* sizeOfResultType(const TypeTable& types, std::uint64_t size);
// The type SIZEOF(arg) measures where no body checking has typed `arg` (array bounds,
// CONSTANT initialisers): a type name, or a variable named directly. Null when it is neither.
[[nodiscard]] const Type* sizeOfOperand(Context& cx, const Scope* scope, const ast::Expr& arg);
// A CODESYS extension (POINTER TO, ADR, UNION…) used under dialect "iec": W1015 as an error.
// Under dialect "codesys" these have one meaning and nothing to warn about.
void codesysExtension(Context& cx, Span span, std::string_view what);
// CODESYS's pointer-sized integers __XWORD, __UXINT and __XINT: takt's pointers convert to and
// from 64-bit integers, so they are LWORD, ULINT and LINT (as on a 64-bit CODESYS target).
// Null for any other name.
[[nodiscard]] const Type* pointerSizedType(const TypeTable& types, std::string_view name);

} // namespace takt::compiler::sema
