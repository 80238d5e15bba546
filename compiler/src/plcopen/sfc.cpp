// SFC bodies of the PLCopen reader (translate.h): the chart of steps, transitions, divergences and
// convergences joined by connections becomes takt's textual SFC (language-notes.md): each step
// `STEP name: associations END_STEP` at its <step>'s place, each transition
// `TRANSITION FROM (sources) TO (targets) := condition; END_TRANSITION` at its <transition>'s.
// A transition's sources are the steps reached backwards through selection divergences and
// simultaneous convergences; its targets the steps reached forwards through selection
// convergences, simultaneous divergences and jump steps. An action block's inline body becomes a
// hidden ACTION of the POU. A macro step is inlined: its body's steps and transitions are the
// chart's, a transition into the macro enters its body's entry step and the transition after it
// leaves the body's exit step (as in CODESYS, where a macro only hides part of the chart in the editor).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "sfc_chart.h"
#include "takt/compiler/names.h"
#include "translate.h"

namespace takt::compiler::plcopen {

namespace {

// Divergences and convergences chain; deeper than this is a loop of them, not a chart, and more
// elements visited than this for one transition are a hostile tangle.
constexpr int kMaxChain = 64;
constexpr std::size_t kMaxVisits = 100000;
// XHTML markup around a POU transition's ST text deeper than this is not an export.
constexpr int kMaxMarkupDepth = 8;

// Where an element of the chart lies: a macro step's body numbers its elements on its own, so
// every localId is keyed with the scope of the body it is in ("" for the POU's body, "7/" for the
// body of the macro step of localId 7, "7/3/" for a macro step inside that one).
struct Place {
    std::string scope;
    pugi::xml_node sfc; // the <SFC> the element is in: a condition reads its FBD/LD elements there
    bool inMacro = false;
};

// A macro step's body: the step (or macro step) a transition into the macro enters, and the one
// the transition after the macro leaves.
struct MacroEnds {
    pugi::xml_node entry;
    pugi::xml_node exit;
};

struct Chart {
    Chart(Translator& translator, const pugi::xml_node& of)
        : t(translator), pou(of), name(of.attribute("name").value()) {}

    Translator& t;
    const pugi::xml_node& pou;
    std::string_view name;
    std::map<std::string, pugi::xml_node> byId;                 // scoped localId -> element
    std::map<std::string, std::vector<pugi::xml_node>> readers; // scoped localId -> the elements connected to it
    std::map<const void*, Place> places;                        // every element -> where it lies
    std::map<std::string, MacroEnds> macros;                    // scoped localId of a macroStep -> its ends
    std::map<std::string, pugi::xml_node> macroNames; // a macro step's upper-case name -> it (a jumpStep's target)
    std::map<const void*, std::string> inlineActions; // an inline <action> -> its ACTION
    std::vector<pugi::xml_node> stepNodes;            // the steps (inside macro steps too), in document order
    std::vector<pugi::xml_node> jumps;                // the jump steps, in document order
    bool failed = false;
    std::size_t visits = 0; // of the transition being read

    void fail(DiagCode code, const pugi::xml_node& at, const std::string& message) {
        if (!failed) {
            t.problem(code, at, fmt::format("POU '{}': {}", name, message));
        }
        failed = true;
    }

    [[nodiscard]] const Place& placeOf(const pugi::xml_node& n) const { return places.at(n.internal_object()); }
    [[nodiscard]] std::string key(const pugi::xml_node& n) const {
        return placeOf(n).scope + n.attribute("localId").value();
    }

    // Writes `text` as the text of `element`: a diagnostic inside it names the element's place and
    // localId (PlcopenOrigin), not where the text runs to on the element's line.
    void put(const pugi::xml_node& element, std::string_view text) {
        const auto begin = static_cast<std::uint32_t>(t.out.text.size());
        t.put(text);
        t.origin(begin, element);
    }

