#pragma once
// JSON-RPC 2.0 plumbing of the agent API: a bounded, iterative parse of one untrusted line, the
// error codes of seed 000 and PROTOCOLS.md, and the response writers.
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

// RapidJSON 1.1 declares its member-iterator == and != as members taking an iterator of another
// constness; C++20 reversed candidates make FindMember() != MemberEnd() ambiguous for clang. Every
// agent source that walks RapidJSON members includes this header, so the warning is silenced here,
// for the rest of each of those translation units.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wambiguous-reversed-operator"
#endif

namespace takt::agent::rpc {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kPathEscapes = -32001;
inline constexpr int kCommandFailed = -32002;
inline constexpr int kHarnessNotLoaded = -32003;
inline constexpr int kRunUntilBudget = -32004;

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// A method failure: code, message and optional data (raw JSON text; empty means no data).
struct Error {
    int code = kInternalError;
    std::string message;
    std::string data;
};

[[nodiscard]] Error invalidParam(std::string_view member, std::string message);

// What parseLine found.
struct ParsedLine {
    enum class Status : std::uint8_t { Ok, ParseError, TooDeep } status = Status::Ok;
    rapidjson::Document doc;
    std::string error; // ParseError / TooDeep: why, with the offset
    // The top-level "id" member exactly as written when it is a number (echoed verbatim).
    std::string rawNumericId;
};

// Parses one line iteratively (no recursion on the input's nesting), validating UTF-8,
// refusing nesting deeper than `maxDepth` while parsing (so nothing deep is ever built), and
// capturing the raw text of a numeric top-level id.
void parseLine(std::string_view text, int maxDepth, ParsedLine& out);

void writeString(JsonWriter& w, std::string_view s);
// `s` as JSON string text, quotes included (for responses assembled with fmt).
[[nodiscard]] std::string quoted(std::string_view s);
// Renders a value; the caller guarantees bounded depth (parseLine does).
[[nodiscard]] std::string toJson(const rapidjson::Value& v);
// Appends a value's text to `out`, as toJson renders it, without a buffer of its own: for values
// rendered in bulk into one string (value subscriptions).
void appendJson(const rapidjson::Value& v, std::string& out);

// True when `s` is valid UTF-8 (so it can go into a JSON string unchanged).
[[nodiscard]] bool isUtf8(std::string_view s);

} // namespace takt::agent::rpc
