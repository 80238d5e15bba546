#pragma once
// Reading JSON replies in tests without undefined behaviour on missing members.
#include <initializer_list>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace takt::test {

// A member path, or a null value when any step is missing (operator[] on a missing member is
// undefined behaviour in RapidJSON release builds).
inline const rapidjson::Value& at(const rapidjson::Value& v, std::initializer_list<const char*> path) {
    static const rapidjson::Value kNull;
    const rapidjson::Value* cur = &v;
    for (const char* key : path) {
        if (!cur->IsObject()) {
            return kNull;
        }
        auto it = cur->FindMember(key);
        if (it == cur->MemberEnd()) {
            return kNull;
        }
        cur = &it->value;
    }
    return *cur;
}

// `v` as compact JSON text (for failure messages).
inline std::string toJson(const rapidjson::Value& v) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    v.Accept(w);
    return b.GetString();
}

} // namespace takt::test
