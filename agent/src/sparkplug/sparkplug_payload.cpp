// Sparkplug B payloads through protobuf-c (sparkplug_payload.h).
#include "sparkplug/sparkplug_payload.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "sparkplug_b.pb-c.h"

namespace takt::agent::sparkplug {

namespace {

using PbPayload = Org__Eclipse__Tahu__Protobuf__Payload;
using PbMetric = Org__Eclipse__Tahu__Protobuf__Payload__Metric;
using PbPropertySet = Org__Eclipse__Tahu__Protobuf__Payload__PropertySet;
using PbPropertyValue = Org__Eclipse__Tahu__Protobuf__Payload__PropertyValue;
using ValueCase = Org__Eclipse__Tahu__Protobuf__Payload__Metric__ValueCase;

constexpr ValueCase kIntValue = ORG__ECLIPSE__TAHU__PROTOBUF__PAYLOAD__METRIC__VALUE_INT_VALUE;
constexpr ValueCase kLongValue = ORG__ECLIPSE__TAHU__PROTOBUF__PAYLOAD__METRIC__VALUE_LONG_VALUE;
constexpr ValueCase kFloatValue = ORG__ECLIPSE__TAHU__PROTOBUF__PAYLOAD__METRIC__VALUE_FLOAT_VALUE;
constexpr ValueCase kDoubleValue = ORG__ECLIPSE__TAHU__PROTOBUF__PAYLOAD__METRIC__VALUE_DOUBLE_VALUE;
constexpr ValueCase kBooleanValue = ORG__ECLIPSE__TAHU__PROTOBUF__PAYLOAD__METRIC__VALUE_BOOLEAN_VALUE;
constexpr ValueCase kStringValue = ORG__ECLIPSE__TAHU__PROTOBUF__PAYLOAD__METRIC__VALUE_STRING_VALUE;
constexpr ValueCase kNoValue = ORG__ECLIPSE__TAHU__PROTOBUF__PAYLOAD__METRIC__VALUE__NOT_SET;

constexpr std::int64_t kNanosPerMilli = 1'000'000;

// The one list of IEC types, their Sparkplug datatypes and the value field each datatype uses
// (Sparkplug 3.0, 6.4.16: 8..32-bit integers in int_value, 64-bit ones and DateTime in long_value).
// UInt32 is sent in long_value, as Ignition and Eclipse Tahu's host libraries read it
// (eclipse-sparkplug/sparkplug#102); an NCMD may carry it in either field (typedValue).
struct TypeRow {
    IecType type;
    std::string_view name;
    DataType dataType;
    ValueCase field;
};
constexpr std::array<TypeRow, 19> kIecTypes{{
    {IecType::Bool, "BOOL", DataType::Boolean, kBooleanValue},
    {IecType::Sint, "SINT", DataType::Int8, kIntValue},
    {IecType::Int, "INT", DataType::Int16, kIntValue},
    {IecType::Dint, "DINT", DataType::Int32, kIntValue},
    {IecType::Lint, "LINT", DataType::Int64, kLongValue},
    {IecType::Usint, "USINT", DataType::UInt8, kIntValue},
    {IecType::Uint, "UINT", DataType::UInt16, kIntValue},
    {IecType::Udint, "UDINT", DataType::UInt32, kLongValue},
    {IecType::Ulint, "ULINT", DataType::UInt64, kLongValue},
    {IecType::Real, "REAL", DataType::Float, kFloatValue},
    {IecType::Lreal, "LREAL", DataType::Double, kDoubleValue},
    {IecType::String, "STRING", DataType::String, kStringValue},
    {IecType::Time, "TIME", DataType::Int64, kLongValue},
    {IecType::Dt, "DT", DataType::DateTime, kLongValue},
    {IecType::Byte, "BYTE", DataType::UInt8, kIntValue},
    {IecType::Word, "WORD", DataType::UInt16, kIntValue},
    {IecType::Dword, "DWORD", DataType::UInt32, kLongValue},
    {IecType::Lword, "LWORD", DataType::UInt64, kLongValue},
    {IecType::Enum, "ENUM", DataType::Int32, kIntValue},
}};

const TypeRow& rowOf(IecType type) {
    return kIecTypes[static_cast<std::size_t>(type)];
}

// The IEC type a datatype number stands for when nothing else says (Int64 is LINT, not TIME).
const TypeRow* rowOfDataType(std::uint32_t dataType) {
    for (const TypeRow& row : kIecTypes) {
        if (static_cast<std::uint32_t>(row.dataType) == dataType) {
            return &row;
        }
    }
    return nullptr;
}

std::string_view caseName(ValueCase c) {
    switch (c) {
    case kIntValue: return "int_value";
    case kLongValue: return "long_value";
    case kFloatValue: return "float_value";
    case kDoubleValue: return "double_value";
    case kBooleanValue: return "boolean_value";
    case kStringValue: return "string_value";
    case kNoValue: return "no value";
    default: return "a bytes, dataset, template or extension value";
    }
}

struct Range {
    std::int64_t min;
    std::uint64_t max;
};

Range rangeOf(IecType type) {
    switch (type) {
    case IecType::Sint: return {std::numeric_limits<std::int8_t>::min(), std::numeric_limits<std::int8_t>::max()};
    case IecType::Enum:
    case IecType::Int: return {std::numeric_limits<std::int16_t>::min(), std::numeric_limits<std::int16_t>::max()};
    case IecType::Dint: return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    case IecType::Usint:
    case IecType::Byte: return {0, std::numeric_limits<std::uint8_t>::max()};
    case IecType::Uint:
    case IecType::Word: return {0, std::numeric_limits<std::uint16_t>::max()};
    case IecType::Udint:
    case IecType::Dword: return {0, std::numeric_limits<std::uint32_t>::max()};
    case IecType::Ulint:
    case IecType::Lword: return {0, std::numeric_limits<std::uint64_t>::max()};
    default:
        return {std::numeric_limits<std::int64_t>::min(),
                static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())};
    }
}

bool isSigned(IecType type) {
    return type == IecType::Sint || type == IecType::Int || type == IecType::Dint || type == IecType::Lint ||
           type == IecType::Time || type == IecType::Dt || type == IecType::Enum;
}

std::string metricLabel(const PbMetric& m) {
    if (m.name != nullptr && m.name[0] != '\0') {
        return m.name;
    }
    if (m.has_alias != 0) {
        return fmt::format("alias {}", m.alias);
    }
    return "a metric with neither name nor alias";
}

bool fail(Error& error, ErrorCode code, std::string metric, std::string message) {
    error.code = code;
    error.metric = std::move(metric);
    error.message = std::move(message);
    return false;
}

// The value of `m` (whose field was checked to be row.field) as a value of `type`.
bool readValue(const PbMetric& m, IecType type, const std::string& label, Value& out, Error& error) {
    switch (type) {
    case IecType::Bool: out = m.boolean_value != 0; return true;
    case IecType::Real: out = m.float_value; return true;
    case IecType::Lreal: out = m.double_value; return true;
    case IecType::String: out = std::string(m.string_value != nullptr ? m.string_value : ""); return true;
    default: break;
    }
    const Range range = rangeOf(type);
    if (m.value_case == kIntValue) {
        const std::uint32_t raw = m.int_value;
        if (!isSigned(type)) {
            if (raw > range.max) {
                return fail(error, ErrorCode::OutOfRange, label,
                            fmt::format("{} does not fit {}", raw, iecTypeName(type)));
            }
            out = static_cast<std::uint64_t>(raw);
            return true;
        }
        // A signed value travels as its 32-bit two's complement (what Tahu sends); an 8- or
        // 16-bit pattern (what some hosts send for Int8 / Int16) is read as that width.
        std::int64_t v = static_cast<std::int32_t>(raw);
        if (type == IecType::Sint && raw <= 0xFFU) {
            v = raw >= 0x80U ? static_cast<std::int64_t>(raw) - 0x100 : static_cast<std::int64_t>(raw);
        } else if (type == IecType::Int && raw <= 0xFFFFU) {
            v = raw >= 0x8000U ? static_cast<std::int64_t>(raw) - 0x10000 : static_cast<std::int64_t>(raw);
        }
        if (v < range.min || v > static_cast<std::int64_t>(range.max)) {
            return fail(error, ErrorCode::OutOfRange, label, fmt::format("{} does not fit {}", v, iecTypeName(type)));
        }
        out = v;
        return true;
    }
    // long_value: LINT, UDINT, ULINT, DWORD, LWORD, TIME and DT.
    const std::uint64_t raw = m.long_value;
    if (!isSigned(type)) {
        if (raw > range.max) {
            return fail(error, ErrorCode::OutOfRange, label, fmt::format("{} does not fit {}", raw, iecTypeName(type)));
        }
        out = raw;
        return true;
    }
    const auto v = static_cast<std::int64_t>(raw);
    if (type == IecType::Time || type == IecType::Dt) {
        constexpr std::int64_t kLimit = std::numeric_limits<std::int64_t>::max() / kNanosPerMilli;
        if (v > kLimit || v < -kLimit || (type == IecType::Dt && v < 0)) {
            return fail(error, ErrorCode::OutOfRange, label,
                        fmt::format("{} ms does not fit {}", v, iecTypeName(type)));
        }
        out = v * kNanosPerMilli;
        return true;
    }
    out = v;
    return true;
}

// The value of `metric` into `m`; false when the variant does not hold what the type uses.
bool writeValue(const Metric& metric, PbMetric& m, std::string& label, Error& error) {
    const TypeRow& row = rowOf(metric.type);
    auto mismatch = [&] {
        return fail(error, ErrorCode::ValueTypeMismatch, label, fmt::format("the value is not one of a {}", row.name));
    };
    m.value_case = row.field;
    switch (metric.type) {
    case IecType::Bool:
        if (!std::holds_alternative<bool>(metric.value)) {
            return mismatch();
        }
        m.boolean_value = std::get<bool>(metric.value) ? 1 : 0;
        return true;
    case IecType::Real:
        if (!std::holds_alternative<float>(metric.value)) {
            return mismatch();
        }
        m.float_value = std::get<float>(metric.value);
        return true;
    case IecType::Lreal:
        if (!std::holds_alternative<double>(metric.value)) {
            return mismatch();
        }
        m.double_value = std::get<double>(metric.value);
        return true;
    case IecType::String:
        if (!std::holds_alternative<std::string>(metric.value)) {
            return mismatch();
        }
        // protobuf-c reads the string to its NUL; the caller's string outlives the packing.
        m.string_value = const_cast<char*>(std::get<std::string>(metric.value).c_str());
        return true;
    default: break;
    }
    const Range range = rangeOf(metric.type);
    if (isSigned(metric.type)) {
        if (!std::holds_alternative<std::int64_t>(metric.value)) {
            return mismatch();
        }
        std::int64_t v = std::get<std::int64_t>(metric.value);
        if (metric.type == IecType::Time || metric.type == IecType::Dt) {
            v /= kNanosPerMilli; // truncated toward zero
        } else if (v < range.min || v > static_cast<std::int64_t>(range.max)) {
            return fail(error, ErrorCode::OutOfRange, label, fmt::format("{} does not fit {}", v, row.name));
        }
        if (row.field == kIntValue) {
            m.int_value = static_cast<std::uint32_t>(static_cast<std::int32_t>(v));
        } else {
            m.long_value = static_cast<std::uint64_t>(v);
        }
        return true;
    }
    if (!std::holds_alternative<std::uint64_t>(metric.value)) {
        return mismatch();
    }
    const std::uint64_t v = std::get<std::uint64_t>(metric.value);
    if (v > range.max) {
        return fail(error, ErrorCode::OutOfRange, label, fmt::format("{} does not fit {}", v, row.name));
    }
    if (row.field == kIntValue) {
        m.int_value = static_cast<std::uint32_t>(v);
    } else {
        m.long_value = v;
    }
    return true;
}

// protobuf-c has no nesting limit: a metric holding a template holding a metric... recurses once
// per level, and 64 KiB of such nesting overflows the stack. Every nested message and string is
// one allocation, so a budget of allocations bounds the depth too (2,000 levels measured safe
// under AddressSanitizer on an 8 MiB stack); the unpack fails cleanly when the budget runs out.
constexpr std::size_t kMaxAllocations = 4096;

struct Budget {
    std::size_t left = kMaxAllocations;
};

void* budgetAlloc(void* data, std::size_t size) {
    auto* budget = static_cast<Budget*>(data);
    if (budget->left == 0) {
        return nullptr;
    }
    --budget->left;
    return std::malloc(size);
}

void budgetFree(void* /*data*/, void* pointer) {
    std::free(pointer);
}

struct Unpacked {
    Budget budget;
    ProtobufCAllocator allocator{budgetAlloc, budgetFree, &budget};
    PbPayload* payload = nullptr;

