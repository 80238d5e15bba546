// fleet.toml's reader (agent/src/fleet/fleet_config.cpp): how the boxes are split into waves, and
// that every refusal is coded and leaves no fleet.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "takt/agent/fleet_config.h"

namespace takt::agent {
namespace {

std::string fleet(const std::string& deploy, int boxes) {
    std::string text = "[deploy]\n" + deploy + "\n";
    for (int i = 0; i < boxes; ++i) {
        text += "[[runtime]]\nname = \"b" + std::to_string(i) + "\"\nendpoint = \"unix:///tmp/b" + std::to_string(i) +
                ".sock\"\n";
    }
    return text;
}

std::vector<std::vector<std::size_t>> waves(const std::string& deploy, int boxes) {
    const FleetConfigResult r = parseFleetConfig(fleet(deploy, boxes), "fleet.toml");
    EXPECT_TRUE(r.config.has_value()) << (r.diagnostics.empty() ? "" : engine::formatDiagnostic(r.diagnostics[0]));
    return r.config ? r.config->waves : std::vector<std::vector<std::size_t>>{};
}

using Waves = std::vector<std::vector<std::size_t>>;

TEST(FleetConfig, OneCanaryThenTheRestByDefault) {
    EXPECT_EQ(waves("", 4), (Waves{{0}, {1, 2, 3}}));
    EXPECT_EQ(waves("", 1), (Waves{{0}}));
}

TEST(FleetConfig, CanaryAndWaveSize) {
    EXPECT_EQ(waves("canary = 1\nwave_size = 2", 6), (Waves{{0}, {1, 2}, {3, 4}, {5}}));
    EXPECT_EQ(waves("canary = 2\nwave_size = 1", 4), (Waves{{0, 1}, {2}, {3}}));
    EXPECT_EQ(waves("canary = 3", 3), (Waves{{0, 1, 2}}));
}

TEST(FleetConfig, ExplicitWaves) {
    EXPECT_EQ(waves(R"(waves = [["b2"], ["b0", "b1"]])", 3), (Waves{{2}, {0, 1}}));
}

TEST(FleetConfig, SettleAndOnFailure) {
    const FleetConfigResult r = parseFleetConfig(fleet("settle_s = 30\non_failure = \"rollback\"", 2), "fleet.toml");
    ASSERT_TRUE(r.config);
    EXPECT_EQ(r.config->settleS, 30u);
    EXPECT_EQ(r.config->onFailure, FleetOnFailure::Rollback);
}

TEST(FleetConfig, RefusalsAreCodedAndLeaveNoFleet) {
    struct Case {
        std::string text;
        const char* code;
        std::string key;
    };
    const Case cases[] = {
        {fleet(R"(waves = [["b0"]])", 2), kFleetWaves, "deploy.waves"},
        {fleet(R"(waves = [["b0"], ["b0", "b1"]])", 2), kFleetWaves, "deploy.waves[1][0]"},
        {fleet("waves = [[\"b0\", \"b1\"]]\ncanary = 1", 2), kFleetWaves, "deploy.waves"},
        {fleet("wave_size = 0", 2), kFleetKey, "deploy.wave_size"},
        {fleet("settle_s = -1", 2), kFleetKey, "deploy.settle_s"},
        {fleet("", 1) + "cert = \"c.pem\"\n", kFleetRuntime, "runtime[0].cert"},
        {"[[runtime]]\nname = \"a b\"\nendpoint = \"unix:///x\"\n", kFleetRuntime, "runtime[0].name"},
        {"[[runtime]]\nname = \"a\"\nendpoint = \"tcp://host\"\n", kFleetRuntime, "runtime[0].endpoint"},
        {"[[runtime]]\nname = \"a\"\n", kFleetKey, "runtime[0].endpoint"},
        {"runtime = 3\n", kFleetKey, "runtime"},
        {"x = [", kFleetSyntax, ""},
    };
    for (const Case& c : cases) {
        const FleetConfigResult r = parseFleetConfig(c.text, "fleet.toml");
        EXPECT_FALSE(r.config.has_value()) << c.text;
        ASSERT_FALSE(r.diagnostics.empty()) << c.text;
        bool found = false;
        for (const engine::ConfigDiagnostic& d : r.diagnostics) {
            EXPECT_FALSE(d.code.empty()) << engine::formatDiagnostic(d);
            found = found || (d.code == c.code && d.key == c.key && d.line > 0);
        }
        EXPECT_TRUE(found) << c.text << "\n" << engine::formatDiagnostic(r.diagnostics[0]);
    }
}

} // namespace
} // namespace takt::agent
