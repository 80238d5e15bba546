// The debugger's ST expressions (debug_expr.h): the compiler's parser gives the syntax tree; this
// file resolves its names against the running module and types it, emitting vm::DebugExpr code.
#include "control/debug_expr.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "takt/bytecode/value_kind.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/names.h"
#include "takt/compiler/parse_expression.h"
#include "takt/compiler/source.h"
#include "takt/vm/debug.h"

namespace takt::agent {

namespace {

using bytecode::kNone;
using bytecode::ValueKind;
using vm::ExprInstr;
using vm::ExprOp;

using compiler::sameName;

// A compiled subexpression: its code, and what it stands for.
struct Typed {
    std::vector<ExprInstr> code;
    ValueKind kind = ValueKind::Bool; // a value's kind (an enum's or subrange's: its base kind)
    std::uint32_t type = kNone;       // the declared type (places, enum literals)
    bool place = false;               // code leaves an address
    bool literal = false;             // an untyped numeric literal: takes its partner's kind
    std::uint32_t bit = 0;            // a place's bit (w.3)
    std::string path;                 // a place's variable path when static
    bool framePath = false;           // `path` resolves in the halted frame only (a frame variable, an in-out)
    // A place's address when known without running the code (no computed index, every in-out's
    // slot read): `at` from `base`.
    bool fixed = false;
    ExprRead::Base base = ExprRead::Base::Absolute;
    std::uint32_t at = 0;
};

class Compiler {
public:
    Compiler(const bytecode::Module& m, std::uint32_t pou, const std::string& instancePath,
             const compiler::SourceFile& src, const SlotReader& slots)
        : m_(m), src_(src), instancePath_(instancePath), slots_(slots) {
        if (pou < m.pous.size()) {
            instanceType_ = m.pous[pou].instanceType;
            pouName_ = m.pous[pou].name;
            pou_ = &m.pous[pou];
        }
    }

    bool failed() const { return !error_.code.empty(); }
    const ExprError& error() const { return error_; }
    std::vector<ExprRead>& reads() { return reads_; }

    Typed compile(const compiler::ast::Expr& e);
    // A place's value: its scalar loaded (an error for a STRUCT, an array, a string …).
    void load(Typed& t, const compiler::ast::Expr& at);

private:
    Typed fail(compiler::DiagCode code, const compiler::Span& at, std::string message) {
        if (!failed()) {
            error_.code = std::string(compiler::diagInfo(code).code);
            error_.column = src_.lineCol(at.begin).column;
            error_.message = std::move(message);
        }
        return {};
    }
    std::string text(const compiler::Span& s) const {
        return std::string(src_.text().substr(s.begin, s.end - s.begin));
    }
    // The scalar kind a value of `type` is computed in (an enum's or subrange's base); Struct & co
    // when it has none.
    ValueKind scalarOf(std::uint32_t type) const {
        ValueKind k = m_.types[type].kind;
        std::uint32_t t = type;
        while ((k == ValueKind::Enum || k == ValueKind::Subrange) && m_.types[t].element < m_.types.size()) {
            t = m_.types[t].element;
            k = m_.types[t].kind;
        }
        return k == ValueKind::Enum ? ValueKind::Int : k;
    }
    Typed placeOf(ExprOp op, std::uint32_t offset, std::uint32_t type, std::string path) {
        Typed t;
        t.code.push_back(ExprInstr{op, ValueKind::Bool, ValueKind::Bool, offset, 0, 0, {0}});
        t.place = true;
        t.type = type;
        t.kind = scalarOf(type);
        t.path = std::move(path);
        t.fixed = true;
        t.base = op == ExprOp::AddrThis    ? ExprRead::Base::This
                 : op == ExprOp::AddrFrame ? ExprRead::Base::Frame
                                           : ExprRead::Base::Absolute;
        t.at = offset;
        reads_.push_back(ExprRead{t.base, offset, m_.types[type].size});
        return t;
    }
    // A VAR_IN_OUT's slot `t` (written at `at`) becomes what it refers to: the slot read when
    // `slots_` can (a halted frame's expression, which fails without it).
    void deref(Typed& t, const compiler::Span& at);
    Typed frameVariable(std::size_t index, const compiler::Span& at);
    Typed name(const compiler::ast::NameExpr& n);
    Typed member(const compiler::ast::MemberExpr& e);
    Typed index(const compiler::ast::IndexExpr& e);
    Typed literal(const compiler::ast::LiteralExpr& l);
    Typed enumLiteral(const compiler::ast::EnumLiteralExpr& e);
    Typed unary(const compiler::ast::UnaryExpr& e);
    Typed binary(const compiler::ast::BinaryExpr& e);
    // Both operands in one kind (the wider, as the compiler widens implicitly); false when they
    // have none in common.
    bool unify(Typed& a, Typed& b, ValueKind& kind);
    static void convert(Typed& t, ValueKind to) {
        if (t.kind != to) {
            t.code.push_back(ExprInstr{ExprOp::Convert, to, t.kind, 0, 0, 0, {0}});
            t.kind = to;
        }
    }