    // The scoped localIds every connectionPointIn of `n` names.
    [[nodiscard]] std::vector<std::string> inputs(const pugi::xml_node& n) const {
        const std::string& scope = placeOf(n).scope;
        std::vector<std::string> ids;
        for (const pugi::xml_node& point : n.children()) {
            if (point.type() != pugi::node_element || localName(point) != "connectionPointIn") {
                continue;
            }
            for (const pugi::xml_node& c : point.children()) {
                if (c.type() == pugi::node_element && localName(c) == "connection") {
                    ids.push_back(scope + c.attribute("refLocalId").value());
                }
            }
        }
        return ids;
    }

    // The steps a transition leaves: those before it, through selection divergences and
    // simultaneous convergences.
    void before(const pugi::xml_node& n, std::vector<std::string>& steps, int depth) {
        if (depth > kMaxChain || ++visits > kMaxVisits) {
            fail(DiagCode::PlcopenInvalid, n, "divergences and convergences loop or nest deeper than takt follows");
            return;
        }
        for (const std::string& id : inputs(n)) {
            const auto it = byId.find(id);
            if (it == byId.end()) {
                fail(DiagCode::PlcopenInvalid, n,
                     fmt::format("a connection names localId {}, which no element has",
                                 id.substr(placeOf(n).scope.size())));
                return;
            }
            const std::string_view kind = localName(it->second);
            if (kind == "step") {
                steps.emplace_back(it->second.attribute("name").value());
            } else if (kind == "macroStep") {
                macroEnd(it->second, false, steps, depth + 1);
            } else if (kind == "selectionDivergence" || kind == "simultaneousConvergence") {
                before(it->second, steps, depth + 1);
            } else {
                fail(DiagCode::PlcopenInvalid, n, fmt::format("a transition follows a <{}>, not a step", kind));
                return;
            }
        }
    }

    // The steps a transition enters: those after it, through selection convergences,
    // simultaneous divergences and jump steps.
    void after(const pugi::xml_node& n, std::vector<std::string>& steps, int depth) {
        if (depth > kMaxChain || ++visits > kMaxVisits) {
            fail(DiagCode::PlcopenInvalid, n, "divergences and convergences loop or nest deeper than takt follows");
            return;
        }
        for (const pugi::xml_node& next : readers[key(n)]) {
            const std::string_view kind = localName(next);
            if (kind == "step") {
                steps.emplace_back(next.attribute("name").value());
            } else if (kind == "macroStep") {
                macroEnd(next, true, steps, depth + 1);
            } else if (kind == "jumpStep") {
                const std::string_view target = next.attribute("targetName").value();
                if (const auto macro = macroNames.find(upperName(target)); macro != macroNames.end()) {
                    macroEnd(macro->second, true, steps, depth + 1);
                } else {
                    steps.emplace_back(target);
                }
            } else if (kind == "selectionConvergence" || kind == "simultaneousDivergence") {
                after(next, steps, depth + 1);
            } else if (kind == "transition" || kind == "selectionDivergence" || kind == "simultaneousConvergence") {
                fail(DiagCode::PlcopenInvalid, next, fmt::format("a <{}> follows a transition, not a step", kind));
            }
        }
    }

    // The step a transition into macro step `m` enters (`entering`), or the one the transition
    // after it leaves, through macro steps nested at that end.
    void macroEnd(const pugi::xml_node& m, bool entering, std::vector<std::string>& steps, int depth) {
        if (depth > kMaxChain || ++visits > kMaxVisits) {
            fail(DiagCode::PlcopenInvalid, m, "macro steps nest deeper than takt follows");
            return;
        }
        const MacroEnds& ends = macros.at(key(m));
        const pugi::xml_node end = entering ? ends.entry : ends.exit;
        if (localName(end) == "macroStep") {
            macroEnd(end, entering, steps, depth + 1);
        } else {
            steps.emplace_back(end.attribute("name").value());
        }
    }

