// The Agent API's project methods load a project the way `takt check` does (compiler::Frontend:
// trust-lsp.toml include paths, libraries by path and vendor profile, runtime.toml [build]) and
// read every file through the workspace: on a truST project with a library, lsp.diagnostics,
// runtime.build and runtime.validate report what checkProject reports, an unsaved buffer is
// checked with the library too, and a library outside the workspace root is refused with E0024
// at the key naming it, nothing read from it.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/json.h"
#include "support/temp_dir.h"
#include "takt/agent/agent_server.h"
#include "takt/compiler/project.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;

using test::at;

const std::map<std::string, std::string> kFiles = {
    {"lib/trust-lsp.toml",
     "[package]\nname = \"Motion\"\nversion = \"1.2.0\"\n\n[project]\ninclude_paths = [\"st\"]\n"},
    {"lib/st/axis.st", "FUNCTION_BLOCK FB_Axis\nVAR_INPUT\n    enable : BOOL;\nEND_VAR\nVAR_OUTPUT\n    ready : BOOL;\n"
                       "END_VAR\nVAR\n    spare : INT;\nEND_VAR\nready := enable;\nEND_FUNCTION_BLOCK\n\n"
                       "FUNCTION Scale : REAL\nVAR_INPUT\n    x : INT;\nEND_VAR\nScale := INT_TO_REAL(x) * 0.5;\n"
                       "END_FUNCTION\n"},
    {"app/trust-lsp.toml", "[project]\ninclude_paths = [\"sources\", \"shared\"]\nvendor_profile = \"mitsubishi\"\n\n"
                           "[dependencies]\nMotion = { path = \"../lib\", version = \"1.2.0\" }\n"},
    {"app/sources/main.st", "PROGRAM Main\nVAR\n    axis : FB_Axis;\n    edge : DIFU;\n    speed : REAL;\n"
                            "    start : BOOL;\n    unused : INT;\n    n : INT;\nEND_VAR\naxis(enable := start);\n"
                            "edge(axis.ready);\nspeed := Scale(3);\nn := Twice(2);\nEND_PROGRAM\n"},
    {"app/shared/util.st", "FUNCTION Twice : INT\nVAR_INPUT\n    v : INT;\nEND_VAR\nTwice := v * 2;\nEND_FUNCTION\n"},
};

std::string line(const std::string& path, unsigned l, unsigned c, std::string_view severity, std::string_view code,
                 std::string_view message) {
    return fmt::format("{}:{}:{} {} {} {}", path, l, c, severity, code, message);
}

// What `takt check` reports on `dir` (its diagnostics through the compiler's JSON renderer).
std::vector<std::string> checkLines(const fs::path& dir) {
    compiler::ProjectInput input;
    input.directory = dir;
    const compiler::Project p = compiler::checkProject(input);
    EXPECT_TRUE(p.valid());
    rapidjson::Document doc;
    doc.Parse(compiler::renderJson(p.diagnostics, *p.sources).c_str());
    std::vector<std::string> out;
    for (const rapidjson::Value& d : doc.GetArray()) {
        out.push_back(line(d["path"].GetString(), d["line"].GetUint(), d["column"].GetUint(), d["severity"].GetString(),
                           d["code"].GetString(), d["message"].GetString()));
    }
    return out;
}

std::vector<std::string> issueLines(const rapidjson::Value& issues) {
    std::vector<std::string> out;
    for (const rapidjson::Value& d : issues.GetArray()) {
        out.push_back(line(d["path"].GetString(), d["line"].GetUint(), d["column"].GetUint(), d["severity"].GetString(),
                           d["code"].GetString(), d["message"].GetString()));
    }
    return out;
}

std::string jsonString(const std::string& s) {
    rapidjson::Document d;
    d.SetString(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), d.GetAllocator());
    return test::toJson(d);
}

class AgentFrontend : public ::testing::Test {
protected:
    void SetUp() override {
        for (const auto& [rel, text] : kFiles) {
            tmp_.write("ws/" + rel, text);
        }
        root_ = tmp_.path() / "ws";
    }

    rapidjson::Document call(const fs::path& workspace, const std::string& method, const std::string& params) {
        AgentOptions o;
        o.workspace = workspace;
        AgentServer server(o);
        EXPECT_TRUE(server.ok()) << server.error();
        rapidjson::Document d;
        const std::optional<std::string> r =
            server.handleLine(R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"(","params":)" + params + "}");
        d.Parse(r.value_or("null").c_str());
        EXPECT_TRUE(d.IsObject() && d.HasMember("result")) << method << " " << r.value_or("");
        return d;
    }

    test::TempDir tmp_;
    fs::path root_;
};

