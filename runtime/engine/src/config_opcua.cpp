// [runtime.opcua] of runtime.toml (docs/configuration.md, docs/opcua.md): truST's keys, so a truST
// project's OPC UA server keeps serving, plus what a production server needs (certificates, client
// certificate folders, users with password files). Only the keys are read here; the password files
// and Node.js are checked where the server is started (agent/src/opcua/opcua_config.cpp), by
// `takt validate` and `takt run` alike.
#include <algorithm>

#include <fmt/format.h>

#include "takt/common/toml_names.h"
#include "takt/engine/config_reader.h"

namespace takt::engine {

namespace {

using Severity = ConfigDiagnostic::Severity;

// OPC UA 1.04 deprecates Basic128Rsa15 and Basic256 (SHA-1); takt does not offer them.
constexpr std::string_view kDeprecatedPolicies[] = {"basic128rsa15", "basic256"};

std::optional<std::string> nonEmpty(TableReader& r, std::string_view key) {
    std::optional<std::string> s = r.string(key);
    if (s && s->empty()) {
        r.error(key, "must not be empty (remove the key for the default)");
        return std::nullopt;
    }
    return s;
}

void readUsers(TableReader& r, RuntimeConfig::Opcua& o) {
    r.forEachTable("users", [&](TableReader& ur) {
        OpcuaUser user;
        user.key = ur.keyPath("password_file");
        user.name = ur.string("name", true).value_or("");
        if (user.name.empty() && ur.raw().get("name") != nullptr) {
            ur.error("name", "must not be empty");
        }
        if (auto role = ur.choice<std::string_view>(
                "role", {{"viewer", "viewer"}, {"operator", "operator"}, {"engineer", "engineer"}, {"admin", "admin"}},
                true)) {
            user.role = *role;
        }
        user.passwordFile = ur.string("password_file", true).value_or("");
        if (user.passwordFile.empty() && ur.raw().get("password_file") != nullptr) {
            ur.error("password_file", "must not be empty");
        }
        user.where = ur.position("password_file");
        ur.finish();
        const bool twice = std::any_of(o.users.begin(), o.users.end(),
                                       [&](const OpcuaUser& u) { return !u.name.empty() && u.name == user.name; });
        if (twice) {
            ur.error("name", fmt::format("user \"{}\" is given twice", user.name));
        }
        o.users.push_back(std::move(user));
    });
}

// truST's one user: `username` and `password` inline. It may write (the engineer role), as the
// only user truST's server knows; the password is checked like an inline control token.
void readTrustUser(TableReader& r, RuntimeConfig::Opcua& o) {
    const std::optional<std::string> name = nonEmpty(r, "username");
    const std::optional<std::string> password = r.string("password");
    if (name.has_value() != password.has_value()) {
        r.error(name ? "username" : "password", "give both username and password, or neither (or use "
                                                "[[runtime.opcua.users]] with a password_file)");
        return;
    }
    if (!name) {
        return;
    }
    if (password->empty()) {
        r.error("password", "must not be empty");
        return;
    }
    OpcuaUser user;
    user.name = *name;
    user.role = "engineer";
    user.password = *password;
    user.key = r.keyPath("password");
    user.where = r.position("password");
    o.users.push_back(std::move(user));
}

void readSecurity(TableReader& r, RuntimeConfig::Opcua& o) {
    const std::optional<std::string> policy = r.string("security_policy");
    if (policy) {
        if (std::find(std::begin(kDeprecatedPolicies), std::end(kDeprecatedPolicies), *policy) !=
            std::end(kDeprecatedPolicies)) {
            r.error("security_policy", fmt::format("\"{}\" is deprecated by OPC UA 1.04 (SHA-1) and not offered; use "
                                                   "\"basic256sha256\"",
                                                   *policy));
        } else if (*policy != "none" && *policy != "basic256sha256" && *policy != "aes128_sha256_rsaoaep" &&
                   *policy != "aes256_sha256_rsapss") {
            r.error("security_policy", fmt::format("unknown value \"{}\" (expected one of: none, basic256sha256, "
                                                   "aes128_sha256_rsaoaep, aes256_sha256_rsapss)",
                                                   *policy));
        } else {
            o.securityPolicy = *policy;
        }
    }
    const std::optional<std::string_view> mode = r.choice<std::string_view>(
        "security_mode", {{"none", "none"}, {"sign", "sign"}, {"sign_and_encrypt", "sign_and_encrypt"}});
    if (mode) {
        o.securityMode = *mode;
    }
    // One given: the other follows (a secure policy signs and encrypts; a secure mode uses the
    // current policy). Both given: they must agree on whether there is security at all.
    if (policy && !mode && r.raw().get("security_mode") == nullptr) {
        o.securityMode = o.securityPolicy == "none" ? "none" : "sign_and_encrypt";
    } else if (mode && !policy && r.raw().get("security_policy") == nullptr) {
        o.securityPolicy = o.securityMode == "none" ? "none" : "basic256sha256";
    } else if (policy && mode && (o.securityPolicy == "none") != (o.securityMode == "none")) {
        r.error("security_mode", fmt::format("security_mode \"{}\" does not go with security_policy \"{}\" (\"none\" "
                                             "goes with \"none\" only)",
                                             o.securityMode, o.securityPolicy));
    }
}

} // namespace

void readOpcua(TableReader& r, RuntimeConfig::Opcua& o) {
    if (auto on = r.boolean("enabled")) {
        o.enabled = *on;
    }
    o.where = r.position("enabled");
    if (auto listen = r.string("listen")) {
        o.listen = *listen;
    }
    if (auto path = r.string("endpoint_path")) {
        const bool printable = std::all_of(path->begin(), path->end(), [](char ch) {
            return ch > ' ' && ch < 0x7f && ch != '?' && ch != '#' && ch != '%';
        });
        if (!path->starts_with("/") || !printable) {
            r.error("endpoint_path",
                    fmt::format("\"{}\" is not a path: it starts with / and has no spaces, ?, # or %", *path));
        } else {
            o.endpointPath = *path;
        }
    }
    if (auto uri = nonEmpty(r, "namespace_uri")) {
        if (uri->find(':') == std::string::npos) {
            r.error("namespace_uri", fmt::format("\"{}\" is not a URI (e.g. urn:example:line1)", *uri));
        } else {
            o.namespaceUri = *uri;
        }
    }
    if (auto ms = r.integer("publish_interval_ms", 10, 3'600'000)) {
        o.publishIntervalMs = static_cast<std::uint32_t>(*ms);
    }
    if (auto n = r.integer("max_nodes", 1, 1'000'000)) {
        o.maxNodes = static_cast<std::uint32_t>(*n);
    }
    r.globList("expose", o.expose);
    readSecurity(r, o);
    if (auto anonymous = r.boolean("allow_anonymous")) {
        o.allowAnonymous = *anonymous;
    }
    if (auto insecure = r.boolean("allow_insecure_network")) {
        o.allowInsecureNetwork = *insecure;
    }
    o.certificate = nonEmpty(r, "certificate").value_or("");
    o.privateKey = nonEmpty(r, "private_key").value_or("");
    o.pkiDir = nonEmpty(r, "pki_dir").value_or("");
    readTrustUser(r, o);
    readUsers(r, o);
    r.finish();

    if (!o.enabled) {
        return; // truST writes a disabled section with its settings kept: nothing is served
    }
    if (!splitHostPort(o.listen, o.host, o.port)) {
        r.error("listen", fmt::format("\"{}\" needs host:port, e.g. 127.0.0.1:4840", o.listen));
        return;
    }
    if (o.host.size() > 2 && o.host.front() == '[' && o.host.back() == ']') {
        o.host = o.host.substr(1, o.host.size() - 2); // [::1]:4840
    }
    if (o.certificate.empty() != o.privateKey.empty()) {
        r.error(o.certificate.empty() ? "private_key" : "certificate",
                "give both certificate and private_key, or neither (one is then generated into the state directory)");
    }
    if (!o.allowAnonymous && o.users.empty()) {
        r.error("allow_anonymous", "allow_anonymous = false and no users: nobody could log in (add "
                                   "[[runtime.opcua.users]])");
    }
    if (o.securityPolicy == "none" && !isLoopbackHost(o.host) && !o.allowInsecureNetwork) {
        // As for the control endpoint and the web page: values, writes and passwords in clear text
        // over a network are refused unless the user says so.
        r.error(r.raw().get("security_policy") != nullptr ? "security_policy" : "listen",
                fmt::format("\"{}\" is not a loopback address: serving it needs security_policy = \"basic256sha256\" "
                            "(signed and encrypted), or allow_insecure_network = true to serve it without security",
                            o.listen));
    }
}

} // namespace takt::engine
