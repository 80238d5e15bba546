#pragma once
// runtime.toml as the runtime uses it (CONFIG.md "runtime.toml"). The loader reports every
// problem with file, line, column and key path; unknown keys are errors, keys truST defines but
// takt does not implement are warnings, and nothing is defaulted silently for a typo.
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace takt::engine {

// One finding of a config loader (runtime.toml, io.toml, a board file).
struct ConfigDiagnostic {
    enum class Severity : std::uint8_t { Error, Warning };
    Severity severity = Severity::Error;
    std::string file;
    std::uint32_t line = 0; // 1-based; 0 when the problem is the file itself
    std::uint32_t column = 0;
    std::string key; // dotted key path, e.g. "runtime.watchdog.timeout_ms"
    std::string message;
    std::string code; // a compiler diagnostic code ("E0102") when the problem is in the ST sources
};

// "file:line:col: error: key: message" ("error[E0102]: message" for a coded one) — the one human rendering of a
// ConfigDiagnostic.
[[nodiscard]] std::string formatDiagnostic(const ConfigDiagnostic& d);

enum class FaultAction : std::uint8_t { Halt, SafeHalt, Restart };

// Where a key stood in the file read, for checks made after loading (a token file's contents).
struct ConfigPosition {
    std::uint32_t line = 0; // 1-based; 0 when unknown
    std::uint32_t column = 0;
};

struct ControlToken {
    std::string role; // viewer | operator | engineer | admin
    std::string token;
    std::string tokenFile;
    ConfigPosition where; // of the token or token_file key
};

// A user of the OPC UA server: [[runtime.opcua.users]], or truST's username / password.
struct OpcuaUser {
    std::string name;
    std::string role;         // viewer | operator | engineer | admin
    std::string passwordFile; // relative to runtime.toml's folder
    std::string password;     // truST's inline password (runtime.opcua.password)
    std::string key;          // of the secret: "runtime.opcua.users[0].password_file", "runtime.opcua.password"
    ConfigPosition where;     // of password_file or password
};

struct RuntimeConfig {
    std::filesystem::path file; // the runtime.toml read
    std::int64_t bundleVersion = 1;

    std::string resourceName = "takt";
    std::uint32_t cycleIntervalMs = 10;

    bool overflowTrap = false; // [build] overflow = "trap"
    // [runtime] execution = "native": program bodies compiled to machine code (vm_runner.h);
    // "interpreter" (the default) runs the bytecode interpreter.
    bool nativeExecution = false;
    // [runtime] native_start = "wait": a native program's first cycle waits for its code;
    // "background" (the default) starts it on the interpreter and switches when the code is ready.
    bool nativeStartWait = false;
    bool byteAddressing = false; // [build] address_mode = "byte"

    struct Control {
        std::string endpoint;  // empty: no control endpoint
        std::string authToken; // truST single admin token
        ConfigPosition authTokenWhere;
        std::vector<ControlToken> tokens;
        std::string tlsCert, tlsKey, tlsClientCa;
        std::uint32_t auditMaxMib = 8;           // audit_max_mib: .takt/audit.log is rotated at this size
        std::uint32_t auditKeep = 4;             // audit_keep: rotated files kept (audit.log.1 .. .N)
        std::uint32_t handshakeTimeoutMs = 5000; // handshake_timeout_ms: a TLS client's handshake
        bool debugEnabled = false;               // debug_enabled (truST's key): the debug.* methods answer
    } control;

    // [runtime.web] (truST's keys): the live web page and /metrics, served from a low-priority
    // thread through the control endpoint's methods and roles.
    struct Web {
        bool enabled = false;                  // the table is given and enabled is not false
        std::string listen = "127.0.0.1:8080"; // host:port; 0 as port: any free one (tests)
        std::string host = "127.0.0.1";
        std::uint16_t port = 8080;
        bool tokenAuth = false; // auth = "token": every request logs in with a control token
        bool tls = false;       // HTTPS with tls_cert / tls_key
        std::string tlsCert, tlsKey;
    } web;

    // [runtime.opcua]: the OPC UA server process beside the runtime (docs/opcua.md).
    struct Opcua {
        bool enabled = false; // the table is given with enabled = true
        ConfigPosition where; // of enabled
        std::string listen = "127.0.0.1:4840";
        std::string host = "127.0.0.1";
        std::uint16_t port = 4840;
        std::string endpointPath = "/";
        std::string namespaceUri;              // empty: "urn:takt:<resource name>"
        std::uint32_t publishIntervalMs = 100; // the shortest publishing interval granted
        std::uint32_t maxNodes = 10000;        // variables in the address space at most
        std::vector<std::string> expose;       // globs over var.list paths; empty: every variable
        std::string securityPolicy = "none";   // none | basic256sha256 | aes128_sha256_rsaoaep | aes256_sha256_rsapss
        std::string securityMode = "none";     // none | sign | sign_and_encrypt
        bool allowAnonymous = true;            // an anonymous session has the viewer role
        bool allowInsecureNetwork = false;     // security "none" on an address other hosts can reach
        std::string certificate, privateKey;   // PEM; empty: generated into the state directory
        // The server's PKI folder: own/ (its certificate), trusted/certs (client certificates it
        // trusts), rejected/ (refused clients'); empty: .takt/opcua/pki under the state directory.
        std::string pkiDir;
        std::vector<OpcuaUser> users;
    } opcua;

    // [runtime.sparkplug]: a Sparkplug B 3.0 edge node (docs/configuration.md, docs/sparkplug.md),
    // which `takt run` runs (agent/src/sparkplug/sparkplug_node.cpp).
    struct Sparkplug {
        bool enabled = false;
        ConfigPosition where; // of enabled
        struct Server {
            std::string url; // "tcp://broker:1883", "ssl://broker:8883"
            bool tls = false;
            std::string host;
            std::uint16_t port = 0;
        };
        std::vector<Server> servers;     // failover order
        std::string groupId, edgeNodeId; // topic levels spBv1.0/<group_id>/NBIRTH/<edge_node_id>
        std::vector<std::string> expose; // globs over var.list paths; empty: every variable
        std::string primaryHostId;       // empty: publish whether or not a host application is online
        std::string username;
        std::string passwordFile; // relative to runtime.toml's folder; a token file (mode 0600)
        ConfigPosition passwordWhere;
        std::string tlsCa, tlsCert, tlsKey; // PEM files, relative to runtime.toml's folder
        ConfigPosition tlsWhere;
        std::string commandRole = "engineer"; // the role NCMD writes are given
        // Absolute deadbands of numeric metrics: NDATA carries a change of one only once it moved
        // by more than its deadband from the value last sent. `deadband` is every metric's; the
        // first entry of `deadbands` whose glob matches a metric's path wins over it.
        double deadband = 0;
        struct Deadband {
            std::string expose; // a glob over var.list paths, as in `expose`
            double absolute = 0;
        };
        std::vector<Deadband> deadbands;
    } sparkplug;

    struct Log {
        std::string level = "info"; // trace | debug | info | warn | error | off
    } log;

    struct Retain {
        bool enabled = false;                        // mode = "file"
        std::filesystem::path path = ".takt/retain"; // slots path.a / path.b (relative to the project)
        std::uint32_t saveIntervalMs = 1000;
    } retain;

    struct Watchdog {
        bool enabled = true;
        std::uint32_t timeoutMs = 50;
        FaultAction action = FaultAction::SafeHalt;
    } watchdog;

    struct Fault {
        FaultAction policy = FaultAction::SafeHalt;
    } fault;

    bool realtimeGiven = false; // runtime.toml has [runtime.realtime] (a board's recommendation then yields)
    struct Realtime {
        bool fifo = false; // scheduler = "fifo"
        int priority = 0;  // 1..99 with fifo
        std::vector<int> cpuAffinity;
        // [runtime.realtime.task_affinity]: a TASK's name -> the CPUs its thread may run on
        // (instead of cpuAffinity), when the tasks run on threads of their own.
        std::vector<std::pair<std::string, std::vector<int>>> taskAffinity;
        bool lockMemory = false;
        // cpu_dma_latency_us: the CPU wake-up latency held while the scan runs
        // (cpu_latency.h); unset: by the scheduler; negative: `false`, the system's own.
        std::optional<std::int32_t> cpuDmaLatencyUs;
    } realtime;
    // [runtime.debug]
    struct Debug {
        // outputs = "safe": while a task is halted in the debugger the outputs are in the safe
        // state (io.toml's safe values); "hold" (the default) keeps the values last written.
        bool safeOutputsWhileHalted = false;
    } debug;
};

struct RuntimeConfigResult {
    std::optional<RuntimeConfig> config; // empty when any error was found
    std::vector<ConfigDiagnostic> diagnostics;
};

// A runtime.toml section truST defines for a service takt does not have: accepted and ignored
// (a warning when it asks for something), with every key truST defines in it, so a typo inside
// it is still an error. In `keys`, "a[].b" is key b of the tables of array a and "a.*" a table
// with free-form keys.
struct TrustSection {
    std::string_view path; // "runtime.opcua"
    std::string_view what; // what takt does not do yet
    std::initializer_list<std::string_view> keys;
};

// Every such section; docs/configuration.md lists them and a test holds the page to this list.
[[nodiscard]] std::span<const TrustSection> trustSections() noexcept;

// Reads and checks runtime.toml. Never throws.
[[nodiscard]] RuntimeConfigResult loadRuntimeConfig(const std::filesystem::path& file);
// The same from text (tests, fuzzing); `file` is only used in diagnostics.
[[nodiscard]] RuntimeConfigResult parseRuntimeConfig(std::string_view text, const std::string& file);

} // namespace takt::engine
