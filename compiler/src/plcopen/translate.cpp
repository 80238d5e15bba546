// The PLCopen reader's writer (translate.h): positions, types, initial values, variables and
// data types. TC6 spells a type as one element (`<INT/>`, `<derived name="T"/>`, `<array>`…) and
// a value as `<simpleValue value="…"/>`, `<arrayValue>` or `<structValue>`.
#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "translate.h"

namespace takt::compiler::plcopen {

namespace {

// Arrays of arrays of structs nest; deeper than this is not a hand-made type.
constexpr int kMaxDepth = 32;

// TC6's elementary type elements, spelled as the ST type names.
constexpr std::array<std::string_view, 24> kElementary = {
    "BOOL",  "BYTE", "WORD",  "DWORD", "LWORD", "SINT", "INT", "DINT", "LINT", "USINT", "UINT",  "UDINT",
    "ULINT", "REAL", "LREAL", "TIME",  "LTIME", "DATE", "DT",  "TOD",  "CHAR", "WCHAR", "LDATE", "LTOD"};

bool isAddress(std::string_view a) {
    if (a.size() < 2 || a[0] != '%') {
        return false;
    }
    return std::all_of(a.begin() + 1, a.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '*'; });
}

} // namespace

std::string oneLine(std::string_view text) {
    std::string s(text);
    std::replace_if(
        s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    return s;
}

std::string_view localName(const pugi::xml_node& node) {
    std::string_view n = node.name();
    const std::size_t colon = n.find(':');
    return colon == std::string_view::npos ? n : n.substr(colon + 1);
}

pugi::xml_node child(const pugi::xml_node& node, std::string_view name) {
    for (pugi::xml_node c = node.first_child(); c; c = c.next_sibling()) {
        if (c.type() == pugi::node_element && localName(c) == name) {
            return c;
        }
    }
    return {};
}

pugi::xml_node firstElement(const pugi::xml_node& node) {
    for (pugi::xml_node c = node.first_child(); c; c = c.next_sibling()) {
        if (c.type() == pugi::node_element) {
            return c;
        }
    }
    return {};
}

bool isIdentifier(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) {
        return false;
    }
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

Translator::Translator(std::string_view xml) : xml_(xml) {
    lineStarts_.push_back(0);
    for (std::size_t i = 0; i < xml.size(); ++i) {
        if (xml[i] == '\n' || (xml[i] == '\r' && (i + 1 == xml.size() || xml[i + 1] != '\n'))) {
            lineStarts_.push_back(static_cast<std::uint32_t>(i + 1));
        }
    }
}

Translator::LineCol Translator::position(const pugi::xml_node& node) const {
    const std::ptrdiff_t at = node.offset_debug();
    if (at < 0 || static_cast<std::size_t>(at) > xml_.size()) {
        return {line_, column_};
    }
    // An element's offset is its name's; its '<' is one before.
    auto offset = static_cast<std::size_t>(at);
    if (node.type() == pugi::node_element && offset > 0) {
        --offset;
    }
    return positionAt(offset);
}

Translator::LineCol Translator::positionAt(std::size_t offset) const {
    offset = std::min(offset, xml_.size());
    const auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), static_cast<std::uint32_t>(offset));
    const auto line = static_cast<std::uint32_t>(it - lineStarts_.begin());
    return {line, static_cast<std::uint32_t>(offset - lineStarts_[line - 1] + 1)};
}

std::uint32_t Translator::xmlLine(const pugi::xml_node& node) const {
    return position(node).line;
}

void Translator::moveTo(const pugi::xml_node& node) {
    moveTo(position(node));
}

void Translator::moveTo(LineCol to) {
    if (to.line < line_ || (to.line == line_ && to.column <= column_)) {
        if (!out.text.empty() && out.text.back() != ' ' && out.text.back() != '\n') {
            put(" ");
        }
        return;
    }
    while (line_ < to.line) {
        // a line passed over keeps room for the column of an element a diagnostic will name
        if (const auto pad = padTo_.find(line_); pad != padTo_.end()) {
            if (pad->second > column_) {
                out.text.append(pad->second - column_, ' ');
            }
            padTo_.erase(pad);
        }
        out.text += '\n';
        outLineStarts_.push_back(static_cast<std::uint32_t>(out.text.size()));
        ++line_;
        column_ = 1;
    }
    if (to.column > column_) {
        out.text.append(to.column - column_, ' ');
        column_ = to.column;
    }
}

