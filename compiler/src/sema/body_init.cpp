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

    // Names in array bounds and STRING lengths are uses too (declarations evaluate them).
    for (const ast::VarBlock& block : pou.pou->varBlocks) {
        for (const ast::VarDecl& vd : block.vars) {
            markTypeUses(vd.type.get());
        }
    }

    pc_.inBody = true;
    checkStmts(mut(pou.pou->body));
    lowerProperties(mut(pou.pou->body));
    for (const ast::LabelStmt* j : pc_.jumps) {
        if (pc_.labels.count(upperName(j->name.name)) == 0) {
            cx_.error(DiagCode::UnknownLabel, j->name.span,
                      "JMP to '" + j->name.name + "': '" + pou.name + "' has no label of that name");
        }
    }

    const bool hasResult = pou.type != nullptr && stripAlias(pou.type)->kind() != TypeKind::Void &&
                           stripAlias(pou.type)->kind() != TypeKind::Error;
    if ((pou.pouKind == ast::PouKind::Function || pou.pouKind == ast::PouKind::Method) && hasResult &&
        !pc_.resultAssigned && !pou.pou->body.empty()) {
        cx_.diags.report(DiagCode::FunctionResultUnset, pou.pou->name.span,
                         std::string(pou.pouKind == ast::PouKind::Function ? "FUNCTION '" : "METHOD '") + pou.name +
                             "' never assigns its result; it always returns the default value");
    }
}

void BodyChecker::markExprUses(const ast::Expr* e) {
    if (e == nullptr) {
        return;
    }
    switch (e->kind) {
    case ast::ExprKind::Name:
        if (const Symbol* s = findName(static_cast<const ast::NameExpr*>(e)->name.name)) {
            used_.insert(s);
        }
        return;
    case ast::ExprKind::Paren: markExprUses(static_cast<const ast::ParenExpr*>(e)->inner.get()); return;
    case ast::ExprKind::Unary: markExprUses(static_cast<const ast::UnaryExpr*>(e)->operand.get()); return;
    case ast::ExprKind::Binary:
        markExprUses(static_cast<const ast::BinaryExpr*>(e)->lhs.get());
        markExprUses(static_cast<const ast::BinaryExpr*>(e)->rhs.get());
        return;
    case ast::ExprKind::Call:
        for (const auto& a : static_cast<const ast::CallExpr*>(e)->args) {
            markExprUses(a.value.get());
        }
        return;
    default: return;
    }
}

