// What each TASK reaches (sema/task_data.h): one walk of every POU body after checking, for the
// calls it makes and the variables it names, then per task the closure over calls from its
// program instances. W0016 comes from the result.
#include "takt/compiler/sema/task_data.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "sema/body.h"
#include "sema/context.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

bool sharedAtomically(const Type* t) {
    const Type* s = stripAlias(t);
    if (s == nullptr || s->size > 8) {
        return false;
    }
    switch (s->kind()) {
    case TypeKind::String:
    case TypeKind::WString:
    case TypeKind::Array:
    case TypeKind::Struct:
    case TypeKind::FunctionBlock:
    case TypeKind::Program: return false;
    default: return hasValueKind(s->kind());
    }
}

std::vector<SharedTasks> sharedVariables(const std::vector<TaskData>& tasks) {
    std::vector<SharedTasks> out;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        for (std::size_t j = i + 1; j < tasks.size(); ++j) {
            SharedTasks pair{&tasks[i], &tasks[j], {}};
            for (const TaskVariableUse& u : tasks[i].uses) {
                if (const TaskVariableUse* v = tasks[j].find(u.var)) {
                    pair.variables.push_back({u.var, &u, v});
                }
            }
            if (!pair.variables.empty()) {
                out.push_back(std::move(pair));
            }
        }
    }
    return out;
}

std::optional<TornAccess> tornAccess(const SharedVariable& s) {
    if (sharedAtomically(s.var.variable->type)) {
        return std::nullopt;
    }
    // `writer` writes it and `other` uses it, one of them the whole (or a part that is not atomic).
    auto check = [](const TaskVariableUse& writer, const TaskVariableUse& other,
                    bool first) -> std::optional<TornAccess> {
        if (!writer.written || (!other.read && !other.written) ||
            (!writer.wholeWritten && !other.wholeRead && !other.wholeWritten)) {
            return std::nullopt;
        }
        TornAccess t;
        t.writerIsFirst = first;
        t.write = writer.wholeWritten ? writer.firstWholeWrite : writer.firstWrite;
        if (!writer.wholeWritten && other.wholeRead) {
            t.other = other.firstWholeRead;
        } else if (!writer.wholeWritten && other.wholeWritten) {
            t.other = other.firstWholeWrite;
            t.otherWrites = true;
        } else if (other.read) {
            t.other = other.firstRead;
        } else {
            t.other = other.firstWrite;
            t.otherWrites = true;
        }
        return t;
    };
    if (auto t = check(*s.first, *s.second, true)) {
        return t;
    }
    return check(*s.second, *s.first, false);
}

namespace sema {

namespace {

// One use as a body writes it: `qualifier` is the program instance (or PROGRAM) of `P1.x`.
struct RawUse {
    const Symbol* qualifier = nullptr;
    const Symbol* variable = nullptr;
    bool write = false;
    bool atomic = false; // the access moves one value sharedAtomically() (an element, a member)
    Span at;
};

struct PouFacts {
    std::vector<const Symbol*> callees;
    std::vector<RawUse> uses;
    std::vector<std::string> directAddresses;
};

bool isProgramSymbol(const Symbol* s) {
    return s != nullptr && (s->kind == SymbolKind::ProgramInstance ||
                            (s->kind == SymbolKind::Pou && s->pouKind == ast::PouKind::Program));
}

// Walks one body: calls and variable uses, with whether each use may write.
class FactWalker {
public:
    explicit FactWalker(PouFacts& out) : out_(out) {}

    void stmts(const ast::StmtList& list) {
        for (const ast::StmtPtr& s : list) {
            if (s) {
                stmt(*s);
            }
        }
    }

