#pragma once
// The report of an online change (bytecode.reload's result, docs/control.md) as `takt reload`
// prints it for a person.
#include <string>

#include <rapidjson/document.h>

namespace takt::cli {

// A heading (preview or applied, the two program hashes), the counts, one line per variable that
// is converted, re-initialised, dropped or added, and the kept ones named briefly.
[[nodiscard]] std::string renderReloadReport(const rapidjson::Value& result);

// Whether the report says the change loses state (re-initialises or drops something).
[[nodiscard]] bool reloadLosesState(const rapidjson::Value& result);

} // namespace takt::cli
