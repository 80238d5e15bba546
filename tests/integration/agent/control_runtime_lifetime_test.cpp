// The lifetime of the `takt run` the live tests drive (control_live_support.h, Runtime): it runs
// until the test stops it, however long the test takes, and ends with the test process should
// that die first. It had a fixed lifetime of 60 s instead, which stopped takt in the middle of
// the 200-reload tests on a loaded machine ("no reply to 'bytecode.reload'").
#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/control_live_support.h"

namespace takt::agent::live {
namespace {

// True once `pid` has ended: gone, or a zombie its new parent has not reaped yet.
bool ended(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) {
        return true;
    }
    const std::size_t close = line.rfind(')');
    return close == std::string::npos || close + 2 >= line.size() || line[close + 2] == 'Z';
}

// A process that started a Runtime and died without stopping it (as a test binary killed by a
// ctest timeout or a crash): its takt ends at once, not after some fixed time.
TEST(ControlLiveRuntime, EndsWhenTheTestProcessDies) {
    TempDir project;
    project.write("runtime.toml", "[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\ncycle_interval_ms = 10\n");
    project.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    project.write("src/main.st", "PROGRAM Main\nVAR\n    n : UDINT;\nEND_VAR\nn := n + 1;\nEND_PROGRAM\n");
    ASSERT_FALSE(build(project.path()).empty());

    int pipeFds[2] = {-1, -1};
    ASSERT_EQ(::pipe(pipeFds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(pipeFds[0]);
        Runtime rt(project.path());
        const bool running = !rt.waitForLine({"running cell"}).empty();
        const pid_t taktPid = running ? rt.pid() : -1;
        (void)!::write(pipeFds[1], &taktPid, sizeof taktPid);
        ::_exit(0); // no destructor: nothing stops takt but the kernel
    }
    ::close(pipeFds[1]);
    pid_t takt = -1;
    const ssize_t got = ::read(pipeFds[0], &takt, sizeof takt);
    ::close(pipeFds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_EQ(got, static_cast<ssize_t>(sizeof takt));
    ASSERT_GT(takt, 0) << "takt did not start: " << readText(project.path() / "run.log");

    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!ended(takt) && std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const bool gone = ended(takt);
    if (!gone) {
        ::kill(takt, SIGKILL); // the takt this test started, by its pid
    }
    EXPECT_TRUE(gone) << "takt ran on for 20 s after the process that started it died";
    if (gone) {
        EXPECT_NE(readText(project.path() / "run.log").find("stopped (SIGTERM)"), std::string::npos)
            << readText(project.path() / "run.log");
    }
}

} // namespace
} // namespace takt::agent::live
