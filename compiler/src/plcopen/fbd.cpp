// FBD bodies of the PLCopen reader (translate.h): a network of blocks and variables joined by
// connections (`connectionPointIn/connection refLocalId`) becomes ST statements. Each
// outVariable (and each connected inOutVariable) is an assignment, each function block instance
// a call; a function is written into the expression that reads its output. Statements run in
// `executionOrderId` order when every one of them has one; otherwise in a topological order:
// the sinks in document order, each after the FB calls its inputs read (depth first). A
// connection back to an FB already on the path (feedback) reads the instance's output as the
// previous cycle left it, as CODESYS does.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "translate.h"

namespace takt::compiler::plcopen {

namespace {

constexpr int kMaxExpressionDepth = 64;

struct Network {
    Translator& t;
    std::string_view pou;
    std::map<std::string, pugi::xml_node> byId;
    std::map<std::string, pugi::xml_node> connectors; // connector name -> element
    std::set<std::string> emitted;                    // FB blocks already called
    std::set<std::string> onPath;                     // statements being ordered (feedback)
    bool failed = false;
    // Topological order: a statement's inputs pull the FB calls and in-out assignments they read
    // before it. With executionOrderId nothing is pulled: the XML's order stands.
    bool pull = true;
    // The element whose place a pulled statement is written at: the first statement reading it.
    pugi::xml_node anchor;

    void fail(DiagCode code, const pugi::xml_node& at, const std::string& message) {
        if (!failed) {
            t.problem(code, at, fmt::format("POU '{}': {}", pou, message));
        }
        failed = true;
    }

