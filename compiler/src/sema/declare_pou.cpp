// POU members (variable sections, parameters, result types), EXTENDS/IMPLEMENTS and the
// object-oriented consistency checks.
#include <functional>

#include "sema/declare.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

const char* placeName(SectionPlace p) {
    switch (p) {
    case SectionPlace::Function: return "a FUNCTION";
    case SectionPlace::Method: return "a METHOD";
    case SectionPlace::FunctionBlock: return "a FUNCTION_BLOCK";
    case SectionPlace::Program: return "a PROGRAM";
    case SectionPlace::TopLevel: return "a global declaration list";
    case SectionPlace::Configuration: return "a CONFIGURATION";
    case SectionPlace::Resource: return "a RESOURCE";
    }
    return "this place";
}

bool sectionAllowed(ast::VarSection s, SectionPlace p) {
    using VS = ast::VarSection;
    switch (p) {
    case SectionPlace::Function:
    case SectionPlace::Method:
    case SectionPlace::FunctionBlock:
        return s == VS::Var || s == VS::Temp || s == VS::Input || s == VS::Output || s == VS::InOut ||
               s == VS::External || s == VS::Static;
    case SectionPlace::Program: return s != VS::Config;
    case SectionPlace::TopLevel:
    case SectionPlace::Configuration: return s == VS::Global || s == VS::Config || s == VS::Access;
    case SectionPlace::Resource: return s == VS::Global || s == VS::Access;
    }
    return false;
}

SectionPlace placeOf(ast::PouKind k) {
    switch (k) {
    case ast::PouKind::Function: return SectionPlace::Function;
    case ast::PouKind::Method: return SectionPlace::Method;
    case ast::PouKind::FunctionBlock:
    case ast::PouKind::TestFunctionBlock: return SectionPlace::FunctionBlock;
    default: return SectionPlace::Program;
    }
}

bool isFunctionBlock(const Symbol* s) {
    return s != nullptr && s->kind == SymbolKind::Pou &&
           (s->pouKind == ast::PouKind::FunctionBlock || s->pouKind == ast::PouKind::TestFunctionBlock);
}

// A method of `fb` or of one of its bases.
const Symbol* findMethod(const Symbol* fb, std::string_view name) {
    for (int depth = 0; fb != nullptr && depth < 64; ++depth, fb = fb->base) {
        const Symbol* m = fb->scope != nullptr ? fb->scope->findLocal(name) : nullptr;
        if (m != nullptr && m->kind == SymbolKind::Pou && m->pouKind == ast::PouKind::Method) {
            return m;
        }
    }
    return nullptr;
}

bool sameSignature(const Symbol* a, const Symbol* b) {
    if (stripAlias(a->type) != stripAlias(b->type) || a->params.size() != b->params.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a->params.size(); ++i) {
        const Symbol* x = a->params[i];
        const Symbol* y = b->params[i];
        if (x->section != y->section || stripAlias(x->type) != stripAlias(y->type) || !sameName(x->name, y->name)) {
            return false;
        }
    }
    return true;
}

// Every method an interface requires (its own and those of the interfaces it extends).
void interfaceMethods(const Symbol* iface, std::vector<const Symbol*>& out, int depth = 0) {
    if (iface == nullptr || depth > 64 || iface->scope == nullptr) {
        return;
    }
    for (const Symbol* m : iface->scope->symbols()) {
        if (m->kind == SymbolKind::Pou) {
            out.push_back(m);
        }
    }
    for (const Symbol* base : iface->interfaces) {
        interfaceMethods(base, out, depth + 1);
    }
}

// "method 'M'", or "the SET of PROPERTY 'P'" for an accessor (whose symbol name is internal).
std::string memberText(const Symbol* m) {
    if (m->pou != nullptr && m->pou->accessor != ast::Accessor::None) {
        return std::string(m->pou->accessor == ast::Accessor::Get ? "the GET" : "the SET") + " of PROPERTY '" +
               m->pou->name.name + "'";
    }
    return "method '" + m->name + "'";
}

} // namespace

