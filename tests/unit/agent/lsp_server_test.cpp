// `takt lsp` in process: the lifecycle rules of LSP 3.17 and each feature over a copy of
// examples/demo, as an editor drives them (open, edit, ask).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include "lsp/lsp_text.h"
#include "rpc/rpc_json.h"
#include "support/paths.h"
#include "takt/agent/lsp_server.h"
#include "takt/compiler/formatter.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;

class LspServerTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("takt_lsp_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::copy(fs::path(TAKT_SOURCE_DIR) / "examples" / "demo", dir_, fs::copy_options::recursive);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Sends one message; returns every body the server answers with, parsed.
    std::vector<rapidjson::Document> send(const std::string& body) {
        std::vector<rapidjson::Document> out;
        for (const std::string& r : server_.handleMessage(body)) {
            rapidjson::Document d;
            d.Parse(r.data(), r.size());
            EXPECT_FALSE(d.HasParseError()) << r;
            out.push_back(std::move(d));
        }
        return out;
    }
    // Empty `params`: the member is left out (shutdown, as clients send it).
    rapidjson::Document request(const std::string& method, const std::string& params) {
        auto replies = send(R"({"jsonrpc":"2.0","id":)" + std::to_string(++id_) + R"(,"method":")" + method + "\"" +
                            (params.empty() ? "" : R"(,"params":)" + params) + "}");
        for (rapidjson::Document& d : replies) {
            if (d.HasMember("id")) {
                return std::move(d);
            }
        }
        ADD_FAILURE() << "no response to " << method;
        return rapidjson::Document();
    }
    std::vector<rapidjson::Document> notify(const std::string& method, const std::string& params) {
        return send(R"({"jsonrpc":"2.0","method":")" + method + "\"" +
                    (params.empty() ? "" : R"(,"params":)" + params) + "}");
    }
    void initialize() {
        const auto r = request("initialize", R"({"processId":null,"rootUri":)" + rpc::quoted(lsp::uriFromPath(dir_)) +
                                                 R"(,"capabilities":{}})");
        ASSERT_TRUE(r.HasMember("result")) << rpc::toJson(r);
        (void)notify("initialized", "{}");
    }
    std::string uri(const std::string& file) { return lsp::uriFromPath(dir_ / "src" / file); }
    std::string text(const std::string& file) {
        std::ifstream in(dir_ / "src" / file);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    std::vector<rapidjson::Document> open(const std::string& file) {
        return notify("textDocument/didOpen", R"({"textDocument":{"uri":)" + rpc::quoted(uri(file)) +
                                                  R"(,"languageId":"iecst","version":1,"text":)" +
                                                  rpc::quoted(text(file)) + "}}");
    }
    std::string at(const std::string& file, int line, int character) {
        return R"({"textDocument":{"uri":)" + rpc::quoted(uri(file)) + R"(},"position":{"line":)" +
               std::to_string(line) + R"(,"character":)" + std::to_string(character) + "}}";
    }
    // The diagnostics published for `file` among `msgs` (codes in order), or "<none>".
    static std::string codesFor(const std::vector<rapidjson::Document>& msgs, const std::string& fileUri) {
        for (const rapidjson::Document& m : msgs) {
            if (m.HasMember("method") && std::string(m["method"].GetString()) == "textDocument/publishDiagnostics" &&
                fileUri == m["params"]["uri"].GetString()) {
                std::string codes;
                for (const auto& d : m["params"]["diagnostics"].GetArray()) {
                    codes += std::string(codes.empty() ? "" : ",") + d["code"].GetString();
                }
                return codes;
            }
        }
        return "<none>";
    }

    fs::path dir_;
    LspServer server_{LspOptions{}};
    int id_ = 0;
};

TEST_F(LspServerTest, LifecycleErrorsKeepTheServerUp) {
    auto before = request("textDocument/hover", at("tank.st", 0, 0));
    EXPECT_EQ(before["error"]["code"].GetInt(), -32002);
    initialize();
    EXPECT_EQ(request("initialize", "{}")["error"]["code"].GetInt(), rpc::kInvalidRequest);
    EXPECT_EQ(request("textDocument/unknownThing", "{}")["error"]["code"].GetInt(), rpc::kMethodNotFound);
    EXPECT_EQ(send("{not json")[0]["error"]["code"].GetInt(), rpc::kParseError);
    EXPECT_EQ(request("textDocument/hover", "{}")["error"]["code"].GetInt(), rpc::kInvalidParams);
    EXPECT_TRUE(notify("$/cancelRequest", R"({"id":1})").empty()); // unknown notifications: silence
    EXPECT_TRUE(request("shutdown", "").HasMember("result"));
    EXPECT_EQ(request("textDocument/hover", at("tank.st", 0, 0))["error"]["code"].GetInt(), rpc::kInvalidRequest);
    EXPECT_FALSE(server_.exited());
    EXPECT_TRUE(notify("exit", "").empty());
    EXPECT_TRUE(server_.exited());
    EXPECT_EQ(server_.exitCode(), 0);
}