void BodyChecker::markTypeUses(const ast::TypeSpec* spec) {
    if (spec == nullptr) {
        return;
    }
    switch (spec->kind) {
    case ast::TypeSpecKind::String: markExprUses(static_cast<const ast::StringTypeSpec*>(spec)->length.get()); return;
    case ast::TypeSpecKind::Array: {
        const auto* a = static_cast<const ast::ArrayTypeSpec*>(spec);
        for (const ast::Range& r : a->dimensions) {
            markExprUses(r.lower.get());
            markExprUses(r.upper.get());
        }
        markTypeUses(a->element.get());
        return;
    }
    case ast::TypeSpecKind::Subrange: {
        const auto* r = static_cast<const ast::SubrangeTypeSpec*>(spec);
        markExprUses(r->range.lower.get());
        markExprUses(r->range.upper.get());
        return;
    }
    case ast::TypeSpecKind::Ref: markTypeUses(static_cast<const ast::RefTypeSpec*>(spec)->target.get()); return;
    default: return;
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

void BodyChecker::checkProgramArguments(const Symbol& instance) {
    const Type* t = instance.type != nullptr ? stripAlias(instance.type) : nullptr;
    if (instance.instance == nullptr || t == nullptr || t->kind() != TypeKind::Program) {
        return;
    }
    const Symbol* program = static_cast<const PouType*>(t)->symbol;
    pc_ = PouContext{};
    pc_.scope = instance.declScope != nullptr ? instance.declScope : cx_.model.global.get();
    for (ast::Argument& a : mut(*instance.instance).args) {
        const Symbol* p = nullptr;
        for (const Symbol* q : program->params) {
            if (a.name && sameName(q->name, a.name->name)) {
                p = q;
            }
        }
        if (p == nullptr || !a.value) {
            if (!a.name && a.value) {
                cx_.error(DiagCode::MixedArguments, a.span,
                          "the arguments of program instance '" + instance.name + "' must be formal (name := value)");
            }
            continue; // an unknown name is reported with the declaration
        }
        if (a.output != (p->section == ast::VarSection::Output)) {
            cx_.error(DiagCode::OutputWithAssign, a.span,
                      std::string("'") + p->name + "' is a " + ast::sectionKeyword(p->section) + " of '" +
                          program->name + "'; connect it with " +
                          (p->section == ast::VarSection::Output ? "=>" : ":="));
            continue;
        }
        if (p->section == ast::VarSection::Output) {
            checkOutputArgument(a.value.get(), *p);
        } else if (p->section == ast::VarSection::InOut) {
            checkInOutArgument(*a.value, *p, program->name);
        } else {
            checkExpr(*a.value, p->type);
            convert(*a.value, p->type);
        }
    }
}

void BodyChecker::checkTypeInits() {
    std::set<const Type*> structsDone;
    for (const Symbol* s : cx_.model.typeDecls) {
        if (s->type == nullptr || !cx_.options.checksBodiesIn(s->span.file)) {
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
    if (isStruct && static_cast<const StructType*>(t)->isUnion && init.fields.size() > 1) {
        cx_.error(DiagCode::InvalidInitializer, init.fields[1].field.span,
                  "a UNION initialiser names one member; its members share their bytes");
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
    const AnalysisOptions& o = cx.options;
    for (const Symbol* g : cx.model.globals) {
        if (o.checksBodiesIn(g->span.file)) {
            checker.checkGlobalInit(*g);
        }
    }
    checker.checkTypeInits();
    for (const Symbol* inst : cx.model.programInstances) {
        if (o.checksBodiesIn(inst->span.file)) {
            checker.checkProgramArguments(*inst);
        }
    }
    for (const Symbol* pou : cx.model.pous) {
        if (o.checksBodiesIn(pou->span.file)) {
            checker.checkPou(*pou);
        }
    }
    checker.reportRecursion();
    checker.reportUnused();
}

void BodyChecker::markUsed(const Symbol* s, Span at) {
    used_.insert(s);
    if (s->kind == SymbolKind::Variable &&
        (s->section == ast::VarSection::Var || s->section == ast::VarSection::Temp) && s->owner != nullptr &&
        s->owner->kind == SymbolKind::Pou && s->span.file != at.file) {
        cx_.model.foreignLocalUses.push_back({nullptr, s, at});
    }
}

void BodyChecker::reportUnused() {
    for (const CallEdge& c : calls_) {
        cx_.model.calls.push_back({c.caller, c.callee, c.span});
    }
    // Paths of VAR_ACCESS and VAR_CONFIG use variables from outside any body.
    for (const Symbol* a : cx_.model.accessPaths) {
        used_.insert(a->accessPath.begin(), a->accessPath.end());
        used_.insert(a->target);
    }
    for (const ConfigBinding& b : cx_.model.configBindings) {
        used_.insert(b.path.begin(), b.path.end());
    }
    for (const Symbol* pou : cx_.model.pous) {
        if (pou->scope == nullptr || pou->span.file == kStdlibFile || pou->pou == nullptr || pou->pou->prototypeOnly ||
            !cx_.options.checksBodiesIn(pou->span.file)) {
            continue;
        }
        // A variable takt generates ('$' in its name, such as an SFC action's Q and A, declared
        // even for a chart with errors) is none the user could remove.
        for (const Symbol* v : pou->scope->symbols()) {
            if (v->kind == SymbolKind::Variable && !v->hidden && !isGeneratedName(v->name) &&
                (v->section == ast::VarSection::Var || v->section == ast::VarSection::Temp) && !v->address &&
                used_.count(v) == 0) {
                cx_.diags.report(DiagCode::UnusedVariable, v->span,
                                 "local variable '" + v->name + "' of '" + pou->name + "' is never used");
            }
        }
    }
}

} // namespace takt::compiler::sema
