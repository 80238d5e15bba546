// The entry of takt-native.so: the table takt's loader (loader.cpp) asks for after dlopen.
#include "plugin_api.h"

namespace {

const takt::native::PluginApi kApi{
    takt::native::kPluginAbi,
    sizeof(takt::bytecode::Module),
    sizeof(takt::native::CompileResult),
    TAKT_VERSION,
    &takt::native::tier::translates,
    &takt::native::tier::libraryName,
    &takt::native::tier::compile,
};

} // namespace

// A C name, the one symbol the plugin exports (kPluginSymbol).
// NOLINTNEXTLINE(readability-identifier-naming)
extern "C" __attribute__((visibility("default"))) const takt::native::PluginApi* takt_native_plugin() {
    return &kApi;
}
