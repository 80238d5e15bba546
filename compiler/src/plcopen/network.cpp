// Graphical bodies of the PLCopen reader (translate.h): an FBD or LD network of elements joined by
// connections (`connectionPointIn/connection refLocalId`) becomes ST statements. Both languages
// share this one walker; LD only adds elements (power rails, contacts, coils) to FBD's.
//
// Each outVariable (and each connected inOutVariable), each coil and each function block
// instance is a statement; a function, a contact and a rail are written into the expression that
// reads their output. Several connections into one pin are a wired OR. Statements run in
// `executionOrderId` order when every one of them has one; otherwise in a topological order: the
// statements in document order, each after the FB calls its inputs read (depth first). A
// connection back to an FB already on the path (feedback) reads the instance's output as the
// previous cycle left it, as CODESYS does. `jump`, `label` and `return` are statements too: a
// forward jump skips up to its label (`IF NOT cond THEN … END_IF;`), a jump back to a label above
// repeats what lies between (`REPEAT … UNTIL NOT cond END_REPEAT;`), a return is `RETURN`.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "translate.h"

namespace takt::compiler::plcopen {

namespace {

constexpr int kMaxExpressionDepth = 64;
// A connection read twice is written twice (a function output, a contact fanned out), so a
// network whose elements each read the one before twice doubles its text at every element:
// beyond these many reads, or this much text, the network is refused instead.
constexpr std::size_t kMaxReads = 100000;
constexpr std::size_t kMaxText = std::size_t{16} << 20;
// An element's text inside a statement is written "\x01<index>\x02text\x03"; the writer strips
// the marks and records where the text landed, so a compiler diagnostic about it names the
// element's own line and localId (PlcopenOrigin). XML text cannot hold these characters.
constexpr char kMarkOpen = '\x01';
constexpr char kMarkMid = '\x02';
constexpr char kMarkClose = '\x03';

bool isEdge(const pugi::xml_node& n) {
    const std::string_view edge = n.attribute("edge").value();
    return edge == "rising" || edge == "falling";
}

struct Network {
    Network(Translator& translator, std::string_view pouName, std::string_view body, bool pulling, bool expression)
        : t(translator), pou(pouName), language(body), pull(pulling), expressionOnly(expression) {}

    Translator& t;
    std::string_view pou;
    std::string_view language; // "FBD" or "LD"
    std::map<std::string, pugi::xml_node> byId;
    std::map<std::string, pugi::xml_node> connectors; // connector name -> element
    std::map<std::string, std::string> edges;         // localId of an edge contact/coil -> its member
    std::set<std::string> emitted;                    // FB blocks called, edge detectors run
    std::set<std::string> onPath;                     // statements being ordered (feedback)
    std::vector<pugi::xml_node> marked;               // the elements of the marks in statements
    bool failed = false;
    std::size_t reads = 0;
    std::size_t produced = 0; // bytes of expression text read so far
    // Topological order: a statement's inputs pull the FB calls and in-out assignments they read
    // before it. With executionOrderId nothing is pulled: the XML's order stands.
    bool pull = true;
    // Only an expression is wanted (an SFC transition's condition): no statement can run first.
    bool expressionOnly = false;
    // The element whose place a pulled statement is written at: the first statement reading it.
    pugi::xml_node anchor;
    // Of the statement being built: the edge detectors it runs first, and the EN inputs of the
    // functions it reads (it runs only when they are all TRUE).
    std::string prefix;
    std::vector<std::string> enables;
    // With jumps and labels, each statement's place (localId -> place): its stretch between two
    // of them, and its index in the network; and the stretch of the statement being written. A
    // pull never crosses into another stretch: that would move an FB call into or out of a loop or
    // a skipped range.
    struct Place {
        std::size_t stretch;
        std::size_t index;
    };
    std::map<std::string, Place> places;
    std::size_t stretch = 0;
    // Without executionOrderId: the end and label of the innermost loop around the statement
    // being written, and the FB calls after a loop read inside it (localId -> who reads it):
    // W0017 where the call is written.
    struct LateRead {
        std::string reader; // the reading statement's localId
        std::string label;  // the loop's
    };
    std::size_t loopEnd = std::numeric_limits<std::size_t>::max();
    std::string loopLabel;
    std::map<std::string, LateRead> lateReads;