void Translator::put(std::string_view text) {
    for (char c : text) {
        out.text += c;
        if (c == '\n') {
            outLineStarts_.push_back(static_cast<std::uint32_t>(out.text.size()));
            ++line_;
            column_ = 1;
        } else {
            ++column_;
        }
    }
}

void Translator::dropTrailing(std::string_view chars, std::size_t floor) {
    while (out.text.size() > floor && out.text.back() != '\n' &&
           chars.find(out.text.back()) != std::string_view::npos && column_ > 1) {
        out.text.pop_back();
        --column_;
    }
}

std::optional<std::uint32_t> Translator::textOffsetOf(const pugi::xml_node& node) const {
    return textOffsetOf(position(node));
}

std::optional<std::uint32_t> Translator::textOffsetOf(LineCol at) const {
    // Only when the text is written there already (a statement is written at the first element
    // of it that comes last in the XML).
    if (at.line > outLineStarts_.size()) {
        return std::nullopt;
    }
    const std::uint32_t start = outLineStarts_[at.line - 1];
    const std::uint32_t next =
        at.line < outLineStarts_.size() ? outLineStarts_[at.line] - 1 : static_cast<std::uint32_t>(out.text.size());
    return std::min(start + at.column - 1, next);
}

void Translator::origin(std::uint32_t begin, const pugi::xml_node& node) {
    PlcopenOrigin o{begin, static_cast<std::uint32_t>(out.text.size()), 0, false, node.attribute("localId").value()};
    const LineCol at = position(node);
    const bool reached = at.line < line_ || (at.line == line_ && at.column <= column_);
    if (const std::optional<std::uint32_t> offset = reached ? textOffsetOf(at) : std::nullopt) {
        o.target = *offset;
        o.hasTarget = true;
    } else {
        pendingOrigins_.emplace_back(out.origins.size(), at); // an element past the text written so far
        keepRoomFor(at);
    }
    out.origins.push_back(std::move(o));
}

void Translator::problem(DiagCode code, const pugi::xml_node& node, std::string message) {
    moveTo(node);
    problemHere(code, node, std::move(message));
}

void Translator::problemHere(DiagCode code, const pugi::xml_node& node, std::string message) {
    if (const pugi::xml_attribute id = node.attribute("localId"); id) {
        message += fmt::format(" (localId {})", oneLine(id.value()));
    }
    const LineCol at = position(node);
    const bool reached = at.line < line_ || (at.line == line_ && at.column <= column_);
    const std::optional<std::uint32_t> offset = reached ? textOffsetOf(at) : std::nullopt;
    if (!offset) {
        pending_.emplace_back(out.problems.size(), at);
        keepRoomFor(at);
    }
    out.problems.push_back(PlcopenProblem{code, offset.value_or(static_cast<std::uint32_t>(out.text.size())), at.line,
                                          at.column, std::move(message)});
}

void Translator::keepRoomFor(LineCol at) {
    std::uint32_t& column = padTo_[at.line];
    column = std::max(column, at.column);
}

