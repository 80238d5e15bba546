// Globals and externals, CONFIGURATION / RESOURCE / TASK / program instances, VAR_CONFIG and
// VAR_ACCESS paths, and direct addresses (shape, size, wildcards, overlaps).
#include <algorithm>

#include "sema/declare.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

bool isProgram(const Symbol* s) {
    return s != nullptr && s->kind == SymbolKind::Pou &&
           (s->pouKind == ast::PouKind::Program || s->pouKind == ast::PouKind::TestProgram);
}

const Symbol* instanceSymbol(const Type* t) {
    t = stripAlias(t);
    if (t != nullptr && (t->kind() == TypeKind::FunctionBlock || t->kind() == TypeKind::Program)) {
        return static_cast<const PouType*>(t)->symbol;
    }
    return nullptr;
}

// A member of an FB/PROGRAM instance, including inherited ones.
const Symbol* findMember(const Symbol* pou, std::string_view name) {
    for (int depth = 0; pou != nullptr && depth < 64; ++depth, pou = pou->base) {
        if (pou->scope != nullptr) {
            if (const Symbol* s = pou->scope->findLocal(name)) {
                return s;
            }
        }
    }
    return nullptr;
}

struct PathPart {
    std::string name;
    Span span;
};

// resource.instance.fb.var, with array indices dropped (they select an element of the same type).
bool flattenPath(const ast::Expr* e, std::vector<PathPart>& out) {
    if (e == nullptr) {
        return false;
    }
    switch (e->kind) {
    case ast::ExprKind::Name: {
        const auto& n = static_cast<const ast::NameExpr&>(*e);
        out.push_back({n.name.name, n.name.span});
        return true;
    }
    case ast::ExprKind::Member: {
        const auto& m = static_cast<const ast::MemberExpr&>(*e);
        if (!flattenPath(m.object.get(), out)) {
            return false;
        }
        out.push_back({m.member.name, m.member.span});
        return true;
    }
    case ast::ExprKind::Index: return flattenPath(static_cast<const ast::IndexExpr&>(*e).array.get(), out);
    default: return false;
    }
}

std::string pathText(const std::vector<PathPart>& parts) {
    std::string out;
    for (const PathPart& p : parts) {
        out += (out.empty() ? "" : ".") + p.name;
    }
    return out;
}

// Resolves a VAR_CONFIG/VAR_ACCESS path to the symbols along it; reports E0604 when it fails.
std::vector<const Symbol*> resolvePath(Context& cx, const ast::Expr* path, const Scope* scope) {
    std::vector<PathPart> parts;
    std::vector<const Symbol*> out;
    if (!flattenPath(path, parts) || parts.empty()) {
        cx.error(DiagCode::UnknownConfigPath, path != nullptr ? path->span : Span{},
                 "a configuration path must be a chain of names");
        return {};
    }
    const Symbol* cur = lookup(cx, scope, parts[0].name);
    if (cur == nullptr) {
        for (const Symbol* inst : cx.model.programInstances) {
            if (sameName(inst->name, parts[0].name)) {
                cur = inst;
                break;
            }
        }
    }
    for (std::size_t i = 0; cur != nullptr; ++i) {
        out.push_back(cur);
        if (i + 1 == parts.size()) {
            break;
        }
        const std::string& next = parts[i + 1].name;
        const Symbol* found = nullptr;
        switch (cur->kind) {
        case SymbolKind::Configuration:
        case SymbolKind::Resource: found = cur->scope->findLocal(next); break;
        case SymbolKind::ProgramInstance: found = findMember(instanceSymbol(cur->type), next); break;
        case SymbolKind::Pou: found = isProgram(cur) ? findMember(cur, next) : nullptr; break;
        case SymbolKind::Variable: {
            const Type* t = stripAlias(cur->type);
            while (t != nullptr && t->kind() == TypeKind::Array) {
                t = stripAlias(static_cast<const ArrayType*>(t)->element);
            }
            found = findMember(instanceSymbol(t), next);
            break;
        }
        default: break;
        }
        if (found == nullptr) {
            cx.error(DiagCode::UnknownConfigPath, parts[i + 1].span,
                     "'" + pathText(parts) + "' names no variable: '" + cur->name + "' has no member '" + next + "'");
            return {};
        }
        cur = found;
    }
    if (cur == nullptr) {
        cx.error(DiagCode::UnknownConfigPath, parts[0].span,
                 "'" + pathText(parts) + "' names no variable: unknown '" + parts[0].name + "'");
        return {};
    }
    if (out.back()->kind != SymbolKind::Variable) {
        cx.error(DiagCode::UnknownConfigPath, path->span, "'" + pathText(parts) + "' names no variable");
        return {};
    }
    return out;
}

