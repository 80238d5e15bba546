// Incremental re-analysis of `takt lsp` through compiler::Frontend (frontend.h): after every edit of a series of
// random and realistic edits (typing in bodies and declarations, syntax errors, renames, calls
// that close a cycle across files, locals named from another file), the diagnostics the server
// has published for every file equal those of a full check of the same texts by a fresh server.
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include "lsp/lsp_text.h"
#include "rpc/rpc_json.h"
#include "takt/agent/lsp_server.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;

const std::map<std::string, std::string> kProject = {
    {"types.st", "TYPE E_Mode : (Idle, Run, Fault);\nEND_TYPE\n\nTYPE ST_Data :\nSTRUCT\n    a : INT;\n"
                 "    b : REAL;\nEND_STRUCT\nEND_TYPE\n"},
    {"globals.st", "VAR_GLOBAL\n    gCount : INT;\n    gMode : E_Mode;\nEND_VAR\n"},
    {"funcs.st", "FUNCTION Scale : REAL\nVAR_INPUT\n    x : INT;\nEND_VAR\nScale := INT_TO_REAL(x) * 2.0;\n"
                 "END_FUNCTION\n\nFUNCTION Helper : INT\nVAR_INPUT\n    n : INT;\nEND_VAR\nVAR\n    t : INT;\n"
                 "END_VAR\nt := n;\nHelper := t + 1;\nEND_FUNCTION\n"},
    {"base.st", "FUNCTION_BLOCK FB_Base\nVAR_INPUT\n    en : BOOL;\nEND_VAR\nVAR_OUTPUT\n    q : INT;\nEND_VAR\n"
                "VAR\n    count : INT;\n    spare : INT;\nEND_VAR\nIF en THEN\n    count := count + 1;\nEND_IF;\n"
                "q := count;\nEND_FUNCTION_BLOCK\n"},
    {"derived.st", "FUNCTION_BLOCK FB_Derived EXTENDS FB_Base\nVAR\n    extra : INT;\nEND_VAR\n"
                   "extra := Helper(extra);\nEND_FUNCTION_BLOCK\n"},
    {"config.st",
     "CONFIGURATION Plant\n    RESOURCE Cpu ON PLC\n        TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);\n"
     "        PROGRAM Run1 WITH Fast : Main;\n    END_RESOURCE\nEND_CONFIGURATION\n"},
    {"main.st", "PROGRAM Main\nVAR\n    d : FB_Derived;\n    b : FB_Base;\n    r : REAL;\n    data : ST_Data;\n"
                "END_VAR\nd(en := TRUE);\nb(en := gMode = Run);\nr := Scale(b.q);\ngCount := Helper(gCount);\n"
                "data.a := d.q;\nEND_PROGRAM\n"},
};

// Lines an engineer types (or half-types) somewhere in a file.
const char* const kSnippets[] = {
    "// a note",
    "gCount := gCount + 1;",
    "unknownVar := 1;",
    "r := Scale(gCount);",
    "gCount := Helper(3);",
    "IF gMode = Fault THEN",
    "END_IF;",
    "count := 5;",
    "spare := b.count;",
    "extra := count;",
    "Helper := Rec(n);",
    "FUNCTION Rec : INT VAR_INPUT n : INT; END_VAR Rec := Helper(n); END_FUNCTION",
    "VAR y : BOOL; END_VAR",
    "    z : DINT;",
    "data.c := 1;",
    "(* open comment",
    "*)",
    "TYPE E_Mode : (A, B); END_TYPE",
    "        PROGRAM Run2 WITH Fast : Other;",
    "VAR_GLOBAL spare : INT; END_VAR",
    "NAMESPACE Lib FUNCTION Helper : INT Helper := 1; END_FUNCTION END_NAMESPACE",
    "gCount := Lib.Helper();",
};

class LspIncrementalTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("takt_lsp_inc_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "src");
        std::ofstream(dir_ / "runtime.toml") << "[build]\noverflow = \"wrap\"\n";
        for (const auto& [name, text] : kProject) {
            std::ofstream(dir_ / "src" / name) << text;
        }
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string uri(const std::string& file) const { return lsp::uriFromPath(dir_ / "src" / file); }

    // A server with its published diagnostics by URI (the latest publish of each, version left out).
    struct Client {
        LspServer server{LspOptions{}};
        std::map<std::string, std::string> published;
        int id = 0;
        void send(const std::string& body) {
            for (const std::string& r : server.handleMessage(body)) {
                rapidjson::Document d;
                d.Parse(r.data(), r.size());
                if (d.HasMember("method") &&
                    std::string(d["method"].GetString()) == "textDocument/publishDiagnostics") {
                    published[d["params"]["uri"].GetString()] = rpc::toJson(d["params"]["diagnostics"]);
                }
            }
        }
        void notify(const std::string& method, const std::string& params) {
            send(R"({"jsonrpc":"2.0","method":")" + method + R"(","params":)" + params + "}");
        }
        void initialize(const fs::path& dir) {
            send(R"({"jsonrpc":"2.0","id":)" + std::to_string(++id) + R"(,"method":"initialize","params":{"rootUri":)" +
                 rpc::quoted(lsp::uriFromPath(dir)) + R"(,"capabilities":{}}})");
            notify("initialized", "{}");
        }
        void open(const std::string& u, const std::string& text) {
            notify("textDocument/didOpen", R"({"textDocument":{"uri":)" + rpc::quoted(u) +
                                               R"(,"languageId":"iecst","version":1,"text":)" + rpc::quoted(text) +
                                               "}}");
        }
        [[nodiscard]] std::string of(const std::string& u) const {
            const auto it = published.find(u);
            return it == published.end() ? "[]" : it->second;
        }
    };

    // What a fresh server publishes for the same texts with every file checked in full.
    std::map<std::string, std::string> fullCheck(const std::map<std::string, std::string>& texts) {
        Client full;
        full.initialize(dir_);
        for (const auto& [name, text] : texts) {
            full.open(uri(name), text);
        }
        full.notify("workspace/didChangeWatchedFiles", R"({"changes":[]})");
        std::map<std::string, std::string> out;
        for (const auto& [name, text] : texts) {
            out[name] = full.of(uri(name));
        }
        return out;
    }

    // Applies `edits` (file, text to put after `anchor`) one by one, comparing with a full check
    // after each; returns how many the server answered incrementally.
    std::size_t replay(const std::vector<std::array<std::string, 3>>& edits) {
        Client editor;
        editor.initialize(dir_);
        std::map<std::string, std::string> texts(kProject.begin(), kProject.end());
        for (const auto& [name, text] : texts) {
            editor.open(uri(name), text);
        }
        const std::size_t start = editor.server.incrementalChecks();
        int version = 1;
        for (const auto& [name, anchor, insert] : edits) {
            std::string& text = texts[name];
            const std::size_t at = text.find(anchor);
            EXPECT_NE(at, std::string::npos) << anchor;
            text.insert(at + anchor.size(), insert);
            editor.notify("textDocument/didChange", R"({"textDocument":{"uri":)" + rpc::quoted(uri(name)) +
                                                        R"(,"version":)" + std::to_string(++version) +
                                                        R"(},"contentChanges":[{"text":)" + rpc::quoted(text) + "}]}");
            for (const auto& [file, diagnostics] : fullCheck(texts)) {
                EXPECT_EQ(editor.of(uri(file)), diagnostics) << file << " after '" << insert << "' in " << name;
            }
        }
        return editor.server.incrementalChecks() - start;
    }

    fs::path dir_;
};

// One random edit of `text`: a snippet typed on a new line, a line deleted, a name renamed, a
// declared type changed.
std::string edit(const std::string& text, std::mt19937& rng) {
    std::vector<std::string> lines;
    std::size_t from = 0;
    for (std::size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
        lines.push_back(text.substr(from, nl - from));
    }
    lines.push_back(text.substr(from));
    const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    switch (pick(6)) {
    case 0:
    case 1:
    case 2:
        lines.insert(lines.begin() + static_cast<long>(pick(lines.size() + 1)), kSnippets[pick(std::size(kSnippets))]);
        break;
    case 3: lines.erase(lines.begin() + static_cast<long>(pick(lines.size()))); break;
    case 4: {
        std::string out;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            out += (i ? "\n" : "") + lines[i];
        }
        const char* const names[][2] = {{"Helper", "Helper2"},
                                        {"Helper2", "Helper"},
                                        {"count", "counter"},
                                        {"FB_Base", "FB_Base1"},
                                        {"gMode", "gMod"}};
        const auto& [was, now] = names[pick(std::size(names))];
        if (const std::size_t at = out.find(was); at != std::string::npos) {
            out.replace(at, std::string_view(was).size(), now);
        }
        return out;
    }
    default:
        for (std::string& l : lines) {
            if (l.find(": INT;") != std::string::npos && pick(3) == 0) {
                l.replace(l.find(": INT;"), 6, ": REAL;");
                break;
            }
        }
    }
    std::string out;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        out += (i ? "\n" : "") + lines[i];
    }
    return out;
}

