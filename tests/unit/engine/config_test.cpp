// runtime.toml loader: every CONFIG.md key, truST keys as warnings, unknown keys, wrong types
// and ranges as errors naming line, column and key path.
#include <algorithm>
#include <initializer_list>
#include <string>

#include <gtest/gtest.h>

#include "support/paths.h"
#include "takt/engine/config.h"
#include "takt/engine/scan_loop.h"

namespace takt::engine {
namespace {

using Severity = ConfigDiagnostic::Severity;

RuntimeConfigResult parse(const std::string& text) {
    return parseRuntimeConfig(text, "runtime.toml");
}

std::size_t count(const RuntimeConfigResult& r, Severity s) {
    return static_cast<std::size_t>(std::count_if(r.diagnostics.begin(), r.diagnostics.end(),
                                                  [&](const ConfigDiagnostic& d) { return d.severity == s; }));
}

const ConfigDiagnostic* find(const RuntimeConfigResult& r, const std::string& key) {
    auto it = std::find_if(r.diagnostics.begin(), r.diagnostics.end(),
                           [&](const ConfigDiagnostic& d) { return d.key == key; });
    return it == r.diagnostics.end() ? nullptr : &*it;
}

std::string dump(const RuntimeConfigResult& r) {
    std::string s;
    for (const ConfigDiagnostic& d : r.diagnostics) {
        s += formatDiagnostic(d) + "\n";
    }
    return s;
}

TEST(RuntimeConfig, ReadsEveryKeyOfTheDesign) {
    RuntimeConfigResult r = parse(R"(
[bundle]
version = 1

[resource]
name = "line1"
cycle_interval_ms = 5

[build]
overflow = "trap"
address_mode = "byte"

[runtime.control]
endpoint = "tls://0.0.0.0:9443"
auth_token = "secret"

[[runtime.control.tokens]]
role = "engineer"
token_file = "/etc/takt/eng.token"

[[runtime.control.tokens]]
role = "viewer"
token = "look"

[runtime.control.tls]
cert = "c.pem"
key = "k.pem"
client_ca = "ca.pem"

[runtime.log]
level = "debug"

[runtime.retain]
mode = "file"
path = "state/retain"
save_interval_ms = 250

[runtime.watchdog]
enabled = false
timeout_ms = 20
action = "restart"

[runtime.fault]
policy = "halt"

[runtime.realtime]
scheduler = "fifo"
priority = 70
cpu_affinity = [1, 3]
lock_memory = true
)");
    ASSERT_TRUE(r.config) << dump(r);
    EXPECT_TRUE(r.diagnostics.empty()) << dump(r);
    const RuntimeConfig& c = *r.config;
    EXPECT_EQ(c.resourceName, "line1");
    EXPECT_EQ(c.cycleIntervalMs, 5U);
    EXPECT_TRUE(c.overflowTrap);
    EXPECT_TRUE(c.byteAddressing);
    EXPECT_EQ(c.control.endpoint, "tls://0.0.0.0:9443");
    EXPECT_EQ(c.control.authToken, "secret");
    ASSERT_EQ(c.control.tokens.size(), 2U);
    EXPECT_EQ(c.control.tokens[0].role, "engineer");
    EXPECT_EQ(c.control.tokens[0].tokenFile, "/etc/takt/eng.token");
    EXPECT_EQ(c.control.tokens[1].token, "look");
    EXPECT_EQ(c.control.tlsCert, "c.pem");
    EXPECT_EQ(c.control.tlsKey, "k.pem");
    EXPECT_EQ(c.control.tlsClientCa, "ca.pem");
    EXPECT_EQ(c.log.level, "debug");
    EXPECT_TRUE(c.retain.enabled);
    EXPECT_EQ(c.retain.path, "state/retain");
    EXPECT_EQ(c.retain.saveIntervalMs, 250U);
    EXPECT_FALSE(c.watchdog.enabled);
    EXPECT_EQ(c.watchdog.timeoutMs, 20U);
    EXPECT_EQ(c.watchdog.action, FaultAction::Restart);
    EXPECT_EQ(c.fault.policy, FaultAction::Halt);
    EXPECT_TRUE(c.realtime.fifo);
    EXPECT_EQ(c.realtime.priority, 70);
    EXPECT_EQ(c.realtime.cpuAffinity, (std::vector<int>{1, 3}));
    EXPECT_TRUE(c.realtime.lockMemory);
}

TEST(RuntimeConfig, DebugOutputsHoldOrGoSafeWhileHalted) {
    EXPECT_FALSE(parse("").config->debug.safeOutputsWhileHalted);
    EXPECT_FALSE(parse("[runtime.debug]\noutputs = \"hold\"\n").config->debug.safeOutputsWhileHalted);
    RuntimeConfigResult safe = parse("[runtime.debug]\noutputs = \"safe\"\n");
    ASSERT_TRUE(safe.config) << dump(safe);
    EXPECT_TRUE(safe.config->debug.safeOutputsWhileHalted);
    EXPECT_TRUE(ScanOptions::fromConfig(*safe.config).safeOutputsWhileHalted);
    RuntimeConfigResult bad = parse("[runtime.debug]\noutputs = \"off\"\n");
    EXPECT_FALSE(bad.config);
    const ConfigDiagnostic* d = find(bad, "runtime.debug.outputs");
    ASSERT_NE(d, nullptr) << dump(bad);
    EXPECT_NE(formatDiagnostic(*d).find("runtime.toml:2:"), std::string::npos) << formatDiagnostic(*d);
}

TEST(RuntimeConfig, EmptyFileGivesTheDocumentedDefaults) {
    RuntimeConfigResult r = parse("");
    ASSERT_TRUE(r.config);
    EXPECT_EQ(r.config->cycleIntervalMs, 10U);
    EXPECT_TRUE(r.config->control.endpoint.empty());
    EXPECT_TRUE(r.config->watchdog.enabled);
    EXPECT_EQ(r.config->watchdog.action, FaultAction::SafeHalt);
    EXPECT_FALSE(r.config->retain.enabled);
}

TEST(RuntimeConfig, DemoProjectIsClean) {
    RuntimeConfigResult r = loadRuntimeConfig(std::string(TAKT_SOURCE_DIR) + "/examples/demo/runtime.toml");
    ASSERT_TRUE(r.config) << dump(r);
    EXPECT_TRUE(r.diagnostics.empty()) << dump(r);
    EXPECT_EQ(r.config->resourceName, "filling_line");
    EXPECT_TRUE(r.config->retain.enabled);
}

TEST(RuntimeConfig, UnknownKeyNamesLineColumnAndPath) {
    RuntimeConfigResult r = parse("[runtime.watchdog]\nenabled = true\ntimout_ms = 50\n");
    EXPECT_FALSE(r.config);
    const ConfigDiagnostic* d = find(r, "runtime.watchdog.timout_ms");
    ASSERT_NE(d, nullptr) << dump(r);
    EXPECT_EQ(d->severity, Severity::Error);
    EXPECT_EQ(d->line, 3U);
    EXPECT_EQ(d->column, 1U);
    EXPECT_NE(d->message.find("timeout_ms"), std::string::npos) << "the message lists the known keys";
    EXPECT_EQ(formatDiagnostic(*d).rfind("runtime.toml:3:1: error: runtime.watchdog.timout_ms: unknown key", 0), 0U)
        << formatDiagnostic(*d);
}

// A [runtime] key that takes one of a few words: the default, each word's flag, and another word
// as an error naming the key, its line and the words known.
struct Choice {
    const char* word;
    bool flag;
};
void expectChoice(const std::string& key, bool RuntimeConfig::*flag, bool byDefault,
                  std::initializer_list<Choice> words, const std::string& known) {
    EXPECT_EQ((*parse("").config).*flag, byDefault) << key << "'s default";
    for (const Choice& c : words) {
        const RuntimeConfigResult r = parse("[runtime]\n" + key + " = \"" + c.word + "\"\n");
        ASSERT_TRUE(r.config) << dump(r);
        EXPECT_EQ((*r.config).*flag, c.flag) << key << " = " << c.word;
    }
    const RuntimeConfigResult bad = parse("[runtime]\n" + key + " = \"later\"\n");
    EXPECT_FALSE(bad.config);
    const ConfigDiagnostic* d = find(bad, "runtime." + key);
    ASSERT_NE(d, nullptr) << dump(bad);
    EXPECT_EQ(d->severity, Severity::Error);
    EXPECT_EQ(d->line, 2U);
    EXPECT_NE(d->message.find(known), std::string::npos) << d->message;
}

TEST(RuntimeConfig, ExecutionIsTheInterpreterUnlessNativeIsAsked) {
    expectChoice("execution", &RuntimeConfig::nativeExecution, false, {{"native", true}, {"interpreter", false}},
                 "native, interpreter");
}

TEST(RuntimeConfig, NativeStartIsBackgroundUnlessWaitIsAsked) {
    expectChoice("native_start", &RuntimeConfig::nativeStartWait, false, {{"wait", true}, {"background", false}},
                 "background, wait");
}

TEST(RuntimeConfig, UnknownSectionIsAnError) {
    RuntimeConfigResult r = parse("[runtime.extra]\nflag = true\n");
    EXPECT_FALSE(r.config);
    ASSERT_NE(find(r, "runtime.extra"), nullptr) << dump(r);
}

TEST(RuntimeConfig, WrongTypeNamesTheKey) {
    RuntimeConfigResult r = parse("[resource]\ncycle_interval_ms = \"10\"\n");
    EXPECT_FALSE(r.config);
    const ConfigDiagnostic* d = find(r, "resource.cycle_interval_ms");
    ASSERT_NE(d, nullptr) << dump(r);
    EXPECT_NE(d->message.find("expected an integer, found a string"), std::string::npos) << d->message;
    EXPECT_EQ(d->line, 2U);
}

TEST(RuntimeConfig, RangesAreChecked) {
    for (const char* text : {"[resource]\ncycle_interval_ms = 0\n", "[runtime.watchdog]\ntimeout_ms = -1\n",
                             "[runtime.realtime]\nscheduler = \"fifo\"\npriority = 100\n",
                             "[runtime.retain]\nsave_interval_ms = 0\n", "[bundle]\nversion = 2\n"}) {
        RuntimeConfigResult r = parse(text);
        EXPECT_FALSE(r.config) << text;
        EXPECT_EQ(count(r, Severity::Error), 1U) << text << dump(r);
        EXPECT_NE(r.diagnostics.at(0).message.find("out of range"), std::string::npos) << dump(r);
    }
}

TEST(RuntimeConfig, ChoicesListTheAlternatives) {
    RuntimeConfigResult r = parse("[runtime.watchdog]\naction = \"explode\"\n");
    EXPECT_FALSE(r.config);
    const ConfigDiagnostic* d = find(r, "runtime.watchdog.action");
    ASSERT_NE(d, nullptr);
    EXPECT_NE(d->message.find("halt, safe_halt, restart"), std::string::npos) << d->message;
}

TEST(RuntimeConfig, BuildDialectIsAcceptedAndChecked) {
    // The compiler reads [build] dialect; the runtime accepts the key and rejects other values.
    for (const char* text :
         {"[build]\ndialect = \"iec\"\n", "[build]\ndialect = \"codesys\"\n", "[build]\ndialect = \"openplc\"\n"}) {
        RuntimeConfigResult r = parse(text);
        EXPECT_TRUE(r.config) << text << dump(r);
        EXPECT_TRUE(r.diagnostics.empty()) << text << dump(r);
    }
    RuntimeConfigResult r = parse("[build]\ndialect = \"twincat\"\n");
    EXPECT_FALSE(r.config);
    const ConfigDiagnostic* d = find(r, "build.dialect");
    ASSERT_NE(d, nullptr) << dump(r);
    EXPECT_EQ(d->line, 2U);
    EXPECT_NE(d->message.find("codesys, iec"), std::string::npos) << d->message;
}

// Regression: README.md and editor.md document [build] sources_root and the compiler reads it, but
// the runtime's reader did not know the key, so takt validate and takt run refused such a project
// with "unknown key" while takt build compiled it.
TEST(RuntimeConfig, BuildSourcesRootIsAccepted) {
    RuntimeConfigResult ok = parse("[build]\nsources_root = \"plc/st\"\n");
    EXPECT_TRUE(ok.config.has_value()) << dump(ok);
    EXPECT_TRUE(ok.diagnostics.empty()) << dump(ok);
    RuntimeConfigResult bad = parse("[build]\nsources_root = 3\n");
    ASSERT_FALSE(bad.config.has_value());
    const ConfigDiagnostic* d = find(bad, "build.sources_root");
    ASSERT_NE(d, nullptr) << dump(bad);
    EXPECT_NE(d->message.find("expected a string"), std::string::npos) << d->message;
}

TEST(RuntimeConfig, TomlSyntaxErrorIsOneDiagnosticWithPosition) {
    RuntimeConfigResult r = parse("[resource]\nname = \"x\"\ncycle_interval_ms = = 3\n");
    EXPECT_FALSE(r.config);
    ASSERT_EQ(r.diagnostics.size(), 1U);
    EXPECT_EQ(r.diagnostics[0].line, 3U);
    EXPECT_GT(r.diagnostics[0].column, 0U);
}

TEST(RuntimeConfig, NetworkEndpointNeedsAToken) {
    RuntimeConfigResult r = parse("[runtime.control]\nendpoint = \"tcp://127.0.0.1:9001\"\n");
    EXPECT_FALSE(r.config);
    ASSERT_NE(find(r, "runtime.control.endpoint"), nullptr) << dump(r);
    EXPECT_TRUE(parse("[runtime.control]\nendpoint = \"tcp://127.0.0.1:9001\"\nauth_token = \"t\"\n").config);
}

TEST(RuntimeConfig, NonLoopbackTcpIsRefusedEvenWithAToken) {
    RuntimeConfigResult r =
        parse("[runtime.control]\nendpoint = \"tcp://0.0.0.0:9001\"\nauth_token = \"0123456789abcdef0123\"\n");
    EXPECT_FALSE(r.config);
    const ConfigDiagnostic* d = find(r, "runtime.control.endpoint");
    ASSERT_NE(d, nullptr) << dump(r);
    EXPECT_NE(d->message.find("tls://"), std::string::npos) << d->message;
    EXPECT_TRUE(parse("[runtime.control]\nendpoint = \"tcp://localhost:9001\"\nauth_token = \"t\"\n").config);
}

TEST(RuntimeConfig, TlsEndpointNeedsCertificate) {
    RuntimeConfigResult r = parse("[runtime.control]\nendpoint = \"tls://0.0.0.0:9443\"\nauth_token = \"t\"\n");
    EXPECT_FALSE(r.config);
    ASSERT_NE(find(r, "runtime.control.endpoint"), nullptr);
}

TEST(RuntimeConfig, MalformedEndpointsAreRejected) {
    for (const char* endpoint : {"http://x:1", "tcp://127.0.0.1", "tcp://:9001", "tcp://h:99999", "unix://", "sock"}) {
        RuntimeConfigResult r =
            parse(std::string("[runtime.control]\nauth_token = \"t\"\nendpoint = \"") + endpoint + "\"\n");
        EXPECT_FALSE(r.config) << endpoint;
    }
}

TEST(RuntimeConfig, TokenNeedsExactlyOneSecret) {
    RuntimeConfigResult r = parse("[[runtime.control.tokens]]\nrole = \"admin\"\n");
    EXPECT_FALSE(r.config);
    r = parse("[[runtime.control.tokens]]\nrole = \"boss\"\ntoken = \"x\"\n");
    EXPECT_FALSE(r.config);
    ASSERT_NE(find(r, "runtime.control.tokens[0].role"), nullptr) << dump(r);
}

TEST(RuntimeConfig, PriorityWithoutFifoIsAnError) {
    RuntimeConfigResult r = parse("[runtime.realtime]\nscheduler = \"other\"\npriority = 10\n");
    EXPECT_FALSE(r.config);
    EXPECT_NE(find(r, "runtime.realtime.priority"), nullptr);
}

TEST(RuntimeConfig, DuplicateCpuIsAnError) {
    RuntimeConfigResult r = parse("[runtime.realtime]\ncpu_affinity = [1, 1]\n");
    EXPECT_FALSE(r.config);
    EXPECT_NE(find(r, "runtime.realtime.cpu_affinity[1]"), nullptr) << dump(r);
}

TEST(RuntimeConfig, TaskAffinityGivesATaskItsOwnCpus) {
    RuntimeConfigResult r = parse("[runtime.realtime]\ncpu_affinity = [0]\n\n[runtime.realtime.task_affinity]\n"
                                  "FastT = [1]\nSlowT = [0, 1]\n");
    ASSERT_TRUE(r.config) << dump(r);
    const auto& a = r.config->realtime.taskAffinity;
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].first, "FastT");
    EXPECT_EQ(a[0].second, std::vector<int>({1}));
    EXPECT_EQ(a[1].first, "SlowT");
    EXPECT_EQ(a[1].second, std::vector<int>({0, 1}));
}