std::uint32_t addressWidth(ast::AddressSize s) {
    switch (s) {
    case ast::AddressSize::Bit: return 1;
    case ast::AddressSize::Byte: return 8;
    case ast::AddressSize::Word: return 16;
    case ast::AddressSize::DWord: return 32;
    case ast::AddressSize::LWord: return 64;
    case ast::AddressSize::None: return 0;
    }
    return 0;
}

// Occupied bits of a located variable in its area, [begin, end).
struct Occupied {
    ast::AddressArea area;
    std::uint64_t begin;
    std::uint64_t end;
    const Symbol* symbol;
    const ast::Address* address;
    Span span;
};

std::optional<Occupied> occupied(const ast::Address& a, const Type* type, AddressMode mode, const Symbol* s,
                                 Span span) {
    if (a.wildcard || a.indices.empty()) {
        return std::nullopt;
    }
    const bool bit = a.size == ast::AddressSize::Bit || a.size == ast::AddressSize::None;
    if (bit) {
        if (a.indices.size() != 2) {
            return std::nullopt;
        }
        const std::uint64_t b = std::uint64_t{a.indices[0]} * 8 + a.indices[1];
        return Occupied{a.area, b, b + 1, s, &a, span};
    }
    const std::uint64_t bytes = addressWidth(a.size) / 8;
    // Word mode (CODESYS): %IW w starts at byte 2w; byte mode (S7/truST): at byte w.
    const std::uint64_t start = (mode == AddressMode::Word ? a.indices[0] * bytes : a.indices[0]) * 8;
    const std::uint64_t length = std::max<std::uint64_t>(bytes, type != nullptr ? type->size : 0) * 8;
    return Occupied{a.area, start, start + length, s, &a, span};
}

bool timeConstantOk(const std::optional<ConstValue>& v) {
    return v && v->kind == ConstValue::Kind::Time && isTimeLike(v->type);
}

} // namespace

bool checkAddressShape(Context& cx, const ast::Address& a, const Type* type, std::string_view name) {
    const std::string text = a.text();
    const bool bit = a.size == ast::AddressSize::Bit || a.size == ast::AddressSize::None;
    bool ok = true;
    if (a.wildcard) {
        ok = a.indices.empty();
    } else if (bit) {
        ok = a.indices.size() == 2 && a.indices[1] < 8;
    } else {
        ok = a.indices.size() == 1;
    }
    if (!ok) {
        cx.error(DiagCode::InvalidAddress, a.span,
                 "malformed address '" + text + "' of '" + std::string(name) + "'" +
                     (bit && !a.wildcard ? ": a bit address is %IXbyte.bit with bit 0..7" : ""));
        return false;
    }
    const Type* t = stripAlias(type);
    if (t == nullptr || t->kind() == TypeKind::Error || (a.wildcard && a.size == ast::AddressSize::None)) {
        return true;
    }
    while (t->kind() == TypeKind::Array) {
        t = stripAlias(static_cast<const ArrayType*>(t)->element);
    }
    const std::uint32_t want = bit ? 1 : addressWidth(a.size);
    const bool isBool = stripAlias(t)->kind() == TypeKind::Bool;
    const bool fits = bit ? isBool : (!isBool && bitWidth(t) == want);
    const Type* element = stripAlias(t);
    if (!fits && !bit && (isNumeric(element) || isBitString(element)) && !isBool) {
        // `%ML50 : DWORD`, `%MW0 : DINT`: CODESYS and matiec locate it at the address's start.
        cx.lenient(DiagCode::AddressSizeDiffers, a.span,
                   "'" + std::string(name) + "' of type " + type->name() + " (" + std::to_string(bitWidth(t)) +
                       " bits) is located at the " + std::to_string(want) + "-bit address " + text +
                       "; it takes its own " + std::to_string(bitWidth(t) / 8) +
                       " bytes from the address's first byte");
        return true;
    }
    if (!fits) {
        cx.error(DiagCode::AddressSizeMismatch, a.span,
                 "'" + std::string(name) + "' of type " + type->name() + " cannot be located at " + text +
                     (bit ? " (a bit address needs BOOL)" : " (needs a " + std::to_string(want) + "-bit type)"));
    }
    return true;
}

