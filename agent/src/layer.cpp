#include "takt/agent/layer.h"

namespace takt::agent {
const char* layerName() noexcept {
    return "takt_agent";
}
} // namespace takt::agent
