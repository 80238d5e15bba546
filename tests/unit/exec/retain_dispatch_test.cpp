// RETAIN FB instances whose type dispatches (an override or an INTERFACE) across a program
// change that moves the dispatch tables: the values come back, the dispatch header does not
// (it is the new program's, so late-bound calls find the new table).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "takt/compiler/compile_program.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/project.h"
#include "takt/engine/program.h"
#include "takt/engine/retain.h"

namespace takt {
namespace {

const char* const kFbs = R"(
FUNCTION_BLOCK Other
VAR
    n : INT;
END_VAR
METHOD Bump : INT
    n := n + 1;
    Bump := n;
END_METHOD
END_FUNCTION_BLOCK

FUNCTION_BLOCK OtherChild EXTENDS Other
METHOD Bump : INT
    n := n + 1000;
    Bump := n;
END_METHOD
END_FUNCTION_BLOCK

FUNCTION Kick : INT
VAR_IN_OUT
    o : Other;
END_VAR
    Kick := o.Bump();
END_FUNCTION

PROGRAM Main
VAR RETAIN
    oc : OtherChild;
END_VAR
    Kick(oc);
END_PROGRAM
)";

// Version 2 adds an overridden method family elsewhere: one more dispatch slot, so every table
// grows and OtherChild's moves, while OtherChild's members stay as they were.
const char* const kMoreSlots = R"(
FUNCTION_BLOCK Shape
METHOD Area : INT
    Area := 0;
END_METHOD
END_FUNCTION_BLOCK

FUNCTION_BLOCK Square EXTENDS Shape
METHOD Area : INT
    Area := 4;
END_METHOD
END_FUNCTION_BLOCK
)";

std::shared_ptr<const bytecode::Module> compile(const std::string& text) {
    compiler::Project project = compiler::checkSources({{"main.st", text}});
    compiler::CompiledProgram compiled = compiler::compileProgram(project);
    EXPECT_TRUE(compiled.ok()) << compiler::renderHuman(compiled.diagnostics, *project.sources) << compiled.failure;
    return compiled.module;
}

std::uint32_t offsetOf(const bytecode::Module& m, const std::string& path) {
    for (const bytecode::VarEntry& v : m.variables) {
        if (v.path == path) {
            return v.offset;
        }
    }
    ADD_FAILURE() << "no variable " << path;
    return 0;
}

std::uint32_t u32At(const std::uint8_t* image, std::uint32_t at) {
    std::uint32_t v = 0;
    std::memcpy(&v, image + at, 4);
    return v;
}

TEST(RetainDispatch, RestoredInstanceKeepsTheNewProgramsDispatchHeader) {
    const auto v1 = compile(kFbs);
    const auto v2 = compile(std::string(kMoreSlots) + kFbs);
    ASSERT_TRUE(v1 && v2);
    engine::LoadedProgram before(v1, "");
    before.resetToInitialImage();
    const std::uint32_t oc1 = offsetOf(*v1, "Main.oc");
    const std::int16_t n = 1234;
    std::memcpy(before.image() + offsetOf(*v1, "Main.oc.n"), &n, 2);

    const engine::RetainLayout layout(*v1);
    std::vector<std::uint8_t> payload(layout.payloadSize());
    layout.capture(before.image(), payload);
    std::vector<std::uint8_t> file;
    engine::encodeRetainSlot(layout, payload, 1, file);
    engine::RetainImage saved;
    std::string error;
    ASSERT_TRUE(engine::decodeRetainSlot(file, saved, error)) << error;

    engine::LoadedProgram after(v2, "");
    after.resetToInitialImage();
    const std::uint32_t oc2 = offsetOf(*v2, "Main.oc");
    const std::uint32_t header2 = u32At(after.image(), oc2);
    ASSERT_NE(u32At(before.image(), oc1), header2) << "the change must move OtherChild's table";
    (void)engine::applyRetainImage(saved, after);
    std::int16_t restored = 0;
    std::memcpy(&restored, after.image() + offsetOf(*v2, "Main.oc.n"), 2);
    EXPECT_EQ(restored, n);
    EXPECT_EQ(u32At(after.image(), oc2), header2);
}

} // namespace
} // namespace takt
