// Online change of an SFC chart through the real `takt run` and `takt reload` (docs/language-notes.md
// "SFC", docs/runtime-control.md "What an online change keeps"): the new version adds a step and
// renames another. The active step stays active with its time running on, an action stored in a
// step already left stays stored, the chart goes on stepping in the new version, and the step whose
// name vanished is reported dropped in the preview and in the applied change's result.
#include <chrono>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/control_live_support.h"
#include "support/paths.h"

namespace takt::agent::live {
namespace {

// v1: Idle -> Prime (stores lamp) -> Fill -> Heat. v2: Heat is now Warm, and Check comes between
// Fill and Warm.
constexpr const char* kV1 = R"(PROGRAM Main
VAR go : BOOL; next : BOOL; lamp : BOOL; version : INT; END_VAR
    INITIAL_STEP Idle:
        lamp(R);
    END_STEP
    STEP Prime:
        lamp(S);
    END_STEP
    STEP Fill:
    END_STEP
    STEP Heat:
    END_STEP
    TRANSITION FROM Idle TO Prime := go; END_TRANSITION
    TRANSITION FROM Prime TO Fill := TRUE; END_TRANSITION
    TRANSITION FROM Fill TO Heat := next; END_TRANSITION
    TRANSITION FROM Heat TO Idle := NOT go; END_TRANSITION
    version := 1;
END_PROGRAM
)";

constexpr const char* kV2 = R"(PROGRAM Main
VAR go : BOOL; next : BOOL; lamp : BOOL; version : INT; END_VAR
    INITIAL_STEP Idle:
        lamp(R);
    END_STEP
    STEP Prime:
        lamp(S);
    END_STEP
    STEP Fill:
    END_STEP
    STEP Check:
    END_STEP
    STEP Warm:
    END_STEP
    TRANSITION FROM Idle TO Prime := go; END_TRANSITION
    TRANSITION FROM Prime TO Fill := TRUE; END_TRANSITION
    TRANSITION FROM Fill TO Check := next; END_TRANSITION
    TRANSITION FROM Check TO Warm := TRUE; END_TRANSITION
    TRANSITION FROM Warm TO Idle := NOT go; END_TRANSITION
    version := 2;
END_PROGRAM
)";

// v1 with its initial step renamed: Idle is now Rest.
constexpr const char* kV3 = R"(PROGRAM Main
VAR go : BOOL; next : BOOL; lamp : BOOL; version : INT; END_VAR
    INITIAL_STEP Rest:
        lamp(R);
    END_STEP
    STEP Prime:
        lamp(S);
    END_STEP
    STEP Fill:
    END_STEP
    STEP Heat:
    END_STEP
    TRANSITION FROM Rest TO Prime := go; END_TRANSITION
    TRANSITION FROM Prime TO Fill := TRUE; END_TRANSITION
    TRANSITION FROM Fill TO Heat := next; END_TRANSITION
    TRANSITION FROM Heat TO Rest := NOT go; END_TRANSITION
    version := 3;
END_PROGRAM
)";

void writeProject(const TempDir& dir, const char* program, const std::string& control) {
    dir.write(
        "runtime.toml",
        fmt::format("[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\ncycle_interval_ms = 10\n\n{}", control));
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("src/main.st", program);
}

// Reads variables until `done` holds for the answer, at most 5 s.
template <typename Done> rapidjson::Document readUntil(ControlClient& c, const std::string& names, Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    rapidjson::Document d;
    do {
        d = result(c, "var.read", R"({"names":[)" + names + "]}");
        if (d.IsObject() && d.HasMember("values") && done(d["values"])) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } while (std::chrono::steady_clock::now() < deadline);
    return d;
}

// The outcome the change's report gives `path` ("" when it is not listed).
std::string outcomeOf(const rapidjson::Value& report, const std::string& path) {
    for (const rapidjson::Value& v : report["variables"].GetArray()) {
        if (path == v["path"].GetString()) {
            return v["outcome"].GetString();
        }
    }
    return {};
}

