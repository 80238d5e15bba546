// `takt export plcopen` for a PROGRAM's or FUNCTION_BLOCK's SFC chart (ast::SfcOutline): the
// chart as a TC6 `<SFC>` network that the reader (sfc.cpp) and the editors read back.
//
// Elements come in the chart's own order (steps and transitions as written, so that the reader,
// which writes them in the XML's order, gives the same chart), each after what it hangs on:
// - a step with several transitions leaving it is followed by a selectionDivergence;
// - a transition from several steps follows a simultaneousConvergence of them, and one to several
//   steps is followed by a simultaneousDivergence;
// - a step that transitions further down enter from more than one place follows a
//   selectionConvergence of them; a transition to a step written above it (a loop back) ends in a
//   jumpStep naming it, as the editors draw it.
// The drawing is one column: positions are given because the editors need them, not for looks.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "export.h"
#include "takt/compiler/names.h"

namespace takt::compiler::plcopen {

namespace {

// What the network's elements connect to, by localId, before any is written.
struct Layout {
    struct StepIds {
        int step = 0;
        int divergence = 0;             // selectionDivergence after it; 0 when one transition or none leaves
        int convergence = 0;            // selectionConvergence before it; 0 when one place or none enters
        std::vector<int> incoming;      // the elements (transition or simultaneousDivergence) entering it
        std::vector<std::size_t> leave; // the transitions leaving it
    };
    struct TransitionIds {
        int convergence = 0; // simultaneousConvergence before it; 0 from one step
        int transition = 0;
        int divergence = 0;             // simultaneousDivergence after it; 0 to one step
        std::vector<std::string> jumps; // the steps above it it enters, each by a jumpStep
        std::vector<int> jumpIds;
    };
    std::vector<StepIds> steps;
    std::vector<TransitionIds> transitions;
    std::map<std::string, std::size_t> stepIndex; // upper-case name -> steps index
    int next = 1;
};

// The chart's items in source order: a step's index, or a transition's (`transition`).
struct Item {
    std::uint32_t at;
    bool transition;
    std::size_t index;
};

std::vector<Item> sourceOrder(const ast::SfcOutline& chart) {
    std::vector<Item> items;
    for (std::size_t i = 0; i < chart.steps.size(); ++i) {
        items.push_back({chart.steps[i].name.span.begin, false, i});
    }
    for (std::size_t i = 0; i < chart.transitions.size(); ++i) {
        items.push_back({chart.transitions[i].span.begin, true, i});
    }
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.at < b.at; });
    return items;
}

Layout layOut(const ast::SfcOutline& chart, const std::vector<Item>& items) {
    Layout l;
    l.steps.resize(chart.steps.size());
    l.transitions.resize(chart.transitions.size());
    for (std::size_t i = 0; i < chart.steps.size(); ++i) {
        l.stepIndex.emplace(upperName(chart.steps[i].name.name), i);
    }
    // Where each item is written, to tell a transition to a step above it from one below.
    std::map<std::string, std::size_t> stepPlace;
    for (std::size_t k = 0; k < items.size(); ++k) {
        if (!items[k].transition) {
            stepPlace.emplace(upperName(chart.steps[items[k].index].name.name), k);
        }
    }
    for (std::size_t k = 0; k < items.size(); ++k) {
        if (items[k].transition) {
            const ast::SfcOutline::Transition& t = chart.transitions[items[k].index];
            Layout::TransitionIds& ids = l.transitions[items[k].index];
            for (const ast::Identifier& from : t.from) {
                l.steps[l.stepIndex.at(upperName(from.name))].leave.push_back(items[k].index);
            }
            ids.convergence = t.from.size() > 1 ? l.next++ : 0;
            ids.transition = l.next++;
            ids.divergence = t.to.size() > 1 ? l.next++ : 0;
            const int out = ids.divergence != 0 ? ids.divergence : ids.transition;
            for (const ast::Identifier& to : t.to) {
                const std::string key = upperName(to.name);
                if (stepPlace.at(key) < k) {
                    ids.jumps.push_back(chart.steps[l.stepIndex.at(key)].name.name);
                    ids.jumpIds.push_back(l.next++);
                } else {
                    l.steps[l.stepIndex.at(key)].incoming.push_back(out);
                }
            }
        } else {
            Layout::StepIds& ids = l.steps[items[k].index];
            ids.step = l.next++;
        }
    }
    // Convergences and divergences of steps, once every transition is known.
    for (Layout::StepIds& s : l.steps) {
        s.convergence = s.incoming.size() > 1 ? l.next++ : 0;
        s.divergence = s.leave.size() > 1 ? l.next++ : 0;
    }
    return l;
}

class SfcWriter {
public:
    SfcWriter(pugi::xml_node sfc, const ast::SfcOutline& chart, const Layout& layout)
        : sfc_(sfc), chart_(chart), l_(layout) {}

    // The element `name` with its localId and a place in the column.
    pugi::xml_node element(const char* name, int id, int height = 2, int width = 20) {
        pugi::xml_node n = sfc_.append_child(name);
        n.append_attribute("localId") = id;
        n.append_attribute("height") = height;
        n.append_attribute("width") = width;
        pugi::xml_node position = n.append_child("position");
        position.append_attribute("x") = 100;
        position.append_attribute("y") = y_;
        y_ += 40;
        return n;
    }

    static void connect(pugi::xml_node n, const std::vector<int>& from) {
        pugi::xml_node in = n.append_child("connectionPointIn");
        for (const int id : from) {
            in.append_child("connection").append_attribute("refLocalId") = id;
        }
    }
    static void outputs(pugi::xml_node n, std::size_t count) {
        for (std::size_t i = 0; i < count; ++i) {
            n.append_child("connectionPointOut").append_attribute("formalParameter") = "";
        }
    }

