#include "takt/compiler/ast_dump.h"

#include <fmt/format.h>

namespace takt::compiler {

namespace {

using namespace ast;

std::string_view accessName(Access a) {
    switch (a) {
    case Access::Default: return "";
    case Access::Public: return "PUBLIC";
    case Access::Private: return "PRIVATE";
    case Access::Protected: return "PROTECTED";
    case Access::Internal: return "INTERNAL";
    }
    return "";
}

class Dumper {
public:
    Dumper(const SourceManager& sm, const AstDumpOptions& options) : sm_(sm), options_(options) {}

    std::string take() { return std::move(out_); }

    // "head" or "head@line:col".
    void head(std::string_view name, const Span& span) {
        out_ += name;
        if (options_.positions && span.valid() && span.file < sm_.size()) {
            LineCol lc = sm_.lineCol(span);
            fmt::format_to(std::back_inserter(out_), "@{}:{}", lc.line, lc.column);
        }
    }
    void open(std::string_view name, const Span& span) {
        out_ += '(';
        head(name, span);
    }
    void newline() {
        out_ += '\n';
        out_.append(static_cast<std::size_t>(indent_) * 2, ' ');
    }

    void quoted(std::string_view s) {
        out_ += '"';
        for (char c : s) {
            switch (c) {
            case '"': out_ += "\\\""; break;
            case '\\': out_ += "\\\\"; break;
            case '\n': out_ += "\\n"; break;
            case '\r': out_ += "\\r"; break;
            case '\t': out_ += "\\t"; break;
            case '\f': out_ += "\\f"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    fmt::format_to(std::back_inserter(out_), "\\x{:02X}", static_cast<unsigned char>(c));
                } else {
                    out_ += c;
                }
            }
        }
        out_ += '"';
    }

    void expr(const Expr* e) {
        if (e == nullptr) {
            out_ += "_";
            return;
        }
        switch (e->kind) {
        case ExprKind::Literal: literal(static_cast<const LiteralExpr&>(*e)); break;
        case ExprKind::EnumLiteral: {
            const auto& en = static_cast<const EnumLiteralExpr&>(*e);
            head(fmt::format("{}#{}", en.typeName.name, en.value.name), e->span);
            break;
        }
        case ExprKind::Name: head(static_cast<const NameExpr&>(*e).name.name, e->span); break;
        case ExprKind::Member: {
            const auto& m = static_cast<const MemberExpr&>(*e);
            open(".", e->span);
            item(m.object.get());
            out_ += ' ';
            out_ += m.member.name;
            out_ += ')';
            break;
        }
        case ExprKind::BitAccess: {
            const auto& b = static_cast<const BitAccessExpr&>(*e);
            open(b.percentForm ? "bit%X" : "bit", e->span);
            item(b.object.get());
            fmt::format_to(std::back_inserter(out_), " {})", b.bit);
            break;
        }
        case ExprKind::Index: {
            const auto& ix = static_cast<const IndexExpr&>(*e);
            open("index", e->span);
            item(ix.array.get());
            for (const auto& i : ix.indices) {
                item(i.get());
            }
            out_ += ')';
            break;
        }
        case ExprKind::Deref:
            open("^", e->span);
            item(static_cast<const DerefExpr&>(*e).reference.get());
            out_ += ')';
            break;
        case ExprKind::Call: {
            const auto& c = static_cast<const CallExpr&>(*e);
            open("call", e->span);
            item(c.callee.get());
            arguments(c.args);
            out_ += ')';
            break;
        }
        case ExprKind::Unary: {
            const auto& u = static_cast<const UnaryExpr&>(*e);
            open(u.op == UnaryOp::Neg ? "neg" : u.op == UnaryOp::Plus ? "plus" : "NOT", e->span);
            item(u.operand.get());
            out_ += ')';
            break;
        }
        case ExprKind::Binary: {
            const auto& b = static_cast<const BinaryExpr&>(*e);
            open(binaryOpText(b.op), e->span);
            item(b.lhs.get());
            item(b.rhs.get());
            out_ += ')';
            break;
        }
        case ExprKind::Ref:
            open("REF", e->span);
            item(static_cast<const RefExpr&>(*e).operand.get());
            out_ += ')';
            break;
        case ExprKind::This: head("THIS", e->span); break;
        case ExprKind::Super: head("SUPER", e->span); break;
        case ExprKind::DirectAddress: head(static_cast<const DirectAddressExpr&>(*e).address.text(), e->span); break;
        case ExprKind::ArrayInit: {
            const auto& a = static_cast<const ArrayInitExpr&>(*e);
            open("array", e->span);
            for (const auto& el : a.elements) {
                if (el.repeat) {
                    out_ += " (repeat ";
                    expr(el.repeat.get());
                    item(el.value.get());
                    out_ += ')';
                } else {
                    item(el.value.get());
                }
            }
            out_ += ')';
            break;
        }
        case ExprKind::StructInit: {
            const auto& s = static_cast<const StructInitExpr&>(*e);
            open("struct", e->span);
            for (const auto& f : s.fields) {
                out_ += " (";
                out_ += f.field.name;
                item(f.value.get());
                out_ += ')';
            }
            out_ += ')';
            break;
        }
        case ExprKind::Paren:
            open("paren", e->span);
            item(static_cast<const ParenExpr&>(*e).inner.get());
            out_ += ')';
            break;
        case ExprKind::Error: head("<error>", e->span); break;
        }
    }

