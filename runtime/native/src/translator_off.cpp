// The native tier when takt is built without a JIT library (TAKT_NATIVE off): every program
// runs on the interpreter, and the status says why.
#include "takt/native/native.h"

namespace takt::native {

bool available() noexcept {
    return false;
}

bool translates(bytecode::Opcode /*op*/) noexcept {
    return false;
}

std::string_view libraryName() noexcept {
    return {};
}

CompileResult compile(const bytecode::Module& /*module*/, std::span<const DirectFb> /*directFbs*/,
                      std::span<const bytecode::Opcode> /*leaveToInterpreter*/) {
    CompileResult result;
    result.error = "this takt was built without the native tier (LLVM 14 not found at build time)";
    return result;
}

} // namespace takt::native