    void fail(DiagCode code, const pugi::xml_node& at, const std::string& message) {
        if (!failed) {
            t.problem(code, at, fmt::format("POU '{}': {}", pou, message));
        }
        failed = true;
    }

    // `text` marked as coming from `node`.
    std::string mark(const pugi::xml_node& node, std::string_view text) {
        marked.push_back(node);
        return fmt::format("{}{}{}{}{}", kMarkOpen, marked.size() - 1, kMarkMid, text, kMarkClose);
    }

    // The text of an element's `<expression>` (FBD variables) or `<variable>` (LD contacts and
    // coils), on one line and without control characters, marked as the element's.
    std::string text(const pugi::xml_node& n) {
        std::string s =
            child(n, localName(n) == "contact" || localName(n) == "coil" ? "variable" : "expression").child_value();
        std::replace_if(
            s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }, ' ');
        if (s.find_first_not_of(' ') == std::string::npos) {
            fail(DiagCode::PlcopenInvalid, n, fmt::format("<{}> names no variable", localName(n)));
            return "0";
        }
        return mark(n, s);
    }

    [[nodiscard]] static bool isFbCall(const pugi::xml_node& n) {
        return localName(n) == "block" && n.attribute("instanceName").value()[0] != '\0';
    }

    // The expression a connectionPointIn reads; empty when it is not connected. Several
    // connections are OR-ed (LD's parallel branches joining).
    std::string input(const pugi::xml_node& point, int depth) {
        std::vector<std::string> terms;
        for (const pugi::xml_node& c : point.children()) {
            if (c.type() == pugi::node_element && localName(c) == "connection") {
                terms.push_back(source(c, point, depth));
            }
        }
        if (terms.size() <= 1) {
            return terms.empty() ? std::string() : terms[0];
        }
        if (std::find(terms.begin(), terms.end(), "TRUE") != terms.end()) {
            return "TRUE";
        }
        std::string joined;
        for (const std::string& term : terms) {
            joined += joined.empty() ? "(" : " OR ";
            joined += term;
            if (joined.size() > kMaxText) {
                fail(DiagCode::PlcopenInvalid, point, "the network's expressions grow larger than takt writes");
                return "0";
            }
        }
        return joined + ")";
    }

    // The value one connection brings, within the budget of text a network may write.
    std::string source(const pugi::xml_node& connection, const pugi::xml_node& point, int depth) {
        std::string value = sourceOf(connection, point, depth);
        produced += value.size();
        if (produced > kMaxText && !failed) {
            fail(DiagCode::PlcopenInvalid, point, "the network's expressions grow larger than takt writes");
        }
        return failed ? "0" : value;
    }

