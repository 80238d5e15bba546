// `takt run` end to end: the real binary on small projects with the loopback
// driver. The loopback driver turns the latched safe outputs into the next
// inputs, so the %I bytes in the run's status lines are what the field sees
// after a fault or a stop.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/process.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace takt::io {
namespace {

using takt::test::Process;
using takt::test::readText;
using takt::test::taktArgv;
using takt::test::TempDir;

// %QX0.1 safe TRUE -> %QB0 = 02 with everything else 0; 4 loopback bytes.
constexpr const char* kIoToml = R"([io]
driver = "loopback"

[io.params]
bytes = 4

[[io.safe_state]]
address = "%QX0.1"
value = "TRUE"
)";
constexpr const char* kSafeInputs = "%I=02000000";

std::string runtimeToml(const std::string& policy, const std::string& watchdogAction, int timeoutMs = 50) {
    return "[bundle]\nversion = 1\n\n[resource]\nname = "
           "\"cell\"\ncycle_interval_ms = 5\n\n"
           "[runtime.watchdog]\nenabled = true\ntimeout_ms = " +
           std::to_string(timeoutMs) + "\naction = \"" + watchdogAction + "\"\n\n[runtime.fault]\npolicy = \"" +
           policy + "\"\n";
}

// A program that writes FF to %QB0 every cycle and does `body` once n
// passes 10.
std::string program(const std::string& body) {
    return "PROGRAM Main\nVAR\n    out AT %QB0 : BYTE;\n    n : DINT;\n    d : "
           "DINT;\n    x : DINT;\n"
           "    a : ARRAY[0..3] OF DINT;\nEND_VAR\nout := 16#FF;\nn := n + "
           "1;\nIF n > 10 THEN\n" +
           body + "\nEND_IF;\nEND_PROGRAM\n";
}

struct RunResult {
    int exitCode = -1;
    std::string output;
};

// `takt ARGS` with its output in dir/run.log; killed (exit code -1) when it runs past 30 s.
RunResult runTakt(const TempDir& dir, const std::vector<std::string>& args) {
    const std::filesystem::path log = dir.path() / "run.log";
    Process takt(taktArgv(args), {.log = log});
    RunResult r;
    if (takt.started()) {
        r.exitCode = takt.waitOrKill(std::chrono::seconds(30));
    }
    r.output = readText(log);
    return r;
}

// The last status line (the one printed after the stop).
std::string lastLine(const std::string& out, const std::string& marker) {
    const std::size_t at = out.rfind(marker);
    if (at == std::string::npos) {
        return {};
    }
    return out.substr(at, out.find('\n', at) - at);
}

void writeProject(const TempDir& dir, const std::string& runtime, const std::string& source) {
    dir.write("runtime.toml", runtime);
    dir.write("io.toml", kIoToml);
    dir.write("src/main.st", source);
}

