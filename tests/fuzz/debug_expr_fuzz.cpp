// libFuzzer target: the debugger's expressions (watch, hover, the console) on arbitrary text,
// compiled in the scope of an FB, of a FUNCTION (its frame's variables, a VAR_IN_OUT) and of a
// program of a fixed compiled program, then run on a zeroed image of its size with the instance
// and the frame where they lie; and the same text as a breakpoint's
// hit condition, and as a condition and a logpoint's message. None may crash, read outside the image or disagree with
// itself: a compiled expression runs to a value or a coded fault, and its stack stays within the depth it counted.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "control/debug_expr.h"
#include "takt/bytecode/value_kind.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/project.h"
#include "takt/vm/debug.h"

namespace {

constexpr const char* kProgram = R"ST(
TYPE
    Mode : (Idle, Run, Stop);
    Point : STRUCT x : INT; y : REAL; END_STRUCT;
END_TYPE
VAR_GLOBAL
    gMode : Mode := Run;
    gCount : DINT;
    gPoints : ARRAY[1..4, 0..2] OF Point;
    gBits : WORD;
END_VAR
FUNCTION_BLOCK Accum
    VAR_INPUT x : DINT; END_VAR
    VAR_OUTPUT total : LREAL; END_VAR
    VAR calls : UINT; last : TIME; name : STRING; END_VAR
    calls := calls + 1;
    total := total + x;
END_FUNCTION_BLOCK
FUNCTION Scale : REAL
    VAR_INPUT x : INT; END_VAR
    VAR_IN_OUT p : Point; END_VAR
    VAR k : REAL := 2.0; tmp : ARRAY[0..3] OF DINT; END_VAR
    p.x := x;
    Scale := k * x;
END_FUNCTION
PROGRAM Main
    VAR acc : Accum; i : INT; values : ARRAY[0..9] OF SINT; pt : Point; r : REAL; END_VAR
    FOR i := 0 TO 9 DO acc(x := i); r := Scale(x := i, p := pt); END_FOR;
END_PROGRAM
)ST";

void require(bool ok) {
    if (!ok) {
        std::abort();
    }
}

struct Fixture {
    takt::compiler::CompiledProgram compiled;
    std::uint32_t fb = takt::bytecode::kNone;
    std::uint32_t function = takt::bytecode::kNone;
    std::uint32_t program = takt::bytecode::kNone;
    std::uint32_t accOffset = 0;
    std::uint32_t mainOffset = 0;
    std::uint32_t ptOffset = 0;
    std::uint32_t inOutSlot = takt::bytecode::kNone; // Scale's VAR_IN_OUT p, in its frame
    Fixture() {
        takt::compiler::Project project = takt::compiler::checkSources({{"main.st", kProgram}});
        compiled = takt::compiler::compileProgram(project);
        require(compiled.ok());
        const takt::bytecode::Module& m = *compiled.module;
        for (std::uint32_t i = 0; i < m.pous.size(); ++i) {
            fb = m.pous[i].name == "Accum" ? i : fb;
            function = m.pous[i].name == "Scale" ? i : function;
            program = m.pous[i].name == "Main" ? i : program;
        }
        for (const takt::bytecode::VarEntry& v : m.variables) {
            accOffset = v.path == "Main.acc" ? v.offset : accOffset;
            ptOffset = v.path == "Main.pt" ? v.offset : ptOffset;
        }
        mainOffset = m.programs.front().offset;
        for (const takt::bytecode::FrameVar& v : m.pous[function].frame) {
            inOutSlot = v.kind == takt::bytecode::VarKind::InOut ? v.offset : inOutSlot;
        }
        require(fb != takt::bytecode::kNone && function != takt::bytecode::kNone && program != takt::bytecode::kNone &&
                accOffset != 0 && ptOffset != 0 && inOutSlot != takt::bytecode::kNone);
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const Fixture f;
    const takt::bytecode::Module& m = *f.compiled.module;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // The frame at the start of the stack, its VAR_IN_OUT bound to Main.pt as a call binds it (a
    // slot holding 0 refers to nothing: eval refuses it).
    std::vector<std::uint8_t> image(std::size_t{m.constSize} + m.globalSize + m.stackSize, 0);
    const std::uint32_t frame = m.constSize + m.globalSize;
    std::memcpy(image.data() + frame + f.inOutSlot, &f.ptOffset, 4);
    std::string why;
    for (const auto& [pou, self, path] :
         {std::tuple{f.fb, f.accOffset, "Main.acc"}, std::tuple{f.function, 0U, ""},
          std::tuple{f.program, f.mainOffset, "Main"}, std::tuple{takt::bytecode::kNone, 0U, ""}}) {
        const takt::vm::ExprScope at{image.data(), static_cast<std::uint32_t>(image.size()), self, frame};
        // As a breakpoint's condition or a logpoint's part: an elementary value, loaded.
        takt::agent::CompiledExpr v;
        takt::agent::ExprError verror;
        if (takt::agent::compileDebugExpr(m, pou, "", text, v, verror, true)) {
            require(!v.place && takt::bytecode::elementaryWidth(v.code.kind) != 0 &&
                    v.code.depth <= takt::vm::kMaxExprDepth);
            takt::vm::ExprSlot out{0};
            const takt::vm::ExprStatus s = takt::vm::eval(v.code, at, out);
            require(s != takt::vm::ExprStatus::Invalid && s != takt::vm::ExprStatus::OutsideImage);
        } else {
            require(!verror.code.empty() && verror.column >= 1 && verror.column <= size + 1);
        }
        takt::agent::CompiledExpr e;
        takt::agent::ExprError error;
        if (!takt::agent::compileDebugExpr(m, pou, path, text, e, error)) {
            require(!error.code.empty() && error.column >= 1 && error.column <= size + 1);
            continue;
        }
        require(e.code.depth <= takt::vm::kMaxExprDepth);
        takt::vm::ExprSlot out{0};
        const takt::vm::ExprStatus s = takt::vm::eval(e.code, at, out);
        require(s != takt::vm::ExprStatus::Invalid && s != takt::vm::ExprStatus::OutsideImage);
        if (s == takt::vm::ExprStatus::Ok && e.place) {
            require(out.u + m.types[e.type].size <= image.size());
        }
    }
    // As a log message: its pieces put together again are the text, each part's column its '{'.
    std::vector<std::string> texts;
    std::vector<std::pair<std::string, std::uint32_t>> parts;
    if (takt::agent::splitLogMessage(text, texts, parts, why)) {
        require(texts.size() == parts.size() + 1 && parts.size() <= takt::vm::kMaxLogParts);
        std::string joined = texts.front();
        for (std::size_t i = 0; i < parts.size(); ++i) {
            require(text[parts[i].second - 1] == '{' && parts[i].second == joined.size() + 1);
            joined += "{" + parts[i].first + "}" + texts[i + 1];
        }
        require(joined == text);
    } else {
        require(why.starts_with("log message"));
    }
    why.clear();
    takt::vm::HitCondition hit;
    if (!takt::vm::parseHitCondition(text, hit, why)) {
        require(why.starts_with("hit condition"));
    }
    return 0;
}