void checkExternals(Context& cx) {
    for (Symbol* pou : cx.decl->pouOrder) {
        for (Symbol* s : pou->scope->symbols()) {
            if (s->kind != SymbolKind::Variable || s->section != ast::VarSection::External) {
                continue;
            }
            const Symbol* global = nullptr;
            for (const Symbol* g : cx.model.globals) {
                if (g->section != ast::VarSection::Static && sameName(g->name, s->name)) {
                    global = g;
                    break;
                }
            }
            if (global == nullptr) {
                cx.error(DiagCode::ExternalWithoutGlobal, s->span,
                         "VAR_EXTERNAL '" + s->name + "' names no VAR_GLOBAL");
                continue;
            }
            s->target = global;
            const Type* gt = ensureVarType(cx, const_cast<Symbol*>(global));
            if (gt != nullptr && s->type != nullptr && stripAlias(gt) != stripAlias(s->type) &&
                stripAlias(gt)->kind() != TypeKind::Error && stripAlias(s->type)->kind() != TypeKind::Error) {
                if (Diagnostic* d = cx.error(DiagCode::ExternalTypeMismatch, s->span,
                                             "VAR_EXTERNAL '" + s->name + "' is declared " + s->type->name() +
                                                 " but its VAR_GLOBAL is " + gt->name())) {
                    d->relate(global->span, "VAR_GLOBAL '" + global->name + "' is declared here");
                }
            }
        }
    }
}

void checkShadowing(Context& cx) {
    for (Symbol* pou : cx.decl->pouOrder) {
        if (isStdlibSymbol(pou)) {
            continue;
        }
        for (Symbol* s : pou->scope->symbols()) {
            if (s->kind != SymbolKind::Variable || s->section == ast::VarSection::External ||
                s->section == ast::VarSection::Global) {
                continue;
            }
            const Symbol* outer = lookup(cx, pou->declScope, s->name);
            if (outer != nullptr && outer->kind == SymbolKind::Variable && outer->section == ast::VarSection::Global) {
                if (Diagnostic* d = cx.error(DiagCode::ShadowedName, s->span,
                                             "local '" + s->name + "' hides the global variable of the same name")) {
                    d->relate(outer->span, "the global '" + outer->name + "' is declared here");
                }
            }
        }
    }
}

