#include "takt/engine/transfer.h"

#include "transfer_convert.h"

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

std::string joinValues(const std::vector<std::string>& values) {
    std::string s;
    for (const std::string& v : values) {
        s += (s.empty() ? "" : ", ") + v;
    }
    return s;
}

void countOutcomes(TransferReport& r) {
    r.kept = r.converted = r.reinitialised = r.dropped = r.added = 0;
    for (const TransferEntry& e : r.entries) {
        switch (e.outcome) {
        case TransferOutcome::Kept: ++r.kept; break;
        case TransferOutcome::Converted: ++r.converted; break;
        case TransferOutcome::Reinitialised: ++r.reinitialised; break;
        case TransferOutcome::Dropped: ++r.dropped; break;
        case TransferOutcome::Added: ++r.added; break;
        }
    }
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
    detail::Converter converter(from, to, plan);
    std::vector<TransferEntry>& entries = plan.report.entries;

    std::unordered_set<std::string> handled; // carried over as a whole, or new as a whole
    for (std::size_t i = 0; i < newSorted.size(); ++i) {
        const auto& [path, e] = newSorted[i];
        if (ancestorIn(path, handled)) {
            continue;
        }
        auto it = oldByPath.find(path);
        if (it == oldByPath.end()) {
            entries.push_back(
                transferEntry(e->path, TransferOutcome::Added, {}, detail::Converter::describe(to, e->type, false)));
            handled.insert(path);
            continue;
        }
        const VarEntry* o = it->second;
        if (retainOnly && !e->retain) {
            // Warm semantics: only RETAIN survives; RETAIN members of an instance still may.
            if (!hasMembers(newSorted, i)) {
                TransferEntry r = transferEntry(e->path, TransferOutcome::Reinitialised);
                r.reason = "not RETAIN (warm change)";
                entries.push_back(std::move(r));
                handled.insert(path);
            }
            continue;
        }
        const bool sameType = typeSignature(from, o->type) == typeSignature(to, e->type) && o->size == e->size;
        if (!sameType && hasMembers(newSorted, i)) {
            continue; // an instance whose type changed: its members are matched one by one
        }
        converter.variable(e->path, o->type, o->offset, e->type, e->offset);
        handled.insert(path);
    }

    std::unordered_set<std::string> dropped;
    for (const auto& [path, o] : oldSorted) {
        if (newPaths.count(path) != 0 || ancestorIn(path, dropped)) {
            continue;
        }
        entries.push_back(
            transferEntry(o->path, TransferOutcome::Dropped, detail::Converter::describe(from, o->type, false)));
        dropped.insert(path);
    }

    // Entries by path (case-insensitive); conversions follow their entry.
    std::vector<std::uint32_t> order(entries.size());
    std::vector<std::string> keys(entries.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) {
        order[k] = k;
        keys[k] = lower(entries[k].path);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
    std::vector<std::uint32_t> position(entries.size());
    std::vector<TransferEntry> sorted;
    sorted.reserve(entries.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) {
        position[order[k]] = k;
        sorted.push_back(std::move(entries[order[k]]));
    }
    entries = std::move(sorted);
    for (TransferConvert& c : plan.converts) {
        c.entry = position[c.entry];
    }
    countOutcomes(plan.report);
    plan.missed.assign(plan.converts.size(), 0);

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

namespace {

std::int64_t load(const std::uint8_t* p, std::uint8_t size, bool isSigned) noexcept {
    switch (size) {
    case 1: {
        std::uint8_t v;
        std::memcpy(&v, p, 1);
        return isSigned ? static_cast<std::int8_t>(v) : v;
    }
    case 2: {
        std::uint16_t v;
        std::memcpy(&v, p, 2);
        return isSigned ? static_cast<std::int16_t>(v) : v;
    }
    case 4: {
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        return isSigned ? static_cast<std::int32_t>(v) : static_cast<std::int64_t>(v);
    }
    default: {
        std::int64_t v;
        std::memcpy(&v, p, 8);
        return v;
    }
    }
}

void store(std::uint8_t* p, std::uint8_t size, std::int64_t value) noexcept {
    // Little-endian targets only (ARCHITECTURE.md): the low `size` bytes are the narrower value.
    std::memcpy(p, &value, size);
}

// Returns false when an ENUM value had no match (the new variable keeps its initial value).
bool convert(const TransferPlan& plan, const TransferConvert& c, const std::uint8_t* oldImage,
             std::uint8_t* newImage) noexcept {
    switch (c.op) {
    case ConvertOp::Integer: store(newImage + c.to, c.toSize, load(oldImage + c.from, c.fromSize, c.fromSigned)); break;
    case ConvertOp::RealWiden: {
        float f;
        std::memcpy(&f, oldImage + c.from, sizeof f);
        const double d = f;
        std::memcpy(newImage + c.to, &d, sizeof d);
        break;
    }
    case ConvertOp::Text:
        std::memcpy(newImage + c.to, oldImage + c.from, c.textSize);
        std::memset(newImage + c.to + c.textSize, 0, c.textEnd - c.textSize);
        break;
    case ConvertOp::Enum: {
        const std::int64_t v = load(oldImage + c.from, c.fromSize, c.fromSigned);
        const TransferEnumMap* first = plan.enumMap.data() + c.mapBegin;
        const TransferEnumMap* last = plan.enumMap.data() + c.mapEnd;
        const TransferEnumMap* hit =
            std::lower_bound(first, last, v, [](const TransferEnumMap& m, std::int64_t x) { return m.from < x; });
        if (hit == last || hit->from != v) {
            return false;
        }
        store(newImage + c.to, c.toSize, hit->to);
        break;
    }
    }
    return true;
}

} // namespace

void applyTransferPlan(TransferPlan& plan, const std::uint8_t* oldImage, std::uint8_t* newImage) noexcept {
    for (const TransferCopy& c : plan.copies) {
        std::memcpy(newImage + c.to, oldImage + c.from, c.size);
    }
    for (std::size_t i = 0; i < plan.converts.size(); ++i) {
        const bool ok = convert(plan, plan.converts[i], oldImage, newImage);
        if (i < plan.missed.size()) {
            plan.missed[i] = ok ? 0 : 1;
        }
    }
}

void applyTransferPlan(const TransferPlan& plan, const std::uint8_t* oldImage, std::uint8_t* newImage) noexcept {
    for (const TransferCopy& c : plan.copies) {
        std::memcpy(newImage + c.to, oldImage + c.from, c.size);
    }
    for (const TransferConvert& c : plan.converts) {
        (void)convert(plan, c, oldImage, newImage);
    }
}

void settleTransferReport(const TransferPlan& plan, TransferReport& report) {
    for (std::size_t i = 0; i < plan.converts.size() && i < plan.missed.size(); ++i) {
        if (plan.missed[i] != 0 && plan.converts[i].entry < report.entries.size()) {
            TransferEntry& e = report.entries[plan.converts[i].entry];
            if (!e.lost) {
                e.lost = true;
                e.outcome = TransferOutcome::Reinitialised;
                e.reason = "held an ENUM value that no longer exists (" + joinValues(e.lostValues) + ")";
            }
        }
    }
    countOutcomes(report);
}

TransferEntry transferEntry(std::string path, TransferOutcome outcome, std::string fromType, std::string toType) {
    TransferEntry e;
    e.path = std::move(path);
    e.outcome = outcome;
    e.fromType = std::move(fromType);
    e.toType = std::move(toType);
    return e;
}

bool copyInside(const TransferCopy& c, std::size_t fromSize, std::size_t toSize) {
    return std::size_t{c.from} + c.size <= fromSize && std::size_t{c.to} + c.size <= toSize;
}

bool convertInside(const TransferConvert& c, std::size_t fromSize, std::size_t toSize) {
    const std::size_t read = c.op == ConvertOp::Text ? c.textSize : c.fromSize;
    const std::size_t write = c.op == ConvertOp::Text ? c.textEnd : c.toSize;
    return c.textSize <= c.textEnd && std::size_t{c.from} + read <= fromSize && std::size_t{c.to} + write <= toSize &&
           c.mapBegin <= c.mapEnd;
}

const char* outcomeName(TransferOutcome o) {
    switch (o) {
    case TransferOutcome::Kept: return "kept";
    case TransferOutcome::Converted: return "converted";
    case TransferOutcome::Reinitialised: return "reinitialised";
    case TransferOutcome::Dropped: return "dropped";
    case TransferOutcome::Added: return "added";
    }
    return "kept";
}

bool TransferReport::losesState() const {
    return std::any_of(entries.begin(), entries.end(), [](const TransferEntry& e) {
        return e.outcome == TransferOutcome::Reinitialised || e.outcome == TransferOutcome::Dropped ||
               !e.lostValues.empty();
    });
}

} // namespace takt::engine
