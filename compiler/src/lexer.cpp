#include "takt/compiler/lexer.h"

#include <array>
#include <cctype>
#include <unordered_map>

#include <fmt/format.h>

namespace takt::compiler {

namespace {

constexpr std::array<std::string_view, static_cast<std::size_t>(TokenKind::Count_)> kSpellings = {{
#define TAKT_TOKEN(name, spelling) spelling,
#define TAKT_KEYWORD(name, spelling) spelling,
#include "takt/compiler/token_kinds.def"
}};

constexpr std::size_t kMaxKeywordLength = 32;

const std::unordered_map<std::string_view, TokenKind>& keywordTable() {
    static const std::unordered_map<std::string_view, TokenKind> table = [] {
        std::unordered_map<std::string_view, TokenKind> t;
#define TAKT_KEYWORD(name, spelling) t.emplace(spelling, TokenKind::name);
#include "takt/compiler/token_kinds.def"
        return t;
    }();
    return table;
}

bool isIdentStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

bool equalsUpper(std::string_view word, std::string_view upper) {
    if (word.size() != upper.size()) {
        return false;
    }
    for (std::size_t i = 0; i < word.size(); ++i) {
        if (std::toupper(static_cast<unsigned char>(word[i])) != upper[i]) {
            return false;
        }
    }
    return true;
}

// Which date/time literal a prefix before '#' introduces, if any.
TokenKind timePrefixKind(std::string_view prefix) {
    static constexpr std::pair<std::string_view, TokenKind> kPrefixes[] = {
        {"T", TokenKind::TimeLiteral},   {"TIME", TokenKind::TimeLiteral},
        {"LT", TokenKind::TimeLiteral},  {"LTIME", TokenKind::TimeLiteral},
        {"D", TokenKind::DateLiteral},   {"DATE", TokenKind::DateLiteral},
        {"LD", TokenKind::DateLiteral},  {"LDATE", TokenKind::DateLiteral},
        {"TOD", TokenKind::TodLiteral},  {"TIME_OF_DAY", TokenKind::TodLiteral},
        {"LTOD", TokenKind::TodLiteral}, {"LTIME_OF_DAY", TokenKind::TodLiteral},
        {"DT", TokenKind::DtLiteral},    {"DATE_AND_TIME", TokenKind::DtLiteral},
        {"LDT", TokenKind::DtLiteral},   {"LDATE_AND_TIME", TokenKind::DtLiteral},
    };
    for (const auto& [p, kind] : kPrefixes) {
        if (equalsUpper(prefix, p)) {
            return kind;
        }
    }
    return TokenKind::Error;
}

static_assert(sizeof(Token) == 12, "tokens are held until the parse ends: keep them small");

class Lexer {
public:
    Lexer(const SourceFile& file, DiagnosticSink& diags, Dialect dialect)
        : file_(file), src_(file.text()), diags_(diags), flatComments_(dialect == Dialect::Openplc) {}

    LexResult run() {
        LexResult result;
        result.file = file_.id();
        result.tokens.reserve(src_.size() / 4 + 1);
        bool lineStart = true;
        for (;;) {
            lineStart = skipTrivia(result.trivia) || lineStart;
            if (pos_ >= src_.size()) {
                result.tokens.push_back(Token{TokenKind::EndOfFile, lineStart, pos_, pos_});
                return result;
            }
            Token t = next();
            t.lineStart = lineStart;
            lineStart = false;
            result.tokens.push_back(t);
        }
    }

private:
    char peek(std::uint32_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }

    void error(DiagCode code, std::uint32_t begin, std::uint32_t end, std::string message) {
        diags_.report(code, Span{file_.id(), begin, end}, std::move(message));
    }

