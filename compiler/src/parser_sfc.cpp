// Textual SFC elements in a POU body (IEC 61131-3 2.6): steps with their action associations and
// transitions, collected into the POU's chart (sfc.h). STEP, INITIAL_STEP, TRANSITION, FROM,
// END_STEP and END_TRANSITION are not keywords (a variable may be called step or from): only
// `STEP name`, `INITIAL_STEP name` and `TRANSITION FROM|name` at a statement's start count.
#include <fmt/format.h>

#include "parser_internal.h"
#include "sfc.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

namespace {

enum class SfcHead : std::uint8_t { None, InitialStep, Step, Transition };

SfcHead sfcHead(std::string_view word) {
    if (sameName(word, "INITIAL_STEP")) {
        return SfcHead::InitialStep;
    }
    if (sameName(word, "STEP")) {
        return SfcHead::Step;
    }
    if (sameName(word, "TRANSITION")) {
        return SfcHead::Transition;
    }
    return SfcHead::None;
}

} // namespace

bool Parser::atWord(std::string_view word) const {
    return at(TokenKind::Identifier) && sameName(text(), word);
}

// `TRANSITION (PRIORITY …) FROM`: an unnamed transition with IEC 61131-3's priority. Only
// the whole shape counts, FROM after the closing parenthesis included: `Transition(Priority := 1);`
// is an ordinary call of a function or FB instance named Transition.
bool Parser::atSfcPriorityTransition() const {
    if (!atWord("TRANSITION") || peek(1) != TokenKind::LParen || peek(2) != TokenKind::Identifier ||
        !sameName(text(peekTok(2)), "PRIORITY")) {
        return false;
    }
    int depth = 1;
    for (std::size_t i = 3; depth > 0; ++i) {
        const TokenKind k = peek(i);
        if (k == TokenKind::EndOfFile || k == TokenKind::Semicolon) {
            return false;
        }
        depth += k == TokenKind::LParen ? 1 : k == TokenKind::RParen ? -1 : 0;
        if (depth == 0) {
            return peek(i + 1) == TokenKind::Identifier && sameName(text(peekTok(i + 1)), "FROM");
        }
    }
    return false;
}

// Skips to past `end` (END_STEP / END_TRANSITION), or to the POU's END_* if it is missing.
void Parser::skipSfcTo(std::string_view end) {
    while (!atEnd() && !isEndKeyword(kind()) && !atWord(end)) {
        advance();
    }
    if (atWord(end)) {
        advance();
        accept(TokenKind::Semicolon);
    }
}

bool Parser::parseSfcElement() {
    const SfcHead head = sfcHead(text());
    if (head == SfcHead::None) {
        return false;
    }
    const std::string_view end = head == SfcHead::Transition ? "END_TRANSITION" : "END_STEP";
    if (sfc_ == nullptr || stmtDepth_ > 0) {
        report(DiagCode::SfcNotSupported, span(),
               fmt::format("sequential function chart element '{}' {}: takt compiles SFC only in the body of a "
                           "PROGRAM or FUNCTION_BLOCK, beside its statements",
                           text(),
                           sfc_ == nullptr ? "outside the body of a PROGRAM or FUNCTION_BLOCK"
                                           : "inside a statement or a transition's body"));
        skipSfcTo(end);
        return true;
    }
    const std::uint32_t begin = startOffset();
    if (head == SfcHead::Transition) {
        parseSfcTransition();
    } else {
        parseSfcStep(head == SfcHead::InitialStep);
    }
    if (!sfc_->extent.valid()) {
        sfc_->extent = spanFrom(begin);
    }
    sfc_->extent.end = spanFrom(begin).end;
    return true;
}