void checkSection(Context& cx, const ast::VarBlock& block, SectionPlace place) {
    if (!sectionAllowed(block.section, place)) {
        cx.error(DiagCode::InvalidDeclSection, block.span,
                 std::string(ast::sectionKeyword(block.section)) + " is not allowed in " + placeName(place));
        return;
    }
    const ast::VarSection s = block.section;
    if (block.constant && !(s == ast::VarSection::Var || s == ast::VarSection::Global ||
                            s == ast::VarSection::External || s == ast::VarSection::Static)) {
        cx.error(DiagCode::InvalidQualifier, block.span,
                 std::string("CONSTANT is not allowed on ") + ast::sectionKeyword(s));
    }
    const bool retainable = s == ast::VarSection::Var || s == ast::VarSection::Global || s == ast::VarSection::Input ||
                            s == ast::VarSection::Output;
    if ((block.retain || block.nonRetain) &&
        (!retainable || place == SectionPlace::Function || place == SectionPlace::Method)) {
        cx.error(DiagCode::InvalidQualifier, block.span,
                 std::string(block.nonRetain    ? "NON_RETAIN"
                             : block.persistent ? "PERSISTENT"
                                                : "RETAIN") +
                     " is not allowed on " + ast::sectionKeyword(s) + " in " + placeName(place));
    }
}

namespace {

// R_EDGE / F_EDGE: only on a BOOL VAR_INPUT of a FUNCTION_BLOCK, which gets a hidden BOOL member
// holding the input's value of the last call (the FB body turns the input into the edge).
void declareEdgeMemory(Context& cx, const ast::VarDecl& vd, ast::VarSection section, Scope* scope, Symbol* input) {
    const Symbol* owner = input->owner;
    const bool inFb =
        owner != nullptr && owner->kind == SymbolKind::Pou &&
        (owner->pouKind == ast::PouKind::FunctionBlock || owner->pouKind == ast::PouKind::TestFunctionBlock);
    const bool boolType = vd.type != nullptr && vd.type->kind == ast::TypeSpecKind::Named &&
                          static_cast<const ast::NamedTypeSpec&>(*vd.type).name.parts.size() == 1 &&
                          sameName(static_cast<const ast::NamedTypeSpec&>(*vd.type).name.parts[0].name, "BOOL");
    if (section != ast::VarSection::Input || !inFb || !boolType) {
        cx.error(DiagCode::InvalidQualifier, vd.edgeSpan,
                 std::string(vd.edge == ast::InputEdge::Rising ? "R_EDGE" : "F_EDGE") +
                     " is only allowed on a BOOL VAR_INPUT of a FUNCTION_BLOCK");
        return;
    }
    Symbol* memory = cx.model.newSymbol();
    memory->kind = SymbolKind::Variable;
    memory->name = input->name + "$edge"; // '$' cannot start or continue an ST identifier
    memory->span = vd.edgeSpan;
    memory->type = cx.model.types.get(TypeKind::Bool);
    memory->owner = owner;
    memory->section = ast::VarSection::Var;
    memory->declIndex = input->declIndex;
    memory->declScope = scope;
    memory->hidden = true;
    if (declareSymbol(cx, scope, memory)) {
        input->edgeMemory = memory;
    }
}

} // namespace

