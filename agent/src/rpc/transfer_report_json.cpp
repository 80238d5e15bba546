#include "rpc/transfer_report_json.h"

#include <fmt/format.h>

#include "rpc/rpc_json.h"

namespace takt::agent {

namespace {

// A type change shows as `from` -> `to`; a new, dropped or not-RETAIN variable has one side only.
bool retyped(const engine::TransferEntry& e) {
    return (e.outcome == engine::TransferOutcome::Converted || e.outcome == engine::TransferOutcome::Reinitialised) &&
           !e.fromType.empty() && !e.toType.empty();
}

} // namespace

std::string transferReportMembers(const engine::TransferReport& r) {
    std::string variables = "[";
    std::string retypedPaths = "[";
    std::uint32_t retypedCount = 0;
    for (const engine::TransferEntry& e : r.entries) {
        variables += variables.size() > 1 ? "," : "";
        variables += fmt::format("{{\"path\":{},\"outcome\":{}", rpc::quoted(e.path),
                                 rpc::quoted(engine::outcomeName(e.outcome)));
        if (!e.fromType.empty()) {
            variables += ",\"from\":" + rpc::quoted(e.fromType);
        }
        if (!e.toType.empty()) {
            variables += ",\"to\":" + rpc::quoted(e.toType);
        }
        if (!e.reason.empty()) {
            variables += ",\"reason\":" + rpc::quoted(e.reason);
        }
        if (!e.lostValues.empty()) {
            variables += ",\"lost_values\":[";
            for (std::size_t i = 0; i < e.lostValues.size(); ++i) {
                variables += (i > 0 ? "," : "") + rpc::quoted(e.lostValues[i]);
            }
            variables += "]";
        }
        variables += "}";
        if (retyped(e)) {
            retypedPaths += (retypedCount++ > 0 ? "," : "") + rpc::quoted(e.path);
        }
    }
    return fmt::format("\"kept\":{},\"converted\":{},\"reinitialised\":{},\"dropped\":{},\"added\":{},"
                       "\"loses_state\":{},\"variables\":{}],\"initialised\":{},\"retyped\":{},\"retyped_paths\":{}]",
                       r.kept, r.converted, r.reinitialised, r.dropped, r.added, r.losesState() ? "true" : "false",
                       variables, r.added, retypedCount, retypedPaths);
}

std::string transferReportLogLine(const engine::TransferReport& r, std::size_t maxPaths) {
    std::string line = fmt::format("online change: {} kept, {} converted, {} re-initialised, {} dropped, {} added",
                                   r.kept, r.converted, r.reinitialised, r.dropped, r.added);
    std::size_t named = 0;
    std::size_t more = 0;
    std::string paths;
    for (const engine::TransferEntry& e : r.entries) {
        if (e.outcome != engine::TransferOutcome::Reinitialised) {
            continue;
        }
        if (named == maxPaths) {
            ++more;
            continue;
        }
        paths += (named++ > 0 ? ", " : "") + e.path;
    }
    if (named > 0) {
        line += "; re-initialised: " + paths + (more > 0 ? fmt::format(" and {} more", more) : "");
    }
    return line;
}

} // namespace takt::agent
