// Calls: FUNCTIONs, FB instances, METHODs (also through interfaces), PROGRAMs and standard
// functions; positional, formal (:=) and output (=>) arguments.
#include <map>
#include <set>

#include "sema/body.h"
#include "sema/stdlib.h"
#include "takt/compiler/call_graph.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

bool isFbKind(ast::PouKind k) {
    return k == ast::PouKind::FunctionBlock || k == ast::PouKind::TestFunctionBlock;
}

} // namespace

bool BodyChecker::inTestPou() const {
    for (const Symbol* p = pc_.pou; p != nullptr; p = p->owner) {
        if (p->kind == SymbolKind::Pou &&
            (p->pouKind == ast::PouKind::TestProgram || p->pouKind == ast::PouKind::TestFunctionBlock)) {
            return true;
        }
        if (p->kind != SymbolKind::Pou) {
            break;
        }
    }
    return false;
}

void BodyChecker::typeArguments(ast::CallExpr& e) {
    for (auto& a : e.args) {
        if (a.value) {
            checkExpr(*a.value);
        }
    }
}

const Type* BodyChecker::checkCall(ast::CallExpr& e, const Type* expected, bool statement) {
    const Symbol* callee = nullptr;
    std::string calleeName = text(e.callee->span);
    ast::Expr& ce = *e.callee;

    if (ce.kind == ast::ExprKind::Name) {
        auto& n = static_cast<ast::NameExpr&>(ce);
        calleeName = n.name.name;
        callee = findName(n.name.name, &n.name.span);
        if (callee == nullptr) {
            if (auto builtin = checkBuiltinCall(e)) {
                return *builtin;
            }
            cx_.error(DiagCode::UnknownPou, n.span,
                      "'" + n.name.name + "' names no FUNCTION, FUNCTION_BLOCK instance, METHOD or PROGRAM");
            typeArguments(e);
            return errorType();
        }
        n.symbol = callee;
        n.type = callee->type;
    } else if (ce.kind == ast::ExprKind::Member) {
        auto& m = static_cast<ast::MemberExpr&>(ce);
        calleeName = m.member.name;
        if (const Scope* ns = namespaceOf(*m.object)) {
            m.object->type = errorType();
            callee = ns->findLocal(m.member.name);
            if (callee == nullptr) {
                cx_.error(DiagCode::UnknownPou, m.member.span,
                          "namespace '" + text(m.object->span) + "' has no POU '" + m.member.name + "'");
                typeArguments(e);
                return errorType();
            }
        } else {
            const Type* ot = checkExpr(*m.object);
            if (isError(ot)) {
                typeArguments(e);
                return errorType();
            }
            const Type* st = stripAlias(ot);
            if (st->kind() == TypeKind::FunctionBlock || st->kind() == TypeKind::Interface ||
                st->kind() == TypeKind::Program) {
                callee = findMember(static_cast<const PouType*>(st)->symbol, m.member.name);
                if (callee == nullptr) {
                    cx_.error(DiagCode::UnknownMethod, m.member.span,
                              "'" + st->name() + "' has no method '" + m.member.name + "'");
                    typeArguments(e);
                    return errorType();
                }
            } else if (st->kind() == TypeKind::Struct) {
                const Field* f = static_cast<const StructType*>(st)->field(m.member.name);
                if (f == nullptr) {
                    cx_.error(DiagCode::UnknownMember, m.member.span,
                              "'" + st->name() + "' has no field '" + m.member.name + "'");
                    typeArguments(e);
                    return errorType();
                }
                m.type = f->type;
                const Type* ft = stripAlias(f->type);
                if (ft->kind() != TypeKind::FunctionBlock) {
                    cx_.error(DiagCode::NotCallable, ce.span,
                              "'" + text(ce.span) + "' of type " + f->type->name() + " cannot be called");
                    typeArguments(e);
                    return errorType();
                }
                callee = static_cast<const PouType*>(ft)->symbol; // struct field holding an FB instance
                e.target = callee;
                checkPouCall(e, *callee, calleeName);
                if (!statement) {
                    cx_.error(DiagCode::FunctionNoValue, e.span,
                              "the call of FB instance '" + text(ce.span) + "' has no value");
                    return errorType();
                }
                return cx_.model.types.get(TypeKind::Void);
            } else {
                cx_.error(DiagCode::NotAStruct, m.member.span,
                          "'" + text(m.object->span) + "' of type " + st->name() + " has no method '" + m.member.name +
                              "'");
                typeArguments(e);
                return errorType();
            }
        }
        m.symbol = callee;
    } else {
        // timers[i](…), ref^(…), SUPER^(): anything whose type is an FB instance.
        const Type* t = checkExpr(ce);
        if (isError(t)) {
            typeArguments(e);
            return errorType();
        }
        const Type* st = stripAlias(t);
        if (st->kind() != TypeKind::FunctionBlock) {
            cx_.error(DiagCode::NotCallable, ce.span,
                      "'" + text(ce.span) + "' of type " + t->name() + " cannot be called");
            typeArguments(e);
            return errorType();
        }
        callee = static_cast<const PouType*>(st)->symbol;
        e.target = callee;
        checkPouCall(e, *callee, calleeName);
        if (!statement) {
            cx_.error(DiagCode::FunctionNoValue, e.span,
                      "the call of FB instance '" + text(ce.span) + "' has no value");
            return errorType();
        }
        return cx_.model.types.get(TypeKind::Void);
    }

    const Type* result = errorType();
    bool fbInstance = false;
    switch (callee->kind) {
    case SymbolKind::StandardFunction:
        e.target = callee;
        result = checkStandardCall(e, *callee, expected);
        break;
    case SymbolKind::Pou:
        e.target = callee;
        if (isFbKind(callee->pouKind)) {
            cx_.error(DiagCode::NotCallable, ce.span,
                      "'" + calleeName + "' is a FUNCTION_BLOCK type; declare an instance and call the instance");
            typeArguments(e);
            return errorType();
        }
        if (callee->pouKind == ast::PouKind::Program || callee->pouKind == ast::PouKind::TestProgram) {
            const Symbol* caller = pc_.pou;
            if (caller != nullptr && caller->pouKind == ast::PouKind::Method && caller->owner != nullptr) {
                caller = caller->owner;
            }
            if (caller != nullptr && (caller->pouKind == ast::PouKind::Function || isFbKind(caller->pouKind))) {
                cx_.error(DiagCode::ProgramCall, ce.span,
                          "PROGRAM '" + calleeName + "' cannot be called from " +
                              (caller->pouKind == ast::PouKind::Function ? "FUNCTION '" : "FUNCTION_BLOCK '") +
                              caller->name + "'");
            }
            fbInstance = true; // a program call has no value either
        }
        if (pc_.pou != nullptr) {
            calls_.push_back(CallEdge{pc_.pou, callee, ce.span});
        }
        result = checkPouCall(e, *callee, calleeName);
        break;
    case SymbolKind::Variable: {
        markUsed(callee, ce.span);
        if (isError(callee->type)) {
            typeArguments(e); // its declaration is already reported
            return errorType();
        }
        const Type* st = stripAlias(callee->type);
        if (st->kind() == TypeKind::FunctionBlock) {
            const Symbol* fb = static_cast<const PouType*>(st)->symbol;
            e.target = fb;
            checkPouCall(e, *fb, calleeName);
            fbInstance = true;
            result = cx_.model.types.get(TypeKind::Void);
            break;
        }
        // A local named like a standard function (`limit : INT`) does not hide the function:
        // call syntax on a variable that is no FB instance can only mean the function.
        if (Symbol* stdFn = cx_.model.global->findLocal(calleeName);
            ce.kind == ast::ExprKind::Name && stdFn != nullptr && stdFn->kind == SymbolKind::StandardFunction) {
            auto& n = static_cast<ast::NameExpr&>(ce);
            n.symbol = stdFn;
            n.type = stdFn->type;
            e.target = stdFn;
            result = checkStandardCall(e, *stdFn, expected);
            break;
        }
        cx_.error(st->kind() == TypeKind::Interface ? DiagCode::InterfaceInstance : DiagCode::NotCallable, ce.span,
                  "'" + calleeName + "' of type " + typeName(callee->type) + " cannot be called" +
                      (st->kind() == TypeKind::Interface ? "; call one of its methods" : ""));
        typeArguments(e);
        return errorType();
    }
    default:
        cx_.error(DiagCode::NotCallable, ce.span, "'" + calleeName + "' is not a FUNCTION, FB instance or METHOD");
        typeArguments(e);
        return errorType();
    }

    checkEnablePlacement(e, statement);
    if (!statement && !isError(result) && stripAlias(result)->kind() == TypeKind::Void) {
        cx_.error(DiagCode::FunctionNoValue, e.span,
                  fbInstance ? "the call of '" + calleeName + "' has no value; read its outputs instead"
                             : "'" + calleeName + "' returns no value and cannot be used in an expression");
        return errorType();
    }
    return result;
}

