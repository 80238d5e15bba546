#pragma once
// The OPC UA server beside the runtime ([runtime.opcua], docs/opcua.md), as TwinCAT runs its
// TF6100 server: a Node.js process (node-opcua, opcua/server.js) that `takt run` starts, restarts
// with back-off when it dies, reports on (health()) and stops with the runtime.
//
// The private channel: a socket pair made for each start, one end left to the process as its
// descriptor 3 and no other. Nothing else can reach it: it has no name in the file system and no
// port, so no token has to be kept anywhere and no other local user can connect, and it closes
// with either side (the process ends when the runtime is gone). Over it the process makes the
// runtime's typed calls, JSON-RPC lines as on the control endpoint; each goes through
// ControlServer::call with the origin "opcua" and the role of the OPC UA session, so the method
// table, the role checks, the rate limit and the audit log are the endpoint's. Only the methods a
// server needs pass (var.list, var.read, var.write, runtime.status). The process keeps no
// password and claims no role: it hands a client's user name and password to opcua.login, the
// runtime checks them against [[runtime.opcua.users]] and answers a session handle, and every
// call for that session carries the handle, which the runtime maps to the user and its role (the
// audit log's peer is "opcua:<user>"). Calls without one are anonymous: the viewer role.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "takt/agent/control.h"
#include "takt/agent/opcua_config.h"

namespace takt::agent {

struct OpcuaHealth {
    std::string state = "stopped"; // starting | running | restarting | stopped
    std::string endpoint;          // opc.tcp://… once the process listens
    std::string reason;            // why it last ended ("exited with status 1"); empty: it has not
    std::uint64_t restarts = 0;    // starts after the first
    int pid = 0;                   // 0: no process
    // As the process last answered the liveness ping (0 until it runs): its OPC UA sessions,
    // subscriptions and monitored items.
    std::uint64_t sessions = 0;
    std::uint64_t subscriptions = 0;
    std::uint64_t monitoredItems = 0;
};

struct OpcuaProcess {
    std::string node;     // the Node.js executable (OpcuaOptions::node)
    std::string script;   // opcua/server.js
    std::string pkiDir;   // OpcuaOptions::pkiDir, else <state>/.takt/opcua/pki
    std::string resource; // [resource] name: the root folder of the address space
    std::string version;  // takt's, for BuildInfo
    // The base cycle's interval: the fastest a value can change, so the fastest the value feed
    // samples and monitored items are offered (never below var.subscribe's 10 ms).
    std::uint32_t cycleIntervalMs = 10;
    // The CPUs [runtime.realtime] pins the scan and task threads to: the process runs on the others
    // (opcua_placement.h), at nice 10.
    std::vector<int> scanCpus;
};

class OpcuaServer {
public:
    OpcuaServer(OpcuaOptions options, OpcuaProcess process, ControlServer& control);
    ~OpcuaServer(); // stops
    OpcuaServer(const OpcuaServer&) = delete;
    OpcuaServer& operator=(const OpcuaServer&) = delete;

    // Starts the supervising thread, which starts the process. False with `error` when the thread
    // cannot be started; a process that fails is restarted, not an error here.
    bool start(std::string& error);
    // Ends the process (SIGTERM, SIGKILL after 3 s) and the thread.
    void stop();
    [[nodiscard]] OpcuaHealth health() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Where opcua/server.js is: $TAKT_OPCUA_DIR, else the installed copy (…/share/takt/opcua beside
// the takt executable's prefix), else the source tree's; empty with `error` saying what is missing
// (the folder, or its node_modules: `npm ci` there).
[[nodiscard]] std::string findOpcuaScript(std::string& error);

} // namespace takt::agent