PlcopenTranslation Translator::take() {
    // A problem about an element past the last text written (an FB call written early, where a
    // statement before it reads it), or text that is an element's below the line it is written
    // on (an SFC step's action, written in the step), gets white space up to the element's place.
    // In the XML's order: the text only moves forward, so an element moved to after one below it
    // would get no column of its own.
    std::vector<LineCol> places;
    for (const auto* pending : {&pending_, &pendingOrigins_}) {
        for (const auto& [index, at] : *pending) {
            places.push_back(at);
        }
    }
    std::sort(places.begin(), places.end(), [](const LineCol& a, const LineCol& b) {
        return a.line != b.line ? a.line < b.line : a.column < b.column;
    });
    for (const LineCol& at : places) {
        if (at.line > line_ || (at.line == line_ && at.column > column_)) {
            moveTo(at);
        }
    }
    for (const auto& [index, at] : pending_) {
        if (const std::optional<std::uint32_t> offset = textOffsetOf(at)) {
            out.problems[index].offset = *offset;
        }
    }
    for (const auto& [index, at] : pendingOrigins_) {
        if (const std::optional<std::uint32_t> offset = textOffsetOf(at)) {
            out.origins[index].target = *offset;
            out.origins[index].hasTarget = true;
        }
    }
    pending_.clear();
    pendingOrigins_.clear();
    return std::move(out);
}

void Translator::problemAt(DiagCode code, std::size_t xmlOffset, std::string message) {
    const LineCol at = positionAt(xmlOffset);
    moveTo(at);
    out.problems.push_back(
        PlcopenProblem{code, static_cast<std::uint32_t>(out.text.size()), at.line, at.column, std::move(message)});
}

std::optional<std::string> Translator::typeOf(const pugi::xml_node& holder, std::string_view where) {
    const pugi::xml_node type = firstElement(holder);
    if (!type) {
        problem(DiagCode::PlcopenInvalid, holder, fmt::format("{}: <{}> names no type", where, localName(holder)));
        return std::nullopt;
    }
    return typeElement(type, where, 0);
}

