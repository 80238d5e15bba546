// The declarations of `takt export plcopen` (export.h): types, initial values and variable lists
// as TC6 2.01 elements. Each is written so that the reader (translate.cpp) reads back the ST it
// came from; what it could not read back is E0027 at the declaration.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "export.h"
#include "takt/compiler/names.h"

namespace takt::compiler::plcopen {

namespace {

// TC6 2.01's elementary type elements; the other elementary names of takt (LTIME, CHAR, …) are
// written as `<derived name="LTIME"/>`, which the reader and the editors take as the name.
constexpr std::array<std::string_view, 19> kTc6Elementary = {
    "BOOL", "BYTE",  "WORD",  "DWORD", "LWORD", "SINT", "INT",  "DINT", "LINT", "USINT",
    "UINT", "UDINT", "ULINT", "REAL",  "LREAL", "TIME", "DATE", "DT",   "TOD"};

constexpr std::array<std::string_view, 8> kUnsigned = {"USINT", "UINT", "UDINT", "ULINT",
                                                       "BYTE",  "WORD", "DWORD", "LWORD"};

// The TC6 element of an elementary type name (upper case), or empty.
std::string_view elementaryElement(std::string_view upper) {
    if (upper == "TIME_OF_DAY") {
        return "TOD";
    }
    if (upper == "DATE_AND_TIME") {
        return "DT";
    }
    const auto* it = std::find(kTc6Elementary.begin(), kTc6Elementary.end(), upper);
    return it == kTc6Elementary.end() ? std::string_view() : *it;
}

} // namespace

void Exporter::problem(Span span, std::string message) {
    Diagnostic d;
    d.code = DiagCode::PlcopenUnsupported;
    d.severity = Severity::Error;
    d.span = span;
    d.message = boundQuotedText(std::move(message));
    out_.problems.push_back(std::move(d));
}

std::string Exporter::oneLine(Span span) const {
    std::string s(project_.sources->text(span));
    std::replace_if(
        s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
    return s;
}

bool Exporter::type(pugi::xml_node holder, const ast::TypeSpec& spec, bool inDataType) {
    switch (spec.kind) {
    case ast::TypeSpecKind::Named: {
        const auto& named = static_cast<const ast::NamedTypeSpec&>(spec);
        if (named.name.parts.size() != 1) {
            problem(spec.span, fmt::format("the type '{}' is qualified with a namespace, which PLCopen XML has no "
                                           "place for",
                                           named.name.text()));
            return false;
        }
        const std::string upper = upperName(named.name.parts.front().name);
        if (upper == "STRING" || upper == "WSTRING") {
            holder.append_child(upper == "STRING" ? "string" : "wstring");
            return true;
        }
        if (const std::string_view element = elementaryElement(upper); !element.empty()) {
            holder.append_child(std::string(element).c_str());
            return true;
        }
        holder.append_child("derived").append_attribute("name") = named.name.parts.front().name.c_str();
        return true;
    }
    case ast::TypeSpecKind::String: {
        const auto& str = static_cast<const ast::StringTypeSpec&>(spec);
        pugi::xml_node node = holder.append_child(str.wide ? "wstring" : "string");
        if (str.length != nullptr) {
            if (str.length->kind != ast::ExprKind::Literal ||
                static_cast<const ast::LiteralExpr&>(*str.length).literalKind != ast::LiteralKind::Int) {
                problem(str.length->span, fmt::format("the STRING length '{}' is not a number; PLCopen XML writes "
                                                      "a string's length as one",
                                                      oneLine(str.length->span)));
                return false;
            }
            node.append_attribute("length") =
                std::to_string(static_cast<const ast::LiteralExpr&>(*str.length).intValue).c_str();
        }
        return true;
    }
    case ast::TypeSpecKind::Array: {
        const auto& array = static_cast<const ast::ArrayTypeSpec&>(spec);
        if (array.star) {
            problem(spec.span, "an ARRAY[*] (a VAR_IN_OUT of any length) has no PLCopen XML form");
            return false;
        }
        pugi::xml_node node = holder.append_child("array");
        for (const ast::Range& r : array.dimensions) {
            pugi::xml_node d = node.append_child("dimension");
            d.append_attribute("lower") = oneLine(r.lower->span).c_str();
            d.append_attribute("upper") = oneLine(r.upper->span).c_str();
        }
        return type(node.append_child("baseType"), *array.element, false);
    }
    case ast::TypeSpecKind::Ref: {
        const auto& ref = static_cast<const ast::RefTypeSpec&>(spec);
        if (ref.spelling != ast::RefSpelling::PointerTo) {
            problem(spec.span, "REF_TO and REFERENCE TO have no PLCopen XML form (POINTER TO has: <pointer>)");
            return false;
        }
        return type(holder.append_child("pointer").append_child("baseType"), *ref.target, false);
    }
    case ast::TypeSpecKind::Subrange: {
        const auto& sub = static_cast<const ast::SubrangeTypeSpec&>(spec);
        bool isUnsigned = false;
        if (sub.base->kind == ast::TypeSpecKind::Named) {
            const auto& base = static_cast<const ast::NamedTypeSpec&>(*sub.base);
            const std::string upper = upperName(base.name.text());
            isUnsigned = std::find(kUnsigned.begin(), kUnsigned.end(), upper) != kUnsigned.end();
        }
        pugi::xml_node node = holder.append_child(isUnsigned ? "subrangeUnsigned" : "subrangeSigned");
        pugi::xml_node range = node.append_child("range");
        range.append_attribute("lower") = oneLine(sub.range.lower->span).c_str();
        range.append_attribute("upper") = oneLine(sub.range.upper->span).c_str();
        return type(node.append_child("baseType"), *sub.base, false);
    }
    case ast::TypeSpecKind::Enum: {
        const auto& en = static_cast<const ast::EnumTypeSpec&>(spec);
        pugi::xml_node node = holder.append_child("enum");
        pugi::xml_node values = node.append_child("values");
        for (const ast::EnumValueDecl& v : en.values) {
            pugi::xml_node value = values.append_child("value");
            value.append_attribute("name") = v.name.name.c_str();
            if (v.value != nullptr) {
                value.append_attribute("value") = oneLine(v.value->span).c_str();
            }
        }
        return en.base == nullptr || type(node.append_child("baseType"), *en.base, false);
    }
    case ast::TypeSpecKind::Struct: {
        const auto& st = static_cast<const ast::StructTypeSpec&>(spec);
        if (!inDataType) {
            problem(spec.span, "a STRUCT written inside a variable's type: declare it as a TYPE, which PLCopen XML "
                               "writes as a <dataType>");
            return false;
        }
        if (st.isUnion || st.extends.has_value()) {
            problem(spec.span, st.isUnion ? "a UNION has no PLCopen XML form"
                                          : "a STRUCT EXTENDS has no PLCopen XML form the reader reads back");
            return false;
        }
        pugi::xml_node node = holder.append_child("struct");
        bool ok = true;
        for (const ast::VarDecl& field : st.fields) {
            ok = variable(node, field) && ok;
        }
        return ok;
    }
    }
    return false;
}

bool Exporter::value(pugi::xml_node holder, const ast::Expr& expr) {
    if (expr.kind == ast::ExprKind::ArrayInit) {
        pugi::xml_node node = holder.append_child("arrayValue");
        for (const ast::ArrayInitElement& e : static_cast<const ast::ArrayInitExpr&>(expr).elements) {
            if (e.value == nullptr) {
                problem(e.span, "an array initialiser element without a value ('3()') has no PLCopen XML form");
                return false;
            }
            pugi::xml_node v = node.append_child("value");
            if (e.repeat != nullptr) {
                v.append_attribute("repetitionValue") = oneLine(e.repeat->span).c_str();
            }
            if (!value(v, *e.value)) {
                return false;
            }
        }
        return true;
    }
    if (expr.kind == ast::ExprKind::StructInit) {
        pugi::xml_node node = holder.append_child("structValue");
        for (const ast::FieldInit& f : static_cast<const ast::StructInitExpr&>(expr).fields) {
            if (f.value == nullptr) {
                problem(f.field.span,
                        fmt::format("the member '{}' of a STRUCT initialiser has no value", f.field.name));
                return false;
            }
            pugi::xml_node v = node.append_child("value");
            v.append_attribute("member") = f.field.name.c_str();
            if (!value(v, *f.value)) {
                return false;
            }
        }
        return true;
    }
    holder.append_child("simpleValue").append_attribute("value") = oneLine(expr.span).c_str();
    return true;
}

bool Exporter::variable(pugi::xml_node list, const ast::VarDecl& decl) {
    if (decl.edge != ast::InputEdge::None) {
        problem(decl.edgeSpan, "R_EDGE and F_EDGE on an input have no PLCopen XML form");
        return false;
    }
    bool ok = true;
    for (const ast::Identifier& name : decl.names) {
        pugi::xml_node v = list.append_child("variable");
        v.append_attribute("name") = name.name.c_str();
        if (decl.address.has_value()) {
            v.append_attribute("address") = oneLine(decl.address->span).c_str();
        }
        ok = type(v.append_child("type"), *decl.type, false) && ok;
        if (decl.init != nullptr) {
            ok = value(v.append_child("initialValue"), *decl.init) && ok;
        }
        if (!ok) {
            return false;
        }
    }
    return ok;
}

bool Exporter::varList(pugi::xml_node parent, const ast::VarBlock& block, std::string_view owner) {
    const char* element = nullptr;
    switch (block.section) {
    case ast::VarSection::Var: element = "localVars"; break;
    case ast::VarSection::Temp: element = "tempVars"; break;
    case ast::VarSection::Input: element = "inputVars"; break;
    case ast::VarSection::Output: element = "outputVars"; break;
    case ast::VarSection::InOut: element = "inOutVars"; break;
    case ast::VarSection::Global: element = "globalVars"; break;
    case ast::VarSection::External: element = "externalVars"; break;
    case ast::VarSection::Access:
    case ast::VarSection::Config:
    case ast::VarSection::Static: break;
    }
    if (element == nullptr) {
        problem(block.span, fmt::format("{}: {} has no PLCopen XML form the reader reads back", owner,
                                        ast::sectionKeyword(block.section)));
        return false;
    }
    pugi::xml_node list = parent.append_child(element);
    if (block.constant) {
        list.append_attribute("constant") = true;
    }
    if (block.persistent) {
        list.append_attribute("persistent") = true;
    } else if (block.retain) {
        list.append_attribute("retain") = true;
    }
    if (block.nonRetain) {
        list.append_attribute("nonretain") = true;
    }
    bool ok = true;
    for (const ast::VarDecl& decl : block.vars) {
        ok = variable(list, decl) && ok;
    }
    return ok;
}

void Exporter::dataType(pugi::xml_node dataTypes, const ast::TypeDecl& decl) {
    pugi::xml_node node = dataTypes.append_child("dataType");
    node.append_attribute("name") = decl.name.name.c_str();
    if (!type(node.append_child("baseType"), *decl.spec, true)) {
        return;
    }
    if (decl.init != nullptr) {
        (void)value(node.append_child("initialValue"), *decl.init);
    }
    ++out_.dataTypes;
}

} // namespace takt::compiler::plcopen
