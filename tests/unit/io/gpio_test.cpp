// The gpio driver through a fake chip (the libgpiod chip is the default and stays in the
// build): invert, debounce, initial levels, safe state, and param errors.
#include <map>

#include "gpio.h"
#include "support/gpio_fake_chip.h"
#include "support/io_test_support.h"

namespace takt::io::test {
namespace {

using detail::GpioChip;
using detail::GpioDriver;

struct Rig {
    std::shared_ptr<FakeLines> lines = std::make_shared<FakeLines>();
    std::string openedChip;
    GpioDriver driver{[this](const std::string& chip, std::string&) {
                          openedChip = chip;
                          return std::make_unique<FakeChip>(lines);
                      },
                      false};

    void init(std::string_view params) {
        std::string error;
        ASSERT_TRUE(driver.init(spec("gpio", params), error)) << error;
    }
    void setLevel(unsigned line, bool v) {
        const std::lock_guard lock(lines->mutex);
        lines->level[line] = v;
    }
    bool level(unsigned line) {
        const std::lock_guard lock(lines->mutex);
        return lines->level[line];
    }
};

constexpr std::int64_t kMs = 1'000'000;

TEST(GpioParams, ErrorsNameTheKey) {
    EXPECT_EQ(initError("gpio", "pins = []"),
              "io.params.pins: unknown parameter of the gpio driver (known: chip, poll_ms, on_error, inputs, outputs)");
    EXPECT_EQ(initError("gpio", "inputs = [{address = '%IX0.0'}]"), "io.params.inputs[0].line: missing (required)");
    EXPECT_EQ(initError("gpio", "inputs = [{address = '%QX0.0', line = 3}]"),
              "io.params.inputs[0].address: expected a %IX bit address, got '%QX0.0'");
    EXPECT_EQ(initError("gpio", "outputs = [{address = '%QW0', line = 3}]"),
              "io.params.outputs[0].address: expected a %QX bit address, got '%QW0'");
    EXPECT_EQ(
        initError("gpio", "inputs = [{address = '%IX0.0', line = 3}]\noutputs = [{address = '%QX0.0', line = 3}]"),
        "io.params.outputs[0].line: line 3 is used twice");
    EXPECT_EQ(initError("gpio", "inputs = [{address = '%IX0.0', line = 3, debounce_ms = -1}]"),
              "io.params.inputs[0].debounce_ms: expected an integer 0..60000");
    EXPECT_EQ(initError("gpio", "outputs = [{address = '%QX0.1', line = 4, initial = 1}]"),
              "io.params.outputs[0].initial: expected true or false");
    EXPECT_EQ(initError("gpio", "outputs = [{address = '%QX0.1', line = 4, inverted = true}]"),
              "io.params.outputs[0].inverted: unknown parameter of a gpio output (known: address, line, pin, invert, "
              "initial)");
    // truST's `pin` is the line; both at once is an error.
    EXPECT_EQ(initError("gpio", "inputs = [{address = '%IX0.0', pin = 17}]"), "");
    EXPECT_EQ(initError("gpio", "inputs = [{address = '%IX0.0', pin = 17, line = 17}]"),
              "io.params.inputs[0].pin: truST's name for line: give one of them");
    EXPECT_EQ(initError("gpio", "inputs = [{address = '%IX0.0', pin = 3}]\noutputs = [{address = '%QX0.0', line = 3}]"),
              "io.params.outputs[0].line: line 3 is used twice");
}

TEST(Gpio, InitialLevelsAndInvertOnOutputs) {
    Rig rig;
    rig.init("chip = 'gpiochip3'\noutputs = [{address = '%QX0.0', line = 5, initial = true},"
             "{address = '%QX0.1', line = 6, invert = true, initial = true},"
             "{address = '%QX0.2', line = 7, invert = true}]");
    std::string error;
    ASSERT_TRUE(rig.driver.start(error)) << error;
    EXPECT_EQ(rig.openedChip, "gpiochip3");
    // Before the first cycle: the initial logical levels, inverted where asked.
    EXPECT_TRUE(rig.level(5));
    EXPECT_FALSE(rig.level(6));
    EXPECT_TRUE(rig.level(7));
    Image img;
    img.outputs[0] = 0b001; // %QX0.0 TRUE, %QX0.1 FALSE, %QX0.2 FALSE
    rig.driver.writeOutputs(img.view());
    rig.driver.poll(10 * kMs);
    EXPECT_TRUE(rig.level(5));
    EXPECT_TRUE(rig.level(6)); // FALSE inverted
    EXPECT_TRUE(rig.level(7));
    img.outputs[0] = 0b110;
    rig.driver.writeOutputs(img.view());
    rig.driver.poll(11 * kMs);
    EXPECT_FALSE(rig.level(5));
    EXPECT_FALSE(rig.level(6));
    EXPECT_FALSE(rig.level(7));
    EXPECT_EQ(rig.driver.health().health, Health::Ok);
}

TEST(Gpio, InputsAreInvertedAndDebounced) {
    Rig rig;
    rig.init("inputs = [{address = '%IX0.0', line = 1},"
             "{address = '%IX0.1', line = 2, invert = true},"
             "{address = '%IX1.0', line = 3, debounce_ms = 20}]");
    rig.setLevel(1, true);
    rig.setLevel(2, true);
    std::string error;
    ASSERT_TRUE(rig.driver.start(error)) << error; // samples once at start
    Image img;
    rig.driver.readInputs(img.view());
    EXPECT_TRUE(Image::bit(img.inputs, 0));
    EXPECT_FALSE(Image::bit(img.inputs, 1)); // high line, inverted
    EXPECT_FALSE(Image::bit(img.inputs, 8));

    // A 10 ms glitch on the debounced line never reaches %I.
    const std::int64_t t0 = 1000 * kMs;
    rig.driver.poll(t0);
    rig.setLevel(3, true);
    for (std::int64_t t = 1; t <= 10; ++t) {
        rig.driver.poll(t0 + t * kMs);
    }
    rig.setLevel(3, false);
    rig.driver.poll(t0 + 11 * kMs);
    rig.driver.poll(t0 + 40 * kMs);
    rig.driver.readInputs(img.view());
    EXPECT_FALSE(Image::bit(img.inputs, 8));

    // A level held for the debounce time is taken, not earlier.
    rig.setLevel(3, true);
    rig.driver.poll(t0 + 100 * kMs);
    rig.driver.poll(t0 + 119 * kMs);
    rig.driver.readInputs(img.view());
    EXPECT_FALSE(Image::bit(img.inputs, 8));
    rig.driver.poll(t0 + 120 * kMs);
    rig.driver.readInputs(img.view());
    EXPECT_TRUE(Image::bit(img.inputs, 8));

    // Undebounced lines follow at once.
    rig.setLevel(1, false);
    rig.driver.poll(t0 + 121 * kMs);
    rig.driver.readInputs(img.view());
    EXPECT_FALSE(Image::bit(img.inputs, 0));
}

TEST(Gpio, SafeStateDrivesTheLinesAndLatches) {
    Rig rig;
    rig.init("outputs = [{address = '%QX0.0', line = 5}, {address = '%QX0.1', line = 6, invert = true}]");
    std::string error;
    ASSERT_TRUE(rig.driver.start(error)) << error;
    Image img;
    img.outputs[0] = 0b01;
    rig.driver.writeOutputs(img.view());
    rig.driver.poll(1 * kMs);
    EXPECT_TRUE(rig.level(5));
    EXPECT_TRUE(rig.level(6));
    const std::vector<std::uint8_t> safe{0b10}; // %QX0.0 FALSE, %QX0.1 TRUE
    rig.driver.setSafeImage(safe);              // the safe image latched is the one configured
    rig.driver.applySafeState(safe);
    rig.driver.writeOutputs(img.view()); // ignored while latched
    rig.driver.poll(2 * kMs);
    EXPECT_FALSE(rig.level(5));
    EXPECT_FALSE(rig.level(6)); // TRUE inverted
    rig.driver.releaseSafeState();
    rig.driver.writeOutputs(img.view());
    rig.driver.poll(3 * kMs);
    EXPECT_TRUE(rig.level(5));
    EXPECT_TRUE(rig.level(6));
}

TEST(Gpio, ReadErrorsFollowOnError) {
    Rig rig;
    rig.init("on_error = 'warn'\ninputs = [{address = '%IX0.0', line = 1}]");
    std::string error;
    ASSERT_TRUE(rig.driver.start(error)) << error;
    rig.lines->failReads = true;
    rig.driver.poll(1 * kMs);
    EXPECT_EQ(rig.driver.health().health, Health::Degraded);
    EXPECT_EQ(rig.driver.health().reason, "line 1: read failed");
    rig.lines->failReads = false;
    rig.driver.poll(2 * kMs);
    EXPECT_EQ(rig.driver.health().health, Health::Ok);
}

TEST(Gpio, StartFailsOnALineTheChipRefuses) {
    Rig rig;
    rig.init("outputs = [{address = '%QX0.0', line = 40}]");
    std::string error;
    EXPECT_FALSE(rig.driver.start(error));
    EXPECT_EQ(error, "gpio gpiochip0: line 40: not on chip");
}

// The registered driver uses libgpiod; without a GPIO chip here, start() says so.
TEST(Gpio, RealChipMissingIsAStartError) {
    auto d = makeDriver("gpio", "chip = 'takt-no-such-chip'\noutputs = [{address = '%QX0.0', line = 0}]");
    std::string error;
    EXPECT_FALSE(d->start(error));
    EXPECT_NE(error.find("cannot open GPIO chip 'takt-no-such-chip'"), std::string::npos) << error;
}

// The thread-driven path: levels reach %I without calling poll() by hand.
TEST(Gpio, OwnThreadPollsTheChip) {
    auto lines = std::make_shared<FakeLines>();
    GpioDriver d([&](const std::string&, std::string&) { return std::make_unique<FakeChip>(lines); }, true);
    std::string error;
    ASSERT_TRUE(d.init(spec("gpio", "inputs = [{address = '%IX0.0', line = 1}]"), error)) << error;
    ASSERT_TRUE(d.start(error)) << error;
    Image img;
    {
        const std::lock_guard lock(lines->mutex);
        lines->level[1] = true;
    }
    EXPECT_TRUE(eventually([&] { return Image::bit(img.inputs, 0); }, [&] { d.readInputs(img.view()); }));
    d.stop();
}

// What `takt run` does on SIGTERM: applySafeState and stop at once. The lines end at the safe
// levels even when the stop wins the race against the driver thread's poll.
TEST(Gpio, StopRightAfterApplySafeStateLeavesTheLinesSafe) {
    auto lines = std::make_shared<FakeLines>();
    for (int round = 0; round < 5; ++round) {
        GpioDriver d([&](const std::string&, std::string&) { return std::make_unique<FakeChip>(lines); }, true);
        std::string error;
        ASSERT_TRUE(d.init(spec("gpio", "poll_ms = 50\noutputs = [{address = '%QX0.0', line = 5}]"), error)) << error;
        ASSERT_TRUE(d.start(error)) << error;
        Image img;
        img.outputs[0] = 1;
        d.writeOutputs(img.view());
        ASSERT_TRUE(eventually([&] {
            const std::lock_guard lock(lines->mutex);
            return lines->level[5];
        }));
        const std::vector<std::uint8_t> safe{0};
        d.setSafeImage(safe); // the safe image latched is the one configured
        d.applySafeState(safe);
        d.stop();
        const std::lock_guard lock(lines->mutex);
        EXPECT_FALSE(lines->level[5]) << "round " << round;
    }
}

} // namespace
} // namespace takt::io::test