std::optional<std::string> Translator::typeElement(const pugi::xml_node& type, std::string_view where, int depth) {
    const std::string_view kind = localName(type);
    if (depth > kMaxDepth) {
        problem(DiagCode::PlcopenInvalid, type, fmt::format("{}: types nest deeper than {}", where, kMaxDepth));
        return std::nullopt;
    }
    if (std::find(kElementary.begin(), kElementary.end(), kind) != kElementary.end()) {
        return std::string(kind);
    }
    if (kind == "string" || kind == "wstring") {
        std::string s = kind == "string" ? "STRING" : "WSTRING";
        if (const pugi::xml_attribute len = type.attribute("length"); len) {
            const std::string_view l = len.value();
            if (l.empty() || !std::all_of(l.begin(), l.end(), [](char c) { return c >= '0' && c <= '9'; })) {
                problem(DiagCode::PlcopenInvalid, type,
                        fmt::format("{}: string length '{}' is not a number", where, oneLine(l)));
                return std::nullopt;
            }
            s += fmt::format("[{}]", l);
        }
        return s;
    }
    if (kind == "derived") {
        const std::string_view name = type.attribute("name").value();
        if (!isIdentifier(name)) {
            problem(DiagCode::PlcopenInvalid, type, fmt::format("{}: '{}' is not a type name", where, oneLine(name)));
            return std::nullopt;
        }
        return std::string(name);
    }
    if (kind == "array" || kind == "pointer" || kind == "subrangeSigned" || kind == "subrangeUnsigned") {
        const pugi::xml_node base = child(type, "baseType");
        if (!base) {
            problem(DiagCode::PlcopenInvalid, type, fmt::format("{}: <{}> has no <baseType>", where, kind));
            return std::nullopt;
        }
        const pugi::xml_node baseType = firstElement(base);
        if (!baseType) {
            problem(DiagCode::PlcopenInvalid, base, fmt::format("{}: <baseType> names no type", where));
            return std::nullopt;
        }
        std::optional<std::string> of = typeElement(baseType, where, depth + 1);
        if (!of) {
            return std::nullopt;
        }
        if (kind == "pointer") {
            return "POINTER TO " + *of;
        }
        const auto bound = [&](const pugi::xml_node& range, std::string& text) {
            const std::string lower = oneLine(range.attribute("lower").value());
            const std::string upper = oneLine(range.attribute("upper").value());
            if (lower.empty() || upper.empty()) {
                problem(DiagCode::PlcopenInvalid, range,
                        fmt::format("{}: <{}> needs 'lower' and 'upper'", where, localName(range)));
                return false;
            }
            text += fmt::format("{}..{}", lower, upper);
            return true;
        };
        if (kind == "array") {
            std::string dims;
            for (const pugi::xml_node& d : type.children()) {
                if (d.type() == pugi::node_element && localName(d) == "dimension") {
                    dims += dims.empty() ? "" : ", ";
                    if (!bound(d, dims)) {
                        return std::nullopt;
                    }
                }
            }
            if (dims.empty()) {
                problem(DiagCode::PlcopenInvalid, type, fmt::format("{}: <array> has no <dimension>", where));
                return std::nullopt;
            }
            return fmt::format("ARRAY[{}] OF {}", dims, *of);
        }
        const pugi::xml_node range = child(type, "range");
        std::string r;
        if (!range) {
            problem(DiagCode::PlcopenInvalid, type, fmt::format("{}: <{}> has no <range>", where, kind));
            return std::nullopt;
        }
        if (!bound(range, r)) {
            return std::nullopt;
        }
        return fmt::format("{}({})", *of, r);
    }
    if (kind == "enum") {
        std::string values;
        for (const pugi::xml_node& v : child(type, "values").children()) {
            if (v.type() != pugi::node_element || localName(v) != "value") {
                continue;
            }
            const std::string_view name = v.attribute("name").value();
            if (!isIdentifier(name)) {
                problem(DiagCode::PlcopenInvalid, v,
                        fmt::format("{}: '{}' is not an enumeration value name", where, oneLine(name)));
                return std::nullopt;
            }
            values += values.empty() ? "" : ", ";
            values += name;
            if (const pugi::xml_attribute value = v.attribute("value"); value) {
                values += fmt::format(" := {}", oneLine(value.value()));
            }
        }
        if (values.empty()) {
            problem(DiagCode::PlcopenInvalid, type, fmt::format("{}: <enum> has no <value>", where));
            return std::nullopt;
        }
        // TC6 2.01 gives an enumeration its integer type in an optional <baseType>.
        if (const pugi::xml_node base = firstElement(child(type, "baseType")); base) {
            std::optional<std::string> of = typeElement(base, where, depth + 1);
            if (!of) {
                return std::nullopt;
            }
            return fmt::format("{} ({})", *of, values);
        }
        return fmt::format("({})", values);
    }
    if (kind == "struct") {
        problem(DiagCode::PlcopenUnsupported, type,
                fmt::format("{}: a STRUCT written inside a variable's type is not supported yet; declare it as a "
                            "<dataType>",
                            where));
        return std::nullopt;
    }
    problem(DiagCode::PlcopenUnsupported, type, fmt::format("{}: the type element <{}> is not supported", where, kind));
    return std::nullopt;
}

std::optional<std::string> Translator::valueOf(const pugi::xml_node& holder, std::string_view where) {
    const pugi::xml_node value = firstElement(holder);
    if (!value) {
        problem(DiagCode::PlcopenInvalid, holder, fmt::format("{}: <{}> holds no value", where, localName(holder)));
        return std::nullopt;
    }
    return valueElement(value, where, 0);
}

