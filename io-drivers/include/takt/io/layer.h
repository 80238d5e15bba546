#pragma once
// takt_io: stub. Nothing in this layer is implemented yet; no command relies on it.
namespace takt::io {
const char* layerName() noexcept;
} // namespace takt::io
