// Workspace confinement of the agent API: path payloads against a canary tree outside the
// root. Every payload must be -32001 for workspace.read, workspace.write (with
// create_parents) and workspace.project_info, with openat2 and with the component walk, and
// nothing outside the root may change.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "support/json.h"
#include "support/temp_dir.h"
#include "takt/agent/agent_server.h"

namespace takt::agent {
namespace {

namespace fs = std::filesystem;

using test::at;

std::string jsonString(const std::string& s) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return b.GetString();
}

// Path, size, mode and modification time of everything below `dir` except `skip`.
std::map<std::string, std::string> snapshot(const fs::path& dir, const fs::path& skip) {
    std::map<std::string, std::string> out;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
        if (it->path() == skip) {
            it.disable_recursion_pending();
            continue;
        }
        struct stat st {};
        ::lstat(it->path().c_str(), &st);
        std::ostringstream s;
        s << st.st_size << ' ' << st.st_mode << ' ' << st.st_mtim.tv_sec << '.' << st.st_mtim.tv_nsec;
        if (S_ISREG(st.st_mode)) {
            std::ifstream f(it->path(), std::ios::binary);
            s << ' ' << f.rdbuf();
        }
        out[it->path().string()] = s.str();
    }
    return out;
}

class Confinement : public ::testing::TestWithParam<bool> {
protected:
    void SetUp() override {
        const fs::path t = tmp_.path();
        root_ = t / "root";
        fs::create_directories(root_ / "sub");
        fs::create_directories(root_ / "proj/src");
        tmp_.write("root/sub/ok.txt", "inside");
        tmp_.write("root/proj/src/main.st", "PROGRAM Main\nEND_PROGRAM\n");
        tmp_.write("root_evil/secret.txt", "evil canary");
        tmp_.write("outside/canary.txt", "canary");
        fs::create_directories(t / "outside/dir");
        fs::create_symlink("../outside", root_ / "link_out");
        fs::create_symlink(t / "outside", root_ / "abs_link");
        fs::create_symlink("/proc/self/root", root_ / "proc_link");
        fs::create_symlink("/proc/self/fd", root_ / "fd_link");
        fs::create_symlink("/etc", root_ / "etc_link");
        fs::create_symlink("/etc/passwd", root_ / "file_link");
        fs::create_symlink("../root_evil", root_ / "evil_link");
        fs::create_symlink("loop_b", root_ / "loop_a");
        fs::create_symlink("loop_a", root_ / "loop_b");
        fs::create_symlink("../../outside", root_ / "sub/deep_link");
        fs::create_symlink("../outside/canary.txt", root_ / "canary_link");
        fs::create_symlink("sub/ok.txt", root_ / "link_in");
        fs::create_symlink("../outside/new.txt", root_ / "dangling_out");
        before_ = snapshot(t, root_);
    }

    std::vector<std::string> payloads() const {
        const std::string t = tmp_.path().string();
        return {"..",
                "../",
                "../..",
                "../outside/canary.txt",
                "../root_evil/secret.txt",
                "../root_evil",
                "../root_evil/new.txt",
                ".././root_evil/secret.txt",
                "../root/../outside/canary.txt",
                "../root/sub/ok.txt",
                "sub/../../outside/canary.txt",
                "sub/../../root_evil/secret.txt",
                "./../outside/canary.txt",
                "sub/./../../outside/canary.txt",
                "a/b/c/../../../../outside/canary.txt",
                "sub/../..",
                "../../../../../../../../etc/passwd",
                "/etc/passwd",
                "/",
                "//etc/passwd",
                t + "/outside/canary.txt",
                t + "/root/sub/ok.txt",
                t + "/root_evil/secret.txt",
                "/proc/self/root/etc/passwd",
                "/proc/self/cwd",
                "proc_link",
                "proc_link/etc/passwd",
                "fd_link/0",
                "link_out",
                "link_out/canary.txt",
                "link_out/new.txt",
                "link_out/dir/new.txt",
                "link_out/../outside/canary.txt",
                "abs_link/canary.txt",
                "abs_link/new.txt",
                "etc_link/passwd",
                "file_link",
                "evil_link/secret.txt",
                "evil_link/new.txt",
                "sub/deep_link/canary.txt",
                "sub/deep_link/new.txt",
                "canary_link",
                "dangling_out",
                "loop_a",
                "loop_a/x",
                std::string("sub/ok.txt\0/../../outside/canary.txt", 37),
                std::string("\0", 1),
                std::string("..\0", 3),
                std::string("sub\0", 4),
                "..\\..\\etc\\passwd",
                "sub\\..\\..\\outside\\canary.txt"};
    }

