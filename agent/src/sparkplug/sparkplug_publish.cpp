// Births, data, deaths and historical data of the Sparkplug edge node, and the messages it takes:
// NCMD and the primary host's STATE (sparkplug_node_impl.h).
#include <span>
#include <thread>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "rpc/rpc_json.h"
#include "sparkplug/sparkplug_node_impl.h"

namespace takt::agent {

using sp::Event;
using sp::kHistoryChunk;
using sp::kMaxHistory;
using sp::nowMs;

// NDEATH published by the node itself before it disconnects on purpose: a clean disconnect does
// not fire the will.
void SparkplugNode::Impl::sendDeath() {
    if (!connected) {
        return;
    }
    sp::Payload payload;
    payload.timestamp = nowMs();
    payload.metrics.push_back(sp::bdSeqMetric(bdSeq));
    (void)publish("NDEATH", payload, 1);
    for (int i = 0; i < 100 && mosquitto_want_write(mosq); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

bool SparkplugNode::Impl::publish(const std::string& type, const sp::Payload& payload, int qos) {
    std::string bytes;
    sp::Error error;
    if (!sp::encodePayload(payload, bytes, error)) {
        log(true, fmt::format("sparkplug: {} not sent: {} ({})", type, error.message, error.metric));
        return false;
    }
    const std::string topic = base + type + "/" + options.edgeNodeId;
    const int rc =
        mosquitto_publish(mosq, nullptr, topic.c_str(), static_cast<int>(bytes.size()), bytes.data(), qos, false);
    if (rc != MOSQ_ERR_SUCCESS) {
        log(true, fmt::format("sparkplug: {} not sent: {}", type, mosquitto_strerror(rc)));
        return false;
    }
    return true;
}

// Births or sends what changed, when the session may publish: connected, every value known,
// and (with primary_host_id) the host application online.
void SparkplugNode::Impl::publishDue() {
    if (!connected || !metrics.complete() || (!stateTopic.empty() && !hostOnline)) {
        return;
    }
    if (!born) {
        birth();
    } else {
        data();
    }
}

void SparkplugNode::Impl::birth() {
    sp::Payload payload;
    payload.timestamp = nowMs();
    seq = 0;
    payload.seq = seq;
    payload.metrics.push_back(sp::bdSeqMetric(bdSeq));
    for (const std::string_view name : {sp::kRebirth, sp::kNextServer}) {
        const sp::MetricSpec* spec = metrics.table().byName(name);
        payload.metrics.push_back(
            sp::Metric{std::string(name), spec->alias, sp::IecType::Bool, false, false, std::nullopt, false, {}});
    }
    if (!programHash.empty()) {
        payload.metrics.push_back(sp::Metric{std::string(sp::kProgramHash),
                                             metrics.table().byName(sp::kProgramHash)->alias,
                                             sp::IecType::String,
                                             programHash,
                                             false,
                                             std::nullopt,
                                             false,
                                             {}});
    }
    for (sp::MetricState& m : metrics.metrics()) {
        payload.metrics.push_back(sp::Metric{m.spec.name, m.spec.alias, m.spec.type, *m.value, false, std::nullopt,
                                             false, sp::propertiesOf(m, *m.value)});
        m.dirty = false;
        m.sent = m.value;
    }
    if (publish("NBIRTH", payload, 0)) {
        born = true;
        everBorn = true;
        setHealth([](SparkplugHealth& h) {
            h.state = "online";
            ++h.births;
        });
        log(false, fmt::format("sparkplug: NBIRTH on {} (bdSeq {}, {} metrics)", options.servers[server].url, bdSeq,
                               metrics.size()));
        sendHistory();
    }
}

void SparkplugNode::Impl::keep(const std::vector<std::size_t>& changed) {
    const std::uint64_t now = nowMs();
    for (const std::size_t i : changed) {
        sp::MetricState& m = metrics.metrics()[i];
        history.push_back(Kept{m.path, m.spec.type, *m.value, now});
        m.sent = m.value; // the deadband counts from what the host will be given
        if (history.size() > kMaxHistory) {
            history.pop_front();
            ++historyDropped;
        }
    }
}

// The changes kept while offline, after the birth that ends the outage: NDATA by the new birth's
// aliases, each metric historical with the time it changed. Metrics an online change removed or
// retyped meanwhile are left out.
void SparkplugNode::Impl::sendHistory() {
    if (history.empty() && historyDropped == 0) {
        return;
    }
    std::size_t sent = 0;
    sp::Payload payload;
    const auto flush = [&] {
        if (payload.metrics.empty()) {
            return;
        }
        seq = static_cast<std::uint8_t>(seq + 1);
        payload.seq = seq;
        payload.timestamp = nowMs();
        if (publish("NDATA", payload, 0)) {
            sent += payload.metrics.size();
        }
        payload.metrics.clear();
    };
    for (Kept& k : history) {
        const sp::MetricState* m = metrics.byPath(k.path);
        if (m == nullptr || m->spec.type != k.type) {
            continue;
        }
        std::vector<std::pair<std::string, std::string>> properties = sp::propertiesOf(*m, k.value);
        payload.metrics.push_back(
            sp::Metric{{}, m->spec.alias, k.type, std::move(k.value), false, k.timestamp, true, std::move(properties)});
        if (payload.metrics.size() >= kHistoryChunk) {
            flush();
        }
    }
    flush();
    log(historyDropped > 0,
        fmt::format("sparkplug: {} changes kept while offline sent as historical data{}", sent,
                    historyDropped > 0
                        ? fmt::format(" ({} older ones dropped: at most {} are kept)", historyDropped, kMaxHistory)
                        : std::string()));
    history.clear();
    historyDropped = 0;
}

void SparkplugNode::Impl::data() {
    sp::Payload payload;
    payload.timestamp = nowMs();
    for (sp::MetricState& m : metrics.metrics()) {
        if (m.dirty) {
            payload.metrics.push_back(sp::Metric{
                {}, m.spec.alias, m.spec.type, *m.value, false, std::nullopt, false, sp::propertiesOf(m, *m.value)});
            m.dirty = false;
            m.sent = m.value;
        }
    }
    if (payload.metrics.empty()) {
        return;
    }
    seq = static_cast<std::uint8_t>(seq + 1); // 0..255 across NBIRTH and NDATA
    payload.seq = seq;
    (void)publish("NDATA", payload, 0);
}

// An NCMD: Node Control first, then the variable writes. A write to a CONSTANT or to an input
// refuses the whole command (nothing written, each refusal logged and audited); the others go
// through var.write with command_role, each audited as the endpoint audits it.
void SparkplugNode::Impl::command(const std::string& bytes) {
    std::vector<sp::MetricWrite> writes;
    sp::Error error;
    const ControlServer::Caller who = caller();
    if (!sp::decodeCommand(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
                           metrics.table(), writes, error)) {
        log(true, fmt::format("sparkplug: NCMD refused: {}{}{}", sp::errorCodeName(error.code),
                              error.metric.empty() ? "" : " on " + error.metric, ": " + error.message));
        control.audit(who, options.commandRole, "sparkplug.ncmd", rpc::kInvalidParams);
        return;
    }
    bool rebirth = false;
    bool next = false;
    std::vector<std::pair<const sp::MetricState*, const sp::MetricWrite*>> variables;
    bool refused = false;
    for (const sp::MetricWrite& w : writes) {
        if (w.name == sp::kRebirth) {
            rebirth = rebirth || std::get<bool>(w.value);
            continue;
        }
        if (w.name == sp::kNextServer) {
            next = next || std::get<bool>(w.value);
            continue;
        }
        if (w.name == sp::kProgramHash) {
            log(true,
                fmt::format("sparkplug: NCMD refused: {} is read-only: nothing of the command was written", w.name));
            control.audit(who, options.commandRole, "sparkplug.ncmd", rpc::kInvalidParams);
            refused = true;
            continue;
        }
        const sp::MetricState* m = metrics.byName(w.name);
        if (m == nullptr) {
            continue; // the table holds only the set's metrics, Node Control and the program hash
        }
        if (m->constant || m->input) {
            log(true, fmt::format("sparkplug: NCMD refused: {} is {}: nothing of the command was written", w.name,
                                  m->constant ? "a CONSTANT" : fmt::format("an input the program does not own")));
            control.audit(who, options.commandRole, "var.write", rpc::kInvalidParams);
            refused = true;
            continue;
        }
        variables.emplace_back(m, &w);
    }
    if (refused) {
        return;
    }
    for (const auto& [m, w] : variables) {
        ControlServer::Call call;
        call.caller = who;
        call.role = options.commandRole;
        call.method = "var.write";
        const std::string params = fmt::format(R"({{"name":{},"value":{}}})", rpc::quoted(m->path),
                                               sp::typedJson(m->typeName, m->spec.type, w->value));
        call.params.Parse(params.c_str(), params.size());
        control.call(std::move(call), [this, name = w->name](const MethodAnswer& a) {
            if (!a.ok) {
                pushLog(fmt::format("sparkplug: NCMD write of {} refused: {} ({})", name, a.message, a.code));
            }
        });
    }
    if (next) {
        log(false, "sparkplug: NCMD Node Control/Next Server");
        sendDeath();
        failed("left for the next server (Node Control/Next Server)");
        return;
    }
    if (rebirth) {
        born = false;
        publishDue();
    }
}

// The primary host application's STATE (Sparkplug 3.0): {"online":bool,"timestamp":ms}. An older
// timestamp than the last one seen is a stale message and ignored. Going offline while the node
// is born ends the session: NDEATH, then the next server.
void SparkplugNode::Impl::state(const std::string& text) {
    rapidjson::Document doc;
    if (doc.Parse(text.c_str(), text.size()).HasParseError() || !doc.IsObject() || !doc.HasMember("online") ||
        !doc["online"].IsBool() || !doc.HasMember("timestamp") || !doc["timestamp"].IsUint64()) {
        log(true, fmt::format("sparkplug: {}: not a Sparkplug 3.0 STATE payload ({{\"online\":…,\"timestamp\":…}}), "
                              "ignored",
                              stateTopic));
        return;
    }
    const std::uint64_t timestamp = doc["timestamp"].GetUint64();
    if (timestamp < hostTimestamp) {
        return;
    }
    hostTimestamp = timestamp;
    const bool online = doc["online"].GetBool();
    if (online) {
        hostOnline = true;
        publishDue();
        return;
    }
    hostOnline = false;
    setHealth([](SparkplugHealth& h) { h.state = "waiting_for_host"; });
    if (born) {
        log(false, fmt::format("sparkplug: host application {} went offline", options.primaryHostId));
        sendDeath();
        failed(fmt::format("left: host application {} offline", options.primaryHostId));
    }
}

} // namespace takt::agent
