#include "deploy_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace takt::cli {

namespace {

std::string shortHash(const std::string& h) {
    return h.substr(0, 16);
}

void writeString(rapidjson::Writer<rapidjson::StringBuffer>& w, const std::string& s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// A runtime's answer (JSON text) embedded as it came, or null.
void writeRaw(rapidjson::Writer<rapidjson::StringBuffer>& w, const std::string& json) {
    if (json.empty()) {
        w.Null();
        return;
    }
    w.RawValue(json.data(), json.size(), rapidjson::kObjectType);
}

// The applied change's answer says the box keeps it for its next start (an answer without the
// member, from a takt that keeps nothing, counts as kept: nothing to warn about).
bool keptForRestart(const std::string& change) {
    rapidjson::Document d;
    d.Parse(change.c_str());
    return !d.IsObject() || !d.HasMember("kept_for_restart") || !d["kept_for_restart"].IsFalse();
}

} // namespace

const char* boxOutcomeName(BoxOutcome outcome) {
    switch (outcome) {
    case BoxOutcome::NotReached: return "not_reached";
    case BoxOutcome::Previewed: return "previewed";
    case BoxOutcome::Unchanged: return "unchanged";
    case BoxOutcome::Applied: return "applied";
    case BoxOutcome::Failed: return "failed";
    case BoxOutcome::RolledBack: return "rolled_back";
    }
    return "?";
}

std::string renderDeployText(const DeployResult& r) {
    std::string out = fmt::format("{} program {} to {} boxes in {} waves (settle {} s, on failure: {})\n",
                                  r.dryRun ? "Deploy preview (nothing applied):" : "Deploy:", shortHash(r.newHash),
                                  r.boxes.size(), r.waves, r.settleS, r.rollbackOnFailure ? "rollback" : "stop");
    std::size_t width = 3;
    for (const BoxResult& b : r.boxes) {
        width = std::max(width, b.name.size());
    }
    out += fmt::format("  {:<4}  {:<{}}  outcome\n", "wave", "box", width);
    for (const BoxResult& b : r.boxes) {
        std::string what = b.reason;
        if (what.empty()) {
            switch (b.outcome) {
            case BoxOutcome::Previewed:
                what = fmt::format("program {} -> {}{}", shortHash(b.oldHash), shortHash(r.newHash),
                                   b.losesState ? "; re-initialises or drops state" : "");
                break;
            case BoxOutcome::Unchanged: what = "runs this program already"; break;
            case BoxOutcome::Applied:
                what = fmt::format("program {} -> {}, running{}", shortHash(b.oldHash), shortHash(r.newHash),
                                   keptForRestart(b.change) ? "" : "; not kept for its next start (see its log)");
                break;
            default: break;
            }
        }
        std::string line =
            fmt::format("  {:<4}  {:<{}}  {:<11}  {}", b.wave, b.name, width, boxOutcomeName(b.outcome), what);
        line.erase(line.find_last_not_of(' ') + 1);
        out += line + "\n";
    }
    if (!r.ok()) {
        out += fmt::format("The deploy stopped at {}; the boxes not reached run what they ran before.\n", r.stoppedAt);
        // A failed box left on its change also starts with it again (the change is kept).
        const auto failed = std::find_if(r.boxes.begin(), r.boxes.end(), [](const BoxResult& b) {
            return b.outcome == BoxOutcome::Failed && b.changed;
        });
        if (failed != r.boxes.end()) {
            out += fmt::format("{} keeps the new program, also after a restart: `takt rollback` it, or deploy with "
                               "on_failure = \"rollback\".\n",
                               failed->name);
        }
    }
    return out;
}

std::string renderDeployJson(const DeployResult& r) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("ok");
    w.Bool(r.ok());
    w.Key("dry_run");
    w.Bool(r.dryRun);
    w.Key("fleet");
    writeString(w, r.fleetFile);
    w.Key("program_hash");
    writeString(w, r.newHash);
    w.Key("settle_s");
    w.Uint(r.settleS);
    w.Key("on_failure");
    w.String(r.rollbackOnFailure ? "rollback" : "stop");
    w.Key("stopped_at");
    if (r.ok()) {
        w.Null();
    } else {
        writeString(w, r.stoppedAt);
    }
    w.Key("boxes");
    w.StartArray();
    for (const BoxResult& b : r.boxes) {
        w.StartObject();
        w.Key("name");
        writeString(w, b.name);
        w.Key("endpoint");
        writeString(w, b.endpoint);
        w.Key("wave");
        w.Uint64(b.wave);
        w.Key("outcome");
        w.String(boxOutcomeName(b.outcome));
        w.Key("reason");
        writeString(w, b.reason);
        w.Key("old_hash");
        writeString(w, b.oldHash);
        w.Key("loses_state");
        w.Bool(b.losesState);
        w.Key("preview");
        writeRaw(w, b.preview);
        w.Key("change");
        writeRaw(w, b.change);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

} // namespace takt::cli