// An unpaired surrogate escape in a message body and a NUL byte (which ended the body early, so
// the request before it ran) are the parse error.
TEST_F(LspServerTest, UnpairedSurrogateAndNulByteAreParseErrors) {
    initialize();
    const std::string hover =
        R"({"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///x\udc00"}}})";
    auto r = send(hover);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0]["error"]["code"].GetInt(), rpc::kParseError);
    EXPECT_NE(std::string(r[0]["error"]["message"].GetString()).find("offset 96"), std::string::npos)
        << r[0]["error"]["message"].GetString();
    r = send(R"({"jsonrpc":"2.0","id":10,"method":"shutdown"})" + std::string(1, '\0') + "x");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0]["error"]["code"].GetInt(), rpc::kParseError);
    EXPECT_FALSE(server_.exited());
    EXPECT_TRUE(request("shutdown", "").HasMember("result")); // shutdown did not run before
}

// The specification types the params of shutdown and exit as void; clients that send
// `"params": null` there got -32600 for both, and the server never exited.
TEST_F(LspServerTest, ShutdownAndExitAcceptNullParams) {
    initialize();
    const auto r = send(R"({"jsonrpc":"2.0","id":20,"method":"shutdown","params":null})");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_TRUE(r[0].HasMember("result")) << "shutdown with null params was refused";
    EXPECT_TRUE(send(R"({"jsonrpc":"2.0","method":"exit","params":null})").empty());
    EXPECT_TRUE(server_.exited());
    EXPECT_EQ(server_.exitCode(), 0);
}

// A method that takes params still says which one is missing when they are null.
TEST_F(LspServerTest, NullParamsOfAMethodWithParamsAreInvalidParams) {
    initialize();
    const auto r = send(R"({"jsonrpc":"2.0","id":21,"method":"textDocument/hover","params":null})");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0]["error"]["code"].GetInt(), rpc::kInvalidParams);
}

TEST_F(LspServerTest, ExitWithoutShutdownIsCodeOne) {
    initialize();
    (void)notify("exit", "");
    EXPECT_TRUE(server_.exited());
    EXPECT_EQ(server_.exitCode(), 1);
}

TEST_F(LspServerTest, DiagnosticsFollowTheUnsavedBuffer) {
    initialize();
    EXPECT_EQ(codesFor(open("tank.st"), uri("tank.st")), "");
    // Line 26 (0-based 25) starts `Level := ScaleAnalog(`; an incremental edit makes it an unknown name.
    auto msgs = notify("textDocument/didChange",
                       R"({"textDocument":{"uri":)" + rpc::quoted(uri("tank.st")) +
                           R"(,"version":2},"contentChanges":[{"range":{"start":{"line":25,"character":0},)"
                           R"("end":{"line":25,"character":5}},"text":"Levle"}]})");
    EXPECT_EQ(codesFor(msgs, uri("tank.st")), "E0104");
    for (const auto& m : msgs) {
        if (m.HasMember("method") && uri("tank.st") == m["params"]["uri"].GetString()) {
            const auto& d = m["params"]["diagnostics"][0];
            EXPECT_EQ(d["range"]["start"]["line"].GetInt(), 25);
            EXPECT_EQ(d["range"]["start"]["character"].GetInt(), 0);
            EXPECT_EQ(d["range"]["end"]["character"].GetInt(), 5);
            EXPECT_EQ(m["params"]["version"].GetInt(), 2);
            EXPECT_NE(std::string(d["data"]["explanation"].GetString()).find("identifier"), std::string::npos);
        }
    }
    // The file on disk is untouched; closing the buffer brings its clean state back.
    EXPECT_EQ(
        codesFor(notify("textDocument/didClose", R"({"textDocument":{"uri":)" + rpc::quoted(uri("tank.st")) + "}}"),
                 uri("tank.st")),
        "");
}

