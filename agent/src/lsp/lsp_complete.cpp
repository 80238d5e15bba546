#include "lsp/lsp_complete.h"

#include <cctype>
#include <set>

#include <fmt/format.h>

#include "lsp/lsp_resolve.h"
#include "rpc/rpc_json.h"
#include "takt/compiler/names.h"

namespace takt::agent::lsp {

namespace {

using compiler::Symbol;
using compiler::SymbolKind;
using compiler::TokenKind;
using rpc::JsonWriter;

// LSP CompletionItemKind values.
enum CompletionKind : int {
    kMethodItem = 2,
    kFunctionItem = 3,
    kFieldItem = 5,
    kVariableItem = 6,
    kClassItem = 7,
    kInterfaceItem = 8,
    kModuleItem = 9,
    kEnumItem = 13,
    kKeywordItem = 14,
    kSnippetItem = 15,
    kEnumMemberItem = 20,
    kConstantItem = 21,
    kStructItem = 22,
};

int itemKind(const Symbol& s) {
    switch (s.kind) {
    case SymbolKind::Variable: return s.constant ? kConstantItem : kVariableItem;
    case SymbolKind::Pou:
        return s.pouKind == compiler::ast::PouKind::Method     ? kMethodItem
               : s.pouKind == compiler::ast::PouKind::Function ? kFunctionItem
               : s.pouKind == compiler::ast::PouKind::Program  ? kModuleItem
                                                               : kClassItem;
    case SymbolKind::StandardFunction: return kFunctionItem;
    case SymbolKind::Interface: return kInterfaceItem;
    case SymbolKind::Type: {
        const compiler::Type* t = compiler::stripAlias(s.type);
        return t != nullptr && t->kind() == compiler::TypeKind::Enum ? kEnumItem : kStructItem;
    }
    case SymbolKind::EnumValue: return kEnumMemberItem;
    case SymbolKind::Namespace: return kModuleItem;
    default: return kVariableItem;
    }
}

// "IN : BOOL, PT : TIME" for the inputs and in-outs of a POU; outputs after "=>".
std::string parameterList(const Symbol& pou) {
    std::string out;
    for (const Symbol* p : pou.params) {
        const bool output = p->section == compiler::ast::VarSection::Output;
        out += fmt::format("{}{}{} : {}", out.empty() ? "" : ", ", p->name, output ? " =>" : "",
                           p->type != nullptr ? p->type->name() : "?");
    }
    return out;
}

std::string detailOf(const Symbol& s) {
    if (s.kind == SymbolKind::Pou) {
        std::string d = fmt::format("{}({})", compiler::ast::pouKeyword(s.pouKind), parameterList(s));
        if (s.type != nullptr && s.type->kind() != compiler::TypeKind::Void &&
            (s.pouKind == compiler::ast::PouKind::Function || s.pouKind == compiler::ast::PouKind::Method)) {
            d += " : " + s.type->name();
        }
        return d;
    }
    if (s.kind == SymbolKind::StandardFunction) {
        return "standard function";
    }
    if (s.kind == SymbolKind::Variable) {
        return fmt::format("{} : {}", compiler::ast::sectionKeyword(s.section),
                           s.type != nullptr ? s.type->name() : "?");
    }
    return s.type != nullptr ? s.type->name() : std::string();
}

class Items {
public:
    explicit Items(JsonWriter& w) : w_(w) {}
    void add(std::string_view label, int kind, std::string_view detail, std::string_view snippet = {}) {
        if (!seen_.insert(compiler::upperName(label)).second) {
            return; // an inner declaration hides an outer one of the same name
        }
        w_.StartObject();
        w_.Key("label");
        rpc::writeString(w_, label);
        w_.Key("kind");
        w_.Int(kind);
        if (!detail.empty()) {
            w_.Key("detail");
            rpc::writeString(w_, detail);
        }
        if (!snippet.empty()) {
            w_.Key("insertText");
            rpc::writeString(w_, snippet);
            w_.Key("insertTextFormat");
            w_.Int(2);
        }
        w_.EndObject();
    }
    void add(const Symbol& s) {
        if (s.hidden) {
            return;
        }
        // A SET-only PROPERTY is named by its setter `P$set`: offer the property's name. Other
        // names with '$' are the compiler's own, which no source text can name.
        const std::string_view name = s.name;
        const std::string_view setter = compiler::ast::kSetterSuffix;
        if (name.size() > setter.size() && name.ends_with(setter)) {
            add(name.substr(0, name.size() - setter.size()), itemKind(s), detailOf(s));
        } else if (!compiler::isGeneratedName(name)) {
            add(name, itemKind(s), detailOf(s));
        }
    }

private:
    JsonWriter& w_;
    std::set<std::string> seen_;
};

// The statement snippets CODESYS's input assistant offers.
constexpr std::pair<std::string_view, std::string_view> kSnippets[] = {
    {"IF … END_IF", "IF ${1:condition} THEN\n\t$0\nEND_IF;"},
    {"IF … ELSE … END_IF", "IF ${1:condition} THEN\n\t$2\nELSE\n\t$0\nEND_IF;"},
    {"CASE … END_CASE", "CASE ${1:selector} OF\n\t${2:1}:\n\t\t$0\nEND_CASE;"},
    {"FOR … END_FOR", "FOR ${1:i} := ${2:1} TO ${3:10} DO\n\t$0\nEND_FOR;"},
    {"WHILE … END_WHILE", "WHILE ${1:condition} DO\n\t$0\nEND_WHILE;"},
    {"REPEAT … END_REPEAT", "REPEAT\n\t$0\nUNTIL ${1:condition}\nEND_REPEAT;"},
};

// The members of a value of `type` that the code of POU `from` (null: global code) may name
// after a `.`: as the compiler checks them, an FB's VAR_INPUT and VAR_OUTPUT (W1002 tolerates
// reading its VAR, which CODESYS's input assistant does not offer either), and the METHODs and
// PROPERTYs whose PRIVATE or PROTECTED does not shut `from` out.
void membersOfType(Items& items, const compiler::Type* type, const Symbol* from) {
    type = compiler::stripAlias(type);
    while (type != nullptr && type->kind() == compiler::TypeKind::Ref) {
        type = compiler::stripAlias(static_cast<const compiler::RefType*>(type)->target);
    }
    if (const auto* pou = dynamic_cast<const compiler::PouType*>(type); pou != nullptr) {
        for (const Symbol* s = pou->symbol; s != nullptr; s = s->base) {
            if (s->scope != nullptr) {
                for (const Symbol* m : s->scope->symbols()) {
                    const bool offered = m->kind == SymbolKind::Variable ? compiler::variableVisibleOutside(*m)
                                                                         : compiler::memberAccessible(*m, from);
                    if (offered) {
                        items.add(*m);
                    }
                }
            }
        }
    } else if (const auto* st = dynamic_cast<const compiler::StructType*>(type); st != nullptr) {
        for (const compiler::Field& f : st->fields) {
            items.add(f.name, kFieldItem, f.type != nullptr ? f.type->name() : "");
        }
    } else if (const auto* en = dynamic_cast<const compiler::EnumType*>(type); en != nullptr) {
        for (const compiler::EnumValue& v : en->values) {
            items.add(v.name, kEnumMemberItem, fmt::format("{} = {}", en->name(), v.value));
        }
    }
}

// A step of a chain being typed: the value so far, or the FUNCTION / METHOD a `(…)` would call.
struct ChainValue {
    const compiler::Type* type = nullptr;
    const Symbol* callable = nullptr;
};

ChainValue valueOf(const Symbol* s) {
    const bool function = s->kind == SymbolKind::Pou && (s->pouKind == compiler::ast::PouKind::Function ||
                                                         s->pouKind == compiler::ast::PouKind::Method);
    return function ? ChainValue{nullptr, s} : ChainValue{s->kind == SymbolKind::Variable ? s->type : nullptr, nullptr};
}

// The member `name` of a value of type `type` (through EXTENDS and REFERENCE TO).
std::optional<ChainValue> memberValue(const compiler::Type* type, std::string_view name) {
    type = compiler::stripAlias(type);
    while (type != nullptr && type->kind() == compiler::TypeKind::Ref) {
        type = compiler::stripAlias(static_cast<const compiler::RefType*>(type)->target);
    }
    if (const auto* pou = dynamic_cast<const compiler::PouType*>(type); pou != nullptr) {
        for (const Symbol* s = pou->symbol; s != nullptr; s = s->base) {
            if (const Symbol* m = s->scope != nullptr ? s->scope->findLocal(name) : nullptr; m != nullptr) {
                return valueOf(m);
            }
        }
    } else if (const auto* st = dynamic_cast<const compiler::StructType*>(type); st != nullptr) {
        if (const compiler::Field* f = st->field(name); f != nullptr) {
            return ChainValue{f->type, nullptr};
        }
    }
    return std::nullopt;
}

// The index of the token opening the bracket or parenthesis that token `close` closes, or -1.
int openerOf(const FileTokens& t, int close) {
    const TokenKind closeKind = t.tokens[static_cast<std::size_t>(close)].kind;
    const TokenKind openKind = closeKind == TokenKind::RBracket ? TokenKind::LBracket : TokenKind::LParen;
    int depth = 0;
    for (int i = close; i >= 0; --i) {
        const TokenKind k = t.tokens[static_cast<std::size_t>(i)].kind;
        depth += k == closeKind ? 1 : k == openKind ? -1 : 0;
        if (depth == 0) {
            return i;
        }
    }
    return -1;
}

// The type of the expression that ends at token `end`, just before a `.`: a chain of a name and
// `.member`, `[…]`, `(…)` and `^` (`arr[i].`, `f().`, `fb.inner.`, `p^.`), typed left to right
// through the semantic model. Null when it is not such a chain or names nothing known.
const compiler::Type* chainType(const compiler::Project& project, const compiler::SourceFile& file, const FileTokens& t,
                                int end) {
    int start = end;
    while (start >= 0) {
        const TokenKind k = t.tokens[static_cast<std::size_t>(start)].kind;
        if (k == TokenKind::RBracket || k == TokenKind::RParen) {
            start = openerOf(t, start) - 1;
        } else if (k == TokenKind::Caret) {
            --start;
        } else if (k == TokenKind::Identifier && start >= 2 &&
                   t.tokens[static_cast<std::size_t>(start - 1)].kind == TokenKind::Dot) {
            start -= 2;
        } else {
            break;
        }
    }
    if (start < 0 || t.tokens[static_cast<std::size_t>(start)].kind != TokenKind::Identifier) {
        return nullptr;
    }
    const std::optional<Target> first = resolve(project, file, t, start);
    if (!first) {
        return nullptr;
    }
    ChainValue v = first->field != nullptr ? ChainValue{first->field->type, nullptr} : valueOf(first->symbol);
    for (int i = start + 1; i <= end; ++i) {
        const compiler::Token& tok = t.tokens[static_cast<std::size_t>(i)];
        if (tok.kind == TokenKind::Dot && i + 1 <= end) {
            ++i;
            const compiler::Token& name = t.tokens[static_cast<std::size_t>(i)];
            const std::optional<ChainValue> m =
                memberValue(v.type, file.text().substr(name.begin, name.end - name.begin));
            if (!m) {
                return nullptr;
            }
            v = *m;
        } else if (tok.kind == TokenKind::LBracket) {
            const auto* array = dynamic_cast<const compiler::ArrayType*>(compiler::stripAlias(v.type));
            if (array == nullptr) {
                return nullptr;
            }
            v = ChainValue{array->element, nullptr};
            for (int depth = 0; i <= end; ++i) {
                const TokenKind k = t.tokens[static_cast<std::size_t>(i)].kind;
                depth += k == TokenKind::LBracket ? 1 : k == TokenKind::RBracket ? -1 : 0;
                if (depth == 0) {
                    break;
                }
            }
        } else if (tok.kind == TokenKind::LParen) {
            if (v.callable == nullptr) {
                return nullptr; // an FB instance's call has no value
            }
            v = ChainValue{v.callable->type, nullptr};
            for (int depth = 0; i <= end; ++i) {
                const TokenKind k = t.tokens[static_cast<std::size_t>(i)].kind;
                depth += k == TokenKind::LParen ? 1 : k == TokenKind::RParen ? -1 : 0;
                if (depth == 0) {
                    break;
                }
            }
        } else if (tok.kind == TokenKind::Caret) {
            const compiler::Type* ref = compiler::stripAlias(v.type);
            if (ref == nullptr || ref->kind() != compiler::TypeKind::Ref) {
                return nullptr;
            }
            v = ChainValue{static_cast<const compiler::RefType*>(ref)->target, nullptr};
        } else {
            return nullptr;
        }
    }
    return v.type;
}

void members(Items& items, const Target& object, const Symbol* from) {
    if (object.symbol != nullptr && object.symbol->kind == SymbolKind::Namespace && object.symbol->scope != nullptr) {
        for (const Symbol* s : object.symbol->scope->symbols()) {
            items.add(*s);
        }
        return;
    }
    membersOfType(items, object.field != nullptr ? object.field->type : object.symbol->type, from);
}

std::string finish(rapidjson::StringBuffer& buf) {
    return {buf.GetString(), buf.GetSize()};
}

} // namespace

std::string completion(const Analysis& a, compiler::FileId file, std::uint32_t offset) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartArray();
    Items items(w);
    const compiler::SourceFile& f = a.project.sources->file(file);
    const FileTokens tokens = tokensOf(f);
    // The token the cursor is in or after: a name being typed, or the `.` just typed.
    int last = -1;
    for (std::size_t i = 0; i < tokens.tokens.size() && tokens.tokens[i].kind != TokenKind::EndOfFile; ++i) {
        if (tokens.tokens[i].begin >= offset) {
            break;
        }
        last = static_cast<int>(i);
    }
    int dot = -1;
    if (last >= 0 && tokens.tokens[last].kind == TokenKind::Dot) {
        dot = last;
    } else if (last >= 1 && tokens.tokens[last].kind == TokenKind::Identifier &&
               tokens.tokens[last - 1].kind == TokenKind::Dot) {
        dot = last - 1;
    }
    if (a.project.model && dot >= 1) {
        const Symbol* from = scopeAt(*a.project.model, file, offset)->owner();
        const TokenKind before = tokens.tokens[static_cast<std::size_t>(dot - 1)].kind;
        const std::optional<Target> object =
            before == TokenKind::Identifier ? resolve(a.project, f, tokens, dot - 1) : std::nullopt;
        if (object) {
            members(items, *object, from);
        } else if (const compiler::Type* type = chainType(a.project, f, tokens, dot - 1); type != nullptr) {
            membersOfType(items, type, from);
        }
    } else if (a.project.model) {
        const compiler::SemanticModel& model = *a.project.model;
        for (const compiler::Scope* s = scopeAt(model, file, offset); s != nullptr; s = s->parent()) {
            for (const Symbol* sym : s->symbols()) {
                items.add(*sym);
            }
        }
        for (const Symbol* v : model.enumValues) {
            items.add(*v);
        }
        for (std::size_t k = 0; k < static_cast<std::size_t>(TokenKind::Count_); ++k) {
            const auto kind = static_cast<TokenKind>(k);
            if (compiler::isKeyword(kind)) {
                items.add(compiler::tokenSpelling(kind), kKeywordItem, "");
            }
        }
        for (const auto& [label, body] : kSnippets) {
            items.add(label, kSnippetItem, "", body);
        }
    }
    w.EndArray();
    return finish(buf);
}

