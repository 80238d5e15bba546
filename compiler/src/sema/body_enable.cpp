// EN / ENO on calls (IEC 61131-3 2.5.1.2, as CODESYS runs them): `EN := c` makes the call
// conditional, `ENO => v` receives whether it ran. Every FUNCTION, FB instance, METHOD and
// standard function has them; a POU may also declare `EN : BOOL` (VAR_INPUT) and
// `ENO : BOOL` (VAR_OUTPUT) itself, and then its body can clear ENO.
#include "sema/body.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

const Symbol* ownParameter(const Symbol* pou, std::string_view name, ast::VarSection section) {
    if (pou == nullptr) {
        return nullptr;
    }
    for (const Symbol* p : pou->params) {
        if (sameName(p->name, name) && p->section == section && p->type != nullptr &&
            stripAlias(p->type)->kind() == TypeKind::Bool) {
            return p;
        }
    }
    return nullptr;
}

bool declaresParameter(const Symbol* pou, std::string_view name) {
    if (pou == nullptr) {
        return false;
    }
    for (const Symbol* p : pou->params) {
        if (sameName(p->name, name)) {
            return true;
        }
    }
    return false;
}

} // namespace

void BodyChecker::takeEnableArguments(ast::CallExpr& e, const Symbol* pou, const std::string& calleeName) {
    const Type* boolType = cx_.model.types.get(TypeKind::Bool);
    // A parameter of another type or section named EN or ENO is an ordinary parameter.
    const Symbol* ownEn = ownParameter(pou, "EN", ast::VarSection::Input);
    const Symbol* ownEno = ownParameter(pou, "ENO", ast::VarSection::Output);
    const bool enIsParameter = ownEn == nullptr && declaresParameter(pou, "EN");
    const bool enoIsParameter = ownEno == nullptr && declaresParameter(pou, "ENO");
    for (std::size_t i = 0; i < e.args.size();) {
        ast::Argument& a = e.args[i];
        const bool en = a.name && sameName(a.name->name, "EN") && !enIsParameter;
        const bool eno = a.name && sameName(a.name->name, "ENO") && !enoIsParameter;
        if (!en && !eno) {
            ++i;
            continue;
        }
        if (a.output != eno) {
            cx_.error(DiagCode::OutputWithAssign, a.span,
                      std::string("'") + a.name->name + "' of '" + calleeName + "' is " +
                          (en ? "an input; connect it with :=" : "an output; connect it with =>"));
            if (a.value) {
                checkExpr(*a.value);
            }
            e.args.erase(e.args.begin() + static_cast<std::ptrdiff_t>(i));
            continue;
        }
        if ((en && (e.enable || e.enableParam != nullptr)) || (eno && (e.enableOut || e.enableOutParam != nullptr))) {
            cx_.error(DiagCode::DuplicateArgument, a.name->span,
                      "parameter '" + a.name->name + "' of '" + calleeName + "' is given twice");
            if (a.value) {
                checkExpr(*a.value);
            }
            e.args.erase(e.args.begin() + static_cast<std::ptrdiff_t>(i));
            continue;
        }
        if (en) {
            checkExpr(*a.value, boolType);
            convert(*a.value, boolType);
            e.enable = std::move(a.value);
            e.enableParam = ownEn;
            e.args.erase(e.args.begin() + static_cast<std::ptrdiff_t>(i));
            continue;
        }
        if (ownEno != nullptr) {
            e.enableOutParam = ownEno; // stays an ordinary output argument of the call
            ++i;
            continue;
        }
        if (a.value != nullptr) {
            const Type* t = checkExpr(*a.value);
            if (!isError(t) && !reportActionFlagWrite(*a.value, "ENO =>")) {
                if (!analyzeTarget(*a.value).isVariable) {
                    cx_.error(DiagCode::OutputNotAssignable, a.value->span,
                              "ENO needs a variable after =>, not '" + text(a.value->span) + "'");
                } else if (checkWritable(*a.value) && stripAlias(t)->kind() != TypeKind::Bool) {
                    cx_.error(DiagCode::TypeMismatch, a.value->span,
                              "ENO is BOOL, but '" + text(a.value->span) + "' has type " + typeName(t));
                }
            }
            if (a.negated) {
                cx_.error(DiagCode::TypeMismatch, a.span,
                          "NOT ENO => is not supported; negate the variable afterwards");
            }
            e.enableOut = std::move(a.value);
        }
        e.enableOutParam = nullptr;
        // An unconnected `ENO =>` is accepted and has no effect.
        e.args.erase(e.args.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (ownEno != nullptr && e.enableOutParam == nullptr && e.enable) {
        e.enableOutParam = ownEno; // an FB instance's own ENO is cleared when EN skips the call
    }
}

void BodyChecker::checkEnablePlacement(const ast::CallExpr& e, bool statement) {
    if (!e.enable && !e.enableOut) {
        return;
    }
    if (statement || stripParen(assignedValue_) == &e) {
        return;
    }
    cx_.error(DiagCode::EnableInExpression, e.span,
              "EN/ENO on a call inside an expression: the call can be skipped only as a statement or as the whole "
              "right side of := ('x := " +
                  text(e.callee->span) + "(EN := …)')");
}

} // namespace takt::compiler::sema
