#include "transfer_convert.h"

#include <algorithm>
#include <cctype>

namespace takt::engine::detail {
namespace {

using bytecode::Module;
using bytecode::TypeDesc;
using bytecode::ValueKind;

__extension__ using Wide = __int128; // holds every bound of LINT and ULINT

// An integer-like type: its family (integers and subranges of them, or bit strings), the range
// of values it holds and how they are stored.
struct IntInfo {
    int family = 0; // 0: not integer-like, 1: SINT..ULINT and subranges, 2: BYTE..LWORD
    Wide lo = 0;
    Wide hi = 0;
    std::uint8_t size = 0;
    bool isSigned = false;
};

IntInfo intInfo(const Module& m, const TypeDesc& t) {
    IntInfo r;
    const auto set = [&](int family, std::uint8_t size, bool isSigned) {
        r.family = family;
        r.size = size;
        r.isSigned = isSigned;
        const int bits = size * 8;
        r.lo = isSigned ? -(Wide(1) << (bits - 1)) : 0;
        r.hi = isSigned ? (Wide(1) << (bits - 1)) - 1 : (Wide(1) << bits) - 1;
    };
    switch (t.kind) {
    case ValueKind::SInt: set(1, 1, true); break;
    case ValueKind::Int: set(1, 2, true); break;
    case ValueKind::DInt: set(1, 4, true); break;
    case ValueKind::LInt: set(1, 8, true); break;
    case ValueKind::USInt: set(1, 1, false); break;
    case ValueKind::UInt: set(1, 2, false); break;
    case ValueKind::UDInt: set(1, 4, false); break;
    case ValueKind::ULInt: set(1, 8, false); break;
    case ValueKind::Byte: set(2, 1, false); break;
    case ValueKind::Word: set(2, 2, false); break;
    case ValueKind::DWord: set(2, 4, false); break;
    case ValueKind::LWord: set(2, 8, false); break;
    case ValueKind::Subrange:
        if (t.element < m.types.size() && t.bounds.size() == 2) {
            r = intInfo(m, m.types[t.element]);
            r.lo = t.bounds[0];
            r.hi = t.bounds[1];
        }
        break;
    default: break;
    }
    return r;
}

// How an ENUM's values are stored: its base type, or signed integers of its size.
IntInfo enumBase(const Module& m, const TypeDesc& t) {
    if (t.element < m.types.size()) {
        const IntInfo base = intInfo(m, m.types[t.element]);
        if (base.family != 0) {
            return base;
        }
    }
    IntInfo r;
    r.family = 1;
    r.size = static_cast<std::uint8_t>(t.size);
    r.isSigned = true;
    return r;
}

bool storable(std::uint32_t size) {
    return size == 1 || size == 2 || size == 4 || size == 8;
}

ConvertResult reinit(std::string reason) {
    return ConvertResult{TransferOutcome::Reinitialised, std::move(reason), {}};
}

// The worse of two outcomes for a value made of parts (array elements, members).
void merge(ConvertResult& into, ConvertResult part) {
    if (part.outcome > into.outcome) {
        into.outcome = part.outcome;
    }
    if (!part.reason.empty() && part.outcome != TransferOutcome::Kept &&
        into.reason.find(part.reason) == std::string::npos) {
        into.reason += (into.reason.empty() ? "" : "; ") + part.reason;
    }
    for (std::string& v : part.lostValues) {
        if (std::find(into.lostValues.begin(), into.lostValues.end(), v) == into.lostValues.end()) {
            into.lostValues.push_back(std::move(v));
        }
    }
}

std::string bounds(const std::vector<std::int64_t>& b) {
    std::string s = "[";
    for (std::size_t i = 0; i + 1 < b.size(); i += 2) {
        s += (i > 0 ? "," : "") + std::to_string(b[i]) + ".." + std::to_string(b[i + 1]);
    }
    return s + "]";
}

} // namespace

bool sameName(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

std::string Converter::describe(const Module& m, std::uint32_t type, bool withValues) {
    if (type >= m.types.size()) {
        return "?";
    }
    const TypeDesc& t = m.types[type];
    std::string s = t.name.empty() ? t.signature : t.name;
    if (withValues && t.kind == ValueKind::Enum) {
        s += "(";
        for (std::size_t i = 0; i < t.enumValues.size(); ++i) {
            s += (i > 0 ? ", " : "") + t.enumValues[i].name;
        }
        s += ")";
    }
    return s;
}

std::uint32_t Converter::addEntry(TransferEntry e) {
    plan_.report.entries.push_back(std::move(e));
    return static_cast<std::uint32_t>(plan_.report.entries.size() - 1);
}

bool Converter::composite(std::uint32_t fromType, std::uint32_t toType) const {
    const auto isComposite = [](ValueKind k) {
        return k == ValueKind::Struct || k == ValueKind::FunctionBlock || k == ValueKind::Program;
    };
    return fromType < from_.types.size() && toType < to_.types.size() &&
           from_.types[fromType].kind == to_.types[toType].kind && isComposite(to_.types[toType].kind);
}

void Converter::variable(const std::string& path, std::uint32_t fromType, std::uint32_t fromOffset,
                         std::uint32_t toType, std::uint32_t toOffset) {
    const bool same = fromType < from_.types.size() && toType < to_.types.size() &&
                      from_.types[fromType].size == to_.types[toType].size &&
                      typeSignature(from_, fromType) == typeSignature(to_, toType);
    if (!same && composite(fromType, toType)) {
        // Members by name, each with its own entry (an FB instance's members when the variable
        // table does not list them: a STRUCT, or an instance in a retain file).
        const TypeDesc& o = from_.types[fromType];
        const TypeDesc& n = to_.types[toType];
        for (const bytecode::FieldDesc& nf : n.fields) {
            const auto of = std::find_if(o.fields.begin(), o.fields.end(),
                                         [&](const bytecode::FieldDesc& f) { return sameName(f.name, nf.name); });
            if (of == o.fields.end()) {
                addEntry(
                    transferEntry(path + "." + nf.name, TransferOutcome::Added, {}, describe(to_, nf.type, false)));
            } else {
                variable(path + "." + nf.name, of->type, fromOffset + of->offset, nf.type, toOffset + nf.offset);
            }
        }
        for (const bytecode::FieldDesc& of : o.fields) {
            if (std::none_of(n.fields.begin(), n.fields.end(),
                             [&](const bytecode::FieldDesc& f) { return sameName(f.name, of.name); })) {
                addEntry(
                    transferEntry(path + "." + of.name, TransferOutcome::Dropped, describe(from_, of.type, false)));
            }
        }
        return;
    }
    const std::uint32_t entry = addEntry(transferEntry(path, TransferOutcome::Kept));
    ConvertResult r = value(fromType, fromOffset, toType, toOffset, entry);
    TransferEntry& e = plan_.report.entries[entry];
    e.outcome = r.outcome;
    if (r.outcome != TransferOutcome::Kept) {
        const bool sameTypeName = describe(from_, fromType, false) == describe(to_, toType, false);
        e.fromType = describe(from_, fromType, sameTypeName);
        e.toType = describe(to_, toType, sameTypeName);
    }
    e.reason = std::move(r.reason);
    e.lostValues = std::move(r.lostValues);
}

ConvertResult Converter::value(std::uint32_t fromType, std::uint32_t fromOffset, std::uint32_t toType,
                               std::uint32_t toOffset, std::uint32_t entry) {
    if (fromType >= from_.types.size() || toType >= to_.types.size()) {
        return reinit("type unknown");
    }
    const TypeDesc& o = from_.types[fromType];
    const TypeDesc& n = to_.types[toType];
    if (o.size == n.size && typeSignature(from_, fromType) == typeSignature(to_, toType)) {
        plan_.copies.push_back(TransferCopy{fromOffset, toOffset, n.size});
        return {};
    }
    if (o.kind == ValueKind::Enum && n.kind == ValueKind::Enum) {
        return enumeration(o, fromOffset, n, toOffset, entry);
    }
    if (o.kind == ValueKind::Array && n.kind == ValueKind::Array) {
        return array(o, fromOffset, n, toOffset, entry);
    }
    if (composite(fromType, toType)) {
        return members(o, fromOffset, n, toOffset, entry);
    }
    return elementary(o, fromOffset, n, toOffset);
}

ConvertResult Converter::enumeration(const TypeDesc& o, std::uint32_t fromOffset, const TypeDesc& n,
                                     std::uint32_t toOffset, std::uint32_t entry) {
    const IntInfo ob = enumBase(from_, o);
    const IntInfo nb = enumBase(to_, n);
    if (!storable(ob.size) || !storable(nb.size)) {
        return reinit("ENUM of an unsupported size");
    }
    ConvertResult r{TransferOutcome::Converted, "kept by value name", {}};
    std::vector<TransferEnumMap> map;
    bool identity = ob.size == nb.size && ob.isSigned == nb.isSigned;
    for (const bytecode::EnumValueDesc& ov : o.enumValues) {
        const auto nv = std::find_if(n.enumValues.begin(), n.enumValues.end(),
                                     [&](const bytecode::EnumValueDesc& v) { return sameName(v.name, ov.name); });
        if (nv == n.enumValues.end()) {
            r.lostValues.push_back(ov.name);
            continue;
        }
        identity = identity && nv->value == ov.value;
        map.push_back(TransferEnumMap{ov.value, nv->value});
    }
    if (identity && r.lostValues.empty()) {
        plan_.copies.push_back(TransferCopy{fromOffset, toOffset, n.size});
        return r;
    }
    std::sort(map.begin(), map.end(),
              [](const TransferEnumMap& a, const TransferEnumMap& b) { return a.from < b.from; });
    TransferConvert c{fromOffset, toOffset, ConvertOp::Enum, ob.size, nb.size, ob.isSigned};
    c.mapBegin = static_cast<std::uint32_t>(plan_.enumMap.size());
    plan_.enumMap.insert(plan_.enumMap.end(), map.begin(), map.end());
    c.mapEnd = static_cast<std::uint32_t>(plan_.enumMap.size());
    c.entry = entry;
    plan_.converts.push_back(c);
    return r;
}

ConvertResult Converter::elementary(const TypeDesc& o, std::uint32_t fromOffset, const TypeDesc& n,
                                    std::uint32_t toOffset) {
    const std::string change = o.name + " -> " + n.name;
    if (o.kind == ValueKind::Real && n.kind == ValueKind::LReal) {
        plan_.converts.push_back(TransferConvert{fromOffset, toOffset, ConvertOp::RealWiden, 4, 8});
        return ConvertResult{TransferOutcome::Converted, "widened (" + change + ")", {}};
    }
    if ((o.kind == ValueKind::String || o.kind == ValueKind::WString) && o.kind == n.kind) {
        if (n.size < o.size) {
            return reinit("type changed (" + change + " could cut the text)");
        }
        TransferConvert c{fromOffset, toOffset, ConvertOp::Text, 0, 0};
        c.textSize = o.size;
        c.textEnd = n.size;
        plan_.converts.push_back(c);
        return ConvertResult{TransferOutcome::Converted, "longer (" + change + ")", {}};
    }
    const IntInfo oi = intInfo(from_, o);
    const IntInfo ni = intInfo(to_, n);
    if (oi.family == 0 || oi.family != ni.family) {
        return reinit("type changed (" + change + ")");
    }
    if (oi.lo < ni.lo || oi.hi > ni.hi) {
        return reinit("type changed (not every " + o.name + " value fits in " + n.name + ")");
    }
    if (oi.size == ni.size) { // a subrange of the same storage: the bytes mean the same value
        plan_.copies.push_back(TransferCopy{fromOffset, toOffset, n.size});
    } else {
        plan_.converts.push_back(
            TransferConvert{fromOffset, toOffset, ConvertOp::Integer, oi.size, ni.size, oi.isSigned});
    }
    return ConvertResult{TransferOutcome::Converted, "widened (" + change + ")", {}};
}

// Row-major elements; every index present in both bound sets is carried over by the element
// rules. The first element's copies and conversions are computed once and repeated at each
// element's offsets.
ConvertResult Converter::array(const TypeDesc& o, std::uint32_t fromOffset, const TypeDesc& n, std::uint32_t toOffset,
                               std::uint32_t entry) {
    const std::size_t dims = n.bounds.size() / 2;
    if (dims == 0 || o.bounds.size() != n.bounds.size() || o.element >= from_.types.size() ||
        n.element >= to_.types.size()) {
        return reinit("array dimensions changed");
    }
    const std::uint64_t oElem = from_.types[o.element].size;
    const std::uint64_t nElem = to_.types[n.element].size;
    std::vector<std::int64_t> lo(dims), hi(dims);
    bool shrunk = false;
    for (std::size_t d = 0; d < dims; ++d) {
        lo[d] = std::max(o.bounds[2 * d], n.bounds[2 * d]);
        hi[d] = std::min(o.bounds[2 * d + 1], n.bounds[2 * d + 1]);
        if (lo[d] > hi[d]) {
            return reinit("no index in common (" + bounds(o.bounds) + " -> " + bounds(n.bounds) + ")");
        }
        shrunk = shrunk || lo[d] != o.bounds[2 * d] || hi[d] != o.bounds[2 * d + 1];
    }
    ConvertResult r{TransferOutcome::Converted, {}, {}};
    if (o.bounds != n.bounds) {
        r.reason = "indices " + bounds(o.bounds) + " -> " + bounds(n.bounds);
    }
    if (shrunk) {
        r.outcome = TransferOutcome::Reinitialised;
        r.reason += "; the elements outside the new bounds are dropped";
    }
    const std::size_t copies0 = plan_.copies.size();
    const std::size_t converts0 = plan_.converts.size();
    std::size_t copies1 = 0;
    std::size_t converts1 = 0;
    std::uint32_t first[2] = {0, 0};
    std::vector<std::int64_t> index = lo;
    for (bool firstElement = true;; firstElement = false) {
        std::uint64_t oLinear = 0;
        std::uint64_t nLinear = 0;
        for (std::size_t d = 0; d < dims; ++d) {
            oLinear = oLinear * static_cast<std::uint64_t>(o.bounds[2 * d + 1] - o.bounds[2 * d] + 1) +
                      static_cast<std::uint64_t>(index[d] - o.bounds[2 * d]);
            nLinear = nLinear * static_cast<std::uint64_t>(n.bounds[2 * d + 1] - n.bounds[2 * d] + 1) +
                      static_cast<std::uint64_t>(index[d] - n.bounds[2 * d]);
        }
        if ((oLinear + 1) * oElem > o.size || (nLinear + 1) * nElem > n.size) {
            return reinit("inconsistent type table"); // carry nothing rather than copy out of range
        }
        const auto oAt = fromOffset + static_cast<std::uint32_t>(oLinear * oElem);
        const auto nAt = toOffset + static_cast<std::uint32_t>(nLinear * nElem);
        if (firstElement) {
            first[0] = oAt;
            first[1] = nAt;
            ConvertResult element = value(o.element, oAt, n.element, nAt, entry);
            if (element.outcome != TransferOutcome::Kept) {
                element.reason = "elements: " + element.reason;
            }
            merge(r, std::move(element));
            copies1 = plan_.copies.size();
            converts1 = plan_.converts.size();
        } else {
            for (std::size_t i = copies0; i < copies1; ++i) {
                TransferCopy c = plan_.copies[i];
                c.from = c.from - first[0] + oAt;
                c.to = c.to - first[1] + nAt;
                plan_.copies.push_back(c);
            }
            for (std::size_t i = converts0; i < converts1; ++i) {
                TransferConvert c = plan_.converts[i];
                c.from = c.from - first[0] + oAt;
                c.to = c.to - first[1] + nAt;
                plan_.converts.push_back(c);
            }
        }
        std::size_t d = dims;
        while (d > 0 && index[d - 1] == hi[d - 1]) {
            index[d - 1] = lo[d - 1];
            --d;
        }
        if (d == 0) {
            break;
        }
        ++index[d - 1];
    }
    if (r.outcome == TransferOutcome::Reinitialised && copies1 == copies0 && converts1 == converts0) {
        return reinit(r.reason); // nothing of an element carried over
    }
    return r;
}

ConvertResult Converter::members(const TypeDesc& o, std::uint32_t fromOffset, const TypeDesc& n, std::uint32_t toOffset,
                                 std::uint32_t entry) {
    ConvertResult r{TransferOutcome::Converted, {}, {}};
    for (const bytecode::FieldDesc& nf : n.fields) {
        const auto of = std::find_if(o.fields.begin(), o.fields.end(),
                                     [&](const bytecode::FieldDesc& f) { return sameName(f.name, nf.name); });
        if (of == o.fields.end()) {
            merge(r, ConvertResult{TransferOutcome::Converted, "member " + nf.name + " added", {}});
            continue;
        }
        ConvertResult m = value(of->type, fromOffset + of->offset, nf.type, toOffset + nf.offset, entry);
        if (m.outcome != TransferOutcome::Kept) {
            m.reason = "member " + nf.name + ": " + m.reason;
        }
        merge(r, std::move(m));
    }
    for (const bytecode::FieldDesc& of : o.fields) {
        if (std::none_of(n.fields.begin(), n.fields.end(),
                         [&](const bytecode::FieldDesc& f) { return sameName(f.name, of.name); })) {
            merge(r, reinit("member " + of.name + " dropped"));
        }
    }
    if (r.reason.empty()) {
        r.reason = "members kept by name";
    }
    return r;
}

} // namespace takt::engine::detail
