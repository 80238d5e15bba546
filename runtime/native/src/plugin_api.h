#pragma once
// The native tier's plugin (takt-native.so, the Debian package takt-native): the one symbol
// takt looks up after dlopen, and what it returns. takt and the plugin are built from the same
// source by the same compiler (the package takt-native depends on the same version of takt), so
// the table passes C++ types; kPluginAbi and the sizes below catch a plugin from another build.
#include "takt/native/native.h"

#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>

namespace takt::native {

// Raised whenever native.h or this table changes.
inline constexpr std::uint32_t kPluginAbi = 5;
inline constexpr const char* kPluginSymbol = "takt_native_plugin";
inline constexpr const char* kPluginFile = "takt-native.so";

struct PluginApi {
    std::uint32_t abi;
    std::uint32_t moduleBytes; // sizeof(bytecode::Module)
    std::uint32_t resultBytes; // sizeof(CompileResult)
    const char* version;       // takt's version the plugin was built with
    bool (*translates)(bytecode::Opcode op) noexcept;
    std::string_view (*libraryName)() noexcept;
    CompileResult (*compile)(const bytecode::Module& module, std::span<const DirectFb> directFbs,
                             std::span<const bytecode::Opcode> leaveToInterpreter, const std::atomic<bool>* cancel,
                             unsigned threads, const PartListener* onPart);
};

// The translator inside the plugin (translator.cpp), behind the table.
namespace tier {
[[nodiscard]] bool translates(bytecode::Opcode op) noexcept;
[[nodiscard]] std::string_view libraryName() noexcept;
[[nodiscard]] CompileResult compile(const bytecode::Module& module, std::span<const DirectFb> directFbs,
                                    std::span<const bytecode::Opcode> leaveToInterpreter,
                                    const std::atomic<bool>* cancel, unsigned threads, const PartListener* onPart);
} // namespace tier

} // namespace takt::native

extern "C" {
using TaktNativePluginFn = const takt::native::PluginApi* (*)();
}
