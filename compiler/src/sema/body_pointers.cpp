// CODESYS pointers and references in bodies: ADR, SIZEOF, __ISVALIDREF, pointer arithmetic and
// comparison, pointer <-> integer conversions, REF= binding. They reuse REF_TO's representation
// (a checked image offset), so nothing here can reach memory outside the data image.
#include "sema/body.h"
#include "sema/declare.h"
#include "sema/pointers.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

using K = TypeKind;

// An integer or bit string of at most 32 bits (or an untyped integer constant): what pointer
// arithmetic adds, so an offset cannot silently lose its upper half.
bool isPointerOffset(const Type* t) {
    const Type* b = baseType(t);
    if (b->kind() == K::IntLiteral) {
        return true;
    }
    return (isInteger(b) || isBitString(b)) && b->kind() != K::Bool && bitWidth(b) <= 32;
}

// The integer types a pointer converts to and from (with W1014): the unsigned ones of 32 and
// 64 bits. takt's pointer value is a 32-bit image offset stored in 8 bytes (as CODESYS x64
// stores its pointers), so both widths hold it.
bool isPointerWideInteger(const Type* t) {
    const K k = baseType(t)->kind();
    return k == K::DWord || k == K::UDInt || k == K::LWord || k == K::ULInt;
}

bool isAdrCall(const ast::Expr& e) {
    const ast::Expr* inner = stripParen(&e);
    return inner->kind == ast::ExprKind::Call &&
           static_cast<const ast::CallExpr*>(inner)->builtin == ast::CallExpr::Builtin::Adr;
}

// The variable whose address `REF(x)` or `ADR(x)` takes; null for any other expression.
const ast::Expr* addressOperand(const ast::Expr& e) {
    const ast::Expr* inner = stripParen(&e);
    if (inner->kind == ast::ExprKind::Ref) {
        return static_cast<const ast::RefExpr*>(inner)->operand.get();
    }
    if (!isAdrCall(*inner)) {
        return nullptr;
    }
    const auto& args = static_cast<const ast::CallExpr*>(inner)->args;
    return args.size() == 1 ? args.front().value.get() : nullptr;
}

// A variable in its call's frame (a VAR_TEMP; a FUNCTION's or METHOD's VAR, VAR_INPUT or
// VAR_OUTPUT): the call stack's bytes, which the next call reuses once this one returns.
bool isTemporary(const Symbol* s) {
    if (s == nullptr || s->kind != SymbolKind::Variable) {
        return false;
    }
    if (s->section == ast::VarSection::Temp) {
        return true;
    }
    const Symbol* pou = s->owner;
    const bool framed = pou != nullptr && pou->kind == SymbolKind::Pou &&
                        (pou->pouKind == ast::PouKind::Function || pou->pouKind == ast::PouKind::Method);
    return framed && (s->section == ast::VarSection::Var || s->section == ast::VarSection::Input ||
                      s->section == ast::VarSection::Output);
}

} // namespace

const Type* sizeOfResultType(const TypeTable& types, std::uint64_t size) {
    return types.get(size < 0x100 ? K::USInt : size < 0x10000 ? K::UInt : K::UDInt);
}

const Type* sizeOfOperand(Context& cx, const Scope* scope, const ast::Expr& arg) {
    const ast::Expr* e = stripParen(&arg);
    if (e->type != nullptr) {
        return e->type;
    }
    if (e->kind != ast::ExprKind::Name) {
        return nullptr;
    }
    const std::string& name = static_cast<const ast::NameExpr*>(e)->name.name;
    Symbol* s = lookup(cx, scope, name);
    if (s == nullptr) {
        return cx.model.types.elementary(name);
    }
    if (s->kind == SymbolKind::Type) {
        return completeTypeSymbol(cx, s);
    }
    if (s->kind == SymbolKind::Variable || (s->kind == SymbolKind::Pou && s->pouKind == ast::PouKind::FunctionBlock)) {
        return s->type;
    }
    return nullptr;
}

const Type* pointerSizedType(const TypeTable& types, std::string_view name) {
    const std::string upper = upperName(name);
    return upper == "__XWORD"   ? types.get(K::LWord)
           : upper == "__UXINT" ? types.get(K::ULInt)
           : upper == "__XINT"  ? types.get(K::LInt)
                                : nullptr;
}

void codesysExtension(Context& cx, Span span, std::string_view what) {
    if (cx.iec()) {
        cx.lenient(DiagCode::CodesysExtension, span,
                   std::string(what) + " is a CODESYS extension that IEC 61131-3 does not define");
    }
}

