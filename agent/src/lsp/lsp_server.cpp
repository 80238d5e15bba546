// The lifecycle and dispatch of `takt lsp`: initialize / shutdown / exit as LSP 3.17 orders them,
// open documents, and the method table (MethodSpec) that routes each request to its feature.
#include "takt/agent/lsp_server.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <exception>
#include <map>
#include <set>

#include <unistd.h>

#include <fmt/format.h>

#include "lsp/lsp_complete.h"
#include "lsp/lsp_features.h"
#include "rpc/method_table.h"
#include "rpc/rpc_envelope.h"
#include "rpc/rpc_framer.h"
#include "takt/agent/agent_server.h"
#include "takt/agent/rpc_method.h"
#include "takt/bytecode/container.h"
#include "takt/common/fd_io.h"
#include "takt/compiler/plcopen.h"

namespace takt::agent {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

// LSP's own error codes (beside JSON-RPC's).
constexpr int kServerNotInitialized = -32002;
constexpr int kRequestFailed = -32803;

} // namespace

struct LspServer::State {
    LspOptions options;
    fs::path workspace;
    bool initialized = false;
    bool shutdown = false;
    bool exited = false;
    lsp::Documents docs;
    // One front end per project root, loaded as `takt check` loads it; it holds the open
    // documents' texts and answers each edit (incrementally where it can).
    std::map<fs::path, std::unique_ptr<compiler::Frontend>> projects;
    std::map<fs::path, std::set<fs::path>> published; // files last published with diagnostics, by root
    std::vector<std::string> out;                     // notifications to send after the response
    rpc::ParsedLine parsed;

    std::map<fs::path, std::set<fs::path>> filesOf; // by root: the files of its last full check

    compiler::Frontend& frontendFor(const fs::path& file);
    // Gives every project the editor's text of `file` (or the file on disk again once it is
    // closed): a library's file belongs to its own project and to each project using it.
    void holdText(const fs::path& file);
    // The check `file`'s answers come from; `whole`: one that checked every file in full
    // (references and rename look into every body).
    const lsp::Analysis& analysisFor(const fs::path& file, bool whole = false);
    void publish(const fs::path& file);
    void publishAll(const lsp::Analysis& a, const fs::path& file);
};