    static std::string list(const std::vector<std::string>& steps) {
        if (steps.size() == 1) {
            return steps[0];
        }
        std::string s;
        for (const std::string& step : steps) {
            s += s.empty() ? "(" : ", ";
            s += step;
        }
        return s + ")";
    }

    // `name(Q[, duration]);` of each action of the action blocks connected to `step`, with its
    // <action>; nothing after a problem.
    std::vector<std::pair<std::string, pugi::xml_node>> associations(const pugi::xml_node& step) {
        std::vector<std::pair<std::string, pugi::xml_node>> out;
        for (const pugi::xml_node& block : readers[key(step)]) {
            if (localName(block) != "actionBlock") {
                continue;
            }
            for (const pugi::xml_node& a : block.children()) {
                if (a.type() != pugi::node_element || localName(a) != "action") {
                    continue;
                }
                std::optional<std::string> text = association(a);
                if (!text) {
                    return {};
                }
                out.emplace_back(std::move(*text), a);
            }
        }
        return out;
    }

    // One <action> of an action block: its qualifier, action and duration checked here, where
    // the message can name the element and its attributes.
    std::optional<std::string> association(const pugi::xml_node& a) {
        const std::string_view written = a.attribute("qualifier").value();
        const std::string qualifier = written.empty() ? std::string("N") : upperName(written);
        const sfc::Qualifier q = sfc::qualifierOf(qualifier);
        if (q == sfc::Qualifier::Unknown) {
            fail(DiagCode::PlcopenInvalid, a,
                 fmt::format("'{}' is not an action qualifier ({})", oneLine(written), sfc::qualifierNames()));
            return std::nullopt;
        }
        std::string action;
        if (const pugi::xml_node ref = child(a, "reference"); ref) {
            action = ref.attribute("name").value();
        } else if (const auto it = inlineActions.find(a.internal_object()); it != inlineActions.end()) {
            action = it->second;
        }
        if (!isIdentifier(action)) {
            fail(DiagCode::PlcopenInvalid, a, "an action names no action or variable");
            return std::nullopt;
        }
        std::string duration = a.attribute("duration").value();
        if (sfc::timed(q) != !duration.empty()) {
            fail(DiagCode::PlcopenInvalid, a,
                 duration.empty()
                     ? fmt::format("qualifier {} needs a duration: <action qualifier=\"{}\" "
                                   "duration=\"PT5S\">",
                                   qualifier, qualifier)
                     : fmt::format("qualifier {} takes no duration (only L, D, SD, DS and SL)", qualifier));
            return std::nullopt;
        }
        std::uint32_t ms = 0;
        if (duration.starts_with("PT") && plcopenIntervalMs(duration, ms)) {
            duration = fmt::format("T#{}ms", ms); // CODESYS writes an XML duration
        }
        if (duration.find_first_of(";(),\n\r") != std::string::npos) {
            fail(DiagCode::PlcopenInvalid, a, fmt::format("'{}' is not a duration", duration));
            return std::nullopt;
        }
        return duration.empty() ? fmt::format("{}({}); ", action, qualifier)
                                : fmt::format("{}({}, {}); ", action, qualifier, duration);
    }

    // The POU's `<transitions>/<transition name>`; empty when none.
    [[nodiscard]] pugi::xml_node namedTransition(std::string_view transitionName) const {
        for (const pugi::xml_node& tr : child(pou, "transitions").children()) {
            if (tr.type() == pugi::node_element && localName(tr) == "transition" &&
                transitionName == tr.attribute("name").value()) {
                return tr;
            }
        }
        return {};
    }

    // The text below an element (an ST body's, in its xhtml markup), on one line.
    bool collect(const pugi::xml_node& n, std::string& text, int depth) {
        if (depth > kMaxMarkupDepth) {
            return false;
        }
        for (const pugi::xml_node& c : n.children()) {
            if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
                text += c.value();
                text += ' ';
            } else if (c.type() == pugi::node_element && !collect(c, text, depth + 1)) {
                return false;
            }
        }
        return true;
    }

