#pragma once
// The build of an online change (`takt reload`, `takt deploy`): the project built exactly like
// `takt build` (program.stbc written atomically, diagnostics on stderr) and its bytes read back.
#include <string>

namespace takt::cli {

struct BuiltProgram {
    std::string path;  // program.stbc
    std::string bytes; // its contents
    std::string hash;  // the program hash (hex), as runtime.status reports it
};

// kExitOk with `out` filled, or the exit code after printing why on stderr (nothing built).
[[nodiscard]] int buildForChange(const char* command, const std::string& projectDir, BuiltProgram& out);

} // namespace takt::cli