    Unpacked() = default;
    Unpacked(const Unpacked&) = delete;
    Unpacked& operator=(const Unpacked&) = delete;
    ~Unpacked() {
        if (payload != nullptr) {
            org__eclipse__tahu__protobuf__payload__free_unpacked(payload, &allocator);
        }
    }
};

bool unpack(std::span<const std::uint8_t> bytes, Unpacked& out, Error& error) {
    if (bytes.size() > kMaxPayloadBytes) {
        return fail(error, ErrorCode::TooLarge, "",
                    fmt::format("the payload has {} bytes, more than {}", bytes.size(), kMaxPayloadBytes));
    }
    out.payload = org__eclipse__tahu__protobuf__payload__unpack(&out.allocator, bytes.size(), bytes.data());
    if (out.payload == nullptr) {
        if (out.budget.left == 0) {
            return fail(
                error, ErrorCode::TooLarge, "",
                fmt::format("the payload holds more than {} metrics, strings and nested values", kMaxAllocations));
        }
        return fail(error, ErrorCode::Malformed, "", "not a Sparkplug B payload (the protobuf does not decode)");
    }
    return true;
}

// The datatype of `m` as an IEC type, checked against the value field it holds.
bool typedValue(const PbMetric& m, const TypeRow& row, const std::string& label, Value& out, Error& error) {
    if (m.has_is_null != 0 && m.is_null != 0) {
        return fail(error, ErrorCode::ValueTypeMismatch, label, "a null value cannot be written");
    }
    // A UInt32 in int_value is what the specification's text says: taken as well.
    const bool uint32InInt = row.dataType == DataType::UInt32 && m.value_case == kIntValue;
    if (m.value_case != row.field && !uint32InInt) {
        return fail(error, ErrorCode::ValueTypeMismatch, label,
                    fmt::format("a {} ({}) travels in {}, the metric has {}", row.name,
                                static_cast<std::uint32_t>(row.dataType), caseName(row.field), caseName(m.value_case)));
    }
    return readValue(m, row.type, label, out, error);
}

} // namespace

