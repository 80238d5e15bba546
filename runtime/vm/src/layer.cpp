#include "takt/vm/layer.h"

namespace takt::vm {
const char* layerName() noexcept {
    return "takt_vm";
}
} // namespace takt::vm
