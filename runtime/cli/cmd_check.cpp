// Placeholder registration until `takt check` lands; the command reports that it is unavailable.
#include <cstdio>

#include "commands.h"

namespace takt::cli {

void registerCheck(CLI::App& app, int& exitCode) {
    app.add_subcommand("check", "(not available yet)")->callback([&exitCode] {
        std::fputs("takt check: not available in this build\n", stderr);
        exitCode = kExitInternal;
    });
}

} // namespace takt::cli