namespace {

using Answer = MethodAnswer;
using LspHandler = Answer (*)(LspServer::State&, const Value& params);

Answer invalidParams(std::string_view what) {
    return Answer::error(rpc::kInvalidParams, fmt::format("invalid params: {}", what));
}

const Value* memberOf(const Value& v, const char* name) {
    if (!v.IsObject()) {
        return nullptr;
    }
    const auto it = v.FindMember(name);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

bool documentPath(const Value& params, fs::path& out) {
    const Value* doc = memberOf(params, "textDocument");
    const Value* uri = doc != nullptr ? memberOf(*doc, "uri") : nullptr;
    return uri != nullptr && uri->IsString() && lsp::pathFromUri(uri->GetString(), out);
}

bool position(const Value* v, lsp::Position& out) {
    const Value* line = v != nullptr ? memberOf(*v, "line") : nullptr;
    const Value* ch = v != nullptr ? memberOf(*v, "character") : nullptr;
    if (line == nullptr || ch == nullptr || !line->IsUint() || !ch->IsUint()) {
        return false;
    }
    out = {line->GetUint(), ch->GetUint()};
    return true;
}

// The file and byte offset a textDocument/position request points at, in the analysis of its project.
struct At {
    const lsp::Analysis* analysis = nullptr;
    compiler::FileId file = 0;
    std::uint32_t offset = 0;
};
bool locate(LspServer::State& s, const Value& params, At& at, Answer& error, bool whole = false) {
    fs::path path;
    lsp::Position pos;
    if (!documentPath(params, path) || !position(memberOf(params, "position"), pos)) {
        error = invalidParams("textDocument.uri (a file:// URI) and position are required");
        return false;
    }
    at.analysis = &s.analysisFor(path, whole);
    const std::optional<compiler::FileId> id = at.analysis->fileOf(path);
    if (!id) {
        error = Answer::result("null");
        return false;
    }
    at.file = *id;
    at.offset = static_cast<std::uint32_t>(lsp::offsetOf(at.analysis->project.sources->file(*id).text(), pos));
    return true;
}

Answer initialize(LspServer::State& s, const Value& params) {
    fs::path folder;
    if (const Value* folders = memberOf(params, "workspaceFolders");
        folders != nullptr && folders->IsArray() && !folders->Empty()) {
        const Value* uri = memberOf((*folders)[0], "uri");
        if (uri != nullptr && uri->IsString()) {
            (void)lsp::pathFromUri(uri->GetString(), folder);
        }
    }
    if (const Value* root = memberOf(params, "rootUri"); folder.empty() && root != nullptr && root->IsString()) {
        (void)lsp::pathFromUri(root->GetString(), folder);
    }
    if (folder.empty()) {
        std::error_code ec;
        folder = s.options.workspace.empty() ? fs::current_path(ec) : fs::absolute(s.options.workspace, ec);
    }
    s.workspace = folder.lexically_normal();
    s.initialized = true;
    return Answer::result(fmt::format(
        R"({{"capabilities":{{"positionEncoding":"utf-16",)"
        R"("textDocumentSync":{{"openClose":true,"change":2,"save":{{"includeText":false}}}},)"
        R"("documentFormattingProvider":true,"documentRangeFormattingProvider":true,"hoverProvider":true,)"
        R"("definitionProvider":true,"referencesProvider":true,"documentSymbolProvider":true,)"
        R"("workspaceSymbolProvider":true,"completionProvider":{{"triggerCharacters":["."]}},)"
        R"("codeActionProvider":{{"codeActionKinds":["quickfix"]}},"foldingRangeProvider":true,"semanticTokensProvider":{{"legend":{},"full":true}},)"
        R"("signatureHelpProvider":{{"triggerCharacters":["(",","]}},"renameProvider":true}},"serverInfo":{{"name":"takt","version":{}}}}})",
        lsp::semanticTokensLegend(), rpc::quoted(taktVersion())));
}

Answer initialized(LspServer::State&, const Value&) {
    return Answer::result("null");
}

Answer shutdown(LspServer::State& s, const Value&) {
    s.shutdown = true;
    return Answer::result("null");
}

Answer exitNotification(LspServer::State& s, const Value&) {
    s.exited = true;
    return Answer::result("null");
}

Answer didOpen(LspServer::State& s, const Value& params) {
    fs::path path;
    const Value* doc = memberOf(params, "textDocument");
    const Value* text = doc != nullptr ? memberOf(*doc, "text") : nullptr;
    const Value* version = doc != nullptr ? memberOf(*doc, "version") : nullptr;
    if (!documentPath(params, path) || text == nullptr || !text->IsString()) {
        return invalidParams("textDocument.uri and textDocument.text are required");
    }
    s.docs.open(path, std::string(text->GetString(), text->GetStringLength()),
                version != nullptr && version->IsInt64() ? version->GetInt64() : 0);
    s.holdText(path);
    s.publish(path);
    return Answer::result("null");
}

Answer didChange(LspServer::State& s, const Value& params) {
    fs::path path;
    const Value* changes = memberOf(params, "contentChanges");
    if (!documentPath(params, path) || changes == nullptr || !changes->IsArray()) {
        return invalidParams("textDocument.uri and contentChanges are required");
    }
    const Value* doc = memberOf(params, "textDocument");
    const Value* version = memberOf(*doc, "version");
    const std::int64_t v = version != nullptr && version->IsInt64() ? version->GetInt64() : 0;
    for (const Value& change : changes->GetArray()) {
        const Value* text = memberOf(change, "text");
        if (text == nullptr || !text->IsString()) {
            return invalidParams("every content change needs its text");
        }
        const Value* range = memberOf(change, "range");
        lsp::Position from;
        lsp::Position to;
        const bool whole = range == nullptr;
        if (!whole && (!position(memberOf(*range, "start"), from) || !position(memberOf(*range, "end"), to))) {
            return invalidParams("a content change range needs start and end positions");
        }
        if (!s.docs.change(path, whole, from, to, {text->GetString(), text->GetStringLength()}, v)) {
            return invalidParams("the document is not open");
        }
    }
    s.holdText(path);
    s.publish(path);
    return Answer::result("null");
}

Answer didSave(LspServer::State& s, const Value& params) {
    fs::path path;
    if (!documentPath(params, path)) {
        return invalidParams("textDocument.uri is required");
    }
    s.publish(path);
    return Answer::result("null");
}

Answer didClose(LspServer::State& s, const Value& params) {
    fs::path path;
    if (!documentPath(params, path)) {
        return invalidParams("textDocument.uri is required");
    }
    s.docs.close(path);
    s.holdText(path);
    s.publish(path); // the file on disk is what counts again
    return Answer::result("null");
}

// Files changed on disk (another editor, git, a generator): every project's check is stale, and
// each project with an open document is checked again.
Answer didChangeWatchedFiles(LspServer::State& s, const Value&) {
    for (auto& [root, frontend] : s.projects) {
        frontend->invalidate();
    }
    std::set<fs::path> roots;
    for (const auto& [path, doc] : s.docs.all()) {
        if (roots.insert(compiler::projectRootFor(path, s.workspace)).second) {
            s.publish(path);
        }
    }
    return Answer::result("null");
}

Answer formatting(LspServer::State& s, const Value& params, bool ranged) {
    fs::path path;
    if (!documentPath(params, path)) {
        return invalidParams("textDocument.uri is required");
    }
    std::optional<std::pair<std::uint32_t, std::uint32_t>> lines;
    if (ranged) {
        const Value* range = memberOf(params, "range");
        lsp::Position from;
        lsp::Position to;
        if (range == nullptr || !position(memberOf(*range, "start"), from) || !position(memberOf(*range, "end"), to)) {
            return invalidParams("range is required");
        }
        lines = std::pair{from.line, to.character == 0 && to.line > from.line ? to.line - 1 : to.line};
    }
    if (compiler::isPlcopenPath(path)) {
        // The file's text here is the ST it translates to: formatting it would replace the XML.
        return Answer::error(kRequestFailed,
                             fmt::format("'{}' is PLCopen XML: takt formats ST files only", path.filename().string()));
    }
    const lsp::Analysis& a = s.analysisFor(path);
    const std::optional<compiler::FileId> id = a.fileOf(path);
    if (!id) {
        return Answer::result("null");
    }
    const compiler::SourceFile& f = a.project.sources->file(*id);
    std::optional<std::string> edits = lsp::formattingEdits(f.path(), std::string(f.text()), lines);
    if (!edits) {
        return Answer::error(kRequestFailed,
                             fmt::format("'{}' has syntax errors and cannot be formatted (takt fmt refuses it too)",
                                         path.filename().string()));
    }
    return Answer::result(std::move(*edits));
}

Answer documentFormatting(LspServer::State& s, const Value& params) {
    return formatting(s, params, false);
}
Answer rangeFormatting(LspServer::State& s, const Value& params) {
    return formatting(s, params, true);
}

Answer hover(LspServer::State& s, const Value& params) {
    At at;
    Answer early;
    return locate(s, params, at, early) ? Answer::result(lsp::hover(*at.analysis, at.file, at.offset)) : early;
}

Answer definition(LspServer::State& s, const Value& params) {
    At at;
    Answer early;
    return locate(s, params, at, early) ? Answer::result(lsp::definition(*at.analysis, at.file, at.offset)) : early;
}

Answer references(LspServer::State& s, const Value& params) {
    At at;
    Answer early;
    if (!locate(s, params, at, early, true)) {
        return early;
    }
    const Value* context = memberOf(params, "context");
    const Value* include = context != nullptr ? memberOf(*context, "includeDeclaration") : nullptr;
    return Answer::result(lsp::references(*at.analysis, at.file, at.offset,
                                          include != nullptr && include->IsBool() && include->GetBool()));
}

// Whether the name being typed at `offset` follows a `.` (the members of one object) rather than
// standing alone (every name of the project, so a check of every file).
bool afterDot(std::string_view text, std::size_t offset) {
    std::size_t i = std::min(offset, text.size());
    while (i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) != 0 || text[i - 1] == '_')) {
        --i;
    }
    while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t')) {
        --i;
    }
    return i > 0 && text[i - 1] == '.';
}

