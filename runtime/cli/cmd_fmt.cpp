// Placeholder registration until `takt fmt` lands; the command reports that it is unavailable.
#include <cstdio>

#include "commands.h"

namespace takt::cli {

void registerFmt(CLI::App& app, int& exitCode) {
    app.add_subcommand("fmt", "(not available yet)")->callback([&exitCode] {
        std::fputs("takt fmt: not available in this build\n", stderr);
        exitCode = kExitInternal;
    });
}

} // namespace takt::cli
