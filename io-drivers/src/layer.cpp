#include "takt/io/layer.h"

namespace takt::io {
const char* layerName() noexcept {
    return "takt_io";
}
} // namespace takt::io