    // An expression whose value is read.
    void expr(const ast::Expr* e) {
        if (e == nullptr) {
            return;
        }
        switch (e->kind) {
        case ast::ExprKind::Name:
        case ast::ExprKind::Member:
        case ast::ExprKind::Index:
        case ast::ExprKind::BitAccess: access(e, false); break;
        case ast::ExprKind::Deref: expr(static_cast<const ast::DerefExpr*>(e)->reference.get()); break;
        case ast::ExprKind::Call: call(*static_cast<const ast::CallExpr*>(e)); break;
        case ast::ExprKind::Unary: expr(static_cast<const ast::UnaryExpr*>(e)->operand.get()); break;
        case ast::ExprKind::Binary: {
            const auto* b = static_cast<const ast::BinaryExpr*>(e);
            expr(b->lhs.get());
            expr(b->rhs.get());
            break;
        }
        // The address escapes: whoever holds it may write through it.
        case ast::ExprKind::Ref: access(static_cast<const ast::RefExpr*>(e)->operand.get(), true, false); break;
        case ast::ExprKind::Paren: expr(static_cast<const ast::ParenExpr*>(e)->inner.get()); break;
        case ast::ExprKind::DirectAddress:
            out_.directAddresses.push_back(static_cast<const ast::DirectAddressExpr*>(e)->address.text());
            break;
        default: break;
        }
    }

private:
    void stmt(const ast::Stmt& s) {
        switch (s.kind) {
        case ast::StmtKind::Assign: {
            const auto& a = static_cast<const ast::AssignStmt&>(s);
            access(a.target.get(), true);
            if (a.bindReference) {
                access(a.value.get(), true, false);
            } else {
                expr(a.value.get());
            }
            break;
        }
        case ast::StmtKind::Expr: expr(static_cast<const ast::ExprStmt&>(s).expr.get()); break;
        case ast::StmtKind::If: {
            const auto& i = static_cast<const ast::IfStmt&>(s);
            for (const ast::CondBlock& b : i.branches) {
                expr(b.condition.get());
                stmts(b.body);
            }
            stmts(i.elseBody);
            break;
        }
        case ast::StmtKind::Case: {
            const auto& c = static_cast<const ast::CaseStmt&>(s);
            expr(c.selector.get());
            for (const ast::CaseBranch& b : c.branches) {
                stmts(b.body);
            }
            stmts(c.elseBody);
            break;
        }
        case ast::StmtKind::For: {
            const auto& f = static_cast<const ast::ForStmt&>(s);
            access(f.variable.get(), true);
            expr(f.from.get());
            expr(f.to.get());
            expr(f.step.get());
            stmts(f.body);
            break;
        }
        case ast::StmtKind::While: {
            const auto& w = static_cast<const ast::WhileStmt&>(s);
            expr(w.condition.get());
            stmts(w.body);
            break;
        }
        case ast::StmtKind::Repeat: {
            const auto& r = static_cast<const ast::RepeatStmt&>(s);
            stmts(r.body);
            expr(r.condition.get());
            break;
        }
        default: break;
        }
    }

    void record(const Symbol* qualifier, const Symbol* s, bool write, bool atomic, Span at) {
        if (s != nullptr && s->kind == SymbolKind::Variable) {
            out_.uses.push_back({qualifier, s, write, atomic, at});
        }
    }

    // A variable access path (x, a.b, a[i].c, w.3): the variable at its root is read, or written
    // when `write`; index expressions are read. `atomic`: whether the access moves one value
    // that is shared atomically; by default the path's own type decides (`a[i]` of an ARRAY OF
    // BOOL is, `a` is not). An FB call or an address taken covers the whole variable.
    void access(const ast::Expr* e, bool write, std::optional<bool> atomicAccess = std::nullopt) {
        if (e == nullptr) {
            return;
        }
        const bool atomic = atomicAccess ? *atomicAccess : sharedAtomically(e->type);
        switch (e->kind) {
        case ast::ExprKind::Name: {
            const auto* n = static_cast<const ast::NameExpr*>(e);
            record(nullptr, n->symbol, write, atomic, n->span);
            break;
        }
        case ast::ExprKind::Member: {
            const auto* m = static_cast<const ast::MemberExpr*>(e);
            const ast::Expr* object = stripParen(m->object.get());
            const Symbol* os = object != nullptr && object->kind == ast::ExprKind::Name
                                   ? static_cast<const ast::NameExpr*>(object)->symbol
                                   : nullptr;
            if (os != nullptr && os->kind != SymbolKind::Variable) {
                // A namespace, a global list or a program instance qualifies the variable itself.
                record(isProgramSymbol(os) ? os : nullptr, m->symbol, write, atomic, m->span);
            } else {
                access(m->object.get(), write, atomic);
            }
            break;
        }
        case ast::ExprKind::Index: {
            const auto* i = static_cast<const ast::IndexExpr*>(e);
            access(i->array.get(), write, atomic);
            for (const ast::ExprPtr& x : i->indices) {
                expr(x.get());
            }
            break;
        }
        case ast::ExprKind::BitAccess:
            access(static_cast<const ast::BitAccessExpr*>(e)->object.get(), write, atomic);
            break;
        case ast::ExprKind::Paren: access(static_cast<const ast::ParenExpr*>(e)->inner.get(), write, atomic); break;
        default: expr(e); break; // r^ := …, f().x: what the path reads
        }
    }

