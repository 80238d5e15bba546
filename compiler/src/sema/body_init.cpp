// checkBodies(): every initialiser (POU variables in declaration order, globals, TYPE and
// STRUCT field initialisers) and every POU and METHOD body.
#include <set>

#include "sema/body.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

bool isFbKind(ast::PouKind k) {
    return k == ast::PouKind::FunctionBlock || k == ast::PouKind::TestFunctionBlock;
}

std::uint64_t elementCount(const std::vector<ArrayDim>& dims, std::size_t from) {
    std::uint64_t n = 1;
    for (std::size_t i = from; i < dims.size(); ++i) {
        n *= dims[i].count();
    }
    return n;
}

} // namespace

void BodyChecker::checkPou(const Symbol& pou) {
    if (pou.pou == nullptr || pou.pou->prototypeOnly) {
        return;
    }
    pc_ = PouContext{};
    pc_.pou = &pou;
    pc_.scope = pou.scope != nullptr ? pou.scope : cx_.model.global.get();
    if (isFbKind(pou.pouKind)) {
        pc_.fb = &pou;
    } else if (pou.pouKind == ast::PouKind::Method && pou.owner != nullptr && pou.owner->kind == SymbolKind::Pou &&
               (isFbKind(pou.owner->pouKind) || pou.owner->pouKind == ast::PouKind::Program)) {
        pc_.fb = isFbKind(pou.owner->pouKind) ? pou.owner : nullptr;
    }

    // Initialisers run once, in declaration order; each may use the variables before it.
    if (pou.scope != nullptr) {
        std::set<const ast::Expr*> done;
        for (const Symbol* v : pou.scope->symbols()) {
            if (v->kind != SymbolKind::Variable || v->init == nullptr || !done.insert(v->init).second) {
                continue;
            }
            pc_.initIndex = v->declIndex;
            checkInit(mut(*v->init), v->type);
        }
        pc_.initIndex.reset();
    }

    checkStmts(mut(pou.pou->body));

    const bool hasResult = pou.type != nullptr && stripAlias(pou.type)->kind() != TypeKind::Void &&
                           stripAlias(pou.type)->kind() != TypeKind::Error;
    if ((pou.pouKind == ast::PouKind::Function || pou.pouKind == ast::PouKind::Method) && hasResult &&
        !pc_.resultAssigned && !pou.pou->body.empty()) {
        cx_.diags.report(DiagCode::FunctionResultUnset, pou.pou->name.span,
                         std::string(pou.pouKind == ast::PouKind::Function ? "FUNCTION '" : "METHOD '") + pou.name +
                             "' never assigns its result; it always returns the default value");
    }
}

void BodyChecker::checkGlobalInit(const Symbol& var) {
    if (var.init == nullptr) {
        return;
    }
    pc_ = PouContext{};
    pc_.scope = var.declScope != nullptr ? var.declScope : cx_.model.global.get();
    checkInit(mut(*var.init), var.type);
}

void BodyChecker::checkTypeInits() {
    std::set<const Type*> structsDone;
    for (const Symbol* s : cx_.model.typeDecls) {
        if (s->type == nullptr) {
            continue;
        }
        pc_ = PouContext{};
        pc_.scope = s->declScope != nullptr ? s->declScope : cx_.model.global.get();
        if (s->typeDecl != nullptr && s->typeDecl->init) {
            checkInit(*mut(*s->typeDecl).init, s->type);
        }
        const Type* t = stripAlias(s->type);
        if (t->kind() == TypeKind::Struct && structsDone.insert(t).second) {
            const auto* st = static_cast<const StructType*>(t);
            std::set<const ast::Expr*> done;
            for (const Field& f : st->fields) {
                if (f.init != nullptr && done.insert(f.init).second) {
                    checkInit(mut(*f.init), f.type);
                }
            }
        }
    }
}

