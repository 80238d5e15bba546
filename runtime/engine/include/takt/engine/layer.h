#pragma once
// takt_engine: stub. Nothing in this layer is implemented yet; no command relies on it.
namespace takt::engine {
const char* layerName() noexcept;
} // namespace takt::engine