void declareVarBlock(Context& cx, ast::VarBlock& block, Scope* scope, const Symbol* owner, std::uint32_t& index,
                     std::vector<const Symbol*>* params, bool deferTypes) {
    for (ast::VarDecl& vd : block.vars) {
        const Type* type = nullptr;
        PendingVar* pending = nullptr;
        if (deferTypes) {
            cx.decl->vars.push_back(std::make_unique<PendingVar>());
            pending = cx.decl->vars.back().get();
            pending->decl = &vd;
            pending->scope = scope;
        } else {
            type = vd.type != nullptr ? resolveType(cx, *vd.type, scope) : cx.model.types.get(TypeKind::Error);
        }
        for (const ast::Identifier& name : vd.names) {
            Symbol* s = cx.model.newSymbol();
            s->kind = SymbolKind::Variable;
            s->name = name.name;
            s->span = name.span;
            s->type = type;
            s->owner = owner;
            s->section = block.section;
            s->constant = block.constant;
            s->retain = block.retain || block.persistent;
            s->address = vd.address;
            s->varDecl = &vd;
            s->init = vd.init.get();
            s->declIndex = index++;
            s->declScope = scope;
            // A variable named like a standard FB (`TP : BOOL`) hides the FB in its POU, so
            // `x : TP` there would name the variable: IEC forbids it, CODESYS accepts it (W1011).
            // Names of standard functions are fine for locals (`limit`, `max`, `len` are
            // everyday names); a call `LIMIT(…)` on a non-FB variable still means the function.
            if (scope != cx.model.global.get() && !isStdlibSymbol(s)) {
                const Symbol* std = cx.model.global->findLocal(name.name);
                if (isStdlibSymbol(std) && std->kind != SymbolKind::StandardFunction) {
                    cx.lenient(DiagCode::StandardNameRedefined, name.span,
                               "variable '" + name.name + "' has the name of a standard function block");
                }
            }
            if (!declareSymbol(cx, scope, s)) {
                continue;
            }
            if (pending != nullptr) {
                pending->symbols.push_back(s);
                cx.decl->varOf[s] = pending;
            }
            if (vd.edge != ast::InputEdge::None) {
                declareEdgeMemory(cx, vd, block.section, scope, s);
            }
            if (block.section == ast::VarSection::Global || block.section == ast::VarSection::Static) {
                cx.model.globals.push_back(s); // storage of its own, outside any instance or frame
            }
            if (params != nullptr &&
                (block.section == ast::VarSection::Input || block.section == ast::VarSection::Output ||
                 block.section == ast::VarSection::InOut)) {
                params->push_back(s);
            }
            if (vd.address && !isStdlibSymbol(s)) {
                cx.decl->located.push_back(s);
            }
            if (block.constant && vd.init == nullptr && block.section != ast::VarSection::External) {
                cx.error(DiagCode::ConstantMissingInit, name.span, "CONSTANT '" + name.name + "' has no initial value");
            }
        }
    }
}

void completePouMembers(Context& cx, Symbol* pou) {
    if (cx.decl == nullptr) {
        return;
    }
    auto it = cx.decl->pous.find(pou);
    if (it == cx.decl->pous.end() || it->second.members != Progress::NotStarted) {
        return;
    }
    it->second.members = Progress::Running;
    ast::PouDecl& decl = *it->second.decl;
    if (decl.returnType != nullptr) {
        pou->type = resolveType(cx, *decl.returnType, pou->scope);
    } else if (decl.pouKind == ast::PouKind::Function || decl.pouKind == ast::PouKind::Method) {
        pou->type = cx.model.types.get(TypeKind::Void);
    }
    if (pou->base != nullptr) {
        // Inherited parameters come first, so a derived FB is called like its base plus its own.
        auto* base = const_cast<Symbol*>(pou->base);
        completePouMembers(cx, base);
        pou->params = base->params;
    }
    const SectionPlace place = placeOf(decl.pouKind);
    std::uint32_t index = 0;
    for (ast::VarBlock& block : decl.varBlocks) {
        checkSection(cx, block, place);
        if (block.section == ast::VarSection::Access || block.section == ast::VarSection::Config) {
            cx.decl->pathBlocks.push_back(PathBlock{&block, pou->scope});
            continue;
        }
        declareVarBlock(cx, block, pou->scope, pou, index, &pou->params, true);
        if (place == SectionPlace::Function || place == SectionPlace::Method) {
            for (const ast::VarDecl& vd : block.vars) {
                if (vd.address) {
                    cx.error(DiagCode::LocatedInFunction, vd.address->span,
                             "located variable '" + (vd.names.empty() ? std::string() : vd.names[0].name) +
                                 "' is not allowed in " + placeName(place));
                }
            }
        }
    }
    // The types once every name is declared: an array bound may use a CONSTANT declared further down.
    for (Symbol* s : pou->scope->symbols()) {
        if (s->kind == SymbolKind::Variable && s->type == nullptr) {
            ensureVarType(cx, s);
        }
    }
    // Scalar CONSTANT initialisers must be constant expressions.
    for (Symbol* s : pou->scope->symbols()) {
        if (s->kind == SymbolKind::Variable && s->constant && s->init != nullptr && s->type != nullptr &&
            (isElementary(s->type) || stripAlias(s->type)->kind() == TypeKind::Enum ||
             stripAlias(s->type)->kind() == TypeKind::Subrange)) {
            (void)evaluateConstant(cx, *s->init, pou->scope, true);
        }
    }
    cx.decl->pous[pou].members = Progress::Done;
}

