// PROPERTY accessors in bodies, access specifiers of METHODs and PROPERTYs, CLASS instances.
// A property is a GET and/or SET METHOD of its POU (parser_oop.cpp); reading `fb.P` calls the
// getter and `fb.P := v` the setter. Once a body is checked, such reads and assignments are
// rewritten into those calls, so that code generation and interface dispatch need nothing new.
#include "sema/body.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

bool isAccessor(const Symbol* s) {
    return s != nullptr && s->kind == SymbolKind::Pou && s->pou != nullptr && s->pou->accessor != ast::Accessor::None;
}

const char* accessName(ast::Access a) {
    return a == ast::Access::Private ? "PRIVATE" : "PROTECTED";
}

// "PROPERTY 'P'" or "METHOD 'M'" for messages.
std::string memberLabel(const Symbol& s) {
    if (isAccessor(&s)) {
        const bool narrowed = s.pou->access != s.pou->propertyAccess; // `SET PRIVATE`
        if (s.pou->accessor == ast::Accessor::Set || narrowed) {
            return std::string(s.pou->accessor == ast::Accessor::Set ? "the SET" : "the GET") + " of PROPERTY '" +
                   s.pou->name.name + "'";
        }
        return "PROPERTY '" + s.pou->name.name + "'";
    }
    return (s.pou != nullptr && s.pou->isAction ? "ACTION '" : "METHOD '") + s.name + "'";
}

// The POU whose methods `e` calls: the instance type of a member's object, else `self`.
const Symbol* instanceType(const ast::Expr& e, const Symbol* self) {
    if (e.kind != ast::ExprKind::Member) {
        return self;
    }
    const ast::Expr* object = static_cast<const ast::MemberExpr&>(e).object.get();
    const Type* t = object != nullptr ? stripAlias(object->type) : nullptr;
    if (t != nullptr &&
        (t->kind() == TypeKind::FunctionBlock || t->kind() == TypeKind::Interface || t->kind() == TypeKind::Program)) {
        return static_cast<const PouType*>(t)->symbol;
    }
    return self;
}

// Where a property expression names its property (for E0727).
Span propertyNameSpan(const ast::Expr& e) {
    return e.kind == ast::ExprKind::Member ? static_cast<const ast::MemberExpr&>(e).member.span : e.span;
}

} // namespace

const Symbol* BodyChecker::propertyOf(const ast::Expr& e) const {
    const Symbol* s = nullptr;
    if (e.kind == ast::ExprKind::Name) {
        s = static_cast<const ast::NameExpr&>(e).symbol;
        if (s == pc_.pou) {
            return nullptr; // the getter's own name: its result
        }
    } else if (e.kind == ast::ExprKind::Member) {
        s = static_cast<const ast::MemberExpr&>(e).symbol;
    }
    return isAccessor(s) ? s : nullptr;
}

const Type* BodyChecker::propertyType(const Symbol& accessor, const ast::Expr& e) {
    if (!pc_.inBody) {
        cx_.error(DiagCode::CodegenUnsupported, e.span,
                  "PROPERTY '" + accessor.pou->name.name +
                      "' cannot be read in an initialiser (its GET runs in statements only); assign it in the body");
        return errorType();
    }
    if (accessor.pou->accessor == ast::Accessor::Get) {
        return accessor.type != nullptr ? accessor.type : errorType();
    }
    if (!accessor.params.empty() && accessor.params.front()->type != nullptr) {
        return accessor.params.front()->type;
    }
    return errorType();
}

const Symbol* BodyChecker::findSetter(const Symbol* owner, std::string_view name) const {
    const Symbol* s = findMember(owner, std::string(name) + ast::kSetterSuffix);
    return isAccessor(s) ? s : nullptr;
}

const Symbol* BodyChecker::accessorFor(const ast::Expr& e, const Symbol& accessor, ast::Accessor which) const {
    if (accessor.pou->accessor == which) {
        return &accessor;
    }
    const Symbol* self = pc_.fb != nullptr ? pc_.fb : accessor.owner;
    const Symbol* owner = instanceType(e, self);
    std::string name = accessor.pou->name.name;
    if (which == ast::Accessor::Set) {
        name += ast::kSetterSuffix;
    }
    const Symbol* s = findMember(owner, name);
    return isAccessor(s) && s->pou->accessor == which ? s : nullptr;
}

