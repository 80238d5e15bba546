#pragma once
// One registration function per subcommand; each lives in its own cmd_<name>.cpp.
#include <CLI/CLI.hpp>

#include "takt/compiler/exit_codes.h" // kExit…
#include "takt/engine/vm_runner.h"

#include <string>

namespace takt::cli {

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
void registerLsp(CLI::App& app, int& exitCode);
void registerDap(CLI::App& app, int& exitCode);
void registerCtl(CLI::App& app, int& exitCode);      // the generic control-endpoint client
void registerReload(CLI::App& app, int& exitCode);   // build + bytecode.reload
void registerRollback(CLI::App& app, int& exitCode); // runtime.rollback
void registerDeploy(CLI::App& app, int& exitCode);   // build + bytecode.reload to a fleet (fleet.toml)
void registerFleet(CLI::App& app, int& exitCode);    // fleet status: the Sparkplug edge nodes a broker hears
void registerWatch(CLI::App& app, int& exitCode);    // vars + watch
void registerTrace(CLI::App& app, int& exitCode);    // trace start|list|read|stop|remove
void registerShell(CLI::App& app, int& exitCode);    // status, write, force, unforce, stop, start, restart, events
void registerInit(CLI::App& app, int& exitCode);     // a new project from a template
void registerImport(CLI::App& app, int& exitCode);   // a new project from a PLCopen XML export

// --execution native|interpreter (takt run, harness, test): the tier program bodies run on.
inline CLI::Option* addExecutionOption(CLI::App& cmd, engine::Execution& out) {
    return cmd
        .add_option_function<std::string>(
            "--execution", [&out](const std::string& text) { (void)engine::parseExecution(text, out); },
            "Run program bodies on the interpreter (default) or compiled to native code")
        ->check(CLI::IsMember({"native", "interpreter"}));
}

} // namespace takt::cli
