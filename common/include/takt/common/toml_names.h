#pragma once
// How a diagnostic names the type of a TOML value ("expected a table, found an array"), the same
// in runtime.toml, io.toml and trust-lsp.toml. Its users link toml++ themselves.
#include <string_view>

#include <toml++/toml.h>

namespace takt::common {

[[nodiscard]] std::string_view tomlTypeName(toml::node_type type) noexcept;

} // namespace takt::common
