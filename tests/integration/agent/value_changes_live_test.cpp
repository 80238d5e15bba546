// Value subscriptions through the real `takt run` and its control endpoint (docs/control.md
// "Value subscriptions"): var.subscribe sends only what changed, at most every interval_ms, with
// the deadband holding back small moves; var.unsubscribe ends it; bad params name the param; a
// client that stops reading neither delays the scan nor another client, and when it reads again
// the notification says how many were skipped.
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/control_live_support.h"
#include "support/json.h"

namespace takt::agent::live {
namespace {

using Clock = std::chrono::steady_clock;

// `cnt` changes every cycle, `slow` every 20th, `still` never; `wave` climbs 0.1 a cycle;
// `big` is 400 DINTs that all change every cycle.
constexpr const char* kProgram = R"(PROGRAM Main
VAR
    cnt : UDINT;
    slow : DINT;
    still : INT := 5;
    wave : REAL;
    big : ARRAY[1..400] OF DINT;
    i : INT;
END_VAR
cnt := cnt + 1;
IF cnt MOD 20 = 0 THEN
    slow := slow + 1;
END_IF;
wave := UDINT_TO_REAL(cnt MOD 100000) / 10.0;
FOR i := 1 TO 400 DO
    big[i] := UDINT_TO_DINT(cnt) + i;
END_FOR;
END_PROGRAM
)";

struct Project {
    TempDir dir;
    std::string endpoint;
    explicit Project(int cycleMs = 10) {
        endpoint = "unix://" + (dir.path() / "ctl.sock").string();
        dir.write("runtime.toml",
                  fmt::format("[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\ncycle_interval_ms = {}\n\n"
                              "[runtime.control]\nendpoint = \"{}\"\n",
                              cycleMs, endpoint));
        dir.write("io.toml", "[io]\ndriver = \"loopback\"\n");
        dir.write("src/main.st", kProgram);
    }
};

struct Changed {
    std::int64_t subscription = -1;
    std::int64_t cycle = -1;
    std::int64_t skipped = -1;
    rapidjson::Document values;
    Clock::time_point at;
};

// The next var.changed notification (other lines are skipped); false after `timeoutMs`.
bool nextChanged(ControlClient& c, Changed& out, int timeoutMs = 3000) {
    const auto end = Clock::now() + std::chrono::milliseconds(timeoutMs);
    std::string line;
    while (Clock::now() < end) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
        if (!c.readLine(line, static_cast<int>(std::max<std::int64_t>(left, 1)))) {
            return false;
        }
        rapidjson::Document d = parse(line);
        if (!d.IsObject() || !d.HasMember("method") || std::string_view(d["method"].GetString()) != "var.changed") {
            continue;
        }
        const rapidjson::Value& p = d["params"];
        out.subscription = p["subscription"].GetInt64();
        out.cycle = p["cycle"].GetInt64();
        out.skipped = p["skipped"].GetInt64();
        out.values.CopyFrom(p["values"], out.values.GetAllocator());
        out.at = Clock::now();
        return true;
    }
    return false;
}

std::string text(const rapidjson::Value& v) {
    return test::toJson(v);
}

class ValueChangesLive : public ::testing::Test {
protected:
    void SetUp() override {
        rt_ = std::make_unique<Runtime>(project_.dir.path());
        ASSERT_TRUE(waitServing(*rt_, clientOptions(project_.endpoint))) << rt_->log();
    }
    std::unique_ptr<ControlClient> client() { return connected(clientOptions(project_.endpoint)); }

    Project project_;
    std::unique_ptr<Runtime> rt_;
};