Answer completion(LspServer::State& s, const Value& params) {
    fs::path path;
    lsp::Position pos;
    const lsp::Documents::Document* doc = documentPath(params, path) ? s.docs.find(path) : nullptr;
    const bool members = doc != nullptr && position(memberOf(params, "position"), pos) &&
                         afterDot(doc->text, lsp::offsetOf(doc->text, pos));
    At at;
    Answer early;
    return locate(s, params, at, early, !members) ? Answer::result(lsp::completion(*at.analysis, at.file, at.offset))
                                                  : early;
}

Answer signatureHelp(LspServer::State& s, const Value& params) {
    At at;
    Answer early;
    return locate(s, params, at, early) ? Answer::result(lsp::signatureHelp(*at.analysis, at.file, at.offset)) : early;
}

Answer rename(LspServer::State& s, const Value& params) {
    const Value* newName = memberOf(params, "newName");
    if (newName == nullptr || !newName->IsString()) {
        return invalidParams("newName is required");
    }
    At at;
    Answer early;
    if (!locate(s, params, at, early, true)) {
        return early;
    }
    lsp::RenameResult r = lsp::rename(*at.analysis, at.file, at.offset, newName->GetString());
    return r.ok ? Answer::result(std::move(r.json)) : Answer::error(kRequestFailed, std::move(r.error));
}

