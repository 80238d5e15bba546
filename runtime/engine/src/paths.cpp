// Variable paths -> (offset, type). Resolution goes through Module::variables for the roots and
// through TypeDesc fields / bounds below them, so array elements and struct members need no
// table entries of their own.
#include <cctype>
#include <charconv>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "takt/common/text.h"

#include "takt/engine/path_index.h"
#include "takt/engine/values.h"

namespace takt::engine {
namespace {

using bytecode::Module;
using bytecode::TypeDesc;
using bytecode::ValueKind;

// IEC identifiers are ASCII: folded inline, not through the locale's tolower. Paths are compared
// with every member of their parent (findField): a program of 10,000 variables subscribed as a
// whole makes 50 million of these comparisons, so each must cost a few instructions.
constexpr char foldAscii(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] != b[i] && foldAscii(a[i]) != foldAscii(b[i])) {
            return false;
        }
    }
    return true;
}

struct Segment {
    std::string_view name;             // empty for an index segment
    std::vector<std::int64_t> indices; // for an index segment
};

bool isIdentChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

bool parsePath(std::string_view path, std::vector<Segment>& out, std::string& error) {
    std::size_t i = 0;
    bool expectName = true;
    while (i < path.size()) {
        if (expectName) {
            std::size_t start = i;
            while (i < path.size() && isIdentChar(path[i])) {
                ++i;
            }
            if (i == start) {
                error = fmt::format("malformed path '{}': expected a name at position {}", path, start + 1);
                return false;
            }
            out.push_back(Segment{path.substr(start, i - start), {}});
            expectName = false;
            continue;
        }
        if (path[i] == '.') {
            ++i;
            expectName = true;
            continue;
        }
        if (path[i] == '[') {
            std::size_t close = path.find(']', i);
            if (close == std::string_view::npos) {
                error = fmt::format("malformed path '{}': missing ']'", path);
                return false;
            }
            Segment seg;
            std::string_view list = path.substr(i + 1, close - i - 1);
            while (true) {
                std::size_t comma = list.find(',');
                std::string_view item = common::trim(list.substr(0, comma));
                std::int64_t v = 0;
                auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
                if (item.empty() || ec != std::errc{} || p != item.data() + item.size()) {
                    error = fmt::format("malformed path '{}': index '{}' is not an integer", path, item);
                    return false;
                }
                seg.indices.push_back(v);
                if (comma == std::string_view::npos) {
                    break;
                }
                list.remove_prefix(comma + 1);
            }
            out.push_back(std::move(seg));
            i = close + 1;
            continue;
        }
        error = fmt::format("malformed path '{}': unexpected '{}'", path, path[i]);
        return false;
    }
    if (expectName) {
        error = fmt::format("malformed path '{}'", path);
        return false;
    }
    return true;
}

const bytecode::FieldDesc* findField(const TypeDesc& t, std::string_view name) {
    for (const bytecode::FieldDesc& f : t.fields) {
        if (equalsIgnoreCase(f.name, name)) {
            return &f;
        }
    }
    return nullptr;
}

bool resolveRoot(const Module& m, std::string_view name, VarRef& out) {
    for (const bytecode::VarEntry& v : m.variables) {
        // The name first: it compares the lengths before anything else, and most entries of a
        // large program differ in length or early; the search for a dot is left for the few that
        // match (a path of 10,000 subscribed variables resolves each of them here).
        if (equalsIgnoreCase(v.path, name) && v.path.find('.') == std::string::npos) {
            out = VarRef{v.offset, v.type, v.constant};
            return true;
        }
    }
    for (const bytecode::ProgramInstance& p : m.programs) {
        if (equalsIgnoreCase(p.name, name) && p.pou < m.pous.size()) {
            out = VarRef{p.offset, m.pous[p.pou].instanceType, false};
            return true;
        }
    }
    for (const bytecode::ProgramInstance& p : m.programs) {
        if (p.pou >= m.pous.size() || bytecode::isTestPou(m.pous[p.pou].kind)) {
            continue; // the first real program instance
        }
        if (p.pou < m.pous.size() && m.pous[p.pou].instanceType < m.types.size()) {
            if (const bytecode::FieldDesc* f = findField(m.types[m.pous[p.pou].instanceType], name)) {
                out = VarRef{p.offset + f->offset, f->type, false};
                // CONSTANT members are marked in the variable table.
                for (const bytecode::VarEntry& v : m.variables) {
                    if (v.offset == out.offset && v.type == out.type && v.constant) {
                        out.constant = true;
                    }
                }
                return true;
            }
        }
        break;
    }
    return false;
}

