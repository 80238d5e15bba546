// Bounded parsing of untrusted request lines. RapidJSON's iterative parser keeps the C++ stack
// flat; the handler below refuses depth beyond the cap before the document grows, and keeps
// numbers as written so a numeric id can be echoed byte for byte.
#include "rpc/rpc_json.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "takt/common/json_number.h"

namespace takt::agent::rpc {

namespace {

constexpr unsigned kFlags =
    rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag | rapidjson::kParseNumbersAsStringsFlag;

// RapidJSON's SAX handler interface dictates the method names below.
// NOLINTBEGIN(readability-identifier-naming)
// Forwards SAX events to a Document, counting depth and turning the raw number text back
// into typed numbers (full precision).
class BoundedHandler {
public:
    BoundedHandler(rapidjson::Document& doc, int maxDepth, std::string& rawId)
        : doc_(doc), maxDepth_(maxDepth), rawId_(rawId) {}

    bool Null() {
        idKey_ = false;
        return doc_.Null();
    }
    bool Bool(bool b) {
        idKey_ = false;
        return doc_.Bool(b);
    }
    bool Int(int i) {
        idKey_ = false;
        return doc_.Int(i);
    }
    bool Uint(unsigned u) {
        idKey_ = false;
        return doc_.Uint(u);
    }
    bool Int64(std::int64_t i) {
        idKey_ = false;
        return doc_.Int64(i);
    }
    bool Uint64(std::uint64_t u) {
        idKey_ = false;
        return doc_.Uint64(u);
    }
    bool Double(double d) {
        idKey_ = false;
        return doc_.Double(d);
    }
    bool RawNumber(const char* str, rapidjson::SizeType len, bool) {
        if (depth_ == 1 && idKey_) {
            rawId_.assign(str, len);
        }
        idKey_ = false;
        // The text is a valid JSON number already: store it exactly (json_number.h).
        return common::emitJsonNumber(doc_, str, len);
    }
    bool String(const char* str, rapidjson::SizeType len, bool copy) {
        idKey_ = false;
        return whole(str, len) && doc_.String(str, len, copy);
    }
    bool StartObject() { return enter() && doc_.StartObject(); }
    bool Key(const char* str, rapidjson::SizeType len, bool copy) {
        idKey_ = depth_ == 1 && len == 2 && std::memcmp(str, "id", 2) == 0;
        return whole(str, len) && doc_.Key(str, len, copy);
    }
    bool EndObject(rapidjson::SizeType n) {
        --depth_;
        return doc_.EndObject(n);
    }
    bool StartArray() { return enter() && doc_.StartArray(); }
    bool EndArray(rapidjson::SizeType n) {
        --depth_;
        return doc_.EndArray(n);
    }

    [[nodiscard]] bool tooDeep() const { return tooDeep_; }
    [[nodiscard]] bool loneSurrogate() const { return loneSurrogate_; }

private:
    // RapidJSON 1.1 refuses a high surrogate escape that no low one follows, but decodes a lone
    // low one (\uDC00) into the three bytes ED B0 80, which are not UTF-8: every string written
    // back from it would be invalid. Such bytes come only from an escape (raw input is validated).
    bool whole(const char* str, rapidjson::SizeType len) {
        for (rapidjson::SizeType i = 0; i + 1 < len; ++i) {
            if (static_cast<unsigned char>(str[i]) == 0xED && static_cast<unsigned char>(str[i + 1]) >= 0xA0) {
                loneSurrogate_ = true;
                return false;
            }
        }
        return true;
    }

    bool enter() {
        idKey_ = false;
        if (++depth_ > maxDepth_) {
            tooDeep_ = true;
            return false;
        }
        return true;
    }

    rapidjson::Document& doc_;
    int maxDepth_;
    std::string& rawId_;
    int depth_ = 0;
    bool idKey_ = false;
    bool tooDeep_ = false;
    bool loneSurrogate_ = false;
};
// NOLINTEND(readability-identifier-naming)

// The offset of the first \uXXXX escape in a string of `text` that is a UTF-16 low surrogate
// (DC00-DFFF) not preceded by a high one, or npos.
std::size_t loneLowSurrogateAt(std::string_view text) {
    const auto hex4 = [&](std::size_t at) -> long {
        if (at + 4 > text.size()) {
            return -1;
        }
        long v = 0;
        for (std::size_t k = at; k < at + 4; ++k) {
            const char c = text[k];
            const int d = c >= '0' && c <= '9'   ? c - '0'
                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
            if (d < 0) {
                return -1;
            }
            v = v * 16 + d;
        }
        return v;
    };
    bool inString = false;
    bool afterHigh = false; // the previous character of the string was a high surrogate escape
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '"') {
            inString = !inString;
            afterHigh = false;
        } else if (inString && text[i] == '\\' && i + 1 < text.size()) {
            if (text[i + 1] != 'u') {
                ++i;
                afterHigh = false;
                continue;
            }
            const long cp = hex4(i + 2);
            if (cp >= 0xDC00 && cp <= 0xDFFF && !afterHigh) {
                return i;
            }
            afterHigh = cp >= 0xD800 && cp <= 0xDBFF;
            i += 5;
        } else {
            afterHigh = false;
        }
    }
    return std::string_view::npos;
}

} // namespace