void resolveInheritance(Context& cx) {
    DeclState& st = *cx.decl;
    for (Symbol* pou : st.pouOrder) {
        const ast::PouDecl& decl = *pou->pou;
        if (decl.extends) {
            Symbol* base = lookupQualified(cx, *decl.extends, pou->declScope, true);
            if (base == nullptr) {
                cx.error(DiagCode::UnknownType, decl.extends->span,
                         "unknown FUNCTION_BLOCK '" + decl.extends->text() + "'");
            } else if (!isFunctionBlock(base) || !isFunctionBlock(pou)) {
                cx.error(DiagCode::NotAFunctionBlock, decl.extends->span,
                         "'" + decl.extends->text() + "' is not a FUNCTION_BLOCK that can be extended");
            } else {
                pou->base = base;
            }
        }
        for (const ast::QualifiedName& name : decl.implements) {
            Symbol* iface = lookupQualified(cx, name, pou->declScope, true);
            if (iface == nullptr) {
                cx.error(DiagCode::UnknownType, name.span, "unknown INTERFACE '" + name.text() + "'");
            } else if (iface->kind != SymbolKind::Interface) {
                cx.error(DiagCode::NotAnInterface, name.span, "'" + name.text() + "' is not an INTERFACE");
            } else {
                pou->interfaces.push_back(iface);
            }
        }
    }
    for (Symbol* iface : st.interfaceOrder) {
        for (const ast::QualifiedName& name : iface->interfaceDecl->extends) {
            Symbol* base = lookupQualified(cx, name, iface->declScope, true);
            if (base == nullptr) {
                cx.error(DiagCode::UnknownType, name.span, "unknown INTERFACE '" + name.text() + "'");
            } else if (base->kind != SymbolKind::Interface) {
                cx.error(DiagCode::NotAnInterface, name.span, "'" + name.text() + "' is not an INTERFACE");
            } else {
                iface->interfaces.push_back(base);
            }
        }
    }
    // Cycles: report once, at the EXTENDS of the first declaration (in source order) that reaches
    // itself, and cut that edge so later phases never loop.
    for (Symbol* pou : st.pouOrder) {
        const Symbol* b = pou->base;
        for (int depth = 0; b != nullptr && depth < 1000 && b != pou; ++depth) {
            b = b->base;
        }
        if (b == pou) {
            cx.error(DiagCode::CyclicInheritance, pou->pou->extends->span,
                     "FUNCTION_BLOCK '" + pou->name + "' extends itself through '" + pou->base->name + "'");
            pou->base = nullptr;
        }
    }
    for (Symbol* iface : st.interfaceOrder) {
        std::function<bool(const Symbol*, int)> reaches = [&](const Symbol* from, int depth) {
            if (depth > 64) {
                return false;
            }
            for (const Symbol* i : from->interfaces) {
                if (i == iface || reaches(i, depth + 1)) {
                    return true;
                }
            }
            return false;
        };
        for (std::size_t i = 0; i < iface->interfaces.size(); ++i) {
            const Symbol* b = iface->interfaces[i];
            if (b == iface || reaches(b, 0)) {
                cx.error(DiagCode::CyclicInheritance, iface->interfaceDecl->extends[i].span,
                         "INTERFACE '" + iface->name + "' extends itself through '" + b->name + "'");
                iface->interfaces.erase(iface->interfaces.begin() + static_cast<std::ptrdiff_t>(i));
                break;
            }
        }
    }
}

