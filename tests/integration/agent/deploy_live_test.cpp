// `takt deploy --fleet fleet.toml` against real `takt run` instances, each on a Unix socket of its
// own temp dir (docs/fleet.md): the waves, a program that faults on the canary only after a few
// cycles (it passes the preview), the rollback of the canary, an unreachable box, a bad fleet.toml.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/control_live_support.h"
#include "support/takt_cli.h"
#include "support/wait.h"
#include "takt/compiler/exit_codes.h"

namespace takt::agent::live {
namespace {

// version 1 is what the boxes run; 2 is a good change (adds nothing, drops nothing); 3 adds a
// counter of its own cycles and divides by zero from its 20th cycle on, 200 ms after its change at
// a 10 ms cycle: its preview (which only initialises it) passes; 4 divides by the box's RETAIN
// `divisor` from then on, so it faults only on a box where that was set to 0.
std::string program(int version) {
    return fmt::format(R"(PROGRAM Main
VAR RETAIN
    cnt : UDINT;
    divisor : DINT := 1;
END_VAR
VAR
    version : INT;
    n : DINT;
    d : DINT;
    q : DINT;{1}
END_VAR
cnt := cnt + 1;
version := {0};
n := n + 1;
d := 1;
{2}q := 100 / d;
END_PROGRAM
)",
                       version, version >= 3 ? "\n    since : DINT;" : "",
                       version == 3   ? "since := since + 1;\nIF since > 20 THEN\n    d := 0;\nEND_IF;\n"
                       : version == 4 ? "since := since + 1;\nIF since > 20 THEN\n    d := divisor;\nEND_IF;\n"
                                      : "");
}

void writeProject(const TempDir& dir, int version, const std::string& control, const std::string& policy = "halt") {
    dir.write("runtime.toml", "[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\ncycle_interval_ms = 10\n\n"
                              "[runtime.fault]\npolicy = \"" +
                                  policy + "\"\n\n" + control);
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("src/main.st", program(version));
}

std::string endpointOf(const TempDir& dir) {
    return "unix://" + (dir.path() / "ctl.sock").string();
}

// A running box: its project (version 1) and `takt run`.
struct Box {
    TempDir dir;
    std::unique_ptr<Runtime> rt;
    ControlClientOptions client;
};

std::vector<std::unique_ptr<Box>> startBoxes(int count, const std::string& policy = "halt") {
    std::vector<std::unique_ptr<Box>> boxes;
    for (int i = 0; i < count; ++i) {
        auto b = std::make_unique<Box>();
        writeProject(b->dir, 1, fmt::format("[runtime.control]\nendpoint = \"{}\"\n", endpointOf(b->dir)), policy);
        b->client = clientOptions(endpointOf(b->dir));
        boxes.push_back(std::move(b));
    }
    for (auto& b : boxes) { // all started before the first is waited for
        b->rt = std::make_unique<Runtime>(b->dir.path());
    }
    for (auto& b : boxes) {
        EXPECT_TRUE(waitServing(*b->rt, b->client)) << b->rt->log();
    }
    return boxes;
}

rapidjson::Document status(const Box& b) {
    const ControlReply r = controlCall(b.client, "runtime.status", "");
    EXPECT_TRUE(r.reached && r.ok) << r.message;
    return parse(r.ok ? r.json : std::string("{}"));
}

std::int64_t version(const Box& b) {
    const ControlReply r = controlCall(b.client, "var.read", R"({"names":["version"]})");
    EXPECT_TRUE(r.reached && r.ok) << r.message;
    return r.ok ? parse(r.json)["values"]["version"]["value"].GetInt64() : -1;
}

// fleet.toml in `dir`: `deploy` is the [deploy] table's body, then one [[runtime]] per endpoint
// (named box0, box1, ...).
std::string writeFleet(const TempDir& dir, const std::string& deploy, const std::vector<std::string>& endpoints) {
    std::string text = "[deploy]\n" + deploy + "\n";
    for (std::size_t i = 0; i < endpoints.size(); ++i) {
        text += fmt::format("\n[[runtime]]\nname = \"box{}\"\nendpoint = \"{}\"\n", i, endpoints[i]);
    }
    dir.write("fleet.toml", text);
    return (dir.path() / "fleet.toml").string();
}

std::vector<std::string> endpoints(const std::vector<std::unique_ptr<Box>>& boxes) {
    std::vector<std::string> out;
    for (const auto& b : boxes) {
        out.push_back(endpointOf(b->dir));
    }
    return out;
}

struct Deploy {
    test::RunResult run;
    rapidjson::Document report;
    double seconds = 0;
};

Deploy deploy(const std::string& fleet, const TempDir& project, const std::string& extra = "--json") {
    Deploy d;
    const auto start = std::chrono::steady_clock::now();
    d.run = test::runTakt("deploy --fleet " + test::shellQuote(fleet) + " --project " +
                          test::shellQuote(project.path().string()) + " " + extra + " < /dev/null");
    d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    d.report.Parse(d.run.out.c_str());
    return d;
}

std::string outcome(const rapidjson::Document& report, std::size_t box) {
    if (!report.IsObject() || !report.HasMember("boxes") || report["boxes"].Size() <= box) {
        return "?";
    }
    return report["boxes"][static_cast<rapidjson::SizeType>(box)]["outcome"].GetString();
}

TEST(DeployLive, AllBoxesAreUpdatedInWavesAndAReRunAppliesNothingTwice) {
    auto boxes = startBoxes(4);
    TempDir project, fleetDir;
    writeProject(project, 2, "");
    const std::string fleet = writeFleet(fleetDir, "canary = 1\nwave_size = 2\nsettle_s = 1\n", endpoints(boxes));
    const std::string oldHash = status(*boxes[0])["program_hash"].GetString();

    // --dry-run: every box previews, none changes.
    const Deploy preview = deploy(fleet, project, "--dry-run --json");
    ASSERT_EQ(preview.run.exitCode, 0) << preview.run.out << preview.run.err;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        EXPECT_EQ(outcome(preview.report, i), "previewed") << preview.run.out;
        EXPECT_TRUE(preview.report["boxes"][static_cast<rapidjson::SizeType>(i)]["preview"].IsObject());
        EXPECT_EQ(status(*boxes[i])["reloads"].GetInt64(), 0);
    }

