// `takt export plcopen` (plcopen_export.h): the document, its POUs with their bodies and
// actions, the global variable lists and the configurations. Declarations are TC6 elements
// (export_decls.cpp); a body is the POU's ST text as written, between its declarations and its
// END_ keyword, without the ACTIONs written inside it (they become `<action>`s).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "export.h"
#include "takt/compiler/names.h"
#include "takt/compiler/plcopen.h"

namespace takt::compiler {

namespace plcopen {

namespace {

constexpr const char* kNamespace = "http://www.plcopen.org/xml/tc6_0201";

// Where the last `END_` (any case) in [begin, end) of `text` starts; `end` when none.
std::uint32_t lastEnd(std::string_view text, std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t i = end; i >= begin + 4; --i) {
        const std::string_view word = text.substr(i - 4, 4);
        if (sameName(word, "END_")) {
            return i - 4;
        }
    }
    return end;
}

bool startsWithVar(std::string_view text) {
    return text.size() >= 3 && sameName(text.substr(0, 3), "VAR");
}

} // namespace

std::string trimBody(std::string text) {
    const std::size_t last = text.find_last_not_of(" \t\r\n");
    if (last == std::string::npos) {
        return {};
    }
    text.erase(last + 1);
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    const std::size_t lineStart = text.rfind('\n', first);
    text.erase(0, lineStart == std::string::npos ? 0 : lineStart + 1);
    return text;
}

std::string Exporter::bodyText(const ast::PouDecl& pou) {
    const std::string_view text = project_.sources->file(pou.span.file).text();
    std::uint32_t begin = pou.name.span.end;
    if (pou.isAction) {
        // `ACTION name:` — the body starts after the colon.
        while (begin < pou.span.end && (std::isspace(static_cast<unsigned char>(text[begin])) != 0)) {
            ++begin;
        }
        if (begin < pou.span.end && (text[begin] == ':' || text[begin] == ';')) {
            ++begin;
        }
    }
    const auto after = [&](Span s) { begin = std::max(begin, s.end); };
    if (pou.returnType != nullptr) {
        after(pou.returnType->span);
    }
    if (pou.extends.has_value()) {
        after(pou.extends->span);
    }
    for (const ast::QualifiedName& i : pou.implements) {
        after(i.span);
    }
    for (const ast::VarBlock& b : pou.varBlocks) {
        after(b.span);
    }
    const std::uint32_t end = lastEnd(text, begin, pou.span.end);
    std::string body;
    std::uint32_t at = begin;
    for (const auto& member : pou.methods) { // actions and methods written among the statements
        if (member->span.begin >= at && member->span.end <= end) {
            body += text.substr(at, member->span.begin - at);
            at = member->span.end;
        }
    }
    body += text.substr(at, end - at);
    return trimBody(std::move(body));
}

bool Exporter::isChartsOwn(const ast::VarBlock& block) const {
    // The SFC lowering's blocks sit at the chart's steps, not at a VAR keyword of the source.
    return !startsWithVar(project_.sources->text(Span{block.span.file, block.span.begin, block.span.end}));
}

void Exporter::stBody(pugi::xml_node body, const std::string& text) {
    // Beremiz and the OpenPLC Editor write `<xhtml:p><![CDATA[…]]>`; pugixml splits a `]]>` in
    // the text over two CDATA sections, which the reader joins.
    body.append_child("ST").append_child("xhtml:p").append_child(pugi::node_cdata).set_value(text.c_str());
}

void Exporter::pou(pugi::xml_node pous, const ast::PouDecl& decl) {
    const std::string& name = decl.name.name;
    const char* kind = nullptr;
    switch (decl.pouKind) {
    case ast::PouKind::Program: kind = "program"; break;
    case ast::PouKind::FunctionBlock: kind = decl.isClass ? nullptr : "functionBlock"; break;
    case ast::PouKind::Function: kind = "function"; break;
    case ast::PouKind::Method:
    case ast::PouKind::TestProgram:
    case ast::PouKind::TestFunctionBlock: break;
    }
    if (kind == nullptr) {
        problem(decl.name.span, fmt::format("{} '{}' has no PLCopen XML form (only PROGRAM, FUNCTION_BLOCK and "
                                            "FUNCTION are POUs there)",
                                            decl.isClass ? "CLASS" : ast::pouKeyword(decl.pouKind), name));
        return;
    }
    if (decl.extends.has_value() || !decl.implements.empty() || decl.isAbstract || decl.isFinal ||
        decl.access != ast::Access::Default) {
        problem(decl.name.span, fmt::format("'{}': EXTENDS, IMPLEMENTS, ABSTRACT, FINAL and access specifiers are not "
                                            "exported yet",
                                            name));
        return;
    }

    pugi::xml_node node = pous.append_child("pou");
    node.append_attribute("name") = name.c_str();
    node.append_attribute("pouType") = kind;
    pugi::xml_node iface = node.append_child("interface");
    if (decl.returnType != nullptr && !type(iface.append_child("returnType"), *decl.returnType, false)) {
        return;
    }
    for (const ast::VarBlock& b : decl.varBlocks) {
        if (isChartsOwn(b)) {
            continue; // the chart's steps and flags, which the reader's chart declares again
        }
        if (!varList(iface, b, name)) {
            return;
        }
    }
    pugi::xml_node actions;
    std::vector<const ast::PouDecl*> vendor; // METHODs and PROPERTYs' accessors, in source order
    for (const auto& member : decl.methods) {
        if (member->accessor != ast::Accessor::None) {
            vendor.push_back(member.get());
            continue;
        }
        if (!member->isAction) {
            if (member->isAbstract || member->isFinal || member->isOverride) {
                problem(member->name.span, fmt::format("'{}.{}': ABSTRACT, FINAL and OVERRIDE on a METHOD are not "
                                                       "exported yet",
                                                       name, member->name.name));
                return;
            }
            vendor.push_back(member.get());
            continue;
        }
        if (!actions) {
            actions = node.append_child("actions");
        }
        pugi::xml_node action = actions.append_child("action");
        action.append_attribute("name") = member->name.name.c_str();
        stBody(action.append_child("body"), bodyText(*member));
    }
    if (decl.chart != nullptr) {
        if (!sfcBody(node.append_child("body"), decl)) {
            return;
        }
    } else {
        stBody(node.append_child("body"), bodyText(decl));
    }
    if (decl.pouKind == ast::PouKind::Program) {
        programs_.push_back(name);
    }
    // CODESYS writes each METHOD and PROPERTY as vendor data of its POU, in the order written:
    // a <Method> with an interface and a body, a <Property> with its accessors
    // (export_property.cpp).
    pugi::xml_node addData;
    for (std::size_t i = 0; i < vendor.size();) {
        addData = addData ? addData : node.append_child("addData");
        std::size_t next = i + 1;
        if (vendor[i]->accessor == ast::Accessor::None) {
            if (!method(addData, name, *vendor[i])) {
                return;
            }
        } else {
            while (next < vendor.size() && vendor[next]->accessor != ast::Accessor::None) {
                ++next;
            }
            if (!properties(addData, name,
                            {vendor.begin() + static_cast<std::ptrdiff_t>(i),
                             vendor.begin() + static_cast<std::ptrdiff_t>(next)})) {
                return;
            }
        }
        i = next;
    }
    ++out_.pous;
}

void Exporter::accessModifiers(pugi::xml_node iface, ast::Access access) {
    if (access == ast::Access::Default) {
        return;
    }
    pugi::xml_node data = iface.append_child("addData").append_child("data");
    data.append_attribute("name") = kCodesysAccessModifiers.data();
    data.append_attribute("handleUnknown") = "implementation";
    data.append_child("AccessModifiers")
        .append_attribute(std::string(kCodesysAccessNames[static_cast<std::size_t>(access)]).c_str()) = "true";
}

bool Exporter::method(pugi::xml_node addData, std::string_view owner, const ast::PouDecl& m) {
    pugi::xml_node data = addData.append_child("data");
    data.append_attribute("name") = kCodesysMethod.data();
    data.append_attribute("handleUnknown") = "implementation";
    pugi::xml_node method = data.append_child("Method");
    method.append_attribute("name") = m.name.name.c_str();
    pugi::xml_node iface = method.append_child("interface");
    if (m.returnType != nullptr && !type(iface.append_child("returnType"), *m.returnType, false)) {
        return false;
    }
    for (const ast::VarBlock& b : m.varBlocks) {
        if (!varList(iface, b, fmt::format("{}.{}", owner, m.name.name))) {
            return false;
        }
    }
    accessModifiers(iface, m.access);
    stBody(method.append_child("body"), bodyText(m));
    return true;
}

void Exporter::configuration(pugi::xml_node configurations, const ast::ConfigurationDecl& config) {
    pugi::xml_node node = configurations.append_child("configuration");
    node.append_attribute("name") = config.name.name.c_str();
    for (const ast::ResourceDecl& res : config.resources) {
        pugi::xml_node resource = node.append_child("resource");
        // Tasks and programs written in the CONFIGURATION itself form a resource without a name.
        resource.append_attribute("name") = res.name.name.empty() ? "Resource" : res.name.name.c_str();
        std::vector<pugi::xml_node> tasks;
        for (const ast::TaskDecl& t : res.tasks) {
            pugi::xml_node task = resource.append_child("task");
            task.append_attribute("name") = t.name.name.c_str();
            if (t.interval != nullptr) {
                const std::string interval = oneLine(t.interval->span);
                std::uint32_t ms = 0;
                if (!plcopenIntervalMs(interval, ms)) {
                    problem(t.interval->span, fmt::format("task '{}': the INTERVAL '{}' is not a TIME literal of at "
                                                          "least 1 ms, which PLCopen XML needs",
                                                          t.name.name, interval));
                    return;
                }
                task.append_attribute("interval") = interval.c_str();
            }
            if (t.single != nullptr) {
                task.append_attribute("single") = oneLine(t.single->span).c_str();
            }
            if (t.priority != nullptr) {
                task.append_attribute("priority") = oneLine(t.priority->span).c_str();
            }
            tasks.push_back(task);
            ++out_.tasks;
        }
        for (const ast::VarBlock& b : res.varBlocks) {
            if (!varList(resource, b, res.name.name)) {
                return;
            }
        }
        for (const ast::ProgramInstanceDecl& p : res.programs) {
            if (p.retain || p.nonRetain || !p.args.empty() || p.type.parts.size() != 1) {
                problem(p.span, fmt::format("program instance '{}': RETAIN, NON_RETAIN, arguments and a qualified "
                                            "type have no PLCopen XML form",
                                            p.name.name));
                return;
            }
            pugi::xml_node parent = resource;
            if (p.task.has_value()) {
                const auto it = std::find_if(res.tasks.begin(), res.tasks.end(), [&](const ast::TaskDecl& t) {
                    return sameName(t.name.name, p.task->name);
                });
                if (it == res.tasks.end()) {
                    problem(p.task->span, fmt::format("program instance '{}': no task '{}' in its resource",
                                                      p.name.name, p.task->name));
                    return;
                }
                parent = tasks[static_cast<std::size_t>(it - res.tasks.begin())];
            }
            pugi::xml_node inst = parent.append_child("pouInstance");
            inst.append_attribute("name") = p.name.name.c_str();
            inst.append_attribute("typeName") = p.type.parts.front().name.c_str();
        }
    }
    for (const ast::VarBlock& b : config.varBlocks) {
        if (!varList(node, b, config.name.name)) {
            return;
        }
    }
}

void Exporter::implicitConfiguration(pugi::xml_node configurations, const PlcopenExportOptions& options) {
    pugi::xml_node node = configurations.append_child("configuration");
    node.append_attribute("name") = "Config";
    pugi::xml_node resource = node.append_child("resource");
    resource.append_attribute("name") = isIdentifier(options.resourceName) ? options.resourceName.c_str() : "Resource";
    pugi::xml_node task = resource.append_child("task");
    task.append_attribute("name") = "MainTask";
    task.append_attribute("interval") = fmt::format("T#{}ms", options.cycleIntervalMs).c_str();
    task.append_attribute("priority") = 1;
    // Named like its PROGRAM, as takt names the instance it makes of each (`Main.level`).
    for (const std::string& program : programs_) {
        pugi::xml_node inst = task.append_child("pouInstance");
        inst.append_attribute("name") = program.c_str();
        inst.append_attribute("typeName") = program.c_str();
    }
    pugi::xml_node data = node.append_child("addData").append_child("data");
    data.append_attribute("name") = kTaktImplicitConfiguration.data();
    data.append_attribute("handleUnknown") = "discard";
    ++out_.tasks;
}

void Exporter::declarations(const std::vector<ast::DeclPtr>& decls, pugi::xml_node dataTypes, pugi::xml_node pous,
                            pugi::xml_node configurations, pugi::xml_node globals, std::string_view fileStem) {
    for (const ast::DeclPtr& d : decls) {
        switch (d->kind) {
        case ast::DeclKind::Pou: pou(pous, static_cast<const ast::PouDecl&>(*d)); break;
        case ast::DeclKind::Type: dataType(dataTypes, static_cast<const ast::TypeDecl&>(*d)); break;
        case ast::DeclKind::Configuration:
            sawConfiguration_ = true;
            configuration(configurations, static_cast<const ast::ConfigurationDecl&>(*d));
            break;
        case ast::DeclKind::GlobalVars: {
            // A GVL: CODESYS writes each as a named <globalVars> in the project's addData.
            ++globalLists_;
            const std::string name =
                globalLists_ == 1 ? std::string(fileStem) : fmt::format("{}_{}", fileStem, globalLists_);
            pugi::xml_node data = globals;
            const auto& g = static_cast<const ast::GlobalVarsDecl&>(*d);
            if (varList(data, g.block, name)) {
                data.last_child().prepend_attribute("name") = name.c_str();
            }
            break;
        }
        case ast::DeclKind::Interface: problem(d->span, "an INTERFACE is not exported yet"); break;
        case ast::DeclKind::Namespace:
        case ast::DeclKind::Using: problem(d->span, "NAMESPACE and USING have no PLCopen XML form"); break;
        }
    }
}

void Exporter::run(const PlcopenExportOptions& options) {
    pugi::xml_document doc;
    pugi::xml_node decl = doc.append_child(pugi::node_declaration);
    decl.append_attribute("version") = "1.0";
    decl.append_attribute("encoding") = "utf-8";
    pugi::xml_node root = doc.append_child("project");
    root.append_attribute("xmlns") = kNamespace;
    root.append_attribute("xmlns:xhtml") = "http://www.w3.org/1999/xhtml";
    root.append_attribute("xmlns:xsd") = "http://www.w3.org/2001/XMLSchema";
    pugi::xml_node file = root.append_child("fileHeader");
    file.append_attribute("companyName") = "takt";
    file.append_attribute("productName") = "takt";
    file.append_attribute("productVersion") = options.productVersion.c_str();
    file.append_attribute("creationDateTime") = options.creationDateTime.c_str();
    pugi::xml_node content = root.append_child("contentHeader");
    content.append_attribute("name") = options.projectName.c_str();
    pugi::xml_node coordinates = content.append_child("coordinateInfo");
    for (const char* language : {"fbd", "ld", "sfc"}) {
        pugi::xml_node scaling = coordinates.append_child(language).append_child("scaling");
        scaling.append_attribute("x") = 1;
        scaling.append_attribute("y") = 1;
    }
    pugi::xml_node types = root.append_child("types");
    pugi::xml_node dataTypes = types.append_child("dataTypes");
    pugi::xml_node pous = types.append_child("pous");
    pugi::xml_node configurations = root.append_child("instances").append_child("configurations");
    // The GVLs go into the project's addData; it is dropped again when there is none.
    pugi::xml_node addData = root.append_child("addData");
    pugi::xml_node globals = addData.append_child("data");
    globals.append_attribute("name") = kCodesysGlobalVars.data();
    globals.append_attribute("handleUnknown") = "implementation";

    for (const ast::CompilationUnit& unit : project_.units) {
        const SourceFile& source = project_.sources->file(unit.file);
        if (isPlcopenPath(source.path())) {
            problem(Span{unit.file, 0, 0}, fmt::format("{} is PLCopen XML already: the export writes ST sources; "
                                                       "that file is the exchange file itself",
                                                       source.path()));
            continue;
        }
        std::string stem = std::filesystem::path(source.path()).stem().string();
        if (stem.empty() || std::isdigit(static_cast<unsigned char>(stem[0])) != 0 ||
            !std::all_of(stem.begin(), stem.end(),
                         [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; })) {
            stem = "GVL";
        }
        declarations(unit.decls, dataTypes, pous, configurations, globals, stem);
    }
    if (!sawConfiguration_ && !programs_.empty() && options.cycleIntervalMs > 0) {
        implicitConfiguration(configurations, options);
    }
    if (!globals.first_child()) {
        root.remove_child(addData);
    }
    if (!out_.problems.empty()) {
        return;
    }
    std::ostringstream text;
    doc.save(text, "  ", pugi::format_default, pugi::encoding_utf8);
    out_.xml = text.str();
}

} // namespace plcopen

PlcopenExport exportPlcopen(const Project& project, const PlcopenExportOptions& options) {
    PlcopenExport out;
    plcopen::Exporter(project, out).run(options);
    return out;
}

} // namespace takt::compiler