    // The condition a `<reference name>` names: a POU transition whose ST body is the expression,
    // or the one assignment `Name := expression;`.
    std::optional<std::string> named(const pugi::xml_node& reference) {
        const std::string_view transitionName = reference.attribute("name").value();
        const pugi::xml_node tr = namedTransition(transitionName);
        if (!tr) {
            fail(DiagCode::PlcopenInvalid, reference,
                 fmt::format("a transition condition names transition '{}', which the POU does not have",
                             transitionName));
            return std::nullopt;
        }
        const pugi::xml_node language = firstElement(child(tr, "body"));
        if (!language || localName(language) != "ST") {
            fail(DiagCode::PlcopenUnsupported, tr,
                 fmt::format("transition '{}': a body in {} is not supported yet (only ST)", transitionName,
                             language ? localName(language) : "no language"));
            return std::nullopt;
        }
        std::string text;
        if (!collect(language, text, 0)) {
            fail(DiagCode::PlcopenInvalid, tr, fmt::format("transition '{}': markup nests too deep", transitionName));
            return std::nullopt;
        }
        std::replace_if(
            text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }, ' ');
        const auto trim = [&] {
            const std::size_t first = text.find_first_not_of(' ');
            const std::size_t last = text.find_last_not_of(" ;");
            text = first == std::string::npos || last < first ? std::string() : text.substr(first, last - first + 1);
        };
        trim();
        if (text.size() > transitionName.size() && sameName(text.substr(0, transitionName.size()), transitionName)) {
            const std::size_t assign = text.find_first_not_of(' ', transitionName.size());
            if (assign != std::string::npos && text.compare(assign, 2, ":=") == 0) {
                text = text.substr(assign + 2);
                trim();
            }
        }
        if (text.empty() || text.find(';') != std::string::npos) {
            fail(DiagCode::PlcopenUnsupported, tr,
                 fmt::format("transition '{}': only an expression, or '{} := expression;', is read as a condition",
                             transitionName, transitionName));
            return std::nullopt;
        }
        return text;
    }

    void transition(const pugi::xml_node& n) {
        std::vector<std::string> from;
        std::vector<std::string> to;
        visits = 0;
        before(n, from, 0);
        after(n, to, 0);
        if (failed) {
            return;
        }
        if (from.empty() || to.empty()) {
            fail(DiagCode::PlcopenInvalid, n,
                 fmt::format("a transition {}", from.empty() ? "follows no step" : "leads to no step"));
            return;
        }
        const pugi::xml_node condition = child(n, "condition");
        const pugi::xml_node how = firstElement(condition);
        const std::string_view kind = how ? localName(how) : std::string_view();
        // TC6's priority among the transitions of a selection divergence: IEC 61131-3's PRIORITY,
        // the lowest tested first
        const std::string_view written = n.attribute("priority").value();
        std::string_view priority = written;
        priority.remove_prefix(std::min(priority.find_first_not_of(" \t\r\n"), priority.size()));
        priority.remove_suffix(priority.size() - std::min(priority.find_last_not_of(" \t\r\n") + 1, priority.size()));
        if (priority.starts_with('+')) {
            priority.remove_prefix(1);
        }
        if (!written.empty() && (priority.empty() || priority.find_first_not_of("0123456789") != std::string::npos)) {
            fail(DiagCode::PlcopenInvalid, n, fmt::format("transition priority '{}' is not a number", written));
            return;
        }
        std::uint64_t rank = 0;
        if (!priority.empty() &&
            std::from_chars(priority.data(), priority.data() + priority.size(), rank).ec != std::errc()) {
            fail(DiagCode::PlcopenInvalid, n,
                 fmt::format("transition priority '{}' is out of range (at most {})", written,
                             std::numeric_limits<std::uint64_t>::max()));
            return;
        }
        const std::string head = fmt::format(
            "TRANSITION {}FROM {} TO {} :=", priority.empty() ? std::string() : fmt::format("(PRIORITY := {}) ", rank),
            list(from), list(to));
        if (kind == "connectionPointIn") {
            std::optional<std::string> value = translateCondition(t, placeOf(n).sfc, pou, how);
            if (!value) {
                failed = true;
                return;
            }
            t.moveTo(n);
            put(n, fmt::format("{} {};", head, *value));
            t.put(" END_TRANSITION");
            return;
        }
        if (kind == "inline") {
            const pugi::xml_node st = child(how, "ST");
            if (!st) {
                fail(DiagCode::PlcopenUnsupported, how, "a transition condition inline in another language than ST");
                return;
            }
            t.moveTo(n);
            put(n, head);
            // The ST text at its place; a trailing ';' is the statement's end.
            const std::size_t before = t.out.text.size();
            translateBody(t, how, pou, true);
            t.dropTrailing(" ;", before);
            t.put("; END_TRANSITION");
            return;
        }
        if (kind == "reference") {
            std::optional<std::string> value = named(how);
            if (!value) {
                return;
            }
            t.moveTo(n);
            put(n, head + " ");
            const auto begin = static_cast<std::uint32_t>(t.out.text.size());
            t.put(*value);
            t.origin(begin, namedTransition(how.attribute("name").value()));
            t.put("; END_TRANSITION");
            return;
        }
        fail(DiagCode::PlcopenInvalid, n, "a transition has no <condition>");
    }