TEST(RuntimeConfig, BadTaskAffinityIsAnErrorNamingTheKey) {
    for (const char* bad : {"FastT = []", "FastT = 1", "FastT = [2000]", "FastT = [1, 1]"}) {
        RuntimeConfigResult r = parse(std::string("[runtime.realtime.task_affinity]\n") + bad + "\n");
        EXPECT_FALSE(r.config) << bad;
        bool named = false;
        for (const ConfigDiagnostic& d : r.diagnostics) {
            named = named || d.key.find("runtime.realtime.task_affinity.FastT") == 0;
        }
        EXPECT_TRUE(named) << bad << ": " << dump(r);
    }
}

// The runtime.toml of a truST project (its documented schema): it must start on takt with
// warnings only, one per feature takt does not have.
TEST(RuntimeConfig, TrustProjectStartsWithWarnings) {
    RuntimeConfigResult r = parse(R"(
[bundle]
version = 1

[resource]
name = "main"
cycle_interval_ms = 100

[[resource.tasks]]
name = "fast"
interval_ms = 10
priority = 1
programs = ["Main"]

[runtime]
execution_backend = "vm"

[runtime.control]
endpoint = "unix:///tmp/trust-runtime.sock"
mode = "production"
debug_enabled = false

[runtime.log]
level = "info"

[runtime.retain]
mode = "none"
save_interval_ms = 1000

[runtime.watchdog]
enabled = false
timeout_ms = 5000
action = "halt"

[runtime.fault]
policy = "halt"

[runtime.web]
enabled = true
listen = "127.0.0.1:8080"
auth = "local"
tls = false

[runtime.discovery]
enabled = true
service_name = "truST"
advertise = true
interfaces = ["eth0"]

[runtime.mesh]
enabled = false
listen = "0.0.0.0:5200"
tls = false
publish = []
subscribe = {}

[runtime.observability]
enabled = true
sample_interval_ms = 1000
[[runtime.observability.alerts]]
name = "hot"
variable = "Main.temp"
above = 80.0

[runtime.opcua]
enabled = false
)");
    ASSERT_TRUE(r.config) << dump(r);
    EXPECT_EQ(count(r, Severity::Error), 0U) << dump(r);
    for (const char* key :
         {"resource.tasks", "runtime.execution_backend", "runtime.discovery", "runtime.observability"}) {
        const ConfigDiagnostic* d = find(r, key);
        ASSERT_NE(d, nullptr) << key << "\n" << dump(r);
        EXPECT_EQ(d->severity, Severity::Warning);
        EXPECT_NE(d->message.find("not supported yet"), std::string::npos) << d->message;
        EXPECT_GT(d->line, 0U) << key;
    }
    // Disabled features ask for nothing takt lacks.
    EXPECT_EQ(find(r, "runtime.mesh"), nullptr);
    EXPECT_EQ(find(r, "runtime.opcua"), nullptr);
    EXPECT_EQ(count(r, Severity::Warning), 4U) << dump(r);
    // truST's [runtime.web] is takt's own web page now: served, not warned.
    EXPECT_EQ(find(r, "runtime.web"), nullptr);
    ASSERT_TRUE(r.config);
    EXPECT_TRUE(r.config->web.enabled);
    EXPECT_EQ(r.config->web.port, 8080);
    EXPECT_FALSE(r.config->web.tokenAuth);
}