    const Deploy d = deploy(fleet, project);
    ASSERT_EQ(d.run.exitCode, 0) << d.run.out << d.run.err;
    ASSERT_TRUE(d.report.IsObject()) << d.run.out;
    EXPECT_TRUE(d.report["ok"].GetBool());
    const std::string newHash = d.report["program_hash"].GetString();
    EXPECT_NE(newHash, oldHash);
    const unsigned expectedWaves[] = {0, 1, 1, 2};
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        const auto& b = d.report["boxes"][static_cast<rapidjson::SizeType>(i)];
        EXPECT_EQ(std::string(b["name"].GetString()), fmt::format("box{}", i));
        EXPECT_EQ(b["wave"].GetUint(), expectedWaves[i]);
        EXPECT_EQ(outcome(d.report, i), "applied") << d.run.out;
        EXPECT_EQ(std::string(b["old_hash"].GetString()), oldHash);
        const rapidjson::Document s = status(*boxes[i]);
        EXPECT_EQ(std::string(s["state"].GetString()), "running");
        EXPECT_EQ(std::string(s["program_hash"].GetString()), newHash);
        EXPECT_EQ(s["reloads"].GetInt64(), 1);
        EXPECT_EQ(version(*boxes[i]), 2);
    }
    // Three waves, each settling 1 s before the next begins.
    EXPECT_GE(d.seconds, 3.0);

    // Run again (as after an interruption): every box runs the program already; none changes twice.
    const Deploy again = deploy(fleet, project);
    ASSERT_EQ(again.run.exitCode, 0) << again.run.out << again.run.err;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        EXPECT_EQ(outcome(again.report, i), "unchanged") << again.run.out;
        EXPECT_EQ(status(*boxes[i])["reloads"].GetInt64(), 1);
    }
}

