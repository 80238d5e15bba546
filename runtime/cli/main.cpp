// The takt command line: parses arguments and dispatches to one cmd_<name>.cpp per subcommand.
#include <cstdio>
#include <exception>

#include "commands.h"

int main(int argc, char** argv) {
    // CLI11 reports usage errors by exception; nothing else in takt throws through here, but an
    // unexpected one must still end as "internal error", never as std::terminate.
    try {
        CLI::App app{"takt - IEC 61131-3 Structured Text soft-PLC runtime"};
        app.require_subcommand(1);
        int exitCode = takt::kExitOk;
        app.add_subcommand("version", "Print the version")->callback([] { std::puts("takt 0.1.0"); });
        takt::cli::registerCheck(app, exitCode);
        takt::cli::registerFmt(app, exitCode);
        takt::cli::registerExplain(app, exitCode);
        takt::cli::registerHarness(app, exitCode);
        takt::cli::registerTest(app, exitCode);
        takt::cli::registerBuild(app, exitCode);
        takt::cli::registerDisasm(app, exitCode);
        takt::cli::registerValidate(app, exitCode);
        takt::cli::registerRetainStress(app, exitCode);
        takt::cli::registerRun(app, exitCode);
        takt::cli::registerBench(app, exitCode);
        takt::cli::registerAgent(app, exitCode);
        takt::cli::registerLsp(app, exitCode);
        takt::cli::registerCtl(app, exitCode);
        takt::cli::registerReload(app, exitCode);
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
            int rc = app.exit(e);
            return rc == 0 ? 0 : takt::kExitInvalidProject;
        }
        return exitCode;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "takt: internal error: %s\n", e.what());
    } catch (...) {
        std::fputs("takt: internal error\n", stderr);
    }
    return takt::kExitInternal;
}