// A PLCopen XML file in the sources is checked with the project (docs/plcopen.md): its diagnostics
// are published on the .xml file at the XML's lines, an unsaved edit of it is checked again, and
// hover works on the ST of its bodies.
TEST_F(LspServerTest, PlcopenXmlFilesAreCheckedAtTheirLines) {
    const std::string xml =
        "<?xml version=\"1.0\"?>\n"
        "<project xmlns=\"http://www.plcopen.org/xml/tc6_0201\" xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">\n"
        "  <types><dataTypes/><pous>\n"
        "    <pou name=\"Blinker\" pouType=\"functionBlock\">\n"
        "      <interface>\n"
        "        <outputVars><variable name=\"Lamp\"><type><BOOL/></type></variable></outputVars>\n"
        "      </interface>\n"
        "      <body><ST><xhtml:p><![CDATA[\n"
        "Lamp := NOT Lamp;\n"
        "]]></xhtml:p></ST></body>\n"
        "    </pou>\n"
        "  </pous></types>\n"
        "</project>\n";
    std::ofstream(dir_ / "src" / "blinker.xml") << xml;
    initialize();
    EXPECT_EQ(codesFor(open("blinker.xml"), uri("blinker.xml")), "");
    // Line 9 (0-based 8) is `Lamp := NOT Lamp;`: `Lamp :=` becomes `Lmap :=`.
    auto msgs = notify("textDocument/didChange",
                       R"({"textDocument":{"uri":)" + rpc::quoted(uri("blinker.xml")) +
                           R"(,"version":2},"contentChanges":[{"range":{"start":{"line":8,"character":0},)"
                           R"("end":{"line":8,"character":4}},"text":"Lmap"}]})");
    EXPECT_EQ(codesFor(msgs, uri("blinker.xml")), "E0104");
    for (const auto& m : msgs) {
        if (m.HasMember("method") && uri("blinker.xml") == m["params"]["uri"].GetString()) {
            const auto& d = m["params"]["diagnostics"][0];
            EXPECT_EQ(d["range"]["start"]["line"].GetInt(), 8);
            EXPECT_EQ(d["range"]["start"]["character"].GetInt(), 0);
        }
    }
    const auto hover = request("textDocument/hover", at("blinker.xml", 8, 14)); // the second `Lamp`
    ASSERT_TRUE(hover["result"].IsObject()) << rpc::toJson(hover);
    EXPECT_NE(std::string(hover["result"]["contents"]["value"].GetString()).find("Lamp : BOOL"), std::string::npos)
        << rpc::toJson(hover);
    // Formatting would write the translated ST over the XML: refused.
    const auto format =
        request("textDocument/formatting", R"({"textDocument":{"uri":)" + rpc::quoted(uri("blinker.xml")) +
                                               R"(},"options":{"tabSize":4,"insertSpaces":true}})");
    ASSERT_TRUE(format.HasMember("error")) << rpc::toJson(format);
    EXPECT_EQ(std::string(format["error"]["message"].GetString()),
              "'blinker.xml' is PLCopen XML: takt formats ST files only");
}

TEST_F(LspServerTest, AnEditInOneFileReportsInAnother) {
    initialize();
    (void)open("scaling.st");
    // Renaming the FUNCTION breaks its callers in tank.st (and elsewhere): the whole project is checked.
    const std::string t = text("scaling.st");
    const std::size_t at = t.find("ScaleAnalog");
    ASSERT_NE(at, std::string::npos);
    const lsp::Position p = lsp::positionOf(t, at);
    auto msgs =
        notify("textDocument/didChange", R"({"textDocument":{"uri":)" + rpc::quoted(uri("scaling.st")) +
                                             R"(,"version":2},"contentChanges":[{"range":{"start":{"line":)" +
                                             std::to_string(p.line) + R"(,"character":)" + std::to_string(p.character) +
                                             R"(},"end":{"line":)" + std::to_string(p.line) + R"(,"character":)" +
                                             std::to_string(p.character + 11) + R"(}},"text":"ScaleAnalogX"}]})");
    EXPECT_NE(codesFor(msgs, uri("tank.st")).find("E0103"), std::string::npos) << codesFor(msgs, uri("tank.st"));
}

TEST_F(LspServerTest, FilesChangedOnDiskAreCheckedAgain) {
    initialize();
    EXPECT_EQ(codesFor(open("tank.st"), uri("tank.st")), "");
    // Another tool renames the FUNCTION on disk: tank.st (open, unchanged) now calls an unknown POU.
    std::string scaling = text("scaling.st");
    scaling.replace(scaling.find("ScaleAnalog"), 11, "ScaleAnalogX");
    std::ofstream(dir_ / "src" / "scaling.st") << scaling;
    const auto msgs = notify("workspace/didChangeWatchedFiles",
                             R"({"changes":[{"uri":)" + rpc::quoted(uri("scaling.st")) + R"(,"type":2}]})");
    EXPECT_NE(codesFor(msgs, uri("tank.st")).find("E0103"), std::string::npos) << codesFor(msgs, uri("tank.st"));
}

TEST_F(LspServerTest, HoverShowsDeclarationTypeDocAndRange) {
    initialize();
    (void)open("tank.st");
    // `ELSIF Level <= StartLevel` (line 30, 0-based 29): StartLevel is a REAL input with a comment.
    const auto r = request("textDocument/hover", at("tank.st", 29, 20));
    const std::string md = r["result"]["contents"]["value"].GetString();
    EXPECT_NE(md.find("VAR_INPUT StartLevel : REAL := 40.0"), std::string::npos) << md;
    EXPECT_NE(md.find("pump on below"), std::string::npos) << md;
    const auto i = request("textDocument/hover", at("tank.st", 7, 5)); // LevelRaw : INT
    EXPECT_NE(std::string(i["result"]["contents"]["value"].GetString()).find("-32768..32767"), std::string::npos);
    EXPECT_TRUE(request("textDocument/hover", at("tank.st", 0, 1))["result"].IsNull()); // inside a comment
}

TEST_F(LspServerTest, DefinitionCrossesFiles) {
    initialize();
    (void)open("tank.st");
    const auto r = request("textDocument/definition", at("tank.st", 25, 12)); // ScaleAnalog(
    ASSERT_TRUE(r["result"].IsObject()) << rpc::toJson(r);
    EXPECT_EQ(std::string(r["result"]["uri"].GetString()), uri("scaling.st"));
    const std::string s = text("scaling.st");
    const lsp::Position p = lsp::positionOf(s, s.find("ScaleAnalog"));
    EXPECT_EQ(r["result"]["range"]["start"]["line"].GetUint(), p.line);
}

