// Online change and invalid reloads through the real `takt run` and its control endpoint
// (PROTOCOLS.md "Control endpoint", ARCHITECTURE.md "Online change"): a 10 ms program whose
// RETAIN counter counts every cycle and whose two outputs, looped back to two inputs, show a torn
// or skipped cycle, reloaded 200 times while four other clients poll.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "takt/native/native.h"

#include "support/control_live_support.h"
#include "support/paths.h"
#include "takt/agent/control.h"

namespace takt::agent::live {
namespace {

// `cnt` counts cycles. The loopback driver turns %QD0/%QD4 of one cycle into %ID0/%ID4 of the
// next: `torn` counts cycles whose pair is inconsistent, `skew` cycles whose input is not the
// previous cycle's counter (a lost or doubled cycle across a swap). `version` and `extra` tell
// the two program versions apart.
std::string program(int version) {
    return fmt::format(R"(PROGRAM Main
VAR RETAIN
    cnt : UDINT;
END_VAR
VAR
    a AT %QD0 : DWORD;
    b AT %QD4 : DWORD;
    ia AT %ID0 : DWORD;
    ib AT %ID4 : DWORD;
    torn : UDINT;
    skew : UDINT;
    version : INT;
    extra : DINT;
END_VAR
cnt := cnt + 1;
IF ia <> 0 OR ib <> 0 THEN
    IF ib <> (ia XOR 16#A5A5A5A5) THEN
        torn := torn + 1;
    END_IF;
    IF DWORD_TO_UDINT(ia) + 1 <> cnt THEN
        skew := skew + 1;
    END_IF;
END_IF;
a := UDINT_TO_DWORD(cnt);
b := UDINT_TO_DWORD(cnt) XOR 16#A5A5A5A5;
version := {0};
extra := UDINT_TO_DINT(cnt) * {1};
END_PROGRAM
)",
                       version, version + 1);
}

std::string runtimeToml(int cycleMs, const std::string& control) {
    return fmt::format("[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\ncycle_interval_ms = {}\n\n{}", cycleMs,
                       control);
}

// `execution`: the [runtime] execution key, when not empty.
void writeProject(const TempDir& dir, int version, const std::string& control, const std::string& execution = "") {
    dir.write("runtime.toml",
              runtimeToml(10, control) + (execution.empty() ? "" : "\n[runtime]\nexecution = \"" + execution + "\"\n"));
    dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
    dir.write("src/main.st", program(version));
}

std::string unixEndpoint(const TempDir& dir) {
    return "unix://" + (dir.path() / "ctl.sock").string();
}

std::string unixControl(const TempDir& dir) {
    return fmt::format("[runtime.control]\nendpoint = \"{}\"\n", unixEndpoint(dir));
}

// Reads cnt, version and extra; checks the counter against the cycle the values were taken at.
struct Sample {
    std::int64_t cycle = -1, cnt = -1, version = -1, extra = -1, torn = -1, skew = -1;
};
Sample sample(ControlClient& c) {
    const rapidjson::Document d = result(c, "var.read", R"({"names":["cnt","version","extra","torn","skew"]})");
    Sample s;
    if (d.IsObject() && d.HasMember("values")) {
        const auto& v = d["values"];
        s.cycle = d["cycle"].GetInt64();
        s.cnt = v["cnt"]["value"].GetInt64();
        s.version = v["version"]["value"].GetInt64();
        s.extra = v["extra"]["value"].GetInt64();
        s.torn = v["torn"]["value"].GetInt64();
        s.skew = v["skew"]["value"].GetInt64();
    }
    return s;
}

// 200 online changes under four polling clients; `execution` as the [runtime] key.
void twoHundredReloadsUnderPolling(const std::string& execution) {
    TempDir project, v1, v2;
    writeProject(project, 1, unixControl(project), execution);
    writeProject(v1, 1, "");
    writeProject(v2, 2, "");
    const std::vector<std::uint8_t> bytes[2] = {build(v1.path()), build(v2.path())};
    ASSERT_FALSE(bytes[0].empty());
    ASSERT_FALSE(bytes[1].empty());
    const std::string params[2] = {bytecodeReloadParams(bytes[0]), bytecodeReloadParams(bytes[1])};

    Runtime rt(project.path());
    const ControlClientOptions options = clientOptions(unixEndpoint(project));
    ASSERT_TRUE(waitServing(rt, options)) << rt.log();

    // Four clients poll status and the counter as fast as the rate limit lets them.
    std::atomic<int> polls{0}, pollErrors{0}, rateLimited{0}, counterMismatch{0};
    std::mutex errorMutex;
    std::string firstError;
    // Stopped and joined when the test returns, also through a failed ASSERT (a joinable
    // std::thread destroyed would abort the whole test binary).
    std::vector<std::jthread> pollers;
    for (int i = 0; i < 4; ++i) {
        pollers.emplace_back([&](const std::stop_token& done) {
            ControlClient c(options);
            if (!c.connect().ok) {
                ++pollErrors;
                return;
            }
            while (!done.stop_requested()) {
                for (const char* method : {"runtime.status", "var.read"}) {
                    const ControlReply r =
                        c.call(method, std::strcmp(method, "var.read") == 0 ? R"({"names":["cnt"]})" : "");
                    if (r.ok) {
                        ++polls;
                        if (std::strcmp(method, "var.read") == 0) {
                            const rapidjson::Document d = parse(r.json);
                            if (d["values"]["cnt"]["value"].GetInt64() != d["cycle"].GetInt64()) {
                                ++counterMismatch;
                            }
                        }
                    } else if (r.reached && r.code == kRateLimited) {
                        ++rateLimited;
                        std::this_thread::sleep_for(std::chrono::milliseconds(20));
                    } else {
                        ++pollErrors;
                        const std::lock_guard lock(errorMutex);
                        if (firstError.empty()) {
                            firstError = fmt::format("{} {}: {} {}", method, r.code, r.message, r.json);
                        }
                    }
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        });
    }

    auto c = connected(options);
    const std::string hash0 = result(*c, "runtime.status", "")["program_hash"].GetString();
    // A few cycles first, so the looped-back outputs are checked across the first swap too.
    std::int64_t lastCycle = 0;
    for (int i = 0; i < 500 && lastCycle < 5; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        lastCycle = result(*c, "runtime.status", "")["cycles"].GetInt64();
    }
    std::vector<double> pauses;
    std::vector<double> compileMs;
    std::vector<std::int64_t> pousCompiled;
    constexpr int kReloads = 200;
    for (int i = 0; i < kReloads; ++i) {
        const int version = i % 2 == 0 ? 2 : 1;
        const ControlReply r = c->call("bytecode.reload", params[version - 1]);
        ASSERT_TRUE(r.ok) << "reload " << i << ": " << r.code << " " << r.message << " " << r.json << rt.exitNote();
        const rapidjson::Document d = parse(r.json);
        pauses.push_back(d["swap_pause_us"].GetDouble());
        compileMs.push_back(d["native_compile_ms"].GetDouble());
        pousCompiled.push_back(d["native_pous_compiled"].GetInt64());
        if (execution == "native") {
            EXPECT_GT(d["native_pous_compiled"].GetInt64() + d["native_pous_reused"].GetInt64(), 0) << r.json;
        }
        EXPECT_EQ(std::string(d["execution"].GetString()), execution.empty() ? "interpreter" : execution) << r.json;
        const std::int64_t cycle = d["cycle"].GetInt64();
        EXPECT_GE(cycle, lastCycle) << "reload " << i << ": " << r.json; // cycles never go back
        lastCycle = cycle;
        EXPECT_EQ(d["dropped"].GetInt64(), 0) << r.json;
        EXPECT_EQ(d["initialised"].GetInt64(), 0) << r.json;
        const Sample s = sample(*c);
        EXPECT_EQ(s.cnt, s.cycle) << "reload " << i << ": the counter lost or doubled a cycle";
        EXPECT_GE(s.cycle, cycle);
        EXPECT_EQ(s.version, version) << "reload " << i;
        EXPECT_EQ(s.extra, s.cnt * (version + 1)) << "reload " << i;
        EXPECT_EQ(result(*c, "runtime.status", "")["program_hash"].GetString(), std::string(d["new_hash"].GetString()));
    }
    pollers.clear();
    const Sample end = sample(*c);
    EXPECT_EQ(end.cnt, end.cycle);
    EXPECT_EQ(end.torn, 0) << "outputs torn across a swap";
    EXPECT_EQ(end.skew, 0) << "an input was not the previous cycle's counter";
    EXPECT_EQ(end.version, 1);
    EXPECT_EQ(result(*c, "runtime.status", "")["program_hash"].GetString(), hash0) << "v1 again after 200 reloads";
    EXPECT_EQ(pollErrors.load(), 0) << firstError;
    EXPECT_EQ(counterMismatch.load(), 0);
    EXPECT_GT(polls.load(), 0);

    const rapidjson::Document stats = result(*c, "runtime.stats", "");
    const std::int64_t overruns = stats["overruns"].GetInt64();
    const std::int64_t missed = stats["missed_releases"].GetInt64();
    const auto& late = stats["lateness"];
    std::printf("[ figures ] %s: %d reloads over %lld cycles, %d polls (%d rate-limited): swap pause p50 %.1f us, "
                "p99 %.1f us, max %.1f us; native compile p50 %.2f ms, max %.2f ms; overruns %lld, missed releases "
                "%lld; lateness %s\n",
                execution.empty() ? "interpreter" : execution.c_str(), kReloads, static_cast<long long>(end.cycle),
                polls.load(), rateLimited.load(), percentile(pauses, 0.5), percentile(pauses, 0.99),
                percentile(pauses, 1.0), percentile(compileMs, 0.5), percentile(compileMs, 1.0),
                static_cast<long long>(overruns), static_cast<long long>(missed),
                std::string(late.IsObject() && late.HasMember("p99_us")
                                ? fmt::format("p99 {} us", late["p99_us"].GetDouble())
                                : "n/a")
                    .c_str());
    ::testing::Test::RecordProperty("swap_pause_p99_us", std::to_string(percentile(pauses, 0.99)));
    ::testing::Test::RecordProperty("missed_releases", std::to_string(missed));
    if (execution == "native") {
        EXPECT_GT(percentile(compileMs, 0.5), 0.0) << "every reload compiles the new program";
        // Both programs' code is kept (the running one's and the one it replaced), so from the
        // third reload on every POU's code is reused. (The first two may find the start-up
        // compile in the background still running, its code not kept yet.)
        for (std::size_t i = 2; i < pousCompiled.size(); ++i) {
            ASSERT_EQ(pousCompiled[i], 0) << "reload " << i << " generated code for a program compiled before";
        }
    } else {
        EXPECT_EQ(*std::max_element(pousCompiled.begin(), pousCompiled.end()), 0);
    }
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

TEST(ControlLive, TwoHundredReloadsUnderPollingKeepEveryCycle) {
    twoHundredReloadsUnderPolling("");
}

// The same on the native tier: each new program is compiled on the control thread before the
// swap, so the swap itself costs what it costs on the interpreter (ctest -L native).
TEST(ControlLive, NativeTierTwoHundredReloadsUnderPollingKeepEveryCycle) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    twoHundredReloadsUnderPolling("native");
}

// Reloads that must be refused: the reply's code, the hash unchanged, the counter running on, and
// a reload_rejected event for a subscriber.
TEST(ControlLive, InvalidReloadsChangeNothing) {
    TempDir project, v2;
    writeProject(project, 1, unixControl(project));
    writeProject(v2, 2, "");
    const std::vector<std::uint8_t> good = build(v2.path());
    ASSERT_FALSE(good.empty());

    Runtime rt(project.path());
    const ControlClientOptions options = clientOptions(unixEndpoint(project));
    ASSERT_TRUE(waitServing(rt, options)) << rt.log();
    auto c = connected(options);
    auto events = connected(options);
    ASSERT_TRUE(events->call("events.subscribe", R"({"types":["reload_rejected","reload_applied"]})").ok);
    const std::string hash = result(*c, "runtime.status", "")["program_hash"].GetString();

    std::vector<std::uint8_t> badCrc = good;
    badCrc[badCrc.size() - 3] ^= 0x40;
    std::vector<std::uint8_t> future = good;
    const std::uint32_t version = 0x7fff;
    std::memcpy(future.data() + 4, &version, 4);
    const std::vector<std::uint8_t> truncated(good.begin(),
                                              good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
    const std::vector<std::uint8_t> header(good.begin(), good.begin() + 20);
    struct Case {
        const char* name;
        std::string params;
        int code;
        const char* says; // in the message
    };
    const std::vector<Case> cases = {
        {"bad CRC", bytecodeReloadParams(badCrc), -32002, "CRC"},
        {"future format version", bytecodeReloadParams(future), -32002, "version"},
        {"truncated", bytecodeReloadParams(truncated), -32002, "program.stbc"},
        {"header only", bytecodeReloadParams(header), -32002, "program.stbc"},
        {"garbage base64", R"({"bytes":"!!!not base64!!!"})", -32602, "base64"},
        {"bytes missing", R"({})", -32602, "bytes"},
        {"bytes not a string", R"({"bytes":42})", -32602, "bytes"},
    };
    int rejectedEvents = 0;
    for (const Case& k : cases) {
        const Sample before = sample(*c);
        const ControlReply r = c->call("bytecode.reload", k.params);
        ASSERT_TRUE(r.reached) << k.name;
        EXPECT_FALSE(r.ok) << k.name << ": " << r.json;
        EXPECT_EQ(r.code, k.code) << k.name << ": " << r.message;
        EXPECT_NE(r.message.find(k.says), std::string::npos) << k.name << ": " << r.message;
        EXPECT_EQ(result(*c, "runtime.status", "")["program_hash"].GetString(), hash) << k.name;
        // Still the old program, still counting.
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        const Sample after = sample(*c);
        EXPECT_EQ(after.version, 1) << k.name;
        EXPECT_GT(after.cnt, before.cnt) << k.name;
        EXPECT_EQ(after.cnt, after.cycle) << k.name;
        if (k.code == -32002) {
            std::string line;
            ASSERT_TRUE(events->readLine(line, 5000)) << k.name << ": no reload_rejected event";
            const rapidjson::Document e = parse(line);
            EXPECT_STREQ(e["method"].GetString(), "event");
            EXPECT_STREQ(e["params"]["type"].GetString(), "reload_rejected") << line;
            EXPECT_EQ(e["params"]["program_hash"].GetString(), hash);
            ++rejectedEvents;
        }
    }
    EXPECT_EQ(rejectedEvents, 4);
    // A compile error: `takt reload --project` refuses to send anything.
    TempDir broken;
    writeProject(broken, 2, "");
    broken.write("src/main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := y + 1;\nEND_PROGRAM\n");
    const std::string reloadCmd =
        std::string(TAKT_BINARY) + " reload --endpoint " + unixEndpoint(project) + " --project ";
    const Sample beforeBroken = sample(*c);
    EXPECT_NE(shell(reloadCmd + broken.path().string() + " > " + (broken.path() / "reload.log").string() + " 2>&1"), 0);
    const std::string brokenLog = readText(broken.path() / "reload.log");
    EXPECT_NE(brokenLog.find("main.st:3"), std::string::npos) << brokenLog;
    EXPECT_NE(brokenLog.find("nothing was sent"), std::string::npos) << brokenLog;
    EXPECT_EQ(result(*c, "runtime.status", "")["program_hash"].GetString(), hash);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_GT(sample(*c).cnt, beforeBroken.cnt);
    // The good program still goes in afterwards, and the subscriber hears of it.
    const ControlReply ok = c->call("bytecode.reload", bytecodeReloadParams(good));
    ASSERT_TRUE(ok.ok) << ok.message;
    std::string line;
    ASSERT_TRUE(events->readLine(line, 5000));
    EXPECT_EQ(parse(line)["params"]["type"].GetString(), std::string("reload_applied")) << line;
    EXPECT_STREQ(parse(line)["params"]["program_hash"].GetString(),
                 result(*c, "runtime.status", "")["program_hash"].GetString());
    EXPECT_STRNE(parse(line)["params"]["program_hash"].GetString(), hash.c_str());
    EXPECT_EQ(sample(*c).version, 2);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// `takt reload`, then `takt rollback` against the real `takt run`: the program the change replaced
// comes back as an online change of its own, the RETAIN counter going on through both.
TEST(ControlLive, TaktRollbackBringsBackTheProgramTheLastChangeReplaced) {
    TempDir project, v2;
    writeProject(project, 1, unixControl(project));
    writeProject(v2, 2, "");
    Runtime rt(project.path());
    const ControlClientOptions options = clientOptions(unixEndpoint(project));
    ASSERT_TRUE(waitServing(rt, options)) << rt.log();
    auto c = connected(options);
    const std::string v1Hash = result(*c, "runtime.status", "")["program_hash"].GetString();
    const std::string takt = std::string(TAKT_BINARY) + " ";
    const std::string endpoint = " --endpoint " + unixEndpoint(project);
    const std::string log = (v2.path() / "cli.log").string();

    EXPECT_NE(shell(takt + "rollback --yes" + endpoint + " > " + log + " 2>&1"), 0);
    EXPECT_NE(readText(log).find("no program to roll back to"), std::string::npos) << readText(log);
    ASSERT_EQ(shell(takt + "reload --yes" + endpoint + " --project " + v2.path().string() + " > " + log + " 2>&1"), 0)
        << readText(log);
    EXPECT_EQ(sample(*c).version, 2);
    const std::string v2Hash = result(*c, "runtime.status", "")["program_hash"].GetString();

    ASSERT_EQ(shell(takt + "rollback --dry-run --json" + endpoint + " > " + log + " 2>&1"), 0) << readText(log);
    const rapidjson::Document preview = parse(readText(log));
    ASSERT_TRUE(preview.IsObject()) << readText(log);
    EXPECT_TRUE(preview["dry_run"].GetBool());
    EXPECT_EQ(std::string(preview["new_hash"].GetString()), v1Hash);
    EXPECT_EQ(result(*c, "runtime.status", "")["program_hash"].GetString(), v2Hash);

    ASSERT_EQ(shell(takt + "rollback --yes" + endpoint + " > " + log + " 2>&1"), 0) << readText(log);
    EXPECT_EQ(result(*c, "runtime.status", "")["program_hash"].GetString(), v1Hash);
    const Sample after = sample(*c);
    EXPECT_EQ(after.version, 1);
    EXPECT_EQ(after.cnt, after.cycle) << "a cycle was lost or doubled across the two changes";
    EXPECT_EQ(after.skew, 0);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
}

// `takt bench jitter --load agent`: both phases ran, the clients were answered, and the JSON says
// so (the timing itself goes into bench/notes/control.md, not here).
TEST(ControlLive, BenchJitterUnderAgentLoadReportsBothPhases) {
    TempDir dir;
    const fs::path json = dir.path() / "jitter.json";
    const std::string bench = std::string(TAKT_BINARY) + " bench jitter --period 10ms --duration 1s --load agent";
    ASSERT_EQ(shell(bench + " --output " + json.string() + " > " + (dir.path() / "out.log").string() + " 2>&1"), 0)
        << readText(dir.path() / "out.log");
    const rapidjson::Document d = parse(readText(json));
    ASSERT_TRUE(d.IsObject() && d.HasMember("load")) << readText(json);
    const auto& load = d["load"];
    EXPECT_GT(load["requests"].GetUint64(), 0U);
    EXPECT_EQ(load["errors"].GetUint64(), 0U);
    EXPECT_GT(load["unloaded"]["cycles"].GetUint64(), 0U);
    EXPECT_GT(load["loaded"]["cycles"].GetUint64(), 0U);
    // The phases cover the run except the moments the endpoint starts and stops.
    EXPECT_LE(load["unloaded"]["cycles"].GetUint64() + load["loaded"]["cycles"].GetUint64(), d["cycles"].GetUint64());
    EXPECT_NE(readText(dir.path() / "out.log").find("p99 loaded / unloaded"), std::string::npos);

    EXPECT_NE(shell(std::string(TAKT_BINARY) + " bench jitter --duration 10ms --load cpu > " +
                    (dir.path() / "bad.log").string() + " 2>&1"),
              0);
    EXPECT_NE(readText(dir.path() / "bad.log").find("--load"), std::string::npos) << readText(dir.path() / "bad.log");
}

// runtime.status's `execution` once it is `want` (the background compile's switch), bounded.
bool executionBecomes(ControlClient& c, const std::string& want, std::string& last) {
    for (int i = 0; i < 600; ++i) {
        last = result(c, "runtime.status", "")["execution"].GetString();
        if (last == want) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

// [runtime] execution = "native" with the default native_start = "background": the program
// starts on the interpreter and switches to its code at a cycle boundary; every online change's
// program is compiled before its swap, so it runs native from its first cycle. runtime.status
// says so, and neither the switch nor the reloads lose or double a cycle.
TEST(NativeTierLive, ReloadsStayNativeAndKeepEveryCycle) {
    TempDir project, v1, v2;
    const std::string native = "[runtime]\nexecution = \"native\"\n\n";
    writeProject(project, 1, native + unixControl(project));
    writeProject(v1, 1, "");
    writeProject(v2, 2, "");
    const std::vector<std::uint8_t> bytes[2] = {build(v1.path()), build(v2.path())};
    ASSERT_FALSE(bytes[0].empty());
    ASSERT_FALSE(bytes[1].empty());
    Runtime rt(project.path());
    const ControlClientOptions options = clientOptions(unixEndpoint(project));
    ASSERT_TRUE(waitServing(rt, options)) << rt.log();
    auto c = connected(options);
    std::string execution;
    EXPECT_TRUE(executionBecomes(*c, "native", execution)) << execution << "\n" << rt.log();
    for (int i = 0; i < 20; ++i) {
        const int version = i % 2 == 0 ? 2 : 1;
        const ControlReply r = c->call("bytecode.reload", bytecodeReloadParams(bytes[version - 1]));
        ASSERT_TRUE(r.ok) << "reload " << i << ": " << r.code << " " << r.message << " " << r.json;
        EXPECT_EQ(std::string(result(*c, "runtime.status", "")["execution"].GetString()), "native") << "reload " << i;
        const Sample s = sample(*c);
        EXPECT_EQ(s.cnt, s.cycle) << "reload " << i << ": the counter lost or doubled a cycle";
        EXPECT_EQ(s.version, version) << "reload " << i;
        EXPECT_EQ(s.extra, s.cnt * (version + 1)) << "reload " << i;
    }
    const Sample end = sample(*c);
    EXPECT_EQ(end.torn, 0);
    EXPECT_EQ(end.skew, 0);
    EXPECT_EQ(rt.stop(), 0) << rt.log();
    EXPECT_NE(rt.log().find("execution: native (compiled in"), std::string::npos) << rt.log();
}

} // namespace
} // namespace takt::agent::live