TEST_F(LspIncrementalTest, RandomEditsPublishWhatAFullCheckFinds) {
    Client editor;
    editor.initialize(dir_);
    std::map<std::string, std::string> texts(kProject.begin(), kProject.end());
    for (const auto& [name, text] : texts) {
        editor.open(uri(name), text);
    }
    std::mt19937 rng(20);
    std::vector<std::string> names;
    for (const auto& [name, text] : texts) {
        names.push_back(name);
    }
    for (int step = 0; step < 150; ++step) {
        const std::string& name = names[std::uniform_int_distribution<std::size_t>(0, names.size() - 1)(rng)];
        // Mostly typing in one file at a time, as an engineer does; sometimes back to the original.
        texts[name] = step % 25 == 24 ? kProject.at(name) : edit(texts[name], rng);
        editor.notify("textDocument/didChange", R"({"textDocument":{"uri":)" + rpc::quoted(uri(name)) +
                                                    R"(,"version":)" + std::to_string(step + 2) +
                                                    R"(},"contentChanges":[{"text":)" + rpc::quoted(texts[name]) +
                                                    "}]}");
        const std::map<std::string, std::string> full = fullCheck(texts);
        for (const auto& [file, diagnostics] : full) {
            ASSERT_EQ(editor.of(uri(file)), diagnostics)
                << "step " << step << ", " << file << " after an edit of " << name << ":\n"
                << texts[file];
        }
    }
    // The incremental check answered most edits (the others changed declarations or met a rule).
    EXPECT_GT(editor.server.incrementalChecks(), 40U);
}

// An edit inside a body is answered by re-checking that file alone; one that changes a
// declaration other files see is answered by a full check.
TEST_F(LspIncrementalTest, BodyEditsAreIncrementalDeclarationEditsAreNot) {
    Client editor;
    editor.initialize(dir_);
    editor.open(uri("main.st"), kProject.at("main.st"));
    const std::size_t start = editor.server.incrementalChecks();
    std::string text = kProject.at("main.st");
    text.insert(text.find("END_PROGRAM"), "unknownVar := 1;\n");
    editor.notify("textDocument/didChange", R"({"textDocument":{"uri":)" + rpc::quoted(uri("main.st")) +
                                                R"(,"version":2},"contentChanges":[{"text":)" + rpc::quoted(text) +
                                                "}]}");
    EXPECT_EQ(editor.server.incrementalChecks(), start + 1);
    EXPECT_NE(editor.of(uri("main.st")).find("E0104"), std::string::npos);
    text.replace(text.find("PROGRAM Main"), 12, "PROGRAM Main2");
    editor.notify("textDocument/didChange", R"({"textDocument":{"uri":)" + rpc::quoted(uri("main.st")) +
                                                R"(,"version":3},"contentChanges":[{"text":)" + rpc::quoted(text) +
                                                "}]}");
    EXPECT_EQ(editor.server.incrementalChecks(), start + 1);
}

// A call that closes a cycle through another file's body (E0115 in both files), and the edit
// that opens it again: the other file's calls decide, so these edits get a full check.
TEST_F(LspIncrementalTest, CallCyclesAcrossFiles) {
    EXPECT_EQ(replay({{"derived.st", "END_FUNCTION_BLOCK\n",
                       "FUNCTION Rec : INT\nVAR_INPUT\n    n : INT;\nEND_VAR\nRec := Helper(n);\nEND_FUNCTION\n"},
                      {"funcs.st", "Helper := t + 1;\n", "Helper := Rec(n);\n"},
                      {"funcs.st", "Helper := Rec(n);\n", "// still a cycle\n"},
                      {"funcs.st", "t := n;\n", "t := 0;\n"}}),
              0U);
}

// A local of FB_Base used only by a derived FB in another file: its W0001 depends on that body.
TEST_F(LspIncrementalTest, LocalsNamedFromAnotherFile) {
    EXPECT_EQ(replay({{"derived.st", "extra := Helper(extra);\n", "spare := 2;\n"},
                      {"base.st", "q := count;\n", "q := count + 1;\n"},
                      {"main.st", "data.a := d.q;\n", "data.b := r;\n"}}),
              1U); // main.st alone
}

// main.st declares Scale a second time: E0101 is main.st's own (the duplicate declares nothing the
// other files see), answered by main.st with funcs.st's declarations. Then funcs.st moves the
// first Scale down: main.st's E0101 points there, so that edit is a full check.
TEST_F(LspIncrementalTest, RelatedLocationsFollowTheEdit) {
    EXPECT_EQ(replay({{"main.st", "END_PROGRAM\n",
                       "FUNCTION Scale : REAL\nVAR_INPUT\n    x : INT;\nEND_VAR\nScale := 1.0;\nEND_FUNCTION\n"},
                      {"funcs.st", "", "// a first line moves Scale down\n"}}),
              1U);
}

} // namespace
} // namespace takt::agent
