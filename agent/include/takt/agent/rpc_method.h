#pragma once
// What every JSON-RPC surface of takt (the agent API, the control endpoint; later the web API and
// the language server) knows about one method, in one table per surface: its name, a summary,
// the JSON Schemas of its params and result, the least role that may call it, and its handler.
// The table drives dispatch, the params check, the role check, agent.describe, agent.schema and
// the method tables of docs/ (a test regenerates those), so none of them can drift apart.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace takt::agent {

// PROTOCOLS.md roles, in order: a method needs at least its role.
enum class Role : std::uint8_t { Viewer, Operator, Engineer, Admin };
[[nodiscard]] const char* roleName(Role r) noexcept;
// "engineer" -> Role::Engineer; false for a name that is no role.
[[nodiscard]] bool roleByName(std::string_view name, Role& role) noexcept;

template <class Handler> struct MethodSpec {
    std::string_view name;
    std::string_view summary;
    std::string_view paramsSchema; // JSON Schema (draft 2020-12 subset) that every request's params must pass
    std::string_view resultSchema;
    std::optional<Role> role; // the least role; nothing: callable before auth.login (and on surfaces without roles)
    Handler handler;
};

// The answer to one call: `ok` with `json` the result value, or an error (code, message and
// optional data as raw JSON text).
struct MethodAnswer {
    bool ok = false;
    std::string json;
    int code = 0;
    std::string message;
    std::string data;
    // A call that acts on several things of its own (var.writeMany's variables): each one's name
    // and outcome (0, or the error code it was answered), an audit line each beside the call's.
    std::vector<std::pair<std::string, int>> items;

    [[nodiscard]] static MethodAnswer result(std::string json);
    [[nodiscard]] static MethodAnswer error(int code, std::string message, std::string data = {});
};

// A handler that completes later (on the server's thread) calls this exactly once.
using ReplyFn = std::function<void(MethodAnswer)>;

} // namespace takt::agent
