#pragma once
// Compiles ST texts through the one compile path (compileProgram: front end, code generator,
// program.stbc, decoded and verified Module) for back-end tests.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <cstring>

#include "support/compile_text.h"
#include "takt/bytecode/disasm.h"
#include "takt/bytecode/opcodes.h"
#include "takt/compiler/names.h"

namespace takt::compiler::test {

class Compiled {
public:
    // What `verified.ok()` and `verified.message` tell a test: decoded and verified, or why not.
    struct Verified {
        bool passed = false;
        std::string message;
        [[nodiscard]] bool ok() const { return passed; }
    };

    explicit Compiled(const std::string& text, CodegenOptions options = {}) {
        compiled = takt::test::compileText(text, options);
        const CompiledProgram& program = compiled.program;
        ok = program.ok();
        verified = {program.ok(), program.failure};
        if (program.module != nullptr) {
            module = *program.module;
        }
    }

    [[nodiscard]] std::string rendered() const { return compiled.rendered(); }

    [[nodiscard]] const bytecode::VarEntry* var(std::string_view path) const {
        for (const auto& v : module.variables) {
            if (sameName(v.path, path)) {
                return &v;
            }
        }
        return nullptr;
    }
    [[nodiscard]] std::uint32_t pou(std::string_view name) const {
        for (std::size_t i = 0; i < module.pous.size(); ++i) {
            if (sameName(module.pous[i].name, name)) {
                return static_cast<std::uint32_t>(i);
            }
        }
        return bytecode::kNone;
    }
    // The code of one POU without the header line and source comments.
    [[nodiscard]] std::string code(std::string_view name) const {
        bytecode::DisasmOptions o;
        o.sourceLines = false;
        const std::uint32_t p = pou(name);
        if (p == bytecode::kNone) {
            return "<no POU " + std::string(name) + ">";
        }
        std::string text = bytecode::disassemblePou(module, p, o);
        const std::size_t nl = text.find('\n');
        return nl == std::string::npos ? text : text.substr(nl + 1);
    }

    takt::test::CompiledText compiled;
    bytecode::Module module; // what program.stbc holds, decoded
    Verified verified;
    bool ok = false;
};

} // namespace takt::compiler::test