TEST_F(LspServerTest, ReferencesAreTheUsesOfThatDeclaration) {
    initialize();
    (void)open("tank.st");
    // `Level` of FB_TankLevel (VAR_OUTPUT, line 15); every location reads "Level".
    const auto r = request("textDocument/references", R"({"textDocument":{"uri":)" + rpc::quoted(uri("tank.st")) +
                                                          R"(},"position":{"line":14,"character":5},)"
                                                          R"("context":{"includeDeclaration":true}})");
    ASSERT_TRUE(r["result"].IsArray());
    const std::string t = text("tank.st");
    std::vector<std::uint32_t> lines;
    for (const auto& loc : r["result"].GetArray()) {
        if (uri("tank.st") != loc["uri"].GetString()) {
            continue;
        }
        const lsp::Position s{loc["range"]["start"]["line"].GetUint(), loc["range"]["start"]["character"].GetUint()};
        const lsp::Position e{loc["range"]["end"]["line"].GetUint(), loc["range"]["end"]["character"].GetUint()};
        EXPECT_EQ(t.substr(lsp::offsetOf(t, s), lsp::offsetOf(t, e) - lsp::offsetOf(t, s)), "Level");
        lines.push_back(s.line);
    }
    for (std::uint32_t expected : {14u, 25u, 27u, 29u, 30u, 35u}) {
        EXPECT_NE(std::find(lines.begin(), lines.end(), expected), lines.end()) << expected;
    }
    // LevelAtStart and LevelRaw are other names: not among them.
    EXPECT_EQ(std::count(lines.begin(), lines.end(), 30u), 1); // `LevelAtStart := Level;`
}

TEST_F(LspServerTest, FormattingGivesTheFormattersText) {
    initialize();
    const std::string messy = "program P\nvar x:int;end_var\nx:=x+1;\nend_program\n";
    fs::create_directories(dir_ / "src");
    (void)notify("textDocument/didOpen", R"({"textDocument":{"uri":)" + rpc::quoted(uri("messy.st")) +
                                             R"(,"languageId":"iecst","version":1,"text":)" + rpc::quoted(messy) +
                                             "}}");
    const auto r = request("textDocument/formatting", R"({"textDocument":{"uri":)" + rpc::quoted(uri("messy.st")) +
                                                          R"(},"options":{"tabSize":4,"insertSpaces":true}})");
    ASSERT_TRUE(r["result"].IsArray()) << rpc::toJson(r);
    ASSERT_EQ(r["result"].Size(), 1u);
    compiler::DiagnosticSink sink;
    const compiler::FormatResult expected = compiler::formatSource(compiler::SourceFile(0, "messy.st", messy), sink);
    ASSERT_TRUE(expected.ok && expected.changed);
    EXPECT_EQ(std::string(r["result"][0]["newText"].GetString()), expected.text);
    (void)notify("textDocument/didChange", R"({"textDocument":{"uri":)" + rpc::quoted(uri("messy.st")) +
                                               R"(,"version":2},"contentChanges":[{"text":"PROGRAM P x := ; END"}]})");
    EXPECT_EQ(request("textDocument/formatting",
                      R"({"textDocument":{"uri":)" + rpc::quoted(uri("messy.st")) + "}}")["error"]["code"]
                  .GetInt(),
              -32803);
}

TEST_F(LspServerTest, SymbolsOfTheDocumentAndTheWorkspace) {
    initialize();
    (void)open("tank.st");
    const auto d =
        request("textDocument/documentSymbol", R"({"textDocument":{"uri":)" + rpc::quoted(uri("tank.st")) + "}}");
    ASSERT_TRUE(d["result"].IsArray() && d["result"].Size() == 1) << rpc::toJson(d);
    EXPECT_EQ(std::string(d["result"][0]["name"].GetString()), "FB_TankLevel");
    EXPECT_EQ(d["result"][0]["kind"].GetInt(), 5);
    EXPECT_GE(d["result"][0]["children"].Size(), 13u);
    const auto w = request("workspace/symbol", R"({"query":"tanklev"})");
    ASSERT_TRUE(w["result"].IsArray());
    ASSERT_GE(w["result"].Size(), 1u);
    EXPECT_EQ(std::string(w["result"][0]["name"].GetString()), "FB_TankLevel");
}

TEST_F(LspServerTest, SourcesRootOfRuntimeTomlIsHonoured) {
    fs::rename(dir_ / "src", dir_ / "st");
    {
        std::ofstream toml(dir_ / "runtime.toml", std::ios::app);
        toml << "";
    }
    std::string toml;
    {
        std::ifstream in(dir_ / "runtime.toml");
        toml.assign(std::istreambuf_iterator<char>(in), {});
    }
    toml.replace(toml.find("[build]\n"), 8, "[build]\nsources_root = \"st\"\n");
    std::ofstream(dir_ / "runtime.toml") << toml;
    initialize();
    const std::string file = (dir_ / "st" / "tank.st").string();
    std::ifstream in(file);
    const std::string t{std::istreambuf_iterator<char>(in), {}};
    auto msgs =
        notify("textDocument/didOpen", R"({"textDocument":{"uri":)" + rpc::quoted(lsp::uriFromPath(file)) +
                                           R"(,"languageId":"iecst","version":1,"text":)" + rpc::quoted(t) + "}}");
    EXPECT_EQ(codesFor(msgs, lsp::uriFromPath(file)), ""); // ScaleAnalog found in st/scaling.st
}

