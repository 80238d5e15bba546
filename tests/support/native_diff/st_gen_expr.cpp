// Typed expressions: every operand has the type its operator needs, so every expression compiles;
// the values (including the extremes of each type, zero divisors and indices out of bounds now
// and then) are left to the program's run.
#include <array>
#include <cinttypes>
#include <cstdio>

#include "st_gen_impl.h"

namespace takt::test::gen {

namespace {

struct TyInfo {
    const char* name;
    Kind kind;
    int bits;
};

constexpr std::array<TyInfo, kTypeCount> kTypes{{
    {"BOOL", Kind::Bool, 1},
    {"SINT", Kind::Signed, 8},
    {"INT", Kind::Signed, 16},
    {"DINT", Kind::Signed, 32},
    {"LINT", Kind::Signed, 64},
    {"USINT", Kind::Unsigned, 8},
    {"UINT", Kind::Unsigned, 16},
    {"UDINT", Kind::Unsigned, 32},
    {"ULINT", Kind::Unsigned, 64},
    {"BYTE", Kind::Bits, 8},
    {"WORD", Kind::Bits, 16},
    {"DWORD", Kind::Bits, 32},
    {"LWORD", Kind::Bits, 64},
    {"REAL", Kind::Real, 32},
    {"LREAL", Kind::Real, 64},
    {"TIME", Kind::Time, 64},
    {"STRING", Kind::String, 0},
}};

std::string call(const char* fn, const std::string& a) {
    return std::string(fn) + "(" + a + ")";
}
std::string call(const char* fn, const std::string& a, const std::string& b) {
    return std::string(fn) + "(" + a + ", " + b + ")";
}

} // namespace

const char* tyName(Ty t) {
    return kTypes[static_cast<int>(t)].name;
}
Kind kindOf(Ty t) {
    return kTypes[static_cast<int>(t)].kind;
}
int bitsOf(Ty t) {
    return kTypes[static_cast<int>(t)].bits;
}

std::string Gen::literal(Ty t) {
    char buf[64];
    const int bits = bitsOf(t);
    switch (kindOf(t)) {
    case Kind::Bool: return c_.below(2) != 0 ? "TRUE" : "FALSE";
    case Kind::Signed: {
        const std::int64_t max = bits == 64 ? INT64_MAX : (std::int64_t{1} << (bits - 1)) - 1;
        const std::int64_t min = -max - 1;
        std::int64_t v = static_cast<std::int64_t>(c_.below(19)) - 9;
        if (c_.percent(25)) {
            const std::array<std::int64_t, 6> edges{min, max, min + 1, max - 1, -1, max / 2};
            v = edges[c_.below(edges.size())];
        } else if (c_.percent(20)) {
            v = static_cast<std::int64_t>(c_.next() % (static_cast<std::uint64_t>(max) + 1));
            v = c_.below(2) != 0 ? v : -v;
        }
        std::snprintf(buf, sizeof buf, "%s#%" PRId64, tyName(t), v);
        return buf;
    }
    case Kind::Unsigned:
    case Kind::Bits: {
        const std::uint64_t max = bits == 64 ? UINT64_MAX : (std::uint64_t{1} << bits) - 1;
        std::uint64_t v = c_.below(10);
        if (c_.percent(25)) {
            const std::array<std::uint64_t, 4> edges{max, max - 1, max / 2 + 1, max / 2};
            v = edges[c_.below(edges.size())];
        } else if (c_.percent(20)) {
            v = c_.next() & max;
        }
        std::snprintf(buf, sizeof buf, kindOf(t) == Kind::Bits ? "%s#16#%" PRIX64 : "%s#%" PRIu64, tyName(t), v);
        return buf;
    }
    case Kind::Real: {
        static constexpr std::array<const char*, 12> kValues{"0.0",  "1.0", "-2.5",  "0.5",    "3.25E3", "1.0E30",
                                                             "-0.0", "0.1", "-7.75", "1.0E-3", "100.0",  "2.0"};
        return std::string(tyName(t)) + "#" + kValues[c_.below(kValues.size())];
    }
    case Kind::Time: std::snprintf(buf, sizeof buf, "T#%ums", c_.below(25)); return buf;
    case Kind::String: {
        std::string s = "'";
        for (std::uint32_t n = c_.below(7); n > 0; --n) {
            s += static_cast<char>('a' + c_.below(4));
        }
        return s + "'";
    }
    }
    return "0";
}

const Var* Gen::pickVar(Ty t, bool scalarOnly, bool writableOnly) {
    std::vector<const Var*> found;
    const auto consider = [&](const std::vector<Var>& vars) {
        for (const Var& v : vars) {
            if ((writableOnly && !v.writable) || v.shape == Shape::Instance || v.shape == Shape::Ref) {
                continue;
            }
            const bool structural = v.shape == Shape::Struct || v.shape == Shape::StructArray;
            if (scalarOnly ? v.shape == Shape::Scalar && v.ty == t : structural || v.ty == t) {
                found.push_back(&v);
            }
        }
    };
    consider(scope_);
    if (found.empty()) {
        return nullptr;
    }
    return found[c_.below(static_cast<std::uint32_t>(found.size()))];
}

std::string Gen::index(const Var& v, int depth) {
    const std::uint32_t form = c_.below(100);
    if (form < 40) {
        return std::to_string(v.lo + static_cast<int>(c_.below(static_cast<std::uint32_t>(v.hi - v.lo + 1))));
    }
    if (form >= 97) {
        // A variable index with no clamp: out of bounds when the variable says so.
        if (const Var* i = pickVar(Ty::Dint, true, false); i != nullptr) {
            return i->name;
        }
    }
    return "LIMIT(DINT#" + std::to_string(v.lo) + ", " + expr(Ty::Dint, depth - 1) + ", DINT#" + std::to_string(v.hi) +
           ")";
}

// A variable, array element or struct member of type t; empty when the scope has none.
std::string Gen::reads(Ty t) {
    if (c_.percent(15)) {
        for (const Var& r : scope_) {
            if (r.shape == Shape::Ref && r.ty == t) {
                return r.name + "^";
            }
        }
    }
    const Var* v = pickVar(t, false, false);
    if (v == nullptr) {
        return {};
    }
    std::string member;
    if (v->shape == Shape::Struct || v->shape == Shape::StructArray) {
        std::vector<const Field*> fs;
        for (const Field& f : fields_) {
            if (f.ty == t) {
                fs.push_back(&f);
            }
        }
        if (fs.empty()) {
            return {};
        }
        member = "." + fs[c_.below(static_cast<std::uint32_t>(fs.size()))]->name;
    }
    if (v->shape == Shape::Array || v->shape == Shape::StructArray) {
        return v->name + "[" + index(*v, 1) + "]" + member;
    }
    return v->name + member;
}

std::string Gen::leaf(Ty t) {
    if (c_.percent(70)) {
        if (std::string r = reads(t); !r.empty()) {
            return r;
        }
    }
    return literal(t);
}

std::string Gen::expr(Ty t, int depth) {
    if (depth <= 0 || c_.percent(25)) {
        return leaf(t);
    }
    switch (kindOf(t)) {
    case Kind::Bool: return boolExpr(depth);
    case Kind::Signed:
    case Kind::Unsigned: return integerExpr(t, depth);
    case Kind::Bits: return bitsExpr(t, depth);
    case Kind::Real: return realExpr(t, depth);
    case Kind::Time: return timeExpr(t, depth);
    case Kind::String: return stringExpr(depth);
    }
    return leaf(t);
}

// The selections every type has: MIN/MAX/LIMIT, SEL, MUX, a call. `done` false: none was chosen.
std::string Gen::common(Ty t, int depth, bool& done) {
    done = true;
    const int d = depth - 1;
    switch (c_.below(8)) {
    case 0:
        if (kindOf(t) != Kind::Bool && kindOf(t) != Kind::String) {
            return call(c_.below(2) != 0 ? "MIN" : "MAX", expr(t, d), expr(t, d));
        }
        break;
    case 1:
        if (kindOf(t) != Kind::Bool && kindOf(t) != Kind::String) {
            return "LIMIT(" + expr(t, d) + ", " + expr(t, d) + ", " + expr(t, d) + ")";
        }
        break;
    case 2: return "SEL(" + condition(d) + ", " + expr(t, d) + ", " + expr(t, d) + ")";
    case 3: {
        // An unclamped selector now and then: MUX out of range is a fault.
        const std::string k = c_.percent(92) ? "LIMIT(INT#0, " + expr(Ty::Int, d) + ", INT#2)" : expr(Ty::Int, d);
        return "MUX(" + k + ", " + expr(t, d) + ", " + expr(t, d) + ", " + expr(t, d) + ")";
    }
    case 4:
        if (o_.calls) {
            if (std::string r = callReturning(t, depth); !r.empty()) {
                return r;
            }
        }
        break;
    default: break;
    }
    done = false;
    return {};
}

std::string Gen::conversionTo(Ty t, int depth) {
    for (int tries = 0; tries < 8; ++tries) {
        const Ty from = static_cast<Ty>(c_.below(kTypeCount));
        if (from == t || kindOf(from) == Kind::String ||
            (kindOf(from) == Kind::Bool && (kindOf(t) == Kind::Time || kindOf(t) == Kind::Real))) {
            continue;
        }
        if (kindOf(from) == Kind::Time && !isInteger(t)) {
            continue;
        }
        if (kindOf(t) == Kind::Time && !isInteger(from)) {
            continue;
        }
        // REAL to an integer or bit string rounds through a library call the first native slice lacks.
        if (kindOf(from) == Kind::Real && kindOf(t) != Kind::Real && !o_.calls) {
            continue;
        }
        return std::string(tyName(from)) + "_TO_" + tyName(t) + "(" + expr(from, depth - 1) + ")";
    }
    return leaf(t);
}

std::string Gen::divisor(Ty t, int depth) {
    const std::uint32_t form = c_.below(100);
    if (form < 4) {
        return expr(t, depth - 1); // may be zero: a fault
    }
    if (form < 25 && kindOf(t) != Kind::Real) {
        return call("MAX", expr(t, depth - 1), std::string(tyName(t)) + "#1");
    }
    std::string lit;
    do {
        lit = literal(t);
    } while (lit.find("#0") != std::string::npos && lit.find("#0.") == std::string::npos);
    return lit;
}

std::string Gen::integerExpr(Ty t, int depth) {
    const int d = depth - 1;
    bool done = false;
    if (c_.percent(30)) {
        std::string r = common(t, depth, done);
        if (done) {
            return r;
        }
    }
    const bool isSigned = kindOf(t) == Kind::Signed;
    switch (c_.below(10)) {
    case 0:
    case 1:
    case 2: {
        static constexpr std::array<const char*, 3> kOps{" + ", " - ", " * "};
        return "(" + expr(t, d) + kOps[c_.below(3)] + expr(t, d) + ")";
    }
    case 3: return "(" + expr(t, d) + (c_.below(2) != 0 ? " / " : " MOD ") + divisor(t, depth) + ")";
    case 4:
        if (isSigned) {
            return c_.below(2) != 0 ? "-(" + expr(t, d) + ")" : call("ABS", expr(t, d));
        }
        break;
    case 5:
        if (o_.calls && t == Ty::Dint && c_.percent(50)) {
            return call("TRUNC", expr(c_.below(2) != 0 ? Ty::Real : Ty::Lreal, d));
        }
        if (o_.calls && t == Ty::Int) {
            return call("LEN", expr(Ty::String, d));
        }
        break;
    case 6:
    case 7: return conversionTo(t, depth);
    default: break;
    }
    return leaf(t);
}

std::string Gen::bitsExpr(Ty t, int depth) {
    const int d = depth - 1;
    bool done = false;
    if (c_.percent(25)) {
        std::string r = common(t, depth, done);
        if (done) {
            return r;
        }
    }
    switch (c_.below(7)) {
    case 0:
    case 1: {
        static constexpr std::array<const char*, 3> kOps{" AND ", " OR ", " XOR "};
        return "(" + expr(t, d) + kOps[c_.below(3)] + expr(t, d) + ")";
    }
    case 2: return "NOT " + expr(t, d);
    case 3: {
        static constexpr std::array<const char*, 4> kShifts{"SHL", "SHR", "ROL", "ROR"};
        const char* fn = kShifts[c_.below(o_.calls ? 4 : 2)];
        const std::string n =
            c_.percent(60) ? std::to_string(c_.below(static_cast<std::uint32_t>(bitsOf(t)) + 4)) : expr(Ty::Int, d);
        return call(fn, expr(t, d), n);
    }
    case 4:
    case 5: return conversionTo(t, depth);
    default: return leaf(t);
    }
}

std::string Gen::realExpr(Ty t, int depth) {
    const int d = depth - 1;
    bool done = false;
    if (c_.percent(25)) {
        std::string r = common(t, depth, done);
        if (done) {
            return r;
        }
    }
    switch (c_.below(8)) {
    case 0:
    case 1: {
        static constexpr std::array<const char*, 4> kOps{" + ", " - ", " * ", " / "};
        return "(" + expr(t, d) + kOps[c_.below(4)] + expr(t, d) + ")";
    }
    case 2: return c_.below(2) != 0 ? "-(" + expr(t, d) + ")" : call("ABS", expr(t, d));
    case 3:
    case 4: {
        static constexpr std::array<const char*, 10> kFns{"SQRT", "SIN",  "COS", "TAN", "ASIN",
                                                          "ACOS", "ATAN", "EXP", "LN",  "LOG"};
        return call(kFns[c_.below(kFns.size())], expr(t, d));
    }
    case 5:
        if (o_.calls) {
            return call("EXPT", expr(t, d), c_.below(2) != 0 ? expr(t, d) : expr(Ty::Dint, d));
        }
        if (t == Ty::Lreal && c_.percent(50)) {
            // REAL widened to LREAL inside the operation.
            static constexpr std::array<const char*, 4> kOps{" + ", " - ", " * ", " / "};
            return "(" + expr(t, d) + kOps[c_.below(4)] + expr(Ty::Real, d) + ")";
        }
        // Sums of products have their own fused instructions.
        return "(" + expr(t, d) + " * " + expr(t, d) + " + " + expr(t, d) + " * " + expr(t, d) + ")";
    case 6: return conversionTo(t, depth);
    default: break;
    }
    return leaf(t);
}

std::string Gen::timeExpr(Ty t, int depth) {
    const int d = depth - 1;
    bool done = false;
    if (c_.percent(30)) {
        std::string r = common(t, depth, done);
        if (done) {
            return r;
        }
    }
    switch (c_.below(4)) {
    case 0: return "(" + expr(t, d) + (c_.below(2) != 0 ? " + " : " - ") + expr(t, d) + ")";
    case 1: return conversionTo(t, depth);
    default: return leaf(t);
    }
}

std::string Gen::boolExpr(int depth) {
    const int d = depth - 1;
    switch (c_.below(6)) {
    case 0:
    case 1: {
        Ty t = static_cast<Ty>(c_.below(kTypeCount));
        if (t == Ty::String && !o_.calls) {
            t = Ty::Dint;
        }
        static constexpr std::array<const char*, 6> kOps{" = ", " <> ", " < ", " <= ", " > ", " >= "};
        const bool ordered = kindOf(t) != Kind::Bool && kindOf(t) != Kind::Bits;
        return "(" + expr(t, d) + kOps[c_.below(ordered ? 6 : 2)] + expr(t, d) + ")";
    }
    case 2: {
        static constexpr std::array<const char*, 3> kOps{" AND ", " OR ", " XOR "};
        return "(" + boolExpr(d) + kOps[c_.below(3)] + expr(Ty::Bool, d) + ")";
    }
    case 3: return "NOT " + expr(Ty::Bool, d);
    case 4: {
        if (c_.percent(30)) {
            const Ty from = static_cast<Ty>(static_cast<std::uint32_t>(Ty::Sint) + c_.below(12)); // SINT .. LWORD
            return std::string(tyName(from)) + "_TO_BOOL(" + expr(from, d) + ")";
        }
        bool done = false;
        std::string r = common(Ty::Bool, depth, done);
        if (done) {
            return r;
        }
        break;
    }
    default: break;
    }
    return leaf(Ty::Bool);
}

std::string Gen::stringExpr(int depth) {
    const int d = depth - 1;
    switch (c_.below(4)) {
    case 0: return call("CONCAT", expr(Ty::String, d), expr(Ty::String, d));
    case 1: {
        const std::string n = c_.percent(80) ? "LIMIT(INT#0, " + expr(Ty::Int, d) + ", INT#12)" : expr(Ty::Int, d);
        return call("LEFT", expr(Ty::String, d), n);
    }
    case 2: {
        bool done = false;
        std::string r = common(Ty::String, depth, done);
        if (done) {
            return r;
        }
        break;
    }
    default: break;
    }
    return leaf(Ty::String);
}

std::string Gen::arguments(const Callable& f, int depth, bool positional) {
    std::string out = "(";
    for (std::size_t i = 0; i < f.inputs.size(); ++i) {
        out += i == 0 ? "" : ", ";
        out +=
            positional ? expr(f.inputs[i].ty, depth - 1) : f.inputs[i].name + " := " + expr(f.inputs[i].ty, depth - 1);
    }
    return out + ")";
}

// A FUNCTION's result, a METHOD's result, or an output of an FB instance in scope. The
// arguments are made for the chosen one only.
std::string Gen::callReturning(Ty t, int depth) {
    struct Option {
        std::string text; // the output, or what precedes the arguments
        const Callable* callee = nullptr;
        bool positional = false;
    };
    std::vector<Option> options;
    for (std::size_t i = 0; i < callableFns_; ++i) {
        if (fns_[i].result == t) {
            options.push_back({fns_[i].name, &fns_[i], true});
        }
    }
    for (const Var& v : scope_) {
        if (v.shape != Shape::Instance) {
            continue;
        }
        const Callable& fb = fbs_[static_cast<std::size_t>(v.fb)];
        for (const Field& out : fb.outputs) {
            if (out.ty == t) {
                options.push_back({v.name + "." + out.name});
            }
        }
        for (const Callable& m : fb.methods) {
            if (m.result == t) {
                options.push_back({v.name + "." + m.name, &m});
            }
        }
    }
    if (options.empty()) {
        return {};
    }
    const Option& o = options[c_.below(static_cast<std::uint32_t>(options.size()))];
    if (o.callee == nullptr) {
        return o.text;
    }
    return o.text + arguments(*o.callee, depth, o.positional && c_.below(2) != 0);
}

} // namespace takt::test::gen