    std::unique_ptr<AgentServer> server() {
        AgentOptions o;
        o.workspace = root_;
        o.forceComponentWalk = GetParam();
        return std::make_unique<AgentServer>(o);
    }

    static rapidjson::Document call(AgentServer& s, const std::string& method, const std::string& params) {
        rapidjson::Document d;
        const std::optional<std::string> r =
            s.handleLine(R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"(","params":)" + params + "}");
        d.Parse(r.value_or("null").c_str());
        return d;
    }
    static int code(const rapidjson::Document& d) {
        return d.IsObject() && d.HasMember("error") ? at(d, {"error", "code"}).GetInt() : 0;
    }

    test::TempDir tmp_;
    fs::path root_;
    std::map<std::string, std::string> before_;
};

TEST_P(Confinement, EveryPayloadIsRefusedAndNothingOutsideChanges) {
    auto s = server();
    ASSERT_TRUE(s->ok()) << s->error();
    const std::vector<std::string> list = payloads();
    ASSERT_GE(list.size(), 40u);
    for (const std::string& p : list) {
        const std::string path = jsonString(p);
        const rapidjson::Document read = call(*s, "workspace.read", R"({"path":)" + path + "}");
        EXPECT_EQ(code(read), -32001) << "workspace.read " << path;
        const rapidjson::Document write =
            call(*s, "workspace.write", R"({"path":)" + path + R"(,"text":"pwned","create_parents":true})");
        EXPECT_EQ(code(write), -32001) << "workspace.write " << path;
        const rapidjson::Document info = call(*s, "workspace.project_info", R"({"project":)" + path + "}");
        EXPECT_EQ(code(info), -32001) << "workspace.project_info " << path;
        // With in-memory content nothing is read from `path`, so only its spelling can escape.
        const bool lexical = p.find("..") != std::string::npos || p.starts_with("/") ||
                             p.find('\0') != std::string::npos || p.find('\\') != std::string::npos;
        if (lexical && p.find("link") == std::string::npos) {
            const rapidjson::Document diag =
                call(*s, "lsp.diagnostics", R"({"path":)" + path + R"(,"content":"PROGRAM P END_PROGRAM"})");
            EXPECT_EQ(code(diag), -32001) << "lsp.diagnostics " << path;
        }
        const rapidjson::Document load = call(*s, "harness.load", R"({"files":[)" + path + "]}");
        EXPECT_EQ(code(load), -32001) << "harness.load " << path;
    }
    EXPECT_EQ(snapshot(tmp_.path(), root_), before_) << "something outside the workspace root changed";
    EXPECT_FALSE(fs::exists(tmp_.path() / "outside/new.txt"));
    EXPECT_FALSE(fs::exists(tmp_.path() / "root_evil/new.txt"));
}

TEST_P(Confinement, InsidePathsStillWork) {
    auto s = server();
    rapidjson::Document d = call(*s, "workspace.read", R"({"path":"sub/../sub/ok.txt"})");
    EXPECT_STREQ(at(d, {"result", "text"}).GetString(), "inside");
    d = call(*s, "workspace.read", R"({"path":"link_in"})");
    EXPECT_STREQ(at(d, {"result", "text"}).GetString(), "inside");
    // Writing through an inside link replaces the file it points to and keeps the link.
    d = call(*s, "workspace.write", R"({"path":"link_in","text":"changed"})");
    EXPECT_EQ(code(d), 0);
    EXPECT_TRUE(fs::is_symlink(root_ / "link_in"));
    std::ifstream f(root_ / "sub/ok.txt");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "changed");
    // create_parents makes the directories; without it a missing directory is -32002.
    EXPECT_EQ(code(call(*s, "workspace.write", R"({"path":"new/deep/f.st","text":"x"})")), -32002);
    EXPECT_FALSE(fs::exists(root_ / "new"));
    d = call(*s, "workspace.write", R"({"path":"new/deep/f.st","text":"x","create_parents":true})");
    EXPECT_TRUE(at(d, {"result", "created"}).GetBool());
    EXPECT_TRUE(fs::is_regular_file(root_ / "new/deep/f.st"));
    d = call(*s, "workspace.project_info", R"({"project":"proj"})");
    EXPECT_EQ(at(d, {"result", "sourceCount"}).GetUint(), 1u);
    EXPECT_EQ(code(call(*s, "workspace.read", R"({"path":"sub"})")), -32002); // a directory
    EXPECT_EQ(code(call(*s, "workspace.write", R"({"path":"sub","text":"x"})")), -32002);
}

