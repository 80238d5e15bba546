// libFuzzer target for the retain slot loader. Whatever the bytes, decoding must not crash.
// The raw input rarely passes the CRC, so each input is also tried with its CRC fixed up,
// which lets the fuzzer reach the entry table and the payload; an image that decodes is then
// restored into a small program, as a warm start would, under ASan/UBSan.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "takt/engine/retain.h"

namespace {

std::shared_ptr<const takt::bytecode::Module> targetModule() {
    auto m = std::make_shared<takt::bytecode::Module>();
    takt::bytecode::TypeDesc dint;
    dint.kind = takt::bytecode::ValueKind::DInt;
    dint.name = dint.signature = "DINT";
    dint.size = dint.align = 4;
    m->types.push_back(dint);
    takt::bytecode::TypeDesc fb;
    fb.kind = takt::bytecode::ValueKind::FunctionBlock;
    fb.name = fb.signature = "TON";
    fb.size = 8;
    fb.fields = {{"ET", 0, 0, false}, {"Q", 0, 4, false}};
    m->types.push_back(fb);
    // The types an online change converts into (a slot's types are read back from signatures):
    // an ENUM and a STRING[10].
    takt::bytecode::TypeDesc state;
    state.kind = takt::bytecode::ValueKind::Enum;
    state.name = "State";
    state.signature = "ENUM State(DINT){Idle=0;Heat=1;}";
    state.size = state.align = 4;
    state.element = 0;
    state.enumValues = {{"Idle", 0}, {"Heat", 1}};
    m->types.push_back(state);
    takt::bytecode::TypeDesc text;
    text.kind = takt::bytecode::ValueKind::String;
    text.name = text.signature = "STRING[10]";
    text.size = 11;
    text.stringLength = 10;
    m->types.push_back(text);
    const char* names[] = {"v0", "v1", "v2", "Main.fb", "Main.fb.ET", "Main.fb.Q", "state", "text"};
    const std::uint32_t types[] = {0, 0, 0, 1, 0, 0, 2, 3};
    const std::uint32_t offsets[] = {0, 4, 8, 12, 12, 16, 20, 24};
    for (int i = 0; i < 8; ++i) {
        m->variables.push_back(takt::bytecode::VarEntry{names[i], types[i], offsets[i], m->types[types[i]].size,
                                                        takt::bytecode::VarKind::Global, true, false});
    }
    m->globalSize = 35;
    m->initImage.assign(35, 0);
    return m;
}

void tryImage(std::span<const std::uint8_t> bytes) {
    takt::engine::RetainImage image;
    std::string error;
    if (!takt::engine::decodeRetainSlot(bytes, image, error)) {
        return;
    }
    static const std::shared_ptr<const takt::bytecode::Module> module = targetModule();
    takt::engine::LoadedProgram program(module, "");
    program.resetToInitialImage();
    (void)takt::engine::applyRetainImage(image, program);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> input(data, size);
    tryImage(input);
    constexpr std::size_t kCrcAt = 40;
    if (size >= takt::engine::kRetainHeaderSize) {
        std::vector<std::uint8_t> fixed(input.begin(), input.end());
        std::uint32_t crc = takt::engine::crc32c(std::span(fixed).first(kCrcAt));
        crc = takt::engine::crc32c(std::span(fixed).subspan(kCrcAt + 4), crc);
        for (int i = 0; i < 4; ++i) {
            fixed[kCrcAt + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(crc >> (8 * i));
        }
        tryImage(fixed);
    }
    return 0;
}
