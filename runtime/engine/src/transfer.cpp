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
