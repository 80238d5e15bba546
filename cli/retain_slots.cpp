#include "retain_slots.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "takt/engine/retain.h"

namespace takt::cli {
namespace {

namespace fs = std::filesystem;

// RETAIN variables in A/B slot files (retain.h). The scan loop hands this sink a copy of the
// data image on its low-priority retain thread every save_interval_ms and once on stop; the
// sink extracts the RETAIN bytes and writes a slot only when they changed since the last save.
class SlotRetainSink final : public engine::RetainSink {
public:
    SlotRetainSink(const fs::path& path, const bytecode::Module& module, std::shared_ptr<spdlog::logger> log)
        : store_(path), layout_(module), payload_(layout_.payloadSize()), log_(std::move(log)) {
        loaded_ = store_.load();
        for (const std::string& r : loaded_.rejected) {
            log_->warn("runtime.retain: ignoring {}", r);
        }
    }

    engine::RetainSaveResult save(const bytecode::Module& module,
                                  std::span<const std::uint8_t> image) noexcept override {
        try {
            // After an online change the RETAIN variables (and their offsets) are the new
            // program's. The layout is rebuilt from the module every save (about once a second,
            // on the retain thread) rather than cached by module address, which a freed and
            // reallocated module could reuse.
            engine::RetainLayout layout(module);
            if (layout.hash() != layout_.hash() || layout.payloadSize() != layout_.payloadSize()) {
                layout_ = std::move(layout);
                payload_.assign(layout_.payloadSize(), 0);
                saved_ = false;
            }
            if (layout_.empty()) {
                return engine::RetainSaveResult::Unchanged;
            }
            layout_.capture(image.data(), payload_);
            if (saved_ && payload_ == lastSaved_) {
                return engine::RetainSaveResult::Unchanged;
            }
            std::string error;
            if (!store_.save(layout_, payload_, error)) {
                // Reported once per distinct error: a full disk must not flood the log every second.
                if (error != lastError_) {
                    log_->error("runtime.retain: save failed, the previous image is kept: {}", error);
                    lastError_ = error;
                }
                return engine::RetainSaveResult::Failed;
            }
            lastError_.clear();
            lastSaved_ = payload_;
            saved_ = true;
            return engine::RetainSaveResult::Saved;
        } catch (const std::exception& e) {
            log_->error("runtime.retain: save failed: {}", e.what());
            return engine::RetainSaveResult::Failed;
        }
    }

    bool restore(engine::LoadedProgram& program, std::string& message) override {
        if (!loaded_.found) {
            message = fmt::format("no valid retain image at {}.a/.b", store_.path().string());
            return false;
        }
        const engine::RetainApplyReport r = engine::applyRetainImage(loaded_.image, program);
        log_->info("warm start: {} RETAIN variables restored from {} (sequence {})", r.restored,
                   store_.slotPath(loaded_.slot).string(), loaded_.image.sequence);
        for (const std::string& d : r.dropped) {
            log_->warn("warm start: retained '{}' is not in this program (or changed type); dropped", d);
        }
        return true;
    }

private:
    engine::RetainStore store_;
    engine::RetainLayout layout_;
    engine::RetainLoadResult loaded_;
    std::vector<std::uint8_t> payload_;
    std::vector<std::uint8_t> lastSaved_;
    bool saved_ = false;
    std::string lastError_;
    std::shared_ptr<spdlog::logger> log_;
};

} // namespace

std::unique_ptr<engine::RetainSink> makeRetainSink(const engine::RuntimeConfig& config, const fs::path& state,
                                                   const bytecode::Module& module,
                                                   const std::shared_ptr<spdlog::logger>& log) {
    if (!config.retain.enabled) {
        return nullptr;
    }
    const fs::path path = config.retain.path.is_absolute() ? config.retain.path : state / config.retain.path;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) {
        log->error("runtime.retain.path: cannot create {}: {}; RETAIN variables are not saved",
                   path.parent_path().string(), ec.message());
        return nullptr;
    }
    return std::make_unique<SlotRetainSink>(path, module, log);
}

} // namespace takt::cli
