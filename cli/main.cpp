// The takt command line: parses arguments and dispatches to one cmd_<name>.cpp per subcommand.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "cmd_export.h"
#include "commands.h"
#include "takt/agent/agent_server.h"
#include "takt/bytecode/version.h"
#include "takt_commit.h"

namespace {

std::string versionText() {
    return fmt::format("takt {} (commit {}, {} build, bytecode format {})", takt::agent::taktVersion(), TAKT_COMMIT,
                       TAKT_BUILD_TYPE, takt::bytecode::kFormatVersion);
}

// A first argument that is neither an option nor a command: CLI11 would only say it was "not
// expected"; a user who typed `takt stat` needs the list.
bool unknownCommand(const CLI::App& app, int argc, char** argv) {
    if (argc < 2 || argv[1][0] == '-') {
        return false;
    }
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->check_name(argv[1])) {
            return false;
        }
        if (!sub->get_group().empty()) { // hidden ones stay hidden
            names += (names.empty() ? "" : ", ") + sub->get_name();
        }
    }
    std::fprintf(stderr, "takt: unknown command '%s'; the commands are: %s (takt --help describes them)\n", argv[1],
                 names.c_str());
    return true;
}

} // namespace

int main(int argc, char** argv) {
    // CLI11 reports usage errors by exception; nothing else in takt throws through here, but an
    // unexpected one must still end as "internal error", never as std::terminate.
    try {
        CLI::App app{"takt - IEC 61131-3 Structured Text soft-PLC runtime"};
        app.require_subcommand(1);
        app.set_version_flag("--version", versionText());
        int exitCode = takt::kExitOk;
        app.add_subcommand("version", "Print the version, commit, build type and bytecode format")->callback([] {
            std::puts(versionText().c_str());
        });
        takt::cli::registerInit(app, exitCode);
        takt::cli::registerImport(app, exitCode);
        takt::cli::registerExport(app, exitCode);
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
        takt::cli::registerDap(app, exitCode);
        takt::cli::registerShell(app, exitCode);
        takt::cli::registerWatch(app, exitCode);
        takt::cli::registerTrace(app, exitCode);
        takt::cli::registerCtl(app, exitCode);
        takt::cli::registerReload(app, exitCode);
        takt::cli::registerRollback(app, exitCode);
        takt::cli::registerDeploy(app, exitCode);
        takt::cli::registerFleet(app, exitCode);
        if (unknownCommand(app, argc, argv)) {
            return takt::kExitInvalidProject;
        }
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