TEST_F(AgentFrontend, DiagnosticsOfATrustProjectAreThoseOfTaktCheck) {
    const std::vector<std::string> expected = checkLines(root_ / "app");
    ASSERT_FALSE(expected.empty()); // the unused local and the library FB's spare local are warned
    for (const std::string& l : expected) {
        EXPECT_EQ(l.find(" error "), std::string::npos) << l; // every library name resolves
    }
    const rapidjson::Document d = call(root_, "lsp.diagnostics", R"({"project":"app"})");
    EXPECT_EQ(issueLines(at(d, {"result", "issues"})), expected);
    EXPECT_EQ(at(d, {"result", "errors"}).GetUint(), 0u);

    // runtime.build compiles the same sources: it builds, as `takt build` does.
    const rapidjson::Document b = call(root_, "runtime.build", R"({"project":"app"})");
    EXPECT_EQ(test::toJson(at(b, {"result", "status"})), "\"ok\"") << test::toJson(b);
    EXPECT_TRUE(fs::exists(root_ / "app/program.stbc"));
}

// harness.load of a project runs what `takt build` compiles: the library's FB and the include
// paths' function are there (before, only app/src/ was read: "no source files").
TEST_F(AgentFrontend, TheHarnessLoadsATrustProjectWithItsLibraries) {
    AgentOptions o;
    o.workspace = root_;
    AgentServer server(o);
    ASSERT_TRUE(server.ok()) << server.error();
    rapidjson::Document d;
    d.Parse(server.handleLine(R"({"jsonrpc":"2.0","id":1,"method":"harness.load","params":{"project":"app"}})")
                .value_or("null")
                .c_str());
    ASSERT_TRUE(d.HasMember("result")) << test::toJson(d);
    (void)server.handleLine(R"({"jsonrpc":"2.0","id":3,"method":"harness.cycle","params":{"count":1}})");
    d.Parse(server.handleLine(R"({"jsonrpc":"2.0","id":4,"method":"harness.get_output","params":{"name":"Main.n"}})")
                .value_or("null")
                .c_str());
    const std::string value = test::toJson(at(d, {"result", "value"}));
    EXPECT_NE(value.find('4'), std::string::npos) << test::toJson(d); // Twice(2), from shared/
    // A library outside the workspace stops the load with its E0024.
    AgentOptions inner;
    inner.workspace = root_ / "app";
    AgentServer confined(inner);
    d.Parse(confined.handleLine(R"({"jsonrpc":"2.0","id":1,"method":"harness.load","params":{"project":"."}})")
                .value_or("null")
                .c_str());
    EXPECT_NE(test::toJson(d).find("E0024"), std::string::npos) << test::toJson(d);
}

TEST_F(AgentFrontend, AnUnsavedBufferIsCheckedWithTheLibraries) {
    const std::string edited = "PROGRAM Main\nVAR\n    axis : FB_Axis;\n    n : INT;\nEND_VAR\n"
                               "axis(enable := TRUE);\nn := Twice(axis.ready);\nn := Scale(1);\nEND_PROGRAM\n";
    const rapidjson::Document d = call(
        root_, "lsp.diagnostics", R"({"project":"app","path":"sources/main.st","content":)" + jsonString(edited) + "}");
    tmp_.write("ws/app/sources/main.st", edited); // what `takt check` would see after saving it
    std::vector<std::string> expected;
    for (std::string& l : checkLines(root_ / "app")) {
        if (l.starts_with("sources/main.st:")) {
            expected.push_back(std::move(l));
        }
    }
    ASSERT_FALSE(expected.empty()); // BOOL into INT, REAL into INT
    EXPECT_EQ(issueLines(at(d, {"result", "issues"})), expected);
}

TEST_F(AgentFrontend, ALibraryOutsideTheWorkspaceIsRefusedAtItsKey) {
    // The workspace is the project folder: ../lib lies above it.
    const rapidjson::Document d = call(root_ / "app", "lsp.diagnostics", R"({})");
    const std::vector<std::string> lines = issueLines(at(d, {"result", "issues"}));
    ASSERT_EQ(lines.size(), 1u) << ::testing::PrintToString(lines);
    EXPECT_TRUE(lines[0].starts_with("trust-lsp.toml:6:")) << lines[0];
    EXPECT_NE(lines[0].find("error E0024 dependencies.Motion.path: '../lib' ("), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("lies outside the Agent API's workspace root"), std::string::npos) << lines[0];
    // The same refusal for an include path, and runtime.build does not build.
    tmp_.write("ws/app/trust-lsp.toml", "[project]\ninclude_paths = [\"sources\", \"../lib/st\"]\n");
    const rapidjson::Document inc = call(root_ / "app", "lsp.diagnostics", R"({})");
    const std::vector<std::string> incLines = issueLines(at(inc, {"result", "issues"}));
    ASSERT_EQ(incLines.size(), 1u) << ::testing::PrintToString(incLines);
    EXPECT_NE(incLines[0].find("error E0024 project.include_paths: '../lib/st'"), std::string::npos) << incLines[0];
    const rapidjson::Document b = call(root_ / "app", "runtime.build", R"({})");
    EXPECT_EQ(test::toJson(at(b, {"result", "status"})), "\"error\"") << test::toJson(b);
    EXPECT_FALSE(fs::exists(root_ / "app/program.stbc"));
}

} // namespace
} // namespace takt::agent
