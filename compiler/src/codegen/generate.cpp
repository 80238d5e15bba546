// Entry point of the back end: layout first (the image offsets every instruction refers to),
// then the initial image, then the code.
#include <algorithm>

#include "codegen/codegen_internal.h"

namespace takt::compiler {

namespace {

void checkSizes(const bytecode::Module& m, DiagnosticSink& diags, bool& failed) {
    const std::uint64_t total = std::uint64_t{m.constSize} + m.globalSize + m.stackSize;
    if (total >= (1ull << 30)) {
        diags.report(DiagCode::ImageTooLarge, Span{},
                     "the data image needs " + std::to_string(total) + " bytes, more than the VM can address");
        failed = true;
    }
}

} // namespace

bool codegen::Generator::run() {
    out_ = bytecode::Module{};
    out_.overflowTrap = options_.overflowTrap;
    out_.stackSize = options_.stackSize;
    for (std::size_t i = 0; i < sm_.size(); ++i) {
        out_.files.push_back(sm_.file(static_cast<FileId>(i)).path());
    }
    collectTypeInits();
    for (const Symbol* p : model_.pous) {
        pouIndex(p);
    }
    layoutConstants();
    layoutGlobals();
    layoutPrograms();
    layoutTasks();
    layoutAccess();
    checkSizes(out_, diags_, failed);
    if (failed) {
        return false;
    }
    std::vector<std::uint8_t> globals(std::size_t{out_.constSize} + out_.globalSize, 0);
    image = &globals;
    for (const Symbol* g : model_.globals) {
        if (auto it = globalOffset.find(g); it != globalOffset.end()) {
            writeInitial(g->type, g->init, it->second, InitContext{g->declScope, nullptr, 0});
        }
    }
    for (std::size_t i = 0; i < out_.programs.size(); ++i) {
        writeInitial(programPous[i]->type, nullptr, out_.programs[i].offset, InitContext{});
    }
    generateCode();
    lowerProgramArguments();
    assignTaskIo();
    finish(globals);
    checkSizes(out_, diags_, failed);
    return !failed;
}

// Places the constants before the globals and shifts every globals-region offset past them.
void codegen::Generator::finish(const std::vector<std::uint8_t>& globals) {
    const std::uint32_t provisional = out_.constSize;
    const std::uint32_t constSize = alignUp(8 + static_cast<std::uint32_t>(pool.size()), 8);
    const std::uint32_t shift = constSize - provisional;
    out_.constSize = constSize;
    out_.initImage.assign(std::size_t{constSize} + out_.globalSize, 0);
    std::copy(pool.begin(), pool.end(), out_.initImage.begin() + 8);
    std::copy(globals.begin() + provisional, globals.end(), out_.initImage.begin() + constSize);
    for (std::uint32_t at : globalFixups) {
        out_.code[at] += shift;
    }
    for (auto& v : out_.variables) {
        v.offset += shift;
    }
    for (auto& io : out_.io) {
        io.imageOffset += shift;
    }
    for (auto& p : out_.programs) {
        p.offset += shift;
    }
    for (auto& t : out_.tasks) {
        if (t.singleOffset != bytecode::kNone) {
            t.singleOffset += shift;
        }
    }
    for (auto& a : out_.access) {
        a.offset += shift;
    }
    std::stable_sort(
        out_.debug.begin(), out_.debug.end(),
        [](const bytecode::DebugEntry& a, const bytecode::DebugEntry& b) { return a.codeOffset < b.codeOffset; });
}

bool generate(const SemanticModel& model, std::vector<ast::CompilationUnit>& units, const SourceManager& sm,
              const CodegenOptions& options, bytecode::Module& out, DiagnosticSink& diags) {
    codegen::Generator g(model, units, sm, options, out, diags);
    return g.run();
}

} // namespace takt::compiler