Answer documentSymbol(LspServer::State& s, const Value& params) {
    fs::path path;
    if (!documentPath(params, path)) {
        return invalidParams("textDocument.uri is required");
    }
    const lsp::Analysis& a = s.analysisFor(path);
    const std::optional<compiler::FileId> id = a.fileOf(path);
    return Answer::result(id ? lsp::documentSymbols(a, *id) : "null");
}

Answer foldingRange(LspServer::State& s, const Value& params) {
    fs::path path;
    if (!documentPath(params, path)) {
        return invalidParams("textDocument.uri is required");
    }
    const lsp::Analysis& a = s.analysisFor(path);
    const std::optional<compiler::FileId> id = a.fileOf(path);
    return Answer::result(id ? lsp::foldingRanges(a.project.sources->file(*id)) : "null");
}

Answer codeAction(LspServer::State& s, const Value& params) {
    fs::path path;
    const Value* context = memberOf(params, "context");
    const Value* diagnostics = context != nullptr ? memberOf(*context, "diagnostics") : nullptr;
    if (!documentPath(params, path) || diagnostics == nullptr || !diagnostics->IsArray()) {
        return invalidParams("textDocument.uri and context.diagnostics are required");
    }
    const lsp::Analysis& a = s.analysisFor(path);
    const std::optional<compiler::FileId> id = a.fileOf(path);
    return Answer::result(id ? lsp::codeActions(a, *id, *diagnostics) : "null");
}

Answer semanticTokens(LspServer::State& s, const Value& params) {
    fs::path path;
    if (!documentPath(params, path)) {
        return invalidParams("textDocument.uri is required");
    }
    const lsp::Analysis& a = s.analysisFor(path);
    const std::optional<compiler::FileId> id = a.fileOf(path);
    return Answer::result(id ? lsp::semanticTokens(a, *id) : "null");
}

