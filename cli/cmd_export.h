#pragma once
// `takt export`: a project written in another tool's format (cmd_export.cpp).
#include <CLI/CLI.hpp>

namespace takt::cli {

void registerExport(CLI::App& app, int& exitCode); // a project's ST as PLCopen XML

} // namespace takt::cli
