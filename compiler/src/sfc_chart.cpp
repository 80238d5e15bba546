// The chart's facts that checking and lowering share (sfc_chart.h).
#include "sfc_chart.h"

#include <algorithm>
#include <utility>

#include "takt/compiler/names.h"

namespace takt::compiler::sfc {

namespace {

// One list of the qualifiers: their names in IEC 61131-3's order of table 45.
constexpr std::pair<std::string_view, Qualifier> kQualifiers[] = {
    {"N", Qualifier::N},   {"R", Qualifier::R},   {"S", Qualifier::S},   {"P", Qualifier::P},
    {"L", Qualifier::L},   {"D", Qualifier::D},   {"P0", Qualifier::P0}, {"P1", Qualifier::P1},
    {"SD", Qualifier::SD}, {"DS", Qualifier::DS}, {"SL", Qualifier::SL},
};

} // namespace

Qualifier qualifierOf(std::string_view q) {
    if (q.empty()) {
        return Qualifier::N;
    }
    for (const auto& [name, value] : kQualifiers) {
        if (sameName(q, name)) {
            return value;
        }
    }
    return Qualifier::Unknown;
}

bool timed(Qualifier q) {
    return q == Qualifier::L || q == Qualifier::D || q == Qualifier::SD || q == Qualifier::DS || q == Qualifier::SL;
}

std::string_view qualifierNames() {
    static const std::string names = [] {
        std::string s;
        for (const auto& [name, value] : kQualifiers) {
            s += s.empty() ? "" : ", ";
            s += name;
        }
        return s;
    }();
    return names;
}

const SfcStep* ChartView::findStep(std::string_view name) const {
    for (const SfcStep& s : chart.steps) {
        if (sameName(s.name.name, name)) {
            return &s;
        }
    }
    return nullptr;
}

const SfcStep* ChartView::initialStep() const {
    const auto it = std::find_if(chart.steps.begin(), chart.steps.end(), [](const SfcStep& s) { return s.initial; });
    return it == chart.steps.end() ? nullptr : &*it;
}

bool ChartView::isAction(std::string_view name) const {
    return std::any_of(pou.methods.begin(), pou.methods.end(),
                       [&](const auto& m) { return m->isAction && sameName(m->name.name, name); });
}

const ast::VarDecl* ChartView::userVariable(std::string_view name) const {
    for (const ast::VarBlock& b : pou.varBlocks) {
        for (const ast::VarDecl& d : b.vars) {
            for (const ast::Identifier& n : d.names) {
                if (sameName(n.name, name)) {
                    return &d;
                }
            }
        }
    }
    return nullptr;
}

ast::Identifier ChartView::chartFlag(std::string_view name) const {
    const ast::VarDecl* d = userVariable(name);
    if (d == nullptr) {
        return {};
    }
    for (const ast::Identifier& n : d->names) {
        if (sameName(n.name, name)) {
            return n;
        }
    }
    return {};
}

std::vector<std::string> ChartView::actionOrder() const {
    std::vector<std::string> out;
    for (const SfcStep& s : chart.steps) {
        for (const SfcAssociation& a : s.actions) {
            std::string key = upperName(a.action.name);
            if (std::find(out.begin(), out.end(), key) == out.end()) {
                out.push_back(std::move(key));
            }
        }
    }
    return out;
}

bool ChartView::uses(std::string_view action, Qualifier q) const {
    for (const SfcStep& s : chart.steps) {
        for (const SfcAssociation& a : s.actions) {
            if (sameName(a.action.name, action) && qualifierOf(a.qualifier.name) == q) {
                return true;
            }
        }
    }
    return false;
}

const SfcAssociation* ChartView::firstAssociation(std::string_view action) const {
    for (const SfcStep& s : chart.steps) {
        for (const SfcAssociation& a : s.actions) {
            if (sameName(a.action.name, action)) {
                return &a;
            }
        }
    }
    return nullptr;
}

bool isBool(const ast::VarDecl& d) {
    return d.type != nullptr && d.type->kind == ast::TypeSpecKind::Named &&
           static_cast<const ast::NamedTypeSpec&>(*d.type).name.parts.size() == 1 &&
           sameName(static_cast<const ast::NamedTypeSpec&>(*d.type).name.parts[0].name, "BOOL");
}

bool sameSteps(const std::vector<ast::Identifier>& a, const std::vector<ast::Identifier>& b) {
    return a.size() == b.size() && std::all_of(a.begin(), a.end(), [&](const ast::Identifier& s) {
               return std::any_of(b.begin(), b.end(),
                                  [&](const ast::Identifier& o) { return sameName(o.name, s.name); });
           });
}

const ast::Stmt* escapeOf(const ast::StmtList& body) {
    for (const ast::StmtPtr& st : body) {
        const ast::Stmt* found = nullptr;
        switch (st->kind) {
        case ast::StmtKind::Return:
        case ast::StmtKind::Label:
        case ast::StmtKind::Jump: return st.get();
        case ast::StmtKind::If: {
            const auto& s = static_cast<const ast::IfStmt&>(*st);
            for (const ast::CondBlock& b : s.branches) {
                found = found != nullptr ? found : escapeOf(b.body);
            }
            found = found != nullptr ? found : escapeOf(s.elseBody);
            break;
        }
        case ast::StmtKind::Case: {
            const auto& s = static_cast<const ast::CaseStmt&>(*st);
            for (const ast::CaseBranch& b : s.branches) {
                found = found != nullptr ? found : escapeOf(b.body);
            }
            found = found != nullptr ? found : escapeOf(s.elseBody);
            break;
        }
        case ast::StmtKind::For: found = escapeOf(static_cast<const ast::ForStmt&>(*st).body); break;
        case ast::StmtKind::While: found = escapeOf(static_cast<const ast::WhileStmt&>(*st).body); break;
        case ast::StmtKind::Repeat: found = escapeOf(static_cast<const ast::RepeatStmt&>(*st).body); break;
        default: break;
        }
        if (found != nullptr) {
            return found;
        }
    }
    return nullptr;
}

} // namespace takt::compiler::sfc
