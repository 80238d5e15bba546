// `takt deploy`'s table for a person (cli/deploy_report.cpp): what a box keeps for its next
// start is said where it is not what the user would assume.
#include <string>

#include <gtest/gtest.h>

#include "deploy_report.h"

namespace takt::cli {
namespace {

BoxResult box(const char* name, BoxOutcome outcome, std::string change = {}) {
    BoxResult b;
    b.name = name;
    b.outcome = outcome;
    b.oldHash = std::string(64, 'a');
    b.changed = outcome != BoxOutcome::NotReached;
    b.change = std::move(change);
    return b;
}

TEST(DeployReport, ABoxThatCouldNotKeepTheChangeSaysSo) {
    DeployResult r;
    r.newHash = std::string(64, 'b');
    r.boxes.push_back(box("kept", BoxOutcome::Applied, R"({"kept_for_restart":true})"));
    r.boxes.push_back(box("lost", BoxOutcome::Applied, R"({"kept_for_restart":false,"keep_error":"disk full"})"));
    const std::string out = renderDeployText(r);
    EXPECT_NE(out.find("kept  applied      program aaaaaaaaaaaaaaaa -> bbbbbbbbbbbbbbbb, running\n"), std::string::npos)
        << out;
    EXPECT_NE(
        out.find("lost  applied      program aaaaaaaaaaaaaaaa -> bbbbbbbbbbbbbbbb, running; not kept for its next "
                 "start (see its log)\n"),
        std::string::npos)
        << out;
}

TEST(DeployReport, AFailedBoxLeftOnItsChangeKeepsItAcrossARestart) {
    DeployResult r;
    r.newHash = std::string(64, 'b');
    r.boxes.push_back(box("press-1", BoxOutcome::Failed));
    r.boxes.push_back(box("press-2", BoxOutcome::NotReached));
    r.stoppedAt = "press-1";
    const std::string out = renderDeployText(r);
    EXPECT_NE(out.find("press-1 keeps the new program, also after a restart"), std::string::npos) << out;
    r.boxes[0].changed = false; // refused before its change: nothing kept
    EXPECT_EQ(renderDeployText(r).find("keeps the new program"), std::string::npos);
}

} // namespace
} // namespace takt::cli