void declareConfigurations(Context& cx) {
    SemanticModel& model = cx.model;
    for (PendingConfig& pc : cx.decl->configurations) {
        for (std::size_t r = 0; r < pc.decl->resources.size(); ++r) {
            ast::ResourceDecl& res = pc.decl->resources[r];
            Scope* scope = pc.resourceScopes[r];
            const Symbol* owner = pc.resourceSymbols[r];
            for (ast::TaskDecl& task : res.tasks) {
                Symbol* s = model.newSymbol();
                s->kind = SymbolKind::Task;
                s->name = task.name.name;
                s->span = task.name.span;
                s->owner = owner;
                s->task = &task;
                s->declScope = scope;
                if (!declareSymbol(cx, scope, s)) {
                    continue;
                }
                model.tasks.push_back(s);
                if (task.interval != nullptr) {
                    auto v = evaluateConstant(cx, *task.interval, scope, false);
                    if (!timeConstantOk(v) || v->i < 0) {
                        cx.error(DiagCode::InvalidTaskSetting, task.interval->span,
                                 "INTERVAL of TASK '" + s->name + "' must be a non-negative TIME constant");
                    } else {
                        s->taskInterval = v->i;
                    }
                }
                if (task.priority == nullptr) {
                    cx.error(DiagCode::TaskWithoutPriority, task.name.span,
                             "TASK '" + s->name +
                                 "' has no PRIORITY, which IEC 61131-3 requires; it runs at priority 0, the highest "
                                 "(write PRIORITY := n, 0 the highest)");
                } else {
                    auto v = evaluateConstant(cx, *task.priority, scope, false);
                    if (!v || v->kind != ConstValue::Kind::Int || (v->i < 0 && !v->isUnsigned)) {
                        cx.error(DiagCode::InvalidTaskSetting, task.priority->span,
                                 "PRIORITY of TASK '" + s->name + "' must be a non-negative integer constant");
                    } else {
                        s->taskPriority = v->i;
                    }
                }
                if (task.single != nullptr) {
                    const Symbol* trigger = nullptr;
                    if (task.single->kind == ast::ExprKind::Name) {
                        trigger = lookup(cx, scope, static_cast<const ast::NameExpr&>(*task.single).name.name);
                    }
                    const Type* tt = trigger != nullptr && trigger->kind == SymbolKind::Variable
                                         ? ensureVarType(cx, const_cast<Symbol*>(trigger))
                                         : nullptr;
                    if (tt == nullptr || stripAlias(tt)->kind() != TypeKind::Bool) {
                        cx.error(DiagCode::InvalidTaskSetting, task.single->span,
                                 "SINGLE of TASK '" + s->name + "' must name a BOOL variable");
                    } else {
                        s->taskSingle = trigger;
                    }
                }
            }
            for (ast::ProgramInstanceDecl& inst : res.programs) {
                Symbol* s = model.newSymbol();
                s->kind = SymbolKind::ProgramInstance;
                s->name = inst.name.name;
                s->span = inst.name.span;
                s->owner = owner;
                s->instance = &inst;
                s->retain = inst.retain;
                s->declScope = scope;
                const Symbol* type = lookupQualified(cx, inst.type, scope, true);
                if (type == nullptr) {
                    cx.error(DiagCode::UnknownPou, inst.type.span, "unknown PROGRAM '" + inst.type.text() + "'");
                    s->type = model.types.get(TypeKind::Error);
                } else if (!isProgram(type)) {
                    cx.error(DiagCode::AccessNotProgram, inst.type.span,
                             "program instance '" + s->name + "' has type '" + inst.type.text() +
                                 "', which is not a PROGRAM");
                    s->type = model.types.get(TypeKind::Error);
                } else {
                    s->type = type->type;
                }
                if (inst.task) {
                    const Symbol* task = scope->findLocal(inst.task->name);
                    if (task == nullptr || task->kind != SymbolKind::Task) {
                        cx.error(DiagCode::UnknownTask, inst.task->span,
                                 "program instance '" + s->name + "' is bound to unknown TASK '" + inst.task->name +
                                     "'");
                    } else {
                        s->taskSymbol = task;
                    }
                }
                if (type != nullptr && isProgram(type)) {
                    completePouMembers(cx, const_cast<Symbol*>(type));
                    for (const ast::Argument& arg : inst.args) {
                        if (!arg.name) {
                            continue;
                        }
                        const auto& params = type->params;
                        const bool known = std::any_of(params.begin(), params.end(), [&](const Symbol* p) {
                            return sameName(p->name, arg.name->name);
                        });
                        if (!known) {
                            cx.error(DiagCode::UnknownParameter, arg.name->span,
                                     "PROGRAM '" + type->name + "' has no parameter '" + arg.name->name + "'");
                        }
                    }
                }
                if (declareSymbol(cx, scope, s)) {
                    model.programInstances.push_back(s);
                }
            }
        }
    }
}

