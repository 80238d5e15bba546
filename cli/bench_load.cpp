// `takt bench jitter --load agent`: the live runtime's control endpoint (the same ControlServer
// and RuntimeControl as `takt run`) under four clients at 200 requests/s each, in alternating
// phases, with the start lateness of each phase taken from differences of the loop's histogram.
#include "bench_load.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "takt/agent/control_client.h"

namespace takt::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kClients = 4;
constexpr auto kRequestInterval = std::chrono::milliseconds(5); // 200 requests/s per client
constexpr int kPhases = 4;                                      // unloaded, loaded, unloaded, loaded

using Counts = std::map<std::int64_t, std::pair<std::int64_t, std::uint64_t>>; // low -> (high, count)

Counts snapshot(const engine::LatencyHistogram& h) {
    Counts out;
    for (const engine::HistogramBucket& b : h.buckets()) {
        out[b.low] = {b.high, b.count};
    }
    return out;
}

// Adds (after - before) to `into`.
void addDifference(const Counts& before, const Counts& after, Counts& into) {
    for (const auto& [low, hc] : after) {
        const auto it = before.find(low);
        const std::uint64_t prior = it == before.end() ? 0 : it->second.second;
        if (hc.second > prior) {
            into[low].first = hc.first;
            into[low].second += hc.second - prior;
        }
    }
}

PhaseLateness summarise(const Counts& counts) {
    PhaseLateness p;
    for (const auto& [low, hc] : counts) {
        p.cycles += hc.second;
    }
    std::uint64_t seen = 0;
    const auto rank = [&](double q) { return static_cast<std::uint64_t>(q * static_cast<double>(p.cycles)); };
    for (const auto& [low, hc] : counts) {
        seen += hc.second;
        if (p.p50Ns == 0 && seen > rank(0.5)) {
            p.p50Ns = hc.first;
        }
        if (p.p99Ns == 0 && seen > rank(0.99)) {
            p.p99Ns = hc.first;
        }
        if (p.p999Ns == 0 && seen > rank(0.999)) {
            p.p999Ns = hc.first;
        }
        p.maxNs = hc.first;
    }
    return p;
}

} // namespace

bool runAgentLoad(LiveRuntime& live, std::int64_t durationNs, bool counterProgram, AgentLoadResult& out,
                  std::string& error) {
    std::error_code ec;
    const fs::path dir = fs::temp_directory_path(ec) / fmt::format("takt-bench-ctl-{}", ::getpid());
    fs::create_directories(dir, ec);
    agent::ControlOptions options;
    options.endpoint = "unix://" + (dir / "ctl.sock").string();
    options.maxRequestsPerSecond = 1000; // the clients pace themselves at 200/s; no -32005 at the edge
    if (!live.serveControl(options, {}, error)) {
        fs::remove_all(dir, ec);
        return false;
    }

    std::atomic<bool> loaded{false}, finished{false};
    std::atomic<std::uint64_t> requests{0}, errors{0};
    std::mutex errorMutex;
    std::vector<std::thread> clients;
    for (int i = 0; i < kClients; ++i) {
        clients.emplace_back([&, i] {
            agent::ControlClient client(agent::ControlClientOptions{options.endpoint, {}, {}, {}, {}, 5000});
            if (!client.connect().ok) {
                ++errors;
                return;
            }
            auto next = std::chrono::steady_clock::now();
            for (std::uint64_t n = static_cast<std::uint64_t>(i); !finished; ++n) {
                next += kRequestInterval;
                std::this_thread::sleep_until(next);
                if (!loaded) {
                    next = std::chrono::steady_clock::now();
                    continue;
                }
                // Status and statistics come from snapshots; var.read goes through the scan
                // thread's command queue.
                const bool viaQueue = counterProgram && n % 3 == 2;
                const agent::ControlReply r = viaQueue
                                                  ? client.call("var.read", R"({"names":["n"]})")
                                                  : client.call(n % 3 == 0 ? "runtime.status" : "runtime.stats", "");
                if (r.ok) {
                    ++requests;
                } else {
                    ++errors;
                    const std::lock_guard lock(errorMutex);
                    if (out.firstError.empty()) {
                        out.firstError = fmt::format("{}: {}", r.code, r.message);
                    }
                }
            }
        });
    }

    Counts phases[2];
    Counts before = snapshot(live.loop().lateness());
    for (int phase = 0; phase < kPhases; ++phase) {
        const bool load = phase % 2 == 1;
        loaded = load;
        std::this_thread::sleep_for(std::chrono::nanoseconds(durationNs / kPhases));
        const Counts after = snapshot(live.loop().lateness());
        addDifference(before, after, phases[load ? 1 : 0]);
        before = after;
    }
    loaded = false;
    finished = true;
    for (std::thread& t : clients) {
        t.join();
    }
    live.server()->stop();
    fs::remove_all(dir, ec);
    out.unloaded = summarise(phases[0]);
    out.loaded = summarise(phases[1]);
    out.requests = requests;
    out.errors = errors;
    return true;
}

} // namespace takt::cli