std::optional<const Type*> BodyChecker::checkBuiltinCall(ast::CallExpr& e) {
    if (e.callee->kind != ast::ExprKind::Name) {
        return std::nullopt;
    }
    const std::string name = upperName(static_cast<const ast::NameExpr&>(*e.callee).name.name);
    using B = ast::CallExpr::Builtin;
    e.builtin = name == "ADR"            ? B::Adr
                : name == "SIZEOF"       ? B::SizeOf
                : name == "__ISVALIDREF" ? B::IsValidRef
                                         : B::None;
    if (e.builtin == B::None) {
        return std::nullopt;
    }
    codesysExtension(cx_, e.callee->span, name);
    auto& types = cx_.model.types;
    if (e.args.size() != 1 || e.args[0].name || e.args[0].output || e.args[0].value == nullptr) {
        cx_.error(DiagCode::WrongArgumentCount, e.span, name + " takes exactly one operand, written " + name + "(x)");
        typeArguments(e);
        return errorType();
    }
    ast::Expr& arg = *e.args[0].value;
    switch (e.builtin) {
    case B::Adr: {
        const Type* t = checkExpr(arg);
        if (isError(t)) {
            return errorType();
        }
        if (reportActionFlagWrite(arg, "ADR()")) {
            return errorType();
        }
        if (!analyzeTarget(arg).isVariable) {
            if (!reportPropertyAddress(arg, "ADR()")) {
                cx_.error(DiagCode::InvalidRefOperand, arg.span,
                          "ADR() needs a variable, not '" + text(arg.span) + "'");
            }
            return errorType();
        }
        return types.ref(t, ast::RefSpelling::PointerTo);
    }
    case B::SizeOf: {
        const ast::Expr* inner = stripParen(&arg);
        const Type* t = nullptr;
        if (inner->kind == ast::ExprKind::Name) {
            const Symbol* s = findName(static_cast<const ast::NameExpr*>(inner)->name.name);
            if (s == nullptr || s->kind == SymbolKind::Type || s->kind == SymbolKind::Pou) {
                t = sizeOfOperand(cx_, pc_.scope, arg); // SIZEOF(INT), SIZEOF(MyStruct), SIZEOF(TON)
                mut(*inner).type = t;
                arg.type = t;
            }
        }
        if (t == nullptr) {
            t = checkExpr(arg);
        }
        if (isError(t)) {
            return errorType();
        }
        const Type* st = stripAlias(t);
        if (st->size == 0 || st->kind() == K::Void || st->kind() == K::IntLiteral || st->kind() == K::RealLiteral ||
            st->kind() == K::Null) {
            cx_.error(DiagCode::TypeMismatch, arg.span,
                      "SIZEOF needs a variable or a type with a size; '" + text(arg.span) + "' has none");
            return errorType();
        }
        e.genericType = t;
        return sizeOfResultType(types, st->size);
    }
    case B::IsValidRef: {
        keepReference_ = true;
        const Type* t = checkExpr(arg);
        if (!isError(t) && stripAlias(t)->kind() != K::Ref) {
            cx_.error(DiagCode::TypeMismatch, arg.span,
                      "__ISVALIDREF needs a REFERENCE TO, POINTER TO or REF_TO; '" + text(arg.span) + "' is " +
                          typeName(t));
        }
        return types.get(K::Bool);
    }
    case B::None: break;
    }
    return errorType();
}

// Pointer operands of a binary operator (CODESYS): pointer ± offset in bytes, offset + pointer,
// and comparisons of a pointer with a pointer or an integer (p = 0, p <> 0). Null when the
// operator is not defined for them.
const Type* BodyChecker::pointerOperands(ast::BinaryExpr& e, const Type* a, const Type* b) {
    const bool pa = isPointer(a);
    const bool pb = isPointer(b);
    switch (e.op) {
    case ast::BinaryOp::Add:
        if (pa && !pb && isPointerOffset(b)) {
            return a;
        }
        if (pb && !pa && isPointerOffset(a)) {
            return b;
        }
        return nullptr;
    case ast::BinaryOp::Sub: return pa && !pb && isPointerOffset(b) ? a : nullptr;
    case ast::BinaryOp::Eq:
    case ast::BinaryOp::Ne:
    case ast::BinaryOp::Lt:
    case ast::BinaryOp::Le:
    case ast::BinaryOp::Gt:
    case ast::BinaryOp::Ge: {
        if (pa && pb) {
            return cx_.model.types.get(K::Bool);
        }
        const Type* other = pa ? b : a;
        const K ok = baseType(other)->kind();
        if (ok == K::Null || ok == K::IntLiteral) {
            return cx_.model.types.get(K::Bool);
        }
        if (isPointerWideInteger(other)) {
            cx_.lenient(DiagCode::PointerConversion, e.span,
                        "comparing a POINTER with " + typeName(other) + " compares its address as an integer");
            return cx_.model.types.get(K::Bool);
        }
        return nullptr;
    }
    default: return nullptr;
    }
}