// A program that divides by zero 20 cycles after its change: the preview (which only initialises
// it) passes, the canary faults while it settles, the deploy stops there.
void canaryFaults(bool rollback) {
    auto boxes = startBoxes(3);
    TempDir project, fleetDir;
    writeProject(project, 3, "");
    const std::string fleet = writeFleet(
        fleetDir, fmt::format("canary = 1\nsettle_s = 2\non_failure = \"{}\"\n", rollback ? "rollback" : "stop"),
        endpoints(boxes));
    const std::string oldHash = status(*boxes[0])["program_hash"].GetString();

    const Deploy d = deploy(fleet, project);
    EXPECT_EQ(d.run.exitCode, kExitControlError) << d.run.out << d.run.err;
    ASSERT_TRUE(d.report.IsObject()) << d.run.out;
    EXPECT_FALSE(d.report["ok"].GetBool());
    EXPECT_EQ(std::string(d.report["stopped_at"].GetString()), "box0");
    EXPECT_EQ(outcome(d.report, 0), rollback ? "rolled_back" : "failed") << d.run.out;
    const std::string reason = d.report["boxes"][0]["reason"].GetString();
    EXPECT_NE(reason.find("faulted"), std::string::npos) << reason;
    EXPECT_NE(reason.find("by zero"), std::string::npos) << reason;
    EXPECT_TRUE(reason.starts_with("after the change:")) << reason; // the preview and the change passed
    EXPECT_TRUE(d.report["boxes"][0]["change"].IsObject()) << d.run.out;
    // The boxes after the canary were not touched.
    for (std::size_t i = 1; i < boxes.size(); ++i) {
        EXPECT_EQ(outcome(d.report, i), "not_reached");
        const rapidjson::Document s = status(*boxes[i]);
        EXPECT_EQ(std::string(s["program_hash"].GetString()), oldHash);
        EXPECT_EQ(s["reloads"].GetInt64(), 0);
    }
    const rapidjson::Document s = status(*boxes[0]);
    if (rollback) {
        // The canary runs its previous program again, and keeps running it.
        EXPECT_EQ(std::string(s["state"].GetString()), "running") << d.run.out;
        EXPECT_EQ(std::string(s["program_hash"].GetString()), oldHash);
        EXPECT_EQ(s["reloads"].GetInt64(), 2);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        EXPECT_EQ(std::string(status(*boxes[0])["state"].GetString()), "running");
        EXPECT_EQ(version(*boxes[0]), 1);
    } else {
        EXPECT_EQ(std::string(s["state"].GetString()), "faulted");
        EXPECT_NE(std::string(s["program_hash"].GetString()), oldHash);
    }
}

TEST(DeployLive, AFaultOnTheCanaryStopsTheDeploy) {
    canaryFaults(false);
}

TEST(DeployLive, AFaultOnTheCanaryStopsTheDeployAndRollsTheCanaryBack) {
    canaryFaults(true);
}

// With [runtime.fault] policy = "restart" the canary restarts itself after the fault and is
// running again when looked at: the fault it had since its change still fails it.
TEST(DeployLive, AFaultTheRuntimeRestartedFromStillFailsTheCanary) {
    auto boxes = startBoxes(2, "restart");
    TempDir project, fleetDir;
    writeProject(project, 3, "");
    const std::string fleet = writeFleet(fleetDir, "settle_s = 2\n", endpoints(boxes));
    const Deploy d = deploy(fleet, project);
    EXPECT_EQ(d.run.exitCode, kExitControlError) << d.run.out << d.run.err;
    ASSERT_TRUE(d.report.IsObject()) << d.run.out;
    EXPECT_EQ(outcome(d.report, 0), "failed") << d.run.out;
    EXPECT_NE(std::string(d.report["boxes"][0]["reason"].GetString()).find("fault(s) since the change"),
              std::string::npos)
        << d.run.out;
    EXPECT_EQ(outcome(d.report, 1), "not_reached") << d.run.out;
    EXPECT_EQ(status(*boxes[1])["reloads"].GetInt64(), 0);
}