// [INITIAL_]STEP name : { action ( [qualifier [, time]] ) ; } END_STEP
void Parser::parseSfcStep(bool initial) {
    const std::uint32_t begin = startOffset();
    advance(); // STEP / INITIAL_STEP
    SfcStep step;
    step.initial = initial;
    step.name = expectIdentifier(initial ? "after INITIAL_STEP" : "after STEP");
    if (!expect(TokenKind::Colon, fmt::format("after the step name '{}'", step.name.name))) {
        skipSfcTo("END_STEP");
        return;
    }
    while (!atEnd() && !atWord("END_STEP") && !isEndKeyword(kind())) {
        const std::uint32_t at0 = startOffset();
        SfcAssociation a;
        a.action = expectIdentifier("as an action of the step (Action(N);)");
        if (a.action.name.empty()) {
            skipSfcTo("END_STEP");
            step.span = spanFrom(begin);
            sfc_->steps.push_back(std::move(step));
            return;
        }
        if (accept(TokenKind::LParen)) {
            if (at(TokenKind::Identifier)) {
                a.qualifier = identifier(advance());
            }
            if (accept(TokenKind::Comma)) {
                a.duration = parseExpression();
            }
            expect(TokenKind::RParen, "after the action qualifier");
        }
        a.span = spanFrom(at0);
        expectSemicolon("after the action association");
        step.actions.push_back(std::move(a));
    }
    if (!atWord("END_STEP")) {
        errorExpected("END_STEP", fmt::format("to close step '{}'", step.name.name));
    } else {
        advance();
        accept(TokenKind::Semicolon);
    }
    step.span = spanFrom(begin);
    sfc_->steps.push_back(std::move(step));
}

// One step, or `(s1, s2, …)` (simultaneous divergence and convergence).
void Parser::parseSfcSteps(std::vector<ast::Identifier>& out, std::string_view context) {
    if (accept(TokenKind::LParen)) {
        do {
            out.push_back(expectIdentifier(context));
        } while (accept(TokenKind::Comma));
        expect(TokenKind::RParen, context);
        return;
    }
    out.push_back(expectIdentifier(context));
}

// TRANSITION [name] [(PRIORITY := n)] FROM steps TO steps ( := condition ; | : statements ) END_TRANSITION
void Parser::parseSfcTransition() {
    const std::uint32_t begin = startOffset();
    advance(); // TRANSITION
    SfcTransition t;
    if (at(TokenKind::Identifier) && !atWord("FROM")) {
        t.name = identifier(advance());
    }
    if (accept(TokenKind::LParen)) {
        // IEC 61131-3's priority among the transitions leaving one step (lowest first)
        if (!atWord("PRIORITY")) {
            errorExpected("PRIORITY", "in TRANSITION ( … )");
            skipSfcTo("END_TRANSITION");
            return;
        }
        advance();
        if (!expect(TokenKind::Assign, "after PRIORITY")) {
            skipSfcTo("END_TRANSITION");
            return;
        }
        t.priority = parseExpression();
        if (!expect(TokenKind::RParen, "after the transition's priority")) {
            skipSfcTo("END_TRANSITION");
            return;
        }
    }
    if (!atWord("FROM")) {
        errorExpected("FROM", "in TRANSITION");
        skipSfcTo("END_TRANSITION");
        return;
    }
    advance();
    parseSfcSteps(t.from, "after TRANSITION FROM");
    if (!expect(TokenKind::To, "after the transition's source steps")) {
        skipSfcTo("END_TRANSITION");
        return;
    }
    parseSfcSteps(t.to, "after TRANSITION … TO");
    if (accept(TokenKind::Colon)) {
        // The body: statements up to END_TRANSITION, nested one level (an SFC element in it
        // is E0020, as inside any statement).
        t.hasBody = true;
        DepthGuard guard(stmtDepth_);
        while (!atEnd() && !atWord("END_TRANSITION") && !isEndKeyword(kind()) && !isDeclStart(kind()) &&
               !isMemberStart(kind())) {
            const std::size_t before = pos_;
            if (ast::StmtPtr s = parseStatement()) {
                t.body.push_back(std::move(s));
            }
            if (pos_ == before) {
                advance();
            }
        }
    } else if (expect(TokenKind::Assign, "before the transition's condition (or ':' before its body)")) {
        t.condition = parseExpression();
        expectSemicolon("after the transition's condition");
    } else {
        skipSfcTo("END_TRANSITION");
        return;
    }
    if (!atWord("END_TRANSITION")) {
        errorExpected("END_TRANSITION", "to close the transition");
    } else {
        advance();
        accept(TokenKind::Semicolon);
    }
    t.span = spanFrom(begin);
    sfc_->transitions.push_back(std::move(t));
}

} // namespace takt::compiler
