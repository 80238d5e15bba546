#pragma once
// takt_agent: stub. Nothing in this layer is implemented yet; no command relies on it.
namespace takt::agent {
const char* layerName() noexcept;
} // namespace takt::agent
