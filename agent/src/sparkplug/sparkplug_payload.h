#pragma once
// Sparkplug B payloads (Sparkplug 3.0, chapter 6.4) for the edge node: NBIRTH / NDATA / NDEATH
// encoded from a list of metrics, NCMD decoded into variable writes. The protobuf encoding is
// protobuf-c's, generated from sparkplug_b.proto at build time; nothing of it shows here.
//
// IEC types and Sparkplug datatypes (one list, kIecTypes in sparkplug_payload.cpp):
//   BOOL Boolean, SINT Int8, INT Int16, DINT Int32, LINT Int64, USINT UInt8, UINT UInt16,
//   UDINT UInt32, ULINT UInt64, REAL Float, LREAL Double, STRING String, BYTE UInt8, WORD UInt16,
//   DWORD UInt32, LWORD UInt64 (bit strings travel as the unsigned number of their bits),
//   enumerations Int32 (the value's number; its name goes along as the metric's property Text),
//   TIME Int64 in milliseconds (Sparkplug has no duration type; what a host shows as a number is
//   the millisecond count CODESYS gives TIME), DT DateTime (milliseconds since 1970-01-01 UTC, as
//   the specification defines DateTime). takt keeps TIME and DT in nanoseconds: both are sent in
//   whole milliseconds (truncated toward zero) and an NCMD's milliseconds are multiplied back.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace takt::agent::sparkplug {

// The specification's DataType numbers (the wire values of Metric.datatype).
enum class DataType : std::uint32_t {
    Unknown = 0,
    Int8 = 1,
    Int16 = 2,
    Int32 = 3,
    Int64 = 4,
    UInt8 = 5,
    UInt16 = 6,
    UInt32 = 7,
    UInt64 = 8,
    Float = 9,
    Double = 10,
    Boolean = 11,
    String = 12,
    DateTime = 13,
};

enum class IecType : std::uint8_t {
    Bool,
    Sint,
    Int,
    Dint,
    Lint,
    Usint,
    Uint,
    Udint,
    Ulint,
    Real,
    Lreal,
    String,
    Time,
    Dt,
    Byte,
    Word,
    Dword,
    Lword,
    Enum // any enumeration (its names are the metric's, sparkplug_metrics.h); stays last (the NCMD fuzz target)
};

// The value of a metric in takt's terms: BOOL bool; SINT..LINT, TIME and DT (nanoseconds) and
// an enumeration's number int64; USINT..ULINT and BYTE..LWORD uint64; REAL float; LREAL double;
// STRING string.
using Value = std::variant<bool, std::int64_t, std::uint64_t, float, double, std::string>;

[[nodiscard]] DataType dataTypeOf(IecType type);
[[nodiscard]] std::string_view iecTypeName(IecType type);
// "DINT", "lreal" -> the type; nullopt for a type no metric carries (and for enumerations, which
// var.list names by their own type name).
[[nodiscard]] std::optional<IecType> iecTypeByName(std::string_view name);

struct Metric {
    std::string name;                   // empty: sent by alias alone (NDATA after the birth)
    std::optional<std::uint64_t> alias; // NBIRTH gives both, NDATA the alias
    IecType type = IecType::Bool;
    Value value = false;
    bool isNull = false;                    // a value not known (a bad input): no value is sent
    std::optional<std::uint64_t> timestamp; // ms since 1970; the payload's when absent
    bool historical = false;                // kept while no host was online, sent later
    // String properties (Sparkplug 3.0, 6.4.7: the metric's PropertySet), e.g. an enumeration's
    // Text; none on most metrics.
    std::vector<std::pair<std::string, std::string>> properties;
};

struct Payload {
    std::uint64_t timestamp = 0;      // ms since 1970-01-01 UTC
    std::optional<std::uint64_t> seq; // 0..255 on NBIRTH / NDATA; absent on NDEATH
    std::vector<Metric> metrics;
    // decodePayload with Foreign::List: the names (or "alias N") of the metrics left out of
    // `metrics`, of a datatype takt does not carry or with a value not of their datatype.
    std::vector<std::string> foreign;
};

// The coded reasons a payload is refused. Every one names the metric where there is one.
enum class ErrorCode : std::uint8_t {
    TooLarge,          // more than kMaxPayloadBytes, or too many metrics, strings and nested values
    Malformed,         // not a Sparkplug B protobuf payload
    UnknownMetric,     // an NCMD metric neither named nor aliased in the birth
    UnknownDatatype,   // a datatype number takt does not carry (or none where one is needed)
    DatatypeMismatch,  // the NCMD's datatype is not the birth's
    ValueTypeMismatch, // the value field is not the one the datatype uses, or no value
    OutOfRange,        // the value does not fit the metric's type
};
[[nodiscard]] std::string_view errorCodeName(ErrorCode code); // "unknown_metric", ...

struct Error {
    ErrorCode code = ErrorCode::Malformed;
    std::string metric; // the metric's name (or "alias 7"); empty for the payload as a whole
    std::string message;
};

constexpr std::size_t kMaxPayloadBytes = 256 * 1024; // larger payloads are refused unparsed

// The payload's protobuf bytes. False with `error` naming the metric whose value is not of its type.
[[nodiscard]] bool encodePayload(const Payload& payload, std::string& out, Error& error);

// What the birth announced: the metrics an NCMD may write, by name and by alias.
struct MetricSpec {
    std::string name;
    std::uint64_t alias = 0;
    IecType type = IecType::Bool;
};

class MetricTable {
public:
    // False when the name or the alias is taken already.
    [[nodiscard]] bool add(MetricSpec spec);
    [[nodiscard]] const MetricSpec* byName(std::string_view name) const;
    [[nodiscard]] const MetricSpec* byAlias(std::uint64_t alias) const;
    [[nodiscard]] std::size_t size() const { return specs_.size(); }

private:
    std::vector<MetricSpec> specs_;
    std::unordered_map<std::string, std::size_t> byName_;
    std::unordered_map<std::uint64_t, std::size_t> byAlias_;
};

struct MetricWrite {
    std::string name; // the birth's name of the metric
    IecType type = IecType::Bool;
    Value value = false;
};

// An NCMD payload -> one write per metric, in the payload's order. All or nothing: on any bad
// metric false with `error` naming it, and `writes` empty.
[[nodiscard]] bool decodeCommand(std::span<const std::uint8_t> bytes, const MetricTable& known,
                                 std::vector<MetricWrite>& writes, Error& error);

// How decodePayload takes a metric of a datatype takt does not carry (Text, UUID, Bytes, DataSet,
// Template, arrays, …) or whose value is not of its datatype: the payload is refused (takt's own
// payloads), or the metric is listed in Payload::foreign and left out (`takt fleet status`, which
// reads the births of any edge node).
enum class Foreign : std::uint8_t { Refuse, List };

// Any payload -> its metrics, each typed by its own datatype (for tests and a host-side view).
// Metrics given by alias alone come back with an empty name. False on a malformed payload, or
// with Foreign::Refuse on a metric of a datatype takt does not carry.
[[nodiscard]] bool decodePayload(std::span<const std::uint8_t> bytes, Payload& out, Error& error,
                                 Foreign foreign = Foreign::Refuse);

} // namespace takt::agent::sparkplug
