// `takt export plcopen` for a PROGRAM's or FUNCTION_BLOCK's SFC chart (ast::SfcOutline): the
// chart as a TC6 `<SFC>` network that the reader (sfc.cpp) and the editors read back.
//
// Elements come in the chart's own order (steps and transitions as written, so that the reader,
// which writes them in the XML's order, gives the same chart), each after what it hangs on:
// - a step with several transitions leaving it is followed by a selectionDivergence;
// - a transition from several steps follows a simultaneousConvergence of them, and one to several
//   steps is followed by a simultaneousDivergence;
// - a step that transitions drawn above it enter from more than one place follows a
//   selectionConvergence of them; a transition to a step drawn above it (a loop back) ends in a
//   jumpStep naming it.
// "Above" is the drawing's order (rankForDrawing: from the initial step down), not the source's,
// so a chart written steps first is drawn as the sequence it is. Each branch of a divergence has a
// column of its own, its first branch the divergence's.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "export.h"
#include "sfc_chart.h"
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
        int divergence = 0; // simultaneousDivergence after it; 0 to one step
        // Transitions entering the same steps share one simultaneousDivergence, after a
        // selectionConvergence joining them (layOut, sameDivergence): the group's first transition
        // (itself when alone), which holds both ids; the member drawn lowest (`last`) writes them.
        std::size_t group = 0;
        int join = 0;
        bool last = false;
        struct Jump {
            std::string step; // a step drawn above it that it enters
            int id;           // the jumpStep's localId
        };
        std::vector<Jump> jumps;
    };
    std::vector<StepIds> steps;
    std::vector<TransitionIds> transitions;
    std::map<std::string, std::size_t> stepIndex; // upper-case name -> steps index
    // The row each step and transition is drawn in, and the loops back (transition node
    // steps.size() + index -> step index), drawn as jump steps (rankForDrawing).
    std::vector<std::size_t> stepRow;
    std::vector<std::size_t> transitionRow;
    // The column each is drawn in: a branch of a divergence in a column of its own, the
    // element after a convergence in the leftmost of its branches' (rankForDrawing).
    std::vector<std::size_t> stepColumn;
    std::vector<std::size_t> transitionColumn;
    std::set<std::pair<std::size_t, std::size_t>> loopsBack;
    int next = 1;

    [[nodiscard]] std::size_t stepOf(const ast::Identifier& name) const { return stepIndex.at(upperName(name.name)); }
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