TEST(SfcReloadLive, TheActiveStepStaysActiveAndAVanishedStepIsReported) {
    TempDir project, v2;
    const std::string endpoint = "unix://" + (project.path() / "ctl.sock").string();
    writeProject(project, kV1, fmt::format("[runtime.control]\nendpoint = \"{}\"\n", endpoint));
    writeProject(v2, kV2, "");
    Runtime rt(project.path());
    const ControlClientOptions options = clientOptions(endpoint);
    ASSERT_TRUE(waitServing(rt, options)) << rt.log();
    auto c = connected(options);

    ASSERT_TRUE(c->call("var.write", R"({"name":"go","value":{"type":"BOOL","value":true}})").ok);
    const std::string names = R"("Idle.X","Prime.X","Fill.X","Fill.T","lamp","version")";
    rapidjson::Document before = readUntil(*c, names, [](const rapidjson::Value& v) {
        return v["Fill.X"]["value"].GetBool() && v["Fill.T"]["nanos"].GetInt64() >= 50'000'000;
    });
    ASSERT_TRUE(before["values"]["Fill.X"]["value"].GetBool()) << rt.log();
    ASSERT_TRUE(before["values"]["lamp"]["value"].GetBool()) << "stored by Prime, which was left";
    const std::int64_t fillT = before["values"]["Fill.T"]["nanos"].GetInt64();

    const std::string log = (v2.path() / "reload.log").string();
    const auto reload = [&](const char* flags) {
        return shell(fmt::format("{} reload {} --json --endpoint {} --project {} > {} 2> {}.err", TAKT_BINARY, flags,
                                 endpoint, v2.path().string(), log, log));
    };
    ASSERT_EQ(reload("--dry-run"), 0) << readText(log + ".err");
    const rapidjson::Document preview = parse(readText(log));
    ASSERT_TRUE(preview.IsObject() && preview.HasMember("variables")) << readText(log);
    EXPECT_EQ(outcomeOf(preview, "Main.Heat"), "dropped") << readText(log);
    EXPECT_EQ(outcomeOf(preview, "Main.Warm"), "added");
    EXPECT_EQ(outcomeOf(preview, "Main.Check"), "added");
    EXPECT_EQ(outcomeOf(preview, "Main.Fill"), "kept");
    EXPECT_TRUE(preview["loses_state"].GetBool());

    ASSERT_EQ(reload("--yes"), 0) << readText(log + ".err");
    const rapidjson::Document applied = parse(readText(log));
    ASSERT_TRUE(applied.IsObject() && applied.HasMember("variables")) << readText(log);
    EXPECT_FALSE(applied["dry_run"].GetBool());
    EXPECT_EQ(outcomeOf(applied, "Main.Heat"), "dropped");

    const rapidjson::Document after =
        readUntil(*c, names, [](const rapidjson::Value& v) { return v["version"]["value"].GetInt() == 2; });
    const rapidjson::Value& a = after["values"];
    ASSERT_EQ(a["version"]["value"].GetInt(), 2) << rt.log();
    EXPECT_TRUE(a["Fill.X"]["value"].GetBool()) << "the active step stays active";
    EXPECT_FALSE(a["Idle.X"]["value"].GetBool()) << "the initial step is not re-entered";
    EXPECT_FALSE(a["Prime.X"]["value"].GetBool());
    EXPECT_GE(a["Fill.T"]["nanos"].GetInt64(), fillT) << "the step's time runs on, it does not restart";
    EXPECT_TRUE(a["lamp"]["value"].GetBool()) << "the stored action's flag survives the change";

    // The chart goes on in the new version: Fill -> Check -> Warm.
    ASSERT_TRUE(c->call("var.write", R"({"name":"next","value":{"type":"BOOL","value":true}})").ok);
    const rapidjson::Document warm = readUntil(
        *c, R"("Fill.X","Check.X","Warm.X")", [](const rapidjson::Value& v) { return v["Warm.X"]["value"].GetBool(); });
    EXPECT_TRUE(warm["values"]["Warm.X"]["value"].GetBool());
    EXPECT_FALSE(warm["values"]["Fill.X"]["value"].GetBool());
    EXPECT_FALSE(warm["values"]["Check.X"]["value"].GetBool());

    // Back to v1 while Warm, which v1 does not have, is the only active step: the chart starts
    // again at its initial step instead of standing without one, and runs on to Fill.
    ASSERT_TRUE(c->call("var.write", R"({"name":"next","value":{"type":"BOOL","value":false}})").ok);
    writeProject(v2, kV1, "");
    ASSERT_EQ(reload("--yes"), 0) << readText(log + ".err");
    EXPECT_EQ(outcomeOf(parse(readText(log)), "Main.Warm"), "dropped") << readText(log);
    const rapidjson::Document restarted = readUntil(*c, R"("version","Fill.X","lamp")", [](const rapidjson::Value& v) {
        return v["version"]["value"].GetInt() == 1 && v["Fill.X"]["value"].GetBool();
    });
    EXPECT_EQ(restarted["values"]["version"]["value"].GetInt(), 1) << rt.log();
    EXPECT_TRUE(restarted["values"]["Fill.X"]["value"].GetBool()) << "the chart started again at its initial step";
    EXPECT_TRUE(restarted["values"]["lamp"]["value"].GetBool());

    // The initial step renamed while Fill is active: Rest comes in inactive, Fill stays the one
    // active step (the new initial step used to come in active beside it, and with `go` FALSE it
    // stayed active).
    ASSERT_TRUE(c->call("var.write", R"({"name":"go","value":{"type":"BOOL","value":false}})").ok);
    writeProject(v2, kV3, "");
    ASSERT_EQ(reload("--yes"), 0) << readText(log + ".err");
    EXPECT_EQ(outcomeOf(parse(readText(log)), "Main.Rest"), "added") << readText(log);
    const rapidjson::Document renamed =
        readUntil(*c, R"("version","Rest.X","Prime.X","Fill.X","Heat.X")",
                  [](const rapidjson::Value& v) { return v["version"]["value"].GetInt() == 3; });
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // ten cycles of the new version
    const rapidjson::Document settled =
        result(*c, "var.read", R"({"names":["version","Rest.X","Prime.X","Fill.X","Heat.X"]})");
    const rapidjson::Value& r = settled["values"];
    ASSERT_EQ(renamed["values"]["version"]["value"].GetInt(), 3) << rt.log();
    ASSERT_TRUE(r.IsObject());
    EXPECT_TRUE(r["Fill.X"]["value"].GetBool());
    EXPECT_FALSE(r["Rest.X"]["value"].GetBool()) << "a second active step";
    EXPECT_FALSE(r["Prime.X"]["value"].GetBool());
    EXPECT_FALSE(r["Heat.X"]["value"].GetBool());
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

} // namespace
} // namespace takt::agent::live