DataType dataTypeOf(IecType type) {
    return rowOf(type).dataType;
}

std::string_view iecTypeName(IecType type) {
    return rowOf(type).name;
}

std::optional<IecType> iecTypeByName(std::string_view name) {
    for (const TypeRow& row : kIecTypes) {
        if (row.type != IecType::Enum &&
            std::equal(name.begin(), name.end(), row.name.begin(), row.name.end(),
                       [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; })) {
            return row.type;
        }
    }
    return std::nullopt;
}

std::string_view errorCodeName(ErrorCode code) {
    switch (code) {
    case ErrorCode::TooLarge: return "payload_too_large";
    case ErrorCode::Malformed: return "malformed_payload";
    case ErrorCode::UnknownMetric: return "unknown_metric";
    case ErrorCode::UnknownDatatype: return "unknown_datatype";
    case ErrorCode::DatatypeMismatch: return "datatype_mismatch";
    case ErrorCode::ValueTypeMismatch: return "value_type_mismatch";
    case ErrorCode::OutOfRange: return "out_of_range";
    }
    return "malformed_payload";
}

namespace {

// The PropertySets of a payload's metrics: protobuf-c points into these while it packs.
struct PackedProperties {
    std::vector<PbPropertySet> sets;
    std::vector<std::vector<char*>> keys;
    std::vector<std::vector<PbPropertyValue>> values;
    std::vector<std::vector<PbPropertyValue*>> valuePointers;