void BodyChecker::checkMemberAccess(const Symbol& member, Span where) {
    if (memberAccessible(member, pc_.pou)) {
        return;
    }
    const ast::Access a = member.pou->access;
    if (Diagnostic* d = cx_.error(DiagCode::MemberNotAccessible, where,
                                  memberLabel(member) + " is " + accessName(a) + " in '" + member.owner->name + "'" +
                                      (a == ast::Access::Private ? "; only its own code may use it"
                                                                 : "; only its own code and that of the POUs "
                                                                   "extending it may use it"))) {
        d->relate(member.span, "declared here");
    }
}

void BodyChecker::checkOopCall(const ast::CallExpr& e, const Symbol& callee) {
    if (callee.pou == nullptr) {
        return;
    }
    if (callee.pou->isClass) {
        cx_.error(DiagCode::ClassInstanceCalled, e.callee->span,
                  "'" + text(e.callee->span) + "' is an instance of CLASS '" + callee.name +
                      "', which has no body to call; call one of its methods");
        return;
    }
    if (callee.pouKind != ast::PouKind::Method) {
        return;
    }
    if (isAccessor(&callee)) {
        cx_.error(DiagCode::NotCallable, e.callee->span,
                  memberLabel(callee) + " is read and assigned like a variable, not called");
        return;
    }
    if (callee.pou->isAbstract && e.callee->kind == ast::ExprKind::Member) {
        const ast::Expr* object = stripParen(static_cast<const ast::MemberExpr&>(*e.callee).object.get());
        if (object != nullptr && object->kind == ast::ExprKind::Deref) {
            object = stripParen(static_cast<const ast::DerefExpr*>(object)->reference.get());
        }
        if (object != nullptr && object->kind == ast::ExprKind::Super) {
            cx_.error(DiagCode::AbstractInstance, e.callee->span,
                      "METHOD '" + callee.name + "' of '" + callee.owner->name +
                          "' is ABSTRACT: SUPER has no implementation of it to call");
            return;
        }
    }
    checkMemberAccess(callee, e.callee->kind == ast::ExprKind::Member
                                  ? static_cast<const ast::MemberExpr&>(*e.callee).member.span
                                  : e.callee->span);
}

bool BodyChecker::checkPropertyWrite(const ast::Expr& target, const Symbol& accessor) {
    const Symbol* setter = accessorFor(target, accessor, ast::Accessor::Set);
    if (setter == nullptr) {
        cx_.error(DiagCode::PropertyReadOnly, target.span,
                  "PROPERTY '" + accessor.pou->name.name + "' has no SET and cannot be assigned");
        return false;
    }
    checkMemberAccess(*setter, propertyNameSpan(target)); // SET may be narrower than GET
    return true;
}

bool BodyChecker::reportPropertyAddress(const ast::Expr& e, const std::string& what) {
    const ast::Expr* inner = stripParen(&e);
    const Symbol* accessor = inner != nullptr ? propertyOf(*inner) : nullptr;
    if (accessor == nullptr) {
        return false;
    }
    cx_.error(DiagCode::PropertyNotAddressable, e.span,
              what + " needs a variable, but '" + text(e.span) + "' is a PROPERTY (its GET and SET are methods)");
    return true;
}

// ---- rewriting into accessor calls -----------------------------------------------------------

void BodyChecker::lowerProperties(ast::StmtList& list) {
    for (ast::StmtPtr& s : list) {
        if (s != nullptr) {
            lowerPropertyStmt(s);
        }
    }
}

