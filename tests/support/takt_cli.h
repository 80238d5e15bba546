#pragma once
// The `takt` binary under test (TAKT_BINARY) as a child process.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "support/paths.h"
#include "support/process.h"

namespace takt::test {

// TAKT_BINARY followed by `args`: an argv for Process.
inline std::vector<std::string> taktArgv(const std::vector<std::string>& args) {
    std::vector<std::string> argv{TAKT_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

// `takt ARGS` to its end through the shell: ARGS is shell text (quoting, redirections).
inline RunResult runTakt(const std::string& args, ProcessOptions options = {}) {
    return runShell(shellQuote(TAKT_BINARY) + " " + args, std::move(options));
}

// `takt ARGS` run in `cwd`, stdout and stderr captured separately.
inline RunResult runTakt(const std::string& args, const std::filesystem::path& cwd) {
    return runTakt(args, ProcessOptions{.cwd = cwd});
}

// `takt ARGS` to its end with stdout and stderr together in `out`.
inline RunResult runTaktMerged(const std::string& args) {
    return runTakt(args, {.capture = Capture::Merged});
}

} // namespace takt::test
