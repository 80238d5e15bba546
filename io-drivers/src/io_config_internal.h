#pragma once
// The [io] section reader shared by io.toml and board files (board.cpp).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "takt/bytecode/address.h"
#include "takt/engine/config.h"
#include "takt/io/io_config.h"

namespace takt::io::detail {

// Reads the [io] table at `path` ("io"). Driver params are moved out of `io` into the specs so
// they keep their source positions (toml++ drops them on copy). Nothing when any error was
// appended to `out`.
std::optional<IoConfig> readIoSection(toml::table& io, const std::string& path, const std::string& file,
                                      bool byteAddressing, std::vector<engine::ConfigDiagnostic>& out);

// A value for `address` as io.toml's safe state and simulation.toml write it: "TRUE", "0",
// "16#FF", typed "INT#-5" / "REAL#1.5", a TOML boolean for a bit or a TOML integer; as the
// little-endian bits of the address's width. False with `error` when it is none of these or does
// not fit the width.
bool parseImageValue(const toml::node& node, const bytecode::DirectAddress& address, std::uint64_t& value,
                     std::string& error);

// Whether `name` is a driver io.toml may name: registered in this build or listed in CONFIG.md.
bool isKnownDriverName(std::string_view name);

// Every name isKnownDriverName() accepts, for messages.
std::string knownDriverNames();

bool hasErrors(const std::vector<engine::ConfigDiagnostic>& diagnostics);
void sortDiagnostics(std::vector<engine::ConfigDiagnostic>& diagnostics);

} // namespace takt::io::detail
