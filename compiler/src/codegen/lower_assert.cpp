// ASSERT_* of TEST_PROGRAM / TEST_FUNCTION_BLOCK. An assertion is a check and a forward jump
// over one ASSERT_FAIL; the failing instruction records where the compared values and the
// message live, so the test report shows "expected 4, actual 3" without the VM formatting text.
#include "codegen/lower.h"
#include "sema/stdlib.h"

namespace takt::compiler::codegen {

using bc::Opcode;

namespace {

constexpr std::uint32_t kNoFormatWord = 0xFFFFFFFFu;

bc::AssertFormat formatOf(const Type* t, Calc c) {
    if (isTimeLike(t)) {
        return bc::AssertFormat::Time;
    }
    switch (c) {
    case Calc::Bool: return bc::AssertFormat::Bool;
    case Calc::I32: return bc::AssertFormat::I32;
    case Calc::U32: return bc::AssertFormat::U32;
    case Calc::I64: return bc::AssertFormat::I64;
    case Calc::U64: return bc::AssertFormat::U64;
    case Calc::F32: return bc::AssertFormat::F32;
    case Calc::F64: return bc::AssertFormat::F64;
    case Calc::Str: return bc::AssertFormat::Str;
    case Calc::WStr: return bc::AssertFormat::WStr;
    case Calc::Agg: return bc::AssertFormat::Value;
    }
    return bc::AssertFormat::None;
}

} // namespace

Value Lowerer::assertion(const ast::CallExpr& e, const sema::StdSignature& sig,
                         const std::vector<const ast::Expr*>& args, const Type* t) {
    using sema::StdOp;
    const Type* boolType = g_.model().types.get(TypeKind::Bool);
    const Value none{constant64(0), Calc::Bool, boolType};
    const std::size_t valueArgs = sig.op == StdOp::TestFinished                                 ? 0
                                  : sig.op == StdOp::AssertTrue || sig.op == StdOp::AssertFalse ? 1
                                  : sig.op == StdOp::AssertNear                                 ? 3
                                                                                                : 2;
    std::vector<std::uint32_t> pass;
    Value a = none;
    Value b = none;
    bc::AssertFormat format = bc::AssertFormat::None;
    bc::AssertKind kind = bc::AssertKind::True;
    std::uint32_t formatWord = kNoFormatWord;
    switch (sig.op) {
    case StdOp::AssertTrue:
    case StdOp::AssertFalse:
        kind = sig.op == StdOp::AssertTrue ? bc::AssertKind::True : bc::AssertKind::False;
        condJump(*args[0], sig.op == StdOp::AssertTrue, pass);
        break;
    case StdOp::TestFinished:
        // Not a check: the instruction always ends the run, and `takt test` reads its kind as a pass.
        kind = bc::AssertKind::Finished;
        break;
    case StdOp::AssertNear: {
        // |expected - actual| <= delta, computed in LREAL so REAL operands lose nothing.
        const Type* lreal = g_.model().types.get(TypeKind::LReal);
        a = eval(*args[0], lreal);
        b = eval(*args[1], lreal);
        const Value delta = eval(*args[2], lreal);
        const Operand diff = frameSlot(8, 8);
        emit(Opcode::SUB_F64, {diff, a.at, b.at});
        emit(Opcode::ABS_F64, {diff, diff});
        const Operand ok = frameSlot(4, 4);
        compareInto(ast::BinaryOp::Le, Value{diff, Calc::F64, lreal}, delta, Calc::F64, ok);
        emitJump(Opcode::JMP_T, {ok}, pass);
        format = bc::AssertFormat::F64;
        kind = bc::AssertKind::Near;
        break;
    }
    default: {
        static const ast::BinaryOp kRel[] = {ast::BinaryOp::Eq, ast::BinaryOp::Ne, ast::BinaryOp::Gt,
                                             ast::BinaryOp::Lt, ast::BinaryOp::Ge, ast::BinaryOp::Le};
        static const bc::AssertKind kKind[] = {bc::AssertKind::Equal,          bc::AssertKind::NotEqual,
                                               bc::AssertKind::Greater,        bc::AssertKind::Less,
                                               bc::AssertKind::GreaterOrEqual, bc::AssertKind::LessOrEqual};
        const StdOp order[] = {StdOp::AssertEqual, StdOp::AssertNotEqual,       StdOp::AssertGreater,
                               StdOp::AssertLess,  StdOp::AssertGreaterOrEqual, StdOp::AssertLessOrEqual};
        const Calc c = calcOf(t);
        std::size_t i = 0;
        while (i < std::size(order) && order[i] != sig.op) {
            ++i;
        }
        if (i == std::size(order) || (c == Calc::Agg && i > 1)) {
            // Sema refuses the ordering assertions on STRUCT/ARRAY (E0711); this is a backstop.
            g_.error(e.span, "standard function '" + sig.name + "' is not supported by the code generator for " +
                                 "structured values");
            return none;
        }
        a = eval(*args[0], t);
        b = eval(*args[1], t);
        kind = kKind[i];
        if (c == Calc::Agg) {
            // STRUCT/ARRAY: EQ_AGG walks the type description, so a large array costs one
            // instruction; the failure carries the type for `takt test` to find the difference.
            const std::uint32_t type = g_.typeIndex(t);
            if (type > (0xFFFFFFFFu >> bc::kAssertTypeShift)) {
                g_.error(e.span, "too many types in the program for '" + sig.name + "' on '" + t->name() + "'");
                return none;
            }
            const Operand equal = frameSlot(4, 4);
            emit(Opcode::EQ_AGG, {equal, a.at, b.at, imm(type)});
            emitJump(kind == bc::AssertKind::Equal ? Opcode::JMP_T : Opcode::JMP_F, {equal}, pass);
            format = bc::AssertFormat::Value;
            formatWord = static_cast<std::uint32_t>(format) | type << bc::kAssertTypeShift;
            break;
        }
        const Operand ok = frameSlot(4, 4);
        compareInto(kRel[i], a, b, c, ok);
        emitJump(Opcode::JMP_T, {ok}, pass);
        format = formatOf(t, c);
        if (const Type* plain = stripAlias(t); plain->kind() == TypeKind::Enum) {
            // An enumeration carries its type, so `takt test` prints Mode#Auto rather than 1.
            if (const std::uint32_t type = g_.typeIndex(plain); type <= (0xFFFFFFFFu >> bc::kAssertTypeShift)) {
                format = bc::AssertFormat::Value;
                formatWord = static_cast<std::uint32_t>(format) | type << bc::kAssertTypeShift;
            }
        }
        break;
    }
    }
    // The optional trailing MESSAGE (STRING or WSTRING); an absent one reads as "" (constant 0).
    Operand message = constant64(0);
    std::uint32_t kindWord = static_cast<std::uint32_t>(kind);
    if (args.size() > valueArgs) {
        const ast::Expr& m = *args[valueArgs];
        const Value mv = eval(m, m.type);
        message = mv.at;
        if (mv.calc == Calc::WStr) {
            kindWord |= bc::kAssertWideMessage;
        }
    }
    debugAt(e.span);
    if (formatWord == kNoFormatWord) {
        formatWord = static_cast<std::uint32_t>(format);
    }
    emit(Opcode::ASSERT_FAIL, {a.at, b.at, message, imm(formatWord), imm(kindWord)});
    patch(pass, here());
    return none;
}

} // namespace takt::compiler::codegen