Answer workspaceSymbol(LspServer::State& s, const Value& params) {
    const Value* query = memberOf(params, "query");
    const std::string q = query != nullptr && query->IsString() ? query->GetString() : "";
    // The project of the workspace folder (or the one it lies in).
    const lsp::Analysis& a = s.analysisFor(s.workspace / "runtime.toml", true);
    return Answer::result(lsp::workspaceSymbols(a, q));
}

// Requests and notifications, in the order of the LSP specification. Params are checked by the
// handlers (LSP objects carry members a client may add at will, so no closed schema applies).
constexpr MethodSpec<LspHandler> kMethods[] = {
    {"initialize", "capabilities; the workspace folder", "", "", std::nullopt, initialize},
    {"initialized", "notification: the client is ready", "", "", std::nullopt, initialized},
    {"shutdown", "stop answering; `exit` follows", "", "", std::nullopt, shutdown},
    {"exit", "notification: end the process", "", "", std::nullopt, exitNotification},
    {"textDocument/didOpen", "hold the editor's text; publish diagnostics", "", "", std::nullopt, didOpen},
    {"textDocument/didChange", "apply full or incremental edits; publish diagnostics", "", "", std::nullopt, didChange},
    {"textDocument/didSave", "publish diagnostics", "", "", std::nullopt, didSave},
    {"textDocument/didClose", "back to the file on disk; publish diagnostics", "", "", std::nullopt, didClose},
    {"workspace/didChangeWatchedFiles", "notification: re-check the projects of the open documents", "", "",
     std::nullopt, didChangeWatchedFiles},
    {"textDocument/formatting", "takt fmt's layout as edits", "", "", std::nullopt, documentFormatting},
    {"textDocument/rangeFormatting", "takt fmt's layout for some lines", "", "", std::nullopt, rangeFormatting},
    {"textDocument/hover", "declaration, type, doc comment, value range", "", "", std::nullopt, hover},
    {"textDocument/definition", "where the name is declared", "", "", std::nullopt, definition},
    {"textDocument/references", "every use of the name in the project", "", "", std::nullopt, references},
    {"textDocument/completion", "names in scope, members after '.', keywords, snippets", "", "", std::nullopt,
     completion},
    {"textDocument/signatureHelp", "the parameters of the call at the cursor", "", "", std::nullopt, signatureHelp},
    {"textDocument/rename", "the name in every file; refused on a clash", "", "", std::nullopt, rename},
    {"textDocument/documentSymbol", "the file's POUs, types, variables", "", "", std::nullopt, documentSymbol},
    {"textDocument/foldingRange", "blocks and multi-line comments", "", "", std::nullopt, foldingRange},
    {"textDocument/codeAction",
     "quick fixes: declare an unknown name, insert a missing END_*, the IEC spelling of a CODESYS hint", "", "",
     std::nullopt, codeAction},
    {"textDocument/semanticTokens/full", "identifiers by what they name", "", "", std::nullopt, semanticTokens},
    {"workspace/symbol", "the project's POUs, types and globals by name", "", "", std::nullopt, workspaceSymbol},
};

} // namespace

compiler::Frontend& LspServer::State::frontendFor(const fs::path& file) {
    const fs::path root = compiler::projectRootFor(file, workspace);
    auto it = projects.find(root);
    if (it == projects.end()) {
        auto frontend = std::make_unique<compiler::Frontend>(compiler::ProjectInput{root, {}, false, {}, {}});
        for (const auto& [path, doc] : docs.all()) {
            frontend->setText(path, doc.text);
        }
        it = projects.emplace(root, std::move(frontend)).first;
    }
    return *it->second;
}

void LspServer::State::holdText(const fs::path& file) {
    (void)frontendFor(file);
    const lsp::Documents::Document* doc = docs.find(file);
    for (auto& [root, frontend] : projects) {
        if (doc != nullptr) {
            frontend->setText(file, doc->text);
        } else {
            frontend->dropText(file);
        }
    }
}

