// `takt bench io-latency --period 1ms --duration 10s [--samples N] [--via loopback|modbus]
// [--every N] [--out FILE.json] [--svg FILE.svg]` (TARGETS.md "Timing"): how long a value the
// scan writes takes to come back as an input over a wiring output -> field -> input.
//
// The scan loop runs the bench program (a small counter, or --project's) with the real drivers
// of the chosen wiring; a probe between the loop and the drivers (a ProcessIo around the
// DriverSet) writes a sequence number into %QW0 at the end of a cycle, every --every cycles once
// the previous one came back, and watches %IW0 at the start of each cycle. A sample is the
// number of cycles from the writing cycle to the first cycle that reads the number, and the
// time from handing the outputs to the drivers to the end of that cycle's input read.
//   loopback: the loopback driver (%QB k -> %IB k the next cycle): the floor, 1 cycle.
//   modbus:   the modbus-tcp client writes %QW0 to holding register 0 of takt's own
//             modbus-server driver on 127.0.0.1 and reads it back into %IW0; both drivers run
//             in this process on their own threads, so the path is scan -> client thread ->
//             TCP -> server thread -> TCP -> client thread -> scan.
#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <netinet/in.h>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

#include "bench_report.h"
#include "commands.h"
#include "takt/engine/scan_loop.h"
#include "takt/io/driver_set.h"
#include "takt/io/io_config.h"

namespace takt::cli {
namespace {

namespace fs = std::filesystem;

struct IoLatencyOptions {
    std::string period = "1ms";
    std::string duration = "10s";
    std::uint64_t samples = 0; // 0: as many as --duration gives
    std::string via = "loopback";
    std::uint32_t every = 10;
    int port = 0;   // modbus: the server's port (0: a free one)
    int pollMs = 1; // modbus: the client's poll interval
    std::string project;
    std::string out;
    std::string svg;
    BenchRealtime realtime;
};

struct Sample {
    std::uint32_t cycles = 0;
    std::int64_t ns = 0;
};

// Between the scan loop and the drivers. Scan thread only, except `count()`; no allocation: the
// samples go into storage reserved up front.
class LatencyProbe final : public engine::ProcessIo {
public:
    LatencyProbe(engine::ProcessIo& inner, std::uint32_t every, std::size_t capacity, std::int64_t lossNs)
        : inner_(inner), every_(std::max<std::uint32_t>(1, every)), lossNs_(lossNs), capacity_(capacity) {
        samples_.reserve(capacity);
    }

    std::size_t inputBytes() const noexcept override { return std::max<std::size_t>(2, inner_.inputBytes()); }
    std::size_t outputBytes() const noexcept override { return std::max<std::size_t>(2, inner_.outputBytes()); }
    std::size_t memoryBytes() const noexcept override { return inner_.memoryBytes(); }

    void readInputs(const engine::ProcessImageView& image) noexcept override {
        inner_.readInputs(image);
        const std::int64_t now = engine::monotonicNs();
        ++cycle_;
        if (!pending_) {
            return;
        }
        std::uint16_t seen = 0;
        std::memcpy(&seen, image.inputs.data(), 2);
        if (seen == seq_) {
            samples_.push_back({static_cast<std::uint32_t>(cycle_ - sentCycle_), now - sentNs_}); // reserved
            histogram_.record(now - sentNs_);
            count_.store(samples_.size(), std::memory_order_release);
            pending_ = false;
            lastDone_ = cycle_;
        } else if (now - sentNs_ > lossNs_) {
            lost_.fetch_add(1, std::memory_order_relaxed);
            pending_ = false;
            lastDone_ = cycle_;
        }
    }

    void writeOutputs(const engine::ProcessImageView& image) noexcept override {
        if (!pending_ && cycle_ - lastDone_ >= every_ && samples_.size() < capacity_) {
            seq_ = static_cast<std::uint16_t>(seq_ % 0x7FFF + 1); // never 0: the safe and start value
            pending_ = true;
            sentCycle_ = cycle_;
        }
        std::memcpy(image.outputs.data(), &seq_, 2);
        if (pending_ && sentCycle_ == cycle_) {
            sentNs_ = engine::monotonicNs();
        }
        inner_.writeOutputs(image);
    }