    explicit PackedProperties(std::size_t metrics)
        : sets(metrics), keys(metrics), values(metrics), valuePointers(metrics) {}

    // The properties of metric `i` as m's PropertySet (String values).
    void attach(std::size_t i, const Metric& metric, PbMetric& m) {
        if (metric.properties.empty()) {
            return;
        }
        PbPropertySet& set = sets[i];
        org__eclipse__tahu__protobuf__payload__property_set__init(&set);
        values[i].resize(metric.properties.size());
        for (std::size_t k = 0; k < metric.properties.size(); ++k) {
            const auto& [key, text] = metric.properties[k];
            keys[i].push_back(const_cast<char*>(key.c_str()));
            PbPropertyValue& v = values[i][k];
            org__eclipse__tahu__protobuf__payload__property_value__init(&v);
            v.has_type = 1;
            v.type = static_cast<std::uint32_t>(DataType::String);
            v.value_case = ORG__ECLIPSE__TAHU__PROTOBUF__PAYLOAD__PROPERTY_VALUE__VALUE_STRING_VALUE;
            v.string_value = const_cast<char*>(text.c_str());
            valuePointers[i].push_back(&v);
        }
        set.n_keys = keys[i].size();
        set.keys = keys[i].data();
        set.n_values = valuePointers[i].size();
        set.values = valuePointers[i].data();
        m.properties = &set;
    }
};

} // namespace