const lsp::Analysis& LspServer::State::analysisFor(const fs::path& file, bool whole) {
    compiler::Frontend& frontend = frontendFor(file);
    const bool open = docs.find(file) != nullptr;
    const lsp::Analysis* last = frontend.last();
    if (!whole && last != nullptr && (last->focus.empty() || last->focus == file) &&
        (last->fileOf(file) || !open || file.extension() == ".toml")) {
        return *last;
    }
    return frontend.check(open ? file : fs::path());
}

// Checks the project of `file` as the editor has it and publishes what changed: after an edit
// the Frontend re-checks the edited file alone when that gives the full check's answer
// (frontend.h), and then only its diagnostics can have changed.
void LspServer::State::publish(const fs::path& file) {
    compiler::Frontend& frontend = frontendFor(file);
    // Other projects that compile the file (a library's, edited in its own project) are checked
    // again in full: their diagnostics may name it.
    for (auto& [root, other] : projects) {
        if (other.get() != &frontend && filesOf[root].contains(file)) {
            publishAll(other->check(), {});
        }
    }
    const lsp::Documents::Document* doc = docs.find(file);
    const lsp::Analysis& a = doc != nullptr ? frontend.checkFile(file) : frontend.check();
    if (a.focus.empty()) {
        publishAll(a, file);
        return;
    }
    const compiler::FileId id = *a.fileOf(file);
    out.push_back(
        rpc::notificationLine("textDocument/publishDiagnostics", lsp::diagnosticsParams(a, id, doc->version)));
    const bool has = std::any_of(a.project.diagnostics.begin(), a.project.diagnostics.end(),
                                 [&](const compiler::Diagnostic& d) { return d.span.file == id; });
    if (has) {
        published[a.project.directory].insert(file);
    } else {
        published[a.project.directory].erase(file);
    }
}

// Publishes every file of a full check whose diagnostics may have changed: those with
// diagnostics now, those that had some, and `file`.
void LspServer::State::publishAll(const lsp::Analysis& a, const fs::path& file) {
    const fs::path& root = a.project.directory;
    std::set<fs::path>& before = published[root];
    std::set<fs::path> now;
    filesOf[root] = std::set<fs::path>(a.files.begin(), a.files.end());
    if (!a.project.valid()) {
        out.push_back(rpc::notificationLine("textDocument/publishDiagnostics", lsp::configDiagnosticsParams(a)));
        now.insert(root / "runtime.toml");
    } else {
        if (before.erase(root / "runtime.toml") > 0) {
            out.push_back(rpc::notificationLine("textDocument/publishDiagnostics",
                                                lsp::emptyDiagnosticsParams(root / "runtime.toml")));
        }
        std::vector<bool> has(a.files.size(), false);
        for (const compiler::Diagnostic& d : a.project.diagnostics) {
            if (d.span.valid() && d.span.file < has.size()) {
                has[d.span.file] = true;
            }
        }
        for (compiler::FileId id = 0; id < a.files.size(); ++id) {
            if (has[id] || before.contains(a.files[id]) || a.files[id] == file) {
                const lsp::Documents::Document* doc = docs.find(a.files[id]);
                out.push_back(rpc::notificationLine(
                    "textDocument/publishDiagnostics",
                    lsp::diagnosticsParams(a, id, doc != nullptr ? std::optional(doc->version) : std::nullopt)));
                before.erase(a.files[id]);
            }
            if (has[id]) {
                now.insert(a.files[id]);
            }
        }
    }
    for (const fs::path& gone : before) { // files that left the project
        out.push_back(rpc::notificationLine("textDocument/publishDiagnostics", lsp::emptyDiagnosticsParams(gone)));
    }
    before = std::move(now);
}

LspServer::LspServer(LspOptions options) : state_(std::make_unique<State>()) {
    state_->options = std::move(options);
}

LspServer::~LspServer() = default;

bool LspServer::exited() const {
    return state_->exited;
}

std::size_t LspServer::incrementalChecks() const {
    std::size_t n = 0;
    for (const auto& [root, frontend] : state_->projects) {
        n += frontend->stats().incrementalChecks;
    }
    return n;
}

