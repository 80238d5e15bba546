#pragma once
// The edge node's metric set: the variables var.list lists and [runtime.sparkplug] expose
// exposes, each of a type a Sparkplug datatype carries, with its alias and its last value. Values
// arrive as the typed JSON of var.changed and leave as the typed JSON of var.write, so the node
// reads and writes through the control service's calls and never the data image.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <rapidjson/document.h>

#include "sparkplug/sparkplug_payload.h"

namespace takt::agent::sparkplug {

// The Node Control metrics every NBIRTH carries (Sparkplug 3.0, 6.4.18), and the bdSeq metric.
inline constexpr std::string_view kRebirth = "Node Control/Rebirth";
inline constexpr std::string_view kNextServer = "Node Control/Next Server";
inline constexpr std::string_view kBdSeq = "bdSeq";
// The running program's hash (runtime.status program_hash), read-only, in every NBIRTH: a host
// sees which program each box runs (takt fleet status). "Properties/…" is where Sparkplug edge
// nodes (Eclipse Tahu's examples, Ignition's MQTT Transmission) put what describes the node.
inline constexpr std::string_view kProgramHash = "Properties/Program Hash";
// The bdSeq metric of NBIRTH and NDEATH (Int64, Sparkplug 3.0, 6.4.19): one place spells it.
inline Metric bdSeqMetric(std::uint64_t bdSeq) {
    return Metric{std::string(kBdSeq),
                  std::nullopt,
                  IecType::Lint,
                  static_cast<std::int64_t>(bdSeq),
                  false,
                  std::nullopt,
                  false,
                  {}};
}
// The property of an enumeration's metric that names its value ("Auto"), in NBIRTH and NDATA.
inline constexpr std::string_view kEnumText = "Text";

struct MetricState {
    std::string path;     // the var.list path ("Main.counter")
    std::string typeName; // as var.list names the type ("STRING[80]"): var.write's typed JSON
    MetricSpec spec;      // name ("Main/counter"), alias, IEC type
    bool constant = false;
    bool input = false; // bound to an input address (%I): the input copy owns it, not the program
    std::optional<Value> value;
    bool dirty = false;  // to be sent: changed (beyond the deadband) since the last NBIRTH or NDATA
    double deadband = 0; // absolute; 0: every change (and every type that is no number)
    std::vector<std::pair<std::int64_t, std::string>> enumValues; // an enumeration's values and names
    std::optional<Value> sent; // what the last NBIRTH or NDATA carried (or was kept for history)
};

class MetricSet {
public:
    // One var.list row ({"path","type","address","constant","enum"?,…}) -> a metric when its type
    // is one a Sparkplug datatype carries (sparkplug_payload.h; an enumeration is one by the row's
    // "enum" list); false (and nothing added) otherwise.
    // `deadband` is kept for numbers (SINT…ULINT, REAL, LREAL) and ignored for other types.
    bool addListed(const rapidjson::Value& row, double deadband = 0);
    // Aliases the metrics 1..N in order and adds the Node Control metrics and the program hash
    // after them (N+1, N+2, N+3); the table NCMDs are decoded against.
    void seal();

    [[nodiscard]] std::size_t size() const { return metrics_.size(); }
    [[nodiscard]] std::vector<MetricState>& metrics() { return metrics_; }
    [[nodiscard]] const MetricTable& table() const { return table_; }
    [[nodiscard]] MetricState* byPath(std::string_view path);
    [[nodiscard]] MetricState* byName(std::string_view name);
    [[nodiscard]] std::vector<std::string> paths() const;
    // Every metric has a value: the set can be born.
    [[nodiscard]] bool complete() const { return missing_ == 0; }

    // var.changed's `values` object: each value taken into its metric; the ones that moved from
    // their `sent` value by more than their deadband (movedBeyondDeadband, as var.subscribe
    // decides it; any change without one) marked dirty and their indexes (into metrics())
    // appended to `changed`. Paths that are not metrics are ignored (an earlier metric set's).
    void take(const rapidjson::Value& values, std::vector<std::size_t>& changed);

private:
    std::vector<MetricState> metrics_;
    std::unordered_map<std::string, std::size_t> byPath_;
    std::unordered_map<std::string, std::size_t> byName_;
    MetricTable table_;
    std::size_t missing_ = 0;
};

// The properties a metric of `m` carries with `value`: an enumeration's Text (the name of the
// value; empty for a number that is none of its values), nothing for other types.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> propertiesOf(const MetricState& m, const Value& value);

// A typed JSON value of var.changed ({"type":"DINT","value":3}, {"type":"TIME","nanos":…}) as a
// metric value of `type`; nullopt when it is not one.
[[nodiscard]] std::optional<Value> valueFromTyped(IecType type, const rapidjson::Value& typed);
// A metric write as var.write's typed JSON value for a variable of type `typeName`.
[[nodiscard]] std::string typedJson(std::string_view typeName, IecType type, const Value& value);
// "Main.counter" -> "Main/counter": the metric's name (Sparkplug uses '/' for folders).
[[nodiscard]] std::string metricName(std::string_view path);

} // namespace takt::agent::sparkplug