void BodyChecker::checkInit(ast::Expr& init, const Type* target) {
    if (isError(target)) {
        checkExpr(init);
        return;
    }
    const Type* t = stripAlias(target);
    if (init.kind == ast::ExprKind::ArrayInit) {
        auto& ai = static_cast<ast::ArrayInitExpr&>(init);
        init.type = target;
        if (t->kind() != TypeKind::Array) {
            cx_.error(DiagCode::InvalidInitializer, init.span,
                      "an array initialiser cannot initialise a value of type " + typeName(target));
            for (auto& el : ai.elements) {
                if (el.value) {
                    checkExpr(*el.value);
                }
            }
            return;
        }
        const auto* at = static_cast<const ArrayType*>(t);
        const std::uint64_t given = checkArrayInit(ai, at->element, at->dims.size());
        const std::uint64_t capacity = elementCount(at->dims, 0);
        if (!at->dims.empty() && given > capacity) {
            cx_.error(DiagCode::TooManyInitializers, init.span,
                      std::to_string(given) + " initial values for " + typeName(target) + ", which has " +
                          std::to_string(capacity) + " element" + (capacity == 1 ? "" : "s"));
        }
        return;
    }
    if (init.kind == ast::ExprKind::StructInit) {
        checkStructInit(static_cast<ast::StructInitExpr&>(init), target);
        return;
    }
    const Type* it = checkExpr(init, target);
    if (isError(it)) {
        return;
    }
    const Type* sit = stripAlias(it);
    const bool aggregateTarget =
        t->kind() == TypeKind::Array || t->kind() == TypeKind::Struct || t->kind() == TypeKind::FunctionBlock;
    if (aggregateTarget && sit != t &&
        (isElementary(sit) || sit->kind() == TypeKind::IntLiteral || sit->kind() == TypeKind::RealLiteral)) {
        cx_.error(
            DiagCode::InvalidInitializer, init.span,
            "'" + text(init.span) + "' is a single value; " + typeName(target) + " needs " +
                (t->kind() == TypeKind::Array ? "an array initialiser [ … ]" : "a structure initialiser ( … := … )"));
        return;
    }
    convert(init, target);
}

// Returns how many elements the initialiser supplies; nested [ … ] initialise the inner
// dimensions of a multi-dimensional array.
std::uint64_t BodyChecker::checkArrayInit(ast::ArrayInitExpr& init, const Type* element, std::size_t dimsLeft) {
    std::uint64_t total = 0;
    for (auto& el : init.elements) {
        std::uint64_t repeat = 1;
        if (el.repeat) {
            checkExpr(*el.repeat);
            std::optional<ConstValue> n = evaluateConstant(cx_, *el.repeat, pc_.scope, true);
            if (n && n->kind == ConstValue::Kind::Int && n->i >= 0) {
                repeat = static_cast<std::uint64_t>(n->i);
            } else if (n) {
                cx_.error(DiagCode::InvalidInitializer, el.repeat->span,
                          "the repeat count '" + text(el.repeat->span) + "' is not a non-negative integer constant");
            }
        }
        std::uint64_t each = 1;
        if (el.value) {
            if (el.value->kind == ast::ExprKind::ArrayInit && dimsLeft > 1 &&
                stripAlias(element)->kind() != TypeKind::Array) {
                each = checkArrayInit(static_cast<ast::ArrayInitExpr&>(*el.value), element, dimsLeft - 1);
                el.value->type = element;
            } else {
                checkInit(*el.value, element);
            }
        }
        total += repeat * each;
    }
    return total;
}

void BodyChecker::checkStructInit(ast::StructInitExpr& init, const Type* target) {
    const Type* t = stripAlias(target);
    init.type = target;
    const bool isStruct = t->kind() == TypeKind::Struct;
    const bool isFb = t->kind() == TypeKind::FunctionBlock;
    if (!isStruct && !isFb) {
        cx_.error(DiagCode::InvalidInitializer, init.span,
                  "a structure initialiser cannot initialise a value of type " + typeName(target));
        for (auto& f : init.fields) {
            if (f.value) {
                checkExpr(*f.value);
            }
        }
        return;
    }
    std::set<std::string> seen;
    for (auto& f : init.fields) {
        const Type* ft = nullptr;
        if (isStruct) {
            if (const Field* field = static_cast<const StructType*>(t)->field(f.field.name)) {
                ft = field->type;
            }
        } else {
            const Symbol* m = findMember(static_cast<const PouType*>(t)->symbol, f.field.name);
            if (m != nullptr && m->kind == SymbolKind::Variable && m->section != ast::VarSection::InOut &&
                m->section != ast::VarSection::Temp) {
                ft = m->type;
            }
        }
        if (ft == nullptr) {
            cx_.error(DiagCode::UnknownMember, f.field.span,
                      "'" + typeName(target) + "' has no " + (isStruct ? "field" : "initialisable member") + " '" +
                          f.field.name + "'");
            if (f.value) {
                checkExpr(*f.value);
            }
            continue;
        }
        if (!seen.insert(upperName(f.field.name)).second) {
            cx_.error(DiagCode::InvalidInitializer, f.field.span, "'" + f.field.name + "' is initialised twice");
        }
        if (f.value) {
            checkInit(*f.value, ft);
        }
    }
}

void checkBodies(Context& cx) {
    BodyChecker checker(cx);
    for (const Symbol* g : cx.model.globals) {
        checker.checkGlobalInit(*g);
    }
    checker.checkTypeInits();
    for (const Symbol* pou : cx.model.pous) {
        checker.checkPou(*pou);
    }
}

} // namespace takt::compiler::sema