    static std::string text(const pugi::xml_node& n) {
        std::string s = child(n, "expression").child_value();
        std::replace_if(
            s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
        return s;
    }

    [[nodiscard]] bool isFbCall(const pugi::xml_node& n) const {
        return localName(n) == "block" && n.attribute("instanceName").value()[0] != '\0';
    }

    // The expression a connectionPointIn reads; empty when it is not connected.
    std::string input(const pugi::xml_node& point, int depth) {
        const pugi::xml_node connection = child(point, "connection");
        if (!connection) {
            return {};
        }
        if (depth > kMaxExpressionDepth) {
            fail(DiagCode::PlcopenInvalid, point, "the network nests deeper than takt follows, or loops without an FB");
            return "0";
        }
        const std::string ref = connection.attribute("refLocalId").value();
        const auto it = byId.find(ref);
        if (it == byId.end()) {
            fail(DiagCode::PlcopenInvalid, point.parent(),
                 fmt::format("a connection names localId {}, which no element has", ref));
            return "0";
        }
        const pugi::xml_node source = it->second;
        const std::string_view kind = localName(source);
        if (kind == "inVariable" || kind == "inOutVariable") {
            if (kind == "inOutVariable" && pull) {
                order(source, depth + 1); // its value flows on after its own assignment
            }
            return "(" + text(source) + ")";
        }
        if (kind == "continuation") {
            const auto c = connectors.find(source.attribute("name").value());
            if (c == connectors.end()) {
                fail(DiagCode::PlcopenInvalid, source,
                     fmt::format("continuation '{}' has no connector", source.attribute("name").value()));
                return "0";
            }
            return pin(child(c->second, "connectionPointIn"), false, depth + 1);
        }
        if (kind == "block") {
            const std::string parameter = connection.attribute("formalParameter").value();
            if (isFbCall(source)) {
                if (pull) {
                    order(source, depth + 1); // the call runs before its output is read (unless feedback)
                }
                if (!isIdentifier(parameter)) {
                    fail(DiagCode::PlcopenInvalid, connection, "a connection from an FB names no output pin");
                    return "0";
                }
                return fmt::format("{}.{}", source.attribute("instanceName").value(), parameter);
            }
            return call(source, depth + 1);
        }
        fail(DiagCode::PlcopenUnsupported, source, fmt::format("<{}> in an FBD body is not supported yet", kind));
        return "0";
    }

    // A pin's value, NOT-ed when the pin is negated.
    std::string pin(const pugi::xml_node& point, bool negated, int depth) {
        std::string v = input(point, depth);
        return negated && !v.empty() ? "NOT " + v : v;
    }

    // The argument list of a block: `Name := value` for each connected input and in-out pin.
    std::string arguments(const pugi::xml_node& block, bool formal, int depth) {
        std::string args;
        for (const std::string_view list : {"inputVariables", "inOutVariables"}) {
            for (const pugi::xml_node& v : child(block, list).children()) {
                if (v.type() != pugi::node_element || localName(v) != "variable") {
                    continue;
                }
                const std::string_view name = v.attribute("formalParameter").value();
                std::string value = pin(child(v, "connectionPointIn"), v.attribute("negated").as_bool(), depth);
                if (name == "EN") {
                    if (!value.empty()) {
                        fail(DiagCode::PlcopenUnsupported, block, "a block's EN input is not supported yet in FBD");
                    }
                    continue;
                }
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

    // A function block's output read in an expression: the call itself.
    std::string call(const pugi::xml_node& block, int depth) {
        const std::string_view type = block.attribute("typeName").value();
        if (!isIdentifier(type)) {
            fail(DiagCode::PlcopenInvalid, block, fmt::format("block type '{}' is not a name", type));
            return "0";
        }
        // Functions take their inputs in order: the standard ones (ADD, AND, SEL…) are extensible
        // and positional in ST.
        return fmt::format("{}({})", type, arguments(block, false, depth));
    }

    // Writes the statement of a sink or FB call after what it depends on.
    void order(const pugi::xml_node& node, int depth) {
        const std::string id = node.attribute("localId").value();
        if (emitted.contains(id) || onPath.contains(id) || failed) {
            return; // done, or feedback: the instance's output keeps last cycle's value
        }
        onPath.insert(id);
        if (depth == 0) {
            anchor = node;
        }
        std::string statement;
        if (isFbCall(node)) {
            const std::string_view instance = node.attribute("instanceName").value();
            if (!isIdentifier(instance)) {
                fail(DiagCode::PlcopenInvalid, node, fmt::format("instance name '{}' is not a name", instance));
            }
            statement = fmt::format("{}({});", instance, arguments(node, true, depth));
        } else {
            const std::string value = input(child(node, "connectionPointIn"), depth);
            if (!value.empty()) {
                statement =
                    fmt::format("{} := {};", text(node), node.attribute("negated").as_bool() ? "NOT " + value : value);
            }
        }
        onPath.erase(id);
        emitted.insert(id);
        if (!failed && !statement.empty()) {
            t.moveTo(anchor);
            t.put(statement);
        }
    }
};

} // namespace

void translateFbd(Translator& t, const pugi::xml_node& fbd, std::string_view pou) {
    Network net{t, pou, {}, {}, {}, {}, false, true, {}};
    std::vector<pugi::xml_node> statements;
    for (const pugi::xml_node& n : fbd.children()) {
        if (n.type() != pugi::node_element) {
            continue;
        }
        const std::string_view kind = localName(n);
        if (kind == "comment") {
            continue;
        }
        if (kind != "block" && kind != "inVariable" && kind != "outVariable" && kind != "inOutVariable" &&
            kind != "connector" && kind != "continuation") {
            net.fail(DiagCode::PlcopenUnsupported, n, fmt::format("<{}> in an FBD body is not supported yet", kind));
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
        if (kind == "outVariable" || kind == "inOutVariable" || net.isFbCall(n)) {
            statements.push_back(n);
        }
    }
    const bool ordered =
        !statements.empty() && std::all_of(statements.begin(), statements.end(), [](const pugi::xml_node& n) {
            return n.attribute("executionOrderId").as_uint() > 0;
        });
    if (ordered) {
        std::stable_sort(statements.begin(), statements.end(), [](const pugi::xml_node& a, const pugi::xml_node& b) {
            return a.attribute("executionOrderId").as_uint() < b.attribute("executionOrderId").as_uint();
        });
        net.pull = false;
        for (const pugi::xml_node& n : statements) {
            net.order(n, 0);
        }
        return;
    }
    for (const pugi::xml_node& n : statements) {
        net.order(n, 0);
    }
}

} // namespace takt::compiler::plcopen
