#pragma once
// One registration function per subcommand; each lives in its own cmd_<name>.cpp.
#include <CLI/CLI.hpp>

namespace takt::cli {

// Exit codes (CONFIG.md, truST-compatible).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFormatNeeded = 1; // `takt fmt --check`: some file is not canonical
inline constexpr int kExitInvalidProject = 10;
inline constexpr int kExitBuildFailure = 11;
inline constexpr int kExitTestFailure = 12;
inline constexpr int kExitTimeout = 13;
inline constexpr int kExitInternal = 20;
// `takt ctl` / `takt reload`: the endpoint answered with an error, or could not be reached.
inline constexpr int kExitControlError = 14;
inline constexpr int kExitControlUnreachable = 15;
// `takt run`: the run ended with the program halted by a run-time fault or watchdog trip, or the
// final save of the RETAIN variables (at SIGTERM, --for) failed. A fault wins when both happen.
inline constexpr int kExitRunFault = 16;
inline constexpr int kExitRetainSaveFailed = 17;

// Each register function adds its subcommand; the callback stores its exit code in `exitCode`.
void registerCheck(CLI::App& app, int& exitCode);
void registerFmt(CLI::App& app, int& exitCode);
void registerExplain(CLI::App& app, int& exitCode);
void registerHarness(CLI::App& app, int& exitCode);
void registerTest(CLI::App& app, int& exitCode);
void registerBuild(CLI::App& app, int& exitCode);
void registerDisasm(CLI::App& app, int& exitCode);
void registerValidate(CLI::App& app, int& exitCode);     // validate + boards
void registerRetainStress(CLI::App& app, int& exitCode); // hidden: retain crash-safety tests
void registerRun(CLI::App& app, int& exitCode);
void registerBench(CLI::App& app, int& exitCode);
void registerAgent(CLI::App& app, int& exitCode);
void registerCtl(CLI::App& app, int& exitCode);    // the generic control-endpoint client
void registerReload(CLI::App& app, int& exitCode); // build + bytecode.reload

} // namespace takt::cli
