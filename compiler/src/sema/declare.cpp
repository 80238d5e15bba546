// The declaration phase: collects every declaration of all files (and the standard library
// prelude) into scopes, then completes types, members, inheritance, globals, configuration and
// addresses. See declare.h for the lazy-completion scheme.
#include "sema/declare.h"

#include "takt/compiler/names.h"
#include "takt/compiler/parser.h"

namespace takt::compiler::sema {

bool isStdlibSymbol(const Symbol* s) {
    return s != nullptr && (s->kind == SymbolKind::StandardFunction || s->span.file == kStdlibFile);
}

bool declareSymbol(Context& cx, Scope* scope, Symbol* symbol) {
    const Symbol* existing = scope->declare(symbol);
    if (existing == nullptr) {
        return true;
    }
    if (isStdlibSymbol(existing) && !isStdlibSymbol(symbol)) {
        // OSCAT declares its own DAY_OF_WEEK, projects their own MAX or TON: in CODESYS the
        // user's declaration wins, here too. The standard FBs were completed against the
        // standard library before any user declaration (declare()), so a CTU keeps the
        // standard R_TRIG inside even when the project redefines R_TRIG.
        scope->replace(symbol);
        if (existing->kind == SymbolKind::Pou && isVendorLibraryFb(existing->name)) {
            return true; // not an IEC name: a project's own PID or DIFU is no leniency
        }
        cx.lenient(DiagCode::StandardNameRedefined, symbol->span,
                   "'" + symbol->name + "' is the name of a standard " +
                       (existing->kind == SymbolKind::StandardFunction ? "function" : "function block") +
                       "; this declaration replaces it");
        return true;
    }
    if (Diagnostic* d = cx.error(DiagCode::DuplicateDeclaration, symbol->span,
                                 "'" + symbol->name + "' is already declared in this scope")) {
        if (existing->span.valid() && !isStdlibSymbol(existing)) {
            d->relate(existing->span, "'" + existing->name + "' is first declared here");
        }
    }
    return false;
}

std::string qualifiedName(const Symbol* s) {
    std::string out = s->name;
    for (const Symbol* o = s->owner; o != nullptr; o = o->owner) {
        if (!o->name.empty()) {
            out = o->name + "." + out;
        }
    }
    return out;
}

namespace {

TypeKind pouTypeKind(ast::PouKind k) {
    return (k == ast::PouKind::Program || k == ast::PouKind::TestProgram) ? TypeKind::Program : TypeKind::FunctionBlock;
}

class Collector {
public:
    explicit Collector(Context& cx) : cx_(cx), st_(*cx.decl), model_(cx.model) {}

    void decls(std::vector<ast::DeclPtr>& list, Scope* scope, const Symbol* owner) {
        for (ast::DeclPtr& d : list) {
            switch (d->kind) {
            case ast::DeclKind::Namespace: ns(static_cast<ast::NamespaceDecl&>(*d), scope, owner); break;
            case ast::DeclKind::Using:
                for (const ast::QualifiedName& n : static_cast<ast::UsingDecl&>(*d).names) {
                    st_.usings.emplace_back(scope, &n);
                }
                break;
            case ast::DeclKind::Pou: pou(static_cast<ast::PouDecl&>(*d), scope, owner, nullptr); break;
            case ast::DeclKind::Interface: iface(static_cast<ast::InterfaceDecl&>(*d), scope, owner); break;
            case ast::DeclKind::Type: type(static_cast<ast::TypeDecl&>(*d), scope, owner); break;
            case ast::DeclKind::GlobalVars:
                topBlock(static_cast<ast::GlobalVarsDecl&>(*d).block, scope, owner, SectionPlace::TopLevel);
                break;
            case ast::DeclKind::Configuration: config(static_cast<ast::ConfigurationDecl&>(*d), scope, owner); break;
            }
        }
    }

private:
    Symbol* make(SymbolKind kind, const ast::Identifier& id, const Symbol* owner, Scope* declScope) {
        Symbol* s = model_.newSymbol();
        s->kind = kind;
        s->name = id.name;
        s->span = id.span;
        s->owner = owner;
        s->declScope = declScope;
        return s;
    }

