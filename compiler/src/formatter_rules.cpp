#include "formatter_rules.h"

#include <algorithm>
#include <iterator>

#include "takt/compiler/lexer.h"
#include "takt/compiler/names.h"

namespace takt::compiler::fmtrules {

namespace {

// Elementary type names are identifiers to the lexer (token_kinds.def) but are spelled in
// upper case in canonical layout, like keywords.
constexpr std::string_view kElementaryTypes[] = {
    "BOOL",  "SINT", "INT",   "DINT",        "LINT",           "USINT", "UINT",  "UDINT",
    "ULINT", "BYTE", "WORD",  "DWORD",       "LWORD",          "REAL",  "LREAL", "TIME",
    "LTIME", "DATE", "LDATE", "TIME_OF_DAY", "LTIME_OF_DAY",   "TOD",   "LTOD",  "DATE_AND_TIME",
    "LDT",   "DT",   "CHAR",  "WCHAR",       "LDATE_AND_TIME",
};

bool oneOf(TokenKind k, std::initializer_list<TokenKind> kinds) {
    return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
}

std::string upperPrefix(std::string_view text) {
    std::size_t hash = text.find('#');
    std::string out = upperName(text.substr(0, hash));
    if (hash != std::string_view::npos) {
        out.append(text.substr(hash));
    }
    return out;
}

// Skips a bracketed group starting at `i` ('(' or '['); returns the index after its closer.
std::size_t skipGroup(const std::vector<Token>& tokens, std::size_t i) {
    int depth = 0;
    for (; tokens[i].kind != TokenKind::EndOfFile; ++i) {
        TokenKind k = tokens[i].kind;
        if (k == TokenKind::LParen || k == TokenKind::LBracket) {
            ++depth;
        } else if (k == TokenKind::RParen || k == TokenKind::RBracket) {
            if (--depth == 0) {
                return i + 1;
            }
        } else if (k == TokenKind::Semicolon) {
            return i; // an unclosed group never swallows the next declaration
        }
    }
    return i;
}

std::size_t dottedName(const std::vector<Token>& tokens, std::size_t i) {
    if (tokens[i].kind != TokenKind::Identifier) {
        return i;
    }
    ++i;
    while (tokens[i].kind == TokenKind::Dot && tokens[i + 1].kind == TokenKind::Identifier) {
        i += 2;
    }
    return i;
}

std::size_t typeEnd(const std::vector<Token>& tokens, std::size_t i) {
    while (tokens[i].kind == TokenKind::RefTo) {
        ++i;
    }
    switch (tokens[i].kind) {
    case TokenKind::Array:
        ++i;
        if (tokens[i].kind == TokenKind::LBracket) {
            i = skipGroup(tokens, i);
        }
        if (tokens[i].kind == TokenKind::Of) {
            return typeEnd(tokens, i + 1);
        }
        return i;
    case TokenKind::String:
    case TokenKind::WString:
        ++i;
        if (tokens[i].kind == TokenKind::LBracket || tokens[i].kind == TokenKind::LParen) {
            i = skipGroup(tokens, i);
        }
        return i;
    default: return dottedName(tokens, i);
    }
}

} // namespace

bool isElementaryTypeName(std::string_view name) {
    return std::any_of(std::begin(kElementaryTypes), std::end(kElementaryTypes),
                       [&](std::string_view t) { return sameName(name, t); });
}

std::string canonicalText(std::string_view text, TokenKind kind) {
    if (isKeyword(kind)) {
        return upperName(text);
    }
    switch (kind) {
    case TokenKind::TimeLiteral:
    case TokenKind::DateLiteral:
    case TokenKind::TodLiteral:
    case TokenKind::DtLiteral: return upperPrefix(text);
    case TokenKind::TypedPrefix:
        return isElementaryTypeName(text.substr(0, text.size() - 1)) ? upperName(text) : std::string(text);
    case TokenKind::Identifier: return isElementaryTypeName(text) ? upperName(text) : std::string(text);
    default: return std::string(text);
    }
}

bool endsOperand(TokenKind kind) {
    return oneOf(kind, {TokenKind::Identifier, TokenKind::IntLiteral, TokenKind::RealLiteral, TokenKind::StringLiteral,
                        TokenKind::WStringLiteral, TokenKind::TimeLiteral, TokenKind::DateLiteral,
                        TokenKind::TodLiteral, TokenKind::DtLiteral, TokenKind::DirectAddress, TokenKind::RParen,
                        TokenKind::RBracket, TokenKind::Caret, TokenKind::True, TokenKind::False, TokenKind::Null,
                        TokenKind::This, TokenKind::Super});
}

TokenKind closerFor(TokenKind opener) {
    switch (opener) {
    case TokenKind::Program: return TokenKind::EndProgram;
    case TokenKind::Function: return TokenKind::EndFunction;
    case TokenKind::FunctionBlock: return TokenKind::EndFunctionBlock;
    case TokenKind::Method: return TokenKind::EndMethod;
    case TokenKind::Action: return TokenKind::EndAction;
    case TokenKind::Interface: return TokenKind::EndInterface;
    case TokenKind::Property: return TokenKind::EndProperty;
    case TokenKind::Class: return TokenKind::EndClass;
    case TokenKind::Namespace: return TokenKind::EndNamespace;
    case TokenKind::TestProgram: return TokenKind::EndTestProgram;
    case TokenKind::TestFunctionBlock: return TokenKind::EndTestFunctionBlock;
    case TokenKind::Configuration: return TokenKind::EndConfiguration;
    case TokenKind::Resource: return TokenKind::EndResource;
    case TokenKind::Type: return TokenKind::EndType;
    case TokenKind::Struct: return TokenKind::EndStruct;
    case TokenKind::Union: return TokenKind::EndUnion;
    case TokenKind::If: return TokenKind::EndIf;
    case TokenKind::Case: return TokenKind::EndCase;
    case TokenKind::For: return TokenKind::EndFor;
    case TokenKind::While: return TokenKind::EndWhile;
    case TokenKind::Repeat: return TokenKind::EndRepeat;
    default: return isVarSection(opener) ? TokenKind::EndVar : TokenKind::EndOfFile;
    }
}

bool isCloser(TokenKind kind) {
    return oneOf(kind, {TokenKind::EndProgram,
                        TokenKind::EndFunction,
                        TokenKind::EndFunctionBlock,
                        TokenKind::EndMethod,
                        TokenKind::EndAction,
                        TokenKind::EndInterface,
                        TokenKind::EndNamespace,
                        TokenKind::EndTestProgram,
                        TokenKind::EndTestFunctionBlock,
                        TokenKind::EndConfiguration,
                        TokenKind::EndResource,
                        TokenKind::EndType,
                        TokenKind::EndStruct,
                        TokenKind::EndUnion,
                        TokenKind::EndVar,
                        TokenKind::EndIf,
                        TokenKind::EndCase,
                        TokenKind::EndFor,
                        TokenKind::EndWhile,
                        TokenKind::EndRepeat}) ||
           oneOf(kind, {TokenKind::EndProperty, TokenKind::EndGet, TokenKind::EndSet, TokenKind::EndClass});
}

bool isVarSection(TokenKind kind) {
    return oneOf(kind, {TokenKind::Var, TokenKind::VarInput, TokenKind::VarOutput, TokenKind::VarInOut,
                        TokenKind::VarTemp, TokenKind::VarStat, TokenKind::VarGlobal, TokenKind::VarExternal,
                        TokenKind::VarAccess, TokenKind::VarConfig});
}

bool isVarQualifier(TokenKind kind) {
    return oneOf(kind, {TokenKind::Constant, TokenKind::Retain, TokenKind::NonRetain, TokenKind::Persistent});
}

bool isPouKeyword(TokenKind kind) {
    return oneOf(kind, {TokenKind::Program, TokenKind::Function, TokenKind::FunctionBlock, TokenKind::Method,
                        TokenKind::Action, TokenKind::Interface, TokenKind::Namespace, TokenKind::TestProgram,
                        TokenKind::TestFunctionBlock, TokenKind::Configuration, TokenKind::Resource}) ||
           oneOf(kind, {TokenKind::Property, TokenKind::Class});
}

bool isLineLeader(TokenKind kind) {
    return isCloser(kind) || isPouKeyword(kind) || isVarSection(kind) ||
           oneOf(kind, {TokenKind::Else, TokenKind::Elsif, TokenKind::Until, TokenKind::Type});
}

bool spaceBetween(TokenKind prev, TokenKind next, const SpaceContext& ctx) {
    if (prev == TokenKind::Ref && next == TokenKind::Equal) {
        return false; // `r REF= x` (CODESYS) is one operator
    }
    if (oneOf(next, {TokenKind::Semicolon, TokenKind::Comma, TokenKind::RParen, TokenKind::RBracket, TokenKind::Dot,
                     TokenKind::DotDot, TokenKind::Caret})) {
        return false;
    }
    if (oneOf(prev,
              {TokenKind::LParen, TokenKind::LBracket, TokenKind::Dot, TokenKind::DotDot, TokenKind::TypedPrefix}) ||
        ctx.prevUnary || ctx.labelColon) {
        return false;
    }
    if (next == TokenKind::LParen) {
        // Calls, `STRING(20)`, `REF(x)` and the repetition `3(0)` in array initialisers.
        return !oneOf(prev, {TokenKind::Identifier, TokenKind::RBracket, TokenKind::Caret, TokenKind::Ref,
                             TokenKind::String, TokenKind::WString, TokenKind::IntLiteral});
    }
    if (next == TokenKind::LBracket) {
        // Indexing and `STRING[20]`; `ARRAY [` and an initialiser `:= [` keep their space.
        return !oneOf(prev, {TokenKind::Identifier, TokenKind::RBracket, TokenKind::RParen, TokenKind::Caret,
                             TokenKind::String, TokenKind::WString});
    }
    return true;
}

bool breakAllowed(TokenKind prev, TokenKind next, bool prevUnary, bool nextIsPostfix) {
    if (prev == TokenKind::Ref && next == TokenKind::Equal) {
        return false;
    }
    if (oneOf(next,
              {TokenKind::Semicolon, TokenKind::Comma, TokenKind::Dot, TokenKind::DotDot, TokenKind::Caret,
               TokenKind::Colon, TokenKind::Then, TokenKind::Do, TokenKind::Of, TokenKind::Assign, TokenKind::Arrow})) {
        return false;
    }
    if (nextIsPostfix || prevUnary) {
        return false;
    }
    return !oneOf(prev, {TokenKind::Dot, TokenKind::DotDot, TokenKind::TypedPrefix, TokenKind::Hash});
}

std::size_t headerEnd(const std::vector<Token>& tokens, std::size_t kw, std::string_view src) {
    // `METHOD Override x := 1;` is a method named Override whose body starts with `x`.
    auto startsStatement = [](TokenKind k) {
        return oneOf(k, {TokenKind::Assign, TokenKind::LParen, TokenKind::Dot, TokenKind::LBracket, TokenKind::Caret});
    };
    auto isOverride = [&](std::size_t i) {
        return tokens[i].kind == TokenKind::Identifier && tokens[i + 1].kind == TokenKind::Identifier &&
               !startsStatement(tokens[i + 2].kind) &&
               sameName(src.substr(tokens[i].begin, tokens[i].end - tokens[i].begin), "OVERRIDE");
    };
    std::size_t i = kw + 1;
    while (oneOf(tokens[i].kind, {TokenKind::Public, TokenKind::Private, TokenKind::Protected, TokenKind::Internal,
                                  TokenKind::Abstract, TokenKind::Final}) ||
           isOverride(i)) { // not a keyword: OVERRIDE followed by the name
        ++i;
    }
    i = dottedName(tokens, i);
    if (tokens[kw].kind == TokenKind::Action) { // ACTION name [:] -- statements follow the colon
        return tokens[i].kind == TokenKind::Colon ? i + 1 : i;
    }
    for (;;) {
        TokenKind k = tokens[i].kind;
        if (k == TokenKind::Colon) {
            i = typeEnd(tokens, i + 1);
        } else if (k == TokenKind::Extends || k == TokenKind::Implements) {
            i = dottedName(tokens, i + 1);
            while (tokens[i].kind == TokenKind::Comma) {
                i = dottedName(tokens, i + 1);
            }
        } else if (k == TokenKind::On) {
            i = dottedName(tokens, i + 1);
        } else {
            return i;
        }
    }
}

bool lexesAs(std::string_view glued, const std::vector<std::size_t>& ends) {
    SourceFile probe(0, std::string(), std::string(glued));
    DiagnosticSink sink;
    LexResult r = lex(probe, sink);
    if (sink.hasErrors() || !r.trivia.empty() || r.tokens.size() != ends.size() + 1) {
        return false;
    }
    for (std::size_t i = 0; i < ends.size(); ++i) {
        if (r.tokens[i].end != ends[i]) {
            return false;
        }
    }
    return true;
}

} // namespace takt::compiler::fmtrules
