// libFuzzer target: the agent API's request dispatcher (AgentServer::handleLine) on arbitrary
// bytes, one line per '\n'. The workspace is a small project in a scratch directory, so the
// file, project, lsp and harness methods all do real work; cycle counts are capped so a
// request cannot run for minutes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "takt/agent/agent_server.h"

namespace {

takt::agent::AgentServer& server() {
    static std::unique_ptr<takt::agent::AgentServer> s = [] {
        std::string pattern = (std::filesystem::temp_directory_path() / "takt-agent-fuzz-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::abort();
        }
        const std::filesystem::path root = pattern;
        std::filesystem::create_directories(root / "src");
        std::ofstream(root / "src/main.st") << "PROGRAM Main\nVAR x : INT; q : BOOL; END_VAR\nx := x + 1;\n"
                                               "q := x > 3;\nEND_PROGRAM\n";
        std::ofstream(root / "runtime.toml") << "[resource]\nname = \"fuzz\"\n";
        takt::agent::AgentOptions o;
        o.workspace = root;
        o.maxCyclesPerRequest = 1000;
        return std::make_unique<takt::agent::AgentServer>(o);
    }();
    return *s;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    takt::agent::AgentServer& s = server();
    while (!input.empty()) {
        const std::size_t nl = input.find('\n');
        const std::string_view line = input.substr(0, nl);
        // Every line must get a well-formed answer or none (notifications, blank lines).
        (void)s.handleLine(line);
        if (nl == std::string_view::npos) {
            break;
        }
        input.remove_prefix(nl + 1);
    }
    return 0;
}