    std::string sourceOf(const pugi::xml_node& connection, const pugi::xml_node& point, int depth) {
        if (depth > kMaxExpressionDepth || ++reads > kMaxReads) {
            fail(DiagCode::PlcopenInvalid, point, "the network nests deeper than takt follows, or loops without an FB");
            return "0";
        }
        if (failed) {
            return "0";
        }
        const std::string ref = connection.attribute("refLocalId").value();
        const auto it = byId.find(ref);
        if (it == byId.end()) {
            fail(DiagCode::PlcopenInvalid, point.parent(),
                 fmt::format("a connection names localId {}, which no element has", ref));
            return "0";
        }
        const pugi::xml_node from = it->second;
        const std::string_view kind = localName(from);
        if (kind == "inVariable" || kind == "inOutVariable") {
            if (kind == "inOutVariable" && pull) {
                order(from, depth + 1); // its value flows on after its own assignment
            }
            return "(" + text(from) + ")";
        }
        if (kind == "continuation") {
            const auto c = connectors.find(from.attribute("name").value());
            if (c == connectors.end()) {
                fail(DiagCode::PlcopenInvalid, from,
                     fmt::format("continuation '{}' has no connector", from.attribute("name").value()));
                return "0";
            }
            return pin(child(c->second, "connectionPointIn"), false, depth + 1);
        }
        if (kind == "leftPowerRail") {
            return "TRUE";
        }
        if (kind == "contact") {
            return contact(from, depth + 1);
        }
        if (kind == "coil") {
            // A coil passes its power on to what follows it (coils in series, the right rail).
            return power(from, depth + 1);
        }
        if (kind == "block") {
            const std::string parameter = connection.attribute("formalParameter").value();
            if (parameter == "ENO") {
                // ENO is EN: takt's blocks do not fail, so they end every call they start.
                const std::string en = enable(from, depth + 1);
                return en.empty() ? "TRUE" : en;
            }
            if (isFbCall(from)) {
                if (expressionOnly) {
                    fail(DiagCode::PlcopenUnsupported, from,
                         "an FB instance in a transition condition is not supported yet (call it in an action)");
                    return "0";
                }
                if (pull) {
                    order(from, depth + 1); // the call runs before its output is read (unless feedback)
                }
                if (!isIdentifier(parameter)) {
                    fail(DiagCode::PlcopenInvalid, connection, "a connection from an FB names no output pin");
                    return "0";
                }
                return mark(from, fmt::format("{}.{}", from.attribute("instanceName").value(), parameter));
            }
            return call(from, depth + 1);
        }
        fail(DiagCode::PlcopenUnsupported, from,
             fmt::format("<{}> in an {} body is not supported yet", kind, language));
        return "0";
    }

    // A pin's value, NOT-ed when the pin is negated.
    std::string pin(const pugi::xml_node& point, bool negated, int depth) {
        std::string v = input(point, depth);
        return negated && !v.empty() ? "NOT " + v : v;
    }

    // The power flowing into a contact or coil; a problem when nothing is connected.
    std::string power(const pugi::xml_node& n, int depth) {
        std::string p = input(child(n, "connectionPointIn"), depth);
        if (p.empty()) {
            fail(DiagCode::PlcopenInvalid, n, fmt::format("a {} has no input connection", localName(n)));
            return "FALSE";
        }
        return p;
    }

    // `power AND term`, without the AND when the power comes straight from the left rail.
    static std::string series(const std::string& powered, const std::string& term) {
        return powered == "TRUE" ? term : fmt::format("{} AND {}", powered, term);
    }

    // The member detecting the edge of an edge contact or coil: `member(CLK := clk);` runs once a
    // cycle, before the first statement reading it.
    std::string edge(const pugi::xml_node& n, const std::string& clk) {
        const std::string id = n.attribute("localId").value();
        const std::string& member = edges[id];
        if (emitted.insert("edge " + id).second) {
            prefix += fmt::format("{}(CLK := {}); ", member, clk);
        }
        return member + ".Q";
    }

    // A contact: the power AND its variable (negated, or its rising or falling edge).
    std::string contact(const pugi::xml_node& n, int depth) {
        const std::string p = power(n, depth);
        const std::string var = "(" + text(n) + ")";
        if (isEdge(n)) {
            if (n.attribute("negated").as_bool()) {
                fail(DiagCode::PlcopenInvalid, n, "a contact is both negated and edge-sensing");
                return "FALSE";
            }
            return series(p, edge(n, var));
        }
        return series(p, n.attribute("negated").as_bool() ? "NOT " + var : var);
    }

