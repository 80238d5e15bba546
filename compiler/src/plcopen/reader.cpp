// The PLCopen XML reader (plcopen.h): the document, its POUs and its configurations. pugixml parses
// the XML; it does not expand entities a DOCTYPE declares (only the five predefined ones and
// character references), so an entity-expansion bomb stays the size of the file.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "takt/compiler/literals.h"
#include "takt/compiler/names.h"
#include "translate.h"

namespace takt::compiler {

namespace {

constexpr std::string_view kNamespace200 = "http://www.plcopen.org/xml/tc6_0200";
constexpr std::string_view kNamespace201 = "http://www.plcopen.org/xml/tc6_0201";

// XHTML markup around an ST body's text (<xhtml><p>…) deeper than this is not an export.
constexpr int kMaxMarkupDepth = 8;

// An interface section of TC6 and its ST keyword; `accessVars` has none takt reads.
struct Section {
    std::string_view element;
    std::string_view keyword;
};
constexpr Section kSections[] = {
    {"inputVars", "VAR_INPUT"}, {"outputVars", "VAR_OUTPUT"},     {"inOutVars", "VAR_IN_OUT"},  {"localVars", "VAR"},
    {"tempVars", "VAR_TEMP"},   {"externalVars", "VAR_EXTERNAL"}, {"globalVars", "VAR_GLOBAL"},
};

// `CONSTANT`, `RETAIN`, … of a variable list's attributes.
std::string qualifiers(const pugi::xml_node& list) {
    std::string q;
    if (list.attribute("constant").as_bool()) {
        q += " CONSTANT";
    }
    if (list.attribute("retain").as_bool()) {
        q += " RETAIN";
    }
    if (list.attribute("nonretain").as_bool()) {
        q += " NON_RETAIN";
    }
    if (list.attribute("persistent").as_bool()) {
        q += " PERSISTENT";
    }
    return q;
}

// A variable list (`<inputVars>` …): `VAR_INPUT … END_VAR` with each variable on its own line.
void varList(plcopen::Translator& t, const pugi::xml_node& list, std::string_view keyword, std::string_view owner) {
    t.moveTo(list);
    t.put(fmt::format("{}{}", keyword, qualifiers(list)));
    for (const pugi::xml_node& v : list.children()) {
        if (v.type() == pugi::node_element && plcopen::localName(v) == "variable") {
            t.variable(v, owner);
        }
    }
    t.put(" END_VAR");
}

// The text of an ST body: every text and CDATA node below `<ST>` (CODESYS writes it in
// `<xhtml>`, Beremiz in `<xhtml:p><![CDATA[…]]>`), each at its own place.
void stBody(plcopen::Translator& t, const pugi::xml_node& st, int depth = 0) {
    if (depth > kMaxMarkupDepth) {
        t.problem(DiagCode::PlcopenInvalid, st, fmt::format("ST body: markup nests deeper than {}", kMaxMarkupDepth));
        return;
    }
    // A text right after a text written goes on without a gap: XML splits a CDATA section at each
    // `]]>` of the text (`a]]` `>b`), which may lie inside an ST string.
    bool continues = false;
    for (pugi::xml_node n = st.first_child(); n; n = n.next_sibling()) {
        const bool isText = n.type() == pugi::node_pcdata || n.type() == pugi::node_cdata;
        if (isText) {
            std::string_view text = n.value();
            if (!continues && text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
                continue;
            }
            if (!continues) {
                t.moveTo(n);
            }
            t.put(text);
        } else if (n.type() == pugi::node_element) {
            stBody(t, n, depth + 1);
        }
        const pugi::xml_node next = n.next_sibling();
        continues = isText && (next.type() == pugi::node_pcdata || next.type() == pugi::node_cdata);
        if (isText && !continues) {
            t.put(" ");
        }
    }
}

// The variable lists of an `<interface>` (a POU's or a method's), in their order; `owner` names
// the POU in messages.
void interfaceLists(plcopen::Translator& t, const pugi::xml_node& iface, std::string_view owner) {
    for (const pugi::xml_node& list : iface.children()) {
        if (list.type() != pugi::node_element) {
            continue;
        }
        const std::string_view element = plcopen::localName(list);
        const auto* section = std::find_if(std::begin(kSections), std::end(kSections),
                                           [&](const Section& s) { return s.element == element; });
        if (section != std::end(kSections)) {
            varList(t, list, section->keyword, owner);
        } else if (element != "returnType" && element != "documentation" && element != "addData") {
            t.problem(DiagCode::PlcopenUnsupported, list,
                      fmt::format("POU '{}': the interface section <{}> is not supported yet", owner, element));
        }
    }
}

// The first element below `node` with a localId: the place an unsupported body names.
pugi::xml_node firstWithLocalId(const pugi::xml_node& node) {
    for (pugi::xml_node n = node.first_child(); n; n = n.next_sibling()) {
        if (n.type() != pugi::node_element) {
            continue;
        }
        if (n.attribute("localId")) {
            return n;
        }
    }
    return node;
}

} // namespace

namespace plcopen {

void translateBody(Translator& t, const pugi::xml_node& body, const pugi::xml_node& pou, bool inAction) {
    const std::string_view name = pou.attribute("name").value();
    const pugi::xml_node language = firstElement(body);
    const std::string_view lang = language ? localName(language) : std::string_view();
    if (lang == "ST") {
        stBody(t, language);
    } else if (lang == "FBD" || lang == "LD") {
        translateNetwork(t, language, pou, inAction);
    } else if (lang == "SFC" && !inAction) {
        translateSfc(t, language, pou);
    } else if (lang == "SFC") {
        t.problem(DiagCode::PlcopenUnsupported, firstWithLocalId(language),
                  fmt::format("POU '{}': an action's body in SFC is not supported yet", name));
    } else if (lang == "IL") {
        t.problem(DiagCode::PlcopenUnsupported, firstWithLocalId(language),
                  fmt::format("POU '{}': a body in IL is not supported yet (only ST, FBD, LD and SFC bodies are read)",
                              name));
    } else if (!lang.empty() && lang != "documentation" && lang != "addData") {
        t.problem(DiagCode::PlcopenInvalid, language, fmt::format("POU '{}': <{}> is not a body language", name, lang));
    }
}

namespace {

// The ` PRIVATE` (` PROTECTED`, ` INTERNAL`, ` PUBLIC`) CODESYS's access modifiers in the addData
// of `iface` give a METHOD or PROPERTY (kCodesysAccessModifiers); "" when none is set; nothing
// after a problem (E0026 for two, or a value that is no boolean; E0027 for one takt does not read).
std::optional<std::string> accessOf(Translator& t, const pugi::xml_node& iface, std::string_view owner) {
    std::string access;
    for (const pugi::xml_node& data : child(iface, "addData").children()) {
        if (data.type() != pugi::node_element || localName(data) != "data" ||
            std::string_view(data.attribute("name").value()) != kCodesysAccessModifiers) {
            continue;
        }
        const pugi::xml_node modifiers = child(data, "AccessModifiers");
        for (const pugi::xml_attribute& a : modifiers.attributes()) {
            const std::string_view value = a.value();
            if (value != "true" && value != "false" && value != "1" && value != "0") {
                t.problem(DiagCode::PlcopenInvalid, modifiers,
                          fmt::format("'{}': access modifier {}=\"{}\" is neither true nor false", owner, a.name(),
                                      oneLine(value)));
                return std::nullopt;
            }
            if (value == "false" || value == "0") {
                continue;
            }
            const auto* known = std::find_if(std::begin(kCodesysAccessNames) + 1, std::end(kCodesysAccessNames),
                                             [&](std::string_view n) { return sameName(n, a.name()); });
            if (known == std::end(kCodesysAccessNames)) {
                t.problem(DiagCode::PlcopenUnsupported, modifiers,
                          fmt::format("'{}': the access modifier '{}' is not read (only Public, Private, Protected "
                                      "and Internal)",
                                      owner, a.name()));
                return std::nullopt;
            }
            if (!access.empty()) {
                t.problem(DiagCode::PlcopenInvalid, modifiers,
                          fmt::format("'{}': two access modifiers,{} and {}", owner, access, upperName(*known)));
                return std::nullopt;
            }
            access = " " + upperName(*known);
        }
    }
    return access;
}

// One CODESYS <Property> of `pou`: its accessors in the XML's order, each with its own variables
// and access (CODESYS lets a GET or SET narrow the property's).
void translateProperty(Translator& t, const pugi::xml_node& property, const pugi::xml_node& pou) {
    const std::string_view pouName = pou.attribute("name").value();
    const std::string_view name = property.attribute("name").value();
    if (!isIdentifier(name)) {
        t.problem(DiagCode::PlcopenInvalid, property,
                  fmt::format("POU '{}': '{}' is not a property name", pouName, name));
        return;
    }
    if (std::string_view(pou.attribute("pouType").value()) == "function") {
        t.problem(
            DiagCode::PlcopenInvalid, property,
            fmt::format("function '{}' has a property; only programs and function blocks have properties", pouName));
        return;
    }
    const std::string owner = fmt::format("{}.{}", pouName, name);
    const pugi::xml_node ret = child(child(property, "interface"), "returnType");
    if (!ret) {
        t.problem(DiagCode::PlcopenInvalid, property, fmt::format("property '{}' has no <returnType>", owner));
        return;
    }
    const std::optional<std::string> type = t.typeOf(ret, owner);
    const std::optional<std::string> access = type ? accessOf(t, child(property, "interface"), owner) : std::nullopt;
    if (!access) {
        return;
    }
    t.moveTo(property);
    t.put(fmt::format("PROPERTY{} {} : {}", *access, name, *type));
    for (const pugi::xml_node& accessor : property.children()) {
        const std::string_view which = localName(accessor);
        if (accessor.type() != pugi::node_element || (which != "GetAccessor" && which != "SetAccessor")) {
            continue;
        }
        const std::string_view keyword = which == "GetAccessor" ? "GET" : "SET";
        const std::optional<std::string> narrowed = accessOf(t, child(accessor, "interface"), owner);
        if (!narrowed) {
            return;
        }
        t.moveTo(accessor);
        t.put(fmt::format(" {}{}", keyword, *narrowed));
        interfaceLists(t, child(accessor, "interface"), owner);
        translateBody(t, child(accessor, "body"), pou, true);
        t.put(fmt::format(" END_{}", keyword));
    }
    t.put(" END_PROPERTY");
}

} // namespace

void translatePou(Translator& t, const pugi::xml_node& pou) {
    const std::string_view name = pou.attribute("name").value();
    if (!isIdentifier(name)) {
        t.problem(DiagCode::PlcopenInvalid, pou, fmt::format("<pou>: '{}' is not a POU name", name));
        return;
    }
    const std::string_view kind = pou.attribute("pouType").value();
    const std::string_view keyword = kind == "program"         ? "PROGRAM"
                                     : kind == "functionBlock" ? "FUNCTION_BLOCK"
                                     : kind == "function"      ? "FUNCTION"
                                                               : "";
    if (keyword.empty()) {
        t.problem(DiagCode::PlcopenInvalid, pou,
                  fmt::format("POU '{}': pouType '{}' is not program, functionBlock or function", name, kind));
        return;
    }
    const pugi::xml_node iface = child(pou, "interface");
    std::string header = fmt::format("{} {}", keyword, name);
    if (const pugi::xml_node ret = child(iface, "returnType"); ret) {
        std::optional<std::string> type = t.typeOf(ret, name);
        if (!type) {
            return;
        }
        header += " : " + *type;
    } else if (kind == "function") {
        t.problem(DiagCode::PlcopenInvalid, pou, fmt::format("function '{}' has no <returnType>", name));
        return;
    }
    t.moveTo(pou);
    t.put(header);
    interfaceLists(t, iface, name);
    // A POU's `<transitions>` are read where an SFC transition's condition names them (sfc.cpp).
    // A POU's actions: `ACTION name: … END_ACTION`, each at its <action>'s place (before the body:
    // takt reads a POU's actions anywhere among its statements).
    for (const pugi::xml_node& action : child(pou, "actions").children()) {
        if (action.type() != pugi::node_element || localName(action) != "action") {
            continue;
        }
        const std::string_view actionName = action.attribute("name").value();
        if (!isIdentifier(actionName)) {
            t.problem(DiagCode::PlcopenInvalid, action,
                      fmt::format("POU '{}': '{}' is not an action name", name, actionName));
            continue;
        }
        if (kind == "function") {
            t.problem(DiagCode::PlcopenInvalid, action,
                      fmt::format("function '{}' has an action; only programs and function blocks have actions", name));
            continue;
        }
        t.moveTo(action);
        t.put(fmt::format("ACTION {}:", actionName));
        translateBody(t, child(action, "body"), pou, true);
        t.put(" END_ACTION");
    }
    for (const pugi::xml_node& body : pou.children()) {
        if (body.type() == pugi::node_element && localName(body) == "body") {
            translateBody(t, body, pou, false);
        }
    }
    // CODESYS's METHODs and PROPERTYs, each in a <data> of the POU's addData: `METHOD name : T …
    // END_METHOD` and `PROPERTY name : T GET … END_GET SET … END_SET END_PROPERTY` after the body
    // (takt reads a POU's methods anywhere among its statements).
    for (const pugi::xml_node& data : child(pou, "addData").children()) {
        if (data.type() != pugi::node_element || localName(data) != "data") {
            continue;
        }
        if (std::string_view(data.attribute("name").value()) == kCodesysProperty) {
            for (const pugi::xml_node& property : data.children()) {
                if (property.type() == pugi::node_element && localName(property) == "Property") {
                    translateProperty(t, property, pou);
                }
            }
            continue;
        }
        if (std::string_view(data.attribute("name").value()) != kCodesysMethod) {
            continue;
        }
        for (const pugi::xml_node& method : data.children()) {
            if (method.type() != pugi::node_element || localName(method) != "Method") {
                continue;
            }
            const std::string_view methodName = method.attribute("name").value();
            if (!isIdentifier(methodName)) {
                t.problem(DiagCode::PlcopenInvalid, method,
                          fmt::format("POU '{}': '{}' is not a method name", name, methodName));
                continue;
            }
            if (kind == "function") {
                t.problem(
                    DiagCode::PlcopenInvalid, method,
                    fmt::format("function '{}' has a method; only programs and function blocks have methods", name));
                continue;
            }
            const pugi::xml_node methodIface = child(method, "interface");
            const std::string owner = fmt::format("{}.{}", name, methodName);
            const std::optional<std::string> access = accessOf(t, methodIface, owner);
            if (!access) {
                continue;
            }
            std::string methodHeader = fmt::format("METHOD{} {}", *access, methodName);
            if (const pugi::xml_node ret = child(methodIface, "returnType"); ret) {
                std::optional<std::string> type = t.typeOf(ret, owner);
                if (!type) {
                    continue;
                }
                methodHeader += " : " + *type;
            }
            t.moveTo(method);
            t.put(methodHeader);
            interfaceLists(t, methodIface, owner);
            translateBody(t, child(method, "body"), pou, true);
            t.put(" END_METHOD");
        }
    }
    t.put(fmt::format(" END_{}", keyword));
}

namespace {

// Whether `node`'s addData holds a `<data>` named `name`.
bool hasData(const pugi::xml_node& node, std::string_view name) {
    for (const pugi::xml_node& data : child(node, "addData").children()) {
        if (data.type() == pugi::node_element && localName(data) == "data" &&
            std::string_view(data.attribute("name").value()) == name) {
            return true;
        }
    }
    return false;
}

// The configuration `takt export plcopen` made for a project without one: no ST (takt runs each
// PROGRAM every base cycle, as in the project exported), only its resources and their cyclic
// tasks for runtime.toml's [resource].
void implicitConfiguration(Translator& t, const pugi::xml_node& configuration) {
    for (const pugi::xml_node& item : configuration.children()) {
        if (item.type() != pugi::node_element || localName(item) != "resource") {
            continue;
        }
        PlcopenResource resource{configuration.attribute("name").value(), item.attribute("name").value(), {}, true};
        for (const pugi::xml_node& part : item.children()) {
            PlcopenTask task;
            if (part.type() != pugi::node_element || localName(part) != "task" ||
                !plcopenIntervalMs(part.attribute("interval").value(), task.intervalMs)) {
                continue;
            }
            task.name = part.attribute("name").value();
            task.interval = fmt::format("T#{}ms", task.intervalMs);
            task.priority = part.attribute("priority").value();
            task.line = t.xmlLine(part);
            resource.tasks.push_back(std::move(task));
        }
        t.out.resources.push_back(std::move(resource));
    }
}

} // namespace

void translateConfiguration(Translator& t, const pugi::xml_node& configuration) {
    if (hasData(configuration, kTaktImplicitConfiguration)) {
        implicitConfiguration(t, configuration);
        return;
    }
    const std::string_view name = configuration.attribute("name").value();
    if (!isIdentifier(name)) {
        t.problem(DiagCode::PlcopenInvalid, configuration,
                  fmt::format("<configuration>: '{}' is not a configuration name", name));
        return;
    }
    t.moveTo(configuration);
    t.put(fmt::format("CONFIGURATION {}", name));
    for (const pugi::xml_node& item : configuration.children()) {
        if (item.type() != pugi::node_element) {
            continue;
        }
        const std::string_view element = localName(item);
        if (element == "globalVars") {
            varList(t, item, "VAR_GLOBAL", name);
            continue;
        }
        if (element != "resource") {
            if (element != "documentation" && element != "addData") {
                t.problem(DiagCode::PlcopenUnsupported, item,
                          fmt::format("configuration '{}': <{}> is not supported yet", name, element));
            }
            continue;
        }
        const std::string_view resName = item.attribute("name").value();
        if (!isIdentifier(resName)) {
            t.problem(DiagCode::PlcopenInvalid, item, fmt::format("<resource>: '{}' is not a resource name", resName));
            continue;
        }
        PlcopenResource resource{std::string(name), std::string(resName), {}, false};
        const std::string owner = fmt::format("{}.{}", name, resName);
        t.moveTo(item);
        t.put(fmt::format("RESOURCE {}", resName));
        const auto instance = [&](const pugi::xml_node& inst, std::string_view task) {
            const std::string_view instName = inst.attribute("name").value();
            const std::string_view typeName = inst.attribute("typeName").value();
            if (!isIdentifier(instName) || !isIdentifier(typeName)) {
                t.problem(DiagCode::PlcopenInvalid, inst,
                          fmt::format("resource '{}': <pouInstance> needs a 'name' and a 'typeName'", owner));
                return;
            }
            t.moveTo(inst);
            t.put(task.empty() ? fmt::format("PROGRAM {} : {};", instName, typeName)
                               : fmt::format("PROGRAM {} WITH {} : {};", instName, task, typeName));
        };
        for (const pugi::xml_node& part : item.children()) {
            if (part.type() != pugi::node_element) {
                continue;
            }
            const std::string_view what = localName(part);
            if (what == "globalVars") {
                varList(t, part, "VAR_GLOBAL", owner);
            } else if (what == "pouInstance") {
                instance(part, {});
            } else if (what == "task") {
                PlcopenTask task;
                task.name = part.attribute("name").value();
                task.line = t.xmlLine(part);
                if (!isIdentifier(task.name)) {
                    t.problem(DiagCode::PlcopenInvalid, part,
                              fmt::format("resource '{}': '{}' is not a task name", owner, task.name));
                    continue;
                }
                std::string settings;
                const std::string_view interval = part.attribute("interval").value();
                const std::string_view single = part.attribute("single").value();
                if (!interval.empty()) {
                    if (!plcopenIntervalMs(interval, task.intervalMs)) {
                        t.problem(DiagCode::PlcopenInvalid, part,
                                  fmt::format("task '{}': interval '{}' is neither a TIME literal (T#20ms) nor a "
                                              "duration (PT0.02S) of at least 1 ms",
                                              task.name, interval));
                        continue;
                    }
                    task.interval = fmt::format("T#{}ms", task.intervalMs);
                    settings = "INTERVAL := " + task.interval;
                } else if (!single.empty()) {
                    if (!isIdentifier(single)) {
                        t.problem(DiagCode::PlcopenInvalid, part,
                                  fmt::format("task '{}': single '{}' is not a variable name", task.name, single));
                        continue;
                    }
                    task.single = single;
                    settings = "SINGLE := " + task.single;
                }
                if (const pugi::xml_attribute priority = part.attribute("priority"); priority) {
                    task.priority = priority.value();
                    if (task.priority.empty() || !std::all_of(task.priority.begin(), task.priority.end(),
                                                              [](char c) { return c >= '0' && c <= '9'; })) {
                        t.problem(DiagCode::PlcopenInvalid, part,
                                  fmt::format("task '{}': priority '{}' is not a number", task.name, task.priority));
                        continue;
                    }
                    settings += fmt::format("{}PRIORITY := {}", settings.empty() ? "" : ", ", task.priority);
                }
                t.moveTo(part);
                t.put(fmt::format("TASK {}({});", task.name, settings));
                for (const pugi::xml_node& inst : part.children()) {
                    if (inst.type() == pugi::node_element && localName(inst) == "pouInstance") {
                        instance(inst, task.name);
                    }
                }
                resource.tasks.push_back(std::move(task));
            } else if (what != "documentation" && what != "addData") {
                t.problem(DiagCode::PlcopenUnsupported, part,
                          fmt::format("resource '{}': <{}> is not supported yet", owner, what));
            }
        }
        t.put(" END_RESOURCE");
        t.out.resources.push_back(std::move(resource));
    }
    t.put(" END_CONFIGURATION");
}

} // namespace plcopen

bool isPlcopenPath(const std::filesystem::path& path) {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext == ".xml";
}

bool plcopenIntervalMs(std::string_view text, std::uint32_t& ms) {
    double seconds = 0;
    if (text.starts_with("PT") || text.starts_with("pt")) {
        // xsd:duration as CODESYS writes task intervals: PT0.02S, PT1M30S, PT1H.
        std::string_view rest = text.substr(2);
        if (rest.empty()) {
            return false;
        }
        while (!rest.empty()) {
            std::size_t n = 0;
            while (n < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[n])) != 0 || rest[n] == '.')) {
                ++n;
            }
            if (n == 0 || n == rest.size()) {
                return false;
            }
            double value = 0;
            std::string error;
            if (!decodeReal(rest.substr(0, n), value, error)) {
                return false;
            }
            const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(rest[n])));
            seconds += value * (unit == 'H' ? 3600.0 : unit == 'M' ? 60.0 : unit == 'S' ? 1.0 : -1e30);
            rest = rest.substr(n + 1);
        }
    } else {
        const std::string_view prefix = literalPrefix(text);
        std::string upper(prefix);
        std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
        if (upper != "T" && upper != "TIME") {
            return false;
        }
        std::int64_t nanos = 0;
        std::string error;
        if (!decodeDuration(literalBody(text), nanos, error)) {
            return false;
        }
        seconds = static_cast<double>(nanos) / 1e9;
    }
    const double whole = std::round(seconds * 1000.0);
    if (!(whole >= 1.0) || whole > 3600000.0) {
        return false;
    }
    ms = static_cast<std::uint32_t>(whole);
    return true;
}