bool encodePayload(const Payload& payload, std::string& out, Error& error) {
    std::vector<PbMetric> metrics(payload.metrics.size());
    std::vector<PbMetric*> pointers(payload.metrics.size());
    PackedProperties properties(payload.metrics.size());
    for (std::size_t i = 0; i < payload.metrics.size(); ++i) {
        const Metric& metric = payload.metrics[i];
        PbMetric& m = metrics[i];
        org__eclipse__tahu__protobuf__payload__metric__init(&m);
        pointers[i] = &m;
        std::string label = metric.name.empty() && metric.alias ? fmt::format("alias {}", *metric.alias) : metric.name;
        if (!metric.name.empty()) {
            m.name = const_cast<char*>(metric.name.c_str());
        }
        if (metric.alias) {
            m.has_alias = 1;
            m.alias = *metric.alias;
        }
        if (metric.timestamp) {
            m.has_timestamp = 1;
            m.timestamp = *metric.timestamp;
        }
        m.has_datatype = 1;
        m.datatype = static_cast<std::uint32_t>(rowOf(metric.type).dataType);
        if (metric.historical) {
            m.has_is_historical = 1;
            m.is_historical = 1;
        }
        properties.attach(i, metric, m);
        if (metric.isNull) {
            m.has_is_null = 1;
            m.is_null = 1;
        } else if (!writeValue(metric, m, label, error)) {
            return false;
        }
    }
    PbPayload p;
    org__eclipse__tahu__protobuf__payload__init(&p);
    p.has_timestamp = 1;
    p.timestamp = payload.timestamp;
    if (payload.seq) {
        p.has_seq = 1;
        p.seq = *payload.seq;
    }
    p.n_metrics = pointers.size();
    p.metrics = pointers.data();
    out.resize(org__eclipse__tahu__protobuf__payload__get_packed_size(&p));
    org__eclipse__tahu__protobuf__payload__pack(&p, reinterpret_cast<std::uint8_t*>(out.data()));
    return true;
}

bool MetricTable::add(MetricSpec spec) {
    if (byName_.contains(spec.name) || byAlias_.contains(spec.alias)) {
        return false;
    }
    byName_.emplace(spec.name, specs_.size());
    byAlias_.emplace(spec.alias, specs_.size());
    specs_.push_back(std::move(spec));
    return true;
}

