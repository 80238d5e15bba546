#pragma once
// The compiler back end: lowers the checked AST of a whole project (after analyze()) to a
// bytecode::Module — the data image layout, the symbol tables the runtime uses for online
// change, retain, I/O and the harness, and the type-specialised instruction stream.
#include <string>
#include <vector>

#include "takt/bytecode/module.h"
#include "takt/compiler/ast.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/sema.h"

namespace takt::compiler {

class SemanticModel;

struct CodegenOptions {
    bool overflowTrap = false;                   // runtime.toml [build] overflow = "trap"
    AddressMode addressMode = AddressMode::Word; // runtime.toml [build] address_mode
    std::uint32_t stackSize = 64 * 1024;         // call stack reserved after the globals (bytes)
};

// Fills `out` from a model without errors. Returns false (with diagnostics) when a construct
// cannot be compiled; `out` is then incomplete and must not be run.
[[nodiscard]] bool generate(const SemanticModel& model, std::vector<ast::CompilationUnit>& units,
                            const SourceManager& sm, const CodegenOptions& options, bytecode::Module& out,
                            DiagnosticSink& diags);

// Byte offset of a direct address in its process-image area under an address mode
// (word mode: %IW w = bytes 2w.., %ID d = 4d.., %IL l = 8l..; byte mode: the index is the byte).
[[nodiscard]] std::uint32_t addressByteOffset(const ast::Address& address, AddressMode mode);

} // namespace takt::compiler