    // What a block's EN input reads; empty when EN is not connected (the block always runs).
    std::string enable(const pugi::xml_node& block, int depth) {
        for (const pugi::xml_node& v : child(block, "inputVariables").children()) {
            if (v.type() == pugi::node_element && localName(v) == "variable" &&
                std::string_view(v.attribute("formalParameter").value()) == "EN") {
                return pin(child(v, "connectionPointIn"), v.attribute("negated").as_bool(), depth);
            }
        }
        return {};
    }

    // The argument list of a block: `Name := value` for each connected input and in-out pin; EN
    // is not an argument but the condition of the call (enable()).
    std::string arguments(const pugi::xml_node& block, bool formal, int depth) {
        std::string args;
        for (const std::string_view list : {"inputVariables", "inOutVariables"}) {
            for (const pugi::xml_node& v : child(block, list).children()) {
                if (v.type() != pugi::node_element || localName(v) != "variable") {
                    continue;
                }
                const std::string_view name = v.attribute("formalParameter").value();
                if (name == "EN") {
                    continue;
                }
                std::string value = pin(child(v, "connectionPointIn"), v.attribute("negated").as_bool(), depth);
                if (value.empty()) {
                    continue; // an open input keeps its default
                }
                if (!isIdentifier(name)) {
                    fail(DiagCode::PlcopenInvalid, v, "a block input names no pin");
                    continue;
                }
                args += args.empty() ? "" : ", ";
                args += formal ? fmt::format("{} := {}", name, value) : value;
            }
        }
        return args;
    }

    // A function block's output read in an expression: the call itself. With EN connected, the
    // statement reading it runs only when EN is TRUE.
    std::string call(const pugi::xml_node& block, int depth) {
        const std::string_view type = block.attribute("typeName").value();
        if (!isIdentifier(type)) {
            fail(DiagCode::PlcopenInvalid, block, fmt::format("block type '{}' is not a name", type));
            return "0";
        }
        if (std::string en = enable(block, depth); !en.empty()) {
            enables.push_back(std::move(en));
        }
        // Functions take their inputs in order: the standard ones (ADD, AND, SEL…) are extensible
        // and positional in ST.
        return fmt::format("{}({})", mark(block, type), arguments(block, false, depth));
    }

    // The statement of an FB call, a variable or a coil.
    std::string statement(const pugi::xml_node& node, int depth) {
        const std::string_view kind = localName(node);
        if (isFbCall(node)) {
            const std::string_view instance = node.attribute("instanceName").value();
            if (!isIdentifier(instance)) {
                fail(DiagCode::PlcopenInvalid, node, fmt::format("instance name '{}' is not a name", instance));
                return {};
            }
            const std::string args = arguments(node, true, depth);
            if (!enables.empty()) {
                fail(DiagCode::PlcopenUnsupported, node,
                     "an FB input reading a function with a connected EN is not supported yet");
                return {};
            }
            const std::string call = fmt::format("{}({});", mark(node, instance), args);
            const std::string en = enable(node, depth);
            return en.empty() || en == "TRUE" ? call : fmt::format("IF {} THEN {} END_IF;", en, call);
        }
        if (kind == "coil") {
            const std::string p = power(node, depth);
            const std::string target = text(node);
            const std::string_view storage = node.attribute("storage").value();
            if (isEdge(node)) {
                return fmt::format("{} := {};", target, edge(node, p));
            }
            if (storage == "set" || storage == "reset") {
                return fmt::format("IF {} THEN {} := {}; END_IF;", p, target, storage == "set" ? "TRUE" : "FALSE");
            }
            return fmt::format("{} := {};", target, node.attribute("negated").as_bool() ? "NOT (" + p + ")" : p);
        }
        const std::string value = input(child(node, "connectionPointIn"), depth);
        if (value.empty()) {
            return {};
        }
        return fmt::format("{} := {};", text(node), node.attribute("negated").as_bool() ? "NOT " + value : value);
    }

