#pragma once
// Reading the JSON document `takt validate --ci` prints, in tests of the real binary.
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"

namespace takt::test {

// The document on stdout; a parse failure is a test failure naming both streams.
inline rapidjson::Document validateReport(const RunResult& r) {
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    EXPECT_FALSE(doc.HasParseError()) << r.out << r.err;
    EXPECT_TRUE(doc.IsObject()) << r.out;
    return doc;
}

// Whether the report holds a diagnostic of `severity` at `key` whose message contains `text`.
inline bool hasDiagnostic(const rapidjson::Document& doc, const char* severity, const std::string& key,
                          const std::string& text) {
    if (!doc.IsObject() || !doc.HasMember("diagnostics") || !doc["diagnostics"].IsArray()) {
        return false;
    }
    for (const auto& d : doc["diagnostics"].GetArray()) {
        if (std::string(d["severity"].GetString()) == severity && std::string(d["key"].GetString()) == key &&
            std::string(d["message"].GetString()).find(text) != std::string::npos) {
            return true;
        }
    }
    return false;
}

} // namespace takt::test
