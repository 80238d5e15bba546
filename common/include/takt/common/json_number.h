#pragma once
// Exact conversion of JSON number text for parsers of untrusted input. RapidJSON 1.1's
// kParseFullPrecisionFlag path reads outside its power tables for some long numbers with large
// exponents (found by fuzzing), and its default path can be a few ulps off. Parse with
// kParseNumbersAsStringsFlag instead and hand each raw number to emitJsonNumber(): integers
// that fit stay integers, everything else is the correctly rounded double (std::from_chars).
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>

#include <rapidjson/document.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

namespace takt::common {

// Calls h.Int64 / h.Uint64 / h.Double for one valid JSON number token. False for a number whose
// magnitude is beyond double (RapidJSON's "number too big" case); underflow gives 0.
template <typename Handler> bool emitJsonNumber(Handler& h, const char* text, std::size_t length) {
    const std::string_view s(text, length);
    if (s.find_first_of(".eE") == std::string_view::npos) {
        if (s.starts_with('-')) {
            std::int64_t i = 0;
            if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i); ec == std::errc{} && p == s.end()) {
                return h.Int64(i);
            }
        } else {
            std::uint64_t u = 0;
            if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), u); ec == std::errc{} && p == s.end()) {
                return h.Uint64(u);
            }
        }
    }
    double d = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (ec == std::errc::result_out_of_range) {
        // from_chars leaves d alone on range errors: strtod says whether it was tiny or huge.
        const std::string copy(s);
        d = std::strtod(copy.c_str(), nullptr);
        if (std::isinf(d)) {
            return false;
        }
        return h.Double(d);
    }
    return ec == std::errc{} && p == s.end() && h.Double(d);
}

// A Document handler that receives raw numbers and stores them exactly.
// RapidJSON's SAX handler interface dictates the method names.
// NOLINTBEGIN(readability-identifier-naming)
template <typename Document>
struct ExactNumbers : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, ExactNumbers<Document>> {
    explicit ExactNumbers(Document& d) : doc(d) {}
    bool Null() { return doc.Null(); }
    bool Bool(bool b) { return doc.Bool(b); }
    bool Int(int i) { return doc.Int(i); }
    bool Uint(unsigned u) { return doc.Uint(u); }
    bool Int64(std::int64_t i) { return doc.Int64(i); }
    bool Uint64(std::uint64_t u) { return doc.Uint64(u); }
    bool Double(double d) { return doc.Double(d); }
    bool RawNumber(const char* s, rapidjson::SizeType n, bool /*copy*/) { return emitJsonNumber(doc, s, n); }
    bool String(const char* s, rapidjson::SizeType n, bool copy) { return doc.String(s, n, copy); }
    bool StartObject() { return doc.StartObject(); }
    bool Key(const char* s, rapidjson::SizeType n, bool copy) { return doc.Key(s, n, copy); }
    bool EndObject(rapidjson::SizeType n) { return doc.EndObject(n); }
    bool StartArray() { return doc.StartArray(); }
    bool EndArray(rapidjson::SizeType n) { return doc.EndArray(n); }
    Document& doc;
};
// NOLINTEND(readability-identifier-naming)

// Parses `text` into `doc` iteratively (flat C++ stack) with exact numbers.
template <typename Document> rapidjson::ParseResult parseJsonExact(Document& doc, std::string_view text) {
    rapidjson::ParseResult result;
    auto generate = [&](Document& d) {
        rapidjson::MemoryStream ms(text.data(), text.size());
        rapidjson::Reader reader;
        ExactNumbers<Document> handler(d);
        result = reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag>(ms, handler);
        return !result.IsError();
    };
    doc.Populate(generate);
    return result;
}

} // namespace takt::common
