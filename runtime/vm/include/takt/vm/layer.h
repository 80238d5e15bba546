#pragma once
// takt_vm: stub. Nothing in this layer is implemented yet; no command relies on it.
namespace takt::vm {
const char* layerName() noexcept;
} // namespace takt::vm