// Conversions into or out of a POINTER that IEC's rules do not cover. True when `e` was
// accepted (or reported) here.
bool BodyChecker::pointerConversion(ast::Expr& e, const Type* target) {
    const Type* from = e.type;
    const bool pf = isPointer(from);
    const bool pt = isPointer(target);
    if (!pf && !pt) {
        return false;
    }
    if (pf && pt) {
        if (implicitlyConvertible(from, target) || isAdrCall(e)) {
            return true; // ADR(x) is an address, as in CODESYS: any POINTER TO takes it
        }
        cx_.lenient(DiagCode::PointerConversion, e.span,
                    "'" + text(e.span) + "' of type " + typeName(from) + " is used as " + typeName(target) +
                        "; the bytes it points to are read as the new type");
        return true;
    }
    const Type* other = pf ? target : from;
    const K ok = baseType(other)->kind();
    if (pt && ok == K::IntLiteral) {
        const std::optional<ConstValue> v = evaluateConstant(cx_, e, pc_.scope, false);
        if (v && v->kind == ConstValue::Kind::Int && v->i == 0) {
            return true; // p := 0 is NULL
        }
    }
    if (isPointerWideInteger(other) || (pt && ok == K::IntLiteral)) {
        cx_.lenient(DiagCode::PointerConversion, e.span,
                    "'" + text(e.span) + "' of type " + typeName(from) + " converts implicitly to " + typeName(target) +
                        " (a pointer holds a data image offset)");
        return true;
    }
    return false;
}

void BodyChecker::checkBindReference(ast::AssignStmt& a) {
    codesysExtension(cx_, a.span, "REF=");
    keepReference_ = true;
    const Type* t = checkExpr(*a.target);
    const Type* v = checkExpr(*a.value);
    if (isError(t) || isError(v)) {
        return;
    }
    if (!isReference(t)) {
        cx_.error(DiagCode::TypeMismatch, a.target->span,
                  "REF= binds a REFERENCE TO; '" + text(a.target->span) + "' is " + typeName(t));
        return;
    }
    if (checkWritable(*a.target)) {
        checkReferenceBinding(*a.value, t);
        warnTemporaryAddressKept(*a.target, *a.value, true);
    }
}

void BodyChecker::warnTemporaryAddressKept(const ast::Expr& target, const ast::Expr& value, bool binding) {
    const ast::Expr* taken = binding ? &value : addressOperand(value);
    if (taken == nullptr) {
        return;
    }
    const ast::Expr& operand = *taken;
    const Target from = analyzeTarget(operand);
    if (!isTemporary(from.root)) {
        return;
    }
    const Target to = analyzeTarget(target);
    if (!to.isResult && (to.root == nullptr || isTemporary(to.root))) {
        return; // kept in the same call (or not a variable: reported elsewhere)
    }
    cx_.diags.report(DiagCode::TemporaryAddressKept, operand.span,
                     "'" + text(operand.span) + "' is a temporary of this call: its address in '" + text(target.span) +
                         "' points into the call stack once the call returns, where other calls' values then lie");
}

void BodyChecker::checkReferenceBinding(ast::Expr& value, const Type* reference) {
    const Type* v = value.type;
    const Target src = analyzeTarget(value);
    if (!src.isVariable || (src.root != nullptr && src.root->constant)) {
        cx_.error(DiagCode::InvalidRefOperand, value.span,
                  "a REFERENCE TO is bound to a variable, not to '" + text(value.span) + "'" +
                      (src.isVariable ? " (a CONSTANT)" : ""));
        return;
    }
    const Type* want = static_cast<const RefType*>(stripAlias(reference))->target;
    if (stripAlias(v) != stripAlias(want) &&
        !implicitlyConvertible(cx_.model.types.ref(v, ast::RefSpelling::ReferenceTo), reference)) {
        cx_.error(DiagCode::TypeMismatch, value.span,
                  "'" + text(value.span) + "' of type " + typeName(v) + " cannot be bound to " + typeName(reference));
    }
}

} // namespace takt::compiler::sema