TEST_P(Confinement, WritesAreAtomicAndKeepTheMode) {
    auto s = server();
    ::chmod((root_ / "sub/ok.txt").c_str(), 0640);
    EXPECT_EQ(code(call(*s, "workspace.write", R"({"path":"sub/ok.txt","text":"v2"})")), 0);
    struct stat st {};
    ASSERT_EQ(::stat((root_ / "sub/ok.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    // No temporary files are left behind.
    for (const auto& e : fs::directory_iterator(root_ / "sub")) {
        EXPECT_EQ(e.path().filename().string().find(".takt-"), std::string::npos) << e.path();
    }
}

// Every method that reads a project's sources goes through one check: a src/ that links out of
// the workspace, or an absolute sources_root, is -32001 naming sources_root, never an empty result.
TEST_P(Confinement, SourcesRootOutsideTheWorkspaceIsRefusedByEveryMethod) {
    const fs::path t = tmp_.path();
    tmp_.write("outside/src/leak.st", "PROGRAM Leak\nEND_PROGRAM\n");
    fs::create_directories(root_ / "linked");
    fs::create_symlink("../../outside/src", root_ / "linked/src");
    fs::create_directories(root_ / "abs_linked");
    fs::create_symlink(t / "outside/src", root_ / "abs_linked/src");
    const auto before = snapshot(t, root_);
    auto s = server();
    ASSERT_TRUE(s->ok()) << s->error();
    struct Case {
        std::string project;
        std::optional<std::string> sourcesRoot;
    };
    const std::vector<Case> cases = {
        {"linked", std::nullopt},
        {"abs_linked", std::nullopt},
        {"proj", "../../outside/src"},
        {"proj", "/etc"},
        {"proj", (t / "outside/src").string()},
        {"proj", "/proc/self/root" + (t / "outside/src").string()},
        {"proj", "/proc/self/root" + (root_ / "proj/src").string()},
        {".", "/proc/self/root/etc"},
        {".", "link_out/src"},
    };
    for (const Case& c : cases) {
        std::string params = R"({"project":)" + jsonString(c.project);
        if (c.sourcesRoot) {
            params += R"(,"sources_root":)" + jsonString(*c.sourcesRoot);
        }
        params += "}";
        for (const char* method : {"lsp.diagnostics", "harness.load", "runtime.build", "runtime.test",
                                   "runtime.validate", "workspace.project_info"}) {
            const std::string m = method;
            if (c.sourcesRoot && (m == "runtime.test" || m == "runtime.validate")) {
                continue; // these take no sources_root (always src/): only the symlinked src/ applies
            }
            const rapidjson::Document d = call(*s, method, params);
            ASSERT_EQ(code(d), -32001) << method << " " << params;
            EXPECT_STREQ(at(d, {"error", "data", "param"}).GetString(), "sources_root") << method << " " << params;
        }
    }
    EXPECT_EQ(snapshot(t, root_), before) << "something outside the workspace root changed";
    // A sources root that does not exist is still an empty project, not an escape.
    EXPECT_EQ(code(call(*s, "workspace.project_info", R"({"project":"proj","sources_root":"nothing"})")), 0);
}

INSTANTIATE_TEST_SUITE_P(Resolvers, Confinement, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "ComponentWalk" : "Openat2"; });

} // namespace
} // namespace takt::agent
