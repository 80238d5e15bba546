// PROPERTYs in `takt export plcopen` (export.h): CODESYS's vendor data, which takt's reader reads
// back (reader.cpp, translateProperty): in the POU's addData a `<data name=".../property">` with a
// `<Property name>` whose interface holds the type as `returnType`, and a `<GetAccessor>` and/or a
// `<SetAccessor>` in the order written, each with an interface of its own variables and its ST
// body.
#include <algorithm>

#include <fmt/format.h>

#include "export.h"
#include "takt/compiler/lexer.h"
#include "takt/compiler/names.h"

namespace takt::compiler::plcopen {

bool Exporter::properties(pugi::xml_node addData, std::string_view owner,
                          const std::vector<const ast::PouDecl*>& accessors) {
    pugi::xml_node property;
    Span current; // the name of the property being written
    for (const ast::PouDecl* a : accessors) {
        const std::string where = fmt::format("{}.{}", owner, a->name.name);
        if (a->isAbstract || a->isFinal || a->isOverride) {
            problem(a->propertySpan,
                    fmt::format("'{}': ABSTRACT, FINAL and OVERRIDE on a PROPERTY are not exported yet", where));
            return false;
        }
        const bool get = a->accessor == ast::Accessor::Get;
        // A SET's value is its first VAR_INPUT, which the parser declares from the property's type.
        const ast::TypeSpec* type = get ? a->returnType.get()
                                        : (a->varBlocks.empty() || a->varBlocks.front().vars.empty()
                                               ? nullptr
                                               : a->varBlocks.front().vars.front().type.get());
        if (type == nullptr) {
            problem(a->propertySpan, fmt::format("'{}': the PROPERTY's type is not written", where));
            return false;
        }
        if (!property || current.begin != a->propertySpan.begin || current.file != a->propertySpan.file) {
            current = a->propertySpan;
            pugi::xml_node data = addData.append_child("data");
            data.append_attribute("name") = kCodesysProperty.data();
            data.append_attribute("handleUnknown") = "implementation";
            property = data.append_child("Property");
            property.append_attribute("name") = a->name.name.c_str();
            pugi::xml_node iface = property.append_child("interface");
            if (!this->type(iface.append_child("returnType"), *type, false)) {
                return false;
            }
            accessModifiers(iface, a->propertyAccess);
        }
        pugi::xml_node accessor = property.append_child(get ? "GetAccessor" : "SetAccessor");
        pugi::xml_node iface = accessor.append_child("interface");
        for (std::size_t i = get ? 0 : 1; i < a->varBlocks.size(); ++i) {
            if (!varList(iface, a->varBlocks[i], where)) {
                return false;
            }
        }
        if (a->access != a->propertyAccess) { // a GET or SET narrowing the property's access
            accessModifiers(iface, a->access);
        }
        stBody(accessor.append_child("body"), accessorBody(*a));
    }
    return true;
}

std::string Exporter::accessorBody(const ast::PouDecl& accessor) {
    // The accessor's node spans its whole PROPERTY, so its own text is found among the property's
    // tokens: after the type, each GET or SET up to its END_GET or END_SET, in order.
    const SourceFile& file = project_.sources->file(accessor.span.file);
    auto cached = tokens_.find(accessor.span.file);
    if (cached == tokens_.end()) {
        DiagnosticSink ignored; // the file was checked already
        cached = tokens_.emplace(accessor.span.file, lex(file, ignored)).first;
    }
    const std::vector<Token>& tokens = cached->second.tokens;
    const std::string_view text = file.text();
    const bool get = accessor.accessor == ast::Accessor::Get;
    const TokenKind endKind = get ? TokenKind::EndGet : TokenKind::EndSet;
    const ast::TypeSpec* type = get ? accessor.returnType.get() : accessor.varBlocks.front().vars.front().type.get();
    std::size_t i = 0;
    while (i < tokens.size() && tokens[i].begin < type->span.end) {
        ++i;
    }
    for (; i < tokens.size() && tokens[i].begin < accessor.span.end; ++i) {
        const Token& t = tokens[i];
        if (t.kind != TokenKind::Identifier) {
            continue; // the property's `;`
        }
        const bool isGet = sameName(text.substr(t.begin, t.end - t.begin), "GET");
        const TokenKind closes = isGet ? TokenKind::EndGet : TokenKind::EndSet;
        std::size_t end = i + 1;
        while (end < tokens.size() && tokens[end].kind != closes && tokens[end].kind != TokenKind::EndOfFile) {
            ++end;
        }
        if (closes != endKind) {
            i = end; // the other accessor
            continue;
        }
        std::size_t head = i + 1; // after GET or SET, its access (written in the interface) and `;`
        while (head < end && (tokens[head].kind == TokenKind::Public || tokens[head].kind == TokenKind::Private ||
                              tokens[head].kind == TokenKind::Protected || tokens[head].kind == TokenKind::Internal)) {
            ++head;
        }
        std::uint32_t begin = tokens[head - 1].end;
        if (tokens[head].kind == TokenKind::Semicolon) {
            begin = tokens[head].end;
        }
        for (std::size_t b = get ? 0 : 1; b < accessor.varBlocks.size(); ++b) {
            begin = std::max(begin, accessor.varBlocks[b].span.end);
        }
        return trimBody(std::string(text.substr(begin, tokens[end].begin - begin)));
    }
    return {};
}

} // namespace takt::compiler::plcopen