int LspServer::exitCode() const {
    return state_->shutdown ? 0 : 1;
}

std::vector<std::string> LspServer::handleMessage(std::string_view body) {
    State& s = *state_;
    std::vector<std::string> replies;
    rpc::Request request;
    rpc::Error invalid;
    if (!rpc::parseRequest(body, s.parsed, request, invalid, kMaxBodyBytes, rpc::NullParams::Absent)) {
        // A client's answer to a server request carries result/error and no method: nothing to say.
        const rapidjson::Document& doc = s.parsed.doc;
        if (s.parsed.status == rpc::ParsedLine::Status::Ok && doc.IsObject() && !doc.HasMember("method") &&
            (doc.HasMember("result") || doc.HasMember("error"))) {
            return replies;
        }
        replies.push_back(rpc::errorLine(request.id, invalid));
        return replies;
    }
    const std::string_view name = request.method;
    const MethodSpec<LspHandler>* method = rpc::findMethod(std::span<const MethodSpec<LspHandler>>(kMethods), name);
    Answer answer;
    if (request.paramsError) {
        answer = Answer::error(request.paramsError->code, request.paramsError->message);
    } else if (name != "exit" && s.shutdown) {
        answer = Answer::error(rpc::kInvalidRequest, fmt::format("'{}' after shutdown: only 'exit' is accepted", name));
    } else if (!s.initialized && name != "initialize" && name != "exit") {
        answer = Answer::error(kServerNotInitialized, fmt::format("'{}' before initialize", name));
    } else if (s.initialized && name == "initialize") {
        answer = Answer::error(rpc::kInvalidRequest, "initialize was already sent");
    } else if (method == nullptr) {
        answer = Answer::error(rpc::kMethodNotFound, fmt::format("Method '{}' is not supported by takt lsp.", name));
    } else {
        try {
            answer = method->handler(s, *request.params);
        } catch (const std::exception& ex) {
            answer = Answer::error(rpc::kInternalError, fmt::format("internal error in '{}': {}", name, ex.what()));
        }
    }
    if (!request.notification) {
        replies.push_back(answer.ok ? rpc::resultLine(request.id, answer.json)
                                    : rpc::errorLine(request.id, rpc::Error{answer.code, answer.message, answer.data}));
    }
    for (std::string& n : s.out) {
        replies.push_back(std::move(n));
    }
    s.out.clear();
    return replies;
}

std::vector<std::string_view> lspMethodNames() {
    std::vector<std::string_view> names;
    for (const MethodSpec<LspHandler>& m : kMethods) {
        names.push_back(m.name);
    }
    return names;
}

std::string lspFrame(std::string_view body) {
    return fmt::format("Content-Length: {}\r\n\r\n{}", body.size(), body);
}

int LspServer::serve(int inFd, int outFd) {
    rpc::HeaderFramer framer;
    std::vector<char> buf(1 << 16);
    const auto send = [&](const std::string& body) { return common::writeAll(outFd, lspFrame(body)); };
    for (;;) {
        const ssize_t n = ::read(inFd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return 1; // the client went away without `exit`
        }
        std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
        while (!chunk.empty()) {
            using Status = rpc::HeaderFramer::Status;
            const Status status = framer.next(chunk);
            std::vector<std::string> replies;
            if (status == Status::Message) {
                replies = handleMessage(framer.body());
            } else if (status == Status::BadHeader) {
                replies.push_back(
                    rpc::errorLine({}, rpc::Error{rpc::kParseError, "invalid header: " + framer.error(), {}}));
            } else if (status == Status::TooLarge) {
                replies.push_back(rpc::errorLine({}, rpc::Error{rpc::kInvalidRequest, framer.error(), {}}));
            }
            for (const std::string& r : replies) {
                if (!send(r)) {
                    return 1;
                }
            }
            if (exited()) {
                return exitCode();
            }
        }
    }
}

} // namespace takt::agent