    // Records the elements of `body` (the POU's <SFC>, or a macro step's) in `scope`, and those of
    // the macro steps in it, each in a scope of its own.
    void enter(const pugi::xml_node& body, const std::string& scope, bool inMacro, std::set<std::string>& names,
               int depth) {
        if (depth > kMaxChain) {
            fail(DiagCode::PlcopenInvalid, body, "macro steps nest deeper than takt follows");
            return;
        }
        for (const pugi::xml_node& n : body.children()) {
            if (failed) {
                return;
            }
            if (n.type() != pugi::node_element || localName(n) == "comment") {
                continue;
            }
            const std::string_view kind = localName(n);
            places[n.internal_object()] = Place{scope, body, inMacro};
            const std::string id = n.attribute("localId").value();
            if (id.empty() || !byId.emplace(scope + id, n).second) {
                fail(DiagCode::PlcopenInvalid, n, fmt::format("<{}> has no localId or one another element has", kind));
                return;
            }
            if ((kind == "step" && !isIdentifier(n.attribute("name").value())) ||
                (kind == "jumpStep" && !isIdentifier(n.attribute("targetName").value()))) {
                fail(DiagCode::PlcopenInvalid, n, fmt::format("<{}> names no step", kind));
                return;
            }
            for (const std::string& from : inputs(n)) {
                readers[from].push_back(n);
            }
            if (kind == "jumpStep") {
                jumps.push_back(n);
            } else if (kind == "step") {
                stepNodes.push_back(n);
            }
            if (kind == "actionBlock") {
                nameInlineActions(n, names);
            } else if (kind == "macroStep") {
                const pugi::xml_node inner = firstElement(child(n, "body"));
                if (!inner) {
                    fail(DiagCode::PlcopenUnsupported, n,
                         "a macro step without a body is not supported (it would "
                         "be a step without a name)");
                    return;
                }
                if (localName(inner) != "SFC") {
                    fail(DiagCode::PlcopenUnsupported, n,
                         fmt::format("a macro step's body in {} is not supported (only SFC)", localName(inner)));
                    return;
                }
                // TC6's name is optional; a macro without one is no jump step's target.
                if (*n.attribute("name").value() != '\0' &&
                    !macroNames.emplace(upperName(n.attribute("name").value()), n).second) {
                    fail(DiagCode::PlcopenInvalid, n,
                         fmt::format("two macro steps are named '{}'", n.attribute("name").value()));
                    return;
                }
                const std::string inside = scope + id + "/";
                enter(inner, inside, true, names, depth + 1);
                findEnds(n, inner);
            }
        }
    }

