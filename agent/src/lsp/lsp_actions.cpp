// Code actions: the fixes the compiler's diagnostics already name. E0104 (an unknown
// identifier) declares it in the POU's VAR block, as CODESYS's Auto Declare does (type BOOL,
// its default); E0012 (a block without its END_*) inserts the END_* the parser expected; W1009
// (CODESYS's name for a standard FB input) writes the IEC name; W1010 (an implicit narrowing
// conversion) writes the conversion the compiler computes, as IEC 61131-3 wants it spelt.
#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "lsp/lsp_features.h"
#include "lsp/lsp_resolve.h"
#include "rpc/rpc_json.h"

namespace takt::agent::lsp {

namespace {

using rpc::JsonWriter;

// The text between the first pair of quotes (E0104: "unknown identifier 'x'").
std::string quotedName(std::string_view message) {
    const std::size_t open = message.find('\'');
    const std::size_t close = open == std::string_view::npos ? open : message.find('\'', open + 1);
    return close == std::string_view::npos ? std::string() : std::string(message.substr(open + 1, close - open - 1));
}

// The line start and indentation of the line holding `offset`.
std::uint32_t lineStart(std::string_view text, std::uint32_t offset) {
    const std::size_t nl = text.rfind('\n', offset == 0 ? 0 : offset - 1);
    return offset == 0 || nl == std::string_view::npos ? 0 : static_cast<std::uint32_t>(nl + 1);
}
std::string indentOf(std::string_view text, std::uint32_t start) {
    const std::size_t end = text.find_first_not_of(" \t", start);
    return std::string(text.substr(start, (end == std::string_view::npos ? text.size() : end) - start));
}

// The last name between quotes (W1009: "… IEC 61131-3 calls it 'R'").
std::string lastQuotedName(std::string_view message) {
    const std::size_t close = message.rfind('\'');
    const std::size_t open =
        close == std::string_view::npos || close == 0 ? std::string_view::npos : message.rfind('\'', close - 1);
    return open == std::string_view::npos ? std::string() : std::string(message.substr(open + 1, close - open - 1));
}

// A quick fix replacing [from, to) with `text` (an insertion when they are equal).
void writeAction(JsonWriter& w, const std::string& title, const std::string& uri, Position from, Position to,
                 const std::string& text, const rapidjson::Value* diagnostic) {
    w.StartObject();
    w.Key("title");
    rpc::writeString(w, title);
    w.Key("kind");
    w.String("quickfix");
    if (diagnostic != nullptr) {
        w.Key("diagnostics");
        w.StartArray();
        const std::string d = rpc::toJson(*diagnostic);
        w.RawValue(d.data(), d.size(), rapidjson::kObjectType);
        w.EndArray();
    }
    w.Key("edit");
    w.StartObject();
    w.Key("changes");
    w.StartObject();
    w.Key(uri.c_str());
    w.StartArray();
    w.StartObject();
    w.Key("range");
    w.StartObject();
    for (const auto& [key, at] : {std::pair{"start", from}, std::pair{"end", to}}) {
        w.Key(key);
        w.StartObject();
        w.Key("line");
        w.Uint(at.line);
        w.Key("character");
        w.Uint(at.character);
        w.EndObject();
    }
    w.EndObject();
    w.Key("newText");
    rpc::writeString(w, text);
    w.EndObject();
    w.EndArray();
    w.EndObject();
    w.EndObject();
    w.EndObject();
}

// Where a new variable of the POU around `offset` goes: before the END_VAR of its first VAR
// block, or a new VAR block after its last declaration block (or after its header line).
bool declarationPlace(const Analysis& a, compiler::FileId file, std::uint32_t offset, std::uint32_t& at,
                      bool& newBlock) {
    if (!a.project.model) {
        return false;
    }
    const compiler::Scope* scope = scopeAt(*a.project.model, file, offset);
    const compiler::Symbol* pou = scope != nullptr ? scope->owner() : nullptr;
    if (pou == nullptr || pou->pou == nullptr) {
        return false;
    }
    const std::string_view text = a.project.sources->file(file).text();
    for (const compiler::ast::VarBlock& b : pou->pou->varBlocks) {
        // A block on one line (`VAR x : INT; END_VAR`) gets a new block after it instead.
        if (b.section == compiler::ast::VarSection::Var && b.span.valid() && b.span.end <= text.size() &&
            lineStart(text, b.span.end) > b.span.begin) {
            at = lineStart(text, b.span.end);
            newBlock = false;
            return true;
        }
    }
    std::uint32_t after = pou->span.end;
    for (const compiler::ast::VarBlock& b : pou->pou->varBlocks) {
        after = std::max(after, b.span.end);
    }
    const std::size_t nl = text.find('\n', after);
    at = nl == std::string_view::npos ? static_cast<std::uint32_t>(text.size()) : static_cast<std::uint32_t>(nl + 1);
    newBlock = true;
    return true;
}

} // namespace

std::string codeActions(const Analysis& a, compiler::FileId file, const rapidjson::Value& diagnostics) {
    const compiler::SourceFile& f = a.project.sources->file(file);
    const std::string uri = uriFromPath(a.pathOf(file));
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartArray();
    for (const rapidjson::Value& d : diagnostics.GetArray()) {
        if (!d.IsObject() || !d.HasMember("code") || !d["code"].IsString() || !d.HasMember("message") ||
            !d["message"].IsString() || !d.HasMember("range") || !d["range"].IsObject() ||
            !d["range"].HasMember("start")) {
            continue;
        }
        const std::string_view code = d["code"].GetString();
        const std::string_view message = d["message"].GetString();
        const rapidjson::Value& start = d["range"]["start"];
        const rapidjson::Value& rangeEnd = d["range"].HasMember("end") ? d["range"]["end"] : start;
        if (!start.IsObject() || !start.HasMember("line") || !start["line"].IsUint() || !start.HasMember("character") ||
            !start["character"].IsUint()) {
            continue;
        }
        const auto offset =
            static_cast<std::uint32_t>(offsetOf(f.text(), {start["line"].GetUint(), start["character"].GetUint()}));
        if (code == "E0104") {
            const std::string name = quotedName(message);
            std::uint32_t at = 0;
            bool newBlock = false;
            if (name.empty() || !declarationPlace(a, file, offset, at, newBlock)) {
                continue;
            }
            const std::string text =
                newBlock ? fmt::format("VAR\n    {} : BOOL;\nEND_VAR\n", name) : fmt::format("    {} : BOOL;\n", name);
            writeAction(w, fmt::format("Declare '{}' : BOOL in VAR", name), uri, positionOf(f, at), positionOf(f, at),
                        text, &d);
        } else if (code == "E0012" && message.starts_with("missing END_")) {
            const std::string end(message.substr(8, message.find(' ', 8) - 8));
            // The block's opening line (related location) gives the indentation.
            std::string indent;
            if (d.HasMember("relatedInformation") && d["relatedInformation"].IsArray() &&
                !d["relatedInformation"].Empty()) {
                const rapidjson::Value& rel = d["relatedInformation"][0]["location"]["range"]["start"];
                if (rel.IsObject() && rel.HasMember("line") && rel["line"].IsUint()) {
                    const auto open = static_cast<std::uint32_t>(offsetOf(f.text(), {rel["line"].GetUint(), 0}));
                    indent = indentOf(f.text(), open);
                }
            }
            static constexpr std::string_view kStatements[] = {"END_IF", "END_CASE", "END_FOR", "END_WHILE",
                                                               "END_REPEAT"};
            const bool statement =
                std::find(std::begin(kStatements), std::end(kStatements), end) != std::end(kStatements);
            const std::uint32_t at = lineStart(f.text(), offset);
            writeAction(w, fmt::format("Insert {}", end), uri, positionOf(f, at), positionOf(f, at),
                        indent + end + (statement ? ";" : "") + "\n", &d);
        } else if ((code == "W1009" || code == "W1010") && rangeEnd.IsObject() && rangeEnd.HasMember("line") &&
                   rangeEnd["line"].IsUint() && rangeEnd.HasMember("character") && rangeEnd["character"].IsUint()) {
            const Position from{start["line"].GetUint(), start["character"].GetUint()};
            const Position to{rangeEnd["line"].GetUint(), rangeEnd["character"].GetUint()};
            const std::size_t toOffset = offsetOf(f.text(), to);
            if (toOffset < offset) {
                continue;
            }
            if (code == "W1009") {
                const std::string iec = lastQuotedName(message);
                if (!iec.empty()) {
                    writeAction(w, fmt::format("Use the IEC name '{}'", iec), uri, from, to, iec, &d);
                }
                continue;
            }
            // "… computed as DINT_TO_INT computes it"
            const std::size_t as = message.find("computed as ");
            const std::size_t stop = as == std::string_view::npos ? as : message.find(' ', as + 12);
            if (stop == std::string_view::npos) {
                continue;
            }
            const std::string conversion(message.substr(as + 12, stop - as - 12));
            const std::string written = fmt::format("{}({})", conversion, f.text().substr(offset, toOffset - offset));
            writeAction(w, fmt::format("Convert explicitly: {}", written), uri, from, to, written, &d);
        }
    }
    w.EndArray();
    return {buf.GetString(), buf.GetSize()};
}

} // namespace takt::agent::lsp