// The walk below the root, shared by both ways of resolving: `root(name, ref)` finds the first
// segment, `member(type, name)` a member of a STRUCT, FB or PROGRAM type, `step(owner, field, ref,
// error)` sees each member reached.
// The member as the walk reached it (var.read's paths: a VAR_IN_OUT member is its slot).
bool keepMember(std::uint32_t /*owner*/, const bytecode::FieldDesc& /*field*/, VarRef& /*ref*/,
                std::string& /*error*/) {
    return true;
}

template <class Root, class Member, class Step>
bool walk(const Module& m, std::string_view path, Root root, Member member, Step step, VarRef& out,
          std::string& error) {
    std::vector<Segment> segs;
    if (!parsePath(common::trim(path), segs, error)) {
        return false;
    }
    VarRef cur;
    if (!root(segs.front().name, cur)) {
        error = fmt::format("unknown variable '{}'", segs.front().name);
        return false;
    }
    for (std::size_t s = 1; s < segs.size(); ++s) {
        if (cur.type >= m.types.size()) {
            error = fmt::format("'{}': variable has no type information", path);
            return false;
        }
        const TypeDesc& t = m.types[cur.type];
        const Segment& seg = segs[s];
        if (!seg.name.empty()) {
            const bool composite =
                t.kind == ValueKind::Struct || t.kind == ValueKind::FunctionBlock || t.kind == ValueKind::Program;
            const bytecode::FieldDesc* f = composite ? member(cur.type, seg.name) : nullptr;
            if (f == nullptr) {
                error = fmt::format("'{}': {} has no member '{}'", path, t.name, seg.name);
                return false;
            }
            const std::uint32_t owner = cur.type;
            cur.offset += f->offset;
            cur.type = f->type;
            if (!step(owner, *f, cur, error)) {
                return false;
            }
            continue;
        }
        if (t.kind != ValueKind::Array || t.element >= m.types.size()) {
            error = fmt::format("'{}': {} is not an array", path, t.name);
            return false;
        }
        const std::size_t dims = t.bounds.size() / 2;
        if (seg.indices.size() != dims) {
            error =
                fmt::format("'{}': {} has {} dimension(s), {} index(es) given", path, t.name, dims, seg.indices.size());
            return false;
        }
        std::uint64_t linear = 0;
        for (std::size_t d = 0; d < dims; ++d) {
            const std::int64_t lo = t.bounds[2 * d];
            const std::int64_t hi = t.bounds[2 * d + 1];
            const std::int64_t idx = seg.indices[d];
            if (idx < lo || idx > hi) {
                error = fmt::format("'{}': index {} out of bounds {}..{}", path, idx, lo, hi);
                return false;
            }
            linear = linear * static_cast<std::uint64_t>(hi - lo + 1) + static_cast<std::uint64_t>(idx - lo);
        }
        cur.offset += static_cast<std::uint32_t>(linear * m.types[t.element].size);
        cur.type = t.element;
    }
    out = cur;
    return true;
}

} // namespace