    void item(const Expr* e) {
        out_ += ' ';
        expr(e);
    }

    void literal(const LiteralExpr& lit) {
        std::string prefix = lit.typePrefix ? lit.typePrefix->name + "#" : std::string();
        std::string s;
        switch (lit.literalKind) {
        case LiteralKind::Bool: s = lit.boolValue ? "TRUE" : "FALSE"; break;
        case LiteralKind::Int: s = fmt::format("{}{}", lit.negative ? "-" : "", lit.intValue); break;
        case LiteralKind::Real:
            s = fmt::format("{}", lit.realValue);
            if (s.find_first_of(".eEn") == std::string::npos) {
                s += ".0"; // keep reals distinguishable from integers
            }
            break;
        case LiteralKind::String:
        case LiteralKind::WString: {
            std::string saved = std::move(out_);
            out_.clear();
            if (lit.literalKind == LiteralKind::WString) {
                out_ += 'W';
            }
            quoted(lit.stringValue);
            s = std::move(out_);
            out_ = std::move(saved);
            break;
        }
        case LiteralKind::Time:
        case LiteralKind::Date:
        case LiteralKind::Tod:
        case LiteralKind::Dt: s = fmt::format("{}ns", lit.nanos); break;
        case LiteralKind::Null: s = "NULL"; break;
        }
        head(prefix + s, lit.span);
    }

    void arguments(const std::vector<Argument>& args) {
        for (const Argument& a : args) {
            out_ += ' ';
            if (!a.name) {
                expr(a.value.get());
                continue;
            }
            out_ += a.negated ? "(NOT=> " : a.output ? "(=> " : "(:= ";
            out_ += a.name->name;
            if (a.value) {
                item(a.value.get());
            }
            out_ += ')';
        }
    }