TEST_F(LspServerTest, CompletionOffersScopeMembersAndKeywords) {
    initialize();
    (void)open("tank.st");
    const auto labels = [&](int line, int character) {
        std::vector<std::string> out;
        const auto r = request("textDocument/completion", at("tank.st", line, character));
        EXPECT_TRUE(r["result"].IsArray()) << rpc::toJson(r);
        for (const auto& item : r["result"].GetArray()) {
            out.emplace_back(item["label"].GetString());
        }
        return out;
    };
    const auto has = [](const std::vector<std::string>& v, const char* x) {
        return std::find(v.begin(), v.end(), x) != v.end();
    };
    // `DryRun := DryRunTimer.Q;` (line 37): after the dot, the members of TON only.
    const auto members = labels(36, 22);
    EXPECT_TRUE(has(members, "Q") && has(members, "ET") && has(members, "PT") && has(members, "IN"));
    EXPECT_FALSE(has(members, "Level"));
    const auto body = labels(26, 0); // the blank line after it
    for (const char* name :
         {"Level", "LevelRaw", "DryRunTimer", "ScaleAnalog", "FB_TankLevel", "TON", "IF", "FOR … END_FOR"}) {
        EXPECT_TRUE(has(body, name)) << name;
    }
}

// After `arr[i].`, `f().`, `fb.member.` and `p^.`: the members of the type of what precedes the
// dot, typed through the semantic model.
TEST_F(LspServerTest, CompletionAfterChains) {
    std::ofstream(dir_ / "src" / "chain.st")
        << "TYPE ST_Point :\nSTRUCT\n    x : INT;\n    y : INT;\nEND_STRUCT\nEND_TYPE\n"
           "FUNCTION_BLOCK FB_Inner\nVAR_OUTPUT\n    done : BOOL;\nEND_VAR\n"
           "END_FUNCTION_BLOCK\nFUNCTION_BLOCK FB_Outer\nVAR_OUTPUT\n"
           "    inner : FB_Inner;\nEND_VAR\nEND_FUNCTION_BLOCK\n"
           "FUNCTION MakePoint : ST_Point\nMakePoint.x := 1;\nEND_FUNCTION\n"
           "PROGRAM ChainMain\nVAR\n    pts : ARRAY[1..3] OF ST_Point;\n"
           "    outer : FB_Outer;\n    p : POINTER TO ST_Point;\n    i : INT;\n"
           "    b : BOOL;\nEND_VAR\ni := pts[i + 1].x;\ni := MakePoint().y;\n"
           "b := outer.inner.done;\ni := p^.x;\nEND_PROGRAM\n";
    initialize();
    (void)open("chain.st");
    const auto labels = [&](int line, int character) {
        std::string out;
        const auto r = request("textDocument/completion", at("chain.st", line, character));
        EXPECT_TRUE(r["result"].IsArray()) << rpc::toJson(r);
        for (const auto& item : r["result"].GetArray()) {
            out += std::string(out.empty() ? "" : ",") + item["label"].GetString();
        }
        return out;
    };
    EXPECT_EQ(labels(27, 16), "x,y");  // pts[i + 1].
    EXPECT_EQ(labels(28, 17), "x,y");  // MakePoint().
    EXPECT_EQ(labels(29, 17), "done"); // outer.inner.
    EXPECT_EQ(labels(30, 8), "x,y");   // p^.
}

// After `fb.`: what the compiler lets that code name. Outside the FB neither its PRIVATE nor its
// PROTECTED methods and properties, nor its VAR, VAR_IN_OUT and VAR_TEMP; from an FB extending
// it the PROTECTED ones too; never the compiler's own names (`IN$edge`, `Target$set`), though a
// SET-only PROPERTY is offered by its name.
TEST_F(LspServerTest, CompletionOffersOnlyAccessibleMembers) {
    std::ofstream(dir_ / "src" / "access.st")
        << "FUNCTION_BLOCK FB_Base\nVAR_INPUT\n    Start : BOOL R_EDGE;\nEND_VAR\n"            // 1-4
           "VAR_OUTPUT\n    Done : BOOL;\nEND_VAR\nVAR\n    count : INT;\nEND_VAR\n"           // 5-10
           "METHOD PRIVATE Secret\n    count := 1;\nEND_METHOD\n"                              // 11-13
           "METHOD PROTECTED Shared\n    Secret();\nEND_METHOD\n"                              // 14-16
           "METHOD Run\nEND_METHOD\n"                                                          // 17-18
           "PROTECTED PROPERTY Level : INT\nGET\n    Level := count;\nEND_GET\nEND_PROPERTY\n" // 19-23
           "PROPERTY Target : INT\nSET\n    count := Target;\nEND_SET\nEND_PROPERTY\n"         // 24-28
           "END_FUNCTION_BLOCK\n"                                                              // 29
           "FUNCTION_BLOCK FB_Derived EXTENDS FB_Base\nVAR\n    peer : FB_Base;\nEND_VAR\n"    // 30-33
           "peer.Run();\nEND_FUNCTION_BLOCK\n"                                                 // 34-35
           "PROGRAM AccessMain\nVAR\n    b : FB_Base;\nEND_VAR\nb.Run();\nEND_PROGRAM\n";      // 36-41
    initialize();
    (void)open("access.st");
    const auto labels = [&](int line, int character) {
        std::set<std::string> out;
        const auto r = request("textDocument/completion", at("access.st", line, character));
        EXPECT_TRUE(r["result"].IsArray()) << rpc::toJson(r);
        for (const auto& item : r["result"].GetArray()) {
            out.insert(item["label"].GetString());
        }
        return out;
    };
    EXPECT_EQ(labels(39, 2), (std::set<std::string>{"Done", "Run", "Start", "Target"}));                    // b.
    EXPECT_EQ(labels(33, 5), (std::set<std::string>{"Done", "Level", "Run", "Shared", "Start", "Target"})); // peer.
    const auto inside = labels(11, 4); // in FB_Base's METHOD Secret: its names, none generated
    EXPECT_TRUE(inside.contains("Target") && inside.contains("count"));
    for (const std::string& name : inside) {
        EXPECT_EQ(name.find('$'), std::string::npos) << name;
    }
}

