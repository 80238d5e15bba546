#pragma once
// What `takt deploy --fleet` did on each box (docs/fleet.md), and its two renderings: a table for
// a person and JSON for a script.
#include <cstddef>
#include <string>
#include <vector>

namespace takt::cli {

enum class BoxOutcome {
    NotReached, // the deploy stopped before this box was changed
    Previewed,  // --dry-run: the preview only
    Unchanged,  // it runs the deployed program already (a re-run after an interruption)
    Applied,    // changed, and it stayed running without a fault for settle_s
    Failed,     // the preview, the change or the settle check failed (reason)
    RolledBack, // failed after its change, and runtime.rollback brought the program before back
};

[[nodiscard]] const char* boxOutcomeName(BoxOutcome outcome);

struct BoxResult {
    std::string name, endpoint;
    std::size_t wave = 0;
    BoxOutcome outcome = BoxOutcome::NotReached;
    std::string reason;  // why it failed, and what the rollback did
    std::string oldHash; // the program it ran before the deploy
    bool losesState = false;
    bool changed = false;     // the change may have reached it (a rollback has something to undo)
    bool unreachable = false; // it failed because it could not be reached
    std::string preview;      // the preview's answer (JSON), when there was one
    std::string change;       // the applied change's answer (JSON), when there was one
};

struct DeployResult {
    std::string fleetFile;
    std::string newHash;
    bool dryRun = false;
    unsigned settleS = 0;
    bool rollbackOnFailure = false;
    std::size_t waves = 0;
    std::vector<BoxResult> boxes; // in wave order
    std::string stoppedAt;        // the box whose failure stopped the deploy ("" when none did)

    [[nodiscard]] bool ok() const { return stoppedAt.empty(); }
};

[[nodiscard]] std::string renderDeployText(const DeployResult& result);
[[nodiscard]] std::string renderDeployJson(const DeployResult& result);

} // namespace takt::cli