    void type(const TypeSpec* t) {
        if (t == nullptr) {
            out_ += "_";
            return;
        }
        switch (t->kind) {
        case TypeSpecKind::Named: head(static_cast<const NamedTypeSpec&>(*t).name.text(), t->span); break;
        case TypeSpecKind::String: {
            const auto& s = static_cast<const StringTypeSpec&>(*t);
            if (!s.length) {
                head(s.wide ? "WSTRING" : "STRING", t->span);
                break;
            }
            open(s.wide ? "WSTRING" : "STRING", t->span);
            item(s.length.get());
            out_ += ')';
            break;
        }
        case TypeSpecKind::Array: {
            const auto& a = static_cast<const ArrayTypeSpec&>(*t);
            open("ARRAY", t->span);
            if (a.star) {
                out_ += " *";
            }
            for (const Range& r : a.dimensions) {
                out_ += " (";
                expr(r.lower.get());
                out_ += "..";
                expr(r.upper.get());
                out_ += ')';
            }
            out_ += " OF ";
            type(a.element.get());
            out_ += ')';
            break;
        }
        case TypeSpecKind::Ref: {
            const RefSpelling spelling = static_cast<const RefTypeSpec&>(*t).spelling;
            open(spelling == RefSpelling::PointerTo     ? "POINTER_TO"
                 : spelling == RefSpelling::ReferenceTo ? "REFERENCE_TO"
                                                        : "REF_TO",
                 t->span);
            out_ += ' ';
            type(static_cast<const RefTypeSpec&>(*t).target.get());
            out_ += ')';
            break;
        }
        case TypeSpecKind::Subrange: {
            const auto& s = static_cast<const SubrangeTypeSpec&>(*t);
            open("subrange", t->span);
            out_ += ' ';
            type(s.base.get());
            item(s.range.lower.get());
            item(s.range.upper.get());
            out_ += ')';
            break;
        }
        case TypeSpecKind::Enum: {
            const auto& e = static_cast<const EnumTypeSpec&>(*t);
            open("enum", t->span);
            if (e.base) {
                out_ += " : ";
                type(e.base.get());
            }
            for (const EnumValueDecl& v : e.values) {
                if (v.value) {
                    out_ += " (" + v.name.name;
                    item(v.value.get());
                    out_ += ')';
                } else {
                    out_ += ' ' + v.name.name;
                }
            }
            out_ += ')';
            break;
        }
        case TypeSpecKind::Struct: {
            const auto& s = static_cast<const StructTypeSpec&>(*t);
            open(s.isUnion ? "UNION" : "STRUCT", t->span);
            if (s.extends) {
                out_ += " (EXTENDS " + s.extends->text() + ")";
            }
            ++indent_;
            for (const VarDecl& f : s.fields) {
                newline();
                varDecl(f);
            }
            --indent_;
            out_ += ')';
            break;
        }
        }
    }

    void varDecl(const VarDecl& d) {
        open("var", d.span);
        out_ += " (";
        for (std::size_t i = 0; i < d.names.size(); ++i) {
            out_ += i > 0 ? " " : "";
            out_ += d.names[i].name;
        }
        out_ += ')';
        if (d.address) {
            out_ += " (AT " + d.address->text() + ")";
        }
        out_ += ' ';
        type(d.type.get());
        if (d.init) {
            out_ += " (init";
            item(d.init.get());
            out_ += ')';
        }
        out_ += ')';
    }

    void varBlock(const VarBlock& b) {
        open(sectionKeyword(b.section), b.span);
        out_ += b.constant ? " CONSTANT" : "";
        out_ += b.retain && !b.persistent ? " RETAIN" : "";
        out_ += b.persistent ? " PERSISTENT" : "";
        out_ += b.nonRetain ? " NON_RETAIN" : "";
        ++indent_;
        for (const VarDecl& d : b.vars) {
            newline();
            varDecl(d);
        }
        for (const AccessDecl& a : b.access) {
            newline();
            open("access", a.span);
            out_ += ' ' + a.name.name;
            if (a.address) {
                out_ += ' ' + a.address->text();
            } else {
                item(a.path.get());
            }
            out_ += ' ';
            type(a.type.get());
            out_ += a.readOnly ? " READ_ONLY)" : " READ_WRITE)";
        }
        for (const ConfigDecl& c : b.config) {
            newline();
            open("config", c.span);
            item(c.path.get());
            out_ += ' ' + (c.address ? c.address->text() : std::string("_")) + ' ';
            type(c.type.get());
            if (c.init) {
                out_ += " (init";
                item(c.init.get());
                out_ += ')';
            }
            out_ += ')';
        }
        --indent_;
        out_ += ')';
    }

    void stmts(std::string_view name, const StmtList& list) {
        newline();
        out_ += '(';
        out_ += name;
        ++indent_;
        for (const StmtPtr& s : list) {
            newline();
            stmt(*s);
        }
        --indent_;
        out_ += ')';
    }

    void body(const StmtList& list) {
        ++indent_;
        for (const StmtPtr& s : list) {
            newline();
            stmt(*s);
        }
        --indent_;
    }

