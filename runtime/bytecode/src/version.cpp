#include "takt/bytecode/version.h"

namespace takt::bytecode {
const char* layerName() noexcept {
    return "takt_bytecode";
}
} // namespace takt::bytecode