void BodyChecker::checkInOutArgument(ast::Expr& value, const Symbol& param, const std::string& calleeName) {
    const Type* t = checkExpr(value, param.type);
    if (isError(t) || isError(param.type)) {
        return;
    }
    if (reportActionFlagWrite(value, "VAR_IN_OUT '" + param.name + "' of '" + calleeName + "'")) {
        return;
    }
    if (!analyzeTarget(value).isVariable &&
        !reportPropertyAddress(value, "VAR_IN_OUT '" + param.name + "' of '" + calleeName + "'")) {
        cx_.error(DiagCode::OutputNotAssignable, value.span,
                  "VAR_IN_OUT '" + param.name + "' of '" + calleeName + "' needs a variable, not '" + text(value.span) +
                      "'");
        return;
    }
    const Type* a = stripAlias(t);
    const Type* b = stripAlias(param.type);
    bool same = a == b || (isString(a) && isString(b) && a->kind() == b->kind());
    if (!same && a->kind() == TypeKind::Array && b->kind() == TypeKind::Array) {
        const auto* pa = static_cast<const ArrayType*>(a);
        const auto* pb = static_cast<const ArrayType*>(b);
        same = pb->dims.empty() && stripAlias(pa->element) == stripAlias(pb->element); // ARRAY [*]
    }
    if (!same && b->kind() == TypeKind::Interface) {
        same = implicitlyConvertible(t, param.type);
    }
    if (!same && a->kind() == TypeKind::FunctionBlock && b->kind() == TypeKind::FunctionBlock) {
        // A derived instance is passed where its base is declared, as in CODESYS; its methods
        // keep their overrides (late binding).
        const Symbol* base = static_cast<const PouType*>(b)->symbol;
        const Symbol* fb = static_cast<const PouType*>(a)->symbol;
        for (int depth = 0; fb != nullptr && depth < 64 && !same; ++depth, fb = fb->base) {
            same = fb == base;
        }
    }
    if (!same) {
        cx_.error(DiagCode::TypeMismatch, value.span,
                  "VAR_IN_OUT '" + param.name + "' of '" + calleeName + "' has type " + typeName(param.type) +
                      ", but '" + text(value.span) + "' has type " + typeName(t));
    }
}

