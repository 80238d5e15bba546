#pragma once
// [runtime.opcua] of runtime.toml (engine::RuntimeConfig::Opcua) turned into what the OPC UA
// server process is started with: password files read and checked as token files are
// (readTokenFile: mode 0600 or stricter, not short, not a placeholder), truST's inline password
// checked as an inline control token, roles by name, paths taken from runtime.toml's folder, and
// Node.js found. `takt run` and `takt validate` both call it, so validate refuses what run refuses.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "takt/agent/rpc_method.h"
#include "takt/engine/config.h"

namespace takt::agent {

struct OpcuaUserOptions {
    std::string name;
    Role role = Role::Viewer;
    std::string password;
};

struct OpcuaOptions {
    bool enabled = false;
    std::string node; // the Node.js executable that runs the server
    std::string host;
    std::uint16_t port = 4840;
    std::string endpointPath;
    std::string namespaceUri; // "urn:takt:<resource>" unless runtime.toml names one
    std::uint32_t publishIntervalMs = 100;
    std::uint32_t maxNodes = 10000;
    std::vector<std::string> expose; // empty: every variable
    std::string securityPolicy;      // none | basic256sha256 | aes128_sha256_rsaoaep | aes256_sha256_rsapss
    std::string securityMode;        // none | sign | sign_and_encrypt
    bool allowAnonymous = true;
    // Absolute when given in runtime.toml; empty: the server keeps them under the state directory.
    std::string certificate, privateKey, pkiDir;
    std::vector<OpcuaUserOptions> users;
};

// The first of `names` that is an executable file in one of the folders of `searchPath` (PATH's
// syntax), or empty.
[[nodiscard]] std::string findExecutable(std::initializer_list<std::string_view> names, std::string_view searchPath);

// False with one error per refused key appended to `diagnostics` (file, line, column, key): no
// Node.js on `searchPath` (default: $PATH) while the section is enabled, an unreadable or loose
// password file, a weak password. truST's inline password adds a warning (move it into a password
// file); on a loopback address a weak one is only that warning, elsewhere it is refused. A section
// that is not enabled is not checked further and leaves `out.enabled` false.
bool opcuaOptionsFromConfig(const engine::RuntimeConfig& config, OpcuaOptions& out,
                            std::vector<engine::ConfigDiagnostic>& diagnostics,
                            std::optional<std::string_view> searchPath = std::nullopt);

} // namespace takt::agent
