#pragma once
// The Sparkplug B 3.0 edge node of `takt run` ([runtime.sparkplug], docs/sparkplug.md), an MQTT
// client (libmosquitto) on a thread of its own at the agent's side: never on a scan thread.
//
// It reaches the runtime only through the control service's typed calls (ControlServer::call,
// openStream), with the origin "sparkplug": var.list for the metric set, var.subscribe for the
// change stream (one notification per sampled cycle boundary: NDATA carries what it changed),
// events.subscribe for online changes (a new NBIRTH with the new metric set), var.write for NCMD
// writes with the role command_role, so the role checks and the audit log are the endpoint's.
//
// Sessions: one MQTT connection at a time to servers[i]; each new one takes the next bdSeq
// (kept in <state>/.takt/sparkplug/bdseq across restarts) and registers NDEATH with it as the
// will. A connection that is lost, refused or not up within kConnectTimeout moves to the next
// server of the list; so do NCMD Node Control/Next Server and, with primary_host_id, the host
// application's STATE going offline (Sparkplug 3.0). With primary_host_id nothing is born or
// published until that host's STATE says online.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "takt/agent/control.h"
#include "takt/agent/sparkplug_config.h"

namespace takt::agent {

struct SparkplugSetup {
    std::string stateDir;               // bdSeq is kept in <stateDir>/.takt/sparkplug/bdseq
    std::uint32_t cycleIntervalMs = 10; // the fastest the change stream is sampled
    // Where the node says what happens (connections, births, refused commands): `warning` for
    // what a user must act on.
    std::function<void(bool warning, const std::string& line)> log;
};

// What runtime.status says of the node.
struct SparkplugHealth {
    // connecting | waiting_for_host (connected, the primary host not online) | online (born) |
    // stopped
    std::string state = "stopped";
    std::string server;       // the broker of the current session (or attempt)
    std::uint64_t bdSeq = 0;  // of that session
    std::uint64_t births = 0; // NBIRTHs published since the start
    std::string reason;       // why the last session ended; empty: none has
};

class SparkplugNode {
public:
    SparkplugNode(SparkplugOptions options, SparkplugSetup setup, ControlServer& control);
    ~SparkplugNode(); // stop()
    SparkplugNode(const SparkplugNode&) = delete;
    SparkplugNode& operator=(const SparkplugNode&) = delete;

    // Starts the node's thread; false with `error` when the bdSeq file cannot be kept or the
    // thread cannot start. A broker that is not up is no error: the node keeps trying.
    bool start(std::string& error);
    // Publishes NDEATH, disconnects, ends the thread. Idempotent.
    void stop();
    [[nodiscard]] SparkplugHealth health() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace takt::agent