void BodyChecker::checkOutputArgument(ast::Expr* value, const Symbol& param) {
    if (value == nullptr) {
        return; // `q =>` leaves the output unconnected
    }
    const Type* t = checkExpr(*value);
    if (isError(t) || isError(param.type)) {
        return;
    }
    if (reportActionFlagWrite(*value, "output '" + param.name + "' (=>)")) {
        return;
    }
    if (!analyzeTarget(*value).isVariable && !reportPropertyAddress(*value, "output '" + param.name + "' (=>)")) {
        cx_.error(DiagCode::OutputNotAssignable, value->span,
                  "output '" + param.name + "' needs a variable after =>, not '" + text(value->span) + "'");
        return;
    }
    checkWritable(*value);
    if (!implicitlyConvertible(param.type, t) && !(isString(stripAlias(param.type)) && isString(stripAlias(t)) &&
                                                   stripAlias(param.type)->kind() == stripAlias(t)->kind())) {
        cx_.error(DiagCode::TypeMismatch, value->span,
                  "output '" + param.name + "' has type " + typeName(param.type) + ", which does not convert to '" +
                      text(value->span) + "' of type " + typeName(t));
    }
}

const Type* BodyChecker::checkPouCall(ast::CallExpr& e, const Symbol& callee, const std::string& calleeName) {
    // A call that opens with a formal argument is formal even when that argument is EN or ENO,
    // which takeEnableArguments takes out: `F(EN := c)` leaves the inputs at their initial
    // values as `F(x := 1)` does for the rest, and a positional argument after it is mixed.
    const bool formal = !e.args.empty() && e.args.front().name;
    takeEnableArguments(e, &callee, calleeName);
    checkOopCall(e, callee);
    std::vector<const Symbol*> positional;
    for (const Symbol* p : callee.params) {
        if (p->section != ast::VarSection::Output) {
            positional.push_back(p);
        }
    }
    std::vector<const Symbol*> given;
    bool sawFormal = formal;
    bool countReported = false;
    std::size_t next = 0;
    for (auto& a : e.args) {
        const Symbol* p = nullptr;
        if (a.name) {
            sawFormal = true;
            for (const Symbol* q : callee.params) {
                if (sameName(q->name, a.name->name)) {
                    p = q;
                }
            }
            if (p == nullptr) {
                p = codesysParameter(callee, *a.name);
            }
            if (p == nullptr) {
                cx_.error(DiagCode::UnknownParameter, a.name->span,
                          "'" + a.name->name + "' is not a parameter of '" + calleeName + "'");
                if (a.value) {
                    checkExpr(*a.value);
                }
                continue;
            }
            bool duplicate = false;
            for (const Symbol* g : given) {
                duplicate = duplicate || g == p;
            }
            if (duplicate) {
                cx_.error(DiagCode::DuplicateArgument, a.name->span,
                          "parameter '" + p->name + "' of '" + calleeName + "' is given twice");
                if (a.value) {
                    checkExpr(*a.value);
                }
                continue;
            }
            if (a.output != (p->section == ast::VarSection::Output)) {
                cx_.error(DiagCode::OutputWithAssign, a.span,
                          std::string("'") + p->name + "' is a " + ast::sectionKeyword(p->section) + " of '" +
                              calleeName + "'; connect it with " +
                              (p->section == ast::VarSection::Output ? "=>" : ":="));
                if (a.value) {
                    checkExpr(*a.value);
                }
                given.push_back(p);
                continue;
            }
        } else {
            if (sawFormal) {
                cx_.error(DiagCode::MixedArguments, a.span,
                          "positional argument '" + text(a.span) + "' after formal arguments in the call of '" +
                              calleeName + "'");
                if (a.value) {
                    checkExpr(*a.value);
                }
                continue;
            }
            if (next >= positional.size()) {
                if (!countReported) {
                    cx_.error(DiagCode::WrongArgumentCount, a.span,
                              "'" + calleeName + "' takes " + std::to_string(positional.size()) + " argument" +
                                  (positional.size() == 1 ? "" : "s") + ", more are given");
                    countReported = true;
                }
                if (a.value) {
                    checkExpr(*a.value);
                }
                continue;
            }
            p = positional[next++];
        }
        given.push_back(p);
        if (p->section == ast::VarSection::Output) {
            checkOutputArgument(a.value.get(), *p);
        } else if (p->section == ast::VarSection::InOut) {
            if (a.value) {
                checkInOutArgument(*a.value, *p, calleeName);
            }
        } else if (a.value && isReference(p->type)) { // CODESYS: passing a variable binds the reference
            if (!isError(checkExpr(*a.value))) {
                checkReferenceBinding(*a.value, p->type);
            }
        } else if (a.value) {
            checkExpr(*a.value, p->type);
            convert(*a.value, p->type);
        }
    }
    // A FUNCTION called with positional arguments only needs all of its inputs.
    const bool isFunction = callee.pouKind == ast::PouKind::Function || callee.pouKind == ast::PouKind::Method;
    if (isFunction && !sawFormal && !countReported && next < positional.size()) {
        cx_.error(DiagCode::WrongArgumentCount, e.span,
                  "'" + calleeName + "' takes " + std::to_string(positional.size()) + " argument" +
                      (positional.size() == 1 ? "" : "s") + ", " + std::to_string(next) + " given");
    }
    for (const Symbol* p : callee.params) {
        if (p->section != ast::VarSection::InOut) {
            continue;
        }
        bool connected = false;
        for (const Symbol* g : given) {
            connected = connected || g == p;
        }
        if (!connected) {
            cx_.error(DiagCode::MissingInOut, e.span,
                      "VAR_IN_OUT '" + p->name + "' of '" + calleeName + "' is not connected");
        }
    }
    if (isFunction) {
        return callee.type != nullptr ? callee.type : cx_.model.types.get(TypeKind::Void);
    }
    return cx_.model.types.get(TypeKind::Void);
}