    // E0026 at the second step of a name, and at a jump step naming neither a step nor a macro
    // step of the chart (the steps inside macro steps are the chart's).
    void checkNames() {
        std::map<std::string, pugi::xml_node> named; // upper-case name -> its first step
        for (const pugi::xml_node& n : stepNodes) {
            const auto [first, added] = named.emplace(upperName(n.attribute("name").value()), n);
            if (!added) {
                fail(DiagCode::PlcopenInvalid, n,
                     fmt::format("step '{}' is named twice (also at localId {}{})", n.attribute("name").value(),
                                 first->second.attribute("localId").value(),
                                 placeOf(first->second).inMacro ? ", in a macro step's body" : ""));
                return;
            }
        }
        for (const pugi::xml_node& n : jumps) {
            const std::string target = upperName(n.attribute("targetName").value());
            if (!named.contains(target) && !macroNames.contains(target)) {
                fail(DiagCode::PlcopenInvalid, n,
                     fmt::format("a jump step to '{}', which is no step of the chart",
                                 n.attribute("targetName").value()));
                return;
            }
        }
    }

    // Each inline action of `block` gets the name of its hidden ACTION, one no name of the POU has.
    void nameInlineActions(const pugi::xml_node& block, std::set<std::string>& names) {
        for (const pugi::xml_node& a : block.children()) {
            if (a.type() == pugi::node_element && localName(a) == "action" && child(a, "inline")) {
                std::string member = "_Action" + std::string(a.attribute("localId").value());
                if (!isIdentifier(member)) {
                    member = "_Action" + std::to_string(inlineActions.size());
                }
                while (names.contains(member)) {
                    member += "_";
                }
                names.insert(member);
                inlineActions.emplace(a.internal_object(), member);
            }
        }
    }

    // A macro step's body begins at its entry, the step marked initialStep or else the one step
    // (or macro step) nothing leads to (a wire or a jump step), and ends at its exit, the one
    // nothing leaves (no transition, divergence or convergence follows it).
    void findEnds(const pugi::xml_node& macro, const pugi::xml_node& inner) {
        if (failed) {
            return;
        }
        std::set<std::string> jumpedTo;
        for (const pugi::xml_node& n : inner.children()) {
            if (n.type() == pugi::node_element && localName(n) == "jumpStep") {
                jumpedTo.insert(upperName(n.attribute("targetName").value()));
            }
        }
        std::vector<pugi::xml_node> marked;
        std::vector<pugi::xml_node> unwired;   // no wire leads to it
        std::vector<pugi::xml_node> unreached; // neither a wire nor a jump step
        std::vector<pugi::xml_node> exits;
        for (const pugi::xml_node& n : inner.children()) {
            const std::string_view kind = localName(n);
            if (n.type() != pugi::node_element || (kind != "step" && kind != "macroStep")) {
                continue;
            }
            if (n.attribute("initialStep").as_bool()) {
                marked.push_back(n);
            }
            if (inputs(n).empty()) {
                unwired.push_back(n);
                if (!jumpedTo.contains(upperName(n.attribute("name").value()))) {
                    unreached.push_back(n);
                }
            }
            const auto& next = readers[key(n)];
            if (std::none_of(next.begin(), next.end(), [](const pugi::xml_node& r) {
                    return localName(r) != "actionBlock"; // a transition, a divergence or a convergence
                })) {
                exits.push_back(n);
            }
        }
        // A loop inside the macro back to its first step jumps to it: then it is still the entry.
        const std::vector<pugi::xml_node>& entries = !marked.empty()      ? marked
                                                     : !unreached.empty() ? unreached
                                                                          : unwired;
        if (entries.size() != 1 || exits.size() != 1) {
            // "2 exit steps (Heat (localId 4), Mix (localId 5))"
            const auto count = [](const std::vector<pugi::xml_node>& ends, std::string_view what) {
                std::string s = fmt::format("{} {} step{}", ends.size(), what, ends.size() == 1 ? "" : "s");
                for (std::size_t i = 0; i < ends.size(); ++i) {
                    s += fmt::format("{}{} (localId {})", i == 0 ? " (" : ", ", ends[i].attribute("name").value(),
                                     ends[i].attribute("localId").value());
                }
                return ends.empty() ? s : s + ")";
            };
            fail(DiagCode::PlcopenInvalid, macro,
                 fmt::format("macro step '{}': its body has {} and {}, not one of each: the entry is the step no "
                             "connection leads to (or the one marked initialStep), the exit the one no "
                             "transition follows",
                             macro.attribute("name").value(), count(entries, "entry"), count(exits, "exit")));
            return;
        }
        macros[key(macro)] = MacroEnds{entries.front(), exits.front()};
    }

