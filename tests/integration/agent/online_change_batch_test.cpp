// Online change on a batch program written the CODESYS way (tests/integration/agent/batch/): a
// CASE state machine on an ENUM (Idle, Fill, Heat, Drain), one TON per step and an FB with
// methods holding the recipe, run by a real `takt run`. `takt reload` in the middle of every state
// adds a value to the ENUM; the state, the step timer's progress, the recipe and the heater output
// survive each change. Then the preview (`--dry-run`), the refusal of a change that loses state
// without a terminal, the question on a terminal, and `--yes`.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/paths.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "takt/agent/control_client.h"

namespace takt::agent {
namespace {

using Clock = std::chrono::steady_clock;

std::string readSource(const std::string& name) {
    std::ifstream in(std::filesystem::path(test::kSourceDir) / "tests/integration/agent/batch" / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The batch program with the state ENUM's values as given (the body names the four steps only).
std::string batchSource(const std::string& enumValues, const std::string& extraVars = "") {
    std::string text = readSource("batch.st");
    const auto replace = [&](const std::string& from, const std::string& to) {
        const std::size_t at = text.find(from);
        if (at != std::string::npos) {
            text.replace(at, from.size(), to);
        }
    };
    replace("(Idle, Fill, Heat, Drain)", "(" + enumValues + ")");
    replace("(* EXTRA VARS *)", extraVars);
    return text;
}

class Batch {
public:
    Batch() {
        socket_ = (dir_.path() / "p/takt.sock").string();
        dir_.write("p/runtime.toml", "[resource]\nname = \"batch\"\ncycle_interval_ms = 5\n[runtime.control]\n"
                                     "endpoint = \"unix://" +
                                         socket_ + "\"\n");
        dir_.write("p/io.toml", "[io]\ndriver = \"loopback\"\n");
        write(batchSource("Idle, Fill, Heat, Drain"));
        client_.endpoint = "unix://" + socket_;
    }
    void write(const std::string& source) { dir_.write("p/src/batch.st", source); }
    [[nodiscard]] std::string project() const { return (dir_.path() / "p").string(); }

    bool start() {
        const test::RunResult built = test::runTaktMerged("build --project " + test::shellQuote(project()));
        if (built.exitCode != 0) {
            ADD_FAILURE() << built.out;
            return false;
        }
        run_ = std::make_unique<test::Process>(test::taktArgv({"run", "--project", project(), "--for", "120s"}),
                                               test::ProcessOptions{.log = dir_.path() / "run.log"});
        return run_->started() && !run_->waitForLine({"control endpoint"}).empty();
    }
    [[nodiscard]] std::string log() const { return run_ ? run_->log() : ""; }
    int stop() { return run_->terminate(); }

    rapidjson::Document call(const std::string& method, const std::string& params) {
        const ControlReply r = controlCall(client_, method, params);
        rapidjson::Document d;
        if (!r.ok) {
            ADD_FAILURE() << method << ": " << r.message;
            d.SetObject();
            return d;
        }
        d.Parse(r.json.c_str());
        return d;
    }
    // One variable as its IEC literal ("BatchState#Heat", "TRUE").
    std::string iec(const std::string& name) {
        const rapidjson::Document d = call("var.read", R"({"format":"iec","names":[")" + name + R"("]})");
        return d.IsObject() && d.HasMember("values") ? d["values"][name.c_str()].GetString() : "";
    }
    std::int64_t nanos(const std::string& name) {
        const rapidjson::Document d = call("var.read", R"({"names":[")" + name + R"("]})");
        return d.IsObject() && d.HasMember("values") ? d["values"][name.c_str()]["nanos"].GetInt64() : -1;
    }
    std::string hash() { return call("runtime.status", "{}")["program_hash"].GetString(); }

    // Waits (bounded) until Main.state holds `state`.
    bool waitForState(const std::string& state) {
        const auto deadline = Clock::now() + std::chrono::seconds(30);
        while (Clock::now() < deadline) {
            if (iec("Main.state") == "BatchState#" + state) {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }

    // `takt reload ARGS --project P` with stdin from /dev/null (no terminal).
    test::RunResult reload(const std::string& args) {
        return test::runTakt("reload " + args + " --project " + test::shellQuote(project()) + " < /dev/null");
    }

private:
    test::TempDir dir_;
    std::string socket_;
    ControlClientOptions client_;
    std::unique_ptr<test::Process> run_;
};

TEST(OnlineChangeBatch, ReloadInEveryStateKeepsStateTimersRecipeAndHeater) {
    Batch b;
    ASSERT_TRUE(b.start()) << b.log();
    // The operator's recipe, written once: it must survive every change.
    b.call("var.write", R"({"name":"Main.recipe.name","value":"'Batch 7'"})");
    b.call("var.write", R"({"name":"Main.recipe.setpoint","value":{"type":"INT","value":85}})");
    std::string values = "Idle, Fill, Heat, Drain";
    const char* added[] = {"Clean", "Hold", "Cool", "Check"};
    const char* steps[] = {"Idle", "Fill", "Heat", "Drain"};
    for (int i = 0; i < 4; ++i) {
        const std::string step = steps[i];
        ASSERT_TRUE(b.waitForState(step)) << step << "\n" << b.log();
        std::this_thread::sleep_for(std::chrono::milliseconds(300)); // into the step
        const std::string timer = "Main.t" + step + ".ET";
        const std::int64_t before = b.nanos(timer);
        ASSERT_GE(before, 200'000'000) << step;
        const std::string oldHash = b.hash();
        // The ENUM gains a value before the step (its numbers all change from there on).
        values.insert(values.find(step), std::string(added[i]) + ", ");
        b.write(batchSource(values));
        const auto t0 = Clock::now();
        const test::RunResult r = b.reload("");
        const auto took = Clock::now() - t0;
        ASSERT_EQ(r.exitCode, 0) << step << ": " << r.out << r.err;
        EXPECT_NE(r.out.find("Main.state"), std::string::npos) << r.out;
        EXPECT_NE(b.hash(), oldHash);
        // Still in the step (the step lasts 4 s; the change took `took`), its timer ran on.
        ASSERT_LT(took, std::chrono::milliseconds(3000)) << "the reload was too slow for this test's steps";
        EXPECT_EQ(b.iec("Main.state"), "BatchState#" + step) << values << "\n" << r.out;
        const std::int64_t after = b.nanos(timer);
        EXPECT_GE(after, before) << step << ": the step's TON was reset";
        EXPECT_EQ(b.iec("Main.recipe.name"), "'Batch 7'");
        EXPECT_EQ(b.iec("Main.recipe.setpoint"), "85");
        EXPECT_EQ(b.iec("Main.heater"), step == "Heat" ? "TRUE" : "FALSE") << step;
    }
    // The log names what the change did.
    EXPECT_NE(b.log().find("online change: "), std::string::npos) << b.log();
    EXPECT_NE(b.log().find("1 converted"), std::string::npos) << b.log();
    EXPECT_EQ(b.stop(), 0) << b.log();
}

TEST(OnlineChangeBatch, DryRunChangesNothingAndALossyChangeWantsYes) {
    Batch b;
    ASSERT_TRUE(b.start()) << b.log();
    // Four builds and five calls follow inside the Heat step: its 4 s are too short for them on a
    // loaded machine, and the test is about what a reload keeps, not about the step's time.
    b.call("var.write", R"({"name":"Main.recipe.heatTime","value":"T#100s"})");
    ASSERT_TRUE(b.waitForState("Heat")) << b.log();
    const std::string hash = b.hash();

    // The preview of the ENUM gaining a value while in Heat: nothing changes.
    b.write(batchSource("Idle, Fill, Hold, Heat, Drain"));
    const test::RunResult preview = b.reload("--dry-run");
    ASSERT_EQ(preview.exitCode, 0) << preview.out << preview.err;
    std::printf("[ preview ]\n%s", preview.out.c_str());
    EXPECT_NE(preview.out.find("Online change preview (nothing applied)"), std::string::npos) << preview.out;
    EXPECT_NE(preview.out.find("converted       Main.state"), std::string::npos) << preview.out;
    EXPECT_NE(preview.out.find("BatchState(Idle, Fill, Heat, Drain) -> BatchState(Idle, Fill, Hold, Heat, Drain)"),
              std::string::npos)
        << preview.out;
    EXPECT_EQ(b.hash(), hash);
    EXPECT_EQ(b.iec("Main.state"), "BatchState#Heat");
    const test::RunResult json = b.reload("--dry-run --json");
    ASSERT_EQ(json.exitCode, 0) << json.err;
    rapidjson::Document d;
    d.Parse(json.out.c_str());
    ASSERT_TRUE(d.IsObject()) << json.out;
    EXPECT_TRUE(d["dry_run"].GetBool());
    EXPECT_FALSE(d["loses_state"].GetBool());
    EXPECT_EQ(d["converted"].GetInt(), 1);
    EXPECT_EQ(d["reinitialised"].GetInt(), 0);
    EXPECT_EQ(b.hash(), hash);

    // A change that loses state (a counter narrowed, the recipe's setpoint gone): refused
    // without a terminal, with the report and the way out.
    std::string lossy = batchSource("Idle, Fill, Hold, Heat, Drain");
    lossy.replace(lossy.find("batches : UDINT;"), 16, "batches : SINT;");
    lossy.replace(lossy.find("setpoint : INT;"), 15, "");
    b.write(lossy);
    const test::RunResult refused = b.reload("");
    EXPECT_EQ(refused.exitCode, 14) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("Pass --yes"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("re-initialised  Main.batches"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("dropped         Main.recipe.setpoint"), std::string::npos) << refused.err;
    EXPECT_EQ(b.hash(), hash);

    // On a terminal it asks; "n" applies nothing.
    const test::RunResult asked = test::runShell(
        "printf 'n\\n' | script -qec " +
        test::shellQuote(test::shellQuote(TAKT_BINARY) + " reload --project " + test::shellQuote(b.project())) +
        " /dev/null");
    EXPECT_NE(asked.out.find("Apply this online change?"), std::string::npos) << asked.out << asked.err;
    EXPECT_NE(asked.out.find("not applied"), std::string::npos) << asked.out << asked.err;
    EXPECT_EQ(b.hash(), hash);

    // --yes applies it; the state is kept, the narrowed counter re-initialised.
    const test::RunResult applied = b.reload("--yes");
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    EXPECT_NE(applied.out.find("Online change applied at cycle"), std::string::npos) << applied.out;
    EXPECT_NE(applied.out.find("re-initialised  Main.batches"), std::string::npos) << applied.out;
    EXPECT_NE(b.hash(), hash);
    EXPECT_EQ(b.iec("Main.state"), "BatchState#Heat");
    EXPECT_EQ(b.iec("Main.heater"), "TRUE");
    EXPECT_NE(b.log().find("re-initialised: Main.batches"), std::string::npos) << b.log();
    EXPECT_EQ(b.stop(), 0) << b.log();
}

} // namespace
} // namespace takt::agent