    // Skips whitespace, comments and pragmas. Returns true when a newline was crossed.
    bool skipTrivia(std::vector<Trivia>& trivia) {
        bool newline = false;
        while (pos_ < src_.size()) {
            char c = src_[pos_];
            if (c == '\n') {
                newline = true;
                ++pos_;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
                ++pos_;
            } else if (c == '/' && peek(1) == '/') {
                std::uint32_t begin = pos_;
                while (pos_ < src_.size() && src_[pos_] != '\n') {
                    ++pos_;
                }
                std::uint32_t end = pos_;
                if (end > begin && src_[end - 1] == '\r') {
                    --end;
                }
                trivia.push_back(Trivia{TriviaKind::LineComment, begin, end});
            } else if ((c == '(' && peek(1) == '*') || (c == '/' && peek(1) == '*')) {
                blockComment(trivia);
            } else if (c == '{') {
                pragma(trivia);
            } else {
                break;
            }
        }
        return newline;
    }

    // (* … *) and /* … */ nest (LANGUAGE.md); each style nests only with itself, so a stray
    // "*)" inside /* */ is text. A depth counter instead of recursion keeps deep nesting safe.
    // Under dialect openplc a comment closes at the first "*)" (or "*/"), as matiec reads it; an
    // opener inside such a comment is W1018 once, since the default dialect reads it otherwise.
    void blockComment(std::vector<Trivia>& trivia) {
        std::uint32_t begin = pos_;
        char open = src_[pos_];
        char close = open == '(' ? ')' : '/';
        pos_ += 2;
        std::size_t depth = 1;
        bool warned = false;
        while (pos_ < src_.size()) {
            if (src_[pos_] == open && peek(1) == '*') {
                if (flatComments_) {
                    if (!warned) {
                        warned = true;
                        diags_.report(DiagCode::FlatComment, Span{file_.id(), pos_, pos_ + 2},
                                      fmt::format("'{}*' inside a comment does not nest under dialect openplc: the "
                                                  "comment ends at the first '*{}'",
                                                  open, close));
                    }
                } else {
                    ++depth;
                }
                pos_ += 2;
            } else if (src_[pos_] == '*' && peek(1) == close) {
                pos_ += 2;
                if (--depth == 0) {
                    trivia.push_back(Trivia{TriviaKind::BlockComment, begin, pos_});
                    return;
                }
            } else {
                ++pos_;
            }
        }
        error(DiagCode::UnterminatedComment, begin, begin + 2, "comment is not closed before the end of the file");
        trivia.push_back(Trivia{TriviaKind::BlockComment, begin, pos_});
    }

    // Pragmas {…} are tolerated and kept for the formatter; they have no meaning to takt.
    void pragma(std::vector<Trivia>& trivia) {
        std::uint32_t begin = pos_++;
        while (pos_ < src_.size() && src_[pos_] != '}') {
            ++pos_;
        }
        if (pos_ >= src_.size()) {
            error(DiagCode::UnterminatedPragma, begin, begin + 1, "pragma '{' is not closed by '}'");
        } else {
            ++pos_;
        }
        trivia.push_back(Trivia{TriviaKind::Pragma, begin, pos_});
    }

    Token make(TokenKind kind, std::uint32_t begin) const { return Token{kind, false, begin, pos_}; }

