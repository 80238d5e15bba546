#include "takt/compiler/formatter.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "formatter_rules.h"
#include "takt/compiler/lexer.h"
#include "takt/compiler/names.h"
#include "takt/compiler/parser.h"

namespace takt::compiler {

namespace {

using namespace fmtrules;

constexpr int kIndentWidth = 4;
constexpr std::size_t kNone = static_cast<std::size_t>(-1);
// How many already-glued tokens the glue check re-lexes with the next token. The lexer looks
// at most three characters ahead, and every merge it can make (`1.5`, `%IX1.2`, `(*`, `..`)
// involves at most three tokens, so a window of three is enough.
constexpr std::size_t kGlueWindow = 3;

struct Block {
    TokenKind opener = TokenKind::EndOfFile;
    TokenKind closer = TokenKind::EndOfFile;
    bool caseBranch = false; // the statements of one CASE label (or its ELSE)
    bool awaitingOf = false; // a CASE whose OF has not been seen yet
};

// Comment text as it is written back: line comments lose trailing blanks (trailing whitespace
// is never kept), block comments and pragmas keep their inner text and only get LF endings.
std::string triviaText(std::string_view text, TriviaKind kind) {
    std::string out;
    if (kind == TriviaKind::LineComment) {
        while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
            text.remove_suffix(1);
        }
        return std::string(text);
    }
    // Every '\r' that ends a line goes, not just one per line: "\r\r\n" would otherwise
    // become "\r\n" and change again on the next run.
    out.reserve(text.size());
    for (char c : text) {
        if (c == '\n') {
            while (!out.empty() && out.back() == '\r') {
                out.pop_back();
            }
        }
        out.push_back(c);
    }
    return out;
}

// Lays the tokens and trivia of one file out in canonical form. One pass, left to right:
// block structure (a stack of open blocks) decides the indentation of statement lines, the
// author's line breaks inside a statement are kept as continuation lines where allowed, and
// every comment is written where it was relative to its neighbouring tokens.
class Layout {
public:
    Layout(std::string_view src, const LexResult& lex)
        : src_(src), toks_(lex.tokens), trivia_(lex.trivia), forced_(lex.tokens.size() + 1, 0) {}

    std::string run() {
        std::size_t t = 0;
        for (std::size_t i = 0; i < toks_.size(); ++i) {
            while (t < trivia_.size() && trivia_[t].begin < toks_[i].begin) {
                emitTrivia(trivia_[t++], i);
            }
            if (toks_[i].kind == TokenKind::EndOfFile) {
                break;
            }
            emitToken(i);
        }
        while (t < trivia_.size()) {
            emitTrivia(trivia_[t++], toks_.size() - 1);
        }
        if (!out_.empty()) {
            out_.push_back('\n');
        }
        return std::move(out_);
    }

private:
    std::string_view text(const Token& t) const { return src_.substr(t.begin, t.end - t.begin); }
    std::size_t newlinesBetween(std::uint32_t from, std::uint32_t to) const {
        return static_cast<std::size_t>(std::count(src_.begin() + from, src_.begin() + to, '\n'));
    }
    void force(std::size_t i) {
        if (i < forced_.size()) {
            forced_[i] = 1;
        }
    }
    bool statementLevel(std::size_t i) const {
        // truST writes the access specifier first: `PUBLIC PROPERTY p : T` stays one line.
        if (i > 0 && forced_[i] == 0 && (toks_[i].kind == TokenKind::Property || toks_[i].kind == TokenKind::Method) &&
            (toks_[i - 1].kind == TokenKind::Public || toks_[i - 1].kind == TokenKind::Private ||
             toks_[i - 1].kind == TokenKind::Protected || toks_[i - 1].kind == TokenKind::Internal)) {
            return false;
        }
        return !anyToken_ || forced_[i] != 0 || isLineLeader(toks_[i].kind) || toks_[i].kind == TokenKind::EndOfFile;
    }
    int continuationIndent(bool closing) const {
        int d = closing ? std::max(0, depth_ - 1) : std::max(1, depth_);
        return stmtIndent_ + kIndentWidth * d;
    }

    // An own-line comment between statements is indented like the body it sits in (so one
    // before END_IF or an IF's ELSE stays with the statements above it), except that a comment
    // just before a CASE label or a CASE's ELSE is indented like that label.
    int commentLevel(std::size_t nextToken) const {
        int n = static_cast<int>(stack_.size());
        TokenKind k = toks_[nextToken].kind;
        if (n > 0 && stack_.back().caseBranch &&
            (k == TokenKind::Else || (!isLineLeader(k) && findLabelColon(nextToken) != kNone))) {
            return n - 1;
        }
        return n;
    }

