#pragma once
// The web page's files, embedded at build time (cmake/TaktWeb.cmake generates the definition from
// the npm build of web/). Empty when takt was built without npm.
#include <span>

#include "takt/agent/web.h"

namespace takt::cli {

[[nodiscard]] std::span<const agent::WebAsset> webAssets();

} // namespace takt::cli
