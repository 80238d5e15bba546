#include "takt/engine/layer.h"

namespace takt::engine {
const char* layerName() noexcept {
    return "takt_engine";
}
} // namespace takt::engine