// The canary and the first wave take the change; the box of the second wave faults after its
// change (its RETAIN divisor is 0): the deploy stops there, the boxes before it keep the new
// program, the one after it is not reached.
TEST(DeployLive, AFaultInALaterWaveStopsTheDeployThere) {
    auto boxes = startBoxes(4);
    const ControlReply w =
        controlCall(boxes[2]->client, "var.write", R"({"name":"Main.divisor","value":{"type":"DINT","value":0}})");
    ASSERT_TRUE(w.reached && w.ok) << w.message;
    TempDir project, fleetDir;
    writeProject(project, 4, "");
    const std::string fleet = writeFleet(fleetDir, "canary = 1\nwave_size = 1\nsettle_s = 1\n", endpoints(boxes));
    const std::string oldHash = status(*boxes[0])["program_hash"].GetString();

    const Deploy d = deploy(fleet, project);
    EXPECT_EQ(d.run.exitCode, kExitControlError) << d.run.out << d.run.err;
    ASSERT_TRUE(d.report.IsObject()) << d.run.out;
    EXPECT_FALSE(d.report["ok"].GetBool());
    EXPECT_EQ(std::string(d.report["stopped_at"].GetString()), "box2") << d.run.out;
    const std::string newHash = d.report["program_hash"].GetString();
    const char* expected[] = {"applied", "applied", "failed", "not_reached"};
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        EXPECT_EQ(outcome(d.report, i), expected[i]) << d.run.out;
    }
    EXPECT_NE(std::string(d.report["boxes"][2]["reason"].GetString()).find("by zero"), std::string::npos) << d.run.out;
    for (std::size_t i = 0; i < 2; ++i) {
        const rapidjson::Document s = status(*boxes[i]);
        EXPECT_EQ(std::string(s["state"].GetString()), "running");
        EXPECT_EQ(std::string(s["program_hash"].GetString()), newHash);
        EXPECT_EQ(version(*boxes[i]), 4);
    }
    EXPECT_EQ(std::string(status(*boxes[2])["state"].GetString()), "faulted");
    const rapidjson::Document last = status(*boxes[3]);
    EXPECT_EQ(std::string(last["program_hash"].GetString()), oldHash);
    EXPECT_EQ(last["reloads"].GetInt64(), 0);
}

// `version` deployed to every box at once (the project and fleet.toml are gone afterwards).
Deploy deployAll(const std::vector<std::unique_ptr<Box>>& boxes, int version) {
    TempDir project, fleetDir;
    writeProject(project, version, "");
    return deploy(writeFleet(fleetDir, "settle_s = 0\n", endpoints(boxes)), project);
}

// Starts the box's runtime and waits for its first cycle: the control endpoint answers before the
// program has run, and a variable read then gives its initial value.
void start(Box& b) {
    b.rt = std::make_unique<Runtime>(b.dir.path());
    ASSERT_TRUE(waitServing(*b.rt, b.client)) << b.rt->log();
    EXPECT_TRUE(test::waitUntil([&] { return status(b)["cycles"].GetUint64() > 0; }, std::chrono::seconds(10),
                                std::chrono::milliseconds(5)))
        << b.rt->log();
}

void restart(Box& b) {
    EXPECT_EQ(b.rt->stop(), 0) << b.rt->log();
    start(b);
}

// A deployed program is kept for the next start (as CODESYS updates its boot application), and
// so is the program it replaced: a box restarted after a deploy runs the deployed program and can
// still roll back; a rollback is kept the same way.
TEST(DeployLive, ADeployedProgramAndItsRollbackOutliveARestart) {
    auto boxes = startBoxes(1);
    Box& box = *boxes[0];
    const std::string oldHash = status(box)["program_hash"].GetString();
    const Deploy d = deployAll(boxes, 2);
    ASSERT_EQ(d.run.exitCode, 0) << d.run.out << d.run.err;
    const std::string newHash = d.report["program_hash"].GetString();
    EXPECT_TRUE(d.report["boxes"][0]["change"]["kept_for_restart"].GetBool()) << d.run.out;

    restart(box);
    EXPECT_EQ(std::string(status(box)["program_hash"].GetString()), newHash);
    EXPECT_EQ(version(box), 2);
    EXPECT_NE(box.rt->log().find("was applied by an online change"), std::string::npos) << box.rt->log();
    ASSERT_EQ(test::runTakt("rollback --endpoint " + endpointOf(box.dir) + " --yes < /dev/null").exitCode, 0);
    EXPECT_EQ(version(box), 1);

    restart(box);
    EXPECT_EQ(std::string(status(box)["program_hash"].GetString()), oldHash);
    EXPECT_EQ(version(box), 1);
    // ... and the deployed program is the one to roll back to.
    ASSERT_EQ(test::runTakt("rollback --endpoint " + endpointOf(box.dir) + " --yes < /dev/null").exitCode, 0);
    EXPECT_EQ(std::string(status(box)["program_hash"].GetString()), newHash);
}

