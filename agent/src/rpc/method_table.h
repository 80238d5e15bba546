#pragma once
// What every method table (MethodSpec, takt/agent/rpc_method.h) is used for, whatever its
// handlers: finding a method, checking params against its schema, and rendering it for
// agent.describe, agent.schema and the method tables of docs/.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "rpc/rpc_json.h"
#include "takt/agent/rpc_method.h"

namespace takt::agent::rpc {

// A method's facts without its handler.
struct MethodFacts {
    std::string_view name;
    std::string_view summary;
    std::string_view paramsSchema;
    std::string_view resultSchema;
    std::optional<Role> role;
};
template <class Handler> [[nodiscard]] MethodFacts factsOf(const MethodSpec<Handler>& m) {
    return {m.name, m.summary, m.paramsSchema, m.resultSchema, m.role};
}
template <class Handler> [[nodiscard]] std::vector<MethodFacts> factsOf(std::span<const MethodSpec<Handler>> table) {
    std::vector<MethodFacts> out;
    for (const MethodSpec<Handler>& m : table) {
        out.push_back(factsOf(m));
    }
    return out;
}
template <class Handler>
[[nodiscard]] const MethodSpec<Handler>* findMethod(std::span<const MethodSpec<Handler>> table, std::string_view name) {
    for (const MethodSpec<Handler>& m : table) {
        if (m.name == name) {
            return &m;
        }
    }
    return nullptr;
}

// The params schemas of one table, parsed once when the table is loaded.
class ParamsSchemas {
public:
    void clear() { schemas_.clear(); }
    void add(const MethodFacts& method);
    // Checks params against the method's schema: types, required and unknown members, enum,
    // minimum/maximum, array items. The -32602 error names the member (`data.param`). A method
    // without a schema (not added, or one that does not parse) is -32603.
    [[nodiscard]] bool check(std::string_view method, const rapidjson::Value& params, Error& error) const;

private:
    std::vector<std::pair<std::string_view, rapidjson::Document>> schemas_;
};

// {"method","summary","role"?,"params":{schema},"result":{schema}} as agent.schema answers it.
[[nodiscard]] std::string schemaJson(const MethodFacts& method, bool withRole);
// A JSON array of the names, for agent.describe.
[[nodiscard]] std::string namesJson(std::span<const MethodFacts> methods);
// The Markdown table of docs/: method, role (when `withRole`), params and result members from
// the schemas (optional ones marked `?`), summary.
[[nodiscard]] std::string markdownTable(std::span<const MethodFacts> methods, bool withRole);

} // namespace takt::agent::rpc
