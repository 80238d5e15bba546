#pragma once
// The exit codes of the takt command (CONFIG.md, truST-compatible): one list, in the lowest
// layer that the CLI and the agent share, so a build reported by the agent API and one run from
// the shell give the same number.
namespace takt {

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

} // namespace takt
