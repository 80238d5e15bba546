// The native tier as takt sees it: the plugin takt-native.so (the package takt-native), loaded
// with dlopen the first time a program asks for native execution, so a run on the interpreter
// never maps LLVM. Without the plugin every program runs on the interpreter and the status says
// why (VmRunner::prepare).
#include "plugin_api.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

namespace takt::native {

namespace {

struct Plugin {
    const PluginApi* api = nullptr;
    std::string path;
    std::string error; // why api is null
};

// The directory of the running takt (or test binary): the plugin is looked up relative to it.
std::string executableDir() {
    std::vector<char> buf(PATH_MAX + 1);
    const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
    if (n <= 0) {
        return {};
    }
    std::string path(buf.data(), static_cast<std::size_t>(n));
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// TAKT_NATIVE_PLUGIN names the file; otherwise beside the binary (a build tree), then where the
// package installs it relative to the binary (/usr/bin/../lib/<triple>/takt).
std::vector<std::string> candidates() {
    if (const char* given = std::getenv("TAKT_NATIVE_PLUGIN"); given != nullptr && *given != '\0') {
        return {given};
    }
    const std::filesystem::path dir = executableDir();
    return {(dir / kPluginFile).string(), (dir / TAKT_NATIVE_PLUGIN_DIR / kPluginFile).lexically_normal().string()};
}

Plugin load() {
    Plugin p;
    if (TAKT_NATIVE_PLUGIN_BUILT == 0) {
        p.error = "this takt was built without the native tier (LLVM 14 not found at build time)";
        return p;
    }
    const std::vector<std::string> paths = candidates();
    for (const std::string& path : paths) {
        if (::access(path.c_str(), F_OK) != 0) {
            continue;
        }
        p.path = path;
        void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            const char* why = ::dlerror();
            p.error = "the native tier add-on " + path + " does not load: " + (why != nullptr ? why : "?");
            return p;
        }
        auto* entry = reinterpret_cast<TaktNativePluginFn>(::dlsym(handle, kPluginSymbol));
        const PluginApi* api = entry != nullptr ? entry() : nullptr;
        if (api == nullptr || api->abi != kPluginAbi || api->moduleBytes != sizeof(bytecode::Module) ||
            api->resultBytes != sizeof(CompileResult) || std::string_view(api->version) != TAKT_VERSION) {
            p.error = "the native tier add-on " + path + " belongs to another takt" +
                      (api != nullptr ? std::string(" (") + api->version + ")" : std::string()) +
                      "; install takt-native of this takt's version (" TAKT_VERSION ")";
            return p; // the handle stays open: nothing it holds is reachable
        }
        p.api = api;
        return p;
    }
    p.error = "the native tier add-on is not installed (Debian package takt-native; no " + paths.back() + ")";
    return p;
}

const Plugin& plugin() {
    static const Plugin loaded = load();
    return loaded;
}

} // namespace

bool available() noexcept {
    return plugin().api != nullptr;
}

std::string_view unavailableReason() noexcept {
    return plugin().error;
}

bool translates(bytecode::Opcode op) noexcept {
    return available() && plugin().api->translates(op);
}

std::string_view libraryName() noexcept {
    return available() ? plugin().api->libraryName() : std::string_view();
}

CompileResult compile(const bytecode::Module& module, std::span<const DirectFb> directFbs,
                      std::span<const bytecode::Opcode> leaveToInterpreter, const std::atomic<bool>* cancel,
                      unsigned threads, const PartListener* onPart) {
    if (!available()) {
        CompileResult result;
        result.error = plugin().error;
        return result;
    }
    return plugin().api->compile(module, directFbs, leaveToInterpreter, cancel, threads, onPart);
}

} // namespace takt::native