namespace {

// The variables a VAR_CONFIG entry may locate although they have no AT: storage that lives as long
// as its instance (not VAR_TEMP, VAR_IN_OUT, VAR_EXTERNAL or a CONSTANT).
struct PlainEntry {
    Span span;
    std::string name;
    std::string address;
};

// CODESYS (and truST) locate a variable declared without AT from VAR_CONFIG; IEC 61131-3 only
// completes AT %I* / %Q* / %M* declarations. A truST project locates every I/O variable this
// way, so the warning comes once per file, at its first entry, naming the others; under
// dialect iec each entry is an error of its own, since each needs fixing.
void reportPlainEntries(Context& cx, const std::vector<PlainEntry>& entries) {
    const auto one = [](const PlainEntry& e) { return "'" + e.name + "' at " + e.address; };
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const PlainEntry& first = entries[i];
        std::size_t end = i + 1;
        while (!cx.iec() && end < entries.size() && entries[end].span.file == first.span.file) {
            ++end;
        }
        if (end - i == 1) {
            cx.lenient(DiagCode::ConfigLocatesPlainVariable, first.span,
                       "VAR_CONFIG gives an address to '" + first.name +
                           "', which is declared without AT %I*/%Q*/%M*; it is located at " + first.address +
                           " in this instance");
            continue;
        }
        constexpr std::size_t kNamed = 4;
        std::string list;
        for (std::size_t k = i; k < end && k < i + kNamed; ++k) {
            list += (k == i ? "" : ", ") + one(entries[k]);
        }
        if (end - i > kNamed) {
            list += ", and " + std::to_string(end - i - kNamed) + " more";
        }
        cx.lenient(DiagCode::ConfigLocatesPlainVariable, first.span,
                   "VAR_CONFIG in this file gives addresses to " + std::to_string(end - i) +
                       " variables declared without AT %I*/%Q*/%M* (" + list +
                       "); each is located there in its instance");
        i = end - 1;
    }
}

bool locatableFromConfig(const Symbol& s) {
    if (s.kind != SymbolKind::Variable || s.constant) {
        return false;
    }
    switch (s.section) {
    case ast::VarSection::Var:
    case ast::VarSection::Input:
    case ast::VarSection::Output:
    case ast::VarSection::Global: return true;
    default: return false;
    }
}

} // namespace

