#pragma once
// A gpio chip in memory for the gpio driver tests: line levels a test sets and reads, and every
// level the driver drove, in order.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpio_chip.h"

namespace takt::io::test {

using detail::GpioChip;

struct FakeLines {
    std::mutex mutex;
    std::map<unsigned, bool> level; // physical levels
    std::map<unsigned, bool> isOutput;
    std::vector<std::pair<unsigned, bool>> writes; // every set(), in order
    bool failReads = false;
};

class FakeChip final : public GpioChip {
public:
    explicit FakeChip(std::shared_ptr<FakeLines> lines) : lines_(std::move(lines)) {}
    bool requestInput(unsigned line, std::string& /*error*/) override {
        const std::lock_guard lock(lines_->mutex);
        lines_->isOutput[line] = false;
        return true;
    }
    bool requestOutput(unsigned line, bool level, std::string& error) override {
        const std::lock_guard lock(lines_->mutex);
        if (line >= 32) {
            error = fmt::format("line {}: not on chip", line);
            return false;
        }
        lines_->isOutput[line] = true;
        lines_->level[line] = level;
        return true;
    }
    bool get(unsigned line, bool& level, std::string& error) override {
        const std::lock_guard lock(lines_->mutex);
        if (lines_->failReads) {
            error = fmt::format("line {}: read failed", line);
            return false;
        }
        level = lines_->level[line];
        return true;
    }
    bool set(unsigned line, bool level, std::string& /*error*/) override {
        const std::lock_guard lock(lines_->mutex);
        lines_->level[line] = level;
        lines_->writes.emplace_back(line, level);
        return true;
    }

private:
    std::shared_ptr<FakeLines> lines_;
};

} // namespace takt::io::test