// truST's ADS server section (its ads_line1 example): a warning when enabled, nothing when off;
// it used to be an unknown-key error that refused the whole project.
TEST(RuntimeConfig, TrustAdsSectionIsIgnoredWithAWarning) {
    const char* on = "[runtime.ads]\nenabled = true\nconfig_path = \"ads.toml\"\nworker_tick_interval_ms = 20\n";
    RuntimeConfigResult r = parse(on);
    ASSERT_TRUE(r.config) << dump(r);
    const ConfigDiagnostic* d = find(r, "runtime.ads");
    ASSERT_NE(d, nullptr) << dump(r);
    EXPECT_EQ(d->severity, Severity::Warning);
    EXPECT_NE(d->message.find("not supported yet: takt has no ADS"), std::string::npos) << d->message;
    EXPECT_EQ(d->line, 1U);
    r = parse("[runtime.ads]\nenabled = false\n");
    ASSERT_TRUE(r.config) << dump(r);
    EXPECT_EQ(find(r, "runtime.ads"), nullptr) << dump(r);
    r = parse("[runtime.ads]\nenabled = true\nport = 851\n");
    EXPECT_FALSE(r.config);
    EXPECT_NE(find(r, "runtime.ads.port"), nullptr) << dump(r);
}

// takt serves Prometheus metrics ([runtime.web]); the warning for truST's observability section
// must not say it has none.
TEST(RuntimeConfig, TrustObservabilityWarningPointsAtTheMetrics) {
    RuntimeConfigResult r = parse("[runtime.observability]\nenabled = true\nprometheus_enabled = true\n");
    ASSERT_TRUE(r.config) << dump(r);
    ASSERT_EQ(r.diagnostics.size(), 1U) << dump(r);
    EXPECT_EQ(r.diagnostics[0].severity, Severity::Warning);
    EXPECT_EQ(r.diagnostics[0].message, "not supported yet: takt has no historian (its Prometheus metrics are "
                                        "[runtime.web]'s /metrics); the section is ignored");
}