    const bytecode::Module& m_;
    const compiler::SourceFile& src_;
    std::string instancePath_;
    const SlotReader& slots_;
    const bytecode::PouEntry* pou_ = nullptr;
    std::uint32_t instanceType_ = kNone;
    std::string pouName_;
    ExprError error_;
    std::vector<ExprRead> reads_;
};

bool isInteger(ValueKind k) {
    return bytecode::elementaryWidth(k) != 0 && !vm::isRealKind(k) && k != ValueKind::Bool && k != ValueKind::Char &&
           k != ValueKind::WChar && !(k >= ValueKind::Time && k <= ValueKind::Ldt);
}
bool isTime(ValueKind k) {
    return k >= ValueKind::Time && k <= ValueKind::Ldt;
}
bool isBitString(ValueKind k) {
    return k == ValueKind::Byte || k == ValueKind::Word || k == ValueKind::DWord || k == ValueKind::LWord;
}

Typed Compiler::compile(const compiler::ast::Expr& e) {
    namespace ast = compiler::ast;
    using compiler::DiagCode;
    if (failed()) {
        return {};
    }
    switch (e.kind) {
    case ast::ExprKind::Paren: return compile(*static_cast<const ast::ParenExpr&>(e).inner);
    case ast::ExprKind::Name: return name(static_cast<const ast::NameExpr&>(e));
    case ast::ExprKind::Member: return member(static_cast<const ast::MemberExpr&>(e));
    case ast::ExprKind::Index: return index(static_cast<const ast::IndexExpr&>(e));
    case ast::ExprKind::Literal: return literal(static_cast<const ast::LiteralExpr&>(e));
    case ast::ExprKind::EnumLiteral: return enumLiteral(static_cast<const ast::EnumLiteralExpr&>(e));
    case ast::ExprKind::Unary: return unary(static_cast<const ast::UnaryExpr&>(e));
    case ast::ExprKind::Binary: return binary(static_cast<const ast::BinaryExpr&>(e));
    case ast::ExprKind::BitAccess: {
        const auto& b = static_cast<const ast::BitAccessExpr&>(e);
        Typed t = compile(*b.object);
        if (failed()) {
            return {};
        }
        if (!t.place || !isBitString(t.kind) || b.bit >= bytecode::elementaryWidth(t.kind) * 8) {
            return fail(DiagCode::InvalidOperand, e.span,
                        fmt::format("'{}' is no bit of a bit string variable", text(e.span)));
        }
        t.code.push_back(ExprInstr{ExprOp::AddrField, ValueKind::Bool, ValueKind::Bool, b.bit / 8, 0, 0, {0}});
        t.at += b.bit / 8;
        t.bit = b.bit % 8;
        t.kind = ValueKind::Bool;
        t.type = kNone;
        if (!t.path.empty()) {
            t.path += fmt::format(".{}", b.bit);
        }
        return t;
    }
    case ast::ExprKind::Call:
        return fail(DiagCode::CodegenUnsupported, e.span,
                    fmt::format("'{}' is a call: the debugger evaluates no call, as an FB or function call could "
                                "change the program's state",
                                text(e.span)));
    default:
        return fail(DiagCode::CodegenUnsupported, e.span,
                    fmt::format("'{}': the debugger evaluates variables, literals and operators only", text(e.span)));
    }
}

// A variable of the frame, by its index in PouEntry::frame: its place, or for a VAR_IN_OUT the
// place its slot refers to (the slot read, then what it holds, when the referent is known).
Typed Compiler::frameVariable(std::size_t index, const compiler::Span& at) {
    const bytecode::FrameVar& v = pou_->frame[index];
    Typed t = placeOf(ExprOp::AddrFrame, v.offset, v.type, v.name);
    t.framePath = true;
    if (v.kind == bytecode::VarKind::InOut) {
        deref(t, at);
    }
    return t;
}

void Compiler::deref(Typed& t, const compiler::Span& at) {
    const std::uint32_t slotType = t.type;
    const std::uint32_t target = m_.types[slotType].element;
    t.code.push_back(ExprInstr{ExprOp::Deref, ValueKind::Bool, ValueKind::Bool, 0, 0, 0, {0}});
    t.type = target;
    t.kind = scalarOf(target);
    t.framePath = true;
    if (!slots_) {
        t.fixed = false; // a condition: the running code reads the slot
        return;
    }
    // The expression runs on a copy of what it reads: the referent must be known to be copied.
    std::uint32_t referent = 0;
    if (!t.fixed) {
        fail(compiler::DiagCode::InvalidOperand, at,
             fmt::format("'{}' is a VAR_IN_OUT reached through a computed index: name the element", text(at)));
        return;
    }
    if (!slots_(t.base, t.at, slotType, referent)) {
        fail(compiler::DiagCode::InvalidOperand, at,
             fmt::format("the VAR_IN_OUT '{}' refers to no variable here: no call has bound it yet, or the call "
                         "that did has returned",
                         text(at)));
        return;
    }
    t.base = ExprRead::Base::Absolute;
    t.at = referent;
    reads_.push_back(ExprRead{t.base, referent, m_.types[target].size});
}

Typed Compiler::name(const compiler::ast::NameExpr& n) {
    const std::string& id = n.name.name;
    if (const bytecode::FrameVar* v = pou_ != nullptr ? frameVarNamed(*pou_, id) : nullptr;
        v != nullptr && v->type < m_.types.size() &&
        (v->kind != bytecode::VarKind::InOut || m_.types[v->type].element < m_.types.size())) {
        return frameVariable(static_cast<std::size_t>(v - pou_->frame.data()), n.span);
    }
    if (instanceType_ < m_.types.size()) {
        for (const bytecode::FieldDesc& f : m_.types[instanceType_].fields) {
            if (sameName(f.name, id)) {
                Typed t = placeOf(ExprOp::AddrThis, f.offset, f.type,
                                  instancePath_.empty() ? std::string() : instancePath_ + "." + f.name);
                if (inOutMember(m_, instanceType_, f) && m_.types[f.type].element < m_.types.size()) {
                    deref(t, n.span);
                }
                return t;
            }
        }
    }
    for (const bytecode::ProgramInstance& p : m_.programs) {
        if (sameName(p.name, id) && p.pou < m_.pous.size() && m_.pous[p.pou].instanceType < m_.types.size()) {
            return placeOf(ExprOp::AddrAbs, p.offset, m_.pous[p.pou].instanceType, p.name);
        }
    }
    for (const bytecode::VarEntry& v : m_.variables) {
        if ((v.kind == bytecode::VarKind::Global || v.kind == bytecode::VarKind::Constant) &&
            v.path.find('.') == std::string::npos && sameName(v.path, id)) {
            return placeOf(ExprOp::AddrAbs, v.offset, v.type, v.path);
        }
    }
    return fail(compiler::DiagCode::UnknownIdentifier, n.span,
                pouName_.empty() ? fmt::format("no global variable '{}'", id)
                                 : fmt::format("no variable '{}' in the scope of {}", id, pouName_));
}

Typed Compiler::member(const compiler::ast::MemberExpr& e) {
    Typed t = compile(*e.object);
    if (failed()) {
        return {};
    }
    const ValueKind k = t.type < m_.types.size() ? m_.types[t.type].kind : ValueKind::Bool;
    if (!t.place || (k != ValueKind::Struct && k != ValueKind::FunctionBlock && k != ValueKind::Program)) {
        return fail(compiler::DiagCode::UnknownMember, e.member.span,
                    fmt::format("'{}' has no members", text(e.object->span)));
    }
    for (const bytecode::FieldDesc& f : m_.types[t.type].fields) {
        if (sameName(f.name, e.member.name)) {
            const std::uint32_t owner = t.type;
            t.code.push_back(ExprInstr{ExprOp::AddrField, ValueKind::Bool, ValueKind::Bool, f.offset, 0, 0, {0}});
            t.type = f.type;
            t.kind = scalarOf(f.type);
            t.at += f.offset;
            if (!t.path.empty()) {
                t.path += "." + f.name;
            }
            if (k != ValueKind::Struct && inOutMember(m_, owner, f) && m_.types[f.type].element < m_.types.size()) {
                deref(t, e.span);
            }
            return t;
        }
    }
    return fail(compiler::DiagCode::UnknownMember, e.member.span,
                fmt::format("{} has no member '{}'", m_.types[t.type].name, e.member.name));
}

Typed Compiler::index(const compiler::ast::IndexExpr& e) {
    Typed t = compile(*e.array);
    if (failed()) {
        return {};
    }
    if (!t.place || t.type >= m_.types.size() || m_.types[t.type].kind != ValueKind::Array) {
        return fail(compiler::DiagCode::InvalidOperand, e.array->span,
                    fmt::format("'{}' is no array", text(e.array->span)));
    }
    const bytecode::TypeDesc& a = m_.types[t.type];
    const std::size_t dims = a.bounds.size() / 2;
    if (e.indices.size() != dims || a.element >= m_.types.size()) {
        return fail(compiler::DiagCode::InvalidOperand, e.span,
                    fmt::format("'{}' has {} dimension(s)", text(e.array->span), dims));
    }
    // Row-major: the stride of a dimension is the element size times the lengths after it.
    std::vector<std::uint64_t> strides(dims, m_.types[a.element].size);
    for (std::size_t d = dims; d-- > 1;) {
        strides[d - 1] = strides[d] * static_cast<std::uint64_t>(a.bounds[2 * d + 1] - a.bounds[2 * d] + 1);
    }
    bool staticIndex = true;
    std::string indices;
    for (std::size_t d = 0; d < dims; ++d) {
        Typed i = compile(*e.indices[d]);
        if (failed()) {
            return {};
        }
        if (i.place) {
            load(i, *e.indices[d]);
        }
        if (failed() || !isInteger(i.kind)) {
            return fail(compiler::DiagCode::TypeMismatch, e.indices[d]->span,
                        fmt::format("the index '{}' is no integer", text(e.indices[d]->span)));
        }
        convert(i, ValueKind::LInt);
        staticIndex = staticIndex && i.code.size() == 1 && i.code[0].op == ExprOp::Const;
        if (staticIndex) {
            indices += fmt::format("{}{}", d == 0 ? "" : ",", i.code[0].imm.i);
            const std::int64_t at = i.code[0].imm.i;
            // Out of bounds, eval refuses it; the place is not known without running.
            staticIndex = at >= a.bounds[2 * d] && at <= a.bounds[2 * d + 1];
            t.at += static_cast<std::uint32_t>(static_cast<std::uint64_t>(at - a.bounds[2 * d]) * strides[d]);
        }
        t.code.insert(t.code.end(), i.code.begin(), i.code.end());
        t.code.push_back(ExprInstr{ExprOp::AddrIndex,
                                   ValueKind::LInt,
                                   ValueKind::LInt,
                                   static_cast<std::uint32_t>(strides[d]),
                                   a.bounds[2 * d],
                                   a.bounds[2 * d + 1],
                                   {0}});
    }
    t.type = a.element;
    t.kind = scalarOf(a.element);
    t.path = staticIndex && !t.path.empty() ? t.path + "[" + indices + "]" : std::string();
    t.fixed = t.fixed && staticIndex;
    return t;
}

Typed Compiler::literal(const compiler::ast::LiteralExpr& l) {
    using compiler::ast::LiteralKind;
    Typed t;
    ExprInstr c{ExprOp::Const, ValueKind::LInt, ValueKind::LInt, 0, 0, 0, {0}};
    switch (l.literalKind) {
    case LiteralKind::Bool:
        c.kind = ValueKind::Bool;
        c.imm.u = l.boolValue ? 1 : 0;
        break;
    case LiteralKind::Int:
        c.imm.u = l.negative ? 0 - l.intValue : l.intValue;
        c.kind = l.negative ? ValueKind::LInt : (l.intValue > INT64_MAX ? ValueKind::ULInt : ValueKind::LInt);
        t.literal = true;
        break;
    case LiteralKind::Real:
        c.kind = ValueKind::LReal;
        c.imm.d = l.realValue;
        t.literal = true;
        break;
    case LiteralKind::Time:
    case LiteralKind::Date:
    case LiteralKind::Tod:
    case LiteralKind::Dt:
        c.kind = l.literalKind == LiteralKind::Time   ? ValueKind::Time
                 : l.literalKind == LiteralKind::Date ? ValueKind::Date
                 : l.literalKind == LiteralKind::Tod  ? ValueKind::Tod
                                                      : ValueKind::Dt;
        c.imm.i = l.nanos;
        break;
    default:
        return fail(compiler::DiagCode::CodegenUnsupported, l.span,
                    fmt::format("'{}': the debugger compares no strings", text(l.span)));
    }
    // A typed literal (INT#5, LTIME#1s) is of its type.
    if (l.typePrefix != nullptr) {
        for (std::uint32_t k = 0; k < static_cast<std::uint32_t>(bytecode::kValueKindCount); ++k) {
            const auto kind = static_cast<ValueKind>(k);
            for (const bytecode::TypeDesc& d : m_.types) {
                if (d.kind == kind && sameName(d.name, l.typePrefix->name) && bytecode::elementaryWidth(kind) != 0) {
                    t.code.push_back(c);
                    t.kind = c.kind;
                    t.literal = false;
                    convert(t, kind);
                    return t;
                }
            }
        }
    }
    t.code.push_back(c);
    t.kind = c.kind;
    return t;
}

Typed Compiler::enumLiteral(const compiler::ast::EnumLiteralExpr& e) {
    for (std::uint32_t i = 0; i < m_.types.size(); ++i) {
        const bytecode::TypeDesc& d = m_.types[i];
        if (d.kind != ValueKind::Enum || !sameName(d.name, e.typeName.name)) {
            continue;
        }
        for (const bytecode::EnumValueDesc& v : d.enumValues) {
            if (sameName(v.name, e.value.name)) {
                Typed t;
                t.kind = scalarOf(i);
                t.type = i;
                ExprInstr c{ExprOp::Const, t.kind, t.kind, 0, 0, 0, {0}};
                c.imm.i = v.value;
                t.code.push_back(c);
                return t;
            }
        }
        return fail(compiler::DiagCode::UnknownIdentifier, e.value.span,
                    fmt::format("{} has no value '{}'", d.name, e.value.name));
    }
    return fail(compiler::DiagCode::UnknownType, e.typeName.span,
                fmt::format("the program has no enumerated type '{}'", e.typeName.name));
}

void Compiler::load(Typed& t, const compiler::ast::Expr& at) {
    if (!t.place) {
        return;
    }
    if (bytecode::elementaryWidth(t.kind) == 0) {
        (void)fail(compiler::DiagCode::InvalidOperand, at.span,
                   fmt::format("'{}' is of type {}: an operator needs an elementary value", text(at.span),
                               t.type < m_.types.size() ? m_.types[t.type].name : std::string("?")));
        return;
    }
    t.code.push_back(ExprInstr{ExprOp::Load, t.kind, t.kind, t.bit, 0, 0, {0}});
    t.place = false;
}

Typed Compiler::unary(const compiler::ast::UnaryExpr& e) {
    Typed t = compile(*e.operand);
    load(t, *e.operand);
    if (failed()) {
        return {};
    }
    using compiler::ast::UnaryOp;
    if (e.op == UnaryOp::Plus) {
        return t;
    }
    const bool ok = e.op == UnaryOp::Not ? (t.kind == ValueKind::Bool || isBitString(t.kind) || isInteger(t.kind))
                                         : (bytecode::isSignedKind(t.kind) || vm::isRealKind(t.kind) || t.literal);
    if (!ok || (t.type != kNone && m_.types[t.type].kind == ValueKind::Enum)) {
        return fail(
            compiler::DiagCode::InvalidOperand, e.span,
            fmt::format("{} is not defined for '{}'", e.op == UnaryOp::Not ? "NOT" : "-", text(e.operand->span)));
    }
    t.code.push_back(ExprInstr{e.op == UnaryOp::Not ? ExprOp::Not : ExprOp::Neg, t.kind, t.kind, 0, 0, 0, {0}});
    t.type = kNone;
    return t;
}

bool Compiler::unify(Typed& a, Typed& b, ValueKind& kind) {
    const bool aEnum = a.type < m_.types.size() && m_.types[a.type].kind == ValueKind::Enum;
    const bool bEnum = b.type < m_.types.size() && m_.types[b.type].kind == ValueKind::Enum;
    if (aEnum || bEnum) {
        kind = a.kind;
        return aEnum && bEnum && a.type == b.type;
    }
    if (a.kind == b.kind && !(a.literal && b.literal)) {
        kind = a.kind;
        return true;
    }
    const auto numeric = [](const Typed& t) { return isInteger(t.kind) || vm::isRealKind(t.kind); };
    if (!numeric(a) || !numeric(b)) {
        // TIME and dates against their own kind only; a bare number against a TIME is not IEC.
        return false;
    }
    if (a.literal != b.literal) {
        Typed& lit = a.literal ? a : b;
        const Typed& other = a.literal ? b : a;
        // A literal takes its partner's type; a REAL literal makes an integer partner LREAL.
        kind = vm::isRealKind(lit.kind) && !vm::isRealKind(other.kind) ? ValueKind::LReal : other.kind;
    } else if (vm::isRealKind(a.kind) || vm::isRealKind(b.kind)) {
        kind = a.kind == ValueKind::LReal || b.kind == ValueKind::LReal || !vm::isRealKind(a.kind) ||
                       !vm::isRealKind(b.kind)
                   ? ValueKind::LReal
                   : ValueKind::Real;
        if ((a.kind == ValueKind::Real && isInteger(b.kind) && bytecode::elementaryWidth(b.kind) <= 2) ||
            (b.kind == ValueKind::Real && isInteger(a.kind) && bytecode::elementaryWidth(a.kind) <= 2)) {
            kind = ValueKind::Real;
        }
    } else {
        // Two integers: the wider; of equal width and mixed signedness the next wider signed one
        // (INT and UINT: DINT), as the compiler widens implicitly.
        const std::uint32_t sa = bytecode::elementaryWidth(a.kind);
        const std::uint32_t sb = bytecode::elementaryWidth(b.kind);
        kind = sa >= sb ? a.kind : b.kind;
        if (sa == sb && bytecode::isSignedKind(a.kind) != bytecode::isSignedKind(b.kind)) {
            kind = sa == 1 ? ValueKind::Int : sa == 2 ? ValueKind::DInt : ValueKind::LInt;
        }
    }
    convert(a, kind);
    convert(b, kind);
    return true;
}

Typed Compiler::binary(const compiler::ast::BinaryExpr& e) {
    using compiler::ast::BinaryOp;
    Typed a = compile(*e.lhs);
    load(a, *e.lhs);
    Typed b = compile(*e.rhs);
    load(b, *e.rhs);
    if (failed()) {
        return {};
    }
    ValueKind kind = ValueKind::Bool;
    const auto refuse = [&] {
        return fail(compiler::DiagCode::InvalidOperand, e.span,
                    fmt::format("{} is not defined for '{}' and '{}'", compiler::ast::binaryOpText(e.op),
                                text(e.lhs->span), text(e.rhs->span)));
    };
    // ** is computed in floating point, whatever its operands.
    if (e.op == BinaryOp::Pow) {
        if (!(isInteger(a.kind) || vm::isRealKind(a.kind)) || !(isInteger(b.kind) || vm::isRealKind(b.kind))) {
            return refuse();
        }
        kind =
            a.kind == ValueKind::Real && (b.kind == ValueKind::Real || b.literal) ? ValueKind::Real : ValueKind::LReal;
        convert(a, kind);
        convert(b, kind);
    } else if (!unify(a, b, kind)) {
        return refuse();
    }
    ExprOp op = ExprOp::Add;
    bool compareOp = false;
    bool ok = true;
    const bool enumKind = a.type < m_.types.size() && m_.types[a.type].kind == ValueKind::Enum;
    switch (e.op) {
    case BinaryOp::Or:
    case BinaryOp::OrElse: op = ExprOp::Or; break;
    case BinaryOp::Xor: op = ExprOp::Xor; break;
    case BinaryOp::And:
    case BinaryOp::AndThen: op = ExprOp::And; break;
    case BinaryOp::Eq:
        op = ExprOp::Eq;
        compareOp = true;
        break;
    case BinaryOp::Ne:
        op = ExprOp::Ne;
        compareOp = true;
        break;
    case BinaryOp::Lt:
        op = ExprOp::Lt;
        compareOp = true;
        break;
    case BinaryOp::Le:
        op = ExprOp::Le;
        compareOp = true;
        break;
    case BinaryOp::Gt:
        op = ExprOp::Gt;
        compareOp = true;
        break;
    case BinaryOp::Ge:
        op = ExprOp::Ge;
        compareOp = true;
        break;
    case BinaryOp::Add: op = ExprOp::Add; break;
    case BinaryOp::Sub: op = ExprOp::Sub; break;
    case BinaryOp::Mul: op = ExprOp::Mul; break;
    case BinaryOp::Div: op = ExprOp::Div; break;
    case BinaryOp::Mod: op = ExprOp::Mod; break;
    case BinaryOp::Pow: op = ExprOp::Pow; break;
    }
    if (op == ExprOp::And || op == ExprOp::Or || op == ExprOp::Xor) {
        ok = kind == ValueKind::Bool || isBitString(kind) || (isInteger(kind) && !enumKind);
    } else if (compareOp) {
        ok = kind != ValueKind::Bool || op == ExprOp::Eq || op == ExprOp::Ne;
    } else if (enumKind || kind == ValueKind::Bool) {
        ok = false;
    } else if (op == ExprOp::Mod) {
        ok = isInteger(kind);
    } else if (isTime(kind)) {
        ok = op == ExprOp::Add || op == ExprOp::Sub; // TIME ± TIME (a TIME scaled needs a typed factor)
    }
    if (!ok) {
        return refuse();
    }
    Typed r;
    r.code = std::move(a.code);
    r.code.insert(r.code.end(), b.code.begin(), b.code.end());
    r.code.push_back(ExprInstr{op, kind, kind, 0, 0, 0, {0}});
    r.kind = compareOp ? ValueKind::Bool : kind;
    r.literal = !compareOp && a.literal && b.literal;
    return r;
}

// The deepest the stack grows running `code` (kMaxExprDepth + 1 when deeper).
std::uint32_t depthOf(const std::vector<ExprInstr>& code) {
    std::uint32_t sp = 0;
    std::uint32_t most = 0;
    for (const ExprInstr& in : code) {
        switch (in.op) {
        case ExprOp::Const:
        case ExprOp::AddrThis:
        case ExprOp::AddrFrame:
        case ExprOp::AddrAbs: ++sp; break;
        case ExprOp::AddrField:
        case ExprOp::Deref:
        case ExprOp::Load:
        case ExprOp::Convert:
        case ExprOp::Neg:
        case ExprOp::Not: break;
        default: sp = sp > 0 ? sp - 1 : 0; break;
        }
        most = std::max(most, sp);
    }
    return most;
}

} // namespace

std::string ExprError::text() const {
    return fmt::format("{} at column {}: {}", code, column, message);
}

const bytecode::FrameVar* frameVarNamed(const bytecode::PouEntry& pou, std::string_view name) {
    for (const bytecode::FrameVar& v : pou.frame) {
        if (sameName(v.name, name) && v.name.find('$') == std::string::npos) {
            return &v;
        }
    }
    return nullptr;
}

bool inOutMember(const bytecode::Module& m, std::uint32_t owner, const bytecode::FieldDesc& field) {
    if (field.type >= m.types.size() || m.types[field.type].kind != ValueKind::Ref) {
        return false;
    }
    const auto slotAt = [&](std::uint32_t instance) {
        return std::any_of(m.variables.begin(), m.variables.end(), [&](const bytecode::VarEntry& v) {
            return v.kind == bytecode::VarKind::InOut && v.offset == instance + field.offset && v.type == field.type;
        });
    };
    for (const bytecode::ProgramInstance& p : m.programs) {
        if (p.pou < m.pous.size() && m.pous[p.pou].instanceType == owner) {
            return slotAt(p.offset);
        }
    }
    for (const bytecode::VarEntry& v : m.variables) {
        if (v.type == owner) {
            return slotAt(v.offset);
        }
    }
    return false;
}

bool compileDebugExpr(const bytecode::Module& m, std::uint32_t pou, const std::string& instancePath,
                      std::string_view text, CompiledExpr& out, ExprError& error, bool value, const SlotReader& slots) {
    const compiler::SourceFile src(0, "expression", std::string(text));
    compiler::DiagnosticSink diags;
    const compiler::ast::ExprPtr tree = compiler::parseExpressionText(src, diags);
    if (tree == nullptr) {
        for (const compiler::Diagnostic& d : diags.diagnostics()) {
            if (d.severity == compiler::Severity::Error) {
                error.code = std::string(compiler::diagInfo(d.code).code);
                error.column = src.lineCol(d.span.begin).column;
                error.message = d.message;
                return false;
            }
        }
        error = ExprError{"E0011", 1, "no expression"};
        return false;
    }
    Compiler c(m, pou, instancePath, src, slots);
    Typed t = c.compile(*tree);
    if (!c.failed() && t.place && (t.type == kNone || value)) {
        out.valueType = t.type;
        c.load(t, *tree); // a bit of a bit string has no type of its own to format by
    }
    if (c.failed()) {
        error = c.error();
        return false;
    }
    out.code.code = std::move(t.code);
    out.code.kind = t.kind;
    out.code.depth = depthOf(out.code.code);
    if (out.code.depth > vm::kMaxExprDepth) {
        error = ExprError{std::string(compiler::diagInfo(compiler::DiagCode::NestingTooDeep).code), 1,
                          fmt::format("the expression needs more than {} values at once", vm::kMaxExprDepth)};
        return false;
    }
    out.place = t.place;
    out.type = t.place ? t.type : kNone;
    out.path = t.place ? t.path : std::string();
    out.framePath = t.place && t.framePath && !t.path.empty();
    out.reads = std::move(c.reads());
    return true;
}

// A log message's text and its {expressions} with their columns; false with `why` when a '{' is
// not closed or it has more than vm::kMaxLogParts of them.
bool splitLogMessage(std::string_view text, std::vector<std::string>& texts,
                     std::vector<std::pair<std::string, std::uint32_t>>& parts, std::string& why) {
    texts.emplace_back();
    for (std::size_t at = 0; at < text.size(); ++at) {
        if (text[at] != '{') {
            texts.back() += text[at];
            continue;
        }
        const std::size_t close = text.find('}', at + 1);
        if (close == std::string::npos) {
            why = fmt::format("log message: the '{{' at column {} is not closed", at + 1);
            return false;
        }
        if (parts.size() == vm::kMaxLogParts) {
            why = fmt::format("log message: more than {} {{expressions}}", vm::kMaxLogParts);
            return false;
        }
        parts.emplace_back(std::string(text.substr(at + 1, close - at - 1)), static_cast<std::uint32_t>(at + 1));
        texts.emplace_back();
        at = close;
    }
    return true;
}

} // namespace takt::agent