namespace {

// Whether argument `index` (or the one named `name`) binds T in every overload of `f` whose result is T.
bool bindsResult(const StdFunction& f, std::size_t index, std::string_view name) {
    const auto& sigs = standardSignatures();
    for (std::uint32_t k = f.first; k < f.first + f.count; ++k) {
        const StdSignature& sig = sigs[k];
        if (sig.result != StdResult::Generic || sig.params.empty()) {
            return false;
        }
        const StdParam* p = nullptr;
        if (!name.empty()) {
            for (const StdParam& q : sig.params) {
                p = sameName(q.name, name) ? &q : p;
            }
        } else {
            p = index < sig.params.size() ? &sig.params[index] : sig.extensible ? &sig.params.back() : nullptr;
        }
        if (p == nullptr || !p->generic || p->output) {
            return false;
        }
    }
    return true;
}

} // namespace

const Type* BodyChecker::checkStandardCall(ast::CallExpr& e, const Symbol& fn, const Type* expected) {
    const auto& fns = standardFunctions();
    if (fn.stdIndex >= fns.size()) {
        typeArguments(e);
        return errorType();
    }
    const StdFunction& f = fns[fn.stdIndex];
    takeEnableArguments(e, nullptr, f.name);
    std::vector<StdArg> args;
    for (std::size_t i = 0; i < e.args.size(); ++i) {
        ast::Argument& a = e.args[i];
        // A nested call of untyped literals takes its type from the context as a literal does
        // (`r := SIN(COS(3.14))`, `r := SIN(2.0 * COS(1.0))` compute in REAL): the context reaches
        // an argument that binds the result type in every overload. A bare name gets no hint: an
        // enumeration value two types declare stays ambiguous there (E0106).
        const bool nestedCall = a.value != nullptr && stripParen(a.value.get())->kind != ast::ExprKind::Name;
        const Type* hint = expected != nullptr && nestedCall &&
                                   bindsResult(f, i, a.name ? std::string_view(a.name->name) : std::string_view())
                               ? expected
                               : nullptr;
        StdArg sa;
        sa.type = a.value ? checkExpr(*a.value, hint) : errorType();
        if (a.name) {
            sa.name = a.name->name;
        }
        sa.output = a.output;
        args.push_back(sa);
    }
    if (standardSignatures()[f.first].testOnly && !inTestPou()) {
        cx_.error(DiagCode::AssertOutsideTest, e.callee->span,
                  "'" + f.name + "' is only allowed inside TEST_PROGRAM or TEST_FUNCTION_BLOCK");
    } else if (standardSignatures()[f.first].op == StdOp::TestFinished &&
               (pc_.pou == nullptr || pc_.pou->kind != SymbolKind::Pou ||
                (pc_.pou->pouKind != ast::PouKind::TestProgram &&
                 pc_.pou->pouKind != ast::PouKind::TestFunctionBlock))) {
        // `takt test` finds it in the test's own code to know the test runs over several cycles.
        cx_.error(DiagCode::AssertOutsideTest, e.callee->span,
                  "'TEST_FINISHED' is only allowed in the body of a TEST_PROGRAM or TEST_FUNCTION_BLOCK, not in "
                  "its methods or actions");
    }
    if (standardSignatures()[f.first].testOnly && !checkAssertOperands(e, f, args)) {
        return errorType();
    }
    StdOutcome out = resolveStandardCall(cx_.model.types, f, args, expected);
    if (!out.resolution && out.failure == StdFailure::Types && args.size() == 1) {
        // INT_TO_BYTE(aDint): the argument narrows to INT first (W1010, below in convert()).
        if (const Type* source = lenientConversionSource(f, args[0].type)) {
            args[0].type = source;
            out = resolveStandardCall(cx_.model.types, f, args, expected);
        }
    }
    if (!out.resolution && out.failure == StdFailure::Types) {
        lenientSignedShift(e, f, args, expected, out); // SHL(anInt, 2) (W1012)
    }
    if (!out.resolution && out.failure == StdFailure::Types) {
        lenientRealArgument(e, f, args, expected, out); // SQRT(anInt) (W1016)
    }
    if (!out.resolution) {
        const Span argSpan = out.argIndex < e.args.size() ? (e.args[out.argIndex].name ? e.args[out.argIndex].name->span
                                                                                       : e.args[out.argIndex].span)
                                                          : e.span;
        switch (out.failure) {
        case StdFailure::Count: cx_.error(DiagCode::WrongArgumentCount, e.span, out.message); break;
        case StdFailure::UnknownName: cx_.error(DiagCode::UnknownParameter, argSpan, out.message); break;
        case StdFailure::Duplicate: cx_.error(DiagCode::DuplicateArgument, argSpan, out.message); break;
        case StdFailure::Mixed: cx_.error(DiagCode::MixedArguments, e.args[out.argIndex].span, out.message); break;
        case StdFailure::Output: cx_.error(DiagCode::OutputWithAssign, e.args[out.argIndex].span, out.message); break;
        default: cx_.error(DiagCode::NoMatchingOverload, e.span, out.message); break;
        }
        return errorType();
    }
    const StdResolution& r = *out.resolution;
    const StdSignature& sig = standardSignatures()[r.overload];
    e.stdOverload = static_cast<std::int32_t>(r.overload);
    e.genericType = r.generic;
    e.stdSlots = r.slots;
    for (std::size_t i = 0; i < e.args.size() && i < r.paramTypes.size(); ++i) {
        ast::Expr* value = e.args[i].value.get();
        if (value == nullptr) {
            continue;
        }
        if (r.slots[i] < sig.params.size() && sig.params[r.slots[i]].output) {
            // SPLIT_* outputs: a variable that is written (in its own type).
            if (!isError(value->type) && !analyzeTarget(*value).isVariable) {
                cx_.error(DiagCode::OutputNotAssignable, value->span,
                          "output '" + sig.params[r.slots[i]].name + "' of " + f.name + " needs a variable, not '" +
                              text(value->span) + "'");
            } else if (!isError(value->type)) {
                checkWritable(*value);
            }
            if (e.args[i].negated) {
                cx_.error(DiagCode::TypeMismatch, e.args[i].span,
                          "NOT applies to BOOL outputs; '" + sig.params[r.slots[i]].name + "' of " + f.name +
                              " is an integer");
            }
            continue;
        }
        convert(*value, r.paramTypes[i]);
    }
    return r.result;
}

} // namespace takt::compiler::sema

namespace takt::compiler::sema {

void BodyChecker::reportRecursion() {
    std::map<const Symbol*, std::vector<const Symbol*>> graph;
    for (const CallEdge& c : calls_) {
        graph[c.caller].push_back(c.callee);
    }
    // Does `from` reach `to` through calls?
    for (const CallEdge& c : calls_) {
        if (c.callee == c.caller) {
            cx_.error(DiagCode::RecursiveCall, c.span,
                      "'" + c.caller->name + "' calls itself; IEC 61131-3 does not allow recursion");
        } else if (compiler::reaches(graph, c.callee, c.caller)) {
            cx_.error(DiagCode::RecursiveCall, c.span,
                      "'" + c.caller->name + "' calls '" + c.callee->name + "', which calls '" + c.caller->name +
                          "' again; IEC 61131-3 does not allow recursion");
        }
    }
}

} // namespace takt::compiler::sema
