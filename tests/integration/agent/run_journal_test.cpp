// `takt run` under journald: with stderr on the journal's stream (JOURNAL_STREAM names its
// device:inode) every line carries its syslog priority, so `journalctl -p warning` selects the
// warnings and errors; on a terminal or in a file the lines keep their timestamps.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/paths.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace takt::test {
namespace {

namespace fs = std::filesystem;

// The demo with a private socket, a "not supported yet" key (a warning) and a retain path that
// cannot be created (an error), so the run writes lines at three priorities.
fs::path writeProject(const TempDir& dir) {
    const fs::path project = dir.path() / "project";
    fs::copy(fs::path(TAKT_SOURCE_DIR) / "examples/demo", project, fs::copy_options::recursive);
    std::string toml = readText(project / "runtime.toml");
    const std::string endpoint = "endpoint = \"unix:///tmp/takt-demo.sock\"";
    const std::string retain = "path = \".takt/retain\"";
    if (toml.find(endpoint) == std::string::npos || toml.find(retain) == std::string::npos) {
        return {};
    }
    toml.replace(toml.find(endpoint), endpoint.size(),
                 "endpoint = \"unix://" + (dir.path() / "c.sock").string() + "\"\nmode = \"debug\"");
    toml.replace(toml.find(retain), retain.size(), "path = \"/proc/takt-none/retain\"");
    // The test is about log lines, not timing: on a loaded machine the demo's 50 ms watchdog can
    // trip and end the run with exit 16.
    const std::string watchdog = "timeout_ms = 50";
    if (toml.find(watchdog) != std::string::npos) {
        toml.replace(toml.find(watchdog), watchdog.size(), "timeout_ms = 5000");
    }
    dir.write("project/runtime.toml", toml);
    return project;
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        out.push_back(line);
    }
    return out;
}

bool anyLineStartsWith(const std::vector<std::string>& all, const std::string& prefix, const std::string& has) {
    for (const std::string& l : all) {
        if (l.starts_with(prefix) && l.find(has) != std::string::npos) {
            return true;
        }
    }
    return false;
}

// `takt run --for 1s` with stderr appended to `log`; under the journal when `journal`.
RunResult runInto(const fs::path& project, const fs::path& log, bool journal) {
    std::ofstream(log).flush();
    struct stat st {};
    ::stat(log.c_str(), &st);
    const std::string env = journal
                                ? "JOURNAL_STREAM=" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + " "
                                : std::string("env -u JOURNAL_STREAM ");
    return runShell(env + shellQuote(TAKT_BINARY) + " run --for 1s --project " + shellQuote(project.string()) +
                        " >/dev/null 2>>" + shellQuote(log.string()),
                    {.capture = Capture::Merged});
}

TEST(RunJournal, EveryLineCarriesItsSyslogPriorityUnderJournald) {
    TempDir dir;
    const fs::path project = writeProject(dir);
    ASSERT_FALSE(project.empty()) << "examples/demo/runtime.toml changed";
    const fs::path log = dir.path() / "journal.log";
    const RunResult r = runInto(project, log, true);
    ASSERT_EQ(r.exitCode, 0) << r.out << readText(log);
    const std::vector<std::string> all = lines(readText(log));
    ASSERT_FALSE(all.empty());
    EXPECT_TRUE(anyLineStartsWith(all, "<4>", "debug control mode")) << readText(log);
    EXPECT_TRUE(anyLineStartsWith(all, "<3>error ", "runtime.retain.path")) << readText(log);
    EXPECT_TRUE(anyLineStartsWith(all, "<6>info ", "running filling_line")) << readText(log);
    for (const std::string& l : all) {
        EXPECT_TRUE(l.size() > 3 && l[0] == '<' && l[2] == '>') << "no priority: " << l;
    }
}

TEST(RunJournal, LinesKeepTheirTimestampsOutsideTheJournal) {
    TempDir dir;
    const fs::path project = writeProject(dir);
    ASSERT_FALSE(project.empty());
    const fs::path log = dir.path() / "plain.log";
    const RunResult r = runInto(project, log, false);
    ASSERT_EQ(r.exitCode, 0) << r.out << readText(log);
    const std::vector<std::string> all = lines(readText(log));
    EXPECT_TRUE(anyLineStartsWith(all, "20", "running filling_line")) << readText(log);
    for (const std::string& l : all) {
        EXPECT_FALSE(l.starts_with("<")) << l;
    }
}

} // namespace
} // namespace takt::test
