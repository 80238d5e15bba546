// The edge node's metric set (sparkplug_metrics.h).
#include "sparkplug/sparkplug_metrics.h"

#include <algorithm>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "takt/agent/value_feed.h"

namespace takt::agent::sparkplug {

namespace {

// "STRING[80]" and "STRING(80)" are STRING: the length is the variable's, not another type.
std::string_view baseTypeName(std::string_view name) {
    const std::size_t cut = name.find_first_of("[(");
    return cut == std::string_view::npos ? name : name.substr(0, cut);
}

bool isTimeLike(IecType type) {
    return type == IecType::Time || type == IecType::Dt;
}

bool isSigned(IecType type) {
    return type == IecType::Sint || type == IecType::Int || type == IecType::Dint || type == IecType::Lint;
}

bool isUnsigned(IecType type) {
    return type == IecType::Usint || type == IecType::Uint || type == IecType::Udint || type == IecType::Ulint ||
           type == IecType::Byte || type == IecType::Word || type == IecType::Dword || type == IecType::Lword;
}

// An enumeration's values, from var.list's "enum":[{"name","value"}…]; false when the row has none.
bool enumOf(const rapidjson::Value& row, std::vector<std::pair<std::int64_t, std::string>>& out) {
    const auto it = row.FindMember("enum");
    if (it == row.MemberEnd() || !it->value.IsArray() || it->value.Empty()) {
        return false;
    }
    for (const rapidjson::Value& e : it->value.GetArray()) {
        if (!e.IsObject() || !e.HasMember("name") || !e["name"].IsString() || !e.HasMember("value") ||
            !e["value"].IsInt64()) {
            return false;
        }
        out.emplace_back(e["value"].GetInt64(), std::string(e["name"].GetString(), e["name"].GetStringLength()));
    }
    return true;
}

// What a deadband applies to: not bit strings (their bits are no magnitude) nor enumerations.
bool isNumber(IecType type) {
    return isSigned(type) || type == IecType::Usint || type == IecType::Uint || type == IecType::Udint ||
           type == IecType::Ulint || type == IecType::Real || type == IecType::Lreal;
}

// A numeric metric's value as the deadband compares it (var.subscribe compares the same double).
std::optional<double> numberOf(const Value& v) {
    if (const auto* x = std::get_if<std::int64_t>(&v)) {
        return static_cast<double>(*x);
    }
    if (const auto* x = std::get_if<std::uint64_t>(&v)) {
        return static_cast<double>(*x);
    }
    if (const auto* x = std::get_if<float>(&v)) {
        return static_cast<double>(*x);
    }
    if (const auto* x = std::get_if<double>(&v)) {
        return *x;
    }
    return std::nullopt;
}

bool toBeSent(const MetricState& m) {
    if (m.deadband <= 0 || !m.sent) {
        return true;
    }
    const std::optional<double> now = numberOf(*m.value);
    return !now || movedBeyondDeadband(*now, numberOf(*m.sent), m.deadband);
}

} // namespace

std::string metricName(std::string_view path) {
    std::string out(path);
    std::replace(out.begin(), out.end(), '.', '/');
    return out;
}

bool MetricSet::addListed(const rapidjson::Value& row, double deadband) {
    if (!row.IsObject() || !row.HasMember("path") || !row["path"].IsString() || !row.HasMember("type") ||
        !row["type"].IsString()) {
        return false;
    }
    const std::string_view typeName(row["type"].GetString(), row["type"].GetStringLength());
    std::optional<IecType> type = iecTypeByName(baseTypeName(typeName));
    MetricState m;
    // An enumeration is named by its own type; an ARRAY of one has the "enum" list too.
    if (!type && typeName.find_first_of("[(") == std::string_view::npos && enumOf(row, m.enumValues)) {
        type = IecType::Enum;
    }
    if (!type) {
        return false; // a STRUCT, an array or a type Sparkplug does not carry
    }
    m.path.assign(row["path"].GetString(), row["path"].GetStringLength());
    if (byPath_.count(m.path) != 0) {
        return false;
    }
    m.typeName = std::string(typeName);
    m.spec.name = metricName(m.path);
    m.spec.type = *type;
    m.deadband = isNumber(*type) ? deadband : 0;
    m.constant = row.HasMember("constant") && row["constant"].IsBool() && row["constant"].GetBool();
    const auto address = row.FindMember("address");
    m.input = address != row.MemberEnd() && address->value.IsString() && address->value.GetStringLength() >= 2 &&
              (address->value.GetString()[1] == 'I' || address->value.GetString()[1] == 'i');
    byPath_.emplace(m.path, metrics_.size());
    byName_.emplace(m.spec.name, metrics_.size());
    metrics_.push_back(std::move(m));
    ++missing_;
    return true;
}

void MetricSet::seal() {
    table_ = MetricTable{};
    std::uint64_t alias = 0;
    for (MetricState& m : metrics_) {
        m.spec.alias = ++alias;
        (void)table_.add(m.spec);
    }
    (void)table_.add(MetricSpec{std::string(kRebirth), ++alias, IecType::Bool});
    (void)table_.add(MetricSpec{std::string(kNextServer), ++alias, IecType::Bool});
    (void)table_.add(MetricSpec{std::string(kProgramHash), ++alias, IecType::String});
}

MetricState* MetricSet::byPath(std::string_view path) {
    const auto it = byPath_.find(std::string(path));
    return it == byPath_.end() ? nullptr : &metrics_[it->second];
}

MetricState* MetricSet::byName(std::string_view name) {
    const auto it = byName_.find(std::string(name));
    return it == byName_.end() ? nullptr : &metrics_[it->second];
}

std::vector<std::string> MetricSet::paths() const {
    std::vector<std::string> out;
    out.reserve(metrics_.size());
    for (const MetricState& m : metrics_) {
        out.push_back(m.path);
    }
    return out;
}

void MetricSet::take(const rapidjson::Value& values, std::vector<std::size_t>& changed) {
    if (!values.IsObject()) {
        return;
    }
    for (auto it = values.MemberBegin(); it != values.MemberEnd(); ++it) {
        MetricState* m = byPath(std::string_view(it->name.GetString(), it->name.GetStringLength()));
        if (m == nullptr) {
            continue;
        }
        std::optional<Value> v = valueFromTyped(m->spec.type, it->value);
        if (!v) {
            continue;
        }
        if (!m->value) {
            --missing_;
        }
        if (m->value != v) {
            m->value = std::move(v);
            if (toBeSent(*m)) {
                m->dirty = true;
                changed.push_back(static_cast<std::size_t>(m - metrics_.data()));
            }
        }
    }
}

std::vector<std::pair<std::string, std::string>> propertiesOf(const MetricState& m, const Value& value) {
    if (m.spec.type != IecType::Enum) {
        return {};
    }
    std::string text;
    for (const auto& [number, name] : m.enumValues) {
        if (std::holds_alternative<std::int64_t>(value) && std::get<std::int64_t>(value) == number) {
            text = name;
        }
    }
    return {{std::string(kEnumText), std::move(text)}};
}

std::optional<Value> valueFromTyped(IecType type, const rapidjson::Value& typed) {
    if (!typed.IsObject()) {
        return std::nullopt;
    }
    if (isTimeLike(type)) {
        const auto nanos = typed.FindMember("nanos");
        if (nanos == typed.MemberEnd() || !nanos->value.IsInt64()) {
            return std::nullopt;
        }
        return Value{nanos->value.GetInt64()};
    }
    if (type == IecType::Enum) {
        const auto numeric = typed.FindMember("numeric");
        if (numeric != typed.MemberEnd() && numeric->value.IsInt64()) {
            return Value{numeric->value.GetInt64()};
        }
        return std::nullopt;
    }
    const auto it = typed.FindMember("value");
    if (it == typed.MemberEnd()) {
        return std::nullopt;
    }
    const rapidjson::Value& v = it->value;
    if (type == IecType::Bool && v.IsBool()) {
        return Value{v.GetBool()};
    }
    if (isSigned(type) && v.IsInt64()) {
        return Value{v.GetInt64()};
    }
    if (isUnsigned(type) && v.IsUint64()) {
        return Value{v.GetUint64()};
    }
    if (type == IecType::Real && v.IsNumber()) {
        return Value{static_cast<float>(v.GetDouble())};
    }
    if (type == IecType::Lreal && v.IsNumber()) {
        return Value{v.GetDouble()};
    }
    if (type == IecType::String && v.IsString()) {
        return Value{std::string(v.GetString(), v.GetStringLength())};
    }
    return std::nullopt;
}

std::string typedJson(std::string_view typeName, IecType type, const Value& value) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("type");
    // An enumeration's value by its number: var.write takes {"type":"ENUM","numeric":N}.
    const std::string_view written = type == IecType::Enum ? std::string_view("ENUM") : typeName;
    w.String(written.data(), static_cast<rapidjson::SizeType>(written.size()));
    w.Key(isTimeLike(type) ? "nanos" : type == IecType::Enum ? "numeric" : "value");
    std::visit(
        [&w](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, bool>) {
                w.Bool(v);
            } else if constexpr (std::is_same_v<V, std::int64_t>) {
                w.Int64(v);
            } else if constexpr (std::is_same_v<V, std::uint64_t>) {
                w.Uint64(v);
            } else if constexpr (std::is_same_v<V, float>) {
                w.Double(static_cast<double>(v));
            } else if constexpr (std::is_same_v<V, double>) {
                w.Double(v);
            } else {
                w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
            }
        },
        value);
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize());
}

} // namespace takt::agent::sparkplug
