#pragma once
// Helpers for the body-checking tests: every diagnostic of a program as "CODE@line:col", and the
// types semantic analysis assigned to expressions.
#include <string>

#include "sema_test_support.h"
#include "takt/compiler/ast.h"
#include "takt/compiler/sema/types.h"

namespace takt::compiler::test {

// All diagnostics in report order, e.g. "E0104@4:5 W0002@6:5"; empty when the program is clean.
inline std::string diagList(const Analysis& a) {
    std::string out;
    for (const Diagnostic& d : a.diags.diagnostics()) {
        const LineCol lc = a.sm.lineCol(d.span);
        out += (out.empty() ? "" : " ") + std::string(diagInfo(d.code).code) + "@" + std::to_string(lc.line) + ":" +
               std::to_string(lc.column);
    }
    return out;
}

inline std::string diagsOf(const std::string& source) {
    Analysis a(source);
    return diagList(a);
}

// The message of the first diagnostic with `code`.
inline std::string messageOf(const Analysis& a, std::string_view code) {
    const Diagnostic* d = a.first(code);
    return d == nullptr ? "" : d->message;
}

inline const ast::PouDecl* findPou(const Analysis& a, std::string_view name) {
    for (const auto& unit : a.units) {
        for (const auto& d : unit.decls) {
            if (d->kind == ast::DeclKind::Pou && sameName(static_cast<const ast::PouDecl&>(*d).name.name, name)) {
                return static_cast<const ast::PouDecl*>(d.get());
            }
        }
    }
    return nullptr;
}

// The type name of the right-hand side of the `index`-th statement (an assignment) of a POU.
inline std::string assignedType(const Analysis& a, std::string_view pou, std::size_t index) {
    const ast::PouDecl* p = findPou(a, pou);
    if (p == nullptr || index >= p->body.size() || p->body[index]->kind != ast::StmtKind::Assign) {
        return "<no assignment>";
    }
    const auto& s = static_cast<const ast::AssignStmt&>(*p->body[index]);
    return s.value->type == nullptr ? "<untyped>" : s.value->type->name();
}

} // namespace takt::compiler::test
