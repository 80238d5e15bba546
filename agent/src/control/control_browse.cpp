// var.list: the symbol browse of the running program (path, type, address, retain, forced),
// filtered by a pattern and paged, answered from the module alone without a scan command.
#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "control/control_runtime_internal.h"

namespace takt::agent {

namespace {

char lower(char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

} // namespace

bool globMatch(std::string_view pattern, std::string_view text) {
    std::size_t p = 0;
    std::size_t t = 0;
    std::size_t star = std::string_view::npos;
    std::size_t resume = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || lower(pattern[p]) == lower(text[t]))) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') {
        ++p;
    }
    return p == pattern.size();
}

bool exposedBy(const std::vector<std::string>& globs, std::string_view path) {
    if (globs.empty()) {
        return true;
    }
    std::size_t end = path.size();
    while (end > 0) {
        const std::string_view whole = path.substr(0, end);
        if (std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return globMatch(g, whole); })) {
            return true;
        }
        const std::size_t cut = path.find_last_of(".[", end - 1);
        end = cut == std::string_view::npos ? 0 : cut;
    }
    return false;
}

bool varPatternMatches(std::string_view pattern, std::string_view path) {
    if (pattern.empty()) {
        return true;
    }
    if (pattern.find_first_of("*?") != std::string_view::npos) {
        return globMatch(pattern, path);
    }
    // No wildcard: a case-insensitive substring, as a watch-list search box does it.
    const auto it = std::search(path.begin(), path.end(), pattern.begin(), pattern.end(),
                                [](char a, char b) { return lower(a) == lower(b); });
    return it != path.end();
}

std::vector<const bytecode::VarEntry*> listedVariables(const bytecode::Module& m, std::string_view filter) {
    // TEST_PROGRAM instances are in the image but never run in a scan: not worth watching.
    std::vector<std::string> testPrefixes;
    for (const bytecode::ProgramInstance& p : m.programs) {
        if (p.pou < m.pous.size() && bytecode::isTestPou(m.pous[p.pou].kind)) {
            testPrefixes.push_back(p.name + ".");
        }
    }
    const auto inTest = [&](const std::string& path) {
        return std::any_of(testPrefixes.begin(), testPrefixes.end(),
                           [&](const std::string& prefix) { return path.starts_with(prefix) || path + "." == prefix; });
    };
    std::vector<const bytecode::VarEntry*> out;
    for (const bytecode::VarEntry& v : m.variables) {
        if (v.kind != bytecode::VarKind::Temp && !inTest(v.path) && !engine::bookkeepingPath(v.path) &&
            varPatternMatches(filter, v.path)) {
            out.push_back(&v);
        }
    }
    return out;
}

namespace {

// `,"enum":[{"name","value"}…]` for a variable of an enumeration (or an array of one): its values
// in declaration order, what an OPC UA client shows as the variable's EnumStrings.
std::string enumMember(const bytecode::Module& m, std::uint32_t type) {
    if (type < m.types.size() && m.types[type].kind == bytecode::ValueKind::Array) {
        type = m.types[type].element;
    }
    if (type >= m.types.size() || m.types[type].kind != bytecode::ValueKind::Enum) {
        return {};
    }
    std::string out;
    for (const bytecode::EnumValueDesc& e : m.types[type].enumValues) {
        out += fmt::format("{}{{\"name\":{},\"value\":{}}}", out.empty() ? "" : ",", ctl::quoted(e.name), e.value);
    }
    return fmt::format(",\"enum\":[{}]", out);
}

} // namespace

void RuntimeControl::varList(const rapidjson::Value& params, ControlReplyFn& reply) {
    // The schema has checked the types and ranges of all three.
    const rapidjson::Value* pattern = ctl::member(params, "pattern");
    const rapidjson::Value* offsetParam = ctl::member(params, "offset");
    const rapidjson::Value* limitParam = ctl::member(params, "limit");
    const std::string_view filter = pattern != nullptr ? std::string_view(pattern->GetString()) : std::string_view();
    const std::uint64_t offset = offsetParam != nullptr ? offsetParam->GetUint64() : 0;
    const std::uint64_t limit = limitParam != nullptr ? limitParam->GetUint64() : 100;
    const bytecode::Module& m = *module_;
    std::map<std::uint32_t, const bytecode::IoBinding*> located; // data-image offset -> binding
    for (const bytecode::IoBinding& b : m.io) {
        located.emplace(b.imageOffset, &b);
    }
    std::string rows;
    std::uint64_t total = 0;
    for (const bytecode::VarEntry* entry : listedVariables(m, filter)) {
        const bytecode::VarEntry& v = *entry;
        if (total++ < offset || total > offset + limit) {
            continue;
        }
        const auto at = located.find(v.offset);
        const bool hasAddress = at != located.end() && at->second->type == v.type;
        const bool forced = std::any_of(forced_.begin(), forced_.end(), [&](const Forced& f) {
            return !f.address && f.range.offset == v.offset && f.type == v.type;
        });
        rows +=
            fmt::format("{}{{\"path\":{},\"type\":{},\"address\":{},\"retain\":{},\"constant\":{},\"forced\":{}{}}}",
                        rows.empty() ? "" : ",", ctl::quoted(v.path),
                        ctl::quoted(v.type < m.types.size() ? m.types[v.type].name : std::string("?")),
                        hasAddress ? ctl::quoted(at->second->address) : std::string("null"), v.retain, v.constant,
                        forced, enumMember(m, v.type));
    }
    reply(ControlAnswer::result(fmt::format("{{\"total\":{},\"offset\":{},\"variables\":[{}]}}", total, offset, rows)));
}

} // namespace takt::agent
