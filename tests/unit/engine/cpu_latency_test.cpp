// [runtime.realtime] cpu_dma_latency_us and the PM QoS request it makes (cpu_latency.h): the key's
// values and errors, the latency held by default, and what is written to the device.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "takt/engine/config.h"
#include "takt/engine/cpu_latency.h"

namespace takt::engine {
namespace {

RuntimeConfig::Realtime realtime(const std::string& table) {
    RuntimeConfigResult r = parseRuntimeConfig("[runtime.realtime]\n" + table, "runtime.toml");
    EXPECT_TRUE(r.config) << (r.diagnostics.empty() ? "" : formatDiagnostic(r.diagnostics[0]));
    return r.config ? r.config->realtime : RuntimeConfig::Realtime{};
}

TEST(CpuLatency, HeldAtZeroUnderFifoAndNotOtherwiseUnlessAsked) {
    EXPECT_EQ(heldCpuLatencyUs(realtime("scheduler = \"fifo\"\n")), 0);
    EXPECT_EQ(heldCpuLatencyUs(realtime("")), std::nullopt);
    EXPECT_EQ(heldCpuLatencyUs(realtime("scheduler = \"fifo\"\ncpu_dma_latency_us = 20\n")), 20);
    EXPECT_EQ(heldCpuLatencyUs(realtime("cpu_dma_latency_us = 100\n")), 100);
    EXPECT_EQ(heldCpuLatencyUs(realtime("scheduler = \"fifo\"\ncpu_dma_latency_us = false\n")), std::nullopt);
}

TEST(CpuLatency, AValueOutOfRangeOrOfAnotherTypeIsAnErrorAtTheKey) {
    for (const char* bad : {"-1", "2000000001", "true", "\"0\"", "1.5"}) {
        RuntimeConfigResult r =
            parseRuntimeConfig(std::string("[runtime.realtime]\ncpu_dma_latency_us = ") + bad + "\n", "runtime.toml");
        EXPECT_FALSE(r.config) << bad;
        ASSERT_EQ(r.diagnostics.size(), 1U) << bad;
        const std::string text = formatDiagnostic(r.diagnostics[0]);
        EXPECT_NE(text.find("runtime.toml:2:"), std::string::npos) << text;
        EXPECT_NE(text.find("runtime.realtime.cpu_dma_latency_us"), std::string::npos) << text;
        EXPECT_NE(text.find("expected microseconds 0..2000000000 or false"), std::string::npos) << text;
    }
}

// The kernel reads the request as a binary 32-bit value; a plain file stands in for the device.
TEST(CpuLatency, TheRequestIsTheBinaryValueWrittenToTheDevice) {
    test::TempDir dir;
    const std::string device = (dir.path() / "cpu_dma_latency").string();
    std::ofstream(device).close();
    CpuLatencyRequest request;
    ASSERT_EQ(request.hold(42, device.c_str()), "");
    EXPECT_TRUE(request.held());
    const std::string bytes = test::readText(device);
    ASSERT_EQ(bytes.size(), sizeof(std::int32_t));
    std::int32_t value = -1;
    std::memcpy(&value, bytes.data(), sizeof value);
    EXPECT_EQ(value, 42);
    request.release();
    EXPECT_FALSE(request.held());
}

TEST(CpuLatency, ADeviceThatCannotBeOpenedIsAWarningNamingIt) {
    test::TempDir dir;
    const std::string device = (dir.path() / "missing").string();
    CpuLatencyRequest request;
    const std::string why = request.hold(0, device.c_str());
    EXPECT_NE(why.find("cpu_dma_latency_us: " + device + " not opened (No such file or directory)"), std::string::npos)
        << why;
    EXPECT_FALSE(request.held());
}

} // namespace
} // namespace takt::engine