const MetricSpec* MetricTable::byName(std::string_view name) const {
    const auto it = byName_.find(std::string(name));
    return it == byName_.end() ? nullptr : &specs_[it->second];
}

const MetricSpec* MetricTable::byAlias(std::uint64_t alias) const {
    const auto it = byAlias_.find(alias);
    return it == byAlias_.end() ? nullptr : &specs_[it->second];
}

bool decodeCommand(std::span<const std::uint8_t> bytes, const MetricTable& known, std::vector<MetricWrite>& writes,
                   Error& error) {
    writes.clear();
    Unpacked unpacked;
    if (!unpack(bytes, unpacked, error)) {
        return false;
    }
    const PbPayload* p = unpacked.payload;
    std::vector<MetricWrite> out;
    out.reserve(p->n_metrics);
    for (std::size_t i = 0; i < p->n_metrics; ++i) {
        const PbMetric& m = *p->metrics[i];
        const std::string label = metricLabel(m);
        // The name wins over the alias when both are given (3.0: an NCMD may use either).
        const MetricSpec* spec = nullptr;
        if (m.name != nullptr && m.name[0] != '\0') {
            spec = known.byName(m.name);
        } else if (m.has_alias != 0) {
            spec = known.byAlias(m.alias);
        }
        if (spec == nullptr) {
            return fail(error, ErrorCode::UnknownMetric, label, "no metric of the birth has this name or alias");
        }
        const TypeRow& row = rowOf(spec->type);
        if (m.has_datatype != 0 && m.datatype != static_cast<std::uint32_t>(row.dataType)) {
            if (rowOfDataType(m.datatype) == nullptr) {
                return fail(error, ErrorCode::UnknownDatatype, spec->name,
                            fmt::format("datatype {} is not one takt carries", m.datatype));
            }
            return fail(error, ErrorCode::DatatypeMismatch, spec->name,
                        fmt::format("datatype {} given, the birth announced {} ({})", m.datatype,
                                    static_cast<std::uint32_t>(row.dataType), row.name));
        }
        MetricWrite w;
        w.name = spec->name;
        w.type = spec->type;
        if (!typedValue(m, row, spec->name, w.value, error)) {
            return false;
        }
        out.push_back(std::move(w));
    }
    writes = std::move(out);
    return true;
}

bool decodePayload(std::span<const std::uint8_t> bytes, Payload& out, Error& error, Foreign foreign) {
    Unpacked unpacked;
    if (!unpack(bytes, unpacked, error)) {
        return false;
    }
    const PbPayload* p = unpacked.payload;
    Payload result;
    result.timestamp = p->has_timestamp != 0 ? p->timestamp : 0;
    if (p->has_seq != 0) {
        result.seq = p->seq;
    }
    for (std::size_t i = 0; i < p->n_metrics; ++i) {
        const PbMetric& m = *p->metrics[i];
        const std::string label = metricLabel(m);
        const TypeRow* row = m.has_datatype != 0 ? rowOfDataType(m.datatype) : nullptr;
        if (row == nullptr) {
            if (foreign == Foreign::List) {
                result.foreign.push_back(label);
                continue;
            }
            return fail(error, ErrorCode::UnknownDatatype, label,
                        m.has_datatype != 0 ? fmt::format("datatype {} is not one takt carries", m.datatype)
                                            : std::string("the metric has no datatype"));
        }
        Metric metric;
        metric.name = m.name != nullptr ? m.name : "";
        if (m.has_alias != 0) {
            metric.alias = m.alias;
        }
        if (m.has_timestamp != 0) {
            metric.timestamp = m.timestamp;
        }
        metric.historical = m.has_is_historical != 0 && m.is_historical != 0;
        metric.type = row->type;
        metric.isNull = m.has_is_null != 0 && m.is_null != 0;
        if (!metric.isNull && !typedValue(m, *row, label, metric.value, error)) {
            if (foreign == Foreign::List) {
                result.foreign.push_back(label);
                continue;
            }
            return false;
        }
        result.metrics.push_back(std::move(metric));
    }
    out = std::move(result);
    return true;
}

} // namespace takt::agent::sparkplug
