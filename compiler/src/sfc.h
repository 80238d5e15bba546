#pragma once
// Textual SFC (IEC 61131-3 2.6) in a PROGRAM's or FUNCTION_BLOCK's body, as the parser reads it
// (parser_sfc.cpp), and its lowering into the POU's own variables and statements (sfc_lower.cpp):
// every later phase sees Structured Text only. docs/language-notes.md "SFC" is the user's view.
//
// Each step is a variable of the standard STRUCT SFC_STEP (its flags X and T read as `Step.X`,
// `Step.T`). Each action gets the state of its IEC action control block: the stored flags
// `A$S`, `A$SD`, `A$DS`, `A$SL` (BOOL) and the times `A$SDt`, `A$SLt` at which SD and SL were
// stored, for the qualifiers it is used with; an ACTION also `A$Q` (its Q) and `A$A` (Q or the
// final scan). The body gets, after any ST of its own, in this order every cycle:
//   1. step times: T restarts at a step's first active cycle and counts while it is active;
//   2. actions, in the order they are first associated: the stored flags are set and reset,
//      then an ACTION runs while Q is TRUE and once more in the cycle Q falls, a Boolean action
//      is assigned Q;
//   3. transitions, by PRIORITY (lowest first; those without one after them), then in
//      declaration order: one whose source steps are all active and not yet
//      left this cycle, and whose condition is TRUE, fires: its sources are left, its targets
//      entered. A step entered now runs its actions from the next cycle on (CODESYS's order).
// A POU that declares SFCInit or SFCReset (BOOL) gets a reset of the chart before the phases; one
// that declares SFCInit or SFCPause runs the phases only while they are FALSE (CODESYS's flags).
#include <memory>
#include <vector>

#include "takt/compiler/ast.h"
#include "takt/compiler/diagnostics.h"

namespace takt::compiler {

// `Fill(N);`, `Alarm(L, T#5s);` inside a step.
struct SfcAssociation {
    ast::Identifier action;
    ast::Identifier qualifier; // N R S P P0 P1 L D SD DS SL; empty name: N
    ast::ExprPtr duration;     // L D SD DS SL
    Span span;
};

struct SfcStep {
    ast::Identifier name;
    bool initial = false;
    std::vector<SfcAssociation> actions;
    Span span;
};

struct SfcTransition {
    ast::Identifier name;              // optional: a BOOL of the POU, TRUE in the cycle it fires
    ast::ExprPtr priority;             // `(PRIORITY := n)`: an integer literal, lowest tested first
    std::vector<ast::Identifier> from; // several: simultaneous convergence
    std::vector<ast::Identifier> to;   // several: simultaneous divergence
    ast::ExprPtr condition;            // `:= condition;`
    bool hasBody = false;              // `: statements` assigning the condition to `name`
    ast::StmtList body;
    Span span;
};

struct SfcChart {
    std::vector<SfcStep> steps;
    std::vector<SfcTransition> transitions;
    // From the first step or transition to the end of the last (ACTIONs between included): the
    // generated statements together cover it, so a tool that blanks a body's statements
    // (frontend_facts.cpp, declarationsOnly) blanks the whole chart.
    Span extent;
    [[nodiscard]] bool empty() const { return steps.empty() && transitions.empty(); }
};

// Checks the chart (E0025: unknown or repeated steps, not exactly one INITIAL_STEP, a qualifier's
// time, a PRIORITY that is no integer literal, a second SD, DS or SL of one action, a transition's name or body, an
// SFCInit, SFCReset or SFCPause that is no BOOL; sfc_check.cpp) and adds its variables and statements to
// `pou`. Of a chart with an error only its declarations and what it reads and writes are added
// (sfc_lower.cpp, declareRefused), so the error brings no others.
void lowerSfc(ast::PouDecl& pou, SfcChart& chart, DiagnosticSink& diags);

// The chart as written (sfc_outline.cpp); `statements`: the body has ST of its own beside it.
[[nodiscard]] std::shared_ptr<const ast::SfcOutline> outlineSfc(const SfcChart& chart, bool statements);

} // namespace takt::compiler
