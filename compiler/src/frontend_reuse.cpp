// Reusing a kept declarations unit in the next analysis (frontend_cache.h, clearForReuse).
#include "frontend_cache.h"

namespace takt::compiler {

namespace {

// Semantic analysis writes its results into the syntax tree (a type's resolution, an
// expression's type and symbol). Before a kept declarations unit goes into the next analysis
// those are cleared, so nothing of the last model survives into the new one. A call moves its
// EN / ENO arguments out of the argument list, which cannot be undone here: a unit with a call
// in its declarations (a rare initialiser) is parsed again instead. So is one with a
// CONFIGURATION (program arguments are checked like calls).

bool clearExpr(ast::Expr* e);

bool clearType(ast::TypeSpec* t);

bool clearVar(ast::VarDecl& v) {
    return clearType(v.type.get()) && clearExpr(v.init.get());
}

bool clearType(ast::TypeSpec* t) {
    if (t == nullptr) {
        return true;
    }
    t->resolved = nullptr;
    switch (t->kind) {
    case ast::TypeSpecKind::Named: return true;
    case ast::TypeSpecKind::String: return clearExpr(static_cast<ast::StringTypeSpec*>(t)->length.get());
    case ast::TypeSpecKind::Array: {
        auto* a = static_cast<ast::ArrayTypeSpec*>(t);
        for (ast::Range& r : a->dimensions) {
            if (!clearExpr(r.lower.get()) || !clearExpr(r.upper.get())) {
                return false;
            }
        }
        return clearType(a->element.get());
    }
    case ast::TypeSpecKind::Ref: return clearType(static_cast<ast::RefTypeSpec*>(t)->target.get());
    case ast::TypeSpecKind::Subrange: {
        auto* s = static_cast<ast::SubrangeTypeSpec*>(t);
        return clearType(s->base.get()) && clearExpr(s->range.lower.get()) && clearExpr(s->range.upper.get());
    }
    case ast::TypeSpecKind::Enum: {
        auto* en = static_cast<ast::EnumTypeSpec*>(t);
        bool ok = clearType(en->base.get());
        for (ast::EnumValueDecl& v : en->values) {
            ok = ok && clearExpr(v.value.get());
        }
        return ok;
    }
    case ast::TypeSpecKind::Struct: {
        bool ok = true;
        for (ast::VarDecl& f : static_cast<ast::StructTypeSpec*>(t)->fields) {
            ok = ok && clearVar(f);
        }
        return ok;
    }
    }
    return false;
}

bool clearExpr(ast::Expr* e) {
    if (e == nullptr) {
        return true;
    }
    e->type = nullptr;
    switch (e->kind) {
    case ast::ExprKind::Name: static_cast<ast::NameExpr*>(e)->symbol = nullptr; return true;
    case ast::ExprKind::Member: {
        auto* m = static_cast<ast::MemberExpr*>(e);
        m->symbol = nullptr;
        return clearExpr(m->object.get());
    }
    case ast::ExprKind::BitAccess: return clearExpr(static_cast<ast::BitAccessExpr*>(e)->object.get());
    case ast::ExprKind::Index: {
        auto* x = static_cast<ast::IndexExpr*>(e);
        bool ok = clearExpr(x->array.get());
        for (ast::ExprPtr& i : x->indices) {
            ok = ok && clearExpr(i.get());
        }
        return ok;
    }
    case ast::ExprKind::Deref: return clearExpr(static_cast<ast::DerefExpr*>(e)->reference.get());
    case ast::ExprKind::Call: return false;
    case ast::ExprKind::Unary: return clearExpr(static_cast<ast::UnaryExpr*>(e)->operand.get());
    case ast::ExprKind::Binary: {
        auto* b = static_cast<ast::BinaryExpr*>(e);
        return clearExpr(b->lhs.get()) && clearExpr(b->rhs.get());
    }
    case ast::ExprKind::Ref: return clearExpr(static_cast<ast::RefExpr*>(e)->operand.get());
    case ast::ExprKind::ArrayInit: {
        bool ok = true;
        for (ast::ArrayInitElement& el : static_cast<ast::ArrayInitExpr*>(e)->elements) {
            ok = ok && clearExpr(el.repeat.get()) && clearExpr(el.value.get());
        }
        return ok;
    }
    case ast::ExprKind::StructInit: {
        bool ok = true;
        for (ast::FieldInit& f : static_cast<ast::StructInitExpr*>(e)->fields) {
            ok = ok && clearExpr(f.value.get());
        }
        return ok;
    }
    case ast::ExprKind::Paren: return clearExpr(static_cast<ast::ParenExpr*>(e)->inner.get());
    case ast::ExprKind::Literal:
    case ast::ExprKind::EnumLiteral:
    case ast::ExprKind::This:
    case ast::ExprKind::Super:
    case ast::ExprKind::DirectAddress:
    case ast::ExprKind::Error: return true;
    }
    return false;
}

bool clearBlock(ast::VarBlock& b) {
    bool ok = b.access.empty() && b.config.empty(); // paths are resolved like expressions in bodies
    for (ast::VarDecl& v : b.vars) {
        ok = ok && clearVar(v);
    }
    return ok;
}

bool clearPou(ast::PouDecl& p) {
    bool ok = p.body.empty() && clearType(p.returnType.get());
    for (ast::VarBlock& b : p.varBlocks) {
        ok = ok && clearBlock(b);
    }
    for (auto& m : p.methods) {
        ok = ok && clearPou(*m);
    }
    return ok;
}

bool clearDecls(std::vector<ast::DeclPtr>& decls) {
    bool ok = true;
    for (ast::DeclPtr& d : decls) {
        switch (d->kind) {
        case ast::DeclKind::Pou: ok = ok && clearPou(static_cast<ast::PouDecl&>(*d)); break;
        case ast::DeclKind::Interface:
            for (auto& m : static_cast<ast::InterfaceDecl&>(*d).methods) {
                ok = ok && clearPou(*m);
            }
            break;
        case ast::DeclKind::Type: {
            auto& t = static_cast<ast::TypeDecl&>(*d);
            ok = ok && clearType(t.spec.get()) && clearExpr(t.init.get());
            break;
        }
        case ast::DeclKind::GlobalVars: ok = ok && clearBlock(static_cast<ast::GlobalVarsDecl&>(*d).block); break;
        case ast::DeclKind::Configuration: ok = false; break;
        case ast::DeclKind::Namespace: ok = ok && clearDecls(static_cast<ast::NamespaceDecl&>(*d).decls); break;
        case ast::DeclKind::Using: break;
        }
    }
    return ok;
}

} // namespace

bool clearForReuse(ast::CompilationUnit& unit) {
    return clearDecls(unit.decls);
}

} // namespace takt::compiler