TEST_F(LspServerTest, SignatureHelpFollowsTheArgument) {
    initialize();
    (void)open("tank.st");
    // `Level := ScaleAnalog(Raw := LevelRaw, RawLow := 0, ...`: the cursor after `RawLow := `.
    const auto r = request("textDocument/signatureHelp", at("tank.st", 25, 48));
    ASSERT_TRUE(r["result"].IsObject()) << rpc::toJson(r);
    EXPECT_EQ(std::string(r["result"]["signatures"][0]["label"].GetString()),
              "ScaleAnalog(Raw : INT, RawLow : INT, RawHigh : INT, EngLow : REAL, EngHigh : REAL) : REAL");
    EXPECT_EQ(r["result"]["activeParameter"].GetInt(), 1);
    EXPECT_TRUE(request("textDocument/signatureHelp", at("tank.st", 28, 3))["result"].IsNull());
}

// Standard functions show each overload with the generic families they take; a standard FB
// instance its inputs and outputs; the active parameter follows commas and formal names.
TEST_F(LspServerTest, SignatureHelpOfStandardFunctionsAndFbs) {
    std::ofstream(dir_ / "src" / "sig.st") << "PROGRAM SigMain\nVAR\n    t : TON;\n    x : INT;\nEND_VAR\n"
                                              "x := MAX(1, x, 3);\nt(IN := TRUE, PT := T#1s);\n"
                                              "x := LIMIT(0, x, 10);\nEND_PROGRAM\n";
    initialize();
    (void)open("sig.st");
    const auto help = [&](int line, int character) {
        const auto r = request("textDocument/signatureHelp", at("sig.st", line, character));
        EXPECT_TRUE(r["result"].IsObject()) << rpc::toJson(r);
        const auto& res = r["result"];
        const auto& sig = res["signatures"][res["activeSignature"].GetUint()];
        return std::string(sig["label"].GetString()) + " @" + std::to_string(res["activeParameter"].GetUint());
    };
    EXPECT_EQ(help(5, 12), "MAX(IN1 : ANY_ELEMENTARY, IN2 : ANY_ELEMENTARY, …) : ANY_ELEMENTARY @1");
    EXPECT_EQ(help(5, 15), "MAX(IN1 : ANY_ELEMENTARY, IN2 : ANY_ELEMENTARY, …) : ANY_ELEMENTARY @1"); // IN3 extends IN2
    EXPECT_EQ(help(6, 20), "TON(IN : BOOL, PT : TIME, Q => BOOL, ET => TIME) @1");
    EXPECT_EQ(help(7, 17), "LIMIT(MN : ANY_ELEMENTARY, IN : ANY_ELEMENTARY, MX : ANY_ELEMENTARY) : ANY_ELEMENTARY @2");
}

TEST_F(LspServerTest, RenameEditsEveryUseAndRefusesClashes) {
    initialize();
    (void)open("tank.st");
    const auto renameTo = [&](const char* name) {
        return request("textDocument/rename", R"({"textDocument":{"uri":)" + rpc::quoted(uri("tank.st")) +
                                                  R"(},"position":{"line":20,"character":6},"newName":")" + name +
                                                  R"("})");
    };
    const auto ok = renameTo("LevelAtBegin");
    ASSERT_TRUE(ok["result"].IsObject()) << rpc::toJson(ok);
    const auto& edits = ok["result"]["changes"][uri("tank.st").c_str()];
    ASSERT_EQ(edits.Size(), 3u);
    EXPECT_EQ(edits[0]["range"]["start"]["line"].GetInt(), 20);
    EXPECT_EQ(edits[1]["range"]["start"]["line"].GetInt(), 30);
    EXPECT_EQ(edits[2]["range"]["start"]["line"].GetInt(), 35);
    EXPECT_EQ(std::string(edits[0]["newText"].GetString()), "LevelAtBegin");
    EXPECT_EQ(renameTo("level")["error"]["code"].GetInt(), -32803); // a clash, in any case
    EXPECT_EQ(renameTo("END_IF")["error"]["code"].GetInt(), -32803);
    EXPECT_EQ(renameTo("9lives")["error"]["code"].GetInt(), -32803);
}