void BodyChecker::lowerPropertyStmt(ast::StmtPtr& s) {
    auto expr = [&](ast::ExprPtr& e) {
        if (e != nullptr) {
            lowerPropertyExpr(e);
        }
    };
    switch (s->kind) {
    case ast::StmtKind::Assign: {
        auto& a = static_cast<ast::AssignStmt&>(*s);
        expr(a.value);
        const Symbol* accessor = a.target != nullptr ? propertyOf(*a.target) : nullptr;
        if (accessor == nullptr) {
            expr(a.target);
            return;
        }
        const Symbol* setter = accessorFor(*a.target, *accessor, ast::Accessor::Set);
        if (setter == nullptr) {
            return; // E0722 reported
        }
        if (a.target->kind == ast::ExprKind::Member) {
            expr(static_cast<ast::MemberExpr&>(*a.target).object);
            static_cast<ast::MemberExpr&>(*a.target).symbol = setter;
        } else {
            static_cast<ast::NameExpr&>(*a.target).symbol = setter;
        }
        auto call = std::make_unique<ast::CallExpr>(s->span);
        call->target = setter;
        call->type = cx_.model.types.get(TypeKind::Void);
        a.target->type = nullptr;
        call->callee = std::move(a.target);
        ast::Argument arg;
        arg.span = a.value != nullptr ? a.value->span : s->span;
        arg.value = std::move(a.value);
        call->args.push_back(std::move(arg));
        auto stmt = std::make_unique<ast::ExprStmt>(s->span);
        stmt->expr = std::move(call);
        s = std::move(stmt);
        return;
    }
    case ast::StmtKind::Expr: expr(static_cast<ast::ExprStmt&>(*s).expr); return;
    case ast::StmtKind::If: {
        auto& i = static_cast<ast::IfStmt&>(*s);
        for (ast::CondBlock& b : i.branches) {
            expr(b.condition);
            lowerProperties(b.body);
        }
        lowerProperties(i.elseBody);
        return;
    }
    case ast::StmtKind::Case: {
        auto& c = static_cast<ast::CaseStmt&>(*s);
        expr(c.selector);
        for (ast::CaseBranch& b : c.branches) {
            lowerProperties(b.body);
        }
        lowerProperties(c.elseBody);
        return;
    }
    case ast::StmtKind::For: {
        auto& f = static_cast<ast::ForStmt&>(*s);
        expr(f.from);
        expr(f.to);
        expr(f.step);
        lowerProperties(f.body);
        return;
    }
    case ast::StmtKind::While: {
        auto& w = static_cast<ast::WhileStmt&>(*s);
        expr(w.condition);
        lowerProperties(w.body);
        return;
    }
    case ast::StmtKind::Repeat: {
        auto& r = static_cast<ast::RepeatStmt&>(*s);
        lowerProperties(r.body);
        expr(r.condition);
        return;
    }
    default: return;
    }
}

void BodyChecker::lowerPropertyExpr(ast::ExprPtr& e) {
    auto sub = [&](ast::ExprPtr& x) {
        if (x != nullptr) {
            lowerPropertyExpr(x);
        }
    };
    switch (e->kind) {
    case ast::ExprKind::Name:
    case ast::ExprKind::Member: {
        if (e->kind == ast::ExprKind::Member) {
            sub(static_cast<ast::MemberExpr&>(*e).object);
        }
        const Symbol* accessor = propertyOf(*e);
        if (accessor == nullptr || isError(e->type)) {
            return;
        }
        const Symbol* getter = accessorFor(*e, *accessor, ast::Accessor::Get);
        if (getter == nullptr) {
            cx_.error(DiagCode::PropertyWriteOnly, e->span,
                      "PROPERTY '" + accessor->pou->name.name + "' has no GET and cannot be read");
            return;
        }
        checkMemberAccess(*getter, propertyNameSpan(*e));
        if (e->kind == ast::ExprKind::Member) {
            static_cast<ast::MemberExpr&>(*e).symbol = getter;
        } else {
            static_cast<ast::NameExpr&>(*e).symbol = getter;
        }
        auto call = std::make_unique<ast::CallExpr>(e->span);
        call->target = getter;
        call->type = e->type;
        e->type = nullptr;
        call->callee = std::move(e);
        e = std::move(call);
        return;
    }
    case ast::ExprKind::BitAccess: sub(static_cast<ast::BitAccessExpr&>(*e).object); return;
    case ast::ExprKind::Index: {
        auto& i = static_cast<ast::IndexExpr&>(*e);
        sub(i.array);
        for (ast::ExprPtr& x : i.indices) {
            sub(x);
        }
        return;
    }
    case ast::ExprKind::Deref: sub(static_cast<ast::DerefExpr&>(*e).reference); return;
    case ast::ExprKind::Call: {
        auto& c = static_cast<ast::CallExpr&>(*e);
        if (c.callee != nullptr && c.callee->kind == ast::ExprKind::Member) {
            sub(static_cast<ast::MemberExpr&>(*c.callee).object);
        } else if (c.callee != nullptr && c.callee->kind != ast::ExprKind::Name) {
            sub(c.callee);
        }
        for (ast::Argument& a : c.args) {
            if (!a.output) { // outputs and VAR_IN_OUT arguments that are properties are E0724
                sub(a.value);
            }
        }
        return;
    }
    case ast::ExprKind::Unary: sub(static_cast<ast::UnaryExpr&>(*e).operand); return;
    case ast::ExprKind::Binary: {
        auto& b = static_cast<ast::BinaryExpr&>(*e);
        sub(b.lhs);
        sub(b.rhs);
        return;
    }
    case ast::ExprKind::Paren: sub(static_cast<ast::ParenExpr&>(*e).inner); return;
    default: return; // REF() of a property is E0724; literals and the rest hold no names
    }
}

} // namespace takt::compiler::sema
