// Declaration checks of IEC 61131-3 ed. 3 classes and of the FINAL / ABSTRACT modifiers. A
// CLASS is compiled as a FUNCTION_BLOCK (PouDecl::isClass) that has no body and no parameters,
// so instances, methods, EXTENDS, IMPLEMENTS and interface dispatch are shared with FBs.
#include "sema/declare.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

const char* kindName(const ast::PouDecl& p) {
    return p.isClass ? "CLASS" : "FUNCTION_BLOCK";
}

void checkClassBody(Context& cx, const Symbol& pou) {
    const ast::PouDecl& decl = *pou.pou;
    for (const ast::VarBlock& b : decl.varBlocks) {
        if (b.section == ast::VarSection::Input || b.section == ast::VarSection::Output ||
            b.section == ast::VarSection::InOut) {
            cx.error(DiagCode::ClassMember, b.span,
                     std::string(ast::sectionKeyword(b.section)) + " is not allowed in CLASS '" + pou.name +
                         "'; a CLASS has VAR sections and methods only");
        }
    }
    if (!decl.body.empty()) {
        cx.error(DiagCode::ClassMember, decl.body.front()->span,
                 "CLASS '" + pou.name + "' has no body; put the statements in a METHOD");
    }
}

// The method `name` of `fb`'s bases, nearest first.
const Symbol* baseMethod(const Symbol* fb, const std::string& name) {
    int guard = 0;
    for (const Symbol* b = fb->base; b != nullptr && guard < 64; b = b->base, ++guard) {
        const Symbol* m = b->scope != nullptr ? b->scope->findLocal(name) : nullptr;
        if (m != nullptr && m->kind == SymbolKind::Pou && m->pouKind == ast::PouKind::Method) {
            return m;
        }
    }
    return nullptr;
}

void checkAbstractInstance(Context& cx, const Symbol& var) {
    if (var.kind != SymbolKind::Variable || var.section == ast::VarSection::InOut || var.hidden) {
        return;
    }
    const Type* t = stripAlias(var.type);
    if (t == nullptr || t->kind() != TypeKind::FunctionBlock) {
        return;
    }
    const Symbol* fb = static_cast<const PouType*>(t)->symbol;
    if (fb != nullptr && fb->pou != nullptr && fb->pou->isAbstract) {
        cx.error(DiagCode::AbstractInstance, var.span,
                 "'" + var.name + "' is an instance of ABSTRACT " + kindName(*fb->pou) + " '" + fb->name +
                     "'; declare an instance of a POU that extends it");
    }
}

} // namespace

void checkClassesAndModifiers(Context& cx) {
    for (Symbol* pou : cx.decl->pouOrder) {
        if (isStdlibSymbol(pou) || pou->pou == nullptr) {
            continue;
        }
        const ast::PouDecl& decl = *pou->pou;
        if (decl.isClass) {
            checkClassBody(cx, *pou);
        }
        if (pou->base != nullptr && pou->base->pou != nullptr && decl.extends) {
            const ast::PouDecl& base = *pou->base->pou;
            if (base.isClass != decl.isClass) {
                cx.error(DiagCode::ClassMember, decl.extends->span,
                         std::string(kindName(decl)) + " '" + pou->name + "' cannot extend " + kindName(base) + " '" +
                             pou->base->name + "'");
            }
            if (base.isFinal) {
                if (Diagnostic* d = cx.error(DiagCode::FinalOverridden, decl.extends->span,
                                             std::string(kindName(base)) + " '" + pou->base->name +
                                                 "' is FINAL and cannot be extended")) {
                    d->relate(pou->base->span, "declared FINAL here");
                }
            }
        }
        if (pou->scope == nullptr) {
            continue;
        }
        for (const Symbol* s : pou->scope->symbols()) {
            if (s->kind == SymbolKind::Pou && s->pouKind == ast::PouKind::Method && pou->base != nullptr) {
                const Symbol* overridden = baseMethod(pou, s->name);
                if (overridden != nullptr && overridden->pou != nullptr && overridden->pou->isFinal) {
                    if (Diagnostic* d = cx.error(DiagCode::FinalOverridden, s->span,
                                                 "'" + s->pou->name.name + "' of '" + overridden->owner->name +
                                                     "' is FINAL and cannot be overridden")) {
                        d->relate(overridden->span, "declared FINAL here");
                    }
                }
            }
            checkAbstractInstance(cx, *s);
        }
    }
    for (const Symbol* g : cx.model.globals) {
        checkAbstractInstance(cx, *g);
    }
}

} // namespace takt::compiler::sema
