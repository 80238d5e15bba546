#pragma once
// Tokens and trivia produced by the lexer. Tokens keep only their kind and byte range; text is
// sliced from the source on demand, so lexing allocates one vector per file.
#include <cstdint>
#include <string_view>
#include <vector>

#include "takt/compiler/source.h"

namespace takt::compiler {

enum class TokenKind : std::uint8_t {
#define TAKT_TOKEN(name, spelling) name,
#define TAKT_KEYWORD(name, spelling) name,
#include "takt/compiler/token_kinds.def"
    Count_
};

[[nodiscard]] std::string_view tokenSpelling(TokenKind kind); // "PROGRAM", ":=", "identifier"
[[nodiscard]] bool isKeyword(TokenKind kind);
// Case-insensitive keyword lookup; returns false for non-keywords.
[[nodiscard]] bool keywordKind(std::string_view word, TokenKind& out);

// 12 bytes: a file has about one token per two bytes of source, all held until the parse ends.
struct Token {
    TokenKind kind = TokenKind::EndOfFile;
    // True when a line break (or start of file) separates this token from the previous one;
    // the formatter uses it to keep the author's blank-line structure.
    bool lineStart = false;
    std::uint32_t begin = 0;
    std::uint32_t end = 0;
};

enum class TriviaKind : std::uint8_t { LineComment, BlockComment, Pragma };

// Comments and pragmas are not tokens; they are kept beside the token stream (by position)
// so the formatter can re-emit every one of them.
struct Trivia {
    TriviaKind kind;
    std::uint32_t begin;
    std::uint32_t end;
};

struct LexResult {
    FileId file = kNoFile;
    std::vector<Token> tokens; // always ends with EndOfFile
    std::vector<Trivia> trivia;
};

} // namespace takt::compiler