    void stmt(const Stmt& s) {
        switch (s.kind) {
        case StmtKind::Assign: {
            const auto& a = static_cast<const AssignStmt&>(s);
            open(a.bindReference ? "REF=" : ":=", s.span);
            item(a.target.get());
            item(a.value.get());
            break;
        }
        case StmtKind::Expr:
            open("expr", s.span);
            item(static_cast<const ExprStmt&>(s).expr.get());
            break;
        case StmtKind::If: {
            const auto& i = static_cast<const IfStmt&>(s);
            open("IF", s.span);
            ++indent_;
            for (std::size_t b = 0; b < i.branches.size(); ++b) {
                newline();
                open(b == 0 ? "cond" : "ELSIF", i.branches[b].span);
                item(i.branches[b].condition.get());
                body(i.branches[b].body);
                out_ += ')';
            }
            if (i.hasElse) {
                stmts("ELSE", i.elseBody);
            }
            --indent_;
            break;
        }
        case StmtKind::Case: {
            const auto& c = static_cast<const CaseStmt&>(s);
            open("CASE", s.span);
            item(c.selector.get());
            ++indent_;
            for (const CaseBranch& b : c.branches) {
                newline();
                open("branch", b.span);
                out_ += " (";
                for (std::size_t l = 0; l < b.labels.size(); ++l) {
                    out_ += l > 0 ? " " : "";
                    if (b.labels[l].upper) {
                        out_ += "(.. ";
                        expr(b.labels[l].lower.get());
                        item(b.labels[l].upper.get());
                        out_ += ')';
                    } else {
                        expr(b.labels[l].lower.get());
                    }
                }
                out_ += ')';
                body(b.body);
                out_ += ')';
            }
            if (c.hasElse) {
                stmts("ELSE", c.elseBody);
            }
            --indent_;
            break;
        }
        case StmtKind::For: {
            const auto& f = static_cast<const ForStmt&>(s);
            open("FOR", s.span);
            item(f.variable.get());
            item(f.from.get());
            item(f.to.get());
            if (f.step) {
                out_ += " (BY";
                item(f.step.get());
                out_ += ')';
            }
            body(f.body);
            break;
        }
        case StmtKind::While: {
            const auto& w = static_cast<const WhileStmt&>(s);
            open("WHILE", s.span);
            item(w.condition.get());
            body(w.body);
            break;
        }
        case StmtKind::Repeat: {
            const auto& r = static_cast<const RepeatStmt&>(s);
            open("REPEAT", s.span);
            body(r.body);
            ++indent_;
            newline();
            out_ += "(UNTIL";
            item(r.condition.get());
            out_ += ')';
            --indent_;
            break;
        }
        case StmtKind::Exit: open("EXIT", s.span); break;
        case StmtKind::Continue: open("CONTINUE", s.span); break;
        case StmtKind::Return: open("RETURN", s.span); break;
        case StmtKind::Empty: open("empty", s.span); break;
        case StmtKind::Label: open("label " + static_cast<const LabelStmt&>(s).name.name, s.span); break;
        case StmtKind::Jump: open("JMP " + static_cast<const LabelStmt&>(s).name.name, s.span); break;
        }
        out_ += ')';
    }

    void pou(const PouDecl& p) {
        open(p.isClass                     ? "CLASS"
             : p.accessor == Accessor::Get ? "PROPERTY_GET"
             : p.accessor == Accessor::Set ? "PROPERTY_SET"
                                           : pouKeyword(p.pouKind),
             p.span);
        out_ += ' ' + p.name.name;
        if (p.access != Access::Default) {
            out_ += ' ';
            out_ += accessName(p.access);
        }
        out_ += p.isAbstract ? " ABSTRACT" : "";
        out_ += p.isFinal ? " FINAL" : "";
        out_ += p.isOverride ? " OVERRIDE" : "";
        out_ += p.prototypeOnly ? " prototype" : "";
        if (p.returnType) {
            out_ += " : ";
            type(p.returnType.get());
        }
        if (p.extends) {
            out_ += " (EXTENDS " + p.extends->text() + ")";
        }
        if (!p.implements.empty()) {
            out_ += " (IMPLEMENTS";
            for (const QualifiedName& q : p.implements) {
                out_ += ' ' + q.text();
            }
            out_ += ')';
        }
        ++indent_;
        for (const VarBlock& b : p.varBlocks) {
            newline();
            varBlock(b);
        }
        for (const auto& m : p.methods) {
            newline();
            pou(*m);
        }
        if (!p.prototypeOnly) {
            stmts("body", p.body);
        }
        --indent_;
        out_ += ')';
    }