TEST_F(LspServerTest, FoldingRangesFollowTheBlocks) {
    initialize();
    (void)open("tank.st");
    const auto r =
        request("textDocument/foldingRange", R"({"textDocument":{"uri":)" + rpc::quoted(uri("tank.st")) + "}}");
    ASSERT_TRUE(r["result"].IsArray()) << rpc::toJson(r);
    std::vector<std::pair<int, int>> ranges;
    for (const auto& f : r["result"].GetArray()) {
        ranges.emplace_back(f["startLine"].GetInt(), f["endLine"].GetInt());
    }
    // FUNCTION_BLOCK (4..41), VAR_INPUT (5..12), VAR_OUTPUT, VAR, IF (27..32), the header comment (0..3).
    for (const std::pair<int, int>& expected : {std::pair{4, 40}, {5, 11}, {13, 17}, {19, 22}, {27, 31}, {0, 3}}) {
        EXPECT_NE(std::find(ranges.begin(), ranges.end(), expected), ranges.end())
            << expected.first << ".." << expected.second;
    }
    EXPECT_EQ(ranges.size(), 6u);
}

TEST_F(LspServerTest, SemanticTokensClassifyWhatEachNameIs) {
    initialize();
    (void)open("tank.st");
    const auto r =
        request("textDocument/semanticTokens/full", R"({"textDocument":{"uri":)" + rpc::quoted(uri("tank.st")) + "}}");
    ASSERT_TRUE(r["result"]["data"].IsArray()) << rpc::toJson(r);
    const auto& data = r["result"]["data"];
    ASSERT_EQ(data.Size() % 5, 0u);
    // Decoded: (line, character) -> (type, modifiers); the legend is the one initialize announced.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::uint32_t, std::uint32_t>> at;
    std::uint32_t line = 0;
    std::uint32_t ch = 0;
    for (rapidjson::SizeType i = 0; i < data.Size(); i += 5) {
        line += data[i].GetUint();
        ch = data[i].GetUint() == 0 ? ch + data[i + 1].GetUint() : data[i + 1].GetUint();
        at[{line, ch}] = {data[i + 3].GetUint(), data[i + 4].GetUint()};
    }
    enum : std::uint32_t { kClass = 2, kParameter = 6, kVariable = 7, kFunction = 10 };
    using Kind = std::pair<std::uint32_t, std::uint32_t>;
    const auto kindAt = [&](std::uint32_t l, std::uint32_t c) {
        const auto it = at.find({l, c});
        return it == at.end() ? Kind{99, 99} : it->second;
    };
    EXPECT_EQ(kindAt(25, 0), Kind(kParameter, 0u)); // Level (VAR_OUTPUT)
    EXPECT_EQ(kindAt(25, 9), Kind(kFunction, 0u));  // ScaleAnalog
    EXPECT_EQ(kindAt(21, 4), Kind(kVariable, 1u));  // DryRunTimer where declared
    EXPECT_EQ(kindAt(21, 19), Kind(kClass, 4u));    // TON, of the standard library
    EXPECT_EQ(kindAt(7, 17), Kind(1, 4));           // INT: an elementary type
    EXPECT_EQ(kindAt(0, 0), Kind(99, 99));          // nothing inside the comment
}

// The CODESYS-name hints as quick fixes: W1009 writes the IEC input name, W1010 the explicit
// conversion the compiler computes.
TEST_F(LspServerTest, CodeActionsForTheCodesysHints) {
    std::ofstream(dir_ / "src" / "hints.st")
        << "PROGRAM Hints\nVAR\n    c : CTU;\n    d : DINT;\n    i : INT;\n"
           "END_VAR\nc(CU := TRUE, RESET := FALSE, PV := 3);\ni := d;\nEND_PROGRAM\n";
    initialize();
    std::string diags;
    for (const auto& m : open("hints.st")) {
        if (m.HasMember("method") && uri("hints.st") == m["params"]["uri"].GetString()) {
            diags = rpc::toJson(m["params"]["diagnostics"]);
        }
    }
    ASSERT_NE(diags.find("W1009"), std::string::npos) << diags;
    ASSERT_NE(diags.find("W1010"), std::string::npos) << diags;
    const auto r =
        request("textDocument/codeAction", R"({"textDocument":{"uri":)" + rpc::quoted(uri("hints.st")) +
                                               R"(},"range":{"start":{"line":0,"character":0},"end":{"line":0,)"
                                               R"("character":0}},"context":{"diagnostics":)" +
                                               diags + "}}");
    ASSERT_TRUE(r["result"].IsArray()) << rpc::toJson(r);
    std::map<std::string, std::string> fixes; // title -> "line:from-to newText"
    for (const auto& a : r["result"].GetArray()) {
        const auto& e = a["edit"]["changes"][uri("hints.st").c_str()][0];
        fixes[a["title"].GetString()] = std::to_string(e["range"]["start"]["line"].GetInt()) + ":" +
                                        std::to_string(e["range"]["start"]["character"].GetInt()) + "-" +
                                        std::to_string(e["range"]["end"]["character"].GetInt()) + " " +
                                        e["newText"].GetString();
    }
    EXPECT_EQ(fixes["Use the IEC name 'R'"], "6:14-19 R");
    EXPECT_EQ(fixes["Convert explicitly: DINT_TO_INT(d)"], "7:5-6 DINT_TO_INT(d)");
}