TEST_F(ValueChangesLive, FirstAllValuesThenOnlyChangesAtMostEveryInterval) {
    auto c = client();
    const rapidjson::Document sub =
        result(*c, "var.subscribe", R"({"names":["cnt","still","slow"],"interval_ms":200})");
    ASSERT_TRUE(sub.HasMember("subscription"));
    const std::int64_t id = sub["subscription"].GetInt64();
    EXPECT_EQ(sub["interval_ms"].GetInt(), 200);

    Changed first;
    ASSERT_TRUE(nextChanged(*c, first));
    EXPECT_EQ(first.subscription, id);
    EXPECT_EQ(first.skipped, 0);
    ASSERT_TRUE(first.values.HasMember("cnt") && first.values.HasMember("still") && first.values.HasMember("slow"));
    // Typed as var.read types them.
    auto reader = client();
    const rapidjson::Document read = result(*reader, "var.read", R"({"names":["still"]})");
    EXPECT_EQ(text(first.values["still"]), text(read["values"]["still"]));
    EXPECT_EQ(std::string(first.values["cnt"]["type"].GetString()), "UDINT");

    Changed prev;
    prev.cycle = first.cycle;
    prev.at = first.at;
    int withSlow = 0;
    for (int n = 0; n < 6; ++n) {
        Changed next;
        ASSERT_TRUE(nextChanged(*c, next));
        EXPECT_TRUE(next.values.HasMember("cnt"));
        EXPECT_FALSE(next.values.HasMember("still")) << "an unchanged value was sent again";
        withSlow += next.values.HasMember("slow") ? 1 : 0;
        // 200 ms apart at 10 ms a cycle: about 20 cycles, never a burst.
        EXPECT_GE(next.cycle - prev.cycle, 12) << "notifications closer than interval_ms";
        EXPECT_GE(std::chrono::duration_cast<std::chrono::milliseconds>(next.at - prev.at).count(), 120);
        prev.cycle = next.cycle;
        prev.at = next.at;
    }
    EXPECT_GE(withSlow, 3); // `slow` changes every 20 cycles: in most rounds, as it changed

    const rapidjson::Document un = result(*c, "var.unsubscribe", fmt::format(R"({{"subscription":{}}})", id));
    EXPECT_TRUE(un["unsubscribed"].GetBool());
    Changed after;
    EXPECT_FALSE(nextChanged(*c, after, 700)) << "a notification after var.unsubscribe";
    // Unsubscribed: a second unsubscribe names the param.
    const ControlReply again = c->call("var.unsubscribe", fmt::format(R"({{"subscription":{}}})", id));
    EXPECT_EQ(again.code, -32602);
    EXPECT_NE(again.json.find(R"("param":"subscription")"), std::string::npos) << again.json;
}

TEST_F(ValueChangesLive, TheDeadbandHoldsBackSmallMoves) {
    auto fine = client();
    auto coarse = client();
    (void)result(*fine, "var.subscribe", R"({"names":["wave"],"interval_ms":10})");
    (void)result(*coarse, "var.subscribe", R"({"names":["wave"],"interval_ms":10,"deadband":2.5})");
    const auto collect = [](ControlClient& c, std::vector<double>& out) {
        Changed ch;
        for (int n = 0; n < 12 && nextChanged(c, ch); ++n) {
            out.push_back(ch.values["wave"]["value"].GetDouble());
        }
    };
    std::vector<double> a, b;
    collect(*fine, a);
    collect(*coarse, b);
    ASSERT_GE(a.size(), 10u);
    ASSERT_GE(b.size(), 5u);
    double smallestFine = 1e9;
    for (std::size_t i = 1; i < a.size(); ++i) {
        smallestFine = std::min(smallestFine, std::fabs(a[i] - a[i - 1]));
    }
    EXPECT_LT(smallestFine, 2.5) << "without a deadband small moves are sent";
    for (std::size_t i = 1; i < b.size(); ++i) {
        EXPECT_GT(std::fabs(b[i] - b[i - 1]), 2.5) << "a move within the deadband was sent";
    }
}

TEST_F(ValueChangesLive, APatternSubscribesWhatVarListLists) {
    auto c = client();
    const rapidjson::Document sub = result(*c, "var.subscribe", R"({"pattern":"Main.s*","format":"iec"})");
    ASSERT_TRUE(sub.HasMember("names"));
    std::vector<std::string> names;
    for (const auto& n : sub["names"].GetArray()) {
        names.emplace_back(n.GetString());
    }
    EXPECT_EQ(names, (std::vector<std::string>{"Main.slow", "Main.still"}));
    EXPECT_EQ(sub["interval_ms"].GetInt(), 100); // the default
    Changed first;
    ASSERT_TRUE(nextChanged(*c, first));
    EXPECT_EQ(text(first.values["Main.still"]), R"("5")"); // IEC literal text, as var.read with format iec
}

TEST_F(ValueChangesLive, BadParamsNameTheParamAndTakeNothing) {
    auto c = client();
    const auto expectParam = [&](std::string_view params, std::string_view param, std::string_view mentions = {}) {
        const ControlReply r = c->call("var.subscribe", params);
        EXPECT_TRUE(r.reached && !r.ok) << params;
        EXPECT_EQ(r.code, -32602) << params << " " << r.json;
        EXPECT_NE(r.json.find(fmt::format(R"("param":"{}")", param)), std::string::npos) << params << " " << r.json;
        if (!mentions.empty()) {
            EXPECT_NE(r.message.find(mentions), std::string::npos) << r.message;
        }
    };
    expectParam(R"({"names":["cnt","nosuch"]})", "names[1]", "nosuch");
    expectParam(R"({"names":["cnt"],"pattern":"c*"})", "pattern");
    expectParam(R"({})", "names");
    expectParam(R"({"names":["cnt"],"interval_ms":5})", "interval_ms");
    expectParam(R"({"names":["cnt"],"deadband":-1})", "deadband");
    expectParam(R"({"pattern":"zzz*"})", "pattern", "zzz*");
    expectParam(R"({"names":[]})", "names");
    // Nothing was subscribed: no notification comes.
    Changed none;
    EXPECT_FALSE(nextChanged(*c, none, 500));
}