    void decl(const Decl& d) {
        switch (d.kind) {
        case DeclKind::Pou: pou(static_cast<const PouDecl&>(d)); return;
        case DeclKind::Interface: {
            const auto& i = static_cast<const InterfaceDecl&>(d);
            open("INTERFACE", d.span);
            out_ += ' ' + i.name.name;
            if (!i.extends.empty()) {
                out_ += " (EXTENDS";
                for (const QualifiedName& q : i.extends) {
                    out_ += ' ' + q.text();
                }
                out_ += ')';
            }
            ++indent_;
            for (const auto& m : i.methods) {
                newline();
                pou(*m);
            }
            --indent_;
            break;
        }
        case DeclKind::Type: {
            const auto& t = static_cast<const TypeDecl&>(d);
            open("TYPE", d.span);
            out_ += ' ' + t.name.name + ' ';
            type(t.spec.get());
            if (t.init) {
                out_ += " (init";
                item(t.init.get());
                out_ += ')';
            }
            break;
        }
        case DeclKind::GlobalVars:
            open("globals", d.span);
            ++indent_;
            newline();
            varBlock(static_cast<const GlobalVarsDecl&>(d).block);
            --indent_;
            break;
        case DeclKind::Configuration: configuration(static_cast<const ConfigurationDecl&>(d)); break;
        case DeclKind::Namespace: {
            const auto& n = static_cast<const NamespaceDecl&>(d);
            open("NAMESPACE", d.span);
            out_ += ' ' + n.name.text();
            ++indent_;
            for (const DeclPtr& inner : n.decls) {
                newline();
                decl(*inner);
            }
            --indent_;
            break;
        }
        case DeclKind::Using: {
            open("USING", d.span);
            for (const QualifiedName& q : static_cast<const UsingDecl&>(d).names) {
                out_ += ' ' + q.text();
            }
            break;
        }
        }
        out_ += ')';
    }

    void configuration(const ConfigurationDecl& c) {
        open("CONFIGURATION", c.span);
        out_ += ' ' + c.name.name;
        ++indent_;
        for (const VarBlock& b : c.varBlocks) {
            newline();
            varBlock(b);
        }
        for (const ResourceDecl& r : c.resources) {
            newline();
            open("RESOURCE", r.span);
            out_ += ' ' + (r.name.name.empty() ? std::string("_") : r.name.name);
            if (r.on) {
                out_ += " ON " + r.on->name;
            }
            ++indent_;
            for (const VarBlock& b : r.varBlocks) {
                newline();
                varBlock(b);
            }
            for (const TaskDecl& t : r.tasks) {
                newline();
                open("TASK", t.span);
                out_ += ' ' + t.name.name;
                if (t.interval) {
                    out_ += " (INTERVAL";
                    item(t.interval.get());
                    out_ += ')';
                }
                if (t.priority) {
                    out_ += " (PRIORITY";
                    item(t.priority.get());
                    out_ += ')';
                }
                if (t.single) {
                    out_ += " (SINGLE";
                    item(t.single.get());
                    out_ += ')';
                }
                out_ += ')';
            }
            for (const ProgramInstanceDecl& p : r.programs) {
                newline();
                open("PROGRAM", p.span);
                out_ += p.retain ? " RETAIN" : p.nonRetain ? " NON_RETAIN" : "";
                out_ += ' ' + p.name.name;
                if (p.task) {
                    out_ += " WITH " + p.task->name;
                }
                out_ += " : " + p.type.text();
                arguments(p.args);
                out_ += ')';
            }
            --indent_;
            out_ += ')';
        }
        --indent_;
    }

private:
    const SourceManager& sm_;
    AstDumpOptions options_;
    std::string out_;
    int indent_ = 0;
};

} // namespace

std::string dumpAst(const ast::CompilationUnit& unit, const SourceManager& sm, const AstDumpOptions& options) {
    Dumper d(sm, options);
    for (const ast::DeclPtr& decl : unit.decls) {
        d.decl(*decl);
        d.newline();
    }
    return d.take();
}

std::string dumpExpr(const ast::Expr& expr, const SourceManager& sm, const AstDumpOptions& options) {
    Dumper d(sm, options);
    d.expr(&expr);
    return d.take();
}

std::string dumpStmt(const ast::Stmt& stmt, const SourceManager& sm, const AstDumpOptions& options) {
    Dumper d(sm, options);
    d.stmt(stmt);
    return d.take();
}

std::string dumpTypeSpec(const ast::TypeSpec& type, const SourceManager& sm, const AstDumpOptions& options) {
    Dumper d(sm, options);
    d.type(&type);
    return d.take();
}

} // namespace takt::compiler
