#pragma once
// The parts of the PLCopen XML writer (plcopen_export.h) shared by its files. pugixml builds and
// writes the document.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <pugixml.hpp>

#include "takt/compiler/ast.h"
#include "takt/compiler/plcopen_export.h"
#include "takt/compiler/token.h"
#include "translate.h"

namespace takt::compiler::plcopen {

// `text` without its leading blank lines and trailing white space.
[[nodiscard]] std::string trimBody(std::string text);

class Exporter {
public:
    Exporter(const Project& project, PlcopenExport& out) : project_(project), out_(out) {}

    // The whole document into out_.xml (nothing when a problem was found).
    void run(const PlcopenExportOptions& options);

    // export_decls.cpp: the TC6 element of a type under `holder` (`<type>`, `<baseType>`); a
    // STRUCT only where `inDataType` (the reader reads structs only as data types).
    bool type(pugi::xml_node holder, const ast::TypeSpec& spec, bool inDataType);
    // `<simpleValue>`, `<arrayValue>` or `<structValue>` of an initial value under `holder`.
    bool value(pugi::xml_node holder, const ast::Expr& expr);
    // One `<variable>` per name of `decl` under `list`.
    bool variable(pugi::xml_node list, const ast::VarDecl& decl);
    // `<inputVars>`, `<localVars>`, … with its qualifiers, under `parent`; `owner` names the POU
    // in messages.
    bool varList(pugi::xml_node parent, const ast::VarBlock& block, std::string_view owner);
    void dataType(pugi::xml_node dataTypes, const ast::TypeDecl& decl);

private:
    void problem(Span span, std::string message);
    // The source text of `span` on one line (newlines and tabs as spaces).
    [[nodiscard]] std::string oneLine(Span span) const;
    // export.cpp
    void pou(pugi::xml_node pous, const ast::PouDecl& pou);
    void configuration(pugi::xml_node configurations, const ast::ConfigurationDecl& config);
    [[nodiscard]] std::string bodyText(const ast::PouDecl& pou);
    // A VAR block the SFC lowering added (sfc.h), not one of the source.
    [[nodiscard]] bool isChartsOwn(const ast::VarBlock& block) const;
    void stBody(pugi::xml_node body, const std::string& text);
    // CODESYS's `<AccessModifiers>` of a METHOD's or PROPERTY's `access` (none for the default).
    static void accessModifiers(pugi::xml_node iface, ast::Access access);
    // A METHOD of the POU `owner` as CODESYS writes it, under its `addData`; false after a problem.
    bool method(pugi::xml_node addData, std::string_view owner, const ast::PouDecl& m);
    // export_property.cpp: a `<Property>` per PROPERTY of the POU `owner` from its accessors (in
    // source order, those of one property together); false after a problem.
    bool properties(pugi::xml_node addData, std::string_view owner, const std::vector<const ast::PouDecl*>& accessors);
    // The ST text of an accessor's body, between its declarations and its END_GET or END_SET.
    [[nodiscard]] std::string accessorBody(const ast::PouDecl& accessor);
    // export_sfc.cpp: the `<SFC>` of a POU with a chart; false after a problem.
    bool sfcBody(pugi::xml_node body, const ast::PouDecl& decl);
    void declarations(const std::vector<ast::DeclPtr>& decls, pugi::xml_node dataTypes, pugi::xml_node pous,
                      pugi::xml_node configurations, pugi::xml_node globals, std::string_view fileStem);

    void implicitConfiguration(pugi::xml_node configurations, const PlcopenExportOptions& options);

    const Project& project_;
    PlcopenExport& out_;
    std::size_t globalLists_ = 0;
    bool sawConfiguration_ = false;
    std::vector<std::string> programs_;  // the PROGRAMs written, in order
    std::map<FileId, LexResult> tokens_; // of the files whose accessors were written
};

} // namespace takt::compiler::plcopen
