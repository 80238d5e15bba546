#include "rpc/rpc_envelope.h"

namespace takt::agent::rpc {

namespace {

bool invalid(Error& error, std::string_view message) {
    error = Error{kInvalidRequest, std::string(message), {}};
    return false;
}

// Raw JSON for inside a response line: trailing blanks dropped, CR/LF (only ever whitespace in
// valid JSON text) turned into spaces.
void appendRaw(JsonWriter& w, std::string_view raw, rapidjson::Type type) {
    while (!raw.empty() && (raw.back() == '\n' || raw.back() == '\r' || raw.back() == ' ' || raw.back() == '\t')) {
        raw.remove_suffix(1);
    }
    if (raw.empty()) {
        w.Null();
        return;
    }
    if (raw.find_first_of("\r\n") == std::string_view::npos) {
        w.RawValue(raw.data(), raw.size(), type);
        return;
    }
    std::string text(raw);
    for (char& c : text) {
        if (c == '\n' || c == '\r') {
            c = ' ';
        }
    }
    w.RawValue(text.data(), text.size(), type);
}

void writeId(JsonWriter& w, const RequestId& id) {
    w.Key("id");
    switch (id.kind) {
    case RequestId::Kind::Null: w.Null(); break;
    case RequestId::Kind::String: writeString(w, id.text); break;
    case RequestId::Kind::Number: w.RawValue(id.text.data(), id.text.size(), rapidjson::kNumberType); break;
    }
}

void startResponse(JsonWriter& w, const RequestId& id) {
    w.StartObject();
    w.Key("jsonrpc");
    w.String("2.0");
    writeId(w, id);
}

} // namespace

bool parseRequest(std::string_view line, ParsedLine& scratch, Request& out, Error& error, std::size_t maxBytes,
                  NullParams nullParams) {
    out = Request{};
    static const rapidjson::Value kNoParams(rapidjson::kObjectType);
    out.params = &kNoParams;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
        line.remove_suffix(1);
    }
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
        return invalid(error, kBlankLineMessage);
    }
    if (line.size() > maxBytes) {
        return invalid(error, maxBytes == kMaxLineBytes           ? kOversizeLineMessage
                              : maxBytes == kMaxEngineerLineBytes ? kOversizeEngineerLineMessage
                                                                  : "message exceeds the size limit");
    }
    parseLine(line, kMaxJsonDepth, scratch);
    if (scratch.status == ParsedLine::Status::ParseError) {
        error = Error{kParseError, "Parse error: " + scratch.error, {}};
        return false;
    }
    if (scratch.status == ParsedLine::Status::TooDeep) {
        return invalid(error, scratch.error);
    }
    const rapidjson::Document& doc = scratch.doc;
    if (doc.IsArray()) {
        return invalid(error, "batch requests are not supported; send one request per line");
    }
    if (!doc.IsObject()) {
        return invalid(error, "a request must be a JSON object");
    }
    if (auto it = doc.FindMember("id"); it != doc.MemberEnd()) {
        const rapidjson::Value& v = it->value;
        if (v.IsString()) {
            out.id.kind = RequestId::Kind::String;
            out.id.text.assign(v.GetString(), v.GetStringLength());
        } else if (v.IsNumber()) {
            out.id.kind = RequestId::Kind::Number;
            out.id.text = scratch.rawNumericId;
        } else if (!v.IsNull()) {
            return invalid(error, "'id' must be a string, a number or null");
        }
        out.notification = false;
    }
    auto version = doc.FindMember("jsonrpc");
    if (version == doc.MemberEnd() || !version->value.IsString() || version->value != "2.0") {
        return invalid(error, "'jsonrpc' must be \"2.0\"");
    }
    auto method = doc.FindMember("method");
    if (method == doc.MemberEnd() || !method->value.IsString()) {
        return invalid(error, "'method' must be a string");
    }
    out.method = std::string_view(method->value.GetString(), method->value.GetStringLength());
    if (auto it = doc.FindMember("params"); it != doc.MemberEnd()) {
        if (it->value.IsNull() && nullParams == NullParams::Absent) {
            // As if absent: out.params stays the empty object.
        } else if (it->value.IsArray()) {
            out.paramsError =
                invalidParam("params", "invalid params: takt methods take named params (an object), not an array");
        } else if (!it->value.IsObject()) {
            return invalid(error, "'params' must be an object");
        } else {
            out.params = &it->value;
        }
    }
    return true;
}

bool parseResponse(std::string_view line, ParsedLine& scratch, Response& out) {
    out = Response{};
    out.error.code = 0; // none found
    parseLine(line, kMaxJsonDepth, scratch);
    const rapidjson::Document& doc = scratch.doc;
    if (scratch.status != ParsedLine::Status::Ok || !doc.IsObject()) {
        return false;
    }
    auto id = doc.FindMember("id");
    if (id == doc.MemberEnd()) {
        return false;
    }
    if (id->value.IsString()) {
        out.id.kind = RequestId::Kind::String;
        out.id.text.assign(id->value.GetString(), id->value.GetStringLength());
    } else if (id->value.IsNumber()) {
        out.id.kind = RequestId::Kind::Number;
        out.id.text = scratch.rawNumericId;
    }
    if (auto r = doc.FindMember("result"); r != doc.MemberEnd()) {
        out.ok = true;
        out.result = toJson(r->value);
        return true;
    }
    auto e = doc.FindMember("error");
    out.errorJson = e != doc.MemberEnd() ? toJson(e->value) : std::string("null");
    if (e != doc.MemberEnd() && e->value.IsObject()) {
        if (auto m = e->value.FindMember("message"); m != e->value.MemberEnd() && m->value.IsString()) {
            out.error.message.assign(m->value.GetString(), m->value.GetStringLength());
        }
        if (auto c = e->value.FindMember("code"); c != e->value.MemberEnd() && c->value.IsInt()) {
            out.error.code = c->value.GetInt();
        }
    }
    return true;
}

std::string resultLine(const RequestId& id, std::string_view resultJson) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    startResponse(w, id);
    w.Key("result");
    appendRaw(w, resultJson, rapidjson::kObjectType);
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::string errorLine(const RequestId& id, const Error& error) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    startResponse(w, id);
    w.Key("error");
    w.StartObject();
    w.Key("code");
    w.Int(error.code);
    w.Key("message");
    writeString(w, error.message);
    if (!error.data.empty()) {
        w.Key("data");
        appendRaw(w, error.data, rapidjson::kObjectType);
    }
    w.EndObject();
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::string notificationLine(std::string_view method, std::string_view paramsJson) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("jsonrpc");
    w.String("2.0");
    w.Key("method");
    writeString(w, method);
    w.Key("params");
    appendRaw(w, paramsJson, rapidjson::kObjectType);
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::string requestLine(std::int64_t id, std::string_view method, std::string_view paramsJson) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("jsonrpc");
    w.String("2.0");
    w.Key("id");
    w.Int64(id);
    w.Key("method");
    writeString(w, method);
    if (!paramsJson.empty()) {
        w.Key("params");
        appendRaw(w, paramsJson, rapidjson::kObjectType);
    }
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

} // namespace takt::agent::rpc