    // Writes the steps, transitions and inline actions of `body`, and of its macro steps' bodies.
    void write(const pugi::xml_node& body) {
        for (const pugi::xml_node& n : body.children()) {
            if (failed) {
                return;
            }
            const std::string_view kind = localName(n);
            if (kind == "step") {
                const auto actions = associations(n);
                if (failed) {
                    return;
                }
                // A macro's entry step is no initial step of the chart.
                const bool initial = n.attribute("initialStep").as_bool() && !placeOf(n).inMacro;
                t.moveTo(n);
                // A diagnostic about the text names the element it comes from (its place, its localId).
                put(n, fmt::format("{} {}: ", initial ? "INITIAL_STEP" : "STEP", n.attribute("name").value()));
                for (const auto& [text, action] : actions) {
                    put(action, text);
                }
                t.put("END_STEP");
            } else if (kind == "macroStep") {
                for (const pugi::xml_node& r : readers[key(n)]) {
                    if (localName(r) == "actionBlock") {
                        fail(DiagCode::PlcopenUnsupported, r, "an action block on a macro step (only on its steps)");
                        return;
                    }
                }
                write(firstElement(child(n, "body")));
            } else if (kind == "transition") {
                transition(n);
            } else if (kind == "actionBlock") {
                writeInlineActions(n);
            }
        }
    }

    void writeInlineActions(const pugi::xml_node& block) {
        for (const pugi::xml_node& a : block.children()) {
            const auto it = inlineActions.find(a.internal_object());
            if (it == inlineActions.end()) {
                continue;
            }
            t.moveTo(a);
            t.put(fmt::format("ACTION {}:", it->second));
            translateBody(t, child(a, "inline"), pou, true);
            t.put(" END_ACTION");
        }
    }
};

} // namespace

void translateSfc(Translator& t, const pugi::xml_node& sfc, const pugi::xml_node& pou) {
    Chart chart(t, pou);
    if (std::string_view(pou.attribute("pouType").value()) == "function") {
        chart.fail(DiagCode::PlcopenUnsupported, sfc, "a FUNCTION has no SFC body (only programs and function blocks)");
        return;
    }
    std::set<std::string> names; // the POU's own names, which inline actions must not take
    for (const pugi::xml_node& list : child(pou, "interface").children()) {
        for (const pugi::xml_node& v : list.children()) {
            names.insert(v.attribute("name").value());
        }
    }
    for (const pugi::xml_node& a : child(pou, "actions").children()) {
        names.insert(a.attribute("name").value());
    }
    chart.enter(sfc, "", false, names, 0);
    if (!chart.failed) {
        chart.checkNames();
    }
    if (!chart.failed) {
        chart.write(sfc);
    }
}

} // namespace takt::compiler::plcopen