// The rows the editors draw the chart in. Steps and transitions are the nodes of a graph (a step
// leads to the transitions leaving it, a transition to the steps it enters); a depth-first walk
// from the initial step, then from every step not reached yet in source order, finds the loops
// back (an edge to a node still being walked) and numbers the nodes in the order it reaches them.
// Without the loops back the graph has no cycle: the rows are its topological order, the node
// reached first among those ready taken first, so a branch is drawn after the branch before it
// and a step where branches join comes after all of them. A loop back is drawn as a jump step.
void rankForDrawing(const ast::SfcOutline& chart, const std::vector<Item>& items, Layout& l) {
    const std::size_t steps = chart.steps.size();
    const std::size_t count = steps + chart.transitions.size(); // transitions are nodes steps + j
    std::vector<std::vector<std::size_t>> next(count);
    for (std::size_t j = 0; j < chart.transitions.size(); ++j) {
        for (const ast::Identifier& from : chart.transitions[j].from) {
            next[l.stepOf(from)].push_back(steps + j);
        }
        for (const ast::Identifier& to : chart.transitions[j].to) {
            next[steps + j].push_back(l.stepOf(to));
        }
    }
    enum class Mark : std::uint8_t { New, Walking, Done };
    std::vector<Mark> mark(count, Mark::New);
    std::vector<std::size_t> reached(count, 0); // the walk's order
    std::size_t order = 0;
    l.loopsBack.clear();
    struct Frame {
        std::size_t node;
        std::size_t child;
    };
    std::vector<Frame> stack; // an explicit stack: a chart of thousands of steps is no recursion
    const auto walk = [&](std::size_t start) {
        if (mark[start] != Mark::New) {
            return;
        }
        mark[start] = Mark::Walking;
        reached[start] = order++;
        stack.push_back({start, 0});
        while (!stack.empty()) {
            Frame& f = stack.back();
            if (f.child == next[f.node].size()) {
                mark[f.node] = Mark::Done;
                stack.pop_back();
                continue;
            }
            const std::size_t to = next[f.node][f.child++];
            if (mark[to] == Mark::Walking) {
                l.loopsBack.insert({f.node, to});
            } else if (mark[to] == Mark::New) {
                mark[to] = Mark::Walking;
                reached[to] = order++;
                stack.push_back({to, 0});
            }
        }
    };
    for (std::size_t i = 0; i < steps; ++i) {
        if (chart.steps[i].initial) {
            walk(i);
        }
    }
    for (const Item& item : items) {
        if (!item.transition) {
            walk(item.index);
        }
    }
    for (const Item& item : items) { // transitions from no step, which takt's check does not allow
        walk(item.transition ? steps + item.index : item.index);
    }
    // Kahn's topological order without the loops back, by the walk's order among ready nodes.
    std::vector<std::size_t> waiting(count, 0);
    for (std::size_t n = 0; n < count; ++n) {
        for (const std::size_t to : next[n]) {
            waiting[to] += l.loopsBack.contains({n, to}) ? 0 : 1;
        }
    }
    std::set<std::pair<std::size_t, std::size_t>> ready; // (walk order, node)
    for (std::size_t n = 0; n < count; ++n) {
        if (waiting[n] == 0) {
            ready.insert({reached[n], n});
        }
    }
    // Rows: one below the lowest of the nodes leading to it, so the branches of a divergence
    // are drawn side by side and where they join below the longest. Columns: the first branch of
    // a divergence goes on in its column, each other one opens a new column (so no two branches
    // share one, however deep they nest), a node where branches meet takes the leftmost; a node
    // nothing leads to starts a new column of its own.
    std::vector<std::size_t> row(count, 0);
    constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
    std::vector<std::size_t> column(count, kNone);
    std::size_t columns = 0;
    while (!ready.empty()) {
        const std::size_t n = ready.begin()->second;
        ready.erase(ready.begin());
        column[n] = column[n] == kNone ? columns++ : column[n];
        bool first = true;
        for (const std::size_t to : next[n]) {
            if (l.loopsBack.contains({n, to})) {
                continue;
            }
            row[to] = std::max(row[to], row[n] + 1);
            const std::size_t proposed = first ? column[n] : columns;
            if (proposed < column[to]) {
                column[to] = proposed;
                columns += first ? 0 : 1;
            }
            first = false;
            if (--waiting[to] == 0) {
                ready.insert({reached[to], to});
            }
        }
    }
    l.stepRow.assign(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(steps));
    l.transitionRow.assign(row.begin() + static_cast<std::ptrdiff_t>(steps), row.end());
    l.stepColumn.assign(column.begin(), column.begin() + static_cast<std::ptrdiff_t>(steps));
    l.transitionColumn.assign(column.begin() + static_cast<std::ptrdiff_t>(steps), column.end());
}

// Whether transitions a and b enter the same steps (two or more), none of them by a loop back.
bool sameDivergence(const ast::SfcOutline& chart, const Layout& l, std::size_t a, std::size_t b) {
    const auto loops = [&](std::size_t t) {
        return std::any_of(chart.transitions[t].to.begin(), chart.transitions[t].to.end(), [&](const auto& s) {
            return l.loopsBack.contains({chart.steps.size() + t, l.stepOf(s)});
        });
    };
    return chart.transitions[a].to.size() > 1 && !loops(a) && !loops(b) &&
           sfc::sameSteps(chart.transitions[a].to, chart.transitions[b].to);
}

