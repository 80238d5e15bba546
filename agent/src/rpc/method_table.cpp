// The params check of every method table, and the renderings of a table for agent.describe,
// agent.schema and docs/.
#include "rpc/method_table.h"

#include <algorithm>

#include <fmt/format.h>

namespace takt::agent::rpc {

namespace {

using rapidjson::Value;

const char* typeOf(const Value& v) {
    if (v.IsNull()) {
        return "null";
    }
    if (v.IsBool()) {
        return "boolean";
    }
    if (v.IsString()) {
        return "string";
    }
    if (v.IsArray()) {
        return "array";
    }
    if (v.IsObject()) {
        return "object";
    }
    return v.IsInt64() || v.IsUint64() ? "integer" : "number";
}

bool hasType(const Value& v, std::string_view type) {
    const std::string_view actual = typeOf(v);
    return actual == type || (type == "number" && actual == "integer");
}

std::string typeList(const Value& t) {
    if (t.IsString()) {
        return t.GetString();
    }
    std::string out;
    for (const Value& x : t.GetArray()) {
        out += out.empty() ? "" : " or ";
        out += x.GetString();
    }
    return out;
}

// Validates `v` against `schema`; `where` names the member for the error.
bool check(const Value& schema, const Value& v, const std::string& where, Error& error) {
    if (auto t = schema.FindMember("type"); t != schema.MemberEnd()) {
        bool ok = false;
        if (t->value.IsString()) {
            ok = hasType(v, t->value.GetString());
        } else {
            for (const Value& x : t->value.GetArray()) {
                ok = ok || hasType(v, x.GetString());
            }
        }
        if (!ok) {
            const std::string expected = typeList(t->value);
            const bool vowel = std::string_view("aeiou").find(expected.front()) != std::string_view::npos;
            error = invalidParam(where, fmt::format("invalid params: '{}' must be {} {}, not {}", where,
                                                    vowel ? "an" : "a", expected, typeOf(v)));
            return false;
        }
    }
    if (auto e = schema.FindMember("enum"); e != schema.MemberEnd()) {
        const auto& list = e->value.GetArray();
        if (std::find(list.begin(), list.end(), v) == list.end()) {
            std::string choices;
            for (const Value& x : list) {
                choices += fmt::format("{}\"{}\"", choices.empty() ? "" : ", ", x.GetString());
            }
            error = invalidParam(where, fmt::format("invalid params: '{}' must be one of {}", where, choices));
            return false;
        }
    }
    if (auto m = schema.FindMember("minimum"); m != schema.MemberEnd() && v.IsNumber()) {
        if (v.GetDouble() < m->value.GetDouble()) {
            error = invalidParam(where,
                                 fmt::format("invalid params: '{}' must be at least {}", where, m->value.GetInt64()));
            return false;
        }
    }
    if (auto m = schema.FindMember("maximum"); m != schema.MemberEnd() && v.IsNumber()) {
        if (v.GetDouble() > m->value.GetDouble()) {
            error =
                invalidParam(where, fmt::format("invalid params: '{}' must be at most {}", where, m->value.GetInt64()));
            return false;
        }
    }
    if (v.IsArray()) {
        if (auto items = schema.FindMember("items"); items != schema.MemberEnd()) {
            for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
                if (!check(items->value, v[i], fmt::format("{}[{}]", where, i), error)) {
                    return false;
                }
            }
        }
    }
    if (!v.IsObject()) {
        return true;
    }
    auto props = schema.FindMember("properties");
    if (auto req = schema.FindMember("required"); req != schema.MemberEnd()) {
        for (const Value& name : req->value.GetArray()) {
            if (!v.HasMember(name.GetString())) {
                const std::string member = where.empty() ? name.GetString() : where + "." + name.GetString();
                error = invalidParam(member, fmt::format("invalid params: '{}' is required", member));
                return false;
            }
        }
    }
    if (props == schema.MemberEnd()) {
        return true;
    }
    auto extra = schema.FindMember("additionalProperties");
    const bool closed = extra != schema.MemberEnd() && extra->value.IsFalse();
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        const std::string name(it->name.GetString(), it->name.GetStringLength());
        const std::string member = where.empty() ? name : where + "." + name;
        auto p = props->value.FindMember(it->name);
        if (p == props->value.MemberEnd()) {
            if (closed) {
                std::string known;
                for (auto k = props->value.MemberBegin(); k != props->value.MemberEnd(); ++k) {
                    known += fmt::format("{}{}", known.empty() ? "" : ", ", k->name.GetString());
                }
                error = invalidParam(member, fmt::format("invalid params: unknown member '{}' (known: {})", member,
                                                         known.empty() ? "none" : known));
                return false;
            }
            continue;
        }
        if (!check(p->value, it->value, member, error)) {
            return false;
        }
    }
    return true;
}

