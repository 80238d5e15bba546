// `takt disasm FILE`: a readable listing of a program.stbc. The file must load and verify like
// it would for `takt run` (exit 10 with the reason otherwise); --no-verify lists a file that
// decodes but fails verification, to see what is wrong with it.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "takt/bytecode/container.h"
#include "takt/bytecode/disasm.h"
#include "takt/bytecode/verifier.h"
#include "takt/bytecode/version.h"

namespace takt::cli {

namespace {

struct DisasmOptions {
    std::string file;
    bool noVerify = false;
};

int runDisasm(const DisasmOptions& options) {
    bytecode::LoadResult loaded = bytecode::readProgramFile(options.file);
    if (!loaded.ok()) {
        std::fprintf(stderr, "takt disasm: %s: %s\n", options.file.c_str(), loaded.error.c_str());
        return kExitInvalidProject;
    }
    bytecode::VerifyResult verified = bytecode::verify(loaded.module);
    if (!verified.ok() && !options.noVerify) {
        std::fprintf(stderr, "takt disasm: %s: verification failed: %s\n", options.file.c_str(),
                     verified.message.c_str());
        return kExitInvalidProject;
    }
    std::string text = "; " + options.file + ": program.stbc format " + std::to_string(loaded.formatVersion) +
                       ", program hash " + bytecode::hashHex(loaded.hash) + "\n";
    if (!verified.ok()) {
        text += "; NOT VERIFIED: " + verified.message + "\n";
    }
    text += bytecode::disassemble(loaded.module);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
}

} // namespace

void registerDisasm(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<DisasmOptions>();
    CLI::App* cmd = app.add_subcommand("disasm", "Print a readable listing of a program.stbc");
    cmd->add_option("file", options->file, "The program.stbc file")->required();
    cmd->add_flag("--no-verify", options->noVerify, "List a file that decodes but fails verification");
    cmd->callback([options, &exitCode] { exitCode = runDisasm(*options); });
}

} // namespace takt::cli