// The box's own project edited after the change wins at the next start, with a warning; the kept
// programs are moved aside, so nothing is left to roll back to.
TEST(DeployLive, AProjectEditedAfterTheDeployWinsAtTheNextStart) {
    auto boxes = startBoxes(1);
    Box& box = *boxes[0];
    ASSERT_EQ(deployAll(boxes, 2).run.exitCode, 0);
    box.dir.write("src/main.st", program(1) + "\n// edited on the box\n");

    restart(box);
    EXPECT_EQ(version(box), 1);
    EXPECT_NE(box.rt->log().find("the project's sources or [build] options changed since program"), std::string::npos)
        << box.rt->log();
    EXPECT_FALSE(fs::exists(box.dir.path() / ".takt" / "applied"));
    EXPECT_TRUE(fs::exists(box.dir.path() / ".takt" / "applied.discarded" / "applied.toml"));
    const ControlReply r = controlCall(box.client, "runtime.rollback", "{}");
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.message.find("no program to roll back to"), std::string::npos) << r.message;
}

// A change whose program cannot be written for the next start (here a file where the folder
// goes) is applied all the same, and says why in its answer and the run's log.
TEST(DeployLive, AChangeThatCannotBeKeptIsAppliedAndSaysWhy) {
    auto boxes = startBoxes(1);
    Box& box = *boxes[0];
    box.dir.write(".takt/applied", "a file where the folder goes\n");
    const Deploy d = deployAll(boxes, 2);
    ASSERT_EQ(d.run.exitCode, 0) << d.run.out << d.run.err;
    const auto& change = d.report["boxes"][0]["change"];
    EXPECT_FALSE(change["kept_for_restart"].GetBool()) << d.run.out;
    EXPECT_NE(std::string(change["keep_error"].GetString()).find(".takt/applied"), std::string::npos) << d.run.out;
    EXPECT_EQ(version(box), 2);
    EXPECT_NE(box.rt->log().find("the online change is not kept for the next start"), std::string::npos)
        << box.rt->log();
}

// A kept program that cannot run (damaged here; a program of another takt version the same) is
// an error in the log naming the file; the box starts on its project's program and stays
// reachable, and the kept files are moved aside to look at.
TEST(DeployLive, ADamagedKeptProgramIsAnErrorAndTheProjectRuns) {
    auto boxes = startBoxes(1);
    Box& box = *boxes[0];
    const Deploy d = deployAll(boxes, 2);
    ASSERT_EQ(d.run.exitCode, 0) << d.run.out << d.run.err;
    EXPECT_EQ(box.rt->stop(), 0);
    const std::string hash = d.report["program_hash"].GetString();
    const fs::path kept = box.dir.path() / ".takt" / "applied" / (hash + ".stbc");
    std::string bytes = readText(kept);
    ASSERT_GT(bytes.size(), 100U);
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x55);
    box.dir.write(fs::relative(kept, box.dir.path()).string(), bytes);

    start(box);
    EXPECT_EQ(version(box), 1);
    const std::string log = box.rt->log();
    EXPECT_NE(log.find("error the program the last online change applied cannot run: " + kept.string()),
              std::string::npos)
        << log;
    EXPECT_TRUE(fs::exists(box.dir.path() / ".takt" / "applied.unreadable" / (hash + ".stbc")));
}

TEST(DeployLive, AnUnreachableBoxIsReportedAndNothingIsApplied) {
    auto boxes = startBoxes(2);
    TempDir project, fleetDir, gone;
    writeProject(project, 2, "");
    // box1 is a socket path where no runtime listens.
    const std::string fleet = writeFleet(fleetDir, "canary = 1\nsettle_s = 0\n",
                                         {endpointOf(boxes[0]->dir), endpointOf(gone), endpointOf(boxes[1]->dir)});
    const Deploy d = deploy(fleet, project);
    EXPECT_EQ(d.run.exitCode, kExitControlUnreachable) << d.run.out << d.run.err;
    ASSERT_TRUE(d.report.IsObject()) << d.run.out;
    EXPECT_EQ(std::string(d.report["stopped_at"].GetString()), "box1");
    EXPECT_EQ(outcome(d.report, 1), "failed");
    EXPECT_NE(std::string(d.report["boxes"][1]["reason"].GetString()).find("unreachable"), std::string::npos);
    EXPECT_EQ(outcome(d.report, 0), "not_reached");
    EXPECT_EQ(outcome(d.report, 2), "not_reached");
    for (const auto& b : boxes) {
        EXPECT_EQ(status(*b)["reloads"].GetInt64(), 0);
        EXPECT_EQ(version(*b), 1);
    }
    // The text form names the box and why.
    const Deploy text = deploy(fleet, project, "");
    EXPECT_NE(text.run.out.find("box1"), std::string::npos) << text.run.out;
    EXPECT_NE(text.run.out.find("The deploy stopped at box1"), std::string::npos) << text.run.out;
}

