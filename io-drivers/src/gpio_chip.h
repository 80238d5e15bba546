#pragma once
// The seam between the gpio driver and the kernel: the few line operations the driver needs.
// openGpiodChip() is the real one (libgpiod v1, character device); tests pass a fake chip.
#include <functional>
#include <memory>
#include <string>

namespace takt::io::detail {

class GpioChip {
public:
    virtual ~GpioChip() = default;
    // Each line is requested once, as an input or as an output with its first level.
    virtual bool requestInput(unsigned line, std::string& error) = 0;
    virtual bool requestOutput(unsigned line, bool level, std::string& error) = 0;
    // Physical levels (invert is the driver's business).
    virtual bool get(unsigned line, bool& level, std::string& error) = 0;
    virtual bool set(unsigned line, bool level, std::string& error) = 0;
};

using GpioChipOpener = std::function<std::unique_ptr<GpioChip>(const std::string& chip, std::string& error)>;

// `chip` as libgpiod's lookup takes it: "gpiochip0", "/dev/gpiochip0", "0" or the chip label.
[[nodiscard]] std::unique_ptr<GpioChip> openGpiodChip(const std::string& chip, std::string& error);

} // namespace takt::io::detail