TEST(TaktRun, WatchdogCatchesAnEndlessLoopAndTheLoopbackSeesSafeValues) {
    TempDir dir;
    writeProject(dir, runtimeToml("safe_halt", "safe_halt"), program("WHILE TRUE DO\nEND_WHILE;"));
    const RunResult r = runTakt(dir, {"run", "--project", dir.path().string(), "--for", "1500ms"});
    ASSERT_EQ(r.exitCode, 16) << r.output; // the run ended with the program halted by the watchdog
    EXPECT_NE(r.output.find("watchdog fault in cycle 11"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("timeout_ms = 50"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("src/main.st"), std::string::npos) << r.output; // where it was stuck
    const std::string last = lastLine(r.output, "stopped (");
    EXPECT_NE(last.find("cycles=11 "), std::string::npos) << last;
    EXPECT_NE(last.find("faults=1 "), std::string::npos) << last;
    EXPECT_NE(last.find(kSafeInputs), std::string::npos) << last;
}

TEST(TaktRun, WatchdogRestartActionRestartsTheProgramCold) {
    TempDir dir;
    writeProject(dir, runtimeToml("safe_halt", "restart"), program("WHILE TRUE DO\nEND_WHILE;"));
    const RunResult r = runTakt(dir, {"run", "--project", dir.path().string(), "--for", "1500ms"});
    ASSERT_EQ(r.exitCode, 16) << r.output; // the 6th trip within 60 s is not restarted: halted
    EXPECT_NE(r.output.find("not restarted: 5 restarts within 60 s already"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("watchdog fault in cycle 11"), std::string::npos) << r.output;
    // Cold restart: n starts from 0 again, so the loop is entered again 11 cycles
    // later.
    EXPECT_NE(r.output.find("watchdog fault in cycle 22"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("program cold-restarted"), std::string::npos) << r.output;
}

TEST(TaktRun, DivisionByZeroWithSafeHaltLatchesSafeState) {
    TempDir dir;
    writeProject(dir, runtimeToml("safe_halt", "safe_halt"), program("d := 0;\nx := 10 / d;"));
    const RunResult r = runTakt(dir, {"run", "--project", dir.path().string(), "--for", "1s"});
    ASSERT_EQ(r.exitCode, 16) << r.output;
    EXPECT_NE(r.output.find("runtime fault in cycle 11: integer division or MOD by zero"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("action safe_halt"), std::string::npos) << r.output;
    const std::string last = lastLine(r.output, "stopped (");
    EXPECT_NE(last.find("cycles=11 "), std::string::npos) << last;
    EXPECT_NE(last.find("faults=1 "), std::string::npos) << last;
    EXPECT_NE(last.find(kSafeInputs), std::string::npos) << last;
}

TEST(TaktRun, OutOfBoundsWithHaltAlsoAppliesSafeState) {
    TempDir dir;
    writeProject(dir, runtimeToml("halt", "safe_halt"), program("d := 7;\nx := a[d];"));
    const RunResult r = runTakt(dir, {"run", "--project", dir.path().string(), "--for", "1s"});
    ASSERT_EQ(r.exitCode, 16) << r.output;
    EXPECT_NE(r.output.find("runtime fault in cycle 11: array index out of bounds"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("action halt:"), std::string::npos) << r.output;
    const std::string last = lastLine(r.output, "stopped (");
    EXPECT_NE(last.find("cycles=11 "), std::string::npos) << last;
    EXPECT_NE(last.find("faults=1 "), std::string::npos) << last;
    EXPECT_NE(last.find(kSafeInputs), std::string::npos) << last;
}

TEST(TaktRun, RuntimeFaultWithRestartKeepsRunning) {
    TempDir dir;
    writeProject(dir, runtimeToml("restart", "safe_halt"), program("d := 0;\nx := 10 / d;"));
    const RunResult r = runTakt(dir, {"run", "--project", dir.path().string(), "--for", "1s"});
    ASSERT_EQ(r.exitCode, 16) << r.output; // the 6th fault within 60 s is not restarted: halted
    EXPECT_NE(r.output.find("not restarted: 5 restarts within 60 s already"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("runtime fault in cycle 11"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("runtime fault in cycle 22"), std::string::npos) << r.output;
    const std::string last = lastLine(r.output, "stopped (");
    EXPECT_NE(last.find("stopped cycles="), std::string::npos) << last;
}

TEST(TaktRun, ForEndsTheRunWithExitZeroAndSafeOutputs) {
    TempDir dir;
    writeProject(dir, runtimeToml("safe_halt", "safe_halt"), program("x := 1;"));
    const RunResult r = runTakt(dir, {"run", "--project", dir.path().string(), "--for", "1300ms"});
    ASSERT_EQ(r.exitCode, 0) << r.output;
    // Not a terminal, log level info: no status line a second, only the one on stop.
    EXPECT_EQ(r.output.find("running cycles="), std::string::npos) << r.output;
    const std::string last = lastLine(r.output, "stopped (--for elapsed)");
    ASSERT_FALSE(last.empty()) << r.output;
    EXPECT_EQ(last.find("halted"), std::string::npos) << last;
    EXPECT_NE(last.find(kSafeInputs), std::string::npos) << last;
    EXPECT_EQ(r.output.find("fault in cycle"), std::string::npos) << r.output;
}

TEST(TaktRun, SigtermStopsWithSafeStateAndExitZero) {
    TempDir dir;
    // At debug level the log gets the status with the process image once a second.
    writeProject(dir, runtimeToml("safe_halt", "safe_halt") + "\n[runtime.log]\nlevel = \"debug\"\n",
                 program("x := 1;"));
    const std::filesystem::path log = dir.path() / "run.log";
    Process takt(taktArgv({"run", "--project", dir.path().string()}), {.log = log});
    ASSERT_TRUE(takt.started());
    // Wait until the scan runs and the loopback shows the program's output (FF)
    // as input.
    takt.waitFor([&] { return readText(log).find("%I=ff000000") != std::string::npos; });
    ASSERT_NE(readText(log).find("%I=ff000000"), std::string::npos) << readText(log);
    EXPECT_EQ(takt.terminate(std::chrono::seconds(20)), 0);
    const std::string out = readText(log);
    const std::string last = lastLine(out, "stopped (SIGTERM)");
    ASSERT_FALSE(last.empty()) << out;
    EXPECT_NE(last.find(kSafeInputs), std::string::npos) << last;
}

TEST(TaktRun, BadDurationAndMissingRuntimeTomlAreInvalidProject) {
    TempDir dir;
    writeProject(dir, runtimeToml("safe_halt", "safe_halt"), program("x := 1;"));
    EXPECT_EQ(runTakt(dir, {"run", "--project", dir.path().string(), "--for", "ten"}).exitCode, 10);
    TempDir empty;
    empty.write("src/main.st", program("x := 1;"));
    const RunResult r = runTakt(empty, {"run", "--project", empty.path().string(), "--for", "100ms"});
    EXPECT_EQ(r.exitCode, 10) << r.output;
    // The words `takt validate` uses for it, not the system's "No such file or directory".
    EXPECT_NE(
        r.output.find("runtime.toml: error: missing runtime.toml (required to run: it names the task, its period and "
                      "the I/O; see docs/getting-started.md, or copy the commented one `takt init NEWDIR` writes)"),
        std::string::npos)
        << r.output;
}

TEST(TaktRun, OverlappingDriversAreRejectedNamingBoth) {
    TempDir dir;
    dir.write("runtime.toml", runtimeToml("safe_halt", "safe_halt"));
    dir.write("io.toml", "[io]\ndrivers = [ { name = \"loopback\", params = { bytes = 8 } },\n"
                         "            { name = \"loopback\", params = { bytes = 2 } } ]\n");
    dir.write("src/main.st", program("x := 1;"));
    const RunResult r = runTakt(dir, {"run", "--project", dir.path().string(), "--for", "100ms"});
    EXPECT_EQ(r.exitCode, 10) << r.output;
    EXPECT_NE(r.output.find("both write %IB0..%IB1"), std::string::npos) << r.output;
}

TEST(TaktRun, NotifiesSystemdReadyWatchdogAndStopping) {
    TempDir dir;
    writeProject(dir, runtimeToml("safe_halt", "safe_halt"), program("x := 1;"));
    const std::filesystem::path sockPath = dir.path() / "notify.sock";
    const int sock = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(sock, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    ASSERT_LT(sockPath.string().size(), sizeof(addr.sun_path));
    std::strncpy(addr.sun_path, sockPath.c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    const timeval tv{0, 100'000};
    ::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    Process takt(
        taktArgv({"run", "--project", dir.path().string()}),
        {.env = {"NOTIFY_SOCKET=" + sockPath.string(), "WATCHDOG_USEC=400000"}, .log = dir.path() / "run.log"});
    ASSERT_TRUE(takt.started());
    std::string messages;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline &&
           (messages.find("READY=1") == std::string::npos || messages.find("WATCHDOG=1") == std::string::npos)) {
        char buf[512];
        const ssize_t n = ::recv(sock, buf, sizeof buf, 0);
        if (n > 0) {
            messages.append(buf, static_cast<std::size_t>(n)).push_back('\n');
        }
    }
    EXPECT_EQ(takt.terminate(std::chrono::seconds(20)), 0);
    char buf[512];
    for (ssize_t n = 0; (n = ::recv(sock, buf, sizeof buf, 0)) > 0;) {
        messages.append(buf, static_cast<std::size_t>(n)).push_back('\n');
    }
    ::close(sock);
    EXPECT_NE(messages.find("READY=1"), std::string::npos) << messages;
    EXPECT_NE(messages.find("WATCHDOG=1"), std::string::npos) << messages;
    EXPECT_NE(messages.find("STOPPING=1"), std::string::npos) << messages;
}

} // namespace
} // namespace takt::io