// A change that drops a variable (state lost) is refused without --yes and a terminal, on every
// box before any is changed; --yes applies it.
TEST(DeployLive, AChangeThatLosesStateNeedsYes) {
    auto boxes = startBoxes(2);
    TempDir project, fleetDir;
    writeProject(project, 2, "");
    std::string source = program(2);
    source.replace(source.find("    q : DINT;\n"), std::string("    q : DINT;\n").size(), "");
    source.replace(source.find("q := 100 / d;"), std::string("q := 100 / d;").size(), "d := 100 / d;");
    project.write("src/main.st", source);
    const std::string fleet = writeFleet(fleetDir, "settle_s = 0\n", endpoints(boxes));

    const Deploy refused = deploy(fleet, project);
    EXPECT_EQ(refused.run.exitCode, kExitControlError) << refused.run.out << refused.run.err;
    EXPECT_NE(refused.run.err.find("Pass --yes"), std::string::npos) << refused.run.err;
    EXPECT_NE(refused.run.err.find("Main.q"), std::string::npos) << refused.run.err;
    for (const auto& b : boxes) {
        EXPECT_EQ(status(*b)["reloads"].GetInt64(), 0);
    }
    const Deploy applied = deploy(fleet, project, "--yes --json");
    EXPECT_EQ(applied.run.exitCode, 0) << applied.run.out << applied.run.err;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        EXPECT_EQ(outcome(applied.report, i), "applied") << applied.run.out;
        EXPECT_TRUE(applied.report["boxes"][static_cast<rapidjson::SizeType>(i)]["loses_state"].GetBool());
        EXPECT_EQ(version(*boxes[i]), 2);
    }
}

// A box on tls:// with an engineer's token file and the CA from fleet.toml (paths relative to its
// folder) next to one on a Unix socket; the same box with a viewer's token is refused at the
// preview, before any box is changed.
TEST(DeployLive, ATlsBoxWithATokenFile) {
    constexpr const char* kEngineer = "q7Vx2Lm9Rt4Kp8Zc3Nw6Hb1Y";
    constexpr const char* kViewer = "Jd5Ws8Qe2Uf7Gy4Mk9Pa3Tz6";
    auto boxes = startBoxes(1);
    TempDir tlsBox, project, fleetDir;
    ASSERT_TRUE(writeServerCertificate(tlsBox)) << readText(tlsBox.path() / "openssl.log");
    tlsBox.write("engineer.token", std::string(kEngineer) + "\n", 0600);
    tlsBox.write("viewer.token", std::string(kViewer) + "\n", 0600);
    const std::string endpoint = fmt::format("tls://127.0.0.1:{}", test::freeTcpPort());
    writeProject(tlsBox, 1,
                 fmt::format("[runtime.control]\nendpoint = \"{}\"\n\n[runtime.control.tls]\ncert = \"server.pem\"\n"
                             "key = \"server.key\"\n\n[[runtime.control.tokens]]\nrole = \"engineer\"\n"
                             "token_file = \"engineer.token\"\n\n[[runtime.control.tokens]]\nrole = \"viewer\"\n"
                             "token_file = \"viewer.token\"\n",
                             endpoint));
    Runtime rt(tlsBox.path());
    ControlClientOptions tlsClient = clientOptions(endpoint, kEngineer);
    tlsClient.caFile = (tlsBox.path() / "ca.pem").string();
    ASSERT_TRUE(waitServing(rt, tlsClient)) << rt.log();
    writeProject(project, 2, "");
    fleetDir.write("tokens/engineer.token", std::string(kEngineer) + "\n", 0600);
    fleetDir.write("tokens/viewer.token", std::string(kViewer) + "\n", 0600);
    fleetDir.write("ca.pem", readText(tlsBox.path() / "ca.pem"));
    const auto fleetWith = [&](const char* token) {
        fleetDir.write("fleet.toml", fmt::format("[deploy]\nsettle_s = 0\n\n[[runtime]]\nname = \"unix\"\nendpoint = "
                                                 "\"{}\"\n\n[[runtime]]\nname = \"tls\"\nendpoint = \"{}\"\n"
                                                 "token_file = \"tokens/{}.token\"\nca = \"ca.pem\"\n",
                                                 endpointOf(boxes[0]->dir), endpoint, token));
        return (fleetDir.path() / "fleet.toml").string();
    };

    const Deploy refused = deploy(fleetWith("viewer"), project);
    EXPECT_EQ(refused.run.exitCode, kExitControlError) << refused.run.out << refused.run.err;
    EXPECT_EQ(outcome(refused.report, 1), "failed") << refused.run.out;
    ASSERT_TRUE(refused.report.IsObject()) << refused.run.out;
    EXPECT_NE(std::string(refused.report["boxes"][1]["reason"].GetString()).find("needs role engineer"),
              std::string::npos)
        << refused.run.out;
    EXPECT_EQ(outcome(refused.report, 0), "not_reached") << refused.run.out;
    EXPECT_EQ(status(*boxes[0])["reloads"].GetInt64(), 0);

    const Deploy d = deploy(fleetWith("engineer"), project);
    EXPECT_EQ(d.run.exitCode, 0) << d.run.out << d.run.err;
    EXPECT_EQ(outcome(d.report, 0), "applied") << d.run.out;
    EXPECT_EQ(outcome(d.report, 1), "applied") << d.run.out;
    const ControlReply r = controlCall(tlsClient, "var.read", R"({"names":["version"]})");
    ASSERT_TRUE(r.ok) << r.message;
    EXPECT_EQ(parse(r.json)["values"]["version"]["value"].GetInt64(), 2);
}

