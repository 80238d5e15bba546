// The real gpio chip: libgpiod v1 on the GPIO character device.
#include <gpiod.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpio_chip.h"

namespace takt::io::detail {
namespace {

constexpr const char* kConsumer = "takt";

class GpiodChip final : public GpioChip {
public:
    explicit GpiodChip(gpiod_chip* chip) : chip_(chip) {}
    GpiodChip(const GpiodChip&) = delete;
    GpiodChip& operator=(const GpiodChip&) = delete;
    ~GpiodChip() override {
        for (auto& [offset, line] : lines_) {
            gpiod_line_release(line);
        }
        gpiod_chip_close(chip_);
    }

    bool requestInput(unsigned line, std::string& error) override {
        gpiod_line* l = lineOf(line, error);
        if (l == nullptr) {
            return false;
        }
        if (gpiod_line_request_input(l, kConsumer) != 0) {
            error = fmt::format("line {}: cannot request as input: {}", line, std::strerror(errno));
            return false;
        }
        lines_.emplace_back(line, l);
        return true;
    }

    bool requestOutput(unsigned line, bool level, std::string& error) override {
        gpiod_line* l = lineOf(line, error);
        if (l == nullptr) {
            return false;
        }
        if (gpiod_line_request_output(l, kConsumer, level ? 1 : 0) != 0) {
            error = fmt::format("line {}: cannot request as output: {}", line, std::strerror(errno));
            return false;
        }
        lines_.emplace_back(line, l);
        return true;
    }

    bool get(unsigned line, bool& level, std::string& error) override {
        gpiod_line* l = requested(line);
        const int v = l == nullptr ? -1 : gpiod_line_get_value(l);
        if (v < 0) {
            error = fmt::format("line {}: read failed: {}", line, std::strerror(errno));
            return false;
        }
        level = v != 0;
        return true;
    }

    bool set(unsigned line, bool level, std::string& error) override {
        gpiod_line* l = requested(line);
        if (l == nullptr || gpiod_line_set_value(l, level ? 1 : 0) != 0) {
            error = fmt::format("line {}: write failed: {}", line, std::strerror(errno));
            return false;
        }
        return true;
    }

private:
    gpiod_line* lineOf(unsigned line, std::string& error) {
        gpiod_line* l = gpiod_chip_get_line(chip_, line);
        if (l == nullptr) {
            error = fmt::format("line {}: not on chip {} ({} lines): {}", line, gpiod_chip_name(chip_),
                                gpiod_chip_num_lines(chip_), std::strerror(errno));
        }
        return l;
    }

    gpiod_line* requested(unsigned line) {
        for (auto& [offset, l] : lines_) {
            if (offset == line) {
                return l;
            }
        }
        return nullptr;
    }

    gpiod_chip* chip_;
    std::vector<std::pair<unsigned, gpiod_line*>> lines_;
};

} // namespace

std::unique_ptr<GpioChip> openGpiodChip(const std::string& chip, std::string& error) {
    gpiod_chip* c = gpiod_chip_open_lookup(chip.c_str());
    if (c == nullptr) {
        error = fmt::format("cannot open GPIO chip '{}': {}", chip, std::strerror(errno));
        return nullptr;
    }
    return std::make_unique<GpiodChip>(c);
}

} // namespace takt::io::detail
