// The takt command line. Subcommands are registered here; each lives in its own file.
#include <CLI/CLI.hpp>

#include "takt/bytecode/version.h"

int main(int argc, char** argv) {
    CLI::App app{"takt - IEC 61131-3 Structured Text soft-PLC runtime"};
    app.require_subcommand(1);
    app.add_subcommand("version", "Print the version")->callback([] { std::puts("takt 0.1.0"); });
    CLI11_PARSE(app, argc, argv);
    return 0;
}