std::string signatureHelp(const Analysis& a, compiler::FileId file, std::uint32_t offset) {
    const compiler::SourceFile& f = a.project.sources->file(file);
    const FileTokens tokens = tokensOf(f);
    // Back from the cursor to the `(` that is still open, counting the commas at its depth.
    int depth = 0;
    std::uint32_t commas = 0;
    int open = -1;
    int lastFormal = -1; // `name :=` / `name =>` of the argument the cursor is in
    for (int i = static_cast<int>(tokens.tokens.size()) - 1; i >= 0; --i) {
        const compiler::Token& t = tokens.tokens[static_cast<std::size_t>(i)];
        if (t.begin >= offset) {
            continue;
        }
        if (t.kind == TokenKind::RParen) {
            ++depth;
        } else if (t.kind == TokenKind::LParen) {
            if (depth == 0) {
                open = i;
                break;
            }
            --depth;
        } else if (t.kind == TokenKind::Semicolon) {
            break;
        } else if (depth == 0 && t.kind == TokenKind::Comma) {
            ++commas;
        } else if (depth == 0 && commas == 0 && lastFormal < 0 &&
                   (t.kind == TokenKind::Assign || t.kind == TokenKind::Arrow) && i >= 1 &&
                   tokens.tokens[i - 1].kind == TokenKind::Identifier) {
            lastFormal = i - 1;
        }
    }
    if (open < 1 || tokens.tokens[open - 1].kind != TokenKind::Identifier) {
        return "null";
    }
    std::optional<Target> callee = resolve(a.project, f, tokens, open - 1);
    if (!callee || callee->symbol == nullptr) {
        return "null";
    }
    // Each signature as one line and its parameters' ranges in it, the standard functions'
    // overloads one each (with the generic families they take), else the POU's parameters.
    struct Param {
        std::string name;
        std::string text;
    };
    struct Signature {
        std::vector<Param> params;
        bool extensible = false;
        std::string name;
        std::string result;
    };
    std::vector<Signature> sigs;
    const Symbol* pou = callee->symbol;
    if (pou->kind == SymbolKind::StandardFunction) {
        for (const compiler::StandardSignatureInfo& info : compiler::standardSignaturesOf(pou->name)) {
            Signature sig{{}, info.extensible, info.name, info.result};
            for (const compiler::StandardParameterInfo& p : info.params) {
                sig.params.push_back({p.name, fmt::format("{}{} {}", p.name, p.output ? " =>" : " :", p.type)});
            }
            sigs.push_back(std::move(sig));
        }
    } else {
        // An FB instance: its type's POU.
        if (pou->kind == SymbolKind::Variable) {
            const auto* t = dynamic_cast<const compiler::PouType*>(compiler::stripAlias(pou->type));
            pou = t != nullptr ? t->symbol : nullptr;
        }
        if (pou == nullptr || pou->kind != SymbolKind::Pou) {
            return "null";
        }
        Signature sig{{}, false, pou->name, {}};
        for (const Symbol* p : pou->params) {
            sig.params.push_back({p->name, fmt::format("{}{} {}", p->name,
                                                       p->section == compiler::ast::VarSection::Output ? " =>" : " :",
                                                       p->type != nullptr ? p->type->name() : "?")});
        }
        if (pou->type != nullptr && pou->type->kind() != compiler::TypeKind::Void &&
            (pou->pouKind == compiler::ast::PouKind::Function || pou->pouKind == compiler::ast::PouKind::Method)) {
            sig.result = pou->type->name();
        }
        sigs.push_back(std::move(sig));
    }
    if (sigs.empty()) {
        return "null";
    }
    const std::string formal =
        lastFormal >= 0
            ? compiler::upperName(f.text().substr(tokens.tokens[static_cast<std::size_t>(lastFormal)].begin,
                                                  tokens.tokens[static_cast<std::size_t>(lastFormal)].end -
                                                      tokens.tokens[static_cast<std::size_t>(lastFormal)].begin))
            : std::string();
    // The argument the cursor is in: by its formal name, else by position (an extensible
    // function's last parameter takes the rest).
    const auto activeIn = [&](const Signature& sig) -> std::optional<std::uint32_t> {
        for (std::size_t i = 0; i < sig.params.size(); ++i) {
            if (!formal.empty() && compiler::upperName(sig.params[i].name) == formal) {
                return static_cast<std::uint32_t>(i);
            }
        }
        if (commas < sig.params.size()) {
            return commas;
        }
        return sig.extensible && !sig.params.empty() ? std::optional(static_cast<std::uint32_t>(sig.params.size() - 1))
                                                     : std::nullopt;
    };
    std::uint32_t activeSignature = 0;
    for (std::size_t k = 0; k < sigs.size(); ++k) {
        if (activeIn(sigs[k])) {
            activeSignature = static_cast<std::uint32_t>(k);
            break;
        }
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("signatures");
    w.StartArray();
    for (const Signature& sig : sigs) {
        std::string label = sig.name + "(";
        w.StartObject();
        std::vector<std::pair<std::size_t, std::size_t>> ranges;
        for (const Param& p : sig.params) {
            label += ranges.empty() ? "" : ", ";
            ranges.emplace_back(label.size(), label.size() + p.text.size());
            label += p.text;
        }
        label += sig.extensible ? ", …)" : ")";
        label += sig.result.empty() ? "" : " : " + sig.result;
        w.Key("label");
        rpc::writeString(w, label);
        w.Key("parameters");
        w.StartArray();
        for (const auto& [from, to] : ranges) {
            w.StartObject();
            w.Key("label");
            w.StartArray();
            w.Uint64(from); // UTF-16 offsets: labels are ASCII identifiers and type names
            w.Uint64(to);
            w.EndArray();
            w.EndObject();
        }
        w.EndArray();
        w.Key("activeParameter");
        w.Uint(activeIn(sig).value_or(static_cast<std::uint32_t>(sig.params.size())));
        w.EndObject();
    }
    w.EndArray();
    w.Key("activeSignature");
    w.Uint(activeSignature);
    w.Key("activeParameter");
    w.Uint(activeIn(sigs[activeSignature]).value_or(commas));
    w.EndObject();
    return finish(buf);
}

RenameResult rename(const Analysis& a, compiler::FileId file, std::uint32_t offset, std::string_view newName) {
    RenameResult r;
    const bool identifier =
        !newName.empty() && (std::isalpha(static_cast<unsigned char>(newName[0])) != 0 || newName[0] == '_') &&
        newName.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ==
            std::string_view::npos;
    if (compiler::TokenKind kw{}; !identifier || compiler::keywordKind(newName, kw)) {
        r.error = fmt::format("'{}' is not a name ST allows (an identifier that is not a keyword)", newName);
        return r;
    }
    const compiler::SourceFile& f = a.project.sources->file(file);
    const FileTokens tokens = tokensOf(f);
    const std::optional<Target> target = resolve(a.project, f, tokens, tokenAt(tokens, offset));
    if (!target || target->decl.file >= a.files.size()) {
        r.error = "nothing to rename here (only names declared in the project can be renamed)";
        return r;
    }
    // A clash: the new name is declared already where the target is, or visible from there.
    if (target->symbol != nullptr && a.project.model) {
        const compiler::Scope* scope = target->symbol->declScope != nullptr
                                           ? target->symbol->declScope
                                           : scopeAt(*a.project.model, target->decl.file, target->decl.begin);
        for (const compiler::Scope* s = scope; s != nullptr; s = s->parent()) {
            if (const Symbol* other = s->findLocal(newName); other != nullptr && other != target->symbol) {
                r.error = fmt::format("'{}' is already declared ({}), renaming would change what names refer to",
                                      newName, other->owner != nullptr ? "in " + other->owner->name : "globally");
                return r;
            }
        }
    } else if (target->owner != nullptr && target->owner->field(newName) != nullptr) {
        r.error = fmt::format("'{}' is already a field of {}", newName, target->owner->name());
        return r;
    }
    const compiler::Token& at = tokens.tokens[static_cast<std::size_t>(tokenAt(tokens, offset))];
    const std::string name = compiler::upperName(f.text().substr(at.begin, at.end - at.begin));
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("changes");
    w.StartObject();
    for (compiler::FileId id = 0; id < a.files.size(); ++id) {
        const compiler::SourceFile& sf = a.project.sources->file(id);
        const FileTokens ft = tokensOf(sf);
        bool any = false;
        for (std::size_t i = 0; i < ft.tokens.size(); ++i) {
            const compiler::Token& t = ft.tokens[i];
            if (t.kind != TokenKind::Identifier ||
                compiler::upperName(sf.text().substr(t.begin, t.end - t.begin)) != name) {
                continue;
            }
            const std::optional<Target> here = resolve(a.project, sf, ft, static_cast<int>(i));
            if (!here || !here->same(*target)) {
                continue;
            }
            if (!any) {
                w.Key(uriFromPath(a.pathOf(id)).c_str());
                w.StartArray();
                any = true;
            }
            w.StartObject();
            w.Key("range");
            w.StartObject();
            const Position from = positionOf(sf, t.begin);
            const Position to = positionOf(sf, t.end);
            w.Key("start");
            w.StartObject();
            w.Key("line");
            w.Uint(from.line);
            w.Key("character");
            w.Uint(from.character);
            w.EndObject();
            w.Key("end");
            w.StartObject();
            w.Key("line");
            w.Uint(to.line);
            w.Key("character");
            w.Uint(to.character);
            w.EndObject();
            w.EndObject();
            w.Key("newText");
            rpc::writeString(w, newName);
            w.EndObject();
        }
        if (any) {
            w.EndArray();
        }
    }
    w.EndObject();
    w.EndObject();
    r.ok = true;
    r.json = finish(buf);
    return r;
}

} // namespace takt::agent::lsp