Layout layOut(const ast::SfcOutline& chart, const std::vector<Item>& items) {
    Layout l;
    l.steps.resize(chart.steps.size());
    l.transitions.resize(chart.transitions.size());
    for (std::size_t i = 0; i < chart.steps.size(); ++i) {
        l.stepIndex.emplace(upperName(chart.steps[i].name.name), i);
    }
    rankForDrawing(chart, items, l);
    // Exclusive steps entering one parallel branch (`FROM FillA TO (Heat, Mix)`, `FROM FillB TO
    // (Heat, Mix)`) are drawn as CODESYS draws them: a selection convergence of their transitions
    // before one simultaneous divergence.
    for (std::size_t i = 0; i < chart.transitions.size(); ++i) {
        std::size_t root = i;
        for (std::size_t j = 0; j < i && root == i; ++j) {
            root = sameDivergence(chart, l, i, j) ? l.transitions[j].group : i;
        }
        l.transitions[i].group = root;
    }
    std::vector<std::size_t> members(chart.transitions.size(), 0);
    for (const Layout::TransitionIds& t : l.transitions) {
        ++members[t.group];
    }
    // The join and the divergence are drawn after the group's member drawn lowest (the last
    // written of those), so that no wire runs upwards into them.
    std::vector<std::size_t> lowest(chart.transitions.size(), chart.transitions.size());
    for (std::size_t i = 0; i < chart.transitions.size(); ++i) {
        std::size_t& low = lowest[l.transitions[i].group];
        if (low == chart.transitions.size() || l.transitionRow[i] >= l.transitionRow[low]) {
            low = i;
        }
    }
    for (std::size_t i = 0; i < chart.transitions.size(); ++i) {
        l.transitions[i].last = members[l.transitions[i].group] > 1 && lowest[l.transitions[i].group] == i;
    }
    for (const Item& item : items) {
        if (!item.transition) {
            l.steps[item.index].step = l.next++;
            continue;
        }
        const ast::SfcOutline::Transition& t = chart.transitions[item.index];
        Layout::TransitionIds& ids = l.transitions[item.index];
        for (const ast::Identifier& from : t.from) {
            l.steps[l.stepOf(from)].leave.push_back(item.index);
        }
        ids.convergence = t.from.size() > 1 ? l.next++ : 0;
        ids.transition = l.next++;
        const bool grouped = members[ids.group] > 1;
        if (grouped && ids.group != item.index) {
            continue; // its group's first transition enters the steps
        }
        ids.join = grouped ? l.next++ : 0;
        ids.divergence = t.to.size() > 1 ? l.next++ : 0;
        const int out = ids.divergence != 0 ? ids.divergence : ids.transition;
        for (const ast::Identifier& to : t.to) {
            const std::size_t target = l.stepOf(to);
            if (l.loopsBack.contains({chart.steps.size() + item.index, target})) {
                ids.jumps.push_back({chart.steps[target].name.name, l.next++});
            } else {
                l.steps[target].incoming.push_back(out);
            }
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

    // The elements written next are drawn in `row` and `column` (rankForDrawing).
    void place(std::size_t row, std::size_t column) {
        y_ = 20 + static_cast<int>(row) * kRowHeight;
        x_ = xOf(column);
    }

    // The element `name` with its localId and a place in the column, below the one before.
    pugi::xml_node element(const char* name, int id, int height = 2, int width = 20) {
        pugi::xml_node n = sfc_.append_child(name);
        n.append_attribute("localId") = id;
        n.append_attribute("height") = height;
        n.append_attribute("width") = width;
        pugi::xml_node position = n.append_child("position");
        position.append_attribute("x") = x_;
        position.append_attribute("y") = y_;
        y_ += height + 10;
        return n;
    }

    static void connect(pugi::xml_node n, const std::vector<int>& from) {
        pugi::xml_node in = n.append_child("connectionPointIn");
        for (const int id : from) {
            in.append_child("connection").append_attribute("refLocalId") = id;
        }
    }
    // `count` connectionPointOuts; TC6 gives a formalParameter only to those of a step and of the
    // divergences (`formal`), the others have none.
    static void outputs(pugi::xml_node n, std::size_t count, bool formal) {
        for (std::size_t i = 0; i < count; ++i) {
            pugi::xml_node out = n.append_child("connectionPointOut");
            if (formal) {
                out.append_attribute("formalParameter") = "";
            }
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
            pugi::xml_node c = bar("selectionConvergence", ids.convergence, incomingColumns(index));
            for (const int from : ids.incoming) {
                connect(c, {from});
            }
            outputs(c, 1, false);
        }
        const int stepY = y_;
        pugi::xml_node n = element("step", ids.step, 30, 60);
        n.append_attribute("name") = s.name.name.c_str();
        if (s.initial) {
            n.append_attribute("initialStep") = true;
        }
        connect(n, ids.convergence != 0 ? std::vector<int>{ids.convergence} : ids.incoming); // none: the initial step
        outputs(n, 1, true);
        if (!s.actions.empty()) {
            n.append_child("connectionPointOutAction").append_attribute("formalParameter") = "";
            // Beside the step, not below it.
            const int belowStep = y_;
            pugi::xml_node block = element("actionBlock", l_.next + static_cast<int>(actionBlocks_++), 30, 100);
            block.child("position").attribute("x") = x_ + 100;
            block.child("position").attribute("y") = stepY;
            y_ = belowStep;
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
            std::vector<std::size_t> branches;
            for (const std::size_t t : ids.leave) {
                branches.push_back(l_.transitionColumn[t]);
            }
            pugi::xml_node d = bar("selectionDivergence", ids.divergence, branches);
            connect(d, {ids.step});
            outputs(d, ids.leave.size(), true);
        }
    }

    void transition(std::size_t index, const std::function<std::string(Span)>& text) {
        const ast::SfcOutline::Transition& t = chart_.transitions[index];
        const Layout::TransitionIds& ids = l_.transitions[index];
        std::vector<int> from;
        for (const ast::Identifier& s : t.from) {
            from.push_back(leaving(l_.stepOf(s)));
        }
        if (ids.convergence != 0) {
            std::vector<std::size_t> branches;
            for (const ast::Identifier& f : t.from) {
                branches.push_back(l_.stepColumn[l_.stepOf(f)]);
            }
            pugi::xml_node c = bar("simultaneousConvergence", ids.convergence, branches);
            for (const int f : from) {
                connect(c, {f});
            }
            outputs(c, 1, false);
            from = {ids.convergence};
        }
        pugi::xml_node n = element("transition", ids.transition);
        if (t.priority.has_value()) {
            n.append_attribute("priority") = static_cast<unsigned long long>(*t.priority);
        }
        connect(n, from);
        outputs(n, 1, false);
        pugi::xml_node condition = n.append_child("condition").append_child("inline");
        condition.append_attribute("name") = "";
        condition.append_child("ST")
            .append_child("xhtml:p")
            .append_child(pugi::node_cdata)
            .set_value(text(t.condition).c_str());
        const int out = ids.divergence != 0 ? ids.divergence : ids.transition;
        if (ids.last) {
            // the selection convergence of the group's transitions and their one divergence
            const Layout::TransitionIds& first = l_.transitions[ids.group];
            std::vector<std::size_t> columns;
            std::vector<int> members;
            for (std::size_t j = 0; j < l_.transitions.size(); ++j) {
                if (l_.transitions[j].group == ids.group) {
                    columns.push_back(l_.transitionColumn[j]);
                    members.push_back(l_.transitions[j].transition);
                }
            }
            pugi::xml_node join = bar("selectionConvergence", first.join, columns);
            for (const int m : members) {
                connect(join, {m});
            }
            outputs(join, 1, false);
            std::vector<std::size_t> branches;
            for (const ast::Identifier& to : t.to) {
                branches.push_back(l_.stepColumn[l_.stepOf(to)]);
            }
            pugi::xml_node d = bar("simultaneousDivergence", first.divergence, branches);
            connect(d, {first.join});
            outputs(d, t.to.size(), true);
        } else if (ids.divergence != 0 && ids.join == 0) {
            std::vector<std::size_t> branches; // those drawn below it, not the jump steps' targets
            for (const ast::Identifier& to : t.to) {
                if (!l_.loopsBack.contains({chart_.steps.size() + index, l_.stepOf(to)})) {
                    branches.push_back(l_.stepColumn[l_.stepOf(to)]);
                }
            }
            pugi::xml_node d = bar("simultaneousDivergence", ids.divergence, branches);
            connect(d, {ids.transition});
            outputs(d, t.to.size(), true);
        }
        for (const Layout::TransitionIds::Jump& j : ids.jumps) {
            pugi::xml_node jump = element("jumpStep", j.id, 13, 12);
            jump.append_attribute("targetName") = j.step.c_str();
            connect(jump, {out});
        }
    }

private:
    static int xOf(std::size_t column) { return 100 + static_cast<int>(column) * kColumnWidth; }

    // A divergence's or convergence's bar, from the leftmost to the rightmost column of the
    // branches it joins (at least its own element's column).
    pugi::xml_node bar(const char* name, int id, const std::vector<std::size_t>& branches) {
        int left = x_;
        int right = x_;
        for (const std::size_t c : branches) {
            left = std::min(left, xOf(c));
            right = std::max(right, xOf(c));
        }
        const int x = x_;
        x_ = left;
        pugi::xml_node n = element(name, id, 1, right - left + 60);
        x_ = x;
        return n;
    }

    // The columns of the transitions entering step `index` by a wire (not by a jump step).
    [[nodiscard]] std::vector<std::size_t> incomingColumns(std::size_t index) const {
        std::vector<std::size_t> out;
        for (std::size_t j = 0; j < chart_.transitions.size(); ++j) {
            for (const ast::Identifier& to : chart_.transitions[j].to) {
                if (l_.stepOf(to) == index && !l_.loopsBack.contains({chart_.steps.size() + j, index})) {
                    out.push_back(l_.transitionColumn[j]);
                }
            }
        }
        return out;
    }

    // Wide enough for a step (60) with its action block beside it (100 from the step's x).
    static constexpr int kColumnWidth = 250;
    // Tall enough for a row's elements: a convergence, a step (30) and a divergence, or a
    // transition with its convergence, divergence and a few jump steps (13 each).
    static constexpr int kRowHeight = 120;

    pugi::xml_node sfc_;
    const ast::SfcOutline& chart_;
    const Layout& l_;
    int y_ = 20;
    int x_ = 100;
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
            writer.place(layout.transitionRow[item.index], layout.transitionColumn[item.index]);
            writer.transition(item.index, text);
        } else {
            writer.place(layout.stepRow[item.index], layout.stepColumn[item.index]);
            writer.step(item.index, text);
        }
    }
    return true;
}

} // namespace takt::compiler::plcopen
