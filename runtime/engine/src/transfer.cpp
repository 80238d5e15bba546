#include "takt/engine/transfer.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace takt::engine {
namespace {

using bytecode::Module;
using bytecode::VarEntry;

std::string lower(std::string_view s) {
    std::string r(s);
    for (char& c : r) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return r;
}

// True when some proper ancestor ("a.b" for "a.b.c") is in `set`.
bool ancestorIn(const std::string& path, const std::unordered_set<std::string>& set) {
    for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
        if (set.count(path.substr(0, dot)) != 0) {
            return true;
        }
    }
    return false;
}

// Entries sorted by lower-case path so that a parent precedes its members.
std::vector<std::pair<std::string, const VarEntry*>> sortedEntries(const Module& m) {
    std::vector<std::pair<std::string, const VarEntry*>> out;
    out.reserve(m.variables.size());
    for (const VarEntry& v : m.variables) {
        out.emplace_back(lower(v.path), &v);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
}

bool hasMembers(const std::vector<std::pair<std::string, const VarEntry*>>& sorted, std::size_t i) {
    return i + 1 < sorted.size() && sorted[i + 1].first.size() > sorted[i].first.size() &&
           sorted[i + 1].first.compare(0, sorted[i].first.size(), sorted[i].first) == 0 &&
           sorted[i + 1].first[sorted[i].first.size()] == '.';
}

bool sameFieldName(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

// The variable table lists members of instances but not of array elements. A retyped array
// (its element FB gained a variable, its bounds changed) is therefore transferred by its types:
// elements at the same indices, and within an element the members of the same name and type,
// like the table-driven matching does for a single instance.
class StructuralTransfer {
public:
    StructuralTransfer(const Module& from, const Module& to, std::vector<TransferCopy>& copies)
        : from_(from), to_(to), copies_(copies) {}

    void value(std::uint32_t fromType, std::uint32_t fromOffset, std::uint32_t toType, std::uint32_t toOffset) {
        if (fromType >= from_.types.size() || toType >= to_.types.size()) {
            return;
        }
        const bytecode::TypeDesc& o = from_.types[fromType];
        const bytecode::TypeDesc& n = to_.types[toType];
        if (o.size == n.size && typeSignature(from_, fromType) == typeSignature(to_, toType)) {
            copies_.push_back(TransferCopy{fromOffset, toOffset, n.size});
            return;
        }
        if (o.kind != n.kind) {
            return;
        }
        if (o.kind == bytecode::ValueKind::Array) {
            array(o, fromOffset, n, toOffset);
        } else if (!n.fields.empty()) {
            for (const bytecode::FieldDesc& nf : n.fields) {
                for (const bytecode::FieldDesc& of : o.fields) {
                    if (sameFieldName(of.name, nf.name)) {
                        value(of.type, fromOffset + of.offset, nf.type, toOffset + nf.offset);
                        break;
                    }
                }
            }
        }
    }

private:
    // Row-major elements; every index present in both bound sets is carried over.
    void array(const bytecode::TypeDesc& o, std::uint32_t fromOffset, const bytecode::TypeDesc& n,
               std::uint32_t toOffset) {
        const std::size_t dims = n.bounds.size() / 2;
        if (dims == 0 || o.bounds.size() != n.bounds.size() || o.element >= from_.types.size() ||
            n.element >= to_.types.size()) {
            return;
        }
        const std::uint64_t oElem = from_.types[o.element].size;
        const std::uint64_t nElem = to_.types[n.element].size;
        std::vector<std::int64_t> lo(dims), hi(dims), index(dims);
        for (std::size_t d = 0; d < dims; ++d) {
            lo[d] = std::max(o.bounds[2 * d], n.bounds[2 * d]);
            hi[d] = std::min(o.bounds[2 * d + 1], n.bounds[2 * d + 1]);
            if (lo[d] > hi[d]) {
                return;
            }
        }
        index = lo;
        for (;;) {
            std::uint64_t oLinear = 0;
            std::uint64_t nLinear = 0;
            for (std::size_t d = 0; d < dims; ++d) {
                oLinear = oLinear * static_cast<std::uint64_t>(o.bounds[2 * d + 1] - o.bounds[2 * d] + 1) +
                          static_cast<std::uint64_t>(index[d] - o.bounds[2 * d]);
                nLinear = nLinear * static_cast<std::uint64_t>(n.bounds[2 * d + 1] - n.bounds[2 * d] + 1) +
                          static_cast<std::uint64_t>(index[d] - n.bounds[2 * d]);
            }
            if ((oLinear + 1) * oElem > o.size || (nLinear + 1) * nElem > n.size) {
                return; // inconsistent type table: carry nothing rather than copy out of range
            }
            value(o.element, fromOffset + static_cast<std::uint32_t>(oLinear * oElem), n.element,
                  toOffset + static_cast<std::uint32_t>(nLinear * nElem));
            std::size_t d = dims;
            while (d > 0 && index[d - 1] == hi[d - 1]) {
                index[d - 1] = lo[d - 1];
                --d;
            }
            if (d == 0) {
                return;
            }
            ++index[d - 1];
        }
    }

    const Module& from_;
    const Module& to_;
    std::vector<TransferCopy>& copies_;
};

} // namespace

std::string typeSignature(const Module& m, std::uint32_t type) {
    if (type >= m.types.size()) {
        return {};
    }
    const bytecode::TypeDesc& t = m.types[type];
    if (!t.signature.empty()) {
        return t.signature;
    }
    return t.name + "/" + std::to_string(t.size); // modules without signatures: name and size
}

TransferPlan computeTransferPlan(const Module& from, const Module& to, bool retainOnly) {
    TransferPlan plan;
    const auto oldSorted = sortedEntries(from);
    const auto newSorted = sortedEntries(to);
    std::unordered_map<std::string, const VarEntry*> oldByPath;
    for (const auto& [path, v] : oldSorted) {
        oldByPath.emplace(path, v);
    }
    std::unordered_set<std::string> newPaths;
    for (const auto& [path, v] : newSorted) {
        newPaths.insert(path);
    }

    std::unordered_set<std::string> handled; // copied whole or new as a whole
    for (std::size_t i = 0; i < newSorted.size(); ++i) {
        const auto& [path, e] = newSorted[i];
        if (ancestorIn(path, handled)) {
            continue;
        }
        auto it = oldByPath.find(path);
        if (it == oldByPath.end()) {
            ++plan.report.initialised;
            handled.insert(path);
            continue;
        }
        const VarEntry* o = it->second;
        const bool sameType = typeSignature(from, o->type) == typeSignature(to, e->type) && o->size == e->size;
        if (!sameType) {
            ++plan.report.retyped;
            plan.report.retypedPaths.push_back(e->path);
            if (!hasMembers(newSorted, i) && (!retainOnly || e->retain)) {
                // No member entries to match one by one (array elements): match by type.
                StructuralTransfer(from, to, plan.copies).value(o->type, o->offset, e->type, e->offset);
            }
            continue; // members are still matched one by one
        }
        if (retainOnly && !e->retain) {
            // Warm semantics: only RETAIN survives; RETAIN members of an instance still may.
            if (!hasMembers(newSorted, i)) {
                ++plan.report.initialised;
            }
            continue;
        }
        plan.copies.push_back(TransferCopy{o->offset, e->offset, e->size});
        ++plan.report.kept;
        handled.insert(path);
    }

    std::unordered_set<std::string> dropped;
    for (const auto& [path, o] : oldSorted) {
        if (newPaths.count(path) != 0 || ancestorIn(path, dropped)) {
            continue;
        }
        ++plan.report.dropped;
        dropped.insert(path);
    }

    std::sort(plan.copies.begin(), plan.copies.end(),
              [](const TransferCopy& a, const TransferCopy& b) { return a.from < b.from; });
    std::vector<TransferCopy> merged;
    for (const TransferCopy& c : plan.copies) {
        if (c.size == 0) {
            continue;
        }
        if (!merged.empty() && merged.back().from + merged.back().size == c.from &&
            merged.back().to + merged.back().size == c.to) {
            merged.back().size += c.size;
        } else {
            merged.push_back(c);
        }
    }
    plan.copies = std::move(merged);
    return plan;
}

void applyTransferPlan(const TransferPlan& plan, const std::uint8_t* oldImage, std::uint8_t* newImage) {
    for (const TransferCopy& c : plan.copies) {
        std::memcpy(newImage + c.to, oldImage + c.from, c.size);
    }
}

} // namespace takt::engine
