#pragma once
// Compiles ST texts through the whole compiler (parse, analyze, generate) for back-end tests.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <cstring>

#include "takt/bytecode/disasm.h"
#include "takt/bytecode/opcodes.h"
#include "takt/bytecode/verifier.h"
#include "takt/compiler/codegen.h"
#include "takt/compiler/names.h"
#include "takt/compiler/parser.h"
#include "takt/compiler/sema.h"
#include "takt/compiler/sema/model.h"

namespace takt::compiler::test {

class Compiled {
public:
    explicit Compiled(const std::string& text, CodegenOptions options = {}) {
        const FileId id = sm.add("main.st", text);
        units.push_back(parseSource(sm.file(id), diags));
        AnalysisOptions ao;
        ao.addressMode = options.addressMode;
        analysis = analyze(units, sm, diags, ao);
        if (!diags.hasErrors()) {
            ok = generate(*analysis.model, units, sm, options, module, diags);
        }
        verified = bytecode::verify(module);
    }

    [[nodiscard]] std::string rendered() const { return renderHuman(diags.diagnostics(), sm); }

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

    SourceManager sm;
    DiagnosticSink diags;
    std::vector<ast::CompilationUnit> units;
    AnalysisResult analysis;
    bytecode::Module module;
    bytecode::VerifyResult verified;
    bool ok = false;
};

} // namespace takt::compiler::test