Error invalidParam(std::string_view member, std::string message) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("param");
    writeString(w, member);
    w.EndObject();
    return Error{kInvalidParams, std::move(message), std::string(buf.GetString(), buf.GetSize())};
}

void parseLine(std::string_view text, int maxDepth, ParsedLine& out) {
    out.status = ParsedLine::Status::Ok;
    out.rawNumericId.clear();
    // The document's pool allocator only grows: without this every line parsed into a reused
    // ParsedLine (one per connection, kept for its lifetime) would keep its values' memory, and a
    // long-lived control or agent connection would leak a little with every request.
    out.doc.SetNull();
    out.doc.GetAllocator().Clear();
    // RapidJSON reads a NUL byte as the end of the text: `{"method":"agent.ping"}\0garbage` would
    // run the ping. No JSON text holds a raw NUL (in a string it must be written \u0000).
    if (const void* nul = std::memchr(text.data(), '\0', text.size()); nul != nullptr) {
        out.status = ParsedLine::Status::ParseError;
        out.error = fmt::format("invalid JSON at offset {}: a NUL byte", static_cast<const char*>(nul) - text.data());
        return;
    }
    BoundedHandler handler(out.doc, maxDepth, out.rawNumericId);
    rapidjson::Reader reader;
    auto generate = [&](rapidjson::Document& doc) {
        (void)doc;
        rapidjson::MemoryStream ms(text.data(), text.size());
        const rapidjson::ParseResult r = reader.Parse<kFlags>(ms, handler);
        if (r.IsError()) {
            // A lone low surrogate escape before where RapidJSON stopped is the first fault (the
            // handler found it, or RapidJSON stopped at a later one inside the same string).
            if (const std::size_t lone = loneLowSurrogateAt(text.substr(0, r.Offset()));
                handler.loneSurrogate() || lone != std::string_view::npos) {
                out.status = ParsedLine::Status::ParseError;
                out.error = fmt::format("invalid JSON at offset {}: a UTF-16 low surrogate escape without the high "
                                        "one before it (no Unicode character)",
                                        std::min(lone, std::size_t{r.Offset()}));
            } else if (handler.tooDeep()) {
                out.status = ParsedLine::Status::TooDeep;
                out.error = fmt::format("request nesting exceeds {} levels (at offset {})", maxDepth, r.Offset());
            } else {
                out.status = ParsedLine::Status::ParseError;
                out.error =
                    fmt::format("invalid JSON at offset {}: {}", r.Offset(), rapidjson::GetParseError_En(r.Code()));
            }
            return false;
        }
        return true;
    };
    out.doc.Populate(generate);
    if (out.status != ParsedLine::Status::Ok) {
        out.doc.SetNull();
    }
}

void writeString(JsonWriter& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

std::string quoted(std::string_view s) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    writeString(w, s);
    return {buf.GetString(), buf.GetSize()};
}

std::string toJson(const rapidjson::Value& v) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    v.Accept(w);
    return {buf.GetString(), buf.GetSize()};
}

namespace {

// A rapidjson output stream that appends to a string. RapidJSON's stream concept dictates the
// method names.
// NOLINTBEGIN(readability-identifier-naming)
struct AppendStream {
    using Ch = char;
    std::string& out;
    void Put(char c) { out.push_back(c); }
    void Flush() {}
};
// NOLINTEND(readability-identifier-naming)

} // namespace

void appendJson(const rapidjson::Value& v, std::string& out) {
    AppendStream stream{out};
    rapidjson::Writer<AppendStream> w(stream);
    v.Accept(w);
}

bool isUtf8(std::string_view s) {
    std::size_t i = 0;
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    while (i < s.size()) {
        const unsigned c = p[i];
        std::size_t n = 0;
        std::uint32_t cp = 0;
        if (c < 0x80) {
            ++i;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            n = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + n >= s.size()) {
            return false;
        }
        for (std::size_t k = 1; k <= n; ++k) {
            if ((p[i + k] & 0xC0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        // Overlong forms, surrogates and values beyond U+10FFFF are not UTF-8.
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF)) {
            return false;
        }
        i += n + 1;
    }
    return true;
}

} // namespace takt::agent::rpc
