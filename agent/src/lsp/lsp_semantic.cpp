// Semantic tokens: each identifier classified by what it names (lsp_resolve.h), so an editor can
// colour an FB instance, a parameter, a constant and an enumeration value apart, which a
// TextMate grammar cannot know.
#include "lsp/lsp_features.h"
#include "lsp/lsp_resolve.h"
#include "rpc/rpc_json.h"

namespace takt::agent::lsp {

namespace {

using compiler::Symbol;
using compiler::SymbolKind;

// Indices into kSemanticTokenTypes.
enum TokenType : std::uint32_t {
    kNamespaceToken,
    kTypeToken,
    kClassToken,
    kEnumToken,
    kInterfaceToken,
    kStructToken,
    kParameterToken,
    kVariableToken,
    kPropertyToken,
    kEnumMemberToken,
    kFunctionToken,
    kMethodToken,
};
constexpr std::uint32_t kDeclaration = 1;
constexpr std::uint32_t kReadonly = 2;
constexpr std::uint32_t kDefaultLibrary = 4;

std::uint32_t typeOfSymbol(const Symbol& s) {
    switch (s.kind) {
    case SymbolKind::Variable:
        return s.section == compiler::ast::VarSection::Input || s.section == compiler::ast::VarSection::Output ||
                       s.section == compiler::ast::VarSection::InOut
                   ? kParameterToken
                   : kVariableToken;
    case SymbolKind::Pou:
        return s.pouKind == compiler::ast::PouKind::Function ? kFunctionToken
               : s.pouKind == compiler::ast::PouKind::Method ? kMethodToken
                                                             : kClassToken;
    case SymbolKind::StandardFunction: return kFunctionToken;
    case SymbolKind::Interface: return kInterfaceToken;
    case SymbolKind::Namespace: return kNamespaceToken;
    case SymbolKind::EnumValue: return kEnumMemberToken;
    case SymbolKind::Type: {
        const compiler::Type* t = compiler::stripAlias(s.type);
        return t != nullptr && t->kind() == compiler::TypeKind::Enum     ? kEnumToken
               : t != nullptr && t->kind() == compiler::TypeKind::Struct ? kStructToken
                                                                         : kTypeToken;
    }
    default: return kVariableToken;
    }
}

} // namespace

std::string_view semanticTokensLegend() {
    return R"({"tokenTypes":["namespace","type","class","enum","interface","struct","parameter","variable",)"
           R"("property","enumMember","function","method"],"tokenModifiers":["declaration","readonly","defaultLibrary"]})";
}

std::string semanticTokens(const Analysis& a, compiler::FileId file) {
    const compiler::SourceFile& f = a.project.sources->file(file);
    const FileTokens tokens = tokensOf(f);
    rapidjson::StringBuffer buf;
    rpc::JsonWriter w(buf);
    w.StartObject();
    w.Key("data");
    w.StartArray();
    Position previous;
    for (std::size_t i = 0; i < tokens.tokens.size(); ++i) {
        const compiler::Token& t = tokens.tokens[i];
        if (t.kind != compiler::TokenKind::Identifier) {
            continue;
        }
        std::uint32_t type = 0;
        std::uint32_t modifiers = 0;
        if (const std::optional<Target> target = resolve(a.project, f, tokens, static_cast<int>(i)); target) {
            type = target->field != nullptr ? kPropertyToken : typeOfSymbol(*target->symbol);
            const bool library = target->decl.file == compiler::kStdlibFile ||
                                 (target->symbol != nullptr && target->symbol->kind == SymbolKind::StandardFunction);
            modifiers |= library ? kDefaultLibrary : 0;
            modifiers |= target->decl.file == file && target->decl.begin == t.begin ? kDeclaration : 0;
            modifiers |=
                target->symbol != nullptr && (target->symbol->constant || target->symbol->kind == SymbolKind::EnumValue)
                    ? kReadonly
                    : 0;
        } else if (a.project.model && a.project.model->types.elementary(f.text().substr(t.begin, t.end - t.begin))) {
            type = kTypeToken;
            modifiers = kDefaultLibrary;
        } else {
            continue;
        }
        const Position at = positionOf(f, t.begin);
        w.Uint(at.line - previous.line);
        w.Uint(at.line == previous.line ? at.character - previous.character : at.character);
        w.Uint(t.end - t.begin); // identifiers are ASCII: bytes are UTF-16 units
        w.Uint(type);
        w.Uint(modifiers);
        previous = at;
    }
    w.EndArray();
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

} // namespace takt::agent::lsp