// An FB reached through an INTERFACE, or whose methods (or property accessors) some derived FB
// overrides, carries the offset of its dispatch table in its first 4 bytes: calls that need
// the instance's own override find it there. The header belongs to the root of its EXTENDS
// chain so that a derived instance and its base part agree on where every member lives.
void reserveDispatchHeaders(Context& cx) {
    auto overridesBase = [](const Symbol* fb) {
        if (fb->base == nullptr || fb->scope == nullptr) {
            return false;
        }
        for (const Symbol* m : fb->scope->symbols()) {
            if (m->kind == SymbolKind::Pou && m->pouKind == ast::PouKind::Method &&
                findMethod(fb->base, m->name) != nullptr) {
                return true;
            }
        }
        return false;
    };
    for (Symbol* pou : cx.decl->pouOrder) {
        if (!isFunctionBlock(pou) || (pou->interfaces.empty() && !overridesBase(pou))) {
            continue;
        }
        Symbol* root = pou;
        for (int depth = 0; root->base != nullptr && depth < 1000; ++depth) {
            root = const_cast<Symbol*>(root->base);
        }
        root->dispatchHeader = 4;
    }
}

void checkObjectOrientation(Context& cx) {
    for (Symbol* pou : cx.decl->pouOrder) {
        if (isStdlibSymbol(pou) || !isFunctionBlock(pou)) {
            continue;
        }
        // Overrides keep the base method's signature.
        for (const Symbol* m : pou->scope->symbols()) {
            if (m->kind != SymbolKind::Pou || m->pouKind != ast::PouKind::Method || pou->base == nullptr) {
                continue;
            }
            if (const Symbol* overridden = findMethod(pou->base, m->name)) {
                if (!sameSignature(m, overridden)) {
                    if (Diagnostic* d = cx.error(DiagCode::MethodSignatureMismatch, m->span,
                                                 memberText(m) + " differs from the one it overrides in '" +
                                                     overridden->owner->name + "'")) {
                        d->relate(overridden->span, "overridden method");
                    }
                }
            }
        }
        for (const ast::QualifiedName& name : pou->pou->implements) {
            const Symbol* iface = lookupQualified(cx, name, pou->declScope, false);
            if (iface == nullptr || iface->kind != SymbolKind::Interface) {
                continue;
            }
            std::vector<const Symbol*> required;
            interfaceMethods(iface, required);
            for (const Symbol* proto : required) {
                const Symbol* impl = findMethod(pou, proto->name);
                if (impl == nullptr) {
                    if (!pou->pou->isAbstract) {
                        cx.error(DiagCode::InterfaceNotImplemented, name.span,
                                 std::string(pou->pou->isClass ? "CLASS '" : "FUNCTION_BLOCK '") + pou->name +
                                     "' does not implement " + memberText(proto) + " of INTERFACE '" +
                                     proto->owner->name + "'");
                    }
                } else if (!sameSignature(impl, proto)) {
                    if (Diagnostic* d = cx.error(DiagCode::MethodSignatureMismatch, impl->span,
                                                 memberText(impl) + " differs from its declaration in INTERFACE '" +
                                                     proto->owner->name + "'")) {
                        d->relate(proto->span, "interface method");
                    }
                }
            }
        }
    }
}

} // namespace takt::compiler::sema
