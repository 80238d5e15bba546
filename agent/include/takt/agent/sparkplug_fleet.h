#pragma once
// A host-side view of a Sparkplug B group built from the broker alone (`takt fleet status`,
// docs/fleet.md): which edge nodes are online, with which bdSeq, since which birth, how many
// metrics, which program. Sparkplug keeps nothing retained for edge nodes, so the view is what is
// heard while listening to spBv1.0/<group>/# for a while; with `rebirth`, every edge node heard
// is sent Node Control/Rebirth once, so that one that only sends NDATA births within the window.
//
// FleetView takes the messages (any thread-free order of topic + payload) and holds the state;
// watchFleet connects to the brokers (libmosquitto), listens and feeds a FleetView.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "takt/engine/config.h"

namespace takt::agent {

struct EdgeNodeView {
    std::string id;                              // edge_node_id
    bool birthSeen = false;                      // an NBIRTH was heard
    bool online = false;                         // born and no NDEATH of that bdSeq since; or NDATA heard
    std::optional<std::uint64_t> bdSeq;          // of the last NBIRTH (or NDEATH when no birth was heard)
    std::uint64_t lastBirthMs = 0;               // the last NBIRTH's payload timestamp (ms since 1970)
    std::size_t metrics = 0;                     // the birth's metrics, without bdSeq, Node Control/* and Properties/*
    std::string programHash;                     // the birth's Properties/Program Hash; empty: none
    std::string server;                          // the broker the last message came through
    std::uint64_t messages = 0;                  // messages heard from the node
    std::optional<std::uint64_t> lastDeathBdSeq; // the bdSeq of the last NDEATH heard
    std::string problem;                         // the last payload that did not decode, and why
};

class FleetView {
public:
    explicit FleetView(std::string group) : group_(std::move(group)) {}

    // One message of spBv1.0/<group>/#, heard through `server`. Returns the edge node it came from
    // when it is an edge node's message (NBIRTH, NDATA, NDEATH, NCMD is not: that is a host's),
    // else nullopt. Device messages (DBIRTH, DDATA, DDEATH) count as their node's.
    std::optional<std::string> take(std::string_view topic, std::string_view payload, const std::string& server);

    [[nodiscard]] const std::map<std::string, EdgeNodeView>& nodes() const { return nodes_; }

private:
    std::string group_;
    std::map<std::string, EdgeNodeView> nodes_; // by edge_node_id, in name order
};

struct FleetWatchOptions {
    std::vector<engine::RuntimeConfig::Sparkplug::Server> servers; // each is listened to
    std::string group;
    std::chrono::milliseconds timeout{5000};
    bool rebirth = false; // send Node Control/Rebirth to each edge node heard, once
    std::string username, password;
    std::string tlsCa, tlsCert, tlsKey;
    // Said to the user: a broker that cannot be reached, a rebirth sent.
    std::function<void(const std::string& line)> log;
    // Asked all along with how long it may wait (ms): true ends the watch early with what was
    // heard (`takt fleet status` on Ctrl-C). None: the whole timeout.
    std::function<bool(int waitMs)> stopRequested;
};

// Listens for `timeout` on every server (less when stopRequested says so) and fills `view`; how
// long it listened goes to `listened`. False with `error` when no server could be connected to
// (each one's reason in it); a server that fails while others work is only logged.
bool watchFleet(const FleetWatchOptions& options, FleetView& view, std::string& error,
                std::chrono::milliseconds& listened);

} // namespace takt::agent