    // Writes the statement of a sink or FB call after what it depends on.
    void order(const pugi::xml_node& node, int depth) {
        const std::string id = node.attribute("localId").value();
        if (emitted.contains(id) || onPath.contains(id) || failed) {
            return; // done, or feedback: the instance's output keeps last cycle's value
        }
        if (const auto at = places.find(id); depth > 0 && at != places.end() && at->second.stretch != stretch) {
            // runs at its own place, beyond a jump or label; read before, it keeps its last value
            if (isFbCall(node) && at->second.index > loopEnd) {
                lateReads.emplace(id, LateRead{anchor.attribute("localId").value(), loopLabel});
            }
            return;
        }
        onPath.insert(id);
        if (depth == 0) {
            anchor = node;
        }
        std::string outerPrefix = std::exchange(prefix, {});
        std::vector<std::string> outerEnables = std::exchange(enables, {});
        std::string s = statement(node, depth);
        if (!enables.empty() && !s.empty()) {
            std::string all;
            for (const std::string& en : enables) {
                all += all.empty() ? en : " AND " + en;
            }
            s = fmt::format("IF {} THEN {} END_IF;", all, s);
        }
        s = prefix + s;
        prefix = std::move(outerPrefix);
        enables = std::move(outerEnables);
        onPath.erase(id);
        emitted.insert(id);
        if (!s.empty()) {
            write(anchor, s);
        }
        if (const auto late = lateReads.find(id); late != lateReads.end() && !failed) {
            t.problemHere(DiagCode::PlcopenLoopReadsLastCycle, node,
                          fmt::format("POU '{}': the statement at localId {} inside the loop at label '{}' reads an "
                                      "output of FB '{}', which is called after the loop: there it reads the output "
                                      "of the FB's previous call (put the block inside the loop or before its label, "
                                      "or give the network executionOrderId)",
                                      pou, late->second.reader, late->second.label,
                                      node.attribute("instanceName").value()));
        }
    }

    // `s` without its marks.
    static std::string plain(const std::string& s) {
        std::string out;
        bool inIndex = false;
        for (const char c : s) {
            if (c == kMarkOpen) {
                inIndex = true;
            } else if (c == kMarkMid) {
                inIndex = false;
            } else if (c != kMarkClose && !inIndex) {
                out += c;
            }
        }
        return out;
    }

    // Writes `s` at `at`'s place, stripping the marks and recording where each marked text went.
    void write(const pugi::xml_node& at, const std::string& s) {
        if (failed) {
            return;
        }
        t.moveTo(at);
        std::size_t i = 0;
        while (i < s.size()) {
            const std::size_t open = s.find(kMarkOpen, i);
            t.put(std::string_view(s).substr(i, open == std::string::npos ? std::string::npos : open - i));
            if (open == std::string::npos) {
                break;
            }
            const std::size_t mid = s.find(kMarkMid, open);
            const std::size_t close = s.find(kMarkClose, mid);
            const auto begin = static_cast<std::uint32_t>(t.out.text.size());
            t.put(std::string_view(s).substr(mid + 1, close - mid - 1));
            t.origin(begin, marked[std::stoul(s.substr(open + 1, mid - open - 1))]);
            i = close + 1;
        }
    }
};

// Statements that change the flow: jumps to labels and returns.
bool isControl(std::string_view kind) {
    return kind == "jump" || kind == "label" || kind == "return";
}

// Whether `label` is drawn above `jump` (by <position> y, then x); true when either has no
// position, as then the XML's order is all there is.
bool drawnAbove(const pugi::xml_node& label, const pugi::xml_node& jump) {
    const pugi::xml_node a = child(label, "position");
    const pugi::xml_node b = child(jump, "position");
    if (!a || !b) {
        return true;
    }
    const double ay = a.attribute("y").as_double();
    const double by = b.attribute("y").as_double();
    return ay < by || (ay == by && a.attribute("x").as_double() < b.attribute("x").as_double());
}

} // namespace