    Token next() {
        std::uint32_t begin = pos_;
        char c = src_[pos_];
        if (isIdentStart(c)) {
            return identifierOrPrefixed(begin);
        }
        if (isDigit(c)) {
            return number(begin);
        }
        switch (c) {
        case '\'':
        case '"': return string(begin, c);
        case '%': return directAddress(begin);
        case ':':
            ++pos_;
            if (peek() == '=') {
                ++pos_;
                return make(TokenKind::Assign, begin);
            }
            return make(TokenKind::Colon, begin);
        case '=':
            ++pos_;
            if (peek() == '>') {
                ++pos_;
                return make(TokenKind::Arrow, begin);
            }
            return make(TokenKind::Equal, begin);
        case '<':
            ++pos_;
            if (peek() == '>') {
                ++pos_;
                return make(TokenKind::NotEqual, begin);
            }
            if (peek() == '=') {
                ++pos_;
                return make(TokenKind::LessEqual, begin);
            }
            return make(TokenKind::Less, begin);
        case '>':
            ++pos_;
            if (peek() == '=') {
                ++pos_;
                return make(TokenKind::GreaterEqual, begin);
            }
            return make(TokenKind::Greater, begin);
        case '*':
            ++pos_;
            if (peek() == '*') {
                ++pos_;
                return make(TokenKind::Power, begin);
            }
            return make(TokenKind::Star, begin);
        case '.':
            ++pos_;
            if (peek() == '.') {
                ++pos_;
                return make(TokenKind::DotDot, begin);
            }
            return make(TokenKind::Dot, begin);
        default: break;
        }
        TokenKind single = TokenKind::Error;
        switch (c) {
        case '+': single = TokenKind::Plus; break;
        case '-': single = TokenKind::Minus; break;
        case '/': single = TokenKind::Slash; break;
        case '&': single = TokenKind::Ampersand; break;
        case '(': single = TokenKind::LParen; break;
        case ')': single = TokenKind::RParen; break;
        case '[': single = TokenKind::LBracket; break;
        case ']': single = TokenKind::RBracket; break;
        case ',': single = TokenKind::Comma; break;
        case ';': single = TokenKind::Semicolon; break;
        case '^': single = TokenKind::Caret; break;
        case '#': single = TokenKind::Hash; break;
        default: break;
        }
        if (single != TokenKind::Error) {
            ++pos_;
            return make(single, begin);
        }
        // Consume a whole UTF-8 sequence so one bad character gives one diagnostic.
        ++pos_;
        while (pos_ < src_.size() && (static_cast<unsigned char>(src_[pos_]) & 0xC0) == 0x80) {
            ++pos_;
        }
        auto uc = static_cast<unsigned char>(c);
        error(DiagCode::InvalidCharacter, begin, pos_,
              uc >= 0x20 && uc < 0x7F ? fmt::format("unexpected character '{}'", c)
                                      : fmt::format("unexpected character (byte 0x{:02X})", uc));
        return make(TokenKind::Error, begin);
    }

    Token identifierOrPrefixed(std::uint32_t begin) {
        while (pos_ < src_.size() && isIdentChar(src_[pos_])) {
            ++pos_;
        }
        std::string_view word = src_.substr(begin, pos_ - begin);
        if (peek() == '#') {
            TokenKind timeKind = timePrefixKind(word);
            if (timeKind != TokenKind::Error) {
                ++pos_;
                return timeBody(begin, timeKind);
            }
            ++pos_;
            return make(TokenKind::TypedPrefix, begin);
        }
        if (word.size() <= kMaxKeywordLength) {
            TokenKind kw;
            if (keywordKind(word, kw)) {
                return make(kw, begin);
            }
        }
        return make(TokenKind::Identifier, begin);
    }

    // The body of T#…, D#…, TOD#…, DT#…: digits, letters, '_', '.', ':', '-', '+'. The value
    // is checked by literals.cpp; here we only find where it ends.
    Token timeBody(std::uint32_t begin, TokenKind kind) {
        std::uint32_t bodyBegin = pos_;
        if (peek() == '-' || peek() == '+') {
            ++pos_;
        }
        while (pos_ < src_.size()) {
            char c = src_[pos_];
            bool dashInDate = c == '-' && kind != TokenKind::TimeLiteral;
            if (isIdentChar(c) || c == ':' || dashInDate || (c == '.' && isDigit(peek(1)))) {
                ++pos_;
            } else {
                break;
            }
        }
        if (pos_ == bodyBegin) {
            error(DiagCode::InvalidTimeLiteral, begin, pos_, "date/time literal has no value after '#'");
            return make(TokenKind::Error, begin);
        }
        return make(kind, begin);
    }

