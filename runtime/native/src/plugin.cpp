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

extern "C" __attribute__((visibility("default"))) const takt::native::PluginApi* takt_native_plugin() {
    return &kApi;
}