    // Ends the current line (keeping one blank line when asked) and indents the next one.
    void newline(bool blank, int indent) {
        if (!out_.empty()) {
            out_.push_back('\n');
            if (blank) {
                out_.push_back('\n');
            }
            out_.append(static_cast<std::size_t>(indent), ' ');
        }
        lineHasContent_ = false;
        mustNewline_ = false;
        afterComment_ = false;
        runBegins_.clear();
    }

    void emitTrivia(const Trivia& tv, std::size_t nextToken) {
        bool ownLine = !anyItem_ || newlinesBetween(prevEnd_, tv.begin) > 0;
        std::string body = triviaText(src_.substr(tv.begin, tv.end - tv.begin), tv.kind);
        if (ownLine) {
            int indent = statementLevel(nextToken) ? commentLevel(nextToken) * kIndentWidth : continuationIndent(false);
            newline(anyItem_ && newlinesBetween(prevEnd_, tv.begin) > 1, indent);
            // Whatever follows an own-line comment starts a line of its own, so the comment
            // is still on its own line when the output is formatted again.
            mustNewline_ = true;
        } else if (lineHasContent_) {
            out_.push_back(' ');
        }
        out_ += body;
        if (tv.kind == TriviaKind::LineComment) {
            mustNewline_ = true;
        }
        lineHasContent_ = true;
        afterComment_ = true;
        runBegins_.clear();
        prevEnd_ = tv.end;
        anyItem_ = true;
    }

    // Whether `next` can be written directly after the glued run on the current line without
    // lexing differently (`1` `.` `5` would become a REAL, `(` `*` a comment).
    bool glueSafe(const std::string& next) const {
        std::size_t n = runBegins_.size();
        std::size_t first = n > kGlueWindow ? n - kGlueWindow : 0;
        std::size_t base = runBegins_[first];
        std::vector<std::size_t> ends;
        for (std::size_t k = first + 1; k < n; ++k) {
            ends.push_back(runBegins_[k] - base);
        }
        ends.push_back(out_.size() - base);
        std::string glued = out_.substr(base) + next;
        ends.push_back(glued.size());
        return lexesAs(glued, ends);
    }

    void emitToken(std::size_t i) {
        const Token& t = toks_[i];
        TokenKind k = t.kind;
        std::string word = canonicalText(text(t), k);
        bool unary = (k == TokenKind::Minus || k == TokenKind::Plus) && !endsOperand(prevKind_);
        SpaceContext ctx{prevUnary_, i == labelColon_};
        bool postfix = (k == TokenKind::LParen || k == TokenKind::LBracket) && anyToken_ &&
                       !spaceBetween(prevKind_, k, SpaceContext{prevUnary_, false});
        bool blank = anyItem_ && newlinesBetween(prevEnd_, t.begin) > 1;

        if (statementLevel(i)) {
            depth_ = 0;
            int level = enterLine(i);
            stmtIndent_ = level * kIndentWidth;
            newline(blank, stmtIndent_);
        } else if (mustNewline_ || (t.lineStart && breakAllowed(prevKind_, k, prevUnary_, postfix))) {
            newline(blank, continuationIndent(k == TokenKind::RParen || k == TokenKind::RBracket));
        } else if (lineHasContent_) {
            bool closing = k == TokenKind::Semicolon || k == TokenKind::Comma || k == TokenKind::RParen ||
                           k == TokenKind::RBracket;
            bool space = (afterComment_ && !closing) || spaceBetween(prevKind_, k, ctx);
            if (!space && !runBegins_.empty() && !glueSafe(word)) {
                space = true;
            }
            if (space) {
                out_.push_back(' ');
                runBegins_.clear();
            }
        }
        runBegins_.push_back(out_.size());
        out_ += word;
        lineHasContent_ = true;
        afterComment_ = false;
        prevKind_ = k;
        prevUnary_ = unary;
        prevEnd_ = t.end;
        anyItem_ = true;
        anyToken_ = true;
        if (k == TokenKind::LParen || k == TokenKind::LBracket) {
            ++depth_;
        } else if ((k == TokenKind::RParen || k == TokenKind::RBracket) && depth_ > 0) {
            --depth_;
        }
        afterToken(i);
    }