    // The element a transition leaving step `s` connects to.
    [[nodiscard]] int leaving(std::size_t s) const {
        return l_.steps[s].divergence != 0 ? l_.steps[s].divergence : l_.steps[s].step;
    }

    void step(std::size_t index, const std::function<std::string(Span)>& text) {
        const ast::SfcOutline::Step& s = chart_.steps[index];
        const Layout::StepIds& ids = l_.steps[index];
        if (ids.convergence != 0) {
            pugi::xml_node c = element("selectionConvergence", ids.convergence, 1, 200);
            for (const int from : ids.incoming) {
                connect(c, {from});
            }
            outputs(c, 1);
        }
        pugi::xml_node n = element("step", ids.step, 30, 60);
        n.append_attribute("name") = s.name.name.c_str();
        if (s.initial) {
            n.append_attribute("initialStep") = true;
        }
        if (ids.convergence != 0) {
            connect(n, {ids.convergence});
        } else if (!ids.incoming.empty()) {
            connect(n, ids.incoming);
        } else {
            n.append_child("connectionPointIn");
        }
        outputs(n, 1);
        if (!s.actions.empty()) {
            n.append_child("connectionPointOutAction").append_attribute("formalParameter") = "";
            pugi::xml_node block = element("actionBlock", l_.next + static_cast<int>(actionBlocks_++), 30, 100);
            block.child("position").attribute("x") = 200;
            connect(block, {ids.step});
            for (const ast::SfcOutline::Association& a : s.actions) {
                pugi::xml_node action = block.append_child("action");
                action.append_attribute("localId") = l_.next + static_cast<int>(actionBlocks_++);
                action.append_attribute("qualifier") = a.qualifier.empty() ? "N" : upperName(a.qualifier).c_str();
                if (a.duration.valid()) {
                    action.append_attribute("duration") = text(a.duration).c_str();
                }
                pugi::xml_node rel = action.append_child("relPosition");
                rel.append_attribute("x") = 0;
                rel.append_attribute("y") = 0;
                action.append_child("reference").append_attribute("name") = a.action.name.c_str();
            }
        }
        if (ids.divergence != 0) {
            pugi::xml_node d = element("selectionDivergence", ids.divergence, 1, 200);
            connect(d, {ids.step});
            outputs(d, ids.leave.size());
        }
    }

    void transition(std::size_t index, const std::function<std::string(Span)>& text) {
        const ast::SfcOutline::Transition& t = chart_.transitions[index];
        const Layout::TransitionIds& ids = l_.transitions[index];
        std::vector<int> from;
        for (const ast::Identifier& s : t.from) {
            from.push_back(leaving(l_.stepIndex.at(upperName(s.name))));
        }
        if (ids.convergence != 0) {
            pugi::xml_node c = element("simultaneousConvergence", ids.convergence, 1, 200);
            for (const int f : from) {
                connect(c, {f});
            }
            outputs(c, 1);
            from = {ids.convergence};
        }
        pugi::xml_node n = element("transition", ids.transition);
        if (t.priority.valid()) {
            n.append_attribute("priority") = text(t.priority).c_str();
        }
        connect(n, from);
        outputs(n, 1);
        pugi::xml_node condition = n.append_child("condition").append_child("inline");
        condition.append_attribute("name") = "";
        condition.append_child("ST")
            .append_child("xhtml:p")
            .append_child(pugi::node_cdata)
            .set_value(text(t.condition).c_str());
        const int out = ids.divergence != 0 ? ids.divergence : ids.transition;
        if (ids.divergence != 0) {
            pugi::xml_node d = element("simultaneousDivergence", ids.divergence, 1, 200);
            connect(d, {ids.transition});
            outputs(d, t.to.size());
        }
        for (std::size_t j = 0; j < ids.jumps.size(); ++j) {
            pugi::xml_node jump = element("jumpStep", ids.jumpIds[j], 13, 12);
            jump.append_attribute("targetName") = ids.jumps[j].c_str();
            connect(jump, {out});
        }
    }

private:
    pugi::xml_node sfc_;
    const ast::SfcOutline& chart_;
    const Layout& l_;
    int y_ = 20;
    std::size_t actionBlocks_ = 0; // localIds after the layout's, for action blocks and actions
};

} // namespace

bool Exporter::sfcBody(pugi::xml_node body, const ast::PouDecl& decl) {
    const ast::SfcOutline& chart = *decl.chart;
    const std::string& name = decl.name.name;
    if (chart.statements) {
        problem(decl.name.span, fmt::format("'{}' has statements beside its SFC chart: a PLCopen XML body is in one "
                                            "language (move them into an action of a step)",
                                            name));
        return false;
    }
    for (const ast::SfcOutline::Transition& t : chart.transitions) {
        if (!t.name.name.empty() || !t.condition.valid()) {
            problem(t.span, fmt::format("'{}': a named transition, or one with a body, is not exported yet (only "
                                        "`TRANSITION FROM … TO … := condition;`)",
                                        name));
            return false;
        }
    }
    const std::vector<Item> items = sourceOrder(chart);
    const Layout layout = layOut(chart, items);
    SfcWriter writer(body.append_child("SFC"), chart, layout);
    const auto text = [&](Span span) { return std::string(project_.sources->text(span)); };
    for (const Item& item : items) {
        if (item.transition) {
            writer.transition(item.index, text);
        } else {
            writer.step(item.index, text);
        }
    }
    return true;
}

} // namespace takt::compiler::plcopen