TEST(RuntimeConfig, TypoInsideATrustSectionIsStillAnError) {
    RuntimeConfigResult r = parse("[runtime.web]\nenabled = true\nlisten_addr = \"0.0.0.0:80\"\n");
    EXPECT_FALSE(r.config);
    const ConfigDiagnostic* d = find(r, "runtime.web.listen_addr");
    ASSERT_NE(d, nullptr) << dump(r);
    EXPECT_EQ(d->line, 3U);
    r = parse("[[runtime.observability.alerts]]\nname = \"a\"\nvarible = \"x\"\n");
    EXPECT_NE(find(r, "runtime.observability.alerts[0].varible"), nullptr) << dump(r);
}

TEST(RuntimeConfig, DebugControlModeWarns) {
    RuntimeConfigResult r = parse("[runtime.control]\nendpoint = \"unix:///tmp/s\"\nmode = \"debug\"\n");
    ASSERT_TRUE(r.config);
    const ConfigDiagnostic* d = find(r, "runtime.control.mode");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->severity, Severity::Warning);
}

// debug_enabled lets the debug.* methods of the control endpoint halt tasks (docs/debugging.md):
// read, no warning; off by default; a value that is not a boolean is an error at the key.
TEST(RuntimeConfig, DebugEnabledAllowsDebugging) {
    RuntimeConfigResult r = parse("[runtime.control]\nendpoint = \"unix:///tmp/s\"\ndebug_enabled = true\n");
    ASSERT_TRUE(r.config) << dump(r);
    EXPECT_TRUE(r.config->control.debugEnabled);
    EXPECT_EQ(find(r, "runtime.control.debug_enabled"), nullptr) << dump(r);
    r = parse("[runtime.control]\nendpoint = \"unix:///tmp/s\"\n");
    ASSERT_TRUE(r.config) << dump(r);
    EXPECT_FALSE(r.config->control.debugEnabled);
    r = parse("[runtime.control]\nendpoint = \"unix:///tmp/s\"\ndebug_enabled = \"yes\"\n");
    EXPECT_NE(find(r, "runtime.control.debug_enabled"), nullptr) << dump(r);
}

TEST(RuntimeConfig, MissingFileIsOneError) {
    RuntimeConfigResult r = loadRuntimeConfig("/nonexistent/takt/runtime.toml");
    EXPECT_FALSE(r.config);
    ASSERT_EQ(r.diagnostics.size(), 1U);
    EXPECT_EQ(r.diagnostics[0].file, "/nonexistent/takt/runtime.toml");
    EXPECT_EQ(r.diagnostics[0].message,
              "missing runtime.toml (required to run: it names the task, its period and the I/O; see "
              "docs/getting-started.md, or copy the commented one `takt init NEWDIR` writes)");
}

TEST(RuntimeConfig, DiagnosticsComeInFileOrder) {
    RuntimeConfigResult r = parse("[runtime.log]\nlevel = \"loud\"\n[resource]\nname = 3\nbogus = 1\n");
    ASSERT_GE(r.diagnostics.size(), 3U) << dump(r);
    for (std::size_t i = 1; i < r.diagnostics.size(); ++i) {
        EXPECT_LE(r.diagnostics[i - 1].line, r.diagnostics[i].line) << dump(r);
    }
}

} // namespace
} // namespace takt::engine
