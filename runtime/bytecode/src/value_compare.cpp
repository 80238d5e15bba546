// Value equality over Module::types (rules in value_compare.h). The verifier has accepted the
// type with compareTypeError before EQ_AGG or `takt test` walks a value of it, so the walk
// trusts sizes, offsets and the nesting bound.
#include "takt/bytecode/value_compare.h"

#include <algorithm>
#include <cstring>

#include "takt/bytecode/value_kind.h"

namespace takt::bytecode {

namespace {

// Bytes an elementary kind compares; a reference compares its 4-byte image offset (the rest of
// its slot is not part of it); 0 for the composite kinds.
std::uint32_t leafWidth(ValueKind k) {
    if (k == ValueKind::Ref || k == ValueKind::Interface) {
        return 4;
    }
    return elementaryWidth(k);
}

std::uint64_t elementCount(const TypeDesc& t) {
    std::uint64_t count = 1;
    for (std::size_t i = 0; i + 1 < t.bounds.size(); i += 2) {
        count *= static_cast<std::uint64_t>(t.bounds[i + 1] - t.bounds[i] + 1);
    }
    return count;
}

constexpr std::int32_t kUnknown = 0;
constexpr std::int32_t kVisiting = -1;
constexpr std::int32_t kInvalid = -2;

class TypeChecker {
public:
    TypeChecker(const Module& m, std::vector<std::int32_t>& memo) : m_(m), memo_(memo) {
        memo_.resize(m.types.size(), kUnknown);
    }

    // The nesting height of `t` (1 for an elementary type), or 0 with error_ set.
    std::int32_t height(std::uint32_t t, std::uint32_t level) {
        if (t >= m_.types.size()) {
            return bad("type " + std::to_string(t) + " is not in the type table");
        }
        const TypeDesc& d = m_.types[t];
        const std::string where = "type " + std::to_string(t) + " '" + d.name + "'";
        if (memo_[t] > 0) {
            return memo_[t];
        }
        if (memo_[t] == kInvalid) {
            return bad(where + " cannot be compared");
        }
        if (memo_[t] == kVisiting) {
            memo_[t] = kInvalid;
            return bad(where + " contains itself");
        }
        if (level > kMaxCompareDepth) {
            return bad(where + " nests deeper than " + std::to_string(kMaxCompareDepth) + " levels");
        }
        memo_[t] = kVisiting;
        const std::int32_t h = measure(d, where, level);
        memo_[t] = h > 0 ? h : kInvalid;
        return h;
    }

    std::string error;

private:
    std::int32_t bad(std::string text) {
        if (error.empty()) {
            error = std::move(text);
        }
        return 0;
    }

    std::int32_t measure(const TypeDesc& d, const std::string& where, std::uint32_t level) {
        if (const std::uint32_t w = leafWidth(d.kind); w != 0) {
            return d.size >= w ? 1 : bad(where + " has " + std::to_string(d.size) + " bytes, less than its value");
        }
        switch (d.kind) {
        case ValueKind::String:
        case ValueKind::WString: {
            const std::uint64_t need =
                (d.kind == ValueKind::WString ? 2ull : 1ull) * (std::uint64_t{d.stringLength} + 1);
            return d.size >= need ? 1 : bad(where + " is smaller than its characters and terminator");
        }
        case ValueKind::Enum:
        case ValueKind::Subrange: {
            // Compared as the integer base they are stored as (all d.size bytes of it).
            if (d.element >= m_.types.size()) {
                return bad(where + ": base type " + std::to_string(d.element) + " is not in the type table");
            }
            const ValueKind base = m_.types[d.element].kind;
            if (leafWidth(base) != d.size || base == ValueKind::Real || base == ValueKind::LReal ||
                base == ValueKind::Ref || base == ValueKind::Interface) {
                return bad(where + " is not stored as an integer of its size");
            }
            return 1;
        }
        case ValueKind::Array: {
            if (d.bounds.empty() || d.bounds.size() % 2 != 0) {
                return bad(where + " has no fixed bounds");
            }
            for (std::size_t i = 0; i < d.bounds.size(); i += 2) {
                if (d.bounds[i + 1] < d.bounds[i] || d.bounds[i + 1] - d.bounds[i] >= 0xFFFFFFFFll) {
                    return bad(where + " has an empty or too large dimension");
                }
            }
            const std::int32_t h = height(d.element, level + 1);
            if (h == 0) {
                return 0;
            }
            if (elementCount(d) * m_.types[d.element].size != d.size) {
                return bad(where + " is not its element count times the element size");
            }
            return h + 1;
        }
        case ValueKind::Struct: {
            std::int32_t h = 0;
            for (const FieldDesc& f : d.fields) {
                const std::int32_t fh = height(f.type, level + 1);
                if (fh == 0) {
                    return 0;
                }
                if (std::uint64_t{f.offset} + m_.types[f.type].size > d.size) {
                    return bad(where + ": field '" + f.name + "' leaves the struct");
                }
                h = std::max(h, fh);
            }
            return h + 1;
        }
        default: return bad(where + " is a function block or program instance, which has no value equality");
        }
    }