TEST_F(LspServerTest, CodeActionsFixWhatTheDiagnosticsName) {
    initialize();
    (void)open("tank.st");
    // The diagnostics as published come back in the request, as clients send them.
    const auto published = [&](const std::vector<rapidjson::Document>& msgs, const std::string& u) {
        for (const auto& m : msgs) {
            if (m.HasMember("method") && u == m["params"]["uri"].GetString()) {
                return rpc::toJson(m["params"]["diagnostics"]);
            }
        }
        return std::string("[]");
    };
    const auto actions = [&](const std::string& u, const std::string& diags) {
        return request("textDocument/codeAction", R"({"textDocument":{"uri":)" + rpc::quoted(u) +
                                                      R"(},"range":{"start":{"line":0,"character":0},"end":{"line":0,)"
                                                      R"("character":0}},"context":{"diagnostics":)" +
                                                      diags + "}}");
    };
    const std::string unknown = published(
        notify("textDocument/didChange", R"({"textDocument":{"uri":)" + rpc::quoted(uri("tank.st")) +
                                             R"(,"version":2},"contentChanges":[{"range":{"start":{"line":25,)"
                                             R"("character":0},"end":{"line":25,"character":5}},"text":"Levle"}]})"),
        uri("tank.st"));
    const auto declare = actions(uri("tank.st"), unknown);
    ASSERT_TRUE(declare["result"].IsArray() && declare["result"].Size() == 1) << rpc::toJson(declare);
    const auto& edit = declare["result"][0]["edit"]["changes"][uri("tank.st").c_str()][0];
    EXPECT_EQ(std::string(edit["newText"].GetString()), "    Levle : BOOL;\n");
    EXPECT_EQ(edit["range"]["start"]["line"].GetInt(), 23); // before the END_VAR of the VAR block
    EXPECT_EQ(edit["range"]["start"]["character"].GetInt(), 0);

    const std::string open = "PROGRAM P\nVAR x : INT; END_VAR\nIF x > 1 THEN\n    x := 0;\nEND_PROGRAM\n";
    const std::string missing = published(
        notify("textDocument/didOpen", R"({"textDocument":{"uri":)" + rpc::quoted(uri("open.st")) +
                                           R"(,"languageId":"iecst","version":1,"text":)" + rpc::quoted(open) + "}}"),
        uri("open.st"));
    const auto end = actions(uri("open.st"), missing);
    ASSERT_TRUE(end["result"].IsArray() && end["result"].Size() == 1) << rpc::toJson(end) << missing;
    const auto& insert = end["result"][0]["edit"]["changes"][uri("open.st").c_str()][0];
    EXPECT_EQ(std::string(insert["newText"].GetString()), "END_IF;\n");
    EXPECT_EQ(insert["range"]["start"]["line"].GetInt(), 4);
}

TEST(LspDocs, EditorMdNamesEveryMethod) {
    std::ifstream in(fs::path(TAKT_SOURCE_DIR) / "docs" / "editor.md");
    const std::string doc{std::istreambuf_iterator<char>(in), {}};
    for (const std::string_view name : lspMethodNames()) {
        EXPECT_NE(doc.find("`" + std::string(name) + "`"), std::string::npos) << name;
    }
}

TEST(LspText, Utf16PositionsAndUris) {
    const std::string t = "a\n(* \xC3\xA4\xF0\x9F\x98\x80 *) x\n";
    EXPECT_EQ(lsp::offsetOf(t, {1, 3}), 5u);  // after "(* "
    EXPECT_EQ(lsp::offsetOf(t, {1, 4}), 7u);  // after the 2-byte ä (one unit)
    EXPECT_EQ(lsp::offsetOf(t, {1, 6}), 11u); // after the 4-byte emoji (two units)
    EXPECT_EQ(lsp::positionOf(t, 11).character, 6u);
    EXPECT_EQ(lsp::offsetOf(t, {1, 99}), t.size() - 1); // clamped to the line end
    EXPECT_EQ(lsp::offsetOf(t, {9, 0}), t.size());
    std::filesystem::path p;
    ASSERT_TRUE(lsp::pathFromUri("file:///tmp/a%20b/c%23.st", p));
    EXPECT_EQ(p, "/tmp/a b/c#.st");
    EXPECT_EQ(lsp::uriFromPath("/tmp/a b/c#.st"), "file:///tmp/a%20b/c%23.st");
    EXPECT_FALSE(lsp::pathFromUri("untitled:Untitled-1", p));
}

} // namespace
} // namespace takt::agent