    // Indentation level of a statement line that starts with token `i`; closes blocks (END_*)
    // and switches CASE branches on the way.
    int enterLine(std::size_t i) {
        TokenKind k = toks_[i].kind;
        int n = static_cast<int>(stack_.size());
        const Block* top = stack_.empty() ? nullptr : &stack_.back();
        if (isCloser(k)) {
            for (std::size_t j = stack_.size(); j-- > 0;) {
                if (stack_[j].closer == k) {
                    stack_.resize(j);
                    return static_cast<int>(j);
                }
            }
            return n;
        }
        if (k == TokenKind::Elsif || k == TokenKind::Until) {
            TokenKind owner = k == TokenKind::Elsif ? TokenKind::If : TokenKind::Repeat;
            return top != nullptr && top->opener == owner ? n - 1 : n;
        }
        if (k == TokenKind::Else) {
            if (top != nullptr && top->opener == TokenKind::If) {
                return n - 1;
            }
            if (top != nullptr && top->caseBranch) {
                stack_.pop_back();
                stack_.push_back(Block{TokenKind::Else, TokenKind::EndOfFile, true, false});
                return n - 1;
            }
            if (top != nullptr && top->opener == TokenKind::Case && !top->awaitingOf) {
                stack_.push_back(Block{TokenKind::Else, TokenKind::EndOfFile, true, false});
                return n;
            }
            return n;
        }
        bool inCase = top != nullptr && (top->caseBranch || (top->opener == TokenKind::Case && !top->awaitingOf));
        if (inCase) {
            std::size_t colon = findLabelColon(i);
            if (colon != kNone) {
                labelColon_ = colon;
                if (top->caseBranch) {
                    stack_.pop_back();
                }
                int level = static_cast<int>(stack_.size());
                stack_.push_back(Block{TokenKind::Colon, TokenKind::EndOfFile, true, false});
                return level;
            }
        }
        // A jump label `name:` in a body (not `name : TYPE` in a declaration): written like a
        // CASE label, the statement after it on a line of its own.
        if (k == TokenKind::Identifier && toks_[i + 1].kind == TokenKind::Colon && top != nullptr &&
            !isVarSection(top->opener) && top->opener != TokenKind::Type && top->opener != TokenKind::Struct &&
            top->opener != TokenKind::Union) {
            labelColon_ = i + 1;
        }
        return n;
    }

    // A CASE label is an expression list ending in ':' before any ';', ':=' or statement keyword.
    std::size_t findLabelColon(std::size_t i) const {
        int depth = 0;
        for (std::size_t j = i; j < toks_.size(); ++j) {
            TokenKind k = toks_[j].kind;
            if (k == TokenKind::LParen || k == TokenKind::LBracket) {
                ++depth;
            } else if (k == TokenKind::RParen || k == TokenKind::RBracket) {
                depth = std::max(0, depth - 1);
            } else if (k == TokenKind::Colon && depth == 0) {
                return j;
            } else if (k == TokenKind::EndOfFile ||
                       (depth == 0 && (k == TokenKind::Semicolon || k == TokenKind::Assign || k == TokenKind::Arrow))) {
                return kNone;
            } else if (isKeyword(k) && k != TokenKind::And && k != TokenKind::Or && k != TokenKind::Xor &&
                       k != TokenKind::AndThen && k != TokenKind::OrElse && k != TokenKind::Not &&
                       k != TokenKind::Mod && k != TokenKind::True && k != TokenKind::False) {
                return kNone;
            }
        }
        return kNone;
    }

    void push(TokenKind opener, bool awaitingOf = false) {
        stack_.push_back(Block{opener, closerFor(opener), false, awaitingOf});
    }

    bool insideConfiguration() const {
        return !stack_.empty() &&
               (stack_.back().opener == TokenKind::Configuration || stack_.back().opener == TokenKind::Resource);
    }

