#include "reload_report.h"

#include <fmt/format.h>

namespace takt::cli {

namespace {

constexpr std::size_t kKeptNamed = 12; // kept variables named before "and N more"

std::string str(const rapidjson::Value& v, const char* key) {
    return v.IsObject() && v.HasMember(key) && v[key].IsString() ? v[key].GetString() : "";
}

// GetInt64 of a number that is not an integer reads the bits of a double: IsInt64, not IsNumber.
std::int64_t num(const rapidjson::Value& v, const char* key) {
    return v.IsObject() && v.HasMember(key) && v[key].IsInt64() ? v[key].GetInt64() : 0;
}

std::string shortHash(const std::string& h) {
    return h.substr(0, 16);
}

// "re-initialised" rather than the JSON's "reinitialised".
std::string label(const std::string& outcome) {
    return outcome == "reinitialised" ? "re-initialised" : outcome;
}

} // namespace

bool reloadLosesState(const rapidjson::Value& result) {
    return result.IsObject() && result.HasMember("loses_state") && result["loses_state"].IsBool() &&
           result["loses_state"].GetBool();
}

std::string renderReloadReport(const rapidjson::Value& r) {
    const bool dryRun = r.IsObject() && r.HasMember("dry_run") && r["dry_run"].IsBool() && r["dry_run"].GetBool();
    std::string out =
        dryRun
            ? fmt::format("Online change preview (nothing applied): program {} -> {}\n", shortHash(str(r, "old_hash")),
                          shortHash(str(r, "new_hash")))
            : fmt::format(
                  "Online change applied at cycle {} (swap pause {:.1f} us): program {} -> {}\n", num(r, "cycle"),
                  r.HasMember("swap_pause_us") && r["swap_pause_us"].IsNumber() ? r["swap_pause_us"].GetDouble() : 0.0,
                  shortHash(str(r, "old_hash")), shortHash(str(r, "new_hash")));
    out += fmt::format("  {} kept, {} converted, {} re-initialised, {} dropped, {} added\n", num(r, "kept"),
                       num(r, "converted"), num(r, "reinitialised"), num(r, "dropped"), num(r, "added"));
    if (!dryRun && r.IsObject() && r.HasMember("kept_for_restart") && r["kept_for_restart"].IsFalse()) {
        // Applied, but a restart would run the program from before it.
        out += fmt::format("  warning: not kept for the next start of takt run: {}\n",
                           str(r, "keep_error").empty() ? std::string("the runtime keeps no program")
                                                        : str(r, "keep_error"));
    }
    if (!r.IsObject() || !r.HasMember("variables") || !r["variables"].IsArray()) {
        return out;
    }
    std::size_t width = 0;
    for (const rapidjson::Value& v : r["variables"].GetArray()) {
        if (str(v, "outcome") != "kept") {
            width = std::max(width, str(v, "path").size());
        }
    }
    std::string kept;
    std::size_t keptCount = 0;
    bool listed = false;
    for (const rapidjson::Value& v : r["variables"].GetArray()) {
        const std::string outcome = str(v, "outcome");
        const std::string path = str(v, "path");
        if (outcome == "kept") {
            if (keptCount++ < kKeptNamed) {
                kept += (kept.empty() ? "" : ", ") + path;
            }
            continue;
        }
        if (!listed) {
            out += "\n";
            listed = true;
        }
        const std::string from = str(v, "from");
        const std::string to = str(v, "to");
        std::string what;
        if (outcome == "added") {
            what = "new, initial value" + (to.empty() ? "" : " (" + to + ")");
        } else if (outcome == "dropped") {
            what = "no longer declared" + (from.empty() ? "" : " (was " + from + ")");
        } else {
            what = !from.empty() && !to.empty() ? from + " -> " + to : "";
            const std::string reason = str(v, "reason");
            if (!reason.empty()) {
                what += (what.empty() ? "" : ": ") + reason;
            }
        }
        out += fmt::format("  {:<15} {:<{}}  {}\n", label(outcome), path, width, what);
        if (v.HasMember("lost_values") && v["lost_values"].IsArray() && !v["lost_values"].Empty()) {
            std::string values;
            for (const rapidjson::Value& n : v["lost_values"].GetArray()) {
                values += (values.empty() ? "" : ", ") + std::string(n.IsString() ? n.GetString() : "?");
            }
            out += fmt::format("  {:<15} {:<{}}  no longer exists: {} (a variable holding it gets the initial value)\n",
                               "", "", width, values);
        }
    }
    if (keptCount > 0) {
        out += fmt::format("\n  kept: {}{}\n", kept,
                           keptCount > kKeptNamed ? fmt::format(" and {} more", keptCount - kKeptNamed) : "");
    }
    return out;
}

} // namespace takt::cli
