#include "takt/compiler/ast.h"

namespace takt::compiler::ast {

// The sizes the front end's memory figure rests on (docs/performance.md, memory), on the 64-bit
// targets takt builds for: a new member that breaks one costs bytes on every node of its kind.
static_assert(sizeof(Expr) == 32 && sizeof(BinaryExpr) == 48 && sizeof(LiteralExpr) == 96);
static_assert(sizeof(AssignStmt) == 40);

StructTypeSpec::StructTypeSpec(Span s) : TypeSpec(TypeSpecKind::Struct, s) {}
StructTypeSpec::~StructTypeSpec() = default;

const char* binaryOpText(BinaryOp op) {
    switch (op) {
    case BinaryOp::Or: return "OR";
    case BinaryOp::Xor: return "XOR";
    case BinaryOp::And: return "AND";
    case BinaryOp::Eq: return "=";
    case BinaryOp::Ne: return "<>";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "MOD";
    case BinaryOp::Pow: return "**";
    case BinaryOp::AndThen: return "AND_THEN";
    case BinaryOp::OrElse: return "OR_ELSE";
    }
    return "?";
}

const char* sectionKeyword(VarSection s) {
    switch (s) {
    case VarSection::Var: return "VAR";
    case VarSection::Temp: return "VAR_TEMP";
    case VarSection::Input: return "VAR_INPUT";
    case VarSection::Output: return "VAR_OUTPUT";
    case VarSection::InOut: return "VAR_IN_OUT";
    case VarSection::Global: return "VAR_GLOBAL";
    case VarSection::External: return "VAR_EXTERNAL";
    case VarSection::Access: return "VAR_ACCESS";
    case VarSection::Config: return "VAR_CONFIG";
    case VarSection::Static: return "VAR_STAT";
    }
    return "VAR";
}

const char* pouKeyword(PouKind k) {
    switch (k) {
    case PouKind::Program: return "PROGRAM";
    case PouKind::Function: return "FUNCTION";
    case PouKind::FunctionBlock: return "FUNCTION_BLOCK";
    case PouKind::Method: return "METHOD";
    case PouKind::TestProgram: return "TEST_PROGRAM";
    case PouKind::TestFunctionBlock: return "TEST_FUNCTION_BLOCK";
    }
    return "POU";
}

std::string QualifiedName::text() const {
    std::string out;
    for (const Identifier& part : parts) {
        if (!out.empty()) {
            out += '.';
        }
        out += part.name;
    }
    return out;
}

std::string Address::text() const {
    std::string out = "%";
    out += area == AddressArea::Input ? 'I' : area == AddressArea::Output ? 'Q' : 'M';
    switch (size) {
    case AddressSize::Bit: out += 'X'; break;
    case AddressSize::Byte: out += 'B'; break;
    case AddressSize::Word: out += 'W'; break;
    case AddressSize::DWord: out += 'D'; break;
    case AddressSize::LWord: out += 'L'; break;
    case AddressSize::None: break;
    }
    if (wildcard) {
        out += '*';
        return out;
    }
    for (std::size_t i = 0; i < indices.size(); ++i) {
        if (i > 0) {
            out += '.';
        }
        out += std::to_string(indices[i]);
    }
    return out;
}

} // namespace takt::compiler::ast