    void call(const ast::CallExpr& c) {
        const Symbol* target = c.target;
        if (target != nullptr && target->kind == SymbolKind::Pou) {
            out_.callees.push_back(target);
        }
        // `fb(…)`, `inst.m(…)`: the call runs on the instance and may change it.
        const ast::Expr* callee = stripParen(c.callee.get());
        if (callee != nullptr && callee->kind == ast::ExprKind::Member) {
            const auto* m = static_cast<const ast::MemberExpr*>(callee);
            access(m->object.get(), true, false);
        } else if (callee != nullptr && callee->kind == ast::ExprKind::Name) {
            access(callee, true, false);
        } else {
            expr(callee);
        }
        const bool adr = c.builtin == ast::CallExpr::Builtin::Adr;
        for (std::size_t i = 0; i < c.args.size(); ++i) {
            const ast::Argument& a = c.args[i];
            bool write = a.output || adr;
            if (!write && target != nullptr && target->kind == SymbolKind::Pou) {
                const Symbol* param = nullptr;
                if (a.name) {
                    for (const Symbol* p : target->params) {
                        if (sameName(p->name, a.name->name)) {
                            param = p;
                        }
                    }
                } else if (i < target->params.size()) {
                    param = target->params[i];
                }
                write = param != nullptr && param->section == ast::VarSection::InOut;
            }
            if (write) {
                access(a.value.get(), true);
            } else {
                expr(a.value.get());
            }
        }
        expr(c.enable.get());
        access(c.enableOut.get(), true);
    }

