// `takt explain [CODE]`: every diagnostic code with its explanation, or one of them. The text
// comes from diagnostic_codes.def, the same list the compiler reports from.
#include <cctype>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "takt/compiler/diagnostics.h"

namespace takt::cli {

namespace {

int runExplain(std::string code) {
    if (code.empty()) {
        std::string list = compiler::renderCodeList();
        std::fwrite(list.data(), 1, list.size(), stdout);
        return kExitOk;
    }
    for (char& c : code) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    compiler::DiagCode id{};
    if (!compiler::diagCodeFromString(code, id)) {
        std::fprintf(stderr, "takt explain: unknown diagnostic code '%s' (run `takt explain` for the list)\n",
                     code.c_str());
        return kExitInvalidProject;
    }
    const compiler::DiagInfo& info = compiler::diagInfo(id);
    std::string text = fmt::format("{} ({}): {}\n", info.code, compiler::severityName(info.severity), info.explanation);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
}

} // namespace

void registerExplain(CLI::App& app, int& exitCode) {
    auto code = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("explain", "Explain a diagnostic code (E0104), or list every code");
    cmd->add_option("code", *code, "A diagnostic code such as E0104");
    cmd->callback([code, &exitCode] { exitCode = runExplain(*code); });
}

} // namespace takt::cli
