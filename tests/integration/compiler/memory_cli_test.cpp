// The front end's memory per MB of source (docs/performance.md, "Memory of the front end"):
// `takt check` and `takt lsp` on a generated 2 MB file, their peak resident set held to the
// targets there. The fixed part (the binary, its libraries, an empty check) is measured on a
// one-line file in the same run, so the bound is on what the source adds, per MB.
#include <sys/resource.h>
#include <sys/wait.h>

#include <fcntl.h>

#include <spawn.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/paths.h"
#include "support/process.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"

extern char** environ;

namespace {

using takt::test::Capture;
using takt::test::Process;
using takt::test::ProcessOptions;
using takt::test::TempDir;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TAKT_MEMORY_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TAKT_MEMORY_UNDER_ASAN)
#define TAKT_MEMORY_UNDER_ASAN 1
#endif

// The targets (docs/performance.md): MiB of peak resident set per MB of source for `takt
// check`, and `takt lsp` (an open and an edit) at most kLspFactor times that.
constexpr double kCheckMiBPerMB = 45.0;
constexpr double kLspFactor = 1.2;
#ifdef TAKT_MEMORY_UNDER_ASAN
// The ASan + UBSan build (CI's) keeps redzones beside every allocation and shadow memory for the
// heap: with its quarantine off it needs about 1.3 times the release build's memory per MB of
// source (2026-11-28, the 2 MB file below: 52 MiB per MB against 41), so the bound scales by that.
// It still fails the tree's nodes as they were (66 MiB per MB) and a `takt lsp` that holds two
// syntax trees at an edit (131).
constexpr double kBuildFactor = 1.3;
const std::vector<std::string> kEnv{"ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=0"};
#else
constexpr double kBuildFactor = 1.0;
const std::vector<std::string> kEnv{};
#endif

constexpr std::size_t kLines = 2'000'000 / 12; // "x := x + 1;\n" is 12 bytes: a 2 MB file

std::string generated(std::size_t lines) {
    std::string text = "PROGRAM Main\nVAR\n    x : DINT;\nEND_VAR\n";
    text.reserve(text.size() + lines * 12 + 16);
    for (std::size_t i = 0; i < lines; ++i) {
        text += "x := x + 1;\n";
    }
    text += "END_PROGRAM\n";
    return text;
}

double megabytes(const std::string& text) {
    return static_cast<double>(text.size()) / 1e6;
}

// The peak resident set of `takt check FILE` in MiB (wait4's rusage: this child's alone).
double checkPeakMiB(const std::filesystem::path& file) {
    std::vector<std::string> args{TAKT_BINARY, "check", file.string()};
    std::vector<char*> argv;
    for (std::string& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    std::vector<std::string> envStrings(kEnv);
    for (char** e = environ; *e != nullptr; ++e) {
        envStrings.emplace_back(*e);
    }
    std::vector<char*> envp;
    for (std::string& e : envStrings) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
        ADD_FAILURE() << "cannot start " << TAKT_BINARY;
        return 0;
    }
    int status = 0;
    rusage usage{};
    if (::wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        ADD_FAILURE() << "takt check " << file << " did not pass (status " << status << ")";
    }
    return static_cast<double>(usage.ru_maxrss) / 1024.0; // ru_maxrss is in KiB
}

std::string lspMessage(const std::string& json) {
    return "Content-Length: " + std::to_string(json.size()) + "\r\n\r\n" + json;
}

std::string jsonString(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '\n') {
            out += "\\n";
        } else {
            out += c; // the generated sources hold no quote, backslash or other control character
        }
    }
    return out + "\"";
}

// The peak resident set of `takt lsp` in MiB after it opened `file` (text `text`), published its
// diagnostics, took an edit and published them again (VmHWM while it still runs).
double lspPeakMiB(const std::filesystem::path& file, const std::string& text) {
    ProcessOptions options{.cwd = file.parent_path(), .env = kEnv, .capture = Capture::Stdout, .input = true};
    Process lsp(takt::test::taktArgv({"lsp"}), options);
    EXPECT_TRUE(lsp.started());
    const std::string uri = "file://" + file.string();
    const std::string root = "file://" + file.parent_path().string();
    lsp.send(lspMessage(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":")" +
                        root + R"(","capabilities":{}}})"));
    lsp.send(lspMessage(R"({"jsonrpc":"2.0","method":"initialized","params":{}})"));
    lsp.send(lspMessage(R"({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":")" + uri +
                        R"(","languageId":"st","version":1,"text":)" + jsonString(text) + "}}}"));
    lsp.send(lspMessage(R"({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":")" +
                        uri +
                        R"(","version":2},"contentChanges":[{"range":{"start":{"line":5,"character":0},)"
                        R"("end":{"line":5,"character":0}},"text":"x := x + 2;\n"}]}})"));
    // The answer to shutdown follows the edit's diagnostics: its header ends their line.
    lsp.send(lspMessage(R"({"jsonrpc":"2.0","id":2,"method":"shutdown"})"));
    bool edited = false;
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    while (!edited && std::chrono::steady_clock::now() < deadline && lsp.readLine(line, 60000)) {
        edited =
            line.find("publishDiagnostics") != std::string::npos && line.find("\"version\":2") != std::string::npos;
    }
    EXPECT_TRUE(edited) << "no diagnostics for the edit";
    double peak = 0;
    std::ifstream status("/proc/" + std::to_string(lsp.pid()) + "/status");
    for (std::string l; std::getline(status, l);) {
        if (l.starts_with("VmHWM:")) {
            peak = std::stod(l.substr(6)) / 1024.0; // kB
        }
    }
    lsp.send(lspMessage(R"({"jsonrpc":"2.0","method":"exit"})"));
    EXPECT_EQ(lsp.waitOrKill(std::chrono::seconds(30)), 0);
    return peak;
}

TEST(FrontEndMemory, CheckStaysWithinItsTargetPerMegabyte) {
    TempDir dir;
    const std::filesystem::path empty = dir.write("empty/main.st", generated(1));
    const std::string text = generated(kLines);
    const std::filesystem::path big = dir.write("big/main.st", text);
    const double fixed = checkPeakMiB(empty);
    const double peak = checkPeakMiB(big);
    const double perMB = (peak - fixed) / megabytes(text);
    const double bound = kCheckMiBPerMB * kBuildFactor;
    std::printf("takt check: %.0f MiB fixed, %.0f MiB peak on %.1f MB: %.1f MiB per MB (bound %.1f)\n", fixed, peak,
                megabytes(text), perMB, bound);
    EXPECT_LE(perMB, bound) << "takt check needs " << perMB << " MiB per MB of source";
}

TEST(FrontEndMemory, LspStaysWithinItsTargetPerMegabyte) {
    TempDir dir;
    const std::string small = generated(1);
    const std::filesystem::path empty = dir.write("empty/main.st", small);
    const std::string text = generated(kLines);
    const std::filesystem::path big = dir.write("big/main.st", text);
    const double fixed = lspPeakMiB(empty, small);
    const double peak = lspPeakMiB(big, text);
    const double perMB = (peak - fixed) / megabytes(text);
    const double bound = kCheckMiBPerMB * kLspFactor * kBuildFactor;
    std::printf("takt lsp: %.0f MiB fixed, %.0f MiB peak on %.1f MB: %.1f MiB per MB (bound %.1f)\n", fixed, peak,
                megabytes(text), perMB, bound);
    EXPECT_LE(perMB, bound) << "takt lsp needs " << perMB << " MiB per MB of source";
}

} // namespace