    PouFacts& out_;
};

// Whether FB/CLASS/INTERFACE `f` is `o` or derives from it (EXTENDS, IMPLEMENTS, interface EXTENDS).
bool derivesFrom(const Symbol* f, const Symbol* o, int depth = 0) {
    if (f == nullptr || depth > 64) {
        return false;
    }
    if (f == o) {
        return true;
    }
    if (derivesFrom(f->base, o, depth + 1)) {
        return true;
    }
    return std::any_of(f->interfaces.begin(), f->interfaces.end(),
                       [&](const Symbol* i) { return derivesFrom(i, o, depth + 1); });
}

} // namespace

void analyzeTaskData(Context& cx) {
    SemanticModel& model = cx.model;
    if (model.tasks.empty()) {
        return;
    }
    std::map<const Symbol*, PouFacts> facts;
    for (const Symbol* pou : model.pous) {
        if (pou->pou != nullptr && pou->span.file != kStdlibFile) {
            FactWalker(facts[pou]).stmts(pou->pou->body);
        }
    }
    // A METHOD (or accessor) called on an FB or INTERFACE may run any FB's METHOD of that name
    // that derives from it: late binding and interface dispatch.
    std::map<const Symbol*, std::vector<const Symbol*>> implemented; // per METHOD called, once
    auto implementations = [&](const Symbol* m, std::vector<const Symbol*>& out) {
        const Symbol* owner = m->owner;
        if (m->pouKind != ast::PouKind::Method || owner == nullptr) {
            return;
        }
        auto [it, fresh] = implemented.try_emplace(m);
        if (fresh) {
            for (const Symbol* p : model.pous) {
                if (p != m && p->pouKind == ast::PouKind::Method && p->owner != nullptr && p->owner != owner &&
                    sameName(p->name, m->name) && derivesFrom(p->owner, owner)) {
                    it->second.push_back(p);
                }
            }
        }
        out.insert(out.end(), it->second.begin(), it->second.end());
    };
    for (const Symbol* task : model.tasks) {
        TaskData data;
        data.task = task;
        std::map<TaskVariable, std::size_t>& index = data.index;
        std::set<std::string> direct;
        for (const Symbol* inst : model.programInstances) {
            if (inst->taskSymbol != task) {
                continue;
            }
            const Type* t = stripAlias(inst->type);
            const Symbol* program =
                t != nullptr && t->kind() == TypeKind::Program ? static_cast<const PouType*>(t)->symbol : nullptr;
            auto note = [&](const Symbol* qualifier, const Symbol* v, bool write, bool atomic, Span at) {
                if (v == nullptr || v->kind != SymbolKind::Variable) {
                    return;
                }
                if (v->section == ast::VarSection::External && v->target != nullptr) {
                    v = v->target;
                }
                if (v->constant) {
                    return; // never written: sharing it is safe
                }
                TaskVariable key;
                if (v->section == ast::VarSection::Global || v->section == ast::VarSection::Static) {
                    key = {nullptr, v};
                } else if (qualifier != nullptr) {
                    key = {qualifier, v};
                } else if (v->owner != nullptr && v->owner->kind == SymbolKind::Pou &&
                           v->owner->pouKind == ast::PouKind::Program) {
                    // A program's own variable: this instance's when it runs the program, else
                    // the program's implicit instance.
                    key = {v->owner == program ? inst : v->owner, v};
                } else {
                    return; // a local of a FUNCTION, FB or METHOD: the instance or frame is the caller's
                }
                auto [it, fresh] = index.emplace(key, data.uses.size());
                if (fresh) {
                    data.uses.push_back(TaskVariableUse{key, false, false, {}, {}, false, false, {}, {}});
                }
                TaskVariableUse& u = data.uses[it->second];
                if (write && !u.written) {
                    u.written = true;
                    u.firstWrite = at;
                } else if (!write && !u.read) {
                    u.read = true;
                    u.firstRead = at;
                }
                if (!atomic && write && !u.wholeWritten) {
                    u.wholeWritten = true;
                    u.firstWholeWrite = at;
                } else if (!atomic && !write && !u.wholeRead) {
                    u.wholeRead = true;
                    u.firstWholeRead = at;
                }
            };
            // Arguments of `PROGRAM p WITH t : Main (in := x, out => y)` move every cycle of t.
            if (inst->instance != nullptr) {
                for (const ast::Argument& a : inst->instance->args) {
                    PouFacts args;
                    FactWalker w(args);
                    w.expr(a.value.get());
                    for (const RawUse& u : args.uses) {
                        note(u.qualifier, u.variable, a.output, u.atomic, u.at);
                    }
                    direct.insert(args.directAddresses.begin(), args.directAddresses.end());
                }
            }
            std::vector<const Symbol*> stack;
            std::set<const Symbol*> seen(data.pous.begin(), data.pous.end());
            std::set<const Symbol*> walked; // this instance's walk: program variables depend on it
            if (program != nullptr) {
                stack.push_back(program);
            }
            while (!stack.empty()) {
                const Symbol* pou = stack.back();
                stack.pop_back();
                if (!walked.insert(pou).second) {
                    continue;
                }
                if (seen.insert(pou).second) {
                    data.pous.push_back(pou);
                }
                auto it = facts.find(pou);
                if (it == facts.end()) {
                    continue;
                }
                for (const RawUse& u : it->second.uses) {
                    note(u.qualifier, u.variable, u.write, u.atomic, u.at);
                }
                direct.insert(it->second.directAddresses.begin(), it->second.directAddresses.end());
                for (const Symbol* callee : it->second.callees) {
                    stack.push_back(callee);
                    implementations(callee, stack);
                }
            }
        }
        data.directAddresses.assign(direct.begin(), direct.end());
        model.taskData.push_back(std::move(data));
    }
    for (const SharedTasks& pair : sharedVariables(model.taskData)) {
        for (const SharedVariable& s : pair.variables) {
            const std::optional<TornAccess> torn = tornAccess(s);
            if (!torn) {
                continue;
            }
            const Symbol* writerTask = torn->writerIsFirst ? pair.first->task : pair.second->task;
            const Symbol* otherTask = torn->writerIsFirst ? pair.second->task : pair.first->task;
            const Type* type = s.var.variable->type;
            const std::string name =
                s.var.instance != nullptr ? s.var.instance->name + "." + s.var.variable->name : s.var.variable->name;
            Diagnostic* d = cx.diags.report(
                DiagCode::SharedNonAtomic, torn->write,
                "'" + name + "' (" + (type != nullptr ? type->name() : "?") + ") is written in task '" +
                    writerTask->name + "' and " + (torn->otherWrites ? "written" : "read") + " in task '" +
                    otherTask->name +
                    "': a value larger than 64 bits or not elementary can be seen half-written by the other task");
            if (d != nullptr) {
                d->relate(torn->other, "task '" + otherTask->name + "' " + (torn->otherWrites ? "writes" : "reads") +
                                           " '" + name + "' here");
            }
        }
    }
}

} // namespace sema
} // namespace takt::compiler
