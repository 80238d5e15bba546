#include "lsp/lsp_features.h"

#include <fmt/format.h>

#include "lsp/lsp_resolve.h"
#include "rpc/rpc_json.h"
#include "takt/common/text.h"
#include "takt/compiler/formatter.h"
#include "takt/compiler/lexer.h"
#include "takt/compiler/names.h"

namespace takt::agent::lsp {

namespace {

using compiler::Symbol;
using compiler::SymbolKind;
using rpc::JsonWriter;

// LSP SymbolKind values.
enum LspSymbolKind : int {
    kModule = 2,
    kNamespace = 3,
    kClass = 5,
    kMethod = 6,
    kField = 8,
    kEnum = 10,
    kInterface = 11,
    kFunction = 12,
    kVariable = 13,
    kConstant = 14,
    kEnumMember = 22,
    kStruct = 23,
    kTypeParameter = 26,
};

std::string finish(rapidjson::StringBuffer& buf) {
    return {buf.GetString(), buf.GetSize()};
}

void writePosition(JsonWriter& w, Position p) {
    w.StartObject();
    w.Key("line");
    w.Uint(p.line);
    w.Key("character");
    w.Uint(p.character);
    w.EndObject();
}

void writeRange(JsonWriter& w, Position from, Position to) {
    w.StartObject();
    w.Key("start");
    writePosition(w, from);
    w.Key("end");
    writePosition(w, to);
    w.EndObject();
}

void writeSpanRange(JsonWriter& w, const compiler::SourceFile& f, const compiler::Span& s) {
    writeRange(w, positionOf(f, s.begin), positionOf(f, s.end));
}

// False for spans outside the project's files (the standard library's prelude).
bool inProject(const Analysis& a, const compiler::Span& s) {
    return s.valid() && s.file < a.files.size();
}

void writeLocation(JsonWriter& w, const Analysis& a, const compiler::Span& s) {
    w.StartObject();
    w.Key("uri");
    rpc::writeString(w, uriFromPath(a.pathOf(s.file)));
    w.Key("range");
    writeSpanRange(w, a.project.sources->file(s.file), s);
    w.EndObject();
}

int lspKind(const Symbol& s) {
    switch (s.kind) {
    case SymbolKind::Variable: return s.constant ? kConstant : kVariable;
    case SymbolKind::Pou:
        switch (s.pouKind) {
        case compiler::ast::PouKind::Function: return kFunction;
        case compiler::ast::PouKind::Method: return kMethod;
        case compiler::ast::PouKind::FunctionBlock:
        case compiler::ast::PouKind::TestFunctionBlock: return kClass;
        default: return kModule;
        }
    case SymbolKind::Interface: return kInterface;
    case SymbolKind::Type: {
        const compiler::Type* t = compiler::stripAlias(s.type);
        return t != nullptr && t->kind() == compiler::TypeKind::Struct ? kStruct
               : t != nullptr && t->kind() == compiler::TypeKind::Enum ? kEnum
                                                                       : kTypeParameter;
    }
    case SymbolKind::EnumValue: return kEnumMember;
    case SymbolKind::Namespace: return kNamespace;
    default: return kVariable;
    }
}

// The range of values a type holds, as IEC writes it, for hover.
std::string valueRange(const compiler::Type* type) {
    type = compiler::stripAlias(type);
    if (type == nullptr) {
        return {};
    }
    if (const auto* sub = dynamic_cast<const compiler::SubrangeType*>(type); sub != nullptr) {
        return fmt::format("{}..{}", sub->lower, sub->upper);
    }
    if (const auto* en = dynamic_cast<const compiler::EnumType*>(type); en != nullptr) {
        std::string out;
        for (const compiler::EnumValue& v : en->values) {
            out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", v.name, v.value);
        }
        return out;
    }
    if (type->kind() == compiler::TypeKind::Bool) {
        return "FALSE..TRUE";
    }
    const std::uint32_t bits = compiler::bitWidth(type);
    if (bits == 0 || bits > 64) {
        return {};
    }
    if (compiler::isSignedInt(type)) {
        const std::int64_t hi = bits == 64 ? INT64_MAX : (std::int64_t{1} << (bits - 1)) - 1;
        return fmt::format("{}..{}", -hi - 1, hi);
    }
    if (compiler::isUnsignedInt(type) || compiler::isBitString(type)) {
        const std::uint64_t hi = bits == 64 ? UINT64_MAX : (std::uint64_t{1} << bits) - 1;
        return fmt::format("0..{}", hi);
    }
    return {};
}

// The comment documenting a declaration, as CODESYS shows it: the comment lines right above
// it, else a comment after it on its own line.
std::string docComment(const compiler::SourceFile& f, const compiler::Span& decl) {
    const compiler::LineCol lc = f.lineCol(decl.begin);
    const auto strip = [](std::string_view line) -> std::string_view {
        line = common::trim(line, " \t\r");
        if (line.starts_with("//")) {
            return common::trim(line.substr(2), " \t\r");
        }
        if (line.starts_with("(*") && line.ends_with("*)")) {
            return common::trim(line.substr(2, line.size() - 4), " \t\r");
        }
        return {};
    };
    std::vector<std::string_view> above;
    for (std::uint32_t line = lc.line; line > 1; --line) {
        const std::string_view text = common::trim(f.lineText(line - 1), " \t\r");
        if (!text.starts_with("//") && !(text.starts_with("(*") && text.ends_with("*)"))) {
            break;
        }
        above.insert(above.begin(), strip(text));
    }
    std::string out;
    for (const std::string_view l : above) {
        out += std::string(l) + "\n";
    }
    if (out.empty()) {
        const std::string_view rest =
            f.lineText(lc.line).substr(std::min<std::size_t>(lc.column - 1, f.lineText(lc.line).size()));
        for (const std::string_view open : {std::string_view("//"), std::string_view("(*")}) {
            if (const std::size_t at = rest.find(open); at != std::string_view::npos) {
                out = std::string(strip(rest.substr(at)));
                break;
            }
        }
    }
    return std::string(common::trim(out, " \t\r"));
}

std::string declarationText(const Analysis& a, const Target& t) {
    if (t.field != nullptr) {
        return fmt::format("{} : {}  (field of {})", t.field->name,
                           t.field->type != nullptr ? t.field->type->name() : "?", t.owner->name());
    }
    const Symbol& s = *t.symbol;
    const std::string type = s.type != nullptr ? s.type->name() : std::string();
    switch (s.kind) {
    case SymbolKind::Variable: {
        std::string out = fmt::format("{}{} {} : {}", compiler::ast::sectionKeyword(s.section),
                                      s.constant ? " CONSTANT" : "", s.name, type);
        if (s.address) {
            out += " AT " + s.address->text();
        }
        if (s.init != nullptr && inProject(a, s.init->span)) {
            out += " := " + std::string(a.project.sources->text(s.init->span));
        }
        return out;
    }
    case SymbolKind::Pou: {
        std::string out = fmt::format("{} {}", compiler::ast::pouKeyword(s.pouKind), s.name);
        if (s.pouKind == compiler::ast::PouKind::Function || s.pouKind == compiler::ast::PouKind::Method) {
            if (s.type != nullptr && s.type->kind() != compiler::TypeKind::Void) {
                out += " : " + type;
            }
        }
        for (const Symbol* p : s.params) {
            out += fmt::format("\n    {} {} : {}", compiler::ast::sectionKeyword(p->section), p->name,
                               p->type != nullptr ? p->type->name() : "?");
        }
        return out;
    }
    case SymbolKind::Type: {
        const compiler::Type* base = compiler::stripAlias(s.type);
        std::string out = fmt::format("TYPE {}", s.name);
        if (const auto* st = dynamic_cast<const compiler::StructType*>(base); st != nullptr) {
            out += " : STRUCT";
            for (const compiler::Field& f : st->fields) {
                out += fmt::format("\n    {} : {}", f.name, f.type != nullptr ? f.type->name() : "?");
            }
        } else if (base != nullptr && base != s.type) {
            out += " : " + base->name();
        }
        return out;
    }
    case SymbolKind::EnumValue: return fmt::format("{}#{} = {}", type, s.name, s.enumValue);
    case SymbolKind::Interface: return "INTERFACE " + s.name;
    case SymbolKind::Namespace: return "NAMESPACE " + s.name;
    case SymbolKind::StandardFunction: return s.name + "  (standard function)";
    default: return s.name + (type.empty() ? "" : " : " + type);
    }
}

std::optional<Target> targetAt(const Analysis& a, compiler::FileId file, std::uint32_t offset) {
    const compiler::SourceFile& f = a.project.sources->file(file);
    const FileTokens tokens = tokensOf(f);
    return resolve(a.project, f, tokens, tokenAt(tokens, offset));
}

} // namespace

std::string diagnosticsParams(const Analysis& a, compiler::FileId file, std::optional<std::int64_t> version) {
    const compiler::SourceFile& f = a.project.sources->file(file);
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("uri");
    rpc::writeString(w, uriFromPath(a.pathOf(file)));
    if (version) {
        w.Key("version");
        w.Int64(*version);
    }
    w.Key("diagnostics");
    w.StartArray();
    for (const compiler::Diagnostic& d : a.project.diagnostics) {
        if (d.span.file != file) {
            continue;
        }
        const compiler::DiagInfo& info = compiler::diagInfo(d.code);
        w.StartObject();
        w.Key("range");
        writeSpanRange(w, f, d.span);
        w.Key("severity");
        w.Int(d.severity == compiler::Severity::Error ? 1 : d.severity == compiler::Severity::Warning ? 2 : 3);
        w.Key("code");
        rpc::writeString(w, info.code);
        w.Key("source");
        w.String("takt");
        w.Key("message");
        rpc::writeString(w, d.message);
        // `takt explain CODE`: the client shows it on demand (hover over the code in VS Code's
        // problem list reads data only through extensions, so the message stays short).
        w.Key("data");
        w.StartObject();
        w.Key("explanation");
        rpc::writeString(w, info.explanation);
        w.EndObject();
        if (!d.related.empty()) {
            w.Key("relatedInformation");
            w.StartArray();
            for (const compiler::RelatedLocation& r : d.related) {
                if (!inProject(a, r.span)) {
                    continue;
                }
                w.StartObject();
                w.Key("location");
                writeLocation(w, a, r.span);
                w.Key("message");
                rpc::writeString(w, r.message);
                w.EndObject();
            }
            w.EndArray();
        }
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return finish(buf);
}

std::string emptyDiagnosticsParams(const std::filesystem::path& path) {
    return fmt::format(R"({{"uri":{},"diagnostics":[]}})", rpc::quoted(uriFromPath(path)));
}

std::string configDiagnosticsParams(const Analysis& a) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("uri");
    rpc::writeString(w, uriFromPath(a.project.directory / "runtime.toml"));
    w.Key("diagnostics");
    w.StartArray();
    for (const compiler::ConfigError& e : a.project.configErrors) {
        const Position p{e.line > 0 ? e.line - 1 : 0, e.column > 0 ? e.column - 1 : 0};
        w.StartObject();
        w.Key("range");
        writeRange(w, p, Position{p.line, p.character + 1});
        w.Key("severity");
        w.Int(1);
        w.Key("source");
        w.String("takt");
        w.Key("message");
        rpc::writeString(w, e.key.empty() ? e.message : e.key + ": " + e.message);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return finish(buf);
}

std::optional<std::string> formattingEdits(std::string_view path, const std::string& text,
                                           std::optional<std::pair<std::uint32_t, std::uint32_t>> lines) {
    const compiler::SourceFile file(0, std::string(path), text);
    compiler::DiagnosticSink sink;
    const compiler::FormatResult r = compiler::formatSource(file, sink);
    if (!r.ok) {
        return std::nullopt;
    }
    const auto split = [](std::string_view s) {
        std::vector<std::string_view> out;
        while (!s.empty()) {
            const std::size_t nl = s.find('\n');
            out.push_back(s.substr(0, nl == std::string_view::npos ? s.size() : nl + 1));
            s.remove_prefix(out.back().size());
        }
        return out;
    };
    const std::vector<std::string_view> before = split(text);
    const std::vector<std::string_view> after = split(r.text);
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartArray();
    const auto edit = [&](std::size_t fromOffset, std::size_t toOffset, std::string_view newText) {
        w.StartObject();
        w.Key("range");
        writeRange(w, positionOf(text, fromOffset), positionOf(text, toOffset));
        w.Key("newText");
        rpc::writeString(w, newText);
        w.EndObject();
    };
    if (lines && before.size() == after.size()) {
        // Same line structure: the lines of the range, each on its own.
        std::size_t offset = 0;
        for (std::uint32_t i = 0; i < before.size(); ++i) {
            if (i >= lines->first && i <= lines->second && before[i] != after[i]) {
                edit(offset, offset + before[i].size(), after[i]);
            }
            offset += before[i].size();
        }
    } else {
        // One edit over the lines that differ (common first and last lines kept): the cursor and
        // the editor's undo history see only what the layout changed.
        std::size_t head = 0;
        while (head < before.size() && head < after.size() && before[head] == after[head]) {
            ++head;
        }
        std::size_t tail = 0;
        while (tail < before.size() - head && tail < after.size() - head &&
               before[before.size() - 1 - tail] == after[after.size() - 1 - tail]) {
            ++tail;
        }
        std::size_t from = 0;
        for (std::size_t i = 0; i < head; ++i) {
            from += before[i].size();
        }
        std::size_t to = text.size();
        for (std::size_t i = 0; i < tail; ++i) {
            to -= before[before.size() - 1 - i].size();
        }
        std::string replacement;
        for (std::size_t i = head; i < after.size() - tail; ++i) {
            replacement += after[i];
        }
        const bool touches = !lines || (head <= lines->second && before.size() - tail >= lines->first);
        if ((from != to || !replacement.empty()) && touches) {
            edit(from, to, replacement);
        }
    }
    w.EndArray();
    return finish(buf);
}

std::string hover(const Analysis& a, compiler::FileId file, std::uint32_t offset) {
    const std::optional<Target> t = targetAt(a, file, offset);
    if (!t) {
        return "null";
    }
    std::string md = "```iecst\n" + declarationText(a, *t) + "\n```";
    if (t->symbol != nullptr && t->symbol->owner != nullptr &&
        (t->symbol->kind == SymbolKind::Variable || t->symbol->kind == SymbolKind::Pou)) {
        md += "\n\nDeclared in `" + t->symbol->owner->name + "`";
    }
    if (inProject(a, t->decl)) {
        const compiler::SourceFile& f = a.project.sources->file(t->decl.file);
        const compiler::LineCol lc = f.lineCol(t->decl.begin);
        md += fmt::format("{}{}:{}", md.ends_with('`') ? " at " : "\n\nDeclared at ", f.path(), lc.line);
        if (const std::string doc = docComment(f, t->decl); !doc.empty()) {
            md += "\n\n" + doc;
        }
    }
    const compiler::Type* type = t->field != nullptr ? t->field->type
                                 : t->symbol->kind == SymbolKind::Variable || t->symbol->kind == SymbolKind::Type
                                     ? t->symbol->type
                                     : nullptr;
    if (const std::string range = valueRange(type); !range.empty()) {
        md += "\n\nRange: `" + range + "`";
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("contents");
    w.StartObject();
    w.Key("kind");
    w.String("markdown");
    w.Key("value");
    rpc::writeString(w, md);
    w.EndObject();
    w.EndObject();
    return finish(buf);
}

std::string definition(const Analysis& a, compiler::FileId file, std::uint32_t offset) {
    const std::optional<Target> t = targetAt(a, file, offset);
    if (!t || !inProject(a, t->decl)) {
        return "null";
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    writeLocation(w, a, t->decl);
    return finish(buf);
}

std::string references(const Analysis& a, compiler::FileId file, std::uint32_t offset, bool includeDeclaration) {
    const std::optional<Target> t = targetAt(a, file, offset);
    if (!t) {
        return "null";
    }
    const compiler::SourceFile& own = a.project.sources->file(file);
    const FileTokens here = tokensOf(own);
    const int at = tokenAt(here, offset);
    const std::string name =
        compiler::upperName(own.text().substr(here.tokens[at].begin, here.tokens[at].end - here.tokens[at].begin));
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartArray();
    for (compiler::FileId id = 0; id < a.files.size(); ++id) {
        const compiler::SourceFile& f = a.project.sources->file(id);
        const FileTokens tokens = tokensOf(f);
        for (std::size_t i = 0; i < tokens.tokens.size(); ++i) {
            const compiler::Token& tok = tokens.tokens[i];
            if (tok.kind != compiler::TokenKind::Identifier ||
                compiler::upperName(f.text().substr(tok.begin, tok.end - tok.begin)) != name) {
                continue;
            }
            const std::optional<Target> r = resolve(a.project, f, tokens, static_cast<int>(i));
            if (!r || !r->same(*t)) {
                continue;
            }
            const bool isDecl = id == t->decl.file && tok.begin == t->decl.begin;
            if (isDecl && !includeDeclaration) {
                continue;
            }
            writeLocation(w, a, compiler::Span{id, tok.begin, tok.end});
        }
    }
    w.EndArray();
    return finish(buf);
}

namespace {

void writeSymbol(JsonWriter& w, const compiler::SourceFile& f, std::string_view name, int kind, std::string_view detail,
                 const compiler::Span& range, const compiler::Span& selection) {
    w.Key("name");
    rpc::writeString(w, name);
    w.Key("kind");
    w.Int(kind);
    if (!detail.empty()) {
        w.Key("detail");
        rpc::writeString(w, detail);
    }
    w.Key("range");
    writeSpanRange(w, f, range.begin <= selection.begin && range.end >= selection.end ? range : selection);
    w.Key("selectionRange");
    writeSpanRange(w, f, selection);
}

void writePou(JsonWriter& w, const Analysis& a, const compiler::SourceFile& f, const Symbol& pou) {
    w.StartObject();
    writeSymbol(w, f, pou.name, lspKind(pou), compiler::ast::pouKeyword(pou.pouKind), pou.pou->span, pou.span);
    w.Key("children");
    w.StartArray();
    if (pou.scope != nullptr) {
        for (const Symbol* m : pou.scope->symbols()) {
            if (m->kind == SymbolKind::Variable && !m->hidden && m->span.file == f.id()) {
                w.StartObject();
                writeSymbol(w, f, m->name, pou.pouKind == compiler::ast::PouKind::FunctionBlock ? kField : lspKind(*m),
                            m->type != nullptr ? m->type->name() : "", m->span, m->span);
                w.EndObject();
            }
        }
    }
    for (const Symbol* m : a.project.model->pous) {
        if (m->owner == &pou && m->pou != nullptr && m->span.file == f.id()) {
            writePou(w, a, f, *m);
        }
    }
    w.EndArray();
    w.EndObject();
}

bool topLevel(const Symbol& s) {
    return s.owner == nullptr || s.owner->kind == SymbolKind::Namespace;
}

} // namespace

std::string documentSymbols(const Analysis& a, compiler::FileId file) {
    const compiler::SourceFile& f = a.project.sources->file(file);
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartArray();
    if (a.project.model) {
        const compiler::SemanticModel& model = *a.project.model;
        for (const Symbol* s : model.pous) {
            if (s->pou != nullptr && s->span.file == file && topLevel(*s)) {
                writePou(w, a, f, *s);
            }
        }
        for (const Symbol* s : model.typeDecls) {
            if (s->span.file != file || s->typeDecl == nullptr) {
                continue;
            }
            w.StartObject();
            writeSymbol(w, f, s->name, lspKind(*s), "TYPE", s->typeDecl->span, s->span);
            w.Key("children");
            w.StartArray();
            if (const auto* st = dynamic_cast<const compiler::StructType*>(compiler::stripAlias(s->type));
                st != nullptr) {
                for (const compiler::Field& fd : st->fields) {
                    if (fd.span.file == file) {
                        w.StartObject();
                        writeSymbol(w, f, fd.name, kField, fd.type != nullptr ? fd.type->name() : "", fd.span, fd.span);
                        w.EndObject();
                    }
                }
            }
            for (const Symbol* v : model.enumValues) {
                if (v->type == s->type && v->span.file == file) {
                    w.StartObject();
                    writeSymbol(w, f, v->name, kEnumMember, "", v->span, v->span);
                    w.EndObject();
                }
            }
            w.EndArray();
            w.EndObject();
        }
        for (const Symbol* g : model.globals) {
            if (g->span.file == file) {
                w.StartObject();
                writeSymbol(w, f, g->name, lspKind(*g), g->type != nullptr ? g->type->name() : "", g->span, g->span);
                w.EndObject();
            }
        }
    }
    w.EndArray();
    return finish(buf);
}

std::string workspaceSymbols(const Analysis& a, std::string_view query) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartArray();
    if (a.project.model) {
        const std::string q = compiler::upperName(query);
        const compiler::SemanticModel& model = *a.project.model;
        const auto add = [&](const Symbol* s) {
            if (!inProject(a, s->span) || compiler::upperName(s->name).find(q) == std::string::npos) {
                return;
            }
            w.StartObject();
            w.Key("name");
            rpc::writeString(w, s->name);
            w.Key("kind");
            w.Int(lspKind(*s));
            if (s->owner != nullptr) {
                w.Key("containerName");
                rpc::writeString(w, s->owner->name);
            }
            w.Key("location");
            writeLocation(w, a, s->span);
            w.EndObject();
        };
        for (const Symbol* s : model.pous) {
            add(s);
        }
        for (const Symbol* s : model.typeDecls) {
            add(s);
        }
        for (const Symbol* s : model.globals) {
            add(s);
        }
    }
    w.EndArray();
    return finish(buf);
}

namespace {

// The opening keyword an END_* keyword closes ("END_VAR" closes any VAR section), by spelling:
// the token list pairs them by name, so no second list of blocks is kept here.
bool closes(std::string_view end, std::string_view open) {
    const std::string_view closed = end.substr(4); // after "END_"
    return open == closed || (closed == "VAR" && open.starts_with("VAR_"));
}

} // namespace

std::string foldingRanges(const compiler::SourceFile& file) {
    compiler::DiagnosticSink ignored;
    const compiler::LexResult lexed = compiler::lex(file, ignored);
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartArray();
    const auto range = [&](std::uint32_t from, std::uint32_t to, const char* kind) {
        if (to <= from) {
            return;
        }
        w.StartObject();
        w.Key("startLine");
        w.Uint(from);
        w.Key("endLine");
        w.Uint(to);
        if (kind != nullptr) {
            w.Key("kind");
            w.String(kind);
        }
        w.EndObject();
    };
    std::vector<std::pair<std::string_view, std::uint32_t>> open; // keyword, 0-based line
    for (const compiler::Token& t : lexed.tokens) {
        if (!compiler::isKeyword(t.kind)) {
            continue;
        }
        const std::string_view spelling = compiler::tokenSpelling(t.kind);
        const std::uint32_t line = file.lineCol(t.begin).line - 1;
        if (spelling.starts_with("END_")) {
            for (std::size_t i = open.size(); i-- > 0;) {
                if (closes(spelling, open[i].first)) {
                    range(open[i].second, line - 1, nullptr);
                    open.resize(i);
                    break;
                }
            }
            continue;
        }
        std::string end = "END_" + std::string(spelling);
        compiler::TokenKind ignoredKind{};
        if (spelling.starts_with("VAR") || compiler::keywordKind(end, ignoredKind)) {
            open.emplace_back(spelling, line);
        }
    }
    for (const compiler::Trivia& c : lexed.trivia) {
        if (c.kind == compiler::TriviaKind::BlockComment) {
            range(file.lineCol(c.begin).line - 1, file.lineCol(c.end > c.begin ? c.end - 1 : c.end).line - 1,
                  "comment");
        }
    }
    w.EndArray();
    return finish(buf);
}

} // namespace takt::agent::lsp
