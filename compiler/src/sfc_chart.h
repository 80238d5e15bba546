#pragma once
// What checking an SFC chart (sfc_check.cpp) and lowering it (sfc_lower.cpp) both ask of it and
// of its POU, and the action qualifiers, which the PLCopen reader's SFC (plcopen/sfc.cpp) checks
// too before it writes a chart as text.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sfc.h"

namespace takt::compiler::sfc {

enum class Qualifier : std::uint8_t { N, R, S, P, P0, P1, L, D, SD, DS, SL, Unknown };

// `N`, `sd`, … (any case; empty: N); Unknown for anything else.
[[nodiscard]] Qualifier qualifierOf(std::string_view q);
// The qualifiers that take a time (IEC 61131-3 table 45: L, D, SD, DS, SL).
[[nodiscard]] bool timed(Qualifier q);
// "N, R, S, P, L, D, P0, P1, SD, DS, SL": the valid ones, for messages.
[[nodiscard]] std::string_view qualifierNames();

// The stored qualifiers whose flag has a time of its own: one association of each per action.
inline constexpr Qualifier kTimedStores[] = {Qualifier::SD, Qualifier::DS, Qualifier::SL};

// CODESYS's implicit chart flags, honoured when the POU declares them.
inline constexpr const char* kChartFlags[] = {"SFCInit", "SFCReset", "SFCPause"};

struct ChartView {
    const ast::PouDecl& pou;
    const SfcChart& chart;

    // The first step of that name (any case).
    [[nodiscard]] const SfcStep* findStep(std::string_view name) const;
    [[nodiscard]] const SfcStep* initialStep() const;
    // Whether `name` is one of the POU's ACTIONs.
    [[nodiscard]] bool isAction(std::string_view name) const;
    // The POU's own declaration of `name`, if any.
    [[nodiscard]] const ast::VarDecl* userVariable(std::string_view name) const;
    // The declared chart flag's name (as the user spelled it), or an empty identifier.
    [[nodiscard]] ast::Identifier chartFlag(std::string_view name) const;
    // The actions in the order they are first associated (upper-case names).
    [[nodiscard]] std::vector<std::string> actionOrder() const;
    // Whether some step associates `action` with qualifier q.
    [[nodiscard]] bool uses(std::string_view action, Qualifier q) const;
    [[nodiscard]] const SfcAssociation* firstAssociation(std::string_view action) const;
};

[[nodiscard]] bool isBool(const ast::VarDecl& d);

// Whether two FROM or TO lists name the same steps, in any order and case (each list names a
// step once): transitions entering the same steps open one simultaneous divergence.
[[nodiscard]] bool sameSteps(const std::vector<ast::Identifier>& a, const std::vector<ast::Identifier>& b);

// A RETURN, label or JMP in a transition's body: it would leave the chart's evolution half done
// (the body is spliced into the POU's statements).
[[nodiscard]] const ast::Stmt* escapeOf(const ast::StmtList& body);

// E0025 for what cannot run (sfc.h, lowerSfc); true when the chart is sound.
[[nodiscard]] bool checkChart(const ChartView& view, DiagnosticSink& diags);

} // namespace takt::compiler::sfc