bool resolvePath(const Module& m, std::string_view path, VarRef& out, std::string& error) {
    return walk(
        m, path, [&m](std::string_view name, VarRef& ref) { return resolveRoot(m, name, ref); },
        [&m](std::uint32_t type, std::string_view name) { return findField(m.types[type], name); }, keepMember, out,
        error);
}

bool resolvePathIn(const Module& m, std::string_view path, const std::function<bool(std::string_view, VarRef&)>& local,
                   const MemberHook& member, VarRef& out, std::string& error) {
    return walk(
        m, path, [&](std::string_view name, VarRef& ref) { return local(name, ref) || resolveRoot(m, name, ref); },
        [&m](std::uint32_t type, std::string_view name) { return findField(m.types[type], name); }, member, out, error);
}

std::size_t PathIndex::FoldHash::operator()(std::string_view s) const noexcept {
    std::size_t h = 14695981039346656037ULL; // FNV-1a over the folded characters
    for (const char c : s) {
        h = (h ^ static_cast<unsigned char>(foldAscii(c))) * 1099511628211ULL;
    }
    return h;
}

bool PathIndex::FoldEqual::operator()(std::string_view a, std::string_view b) const noexcept {
    return equalsIgnoreCase(a, b);
}

PathIndex::PathIndex(std::shared_ptr<const Module> module) : module_(std::move(module)) {
    const Module& m = *module_;
    members_.resize(m.types.size());
    for (std::size_t t = 0; t < m.types.size(); ++t) {
        const TypeDesc& type = m.types[t];
        if (type.kind == ValueKind::Struct || type.kind == ValueKind::FunctionBlock ||
            type.kind == ValueKind::Program) {
            members_[t].reserve(type.fields.size());
            for (std::size_t f = 0; f < type.fields.size(); ++f) {
                members_[t].try_emplace(type.fields[f].name, static_cast<std::uint32_t>(f)); // the first wins
            }
        }
    }
    // The roots in resolveRoot's order, the first of a name winning: globals, program instances,
    // the variables of the first real program instance.
    for (const bytecode::VarEntry& v : m.variables) {
        if (v.path.find('.') == std::string::npos) {
            roots_.try_emplace(v.path, VarRef{v.offset, v.type, v.constant});
        }
    }
    for (const bytecode::ProgramInstance& p : m.programs) {
        if (p.pou < m.pous.size()) {
            roots_.try_emplace(p.name, VarRef{p.offset, m.pous[p.pou].instanceType, false});
        }
    }
    for (const bytecode::ProgramInstance& p : m.programs) {
        if (p.pou >= m.pous.size() || bytecode::isTestPou(m.pous[p.pou].kind)) {
            continue;
        }
        const std::uint32_t type = m.pous[p.pou].instanceType;
        if (type < m.types.size()) {
            // CONSTANT members are marked in the variable table (at the member's offset and type).
            std::unordered_set<std::uint64_t> constantAt;
            for (const bytecode::VarEntry& v : m.variables) {
                if (v.constant) {
                    constantAt.insert((std::uint64_t{v.offset} << 32U) | v.type);
                }
            }
            for (const bytecode::FieldDesc& f : m.types[type].fields) {
                const std::uint32_t offset = p.offset + f.offset;
                roots_.try_emplace(
                    f.name, VarRef{offset, f.type, constantAt.contains((std::uint64_t{offset} << 32U) | f.type)});
            }
        }
        break;
    }
}

bool PathIndex::resolve(std::string_view path, VarRef& out, std::string& error) const {
    return walk(
        *module_, path,
        [this](std::string_view name, VarRef& ref) {
            const auto it = roots_.find(name);
            if (it == roots_.end()) {
                return false;
            }
            ref = it->second;
            return true;
        },
        [this](std::uint32_t type, std::string_view name) -> const bytecode::FieldDesc* {
            const auto it = members_[type].find(name);
            return it == members_[type].end() ? nullptr : &module_->types[type].fields[it->second];
        },
        keepMember, out, error);
}

} // namespace takt::engine