    void applySafeState() noexcept override { inner_.applySafeState(); }
    void releaseSafeState() noexcept override { inner_.releaseSafeState(); }
    engine::IoHealthSummary healthSummary() const noexcept override { return inner_.healthSummary(); }

    // Any thread.
    [[nodiscard]] std::size_t count() const noexcept { return count_.load(std::memory_order_acquire); }
    [[nodiscard]] std::uint64_t lost() const noexcept { return lost_.load(std::memory_order_relaxed); }
    // After the loop stopped.
    [[nodiscard]] const std::vector<Sample>& samples() const { return samples_; }
    [[nodiscard]] const engine::LatencyHistogram& histogram() const { return histogram_; }

private:
    engine::ProcessIo& inner_;
    std::uint32_t every_;
    std::int64_t lossNs_;
    std::size_t capacity_;
    std::uint64_t cycle_ = 0, sentCycle_ = 0, lastDone_ = 0;
    std::int64_t sentNs_ = 0;
    std::uint16_t seq_ = 0;
    bool pending_ = false;
    std::vector<Sample> samples_;
    engine::LatencyHistogram histogram_;
    std::atomic<std::size_t> count_{0};
    std::atomic<std::uint64_t> lost_{0};
};

// A loopback TCP port nobody listens on right now.
int freeLoopbackPort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 0;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
        port = ntohs(a.sin_port);
    }
    if (fd >= 0) {
        ::close(fd);
    }
    return port;
}

std::string wiringToml(const IoLatencyOptions& o, int port) {
    if (o.via == "loopback") {
        return "[io]\ndriver = \"loopback\"\n[io.params]\nbytes = 2\n";
    }
    // The server exposes only holding register 0 (as %MW0) and coil 0 (as %MX2.0), so it owns
    // no %Q byte; the client owns %QW0 and %IW0.
    return fmt::format(
        "[[io.drivers]]\nname = \"modbus-server\"\n[io.drivers.params]\nlisten = \"127.0.0.1:{0}\"\n"
        "map = [{{ table = \"holding_registers\", start = 0, count = 1, address = \"%MW0\" }},\n"
        "       {{ table = \"coils\", start = 0, count = 1, address = \"%MX2.0\" }}]\n\n"
        "[[io.drivers]]\nname = \"modbus-tcp\"\n[io.drivers.params]\naddress = \"127.0.0.1:{0}\"\n"
        "poll_ms = {1}\ntimeout_ms = 500\non_error = \"warn\"\nreconnect_ms = 20\nreconnect_max_ms = 200\n"
        "inputs = [{{ area = \"holding_registers\", start = 0, count = 1, address = \"%IW0\" }}]\n"
        "outputs = [{{ area = \"holding_registers\", start = 0, count = 1, address = \"%QW0\" }}]\n",
        port, o.pollMs);
}

// The value below which `fraction` of the sorted values lie (nearest rank).
template <typename T> T percentile(const std::vector<T>& sorted, double fraction) {
    if (sorted.empty()) {
        return T{};
    }
    const auto rank = static_cast<std::size_t>(std::ceil(fraction * double(sorted.size())));
    return sorted[std::min(sorted.size(), std::max<std::size_t>(1, rank)) - 1];
}

template <typename T> void writeStats(JsonWriter& w, std::vector<T> values, const char* suffix, double scale) {
    std::sort(values.begin(), values.end());
    double sum = 0;
    for (const T v : values) {
        sum += double(v);
    }
    const auto put = [&](const char* name, double v) {
        w.Key(fmt::format("{}{}", name, suffix).c_str());
        w.Double(std::round(v / scale * 1000.0) / 1000.0);
    };
    w.StartObject();
    w.Key("count");
    w.Uint64(values.size());
    put("min", values.empty() ? 0.0 : double(values.front()));
    put("p50", double(percentile(values, 0.50)));
    put("p99", double(percentile(values, 0.99)));
    put("max", values.empty() ? 0.0 : double(values.back()));
    put("mean", values.empty() ? 0.0 : sum / double(values.size()));
    w.EndObject();
}

