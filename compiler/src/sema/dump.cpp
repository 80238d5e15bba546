// dumpSymbols(): one line per user symbol, sorted, so two analyses of the same program compare
// equal as text whatever the formatting or declaration order of the sources.
#include <algorithm>

#include "sema/declare.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

namespace {

std::string typeName(const Type* t) {
    return t == nullptr ? std::string("?") : t->name();
}

std::string describeType(const Type* t) {
    const Type* s = stripAlias(t);
    if (s == nullptr) {
        return "?";
    }
    if (s->kind() == TypeKind::Enum) {
        const auto* e = static_cast<const EnumType*>(s);
        std::string out = stripAlias(e->base)->kind() == TypeKind::Int ? "(" : e->base->name() + " (";
        for (std::size_t i = 0; i < e->values.size(); ++i) {
            out += (i > 0 ? ", " : "") + e->values[i].name + " := " + std::to_string(e->values[i].value);
        }
        return out + ")";
    }
    if (s->kind() == TypeKind::Struct) {
        const auto* st = static_cast<const StructType*>(s);
        return st->base != nullptr ? "STRUCT EXTENDS " + st->base->name() : "STRUCT";
    }
    return t->kind() == TypeKind::Alias ? static_cast<const AliasType*>(t)->target->name() : t->name();
}

std::string variableLine(const Symbol* s) {
    std::string line = sema::qualifiedName(s) + " : " + typeName(s->type) + " (" + ast::sectionKeyword(s->section);
    if (s->constant) {
        line += ", CONSTANT";
    }
    if (s->retain) {
        line += ", RETAIN";
    }
    if (s->address) {
        line += ", AT " + s->address->text();
    }
    if (s->resolvedAddress) {
        line += " -> " + s->resolvedAddress->text();
    }
    return line + ")";
}

void collect(const Scope& scope, std::vector<std::string>& lines) {
    for (const Symbol* s : scope.symbols()) {
        if (sema::isStdlibSymbol(s)) {
            continue;
        }
        const std::string q = sema::qualifiedName(s);
        switch (s->kind) {
        case SymbolKind::Namespace: lines.push_back("NAMESPACE " + q); break;
        case SymbolKind::Pou: {
            std::string line = std::string(ast::pouKeyword(s->pouKind)) + " " + q;
            if (s->type != nullptr && (s->pouKind == ast::PouKind::Function || s->pouKind == ast::PouKind::Method) &&
                s->type->kind() != TypeKind::Void) {
                line += " : " + s->type->name();
            }
            if (s->base != nullptr) {
                line += " EXTENDS " + sema::qualifiedName(s->base);
            }
            for (std::size_t i = 0; i < s->interfaces.size(); ++i) {
                line += (i == 0 ? " IMPLEMENTS " : ", ") + sema::qualifiedName(s->interfaces[i]);
            }
            lines.push_back(line);
            break;
        }
        case SymbolKind::Interface: {
            std::string line = "INTERFACE " + q;
            for (std::size_t i = 0; i < s->interfaces.size(); ++i) {
                line += (i == 0 ? " EXTENDS " : ", ") + sema::qualifiedName(s->interfaces[i]);
            }
            lines.push_back(line);
            break;
        }
        case SymbolKind::Type: {
            lines.push_back("TYPE " + q + " : " + describeType(s->type));
            const Type* t = stripAlias(s->type);
            if (t != nullptr && t->kind() == TypeKind::Struct) {
                for (const Field& f : static_cast<const StructType*>(t)->fields) {
                    lines.push_back(q + "." + f.name + " : " + typeName(f.type) + " (FIELD)");
                }
            }
            continue; // enum values are listed in the type's line
        }
        case SymbolKind::Variable: lines.push_back(variableLine(s)); break;
        case SymbolKind::Configuration: lines.push_back("CONFIGURATION " + q); break;
        case SymbolKind::Resource: lines.push_back("RESOURCE " + q); break;
        case SymbolKind::Task: {
            std::string line = "TASK " + q + " (INTERVAL " + std::to_string(s->taskInterval) + " ns, PRIORITY " +
                               std::to_string(s->taskPriority);
            if (s->taskSingle != nullptr) {
                line += ", SINGLE " + s->taskSingle->name;
            }
            lines.push_back(line + ")");
            break;
        }
        case SymbolKind::ProgramInstance: {
            std::string line = "PROGRAM_INSTANCE " + q + " : " + typeName(s->type);
            if (s->taskSymbol != nullptr) {
                line += " WITH " + s->taskSymbol->name;
            }
            lines.push_back(line);
            break;
        }
        case SymbolKind::AccessPath: {
            std::string line = "VAR_ACCESS " + q + " : " + typeName(s->type) + " := ";
            for (std::size_t i = 0; i < s->accessPath.size(); ++i) {
                line += (i > 0 ? "." : "") + s->accessPath[i]->name;
            }
            if (s->address) {
                line += s->address->text();
            }
            lines.push_back(line + (s->readOnly ? " READ_ONLY" : " READ_WRITE"));
            break;
        }
        case SymbolKind::EnumValue:
        case SymbolKind::StandardFunction: break;
        }
        if (s->scope != nullptr && s->kind != SymbolKind::Type) {
            collect(*s->scope, lines);
        }
    }
}

} // namespace

std::string dumpSymbols(const SemanticModel& model) {
    std::vector<std::string> lines;
    collect(*model.global, lines);
    std::sort(lines.begin(), lines.end(), [](const std::string& a, const std::string& b) {
        const std::string ua = upperName(a);
        const std::string ub = upperName(b);
        return ua != ub ? ua < ub : a < b;
    });
    std::string out;
    for (const std::string& l : lines) {
        out += l;
        out += '\n';
    }
    return out;
}

} // namespace takt::compiler