    // Block structure and forced line breaks that token `i` causes after itself.
    void afterToken(std::size_t i) {
        TokenKind k = toks_[i].kind;
        TokenKind next = toks_[i + 1].kind;
        switch (k) {
        case TokenKind::Semicolon:
        case TokenKind::Then:
        case TokenKind::Do:
            if (depth_ == 0) {
                force(i + 1);
            }
            return;
        case TokenKind::Else: force(i + 1); return;
        case TokenKind::If:
        case TokenKind::For:
        case TokenKind::While: push(k); return;
        case TokenKind::Case: push(k, true); return;
        case TokenKind::Repeat:
        case TokenKind::Struct:
        case TokenKind::Union:
        case TokenKind::Type:
            push(k);
            force(i + 1);
            return;
        case TokenKind::Of:
            if (!stack_.empty() && stack_.back().opener == TokenKind::Case && stack_.back().awaitingOf) {
                stack_.back().awaitingOf = false;
                force(i + 1);
            }
            return;
        case TokenKind::Colon:
            if (i == labelColon_) {
                force(i + 1);
            }
            return;
        default: break;
        }
        if (isVarSection(k)) {
            push(k);
            std::size_t j = i + 1;
            while (isVarQualifier(toks_[j].kind)) {
                ++j;
            }
            force(j);
        } else if (isPouKeyword(k)) {
            // `PROGRAM inst WITH task : Type;` inside a RESOURCE declares an instance, not a POU.
            if (k == TokenKind::Program && insideConfiguration()) {
                return;
            }
            push(k);
            force(headerEnd(toks_, i, src_));
        } else if (isCloser(k) && next != TokenKind::Semicolon) {
            force(i + 1);
        } else if (k == TokenKind::Identifier && forced_[i] != 0 && !stack_.empty() &&
                   stack_.back().opener == TokenKind::Property) {
            // GET / SET (not keywords: see token_kinds.def) open the accessor blocks of a PROPERTY.
            const bool get = sameName(text(toks_[i]), "GET");
            if (get || sameName(text(toks_[i]), "SET")) {
                stack_.push_back(Block{k, get ? TokenKind::EndGet : TokenKind::EndSet, false, false});
                force(i + 1);
            }
        }
    }

    std::string_view src_;
    const std::vector<Token>& toks_;
    const std::vector<Trivia>& trivia_;
    std::vector<char> forced_; // forced_[i]: token i starts a statement line
    std::vector<Block> stack_;
    std::string out_;
    std::vector<std::size_t> runBegins_; // offsets in out_ of the tokens glued since the last space
    std::size_t labelColon_ = kNone;
    std::uint32_t prevEnd_ = 0;
    TokenKind prevKind_ = TokenKind::EndOfFile;
    int depth_ = 0;
    int stmtIndent_ = 0;
    bool prevUnary_ = false;
    bool lineHasContent_ = false;
    bool mustNewline_ = false;
    bool afterComment_ = false;
    bool anyItem_ = false;
    bool anyToken_ = false;
};

} // namespace

namespace fmtrules {

std::string layoutTokens(std::string_view src, const LexResult& lexed) {
    return Layout(src, lexed).run();
}

// Tokens and comments of the output must be those of the input (up to canonical spelling and
// comment normalisation). Checked on every run so that a layout bug can never corrupt a file.
bool sameContent(std::string_view in, const LexResult& a, std::string_view out, const LexResult& b) {
    if (a.tokens.size() != b.tokens.size() || a.trivia.size() != b.trivia.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.tokens.size(); ++i) {
        const Token& x = a.tokens[i];
        const Token& y = b.tokens[i];
        if (x.kind != y.kind ||
            canonicalText(in.substr(x.begin, x.end - x.begin), x.kind) != out.substr(y.begin, y.end - y.begin)) {
            return false;
        }
    }
    for (std::size_t i = 0; i < a.trivia.size(); ++i) {
        const Trivia& x = a.trivia[i];
        const Trivia& y = b.trivia[i];
        if (x.kind != y.kind ||
            triviaText(in.substr(x.begin, x.end - x.begin), x.kind) != out.substr(y.begin, y.end - y.begin)) {
            return false;
        }
    }
    return true;
}

} // namespace fmtrules

FormatResult formatSource(const SourceFile& file, DiagnosticSink& diags) {
    FormatResult result;
    // A sink of our own decides whether the file is sound: the caller's may already be at its
    // error limit, where it would swallow new errors and let a broken file through.
    DiagnosticSink own;
    LexResult lexed = lex(file, own);
    // Only files that parse are rewritten: the layout follows block structure, and a file with
    // a syntax error is one whose structure the author has not finished saying.
    if (!own.hasErrors()) {
        (void)parse(file, lexed, own);
    }
    for (const Diagnostic& d : own.diagnostics()) {
        if (Diagnostic* copy = diags.report(d.code, d.span, d.message)) {
            copy->related = d.related;
        }
    }
    if (own.hasErrors()) {
        return result;
    }
    std::string text = layoutTokens(file.text(), lexed);

    SourceFile check(file.id(), file.path(), text);
    DiagnosticSink checkDiags;
    LexResult relexed = lex(check, checkDiags);
    if (checkDiags.hasErrors() || !sameContent(file.text(), lexed, text, relexed)) {
        diags.report(DiagCode::FormatFailed, Span{file.id(), 0, 0},
                     "the formatter could not lay out '" + file.path() + "' without changing its tokens");
        return result;
    }
    result.ok = true;
    result.changed = text != file.text();
    result.text = std::move(text);
    return result;
}

} // namespace takt::compiler