    // NAMESPACE A.B is merged with every other declaration of A and A.B, in any file.
    void ns(ast::NamespaceDecl& n, Scope* scope, const Symbol* owner) {
        for (const ast::Identifier& part : n.name.parts) {
            Symbol* existing = scope->findLocal(part.name);
            if (existing != nullptr && existing->kind == SymbolKind::Namespace) {
                scope = existing->scope;
                owner = existing;
                continue;
            }
            Symbol* s = make(SymbolKind::Namespace, part, owner, scope);
            s->scope = model_.newScope(scope, s);
            s->scope->probes = scope->probes;
            declareSymbol(cx_, scope, s);
            scope = s->scope;
            owner = s;
        }
        decls(n.decls, scope, owner);
    }

    Symbol* pou(ast::PouDecl& p, Scope* scope, const Symbol* owner, const Symbol* container) {
        Symbol* s = make(SymbolKind::Pou, p.name, container != nullptr ? container : owner, scope);
        if (p.accessor == ast::Accessor::Set) {
            s->name += ast::kSetterSuffix; // the getter has the property's name
        }
        s->pouKind = p.pouKind;
        s->pou = &p;
        s->scope = model_.newScope(scope, s);
        if (p.pouKind != ast::PouKind::Function && p.pouKind != ast::PouKind::Method) {
            s->type = model_.types.add(
                std::make_unique<PouType>(pouTypeKind(p.pouKind), qualifiedName(s), static_cast<const Symbol*>(s)));
        }
        declareSymbol(cx_, scope, s);
        st_.pous[s].decl = &p;
        if (container == nullptr || container->kind != SymbolKind::Interface) {
            st_.pouOrder.push_back(s);
            if (st_.inStdlib) {
                st_.stdlibPous.push_back(s);
            }
        }
        for (auto& m : p.methods) {
            pou(*m, s->scope, owner, s);
        }
        return s;
    }

    void iface(ast::InterfaceDecl& i, Scope* scope, const Symbol* owner) {
        Symbol* s = make(SymbolKind::Interface, i.name, owner, scope);
        s->interfaceDecl = &i;
        s->scope = model_.newScope(scope, s);
        s->type = model_.types.add(std::make_unique<PouType>(TypeKind::Interface, qualifiedName(s), s));
        // A variable of an interface type holds a reference, stored like REF_TO.
        const_cast<Type*>(s->type)->size = 8;
        const_cast<Type*>(s->type)->align = 8;
        declareSymbol(cx_, scope, s);
        st_.interfaceOrder.push_back(s);
        for (auto& m : i.methods) {
            pou(*m, s->scope, owner, s);
        }
    }

    void type(ast::TypeDecl& t, Scope* scope, const Symbol* owner) {
        Symbol* s = make(SymbolKind::Type, t.name, owner, scope);
        s->typeDecl = &t;
        s->init = t.init.get();
        s->scope = model_.newScope(scope, s);
        // Structs and enums exist before they are complete, so REF_TO can point at them early.
        if (t.spec != nullptr && t.spec->kind == ast::TypeSpecKind::Struct) {
            auto st = std::make_unique<StructType>(qualifiedName(s));
            st->symbol = s;
            s->type = model_.types.add(std::move(st));
        } else if (t.spec != nullptr && t.spec->kind == ast::TypeSpecKind::Enum) {
            auto et = std::make_unique<EnumType>(qualifiedName(s), model_.types.get(TypeKind::Int));
            et->symbol = s;
            s->type = model_.types.add(std::move(et));
        }
        declareSymbol(cx_, scope, s);
        st_.types[s] = PendingType{&t, scope, Progress::NotStarted};
        st_.typeOrder.push_back(s);
    }

    void topBlock(ast::VarBlock& block, Scope* scope, const Symbol* owner, SectionPlace place) {
        checkSection(cx_, block, place);
        if (block.section == ast::VarSection::Config || block.section == ast::VarSection::Access) {
            st_.pathBlocks.push_back(PathBlock{&block, scope});
            return;
        }
        std::uint32_t index = 0;
        declareVarBlock(cx_, block, scope, owner, index, nullptr, true);
    }