// Each bad fleet.toml: a coded error naming file, line, column and key; nothing built, nothing sent.
TEST(DeployLive, ABadFleetTomlGivesCodedErrorsAndSendsNothing) {
    auto boxes = startBoxes(1);
    TempDir project, fleetDir;
    writeProject(project, 2, "");
    const std::string ep = endpointOf(boxes[0]->dir);
    const std::string runtime = "[[runtime]]\nname = \"a\"\nendpoint = \"" + ep + "\"\n";
    struct Case {
        std::string text, expected;
    };
    const Case cases[] = {
        {"[deploy]\nsetle_s = 3\n" + runtime, "fleet.toml:2:1: error[F0002]: deploy.setle_s: unknown key"},
        {"[deploy]\non_failure = \"retry\"\n" + runtime,
         "fleet.toml:2:1: error[F0002]: deploy.on_failure: unknown value"},
        {runtime + "[[runtime]]\nname = \"a\"\nendpoint = \"unix:///tmp/other.sock\"\n",
         "fleet.toml:5:1: error[F0003]: runtime[1].name: \"a\" names another"},
        {"[[runtime]]\nname = \"a\"\nendpoint = \"http://10.0.0.1\"\n",
         "fleet.toml:3:1: error[F0003]: runtime[0].endpoint: \"http://10.0.0.1\" is not an endpoint"},
        {"[deploy]\nwaves = [[\"a\"], [\"b\"]]\n" + runtime,
         "error[F0004]: deploy.waves[1][0]: no [[runtime]] is named \"b\""},
        {"[deploy]\ncanary = 2\n" + runtime, "fleet.toml:2:1: error[F0004]: deploy.canary: 2 canary boxes"},
        {runtime + "ca = \"ca.pem\"\n", "fleet.toml:4:1: error[F0003]: runtime[0].ca: only a tls:// endpoint"},
        {runtime + "token_file = \"missing.token\"\n", "fleet.toml:4:1: error[F0005]: runtime[0].token_file:"},
        {"[deploy\n" + runtime, "fleet.toml:1:8: error[F0001]"},
        {"[deploy]\nsettle_s = 5\n", "error[F0003]: runtime: a fleet needs at least one [[runtime]]"},
    };
    for (const Case& c : cases) {
        fleetDir.write("fleet.toml", c.text);
        const Deploy d = deploy((fleetDir.path() / "fleet.toml").string(), project);
        EXPECT_EQ(d.run.exitCode, kExitInvalidProject) << c.text << d.run.err;
        EXPECT_NE(d.run.err.find(c.expected), std::string::npos) << c.text << "\n--- stderr:\n" << d.run.err;
        EXPECT_NE(d.run.err.find("nothing was built or sent"), std::string::npos) << d.run.err;
        EXPECT_TRUE(d.run.out.empty()) << d.run.out;
    }
    EXPECT_FALSE(std::filesystem::exists(project.path() / "program.stbc"));
    EXPECT_EQ(status(*boxes[0])["reloads"].GetInt64(), 0);
    EXPECT_EQ(version(*boxes[0]), 1);
}

} // namespace
} // namespace takt::agent::live
