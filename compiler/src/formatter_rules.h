#pragma once
// Token-level rules of the formatter: canonical spelling, spacing between two tokens on one
// line, which tokens always begin a line, and POU header extents. The layout engine in
// formatter.cpp combines them with block structure and comment placement.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "takt/compiler/token.h"

namespace takt::compiler::fmtrules {

// The canonical spelling of a token: keywords, elementary type names and the prefix of
// typed/time literals upper-cased; everything else exactly as written.
[[nodiscard]] std::string canonicalText(std::string_view text, TokenKind kind);

[[nodiscard]] bool isElementaryTypeName(std::string_view name);

// True when `kind` can end an operand, so a following '+'/'-' is binary, not unary.
[[nodiscard]] bool endsOperand(TokenKind kind);

// Block closers and branch keywords, which always start a line.
[[nodiscard]] bool isLineLeader(TokenKind kind);

// The END_ keyword that closes a block opened by `opener`, or EndOfFile when `opener` opens no
// block. VAR sections all close with END_VAR.
[[nodiscard]] TokenKind closerFor(TokenKind opener);
[[nodiscard]] bool isCloser(TokenKind kind);
[[nodiscard]] bool isVarSection(TokenKind kind);
[[nodiscard]] bool isVarQualifier(TokenKind kind);
[[nodiscard]] bool isPouKeyword(TokenKind kind);

struct SpaceContext {
    bool prevUnary = false;  // the previous token is a unary '+'/'-'
    bool labelColon = false; // the next token is the ':' ending a CASE label
};

// Whether one space separates `prev` and `next` on the same line.
[[nodiscard]] bool spaceBetween(TokenKind prev, TokenKind next, const SpaceContext& ctx);

// Whether an author's line break before token `next` (after `prev`) is kept as a continuation
// line. Breaks before closing punctuation, THEN/DO/OF and after '.', '#' are dropped.
[[nodiscard]] bool breakAllowed(TokenKind prev, TokenKind next, bool prevUnary, bool nextIsPostfix);

// The index of the first token after the header of the POU/CONFIGURATION/RESOURCE/NAMESPACE
// whose keyword is at `kw` (`FUNCTION_BLOCK PUBLIC Fb EXTENDS Base IMPLEMENTS I1, I2`).
// `src` is the text the tokens come from (OVERRIDE is recognised by its spelling).
[[nodiscard]] std::size_t headerEnd(const std::vector<Token>& tokens, std::size_t kw, std::string_view src);

// True when `glued` (the last few tokens of a line with no space between them, then the next
// token) lexes to exactly the tokens whose end offsets are `ends` and nothing else, so
// writing them without a space cannot merge them or open a comment.
[[nodiscard]] bool lexesAs(std::string_view glued, const std::vector<std::size_t>& ends);

// The layout pass alone, without the syntax check formatSource adds first; the fuzz target uses
// it to test layout on every lexically valid input, not only on programs that parse.
[[nodiscard]] std::string layoutTokens(std::string_view src, const LexResult& lexed);

// True when the tokens and comments of `out` are those of `in` up to canonical spelling and
// comment normalisation (formatSource refuses rather than write anything else).
[[nodiscard]] bool sameContent(std::string_view in, const LexResult& a, std::string_view out, const LexResult& b);

} // namespace takt::compiler::fmtrules