PlcopenTranslation translatePlcopen(std::string_view xml) {
    plcopen::Translator t(xml);
    pugi::xml_document doc;
    const pugi::xml_parse_result parsed =
        doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed) {
        t.problemAt(DiagCode::PlcopenInvalid, parsed.offset < 0 ? 0 : static_cast<std::size_t>(parsed.offset),
                    fmt::format("not well-formed XML: {}", parsed.description()));
        return t.take();
    }
    const pugi::xml_node root = doc.document_element();
    // The namespace of the root element: xmlns, or xmlns:PREFIX for <PREFIX:project>.
    const std::string_view rootName = root.name();
    const std::size_t colon = rootName.find(':');
    const std::string nsAttribute =
        colon == std::string_view::npos ? std::string("xmlns") : fmt::format("xmlns:{}", rootName.substr(0, colon));
    const std::string_view ns = root.attribute(nsAttribute.c_str()).value();
    if (plcopen::localName(root) != "project" || (ns != kNamespace200 && ns != kNamespace201)) {
        t.problem(DiagCode::PlcopenInvalid, root,
                  fmt::format("not a PLCopen TC6 XML project: the root element is <{}> in namespace '{}' (expected "
                              "<project> in {} or {})",
                              root.name(), ns, kNamespace201, kNamespace200));
        return t.take();
    }
    t.out.projectName = plcopen::child(root, "contentHeader").attribute("name").value();
    const pugi::xml_node types = plcopen::child(root, "types");
    for (const pugi::xml_node& type : plcopen::child(types, "dataTypes").children()) {
        if (type.type() == pugi::node_element && plcopen::localName(type) == "dataType") {
            t.dataType(type);
        }
    }
    for (const pugi::xml_node& pou : plcopen::child(types, "pous").children()) {
        if (pou.type() == pugi::node_element && plcopen::localName(pou) == "pou") {
            plcopen::translatePou(t, pou);
        }
    }
    const pugi::xml_node configurations = plcopen::child(plcopen::child(root, "instances"), "configurations");
    for (const pugi::xml_node& c : configurations.children()) {
        if (c.type() == pugi::node_element && plcopen::localName(c) == "configuration") {
            plcopen::translateConfiguration(t, c);
        }
    }
    // CODESYS's global variable lists (GVLs), in the project's addData: top-level VAR_GLOBALs.
    for (const pugi::xml_node& data : plcopen::child(root, "addData").children()) {
        if (data.type() != pugi::node_element || plcopen::localName(data) != "data" ||
            std::string_view(data.attribute("name").value()) != plcopen::kCodesysGlobalVars) {
            continue;
        }
        for (const pugi::xml_node& list : data.children()) {
            if (list.type() == pugi::node_element && plcopen::localName(list) == "globalVars") {
                const std::string_view name = list.attribute("name").value();
                varList(t, list, "VAR_GLOBAL", name.empty() ? std::string_view("GVL") : name);
            }
        }
    }
    return t.take();
}

} // namespace takt::compiler