int runIoLatency(const IoLatencyOptions& o) {
    const std::optional<BenchTiming> timing = parseBenchTiming("takt bench io-latency", o.period, o.duration, 1);
    if (!timing) {
        return kExitInvalidProject;
    }
    const std::int64_t periodNs = timing->periodNs;
    const std::int64_t durationNs = timing->durationNs;
    if (o.via != "loopback" && o.via != "modbus") {
        std::fprintf(stderr, "takt bench io-latency: --via '%s': expected loopback or modbus\n", o.via.c_str());
        return kExitInvalidProject;
    }
    if (o.every == 0 || o.port < 0 || o.port > 65535 || o.pollMs < 0) {
        std::fprintf(stderr, "takt bench io-latency: --every must be >= 1, --port 0..65535, --poll-ms >= 0\n");
        return kExitInvalidProject;
    }
    RunnableProgram program;
    int exitCode = kExitOk;
    const std::unique_ptr<LiveRuntime> live = loadBenchRuntime(o.project, "takt bench io-latency", program, exitCode);
    if (live == nullptr) {
        return exitCode;
    }
    std::string error;

    const int port = o.via == "modbus" ? (o.port != 0 ? o.port : freeLoopbackPort()) : 0;
    const io::IoConfigResult parsed = io::parseIoConfig(wiringToml(o, port), "io-latency wiring", false);
    if (!parsed.config || !live->configureDrivers(*parsed.config, 2, error) || !live->startDrivers(error)) {
        std::fprintf(stderr, "takt bench io-latency: %s\n",
                     parsed.config ? error.c_str() : "internal wiring config rejected");
        return kExitInternal;
    }
    io::DriverSet& drivers = live->drivers();
    // Connected before the first sample, so no sample holds the connection set-up.
    const std::int64_t connectBy = engine::monotonicNs() + 5'000'000'000;
    for (;;) {
        const std::vector<io::DriverHealthReport> health = drivers.refreshHealth();
        const bool ok = std::all_of(health.begin(), health.end(),
                                    [](const io::DriverHealthReport& h) { return h.status.health == io::Health::Ok; });
        if (ok) {
            break;
        }
        if (engine::monotonicNs() > connectBy) {
            live->stop();
            const auto bad = std::find_if(health.begin(), health.end(), [](const io::DriverHealthReport& h) {
                return h.status.health != io::Health::Ok;
            });
            std::fprintf(stderr, "takt bench io-latency: the wiring did not come up: %s: %s\n", bad->name.c_str(),
                         bad->status.reason.c_str());
            return kExitInternal;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // Enough room for every toggle --duration allows (bounded), or exactly --samples.
    const std::uint64_t fit = static_cast<std::uint64_t>(durationNs / periodNs) / o.every + 1;
    const std::size_t capacity =
        static_cast<std::size_t>(o.samples != 0 ? o.samples : std::min<std::uint64_t>(fit, 10'000'000));
    LatencyProbe probe(drivers, o.every, capacity, std::max<std::int64_t>(2'000'000'000, 1000 * periodNs));

    if (!startBenchLoop(*live, benchScanOptions(periodNs, o.realtime), "takt bench io-latency", &probe)) {
        return kExitInternal;
    }
    engine::ScanLoop& loop = live->loop();
    const std::int64_t started = engine::monotonicNs();
    while (engine::monotonicNs() - started < durationNs && probe.count() < capacity) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::int64_t ran = engine::monotonicNs() - started;
    live->stop();
    const engine::ScanSnapshot snap = loop.snapshot();

    std::vector<std::uint32_t> cycles;
    std::vector<std::int64_t> nanos;
    for (const Sample& s : probe.samples()) {
        cycles.push_back(s.cycles);
        nanos.push_back(s.ns);
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("version");
    w.Int(1);
    w.Key("benchmark");
    w.String("io-latency");
    w.Key("via");
    w.String(o.via.c_str());
    w.Key("wiring");
    w.String(o.via == "loopback" ? "%QW0 -> loopback driver -> %IW0"
                                 : fmt::format("%QW0 -> modbus-tcp -> 127.0.0.1:{} modbus-server holding register 0 "
                                               "-> modbus-tcp -> %IW0 (poll_ms {})",
                                               port, o.pollMs)
                                       .c_str());
    w.Key("period_ns");
    w.Int64(periodNs);
    w.Key("every_cycles");
    w.Uint(o.every);
    w.Key("duration_ns");
    w.Int64(ran);
    w.Key("program");
    w.String(program.origin.c_str());
    w.Key("cycles");
    w.Uint64(snap.cycles);
    w.Key("overruns");
    w.Uint64(snap.overruns);
    w.Key("samples");
    w.Uint64(cycles.size());
    w.Key("lost");
    w.Uint64(probe.lost());
    w.Key("latency_cycles");
    writeStats(w, cycles, "", 1.0);
    w.Key("latency_us");
    writeStats(w, nanos, "_us", 1000.0);
    w.Key("histogram");
    writeHistogramJson(w, probe.histogram());
    w.EndObject();

    const fs::path json = o.out.empty() ? fs::path(fmt::format("io-latency-{}.json", o.via)) : fs::path(o.out);
    fs::path svg = o.svg;
    if (svg.empty()) {
        svg = json;
        svg.replace_extension(".svg");
    }
    std::string doc(buf.GetString(), buf.GetSize());
    doc += "\n";
    const std::string svgDoc =
        histogramSvg(fmt::format("takt io-latency via {}, period {}, {} samples", o.via, o.period, cycles.size()),
                     {{&probe.histogram(), "output write to input observed"}});
    if (const std::string e = writeReportFiles(json, doc, svg, svgDoc); !e.empty()) {
        std::fprintf(stderr, "takt bench io-latency: %s\n", e.c_str());
        return kExitInternal;
    }
    std::sort(cycles.begin(), cycles.end());
    std::sort(nanos.begin(), nanos.end());
    std::printf("via %s, period %s, %zu samples, %llu lost, %llu cycles, %llu overruns\n", o.via.c_str(),
                o.period.c_str(), cycles.size(), static_cast<unsigned long long>(probe.lost()),
                static_cast<unsigned long long>(snap.cycles), static_cast<unsigned long long>(snap.overruns));
    if (!cycles.empty()) {
        std::printf("cycles: p50 %u p99 %u max %u\n", percentile(cycles, 0.5), percentile(cycles, 0.99), cycles.back());
        std::printf("time:   p50 %s p99 %s max %s\n", formatNs(percentile(nanos, 0.5)).c_str(),
                    formatNs(percentile(nanos, 0.99)).c_str(), formatNs(nanos.back()).c_str());
    }
    std::printf("wrote %s and %s\n", json.c_str(), svg.c_str());
    return cycles.empty() ? kExitInternal : kExitOk;
}

} // namespace

void registerBenchIoLatency(CLI::App& bench, int& exitCode) {
    auto o = std::make_shared<IoLatencyOptions>();
    CLI::App* cmd =
        bench.add_subcommand("io-latency", "Cycles and time from an output write to the input that sees it");
    cmd->add_option("--period", o->period, "Cycle period (1ms, 10ms)");
    cmd->add_option("--duration", o->duration, "Longest run (10s); ends earlier once --samples are taken");
    cmd->add_option("--samples", o->samples, "Stop after this many samples");
    cmd->add_option("--via", o->via, "Wiring: loopback (driver) or modbus (modbus-tcp client and server on 127.0.0.1)");
    cmd->add_option("--every", o->every, "Cycles between a sample's return and the next write (default 10)");
    cmd->add_option("--port", o->port, "modbus: server port (default: a free loopback port)");
    cmd->add_option("--poll-ms", o->pollMs, "modbus: client poll interval (default 1)");
    cmd->add_option("--project", o->project, "Run this project's program (default: a small counter)");
    cmd->add_option("--out", o->out, "JSON file (default io-latency-<via>.json)");
    cmd->add_option("--svg", o->svg, "SVG histogram (default: the JSON path with .svg)");
    addRealtimeOptions(*cmd, o->realtime);
    cmd->callback([o, &exitCode] { exitCode = runIoLatency(*o); });
}

} // namespace takt::cli