void resolveConfigPaths(Context& cx) {
    SemanticModel& model = cx.model;
    std::vector<PlainEntry> plainEntries;
    for (PathBlock& pb : cx.decl->pathBlocks) {
        if (pb.block->section == ast::VarSection::Config) {
            for (ast::ConfigDecl& cd : pb.block->config) {
                std::vector<const Symbol*> path = resolvePath(cx, cd.path.get(), pb.scope);
                if (path.empty()) {
                    continue;
                }
                auto* target = const_cast<Symbol*>(path.back());
                if (cd.type != nullptr) {
                    const Type* declared = resolveType(cx, *cd.type, pb.scope);
                    if (target->type != nullptr && stripAlias(declared) != stripAlias(target->type) &&
                        stripAlias(declared)->kind() != TypeKind::Error &&
                        stripAlias(target->type)->kind() != TypeKind::Error) {
                        cx.error(DiagCode::TypeMismatch, cd.type->span,
                                 "VAR_CONFIG declares '" + target->name + "' as " + declared->name() + " but it is " +
                                     target->type->name());
                    }
                }
                if (!cd.address) {
                    continue; // only an initial value for the instance variable
                }
                const bool plain = !target->address && locatableFromConfig(*target);
                if (!plain && (!target->address || !target->address->wildcard)) {
                    cx.error(DiagCode::ConfigNotWildcard, cd.path->span,
                             "VAR_CONFIG gives an address to '" + target->name + "', which " +
                                 (target->address    ? "is already located at " + target->address->text()
                                  : target->constant ? "is a CONSTANT"
                                                     : "cannot be located (only VAR, VAR_INPUT, VAR_OUTPUT and "
                                                       "globals can)"));
                    continue;
                }
                if (plain) {
                    plainEntries.push_back(PlainEntry{cd.path->span, target->name, cd.address->text()});
                }
                if (cd.address->wildcard) {
                    cx.error(DiagCode::WildcardNotAllowed, cd.address->span,
                             "VAR_CONFIG must give '" + target->name + "' a complete address, not " +
                                 cd.address->text());
                    continue;
                }
                if (target->address && cd.address->area != target->address->area) {
                    cx.error(DiagCode::AddressSizeMismatch, cd.address->span,
                             "address " + cd.address->text() + " is not in the area of " + target->address->text() +
                                 " declared for '" + target->name + "'");
                    continue;
                }
                if (!checkAddressShape(cx, *cd.address, target->type, target->name)) {
                    continue;
                }
                if (plain) {
                    target->configLocated = true;
                } else if (!target->resolvedAddress) {
                    target->resolvedAddress = cd.address;
                }
                cx.decl->resolvedWildcards.push_back(target);
                model.configBindings.push_back(ConfigBinding{path, *cd.address, &cd});
            }
            continue;
        }
        for (ast::AccessDecl& ad : pb.block->access) {
            Symbol* s = model.newSymbol();
            s->kind = SymbolKind::AccessPath;
            s->name = ad.name.name;
            s->span = ad.name.span;
            s->owner = pb.scope->owner();
            s->access = &ad;
            s->readOnly = ad.readOnly;
            s->declScope = pb.scope;
            s->type = ad.type != nullptr ? resolveType(cx, *ad.type, pb.scope) : model.types.get(TypeKind::Error);
            if (ad.address) {
                s->address = ad.address;
                checkAddressShape(cx, *ad.address, s->type, s->name);
            } else {
                s->accessPath = resolvePath(cx, ad.path.get(), pb.scope);
                if (!s->accessPath.empty()) {
                    s->target = s->accessPath.back();
                    const Type* tt = s->target->type;
                    if (tt != nullptr && stripAlias(tt) != stripAlias(s->type) &&
                        stripAlias(tt)->kind() != TypeKind::Error && stripAlias(s->type)->kind() != TypeKind::Error) {
                        cx.error(DiagCode::TypeMismatch, ad.type->span,
                                 "VAR_ACCESS '" + s->name + "' is declared " + s->type->name() + " but '" +
                                     s->target->name + "' is " + tt->name());
                    }
                }
            }
            if (declareSymbol(cx, const_cast<Scope*>(pb.scope), s)) {
                model.accessPaths.push_back(s);
            }
        }
    }
    std::stable_sort(plainEntries.begin(), plainEntries.end(),
                     [](const PlainEntry& a, const PlainEntry& b) { return a.span.file < b.span.file; });
    reportPlainEntries(cx, plainEntries);
}

void checkAddresses(Context& cx) {
    std::vector<Occupied> used;
    for (Symbol* s : cx.decl->located) {
        const ast::Address& a = *s->address;
        const Type* type = ensureVarType(cx, s);
        if (!checkAddressShape(cx, a, type, s->name)) {
            continue;
        }
        if (a.wildcard) {
            const auto& resolved = cx.decl->resolvedWildcards;
            if (std::find(resolved.begin(), resolved.end(), s) == resolved.end()) {
                cx.error(DiagCode::UnresolvedWildcard, a.span,
                         "'" + s->name + "' AT " + a.text() + " is not given an address by any VAR_CONFIG entry");
            }
            continue;
        }
        if (auto o = occupied(a, type, cx.options.addressMode, s, s->span)) {
            used.push_back(*o);
        }
    }
    for (const ConfigBinding& b : cx.model.configBindings) {
        if (auto o = occupied(b.address, b.path.back()->type, cx.options.addressMode, b.path.back(), b.address.span)) {
            used.push_back(*o);
        }
    }
    for (std::size_t i = 1; i < used.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            const Occupied& a = used[i];
            const Occupied& b = used[j];
            if (a.area == b.area && a.begin < b.end && b.begin < a.end) {
                if (Diagnostic* d = cx.error(DiagCode::OverlappingAddress, a.span,
                                             "'" + a.symbol->name + "' at " + a.address->text() + " overlaps '" +
                                                 b.symbol->name + "' at " + b.address->text())) {
                    d->relate(b.span, "'" + b.symbol->name + "' is located here");
                }
                break;
            }
        }
    }
}

} // namespace takt::compiler::sema