// `{a, b?}`: the members of an object schema (optional ones marked), "—" when it names none.
std::string membersOf(std::string_view schemaText) {
    rapidjson::Document d;
    d.Parse(schemaText.data(), schemaText.size());
    if (d.HasParseError() || !d.IsObject()) {
        return "—";
    }
    static const Value kEmpty(rapidjson::kArrayType);
    auto req = d.FindMember("required");
    const Value& required = req != d.MemberEnd() && req->value.IsArray() ? req->value : kEmpty;
    const auto isRequired = [&](const Value& name) {
        return std::find(required.Begin(), required.End(), name) != required.End();
    };
    std::string out;
    auto props = d.FindMember("properties");
    if (props != d.MemberEnd() && props->value.IsObject()) {
        for (auto it = props->value.MemberBegin(); it != props->value.MemberEnd(); ++it) {
            out +=
                fmt::format("{}{}{}", out.empty() ? "" : ", ", it->name.GetString(), isRequired(it->name) ? "" : "?");
        }
    }
    for (const Value& name : required.GetArray()) {
        if (props == d.MemberEnd() || !props->value.IsObject() || !props->value.HasMember(name)) {
            out += fmt::format("{}{}", out.empty() ? "" : ", ", name.GetString());
        }
    }
    return out.empty() ? "—" : "`{" + out + "}`";
}

} // namespace

void ParamsSchemas::add(const MethodFacts& method) {
    rapidjson::Document d;
    d.Parse(method.paramsSchema.data(), method.paramsSchema.size());
    schemas_.emplace_back(method.name, std::move(d));
}

bool ParamsSchemas::check(std::string_view method, const Value& params, Error& error) const {
    for (const auto& [name, schema] : schemas_) {
        if (name == method) {
            if (schema.HasParseError() || !schema.IsObject()) {
                break;
            }
            return rpc::check(schema, params, "", error);
        }
    }
    error = Error{kInternalError, fmt::format("no params schema for '{}'", method), {}};
    return false;
}

std::string schemaJson(const MethodFacts& m, bool withRole) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("method");
    writeString(w, m.name);
    w.Key("summary");
    writeString(w, m.summary);
    if (withRole) {
        w.Key("role");
        if (m.role) {
            w.String(roleName(*m.role));
        } else {
            w.Null();
        }
    }
    w.Key("params");
    w.RawValue(m.paramsSchema.data(), m.paramsSchema.size(), rapidjson::kObjectType);
    w.Key("result");
    w.RawValue(m.resultSchema.data(), m.resultSchema.size(), rapidjson::kObjectType);
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::string namesJson(std::span<const MethodFacts> methods) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartArray();
    for (const MethodFacts& m : methods) {
        writeString(w, m.name);
    }
    w.EndArray();
    return {buf.GetString(), buf.GetSize()};
}

std::string markdownTable(std::span<const MethodFacts> methods, bool withRole) {
    std::string out = withRole ? "| method | role | params | result | what |\n|---|---|---|---|---|\n"
                               : "| method | params | result | what |\n|---|---|---|---|\n";
    for (const MethodFacts& m : methods) {
        out += fmt::format("| `{}` |", m.name);
        if (withRole) {
            out += fmt::format(" {} |", m.role ? roleName(*m.role) : "—");
        }
        out += fmt::format(" {} | {} | {} |\n", membersOf(m.paramsSchema), membersOf(m.resultSchema), m.summary);
    }
    return out;
}

} // namespace takt::agent::rpc