    const Module& m_;
    std::vector<std::int32_t>& memo_;
};

template <typename T> T load(const std::uint8_t* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Characters before the terminator, at most `length`.
template <typename Unit> std::uint32_t textLength(const std::uint8_t* p, std::uint32_t length) noexcept {
    std::uint32_t n = 0;
    while (n < length && load<Unit>(p + n * sizeof(Unit)) != 0) {
        ++n;
    }
    return n;
}

template <typename Unit> bool textEqual(const std::uint8_t* a, const std::uint8_t* b, std::uint32_t length) noexcept {
    const std::uint32_t n = textLength<Unit>(a, length);
    return n == textLength<Unit>(b, length) && std::memcmp(a, b, n * sizeof(Unit)) == 0;
}

bool leafEqual(const TypeDesc& d, const std::uint8_t* a, const std::uint8_t* b) noexcept {
    switch (d.kind) {
    case ValueKind::Bool: return (*a != 0) == (*b != 0);
    case ValueKind::Real: return load<float>(a) == load<float>(b);
    case ValueKind::LReal: return load<double>(a) == load<double>(b);
    case ValueKind::String: return textEqual<std::uint8_t>(a, b, d.stringLength);
    case ValueKind::WString: return textEqual<std::uint16_t>(a, b, d.stringLength);
    case ValueKind::Enum:
    case ValueKind::Subrange: return std::memcmp(a, b, d.size) == 0;
    default: return std::memcmp(a, b, leafWidth(d.kind)) == 0;
    }
}

// The walk of both EQ_AGG (diff = nullptr: allocates nothing) and firstDifference (the path is
// recorded on the way back out of the recursion, innermost step first).
bool walk(const Module& m, std::uint32_t type, const std::uint8_t* a, const std::uint8_t* b, std::uint32_t offset,
          ValueDifference* diff) {
    const TypeDesc& d = m.types[type];
    switch (d.kind) {
    case ValueKind::Array: {
        const std::uint32_t size = m.types[d.element].size;
        if (size == 0) {
            return true; // zero-size elements hold nothing to differ in
        }
        const auto count = static_cast<std::uint32_t>(elementCount(d));
        for (std::uint32_t i = 0; i < count; ++i) {
            const std::uint32_t at = i * size;
            if (!walk(m, d.element, a + at, b + at, offset + at, diff)) {
                if (diff != nullptr) {
                    diff->path.push_back({type, i});
                }
                return false;
            }
        }
        return true;
    }
    case ValueKind::Struct:
        for (std::uint32_t i = 0; i < d.fields.size(); ++i) {
            const FieldDesc& f = d.fields[i];
            if (!walk(m, f.type, a + f.offset, b + f.offset, offset + f.offset, diff)) {
                if (diff != nullptr) {
                    diff->path.push_back({type, i});
                }
                return false;
            }
        }
        return true;
    default:
        if (leafEqual(d, a, b)) {
            return true;
        }
        if (diff != nullptr) {
            diff->leaf = type;
            diff->offset = offset;
        }
        return false;
    }
}

} // namespace

std::string compareTypeError(const Module& m, std::uint32_t type, std::vector<std::int32_t>& memo) {
    TypeChecker checker(m, memo);
    if (checker.height(type, 1) == 0) {
        return checker.error.empty() ? "type " + std::to_string(type) + " cannot be compared" : checker.error;
    }
    return {};
}

bool valuesEqual(const Module& m, std::uint32_t type, const std::uint8_t* a, const std::uint8_t* b) noexcept {
    return walk(m, type, a, b, 0, nullptr);
}

std::optional<ValueDifference> firstDifference(const Module& m, std::uint32_t type, const std::uint8_t* a,
                                               const std::uint8_t* b) {
    ValueDifference diff;
    if (walk(m, type, a, b, 0, &diff)) {
        return std::nullopt;
    }
    std::reverse(diff.path.begin(), diff.path.end());
    return diff;
}

std::string elementSubscript(const TypeDesc& array, std::uint32_t index) {
    // Storage order is row-major: the last subscript counts fastest.
    const std::size_t dims = array.bounds.size() / 2;
    std::vector<std::int64_t> subscripts(dims, 0);
    std::uint64_t rest = index;
    for (std::size_t k = dims; k-- > 0;) {
        const auto extent = static_cast<std::uint64_t>(array.bounds[2 * k + 1] - array.bounds[2 * k] + 1);
        subscripts[k] = array.bounds[2 * k] + static_cast<std::int64_t>(rest % extent);
        rest /= extent;
    }
    std::string text = "[";
    for (std::size_t k = 0; k < dims; ++k) {
        text += (k > 0 ? ", " : "") + std::to_string(subscripts[k]);
    }
    return text + "]";
}

} // namespace takt::bytecode