std::optional<std::string> Translator::valueElement(const pugi::xml_node& value, std::string_view where, int depth) {
    const std::string_view kind = localName(value);
    if (depth > kMaxDepth) {
        problem(DiagCode::PlcopenInvalid, value, fmt::format("{}: values nest deeper than {}", where, kMaxDepth));
        return std::nullopt;
    }
    if (kind == "simpleValue") {
        const std::string v = oneLine(value.attribute("value").value());
        if (v.find_first_not_of(' ') == std::string::npos) {
            problem(DiagCode::PlcopenInvalid, value, fmt::format("{}: <simpleValue> has no 'value'", where));
            return std::nullopt;
        }
        return v;
    }
    if (kind == "arrayValue" || kind == "structValue") {
        const bool array = kind == "arrayValue";
        std::string items;
        for (const pugi::xml_node& v : value.children()) {
            if (v.type() != pugi::node_element || localName(v) != "value") {
                continue;
            }
            const pugi::xml_node inner = firstElement(v);
            if (!inner) {
                problem(DiagCode::PlcopenInvalid, v, fmt::format("{}: <value> holds no value", where));
                return std::nullopt;
            }
            std::optional<std::string> text = valueElement(inner, where, depth + 1);
            if (!text) {
                return std::nullopt;
            }
            items += items.empty() ? "" : ", ";
            if (array) {
                const std::string repeat = oneLine(v.attribute("repetitionValue").value());
                items += repeat.empty() ? *text : fmt::format("{}({})", repeat, *text);
            } else {
                const std::string_view member = v.attribute("member").value();
                if (!isIdentifier(member)) {
                    problem(DiagCode::PlcopenInvalid, v,
                            fmt::format("{}: '{}' is not a member name", where, oneLine(member)));
                    return std::nullopt;
                }
                items += fmt::format("{} := {}", member, *text);
            }
        }
        return array ? fmt::format("[{}]", items) : fmt::format("({})", items);
    }
    problem(DiagCode::PlcopenInvalid, value, fmt::format("{}: <{}> is not a PLCopen value", where, kind));
    return std::nullopt;
}

void Translator::variable(const pugi::xml_node& var, std::string_view owner) {
    const std::string_view name = var.attribute("name").value();
    if (!isIdentifier(name)) {
        problem(DiagCode::PlcopenInvalid, var, fmt::format("{}: '{}' is not a variable name", owner, oneLine(name)));
        return;
    }
    const std::string where = fmt::format("{}.{}", owner, name);
    const pugi::xml_node typeHolder = child(var, "type");
    if (!typeHolder) {
        problem(DiagCode::PlcopenInvalid, var, fmt::format("variable '{}' has no <type>", where));
        return;
    }
    std::optional<std::string> type = typeOf(typeHolder, where);
    if (!type) {
        return;
    }
    std::string decl(name);
    if (const pugi::xml_attribute address = var.attribute("address"); address) {
        if (!isAddress(address.value())) {
            problem(DiagCode::PlcopenInvalid, var,
                    fmt::format("variable '{}': '{}' is not a direct address", where, oneLine(address.value())));
            return;
        }
        decl += fmt::format(" AT {}", address.value());
        out.located.push_back(PlcopenLocated{where, address.value(), *type, xmlLine(var)});
    }
    decl += " : " + *type;
    if (const pugi::xml_node init = child(var, "initialValue"); init) {
        std::optional<std::string> value = valueOf(init, where);
        if (!value) {
            return;
        }
        decl += " := " + *value;
    }
    moveTo(var);
    put(decl + ";");
}

void Translator::dataType(const pugi::xml_node& type) {
    const std::string_view name = type.attribute("name").value();
    if (!isIdentifier(name)) {
        problem(DiagCode::PlcopenInvalid, type, fmt::format("data type: '{}' is not a type name", oneLine(name)));
        return;
    }
    const pugi::xml_node base = child(type, "baseType");
    const pugi::xml_node spec = firstElement(base);
    if (!spec) {
        problem(DiagCode::PlcopenInvalid, type, fmt::format("data type '{}' has no <baseType>", name));
        return;
    }
    if (localName(spec) == "struct") {
        moveTo(type);
        put(fmt::format("TYPE {} : STRUCT", name));
        for (const pugi::xml_node& v : spec.children()) {
            if (v.type() == pugi::node_element && localName(v) == "variable") {
                variable(v, name);
            }
        }
        put(" END_STRUCT; END_TYPE");
        return;
    }
    std::optional<std::string> text = typeElement(spec, name, 0);
    if (!text) {
        return;
    }
    std::string decl = fmt::format("TYPE {} : {}", name, *text);
    if (const pugi::xml_node init = child(type, "initialValue"); init) {
        std::optional<std::string> value = valueOf(init, name);
        if (!value) {
            return;
        }
        decl += " := " + *value;
    }
    moveTo(type);
    put(decl + "; END_TYPE");
}

} // namespace takt::compiler::plcopen