// A raw Unix-socket client that subscribes to 400 values every cycle and then does not read.
class SilentClient {
public:
    explicit SilentClient(const std::string& endpoint) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const int small = 4096;
        (void)::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        const std::string path = endpoint.substr(std::string("unix://").size());
        std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    }
    ~SilentClient() { ::close(fd_); }
    SilentClient(const SilentClient&) = delete;
    SilentClient& operator=(const SilentClient&) = delete;

    bool send(const std::string& line) {
        return ::write(fd_, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    }
    // Reads lines for up to `ms`; stops early once `until` holds for a line.
    template <class Pred> bool readUntil(int ms, Pred until) {
        const auto end = Clock::now() + std::chrono::milliseconds(ms);
        char buf[65536];
        while (Clock::now() < end) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) {
                continue;
            }
            const ssize_t n = ::read(fd_, buf, sizeof buf);
            if (n <= 0) {
                return false;
            }
            pending_.append(buf, static_cast<std::size_t>(n));
            for (std::size_t nl; (nl = pending_.find('\n')) != std::string::npos;) {
                const std::string line = pending_.substr(0, nl);
                pending_.erase(0, nl + 1);
                if (until(line)) {
                    return true;
                }
            }
        }
        return false;
    }
    [[nodiscard]] bool connected() const { return connected_; }

private:
    int fd_ = -1;
    bool connected_ = false;
    std::string pending_;
};

TEST_F(ValueChangesLive, AClientThatStopsReadingDelaysNeitherTheScanNorAnotherClient) {
    SilentClient silent(project_.endpoint);
    ASSERT_TRUE(silent.connected());
    ASSERT_TRUE(silent.send(
        R"({"jsonrpc":"2.0","id":1,"method":"var.subscribe","params":{"pattern":"Main.big*","interval_ms":10}})"
        "\n"));
    auto stats = client();
    const rapidjson::Document before = result(*stats, "runtime.stats", "");
    auto other = client();
    (void)result(*other, "var.subscribe", R"({"names":["cnt"],"interval_ms":50})");
    // 3 s while the silent client's notifications (about 20 KB every 10 ms) pile up against a
    // socket it does not read: the other client hears from its subscription all along.
    const auto start = Clock::now();
    Changed ch;
    ASSERT_TRUE(nextChanged(*other, ch));
    std::int64_t lastCycle = ch.cycle;
    Clock::time_point lastAt = ch.at;
    std::int64_t worstGapMs = 0;
    int notes = 0;
    while (Clock::now() - start < std::chrono::seconds(3)) {
        ASSERT_TRUE(nextChanged(*other, ch)) << "the other client stopped hearing";
        worstGapMs = std::max<std::int64_t>(
            worstGapMs, std::chrono::duration_cast<std::chrono::milliseconds>(ch.at - lastAt).count());
        EXPECT_GT(ch.cycle, lastCycle);
        lastCycle = ch.cycle;
        lastAt = ch.at;
        ++notes;
    }
    EXPECT_GE(notes, 30); // 50 ms apart over 3 s: 60, with room for a loaded machine
    EXPECT_LT(worstGapMs, 1000);
    // The scan kept its pace: about 300 cycles in 3 s, its execution time unchanged by the backlog.
    const rapidjson::Document after = result(*stats, "runtime.stats", "");
    const std::int64_t cycles = after["cycles"].GetInt64() - before["cycles"].GetInt64();
    EXPECT_GE(cycles, 240) << "the scan slowed down";
    EXPECT_LT(after["exec"]["p99_us"].GetDouble(), 5000.0);
    // Reading again, the silent client gets what was written to its socket, then notifications
    // that merged the rounds it missed (latest values, with how many were skipped).
    std::int64_t skipped = 0;
    EXPECT_TRUE(silent.readUntil(10000, [&](const std::string& line) {
        const rapidjson::Document d = parse(line);
        if (d.IsObject() && d.HasMember("params") && d["params"].IsObject() && d["params"].HasMember("skipped")) {
            skipped = d["params"]["skipped"].GetInt64();
        }
        return skipped > 0;
    })) << "no notification with skipped > 0";
    EXPECT_GT(skipped, 0);
    EXPECT_FALSE(rt_->waitForExit(std::chrono::milliseconds(0)));
}

} // namespace
} // namespace takt::agent::live