    // Decimal (with '_' separators), based (2#, 8#, 16#) and real literals. Values are decoded
    // by literals.cpp; malformed shapes are reported here so the parser sees a clean stream.
    Token number(std::uint32_t begin) {
        auto digits = [&](auto pred) {
            while (pos_ < src_.size() && (pred(src_[pos_]) || src_[pos_] == '_')) {
                ++pos_;
            }
        };
        digits(isDigit);
        if (peek() == '#') {
            ++pos_;
            std::uint32_t bodyBegin = pos_;
            digits([](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
            if (pos_ == bodyBegin) {
                error(DiagCode::InvalidNumber, begin, pos_, "based literal has no digits after '#'");
                return make(TokenKind::Error, begin);
            }
            return make(TokenKind::IntLiteral, begin);
        }
        bool real = false;
        // "1..5" is a range, "a[1].x" a member access: only '.' followed by a digit is a fraction.
        if (peek() == '.' && isDigit(peek(1))) {
            real = true;
            ++pos_;
            digits(isDigit);
        }
        if ((peek() == 'E' || peek() == 'e') &&
            (isDigit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
            real = true;
            pos_ += 2;
            digits(isDigit);
        }
        if (pos_ < src_.size() && isIdentStart(src_[pos_])) {
            while (pos_ < src_.size() && isIdentChar(src_[pos_])) {
                ++pos_;
            }
            error(DiagCode::InvalidNumber, begin, pos_,
                  fmt::format("malformed number '{}'", src_.substr(begin, pos_ - begin)));
            return make(TokenKind::Error, begin);
        }
        return make(real ? TokenKind::RealLiteral : TokenKind::IntLiteral, begin);
    }

    // 'single-byte' and "wide" strings. A string may not span lines (IEC); '$' escapes are
    // validated by literals.cpp, except that "$'" and '$"' must not end the string here.
    Token string(std::uint32_t begin, char quote) {
        ++pos_;
        while (pos_ < src_.size()) {
            char c = src_[pos_];
            if (c == '$' && pos_ + 1 < src_.size() && src_[pos_ + 1] != '\n') {
                pos_ += 2;
            } else if (c == quote) {
                ++pos_;
                return make(quote == '\'' ? TokenKind::StringLiteral : TokenKind::WStringLiteral, begin);
            } else if (c == '\n') {
                break;
            } else {
                ++pos_;
            }
        }
        error(DiagCode::UnterminatedString, begin, pos_, "string literal is not closed on its line");
        return make(TokenKind::Error, begin);
    }

    // %IX1.2, %QW4, %MD0, %I*, %IX*, and the bit part %X3 of partial access w.%X3.
    Token directAddress(std::uint32_t begin) {
        ++pos_;
        while (pos_ < src_.size()) {
            char c = src_[pos_];
            if (std::isalnum(static_cast<unsigned char>(c)) || c == '*') {
                ++pos_;
            } else if (c == '.' && isDigit(peek(1))) {
                ++pos_;
            } else {
                break;
            }
        }
        if (pos_ == begin + 1) {
            error(DiagCode::InvalidAddress, begin, pos_, "'%' must be followed by a direct address such as %IX0.0");
            return make(TokenKind::Error, begin);
        }
        return make(TokenKind::DirectAddress, begin);
    }

    const SourceFile& file_;
    std::string_view src_;
    DiagnosticSink& diags_;
    bool flatComments_; // dialect openplc: (* (* *) ends at the first *)
    std::uint32_t pos_ = 0;
};

} // namespace

std::string_view tokenSpelling(TokenKind kind) {
    return kSpellings[static_cast<std::size_t>(kind)];
}

bool isKeyword(TokenKind kind) {
    return kind >= TokenKind::Program && kind < TokenKind::Count_;
}

bool keywordKind(std::string_view word, TokenKind& out) {
    if (word.size() > kMaxKeywordLength) {
        return false;
    }
    std::array<char, kMaxKeywordLength> upper{};
    for (std::size_t i = 0; i < word.size(); ++i) {
        upper[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[i])));
    }
    const auto& table = keywordTable();
    auto it = table.find(std::string_view(upper.data(), word.size()));
    if (it == table.end()) {
        return false;
    }
    out = it->second;
    return true;
}

LexResult lex(const SourceFile& file, DiagnosticSink& diags, Dialect dialect) {
    return Lexer(file, diags, dialect).run();
}

} // namespace takt::compiler