    void config(ast::ConfigurationDecl& c, Scope* scope, const Symbol* owner) {
        Symbol* s = make(SymbolKind::Configuration, c.name, owner, scope);
        s->scope = model_.newScope(scope, s);
        declareSymbol(cx_, scope, s);
        model_.configurations.push_back(s);
        PendingConfig pending;
        pending.decl = &c;
        pending.symbol = s;
        st_.configurations.push_back(std::move(pending));
        for (ast::VarBlock& b : c.varBlocks) {
            topBlock(b, s->scope, s, SectionPlace::Configuration);
        }
        for (ast::ResourceDecl& r : c.resources) {
            Scope* rscope = s->scope;
            if (!r.name.name.empty()) {
                Symbol* rs = make(SymbolKind::Resource, r.name, s, s->scope);
                rs->scope = model_.newScope(s->scope, rs);
                declareSymbol(cx_, s->scope, rs);
                rscope = rs->scope;
                st_.configurations.back().resourceScopes.push_back(rscope);
                st_.configurations.back().resourceSymbols.push_back(rs);
            } else {
                st_.configurations.back().resourceScopes.push_back(rscope);
                st_.configurations.back().resourceSymbols.push_back(s);
            }
            for (ast::VarBlock& b : r.varBlocks) {
                topBlock(b, rscope, st_.configurations.back().resourceSymbols.back(), SectionPlace::Resource);
            }
        }
    }

    Context& cx_;
    DeclState& st_;
    SemanticModel& model_;
};

void resolveUsings(Context& cx) {
    for (auto& [scope, name] : cx.decl->usings) {
        Symbol* ns = lookupQualified(cx, *name, scope, true);
        if (ns == nullptr || ns->kind != SymbolKind::Namespace) {
            cx.error(DiagCode::UnknownNamespace, name->span, "USING names no namespace '" + name->text() + "'");
            continue;
        }
        scope->usings.push_back(ns->scope);
    }
}

void parseStandardLibrary(Context& cx) {
    const std::string_view text = standardFbSource(cx.options.vendor);
    if (text.empty()) {
        return;
    }
    SemanticModel& model = cx.model;
    model.stdlibFile = std::make_unique<SourceFile>(kStdlibFile, "<stdlib>", std::string(text));
    // The prelude is part of takt; a syntax error in it is a takt bug, not the user's.
    DiagnosticSink preludeDiags;
    model.stdlibUnit = parseSource(*model.stdlibFile, preludeDiags);
    model.stdlibUnit.file = kStdlibFile;
}

} // namespace

void declare(Context& cx) {
    DeclState state;
    cx.decl = &state;
    SemanticModel& model = cx.model;
    Collector collector(cx);

    declareStandardFunctions(cx);
    parseStandardLibrary(cx);
    state.inStdlib = true;
    collector.decls(model.stdlibUnit.decls, model.global.get(), nullptr);
    for (Symbol* p : state.stdlibPous) {
        completePouMembers(cx, p); // before a user TON or R_TRIG can replace the standard one
    }
    state.inStdlib = false;
    for (ast::CompilationUnit& unit : cx.units) {
        collector.decls(unit.decls, model.global.get(), nullptr);
    }
    resolveUsings(cx);
    resolveInheritance(cx);
    reserveDispatchHeaders(cx);

    for (Symbol* t : state.typeOrder) {
        completeTypeSymbol(cx, t);
    }
    for (auto& pending : state.vars) {
        if (!pending->symbols.empty()) {
            ensureVarType(cx, pending->symbols.front());
        }
    }
    for (Symbol* p : state.pouOrder) {
        completePouMembers(cx, p);
    }
    for (Symbol* i : state.interfaceOrder) {
        for (Symbol* m : i->scope->symbols()) {
            if (m->kind == SymbolKind::Pou) {
                completePouMembers(cx, m);
            }
        }
    }
    for (Symbol* p : state.pouOrder) {
        if (p->type != nullptr &&
            (p->type->kind() == TypeKind::FunctionBlock || p->type->kind() == TypeKind::Program)) {
            completePouLayout(cx, p, p->span);
        }
    }
    checkObjectOrientation(cx);
    checkClassesAndModifiers(cx);
    checkExternals(cx);
    checkShadowing(cx);
    declareConfigurations(cx);
    resolveConfigPaths(cx);
    checkAddresses(cx);

    for (Symbol* p : state.pouOrder) {
        if (!isStdlibSymbol(p)) {
            model.pous.push_back(p);
        }
    }
    for (Symbol* p : state.stdlibPous) {
        model.pous.push_back(p);
    }
    for (int pass = 0; pass < 2; ++pass) {
        for (Symbol* t : state.typeOrder) {
            if (isStdlibSymbol(t) == (pass == 1)) {
                model.typeDecls.push_back(t);
            }
        }
    }
    cx.decl = nullptr;
}

} // namespace takt::compiler::sema