std::optional<std::string> translateCondition(Translator& t, const pugi::xml_node& body, const pugi::xml_node& pou,
                                              const pugi::xml_node& point) {
    Network net(t, pou.attribute("name").value(), localName(body), false, true);
    for (const pugi::xml_node& n : body.children()) {
        const std::string id = n.attribute("localId").value();
        if (n.type() != pugi::node_element || id.empty()) {
            continue;
        }
        net.byId.emplace(id, n);
        if (localName(n) == "connector") {
            net.connectors.emplace(n.attribute("name").value(), n);
        }
    }
    const std::string value = net.input(point, 0);
    if (!net.failed && (!net.prefix.empty() || !net.enables.empty())) {
        net.fail(DiagCode::PlcopenUnsupported, point.parent(),
                 "an edge-sensing contact or a block with EN in a transition condition is not supported yet");
    }
    if (!net.failed && value.empty()) {
        net.fail(DiagCode::PlcopenInvalid, point.parent(), "a transition's condition is not connected");
    }
    if (net.failed) {
        return std::nullopt;
    }
    return Network::plain(value);
}

void translateNetwork(Translator& t, const pugi::xml_node& body, const pugi::xml_node& pou, bool inAction) {
    const std::string_view language = localName(body);
    const std::string_view pouName = pou.attribute("name").value();
    Network net(t, pouName, language, true, false);
    // The POU's own names, which the hidden edge members must not take.
    std::set<std::string> names;
    for (const pugi::xml_node& list : child(pou, "interface").children()) {
        for (const pugi::xml_node& v : list.children()) {
            names.insert(v.attribute("name").value());
        }
    }
    std::vector<pugi::xml_node> statements;
    std::string hidden;
    for (const pugi::xml_node& n : body.children()) {
        if (n.type() != pugi::node_element) {
            continue;
        }
        const std::string_view kind = localName(n);
        if (kind == "comment") {
            continue;
        }
        // CODESYS writes a network's title and the editor's settings as vendor elements without
        // pins: nothing to run. One with pins is a vendor's own block, which takt cannot know.
        if (kind == "vendorElement" && !child(n, "inputVariables") && !child(n, "outputVariables") &&
            !child(n, "inOutVariables")) {
            continue;
        }
        const bool ld = language == "LD" &&
                        (kind == "leftPowerRail" || kind == "rightPowerRail" || kind == "contact" || kind == "coil");
        if (!ld && kind != "block" && kind != "inVariable" && kind != "outVariable" && kind != "inOutVariable" &&
            kind != "connector" && kind != "continuation" && !isControl(kind)) {
            net.fail(DiagCode::PlcopenUnsupported, n,
                     fmt::format("<{}> in an {} body is not supported yet", kind, language));
            return;
        }
        const std::string id = n.attribute("localId").value();
        if (id.empty() || !net.byId.emplace(id, n).second) {
            net.fail(DiagCode::PlcopenInvalid, n, fmt::format("<{}> has no localId or one another element has", kind));
            return;
        }
        if (kind == "connector") {
            net.connectors.emplace(n.attribute("name").value(), n);
        }
        if (kind == "outVariable" || kind == "inOutVariable" || kind == "coil" || isControl(kind) ||
            Network::isFbCall(n)) {
            statements.push_back(n);
        }
        if ((kind == "contact" || kind == "coil") && isEdge(n)) {
            if (std::string_view(pou.attribute("pouType").value()) == "function") {
                net.fail(DiagCode::PlcopenUnsupported, n,
                         fmt::format("an edge-sensing {} in a FUNCTION, which keeps nothing between calls", kind));
                return;
            }
            if (inAction) {
                net.fail(DiagCode::PlcopenUnsupported, n,
                         fmt::format("an edge-sensing {} in an action, which declares no variables of its own", kind));
                return;
            }
            // `_Edge<localId>`: an R_TRIG or F_TRIG instance of the POU (a name ST cannot
            // misread; a POU variable of that name moves it to `_Edge<localId>_`).
            std::string member = "_Edge" + (isIdentifier("_" + id) ? id : std::to_string(net.edges.size()));
            while (names.contains(member)) {
                member += "_";
            }
            names.insert(member);
            hidden += fmt::format("{} : {}; ", member,
                                  std::string_view(n.attribute("edge").value()) == "rising" ? "R_TRIG" : "F_TRIG");
            net.edges.emplace(id, std::move(member));
        }
    }
    if (!hidden.empty()) {
        t.moveTo(body);
        t.put("VAR " + hidden + "END_VAR");
    }
    // The XML's order stands when every statement has an executionOrderId and they differ:
    // CODESYS numbers from 0, Beremiz writes 0 on every element unless asked to order.
    std::set<std::string> ids;
    const bool ordered =
        statements.size() > 1 && std::all_of(statements.begin(), statements.end(), [&](const pugi::xml_node& n) {
            return n.attribute("executionOrderId") && ids.insert(n.attribute("executionOrderId").value()).second;
        });
    if (ordered) {
        std::stable_sort(statements.begin(), statements.end(), [](const pugi::xml_node& a, const pugi::xml_node& b) {
            return a.attribute("executionOrderId").as_uint() < b.attribute("executionOrderId").as_uint();
        });
        net.pull = false;
    }
    // A jump forward opens `IF NOT cond THEN`, which its label closes; a jump back to a label above
    // it (a loop) closes the `REPEAT` its label opened: `REPEAT … UNTIL NOT cond END_REPEAT;`, the
    // statements between run again while the jump's input is TRUE. The IFs and REPEATs must nest:
    // jumps whose ranges cross are not lowered.
    std::map<std::string, std::size_t> labels;             // label name -> its place in `statements`
    std::map<std::string, std::vector<std::size_t>> loops; // label name -> the jumps back to it, last first
    for (std::size_t i = 0; i < statements.size(); ++i) {
        if (localName(statements[i]) != "label") {
            continue;
        }
        const auto [at, added] = labels.emplace(statements[i].attribute("label").value(), i);
        if (!added) { // a jump to it would be ambiguous, and the loops opened twice
            net.fail(DiagCode::PlcopenInvalid, statements[i],
                     fmt::format("label '{}' is declared twice (also localId {})", at->first,
                                 statements[at->second].attribute("localId").value()));
            return;
        }
    }
    for (std::size_t i = statements.size(); i-- > 0;) {
        const std::string name = statements[i].attribute("label").value();
        if (localName(statements[i]) == "jump" && labels.contains(name) && labels[name] < i) {
            if (net.pull && !drawnAbove(statements[labels[name]], statements[i])) {
                // without executionOrderId the XML's order is no running order: a loop needs the
                // label drawn above its jump too
                net.fail(DiagCode::PlcopenUnsupported, statements[i],
                         fmt::format("the jump to label '{}' comes after the label (localId {}) in the XML but not in "
                                     "the drawing; without executionOrderId takt reads a jump back only to a label "
                                     "drawn above it",
                                     name, statements[labels[name]].attribute("localId").value()));
                return;
            }
            loops[name].push_back(i);
        }
    }
    struct Range {
        std::string label;
        std::size_t loopEnd; // the jump back closing a REPEAT; 0 for a forward jump's IF
    };
    std::vector<Range> open;
    if (net.pull && !labels.empty()) {
        std::size_t stretch = 0;
        for (std::size_t i = 0; i < statements.size(); ++i) {
            stretch += isControl(localName(statements[i])) ? 1 : 0;
            net.places.emplace(statements[i].attribute("localId").value(), Network::Place{stretch, i});
        }
    }
    const auto crossing = [&](const pugi::xml_node& at, const std::string& name) {
        net.fail(DiagCode::PlcopenUnsupported, at,
                 fmt::format("the jumps to label '{}' and to label '{}' cross; takt lowers nested jumps only", name,
                             open.empty() ? name : open.back().label));
    };
    for (std::size_t i = 0; i < statements.size() && !net.failed; ++i) {
        const pugi::xml_node& n = statements[i];
        const std::string_view kind = localName(n);
        // The ranges nest: the innermost loop is the last one open.
        const auto loop = std::find_if(open.rbegin(), open.rend(), [](const Range& r) { return r.loopEnd != 0; });
        net.loopEnd = loop == open.rend() ? std::numeric_limits<std::size_t>::max() : loop->loopEnd;
        net.loopLabel = loop == open.rend() ? std::string() : loop->label;
        if (!isControl(kind)) {
            if (const auto at = net.places.find(n.attribute("localId").value()); at != net.places.end()) {
                net.stretch = at->second.stretch;
            }
            net.order(n, 0);
            continue;
        }
        net.anchor = n;
        net.stretch = std::numeric_limits<std::size_t>::max(); // a jump's or return's input pulls no call across it
        const std::string name = n.attribute("label").value();
        if (kind == "label") {
            std::string text;
            while (!open.empty() && open.back().loopEnd == 0 && open.back().label == name) {
                open.pop_back();
                text += "END_IF; ";
            }
            if (std::find_if(open.begin(), open.end(),
                             [&](const Range& r) { return r.loopEnd == 0 && r.label == name; }) != open.end()) {
                crossing(n, name);
                break;
            }
            for (const std::size_t end : loops[name]) {
                open.push_back(Range{name, end});
                text += "REPEAT ";
            }
            if (!text.empty()) {
                net.write(n, text);
            }
            continue;
        }
        std::string condition = net.input(child(n, "connectionPointIn"), 0);
        std::string prefix = std::exchange(net.prefix, {});
        if (!net.enables.empty()) {
            net.fail(DiagCode::PlcopenUnsupported, n,
                     fmt::format("a {} reading a function with a connected EN is "
                                 "not supported yet",
                                 kind));
            break;
        }
        if (condition.empty()) {
            net.fail(DiagCode::PlcopenInvalid, n, fmt::format("a {} has no input connection", kind));
            break;
        }
        if (kind == "return") {
            net.write(n, prefix +
                             (condition == "TRUE" ? "RETURN;" : fmt::format("IF {} THEN RETURN; END_IF;", condition)));
            continue;
        }
        const auto label = labels.find(name);
        if (label == labels.end()) {
            net.fail(DiagCode::PlcopenInvalid, n, fmt::format("a jump to label '{}', which no label has", name));
            break;
        }
        if (label->second < i) {
            // the statements since the label ran; the jump's input, read now, decides whether they run again
            if (const std::string plain = Network::plain(condition); plain == "TRUE" || plain == "(TRUE)") {
                net.fail(DiagCode::PlcopenUnsupported, n,
                         fmt::format("a jump back to '{}' that is always taken never ends", name));
                break;
            }
            if (open.empty() || open.back().loopEnd != i) {
                crossing(n, name);
                break;
            }
            open.pop_back();
            net.write(n, prefix + fmt::format("UNTIL NOT ({}) END_REPEAT;", condition));
            continue;
        }
        open.push_back(Range{name, 0});
        net.write(n, prefix + fmt::format("IF NOT ({}) THEN", condition));
    }
    if (!net.failed && std::any_of(open.begin(), open.end(), [](const Range& r) { return r.loopEnd != 0; })) {
        // every REPEAT a label opened is closed by its jump; never hand the compiler a half loop
        net.fail(DiagCode::PlcopenUnsupported, net.anchor,
                 fmt::format("internal error: the loop at label '{}' was not closed; please report this",
                             open.back().label));
    }
}

} // namespace takt::compiler::plcopen
